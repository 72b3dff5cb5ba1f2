// The MCP tools: name, input (a zod shape, camelCase arguments) and a thin adapter to one
// operation of ../lib/ops.mjs. The older argument spellings and the legacy server's tool names
// are aliases, declared in ./aliases.mjs.
import path from 'node:path'
import process from 'node:process'
import { z } from 'zod'
import * as ops from '../lib/ops.mjs'
import * as render from '../lib/render.mjs'
import { RooStateError } from '../lib/errors.mjs'
import { confinedDestination, confinedStore } from '../lib/stores.mjs'
import { configureFromTool, exportWrites } from './confine.mjs'
import { grepTool } from './grep-tool.mjs'
import { ANSWER_CHARS, ANSWER_NOTE, PAGE_NOTE, fitCount, offsetCursor, offsetOf, pageNote } from './pages.mjs'
import { listTool, treeTool } from './page-tools.mjs'
import { trackerTools } from './tracker-tools.mjs'
import { usageTools } from './usage-tools.mjs'
import { HOST_SOURCES } from '../lib/registry.generated.mjs'

const tasksDir = z
  .string()
  .describe('One of the server\'s task stores (its tasks/ folder, or the storage folder holding it): those named by --tasks-dir or ROO_STATE_STORAGE, else those found on this machine; any other folder is refused. Default: all of them.')
  .optional()
const id = (description) => z.string().min(1).describe(description)
const opt = (type, description) => (description ? type.describe(description) : type).optional()
const flag = (description) => opt(z.boolean(), description)
const count = (min, description, max) => opt(max === undefined ? z.int().min(min) : z.int().min(min).max(max), description)
const oneOf = (values, description) => opt(z.enum(values), description)
const filePath = opt(z.string().min(1), 'Write here (relative to the output root) instead of returning the document.')
const prettyPrint = flag('Indent the XML (default true).')
const schemaProfile = oneOf(
  ['seed', 'extended'],
  'seed (default): what the design document\'s schemas accept; extended: also workspace, omittedChildren, a project conversation\'s createdAt/totalSize/mode (schemas/extended).',
)
const dryRun = flag('Report only (default true).')

const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false }
const writesCache = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
const destructive = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }

/**
 * `sel` of one call: its tasks folder argument, which must be one of the server's stores
 * (confinedStore), else the server's selection.
 */
async function selOf(ctx, dir) {
  return dir ? { ...ctx.sel, tasksDirs: [await confinedStore(ctx.sel, dir)] } : ctx.sel
}

/**
 * Options of a destructive tool: applied only when the call asks (dryRun false) and the server
 * was started with --allow-writes; otherwise a dry run, and the answer says why.
 */
function applyOf(a, ctx) {
  const asked = a.dryRun === false
  return { apply: asked && Boolean(ctx.server.allowWrites), refused: asked && !ctx.server.allowWrites }
}

function withRefusal(result, refused) {
  if (!refused) return result
  return {
    ...result,
    notApplied:
      'This server was started without --allow-writes: the call ran as a dry run and changed nothing. Ask the user to restart it with `roo-state mcp --allow-writes` to apply it.',
  }
}

/** An export's answer: the document itself (and its figures), or what was written. */
function exportAnswer(r) {
  if (r.content !== undefined) {
    const { content, ...meta } = r
    return { blocks: [content, JSON.stringify(meta, null, 2)] }
  }
  return r
}

/** One export of the task store, answered as a document or a written file. */
const exportOf = (target, format, pick) => async (a, ctx) => {
  const picked = pick(a)
  const writes = exportWrites(ctx.server)
  const overwrite = picked.filePath ? await writes.mayOverwrite(picked.filePath) : undefined
  const out = await ops.runExport(await selOf(ctx, a.tasksDir), { target, format, ...picked, overwrite }, ctx.io)
  if (out.filePath) writes.wrote(out.filePath)
  return exportAnswer(out)
}

/**
 * @typedef {object} Tool
 * @property {string} name
 * @property {string} title
 * @property {string} description
 * @property {import('zod').ZodRawShape} input arguments (camelCase)
 * @property {object} [annotations]
 * @property {import('zod').ZodType} [output] the schema of its structured content, when it has one
 * @property {(args: any, ctx: {sel: any, io: any, server: any}) => Promise<unknown>} run
 */

/** @type {Tool[]} */
export const tools = [
  {
    name: 'build_skeleton_cache',
    title: 'Build the skeleton cache',
    description:
      'Build or refresh the skeleton cache of the task stores: only tasks whose files changed are read again, deleted tasks are dropped, and every task is linked to its parent (stored links first, then new_task messages). Returns what was built, reused and removed per store. Reports progress.',
    input: {
      forceRebuild: flag('Read every task again (default false).'),
      workspaceFilter: opt(z.string(), 'Only changed tasks of this workspace are read again (new tasks always are).'),
      tasksDir,
    },
    annotations: writesCache,
    run: async (a, ctx) => ops.buildCache(await selOf(ctx, a.tasksDir), { force: a.forceRebuild, workspace: a.workspaceFilter }, ctx.io),
  },
  treeTool,
  {
    name: 'view_conversation_tree',
    title: 'View a conversation',
    description:
      'Read a task\'s messages and tool calls as text, with the tasks around it: single (the task), chain (its ancestors down to it, default) or cluster (its parent and all the parent\'s subtasks).',
    input: {
      taskId: id('The task (full id or a unique prefix).'),
      viewMode: oneOf(['single', 'chain', 'cluster'], 'Default chain.'),
      detailLevel: oneOf(['skeleton', 'summary', 'full'], 'skeleton: first line of each message (default); summary: messages up to 1000 characters; full: everything, with tool parameters.'),
      truncate: count(0, 'Keep this many lines at the start and at the end of each message (0 = all).'),
      maxOutputLength: count(1000, `Cut the answer at this many characters (default and most ${ANSWER_CHARS}): the cut says where; detailLevel, truncate or a single viewMode make it shorter.`, ANSWER_CHARS),
      tasksDir,
    },
    annotations: readOnly,
    async run(a, ctx) {
      const view = await ops.conversationView(await selOf(ctx, a.tasksDir), { taskId: a.taskId, viewMode: a.viewMode, detailLevel: a.detailLevel }, ctx.io)
      return { text: render.renderConversation(view, { truncate: a.truncate }), maxLength: a.maxOutputLength }
    },
  },
  {
    name: 'export_tasks_xml',
    title: 'Export a task as XML',
    description: 'One task as XML (task.xsd): metadata, then its messages and tool calls in order. Returns the XML, or writes it to filePath (inside the output root).',
    input: {
      taskId: id('The task (full id or a unique prefix).'),
      filePath,
      includeContent: flag('Whole messages instead of 100-character previews (default from the export configuration: false).'),
      prettyPrint,
      schemaProfile,
      tasksDir,
    },
    annotations: readOnly,
    run: exportOf('task', 'xml', (a) => ({ id: a.taskId, filePath: a.filePath, includeContent: a.includeContent, prettyPrint: a.prettyPrint, schemaProfile: a.schemaProfile })),
  },
  {
    name: 'export_conversation_xml',
    title: 'Export a conversation as XML',
    description: 'A task and all its subtasks, nested, as XML (conversation.xsd). Returns the XML, or writes it to filePath.',
    input: {
      conversationId: id('The root task of the conversation.'),
      filePath,
      maxDepth: count(1, 'Levels of tasks, the root being 1 (default: all).'),
      includeContent: flag('Whole messages instead of previews.'),
      prettyPrint,
      schemaProfile,
      tasksDir,
    },
    annotations: readOnly,
    run: exportOf('conversation', 'xml', (a) => ({
      id: a.conversationId,
      filePath: a.filePath,
      maxDepth: a.maxDepth,
      includeContent: a.includeContent,
      prettyPrint: a.prettyPrint,
      schemaProfile: a.schemaProfile,
    })),
  },
  {
    name: 'export_project_xml',
    title: 'Export a project as XML',
    description: 'A workspace\'s summary and one entry per conversation (project.xsd), most recent first, optionally between two dates.',
    input: {
      projectPath: id('The workspace folder (compared after normalising separators, case and a trailing slash).'),
      filePath,
      startDate: opt(z.string(), 'ISO 8601 date or date-time, or now-7d / now-12h.'),
      endDate: opt(z.string(), 'ISO 8601; a bare date covers the whole day.'),
      filter: opt(z.string(), 'A named filter of the export configuration.'),
      prettyPrint,
      schemaProfile,
      tasksDir,
    },
    annotations: readOnly,
    run: exportOf('project', 'xml', (a) => ({
      projectPath: a.projectPath,
      filePath: a.filePath,
      startDate: a.startDate,
      endDate: a.endDate,
      filter: a.filter,
      prettyPrint: a.prettyPrint,
      schemaProfile: a.schemaProfile,
    })),
  },
  {
    name: 'configure_xml_export',
    title: 'Export configuration',
    description: 'Read (get), change (set: merged key by key, null removes a key, validated before it is written) or reset the export configuration (xml_export_config.json).',
    input: {
      action: z.enum(['get', 'set', 'reset']),
      config: opt(
        z.strictObject({
          defaults: z.record(z.string(), z.unknown()).optional(),
          templates: z.record(z.string(), z.unknown()).optional(),
          filters: z.record(z.string(), z.unknown()).optional(),
        }),
        'For set: a partial configuration, e.g. {"defaults": {"includeContent": true}}.',
      ),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    run: async (a) => {
      if (a.action === 'set' && !a.config) throw new RooStateError('INVALID_ARGUMENT', 'config is required for action "set".')
      return configureFromTool(a.action, a.config)
    },
  },
  {
    name: 'search_tasks_semantic',
    title: 'Search past tasks',
    description:
      'Find past tasks by what was said in them: by meaning (with an embedding model), by words and identifiers (BM25), or both. Results are grouped by task, best first, with the matching snippets and their dates. Needs the index (index_tasks).',
    input: {
      query: id('What to look for, in natural language or exact identifiers; "…" marks an exact phrase (those words in that order rank first).'),
      dateRange: opt(
        z.strictObject({
          startDate: opt(z.string(), 'ISO 8601 date or date-time (inclusive).'),
          endDate: opt(z.string(), 'ISO 8601; a bare date covers the whole day.'),
        }),
      ),
      limit: count(1, 'Tasks to return (default 10).', 100),
      workspace: opt(z.string(), 'A workspace path, or just its folder name.'),
      mode: oneOf(['semantic', 'lexical', 'hybrid'], 'Default: hybrid when the index has a model, else lexical.'),
      host: oneOf([...HOST_SOURCES], 'Only tasks of this host.'),
      taskId: opt(z.string().min(1), 'Only this task (full id or a unique prefix) and its subtasks.'),
      cursor: opt(z.string().min(1), 'The nextCursor of the previous page (the other arguments unchanged).'),
    },
    annotations: readOnly,
    async run(a, ctx) {
      // A page of the ranked results: those before the cursor are asked again and left out.
      const from = offsetOf(a.cursor)
      const limit = a.limit ?? 10
      const found = await ops.search(
        ctx.sel,
        {
          query: a.query,
          since: a.dateRange?.startDate,
          until: a.dateRange?.endDate,
          limit: from + limit,
          workspace: a.workspace,
          mode: a.mode,
          host: a.host,
          task: a.taskId,
          indexDir: ctx.server.indexDir,
          embedder: ctx.server.embedder,
        },
        ctx.io,
      )
      const results = found.results.slice(from)
      const full = found.results.length === from + limit
      const make = (k) => ({
        ...found,
        results: results.slice(0, k),
        page: pageNote({
          shown: k,
          total: from + results.length + (full ? 1 : 0),
          leftOut: results.length - k + (full ? 1 : 0),
          nextCursor: k < results.length || full ? offsetCursor(from + k) : null,
          unit: 'results (at least; the ranking goes on)',
        }),
      })
      return fitCount(results.length, make, ANSWER_CHARS, Math.min(1, results.length)).value
    },
  },
  grepTool,
  {
    name: 'index_tasks',
    title: 'Index tasks for search',
    description: 'Build or bring up to date the search index: only tasks whose files changed are read and embedded again; tasks gone from disk are removed. Reports progress; cancelling keeps what was written.',
    input: { tasksDir, rebuild: flag('Drop the index and start again.') },
    annotations: writesCache,
    run: async (a, ctx) => ops.index(await selOf(ctx, a.tasksDir), { rebuild: a.rebuild, indexDir: ctx.server.indexDir, embedder: ctx.server.embedder }, ctx.io),
  },
  {
    name: 'diagnose_roo_state',
    title: 'Health report',
    description:
      'Health of each task store: files of the recent tasks, sizes split into conversations, checkpoints and other, the editor\'s state.vscdb (read-only), our cache, and an overall OK, WARNING or ERROR with the reasons.',
    input: { tasksDir, recent: count(1, 'How many recent tasks to check (default 10).', 1000) },
    annotations: readOnly,
    run: async (a, ctx) => ops.diagnose(await selOf(ctx, a.tasksDir), { recent: a.recent }),
  },
  {
    name: 'rebuild_roo_state_from_tasks',
    title: 'Rebuild state from the task folders',
    description:
      'Scan the task folders (or a backup given as source), rebuild our cache, and report tasks, workspaces, roots and orphans. With regenerateExtensionIndex, also write the extension\'s tasks/_index.json and missing history_item.json files so it lists the tasks again after a state.vscdb loss (every replaced file is backed up). A dry run unless dryRun is false and the server was started with --allow-writes.',
    input: {
      source: opt(z.string().min(1), 'Another of the server\'s task stores to read instead (e.g. a backup put back and named at start-up).'),
      tasksDir,
      regenerateExtensionIndex: flag('Also write the extension\'s task index (default false).'),
      dryRun,
    },
    annotations: writesCache,
    async run(a, ctx) {
      const { apply, refused } = applyOf(a, ctx)
      // A source is a tasks folder like any other: one of the server's stores.
      const sel = a.source ? { ...ctx.sel, tasksDirs: [await confinedStore(ctx.sel, a.source)] } : await selOf(ctx, a.tasksDir)
      const result = await ops.rebuild(sel, { regenerateExtensionIndex: a.regenerateExtensionIndex, apply }, ctx.io)
      return withRefusal(result, refused)
    },
  },
  {
    name: 'cleanup_obsolete_checkpoints',
    title: 'Clean up obsolete checkpoints',
    description:
      'Free the disk space of obsolete checkpoints (the checkpoints/ shadow repositories) of tasks inactive for a while; conversation files are never touched. A dry run (what would be freed) unless dryRun is false and the server was started with --allow-writes.',
    input: {
      tasksDir,
      olderThanDays: count(0, 'Only tasks inactive for longer (default 30; 0 = any age).'),
      keepLast: count(0, 'Never touch the N most recent tasks (default 10).'),
      completedOnly: flag('Only tasks that finished.'),
      includeOther: flag('Refused when true: a tool removes checkpoint data only (the command line\'s --include-other removes other files).'),
      dryRun,
    },
    annotations: destructive,
    async run(a, ctx) {
      if (a.includeOther) {
        throw new RooStateError(
          'INVALID_ARGUMENT',
          'includeOther is not taken from a tool call: a tool removes checkpoint data (checkpoints/) only. Files that are neither conversation nor checkpoint data are removed by the user, with `roo-state cleanup --include-other`.',
        )
      }
      const { apply, refused } = applyOf(a, ctx)
      const sel = await selOf(ctx, a.tasksDir)
      const result = await ops.cleanup(sel, { olderThanDays: a.olderThanDays, keepLast: a.keepLast, completedOnly: a.completedOnly, apply }, ctx.io)
      return withRefusal(result, refused)
    },
  },
  // Beyond the seed contracts: the CLI's other capabilities.
  {
    name: 'discover_roo_storage',
    title: 'Find task stores',
    description: 'The task stores of Roo Code, Zoo Code, Cline and Kilo Code on this machine (every editor build, server installs, custom storage paths), with task counts and sizes.',
    input: {
      extraRoots: opt(z.array(z.string()), 'More folders to look at.'),
      measureSize: flag('Measure each store (walks every file; default true).'),
    },
    annotations: readOnly,
    run: (a) => ops.discover({ extraRoots: a.extraRoots, measureSize: a.measureSize }),
  },
  listTool,
  {
    name: 'get_task_details',
    title: 'Task details',
    description: 'One task\'s skeleton: dates, mode, workspace, counts, tokens and cost, parent and link evidence, the subtasks it created, the problems found reading its files, and optionally its message sequence.',
    input: { taskId: id('The task (full id or a unique prefix).'), includeSequence: flag('Include the messages and tool calls (default false).'), tasksDir },
    annotations: readOnly,
    run: async (a, ctx) => (await ops.showTask(await selOf(ctx, a.tasksDir), a.taskId, { sequence: Boolean(a.includeSequence) }, ctx.io)).skeleton,
  },
  {
    name: 'export_conversation_markdown',
    title: 'Export a conversation as Markdown',
    description: 'A task and its subtasks as Markdown, laid out like the extension\'s own task export.',
    input: { conversationId: id('The root task of the conversation.'), filePath, maxDepth: count(1), includeContent: flag(), tasksDir },
    annotations: readOnly,
    run: exportOf('conversation', 'md', (a) => ({ id: a.conversationId, filePath: a.filePath, maxDepth: a.maxDepth, includeContent: a.includeContent })),
  },
  {
    name: 'export_conversation_json',
    title: 'Export a conversation as JSON',
    description: 'A task and its subtasks as JSON: light (the tree with each task\'s summary, default) or skeletons (every task\'s full skeleton).',
    input: { conversationId: id('The root task of the conversation.'), variant: oneOf(['light', 'skeletons']), filePath, maxDepth: count(1), prettyPrint: flag(), tasksDir },
    annotations: readOnly,
    run: exportOf('conversation', 'json', (a) => ({ id: a.conversationId, variant: a.variant, filePath: a.filePath, maxDepth: a.maxDepth, prettyPrint: a.prettyPrint })),
  },
  {
    name: 'export_task_list_csv',
    title: 'Export the task list as CSV',
    description: 'One row per task (ids, parent, title, workspace, mode, dates, counts, tokens, cost), optionally for one project and between two dates.',
    input: { projectPath: opt(z.string()), startDate: opt(z.string()), endDate: opt(z.string()), filter: opt(z.string()), filePath, tasksDir },
    annotations: readOnly,
    run: exportOf('project', 'csv', (a) => ({ projectPath: a.projectPath, startDate: a.startDate, endDate: a.endDate, filter: a.filter, filePath: a.filePath })),
  },
  {
    name: 'check_context_condense',
    title: 'Context condensing check',
    description:
      'What the extension would decide for a task\'s context at a given context window (nothing, summarise or truncate), with every number used, the truncation that would follow, and the size (and price, given prices) of the summarising request.',
    input: {
      taskId: id('The task (full id or a unique prefix).'),
      contextWindow: z.int().min(1).describe('The model\'s context window in tokens.'),
      maxTokens: count(1, 'The model\'s max output tokens (default: the extension\'s 8192 rule).'),
      threshold: count(1, 'Auto-condense threshold in percent (default 100).', 100),
      autoCondense: flag('Default true.'),
      era: opt(z.string(), 'Rules of this release (default: guessed from the records).'),
      inputPrice: opt(z.number().min(0), 'USD per million input tokens.'),
      outputPrice: opt(z.number().min(0), 'USD per million output tokens.'),
      summaryTokens: count(0, 'Expected summary length, priced as output.'),
      tasksDir,
    },
    annotations: readOnly,
    run: async ({ tasksDir: dir, ...a }, ctx) => ops.condenseCheck(await selOf(ctx, dir), a, ctx.io),
  },
  {
    name: 'migrate_tasks_dir',
    title: 'Move a tasks folder',
    description: 'Move a tasks folder: rename on the same device, else copy, verify (size and hash), swap and remove. Resumable after any interruption. A dry run unless dryRun is false and the server was started with --allow-writes.',
    input: {
      from: z.string().min(1).describe('One of the server\'s task stores.'),
      to: z.string().min(1).describe('A new or empty folder beside the store, or under a folder the server was started with (--migrate-to); any other place is refused.'),
      dryRun,
      forceCopy: flag(),
    },
    annotations: destructive,
    async run(a, ctx) {
      const { apply, refused } = applyOf(a, ctx)
      const from = await confinedStore(ctx.sel, a.from)
      const to = confinedDestination(path.resolve(ctx.sel.cwd ?? process.cwd(), a.to), from, ctx.server.migrateRoots)
      return withRefusal(await ops.migrate(from, to, { apply, forceCopy: a.forceCopy }, ctx.sel.cwd), refused)
    },
  },
  ...usageTools,
  ...trackerTools,
]

// Every answer fits ANSWER_CHARS, and every description says so (a paged one says how to go on).
for (const t of tools) {
  if (!t.description.includes(ANSWER_NOTE)) t.description = `${t.description} ${['search_tasks_semantic', 'grep_tasks', 'usage_report', 'get_daily_stats', 'get_cost_breakdown'].includes(t.name) ? PAGE_NOTE : ANSWER_NOTE}`
}

/** Internal target of the legacy search/indexing diagnostics (not listed, not callable by name). */
export const internal = {
  _index_status: (_a, ctx) => ops.indexStatus({ indexDir: ctx.server.indexDir }),
}
