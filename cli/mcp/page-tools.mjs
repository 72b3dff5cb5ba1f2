// The MCP tools that answer pages of the whole history: get_task_tree (conversations, newest first,
// or the conversation of one task) and list_tasks. Each answer fits ANSWER_CHARS: as many
// conversations or rows as fit, what was left out, and nextCursor for the next page.
import { z } from 'zod'
import { RooStateError } from '../lib/errors.mjs'
import * as ops from '../lib/ops.mjs'
import { conversationsPage, tasksPage } from '../lib/pages.mjs'
import { renderTreeMarkdown, renderTreePage, renderTree } from '../lib/tree-text.mjs'
import { confinedStore } from '../lib/stores.mjs'
import { HOST_SOURCES } from '../lib/registry.generated.mjs'
import { ANSWER_CHARS, PAGE_NOTE, pageNote, size } from './pages.mjs'

const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false }
const tasksDir = z
  .string()
  .describe('One of the server\'s task stores (its tasks/ folder, or the storage folder holding it): those named by --tasks-dir or ROO_STATE_STORAGE, else those found on this machine; any other folder is refused. Default: all of them.')
  .optional()
const cursor = z.string().min(1).describe('The nextCursor of the previous page (the other arguments unchanged); none for the first page.').optional()
const HOSTS = HOST_SOURCES

async function selOf(ctx, dir) {
  return dir ? { ...ctx.sel, tasksDirs: [await confinedStore(ctx.sel, dir)] } : ctx.sel
}

/** A day (YYYY-MM-DD or an ISO date-time) as ms: the start of a `since` day, the end of an `until` one. */
function msOf(value, end) {
  if (value === undefined) return undefined
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value)
  if (Number.isNaN(t)) {
    throw new RooStateError('INVALID_ARGUMENT', `"${value}" is not a date (YYYY-MM-DD or an ISO 8601 date-time).`)
  }
  return end && /^\d{4}-\d{2}-\d{2}$/.test(value) ? t + 86_400_000 : t
}

/** A store as an agent needs it: its counts and how its links were found, its problems counted. */
function compactStore(s) {
  const m = s.metrics ?? {}
  const problems = (s.diagnostics ?? []).filter((d) => d.severity === 'error' || d.severity === 'warning')
  const issues = {}
  for (const i of m.issues ?? []) issues[i.kind] = (issues[i.kind] ?? 0) + 1
  return {
    tasksDir: s.tasksDir,
    tasks: s.tasks,
    ...(s.conversations === undefined ? {} : { conversations: s.conversations }),
    ...(s.metrics ? { metrics: { linksBySource: m.linksBySource, roots: m.roots, orphans: m.orphans, ambiguous: m.ambiguous, abandoned: m.abandoned, issues } } : {}),
    ...(problems.length ? { problems: problems.slice(0, 10).map((d) => `${d.file}: ${d.message}`), problemsLeftOut: Math.max(0, problems.length - 10) } : {}),
    ...(s.shownElsewhere ? { shownElsewhere: s.shownElsewhere } : {}),
    roots: s.roots,
  }
}

/** The answer of a tree in the format asked. */
function treeAnswer(a, data, extra) {
  if (a.outputFormat === 'ascii-tree') {
    const body = data.page ? renderTreePage(data, { width: 120 }) : renderTree(data, { width: 120 })
    return [body, ...Object.entries(extra).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)].join('\n')
  }
  if (a.outputFormat === 'markdown') {
    return [renderTreeMarkdown(data), ...Object.entries(extra).map(([k, v]) => `- ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)].join('\n')
  }
  return { ...(data.focus ? { focus: data.focus } : {}), stores: data.stores.map(compactStore), ...extra }
}

/** The depths tried, deepest first, when a tree is larger than an answer. */
const DEPTHS = [8, 4, 2, 1, 0]

/** The conversation of one task, cut to the depth that fits when it is larger than an answer. */
async function focusTree(a, ctx, sel) {
  const get = async (maxDepth) => treeAnswer(a, await ops.taskTree(sel, { taskId: a.conversationId, maxDepth, workspace: a.workspace }, ctx.io), {})
  let out = await get(a.maxDepth)
  if (size(out) <= ANSWER_CHARS) return out
  for (const d of DEPTHS.filter((x) => a.maxDepth === undefined || x < a.maxDepth)) {
    const data = await ops.taskTree(sel, { taskId: a.conversationId, maxDepth: d, workspace: a.workspace }, ctx.io)
    out = treeAnswer(a, data, { cut: `The conversation is larger than an answer: shown ${d} level(s) below its first task. Ask for a subtask's conversationId with maxDepth to see deeper.` })
    if (size(out) <= ANSWER_CHARS) return out
  }
  return out
}

/** A page of conversations that fits: as many as fit whole, else the first one cut in depth. */
async function treePage(a, ctx, sel) {
  const filters = { workspace: a.workspace, host: a.host, since: msOf(a.since), until: msOf(a.until, true) }
  const get = (limit, maxDepth) => conversationsPage(sel, { ...filters, limit, cursor: a.cursor, maxDepth }, ctx.io)
  const answer = (data, extra = {}) =>
    treeAnswer(a, data, {
      order: data.page.items.map((i) => i.taskId),
      page: pageNote({ shown: data.page.shown, total: data.page.total, leftOut: data.page.leftOut, nextCursor: data.page.nextCursor, unit: 'conversations (newest first)' }),
      ...extra,
    })
  let data = await get(a.limit ?? 20, a.maxDepth)
  let out = answer(data)
  if (size(out) <= ANSWER_CHARS) return out
  // The conversations of the page that fit whole, in its order.
  const roots = data.page.items.map((i) => data.stores.find((s) => s.tasksDir === i.tasksDir)?.roots.find((r) => r.taskId === i.taskId))
  let fits = 0
  let used = 2048
  for (const r of roots) {
    used += size(r ?? {})
    if (used > ANSWER_CHARS * 0.9) break
    fits++
  }
  // Fewer, in proportion, until the page fits (the stores' own facts take room too).
  while (fits > 0) {
    data = await get(fits, a.maxDepth)
    out = answer(data)
    if (size(out) <= ANSWER_CHARS) return out
    fits = Math.min(fits - 1, Math.floor((fits * ANSWER_CHARS * 0.95) / size(out)))
  }
  for (const d of DEPTHS.filter((x) => a.maxDepth === undefined || x < a.maxDepth)) {
    data = await get(1, d)
    out = answer(data, { cut: `The first conversation of this page is larger than an answer: shown ${d} level(s) below its first task. get_task_tree with its conversationId and maxDepth shows it deeper.` })
    if (size(out) <= ANSWER_CHARS) return out
  }
  return out
}

export const treeTool = {
  name: 'get_task_tree',
  title: 'Task tree',
  description: `Conversations (a task and its subtasks): title, id, creation date, mode, and how each parent link was established (history_item.json, the parent's childIds, task_metadata.json, or inferred from the parent's new_task message, with its confidence). Without conversationId: a page of the conversations of every store, newest first; with conversationId, the conversation holding that task (an id prefix is enough). ${PAGE_NOTE}`,
  input: {
    conversationId: z.string().min(1).describe('Any task of the conversation (full id or a unique prefix).').optional(),
    maxDepth: z.int().min(0).describe('Levels below the root (0 = the root alone; default: all).').optional(),
    workspace: z.string().describe('Only tasks of this workspace: a path, or just its folder name.').optional(),
    host: z.enum(HOSTS).describe('Only the conversations of this host.').optional(),
    since: z.string().describe('Only conversations active from this day (YYYY-MM-DD, UTC, or an ISO date-time).').optional(),
    until: z.string().describe('Only conversations active up to this day, included.').optional(),
    limit: z.int().min(1).max(200).describe('Conversations per page (default 20; fewer when they do not fit an answer).').optional(),
    cursor,
    outputFormat: z.enum(['json', 'ascii-tree', 'markdown']).describe('Default json.').optional(),
    tasksDir,
  },
  annotations: readOnly,
  async run(a, ctx) {
    const sel = await selOf(ctx, a.tasksDir)
    return a.conversationId ? focusTree(a, ctx, sel) : treePage(a, ctx, sel)
  },
}

/** A row of list_tasks: what a list shows, the store by its place in `stores` when there are several. */
function rowOf(t, stores) {
  const { tasksDir: dir, ...row } = t
  return stores.length > 1 ? { ...row, store: stores.indexOf(dir) } : row
}

export const listTool = {
  name: 'list_tasks',
  title: 'List tasks',
  description: `Task summaries (title, workspace, mode, host, dates, counts, cost, parent), most recent activity first or sorted by sortBy, over every store, optionally for one workspace, host or mode. ${PAGE_NOTE}`,
  input: {
    workspace: z.string().describe('A workspace path, or just its folder name.').optional(),
    host: z.enum(HOSTS).describe('Only tasks of this host.').optional(),
    mode: z.string().describe('Only tasks of this mode (code, architect, orchestrator, …).').optional(),
    rootsOnly: z.boolean().describe('Only the first task of each conversation.').optional(),
    sortBy: z.enum(['lastActivity', 'createdAt', 'title', 'messageCount', 'actionCount', 'totalSize', 'totalCost']).optional(),
    sortOrder: z.enum(['asc', 'desc']).optional(),
    limit: z.int().min(1).max(1000).describe('Default 50 (fewer when they do not fit an answer).').optional(),
    offset: z.int().min(0).describe('Skip this many (instead of a cursor).').optional(),
    cursor,
    tasksDir,
  },
  annotations: readOnly,
  async run(a, ctx) {
    const sel = await selOf(ctx, a.tasksDir)
    const get = (limit) =>
      tasksPage(sel, { workspace: a.workspace, host: a.host, mode: a.mode, topOnly: a.rootsOnly, sort: a.sortBy, order: a.sortOrder, limit, offset: a.cursor ? undefined : a.offset, cursor: a.cursor }, ctx.io)
    const answer = (data) => ({
      total: data.total,
      ...(data.offset === undefined ? {} : { offset: data.offset }),
      tasks: data.tasks.map((t) => rowOf(t, data.stores)),
      ...(data.stores.length > 1 ? { stores: data.stores } : { store: data.stores[0] }),
      page: pageNote({ shown: data.tasks.length, total: data.total, leftOut: data.leftOut, nextCursor: data.nextCursor, unit: 'tasks' }),
    })
    let data = await get(a.limit ?? 50)
    let out = answer(data)
    // Fewer rows, in proportion, until the page fits (never a page cut after it was made: its
    // cursor would skip the rows cut).
    let fits = data.tasks.length
    while (size(out) > ANSWER_CHARS && fits > 1) {
      fits = Math.max(1, Math.min(fits - 1, Math.floor((fits * ANSWER_CHARS * 0.95) / size(out))))
      data = await get(fits)
      out = answer(data)
    }
    return out
  },
}
