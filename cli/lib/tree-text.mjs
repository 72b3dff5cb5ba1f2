// The task trees as text: a page of conversations (newest first, over every store, with what each
// store holds above them and how to see more below), the conversation holding one task, and the
// same trees as Markdown lists (an MCP format).
import path from 'node:path'
import { evidenceText, count, oneLine, plural, shortDate, shownPath } from './format.mjs'
import { styles } from './terminal.mjs'

const LINK_NAMES = {
  historyItem: 'history_item.json',
  childIds: 'childIds',
  taskMetadata: 'task_metadata.json',
  instructionPrefix: 'inferred from new_task messages',
}

/** Another copy of a task, in words: where, and whether it holds the same conversation. */
export function copyText(a) {
  return `${a.host ?? 'another store'} (${a.path}): ${a.differs ? 'an older copy that differs; this one is newer' : 'the same conversation'}`
}

/** What one store holds: its folder, its tasks and conversations, and how its links were found. */
function storeLine(store, cwd) {
  const m = store.metrics
  const links = m
    ? Object.entries(m.linksBySource)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${count(n)} ${LINK_NAMES[k] ?? k}`)
    : []
  const head = [shownPath(store.tasksDir, cwd), plural(store.tasks, 'task', 'tasks', count)]
  if (store.conversations !== undefined) head.push(plural(store.conversations, 'conversation', 'conversations', count))
  if (links.length) head.push(`links: ${links.join(', ')}`)
  if (m && m.ambiguous) head.push(`${count(m.ambiguous)} ambiguous`)
  if (m && m.orphans) head.push(plural(m.orphans, 'orphan', 'orphans', count))
  if (m && m.abandoned) head.push(`${count(m.abandoned)} abandoned`)
  if (store.shownElsewhere) head.push(`${count(store.shownElsewhere)} shown from a newer copy in another store`)
  return head.join(' · ')
}

/** The lines about tasks a store could not show whole. */
function problemLines(store) {
  const problems = (store.diagnostics ?? []).filter((d) => d.severity === 'error' || d.code === 'cache_unavailable')
  return problems.map((d) =>
    // A file a shown task's reader left unread names the task and the file; a folder that gave
    // no task is not shown.
    d.code === 'cache_unavailable'
      ? `note: ${d.message}`
      : d.code === 'unreadable'
        ? `incomplete: ${path.basename(path.dirname(d.file))}/${path.basename(d.file)}: ${d.message}`
        : `not shown: ${path.basename(d.file)}: ${d.message}`,
  )
}

/**
 * A page of conversations (`conversationsPage`): each store's line, the conversations of the page
 * in its order, then what was left out and how to see it. `opts.short`: the id each task is shown
 * with; `opts.color`: styles on.
 */
export function renderTreePage(data, opts = {}) {
  const cwd = opts.cwd ?? process.cwd()
  const st = styles(Boolean(opts.color))
  const out = data.stores.map((s) => storeLine(s, cwd))
  const empty = data.stores.every((s) => !s.tasks)
  if (empty) {
    out.push('(no task folder here: a store holds one folder per task, each with ui_messages.json or api_conversation_history.json; `roo-state discover` lists the stores found on this machine)')
  }
  const nodes = new Map()
  for (const s of data.stores) for (const r of s.roots) nodes.set(`${s.tasksDir}\0${r.taskId}`, r)
  const hosts = new Set(data.stores.map((s) => hostOf(s.tasksDir)))
  const ctx = { width: opts.width ?? 100, short: opts.short, st, host: hosts.size > 1 }
  for (const item of data.page.items) {
    const root = nodes.get(`${item.tasksDir}\0${item.taskId}`)
    if (!root) continue
    out.push('')
    node(root, '', '', true, { ...ctx, store: hostOf(item.tasksDir) }, out)
  }
  if (!empty) out.push('', pageFooter(data.page, opts.filters ?? []))
  const problems = data.stores.flatMap(problemLines)
  if (problems.length) out.push('', ...problems)
  return out.join('\n')
}

/** What a page says under it: how much it showed, in what order, and how to see the rest. */
function pageFooter(page, filters) {
  const of = filters.length ? ` (${filters.join(', ')})` : ''
  if (page.total === 0) return `No conversation${of}.`
  const what = `${count(page.shown)} of ${plural(page.total, 'conversation', 'conversations', count)}${of}, newest first; dates UTC.`
  if (page.shown >= page.total - (page.offset ?? 0) || page.limit === null) return what
  const next = (page.offset ?? 0) + page.shown
  return `${what} The next ${count(Math.min(page.limit ?? page.shown, page.total - next))}: --offset ${next}; every one: --all.`
}

/** The host a tasks folder's path names (the extension's folder), for a page over several hosts. */
function hostOf(tasksDir) {
  return path.basename(path.dirname(tasksDir))
}

/** The conversation holding one task (`tree <id>`): that tree alone, the task marked. */
export function renderFocus(data, opts = {}) {
  const st = styles(Boolean(opts.color))
  const out = []
  const ctx = { width: opts.width ?? 100, short: opts.short, st, focus: data.focus }
  for (const store of data.stores) {
    for (const root of store.roots) {
      if (out.length) out.push('')
      node(root, '', '', true, ctx, out)
    }
  }
  out.push('', '(dates UTC)')
  return out.join('\n')
}

/** The old whole-tree text (a tree per store, every conversation): the demo and MCP ascii-tree. */
export function renderTree(data, opts = {}) {
  const cwd = opts.cwd ?? process.cwd()
  const st = styles(Boolean(opts.color))
  const out = []
  for (const store of data.stores) {
    if (out.length) out.push('')
    out.push(`${storeLine({ ...store, conversations: store.conversations ?? store.roots.length }, cwd)} · dates UTC`)
    if (!store.roots.length) out.push(store.tasks ? '  (no task)' : '  (no task folder here: a store holds one folder per task, each with ui_messages.json or api_conversation_history.json; `roo-state discover` lists the stores found on this machine)')
    for (const root of store.roots) {
      out.push('')
      node(root, '', '', true, { width: opts.width ?? 100, short: opts.short, st, focus: data.focus }, out)
    }
    const problems = problemLines(store)
    if (problems.length) out.push('', ...problems)
  }
  return out.join('\n')
}

function node(n, first, rest, isRoot, ctx, out) {
  const { st } = ctx
  const mark = ctx.focus === n.taskId ? '  ◀' : ''
  const titleRoom = Math.max(20, ctx.width - Array.from(first).length - mark.length)
  out.push(`${first}${st.bold(oneLine(n.title ?? '(no title)', titleRoom))}${st.cyan(mark)}`)
  const id = (x) => ctx.short?.get(x) ?? x
  const facts = [st.yellow(id(n.taskId)), shortDate(n.createdAt) || 'no date', n.mode ?? 'no mode']
  if (typeof n.messageCount === 'number') facts.push(plural(n.messageCount, 'message', 'messages', count))
  if (n.isCompleted) facts.push('completed')
  if (isRoot && ctx.host && ctx.store) facts.push(ctx.store)
  const pad = isRoot ? '  ' : '   '
  const line = (text) => out.push(`${rest}${pad}${st.dim(text)}`)
  out.push(`${rest}${pad}${facts.join(' · ')}`)
  const shownIn = n.parentShownIn ? `; the parent ${id(n.parentTaskId)} is shown under ${n.parentShownIn}` : ''
  if (n.parentEvidence) line(`link: ${evidenceText(n.parentEvidence)}${shownIn}`)
  else if (n.parentShownIn) line(`link: parent ${id(n.parentTaskId)} is shown under ${n.parentShownIn}`)
  else if (n.parentMissing) line(`link: parent ${id(n.parentTaskId)} is not in this store`)
  if (n.abandonedBy) line(`abandoned by its parent ${n.abandonedBy.map(id).join(', ')} (Abandon subtask: its own record names no parent)`)
  if (n.abandonedSubtasks) line(`abandoned ${plural(n.abandonedSubtasks.length, 'subtask')}: ${n.abandonedSubtasks.map(id).join(', ')}`)
  for (const a of n.alsoIn ?? []) line(`also in ${copyText(a)}`)
  const kids = n.children ?? []
  kids.forEach((c, i) => {
    const last = i === kids.length - 1
    node(c, `${rest}${last ? '└─ ' : '├─ '}`, `${rest}${last ? '   ' : '│  '}`, false, ctx, out)
  })
}

/** Every task id a tree's nodes name (theirs, their parents', the subtasks they abandoned). */
export function treeIds(roots) {
  const ids = []
  const stack = [...roots]
  while (stack.length) {
    const n = stack.pop()
    ids.push(n.taskId)
    if (n.parentTaskId) ids.push(n.parentTaskId)
    for (const x of [...(n.abandonedBy ?? []), ...(n.abandonedSubtasks ?? [])]) ids.push(x)
    for (const c of n.children ?? []) stack.push(c)
  }
  return ids
}

/** The tree as Markdown nested lists (get_task_tree's markdown format). */
export function renderTreeMarkdown(data) {
  const out = []
  for (const store of data.stores) {
    out.push(`## ${store.tasksDir}`, '')
    const walk = (n, depth) => {
      const ev = n.parentEvidence ? ` — ${evidenceText(n.parentEvidence)}` : ''
      const here = data.focus === n.taskId ? ' **(this task)**' : ''
      const notes = [
        ...(n.abandonedBy ? [`abandoned by its parent ${n.abandonedBy.join(', ')}`] : []),
        ...(n.abandonedSubtasks ? [`abandoned ${n.abandonedSubtasks.map((c) => `\`${c}\``).join(', ')}`] : []),
        ...(n.alsoIn ?? []).map((a) => `also in ${copyText(a)}`),
      ]
      const extra = notes.length ? ` (${notes.join('; ')})` : ''
      out.push(`${'  '.repeat(depth)}- **${oneLine(n.title ?? '(no title)', 120)}**${here} \`${n.taskId}\` ${shortDate(n.createdAt)} UTC, ${n.mode ?? 'no mode'}${ev}${extra}`)
      for (const c of n.children ?? []) walk(c, depth + 1)
    }
    for (const r of store.roots) walk(r, 0)
    out.push('')
  }
  return out.join('\n').trimEnd()
}
