// The HTML of `roo-state serve`: every value goes through `html`, which escapes whatever it is
// given unless it is HTML this module made itself (a `Safe`), so task texts stay text everywhere.
// No script: trees fold with <details>, tool calls too; filters and search are plain GET forms.

import { evidenceText } from '../lib/format.mjs'
import { HOST_SOURCES } from '../lib/registry.generated.mjs'

export class Safe {
  constructor(text) {
    this.text = text
  }
  toString() {
    return this.text
  }
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text as HTML text or attribute value. */
export function esc(v) {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c])
}

function part(v) {
  if (v instanceof Safe) return v.text
  if (Array.isArray(v)) return v.map(part).join('')
  if (v === null || v === undefined || v === false) return ''
  return esc(v)
}

/** A template whose values are escaped (arrays joined, Safe kept, null/undefined/false empty). */
export function html(strings, ...values) {
  let out = strings[0]
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1]
  return new Safe(out)
}

/** A link's query string from an object (empty values left out). */
export function qs(params) {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}

export function layout(base, title, active, body) {
  const nav = [
    ['', 'Tasks'],
    ['search', 'Search'],
    ['usage', 'Usage'],
  ].map(([href, label]) => html`<a href="${base}${href}"${active === label ? new Safe(' aria-current="page"') : ''}>${label}</a>`)
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · roo-state</title><link rel="stylesheet" href="${base}app.css"></head>
<body><header><strong>roo-state</strong><nav>${nav}</nav><span class="ro">read-only</span></header>
<main>${body}</main></body></html>`.text
}

function cut(text, n) {
  const s = String(text ?? '')
  return s.length > n ? `${s.slice(0, n - 1)}…` : s
}

function date(iso) {
  if (!iso) return ''
  return String(iso).replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, 'Z')
}

export function money(n) {
  return typeof n === 'number' ? `$${n.toFixed(n < 1 ? 4 : 2)}` : ''
}

export function count(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : ''
}

function nodeRow(base, n) {
  const ev = n.parentEvidence
  return html`<span class="row"><a class="title" href="${base}task/${encodeURIComponent(n.taskId)}">${cut(n.title || '(untitled)', 140)}</a>
<span class="meta">${date(n.createdAt)}${n.mode ? html` · <span class="mode">${n.mode}</span>` : ''} · ${count(n.messageCount)} msgs · ${count(n.actionCount)} actions${n.isCompleted ? ' · done' : ''}</span>
${ev ? html`<span class="link ${ev.source}" title="${evidenceText(ev)}">${ev.source === 'instruction_prefix' ? 'inferred' : 'stored'} link</span>` : ''}${n.parentMissing ? html`<span class="link missing" title="its parent ${n.parentTaskId ?? ''} is not in this store">parent missing</span>` : ''}${notes(n)}
<code class="id">${n.taskId}</code></span>`
}

/** What a node says beyond its own task: an abandoned subtask, and the task's other copies. */
function notes(n) {
  const out = []
  if (n.abandonedBy) out.push(html`<span class="link abandoned" title="its own history_item.json names no parent while ${n.abandonedBy.join(', ')} still lists it (Abandon subtask)">abandoned by its parent</span>`)
  if (n.abandonedSubtasks) out.push(html`<span class="link abandoned" title="${n.abandonedSubtasks.join(', ')}">abandoned ${n.abandonedSubtasks.length} subtask${n.abandonedSubtasks.length === 1 ? '' : 's'}</span>`)
  if (n.shownIn) out.push(html`<span class="link copy" title="a newer copy of this task is in ${n.shownIn}">older copy</span>`)
  for (const a of n.alsoIn ?? []) out.push(html`<span class="link copy" title="${a.path}">also in ${a.host ?? 'another store'}${a.differs ? ' (older, differs)' : ''}</span>`)
  return out
}

function treeNode(base, n) {
  if (!n.children?.length) return html`<li class="leaf">${nodeRow(base, n)}</li>`
  return html`<li><details><summary>${nodeRow(base, n)} <span class="kids">${n.children.length} subtask${n.children.length === 1 ? '' : 's'}</span></summary>
<ul>${n.children.map((c) => treeNode(base, c))}</ul></details></li>`
}

function countNodes(n) {
  let k = 0
  const stack = [n]
  while (stack.length) {
    const x = stack.pop()
    k++
    for (const c of x.children ?? []) stack.push(c)
  }
  return k
}

/**
 * One tab per store served, linking `page` with `keep`'s parameters and that store; with `all`,
 * a first tab for every store together (`store` null), when there are several.
 */
export function storeTabs(page, stores, store, keep, all = false) {
  const current = (yes) => (yes ? new Safe(' aria-current="true"') : '')
  const tabs = stores.map(
    (s) => html`<li><a href="${page}${qs({ ...keep, store: s.index })}"${current(s.index === store)}>${s.host ?? 'store'} <code>${s.tasksDir}</code> <span class="n">${count(s.tasks)} tasks</span></a></li>`,
  )
  const together = all && stores.length > 1
    ? html`<li><a id="all-stores" href="${page}${qs({ ...keep, store: undefined })}"${current(store === null)}>every store <span class="n">${count(stores.reduce((n, s) => n + s.tasks, 0))} tasks</span></a></li>`
    : ''
  return html`<ul class="stores">${together}${tabs}</ul>`
}

/** What a tree page is sorted by, as its summary says it. */
const SORT_WORDS = {
  lastActivity: 'last activity, most recent first',
  createdAt: 'creation, newest first',
  title: 'title, A to Z',
  messageCount: 'messages, most first',
  actionCount: 'tool calls, most first',
  totalSize: 'size, largest first',
  totalCost: 'cost, highest first',
}

/** The stores and the trees of one, a page of conversations at a time, with the filters. */
export function treePage(base, { stores, store, query, total, offset, roots, tasks }) {
  const q = query
  const keep = { store, workspace: q.workspace, host: q.host, mode: q.mode, since: q.sinceText, until: q.untilText, sort: q.sort }
  const pages = Math.max(1, Math.ceil(total / q.pageSize))
  const option = (v, label, cur) => html`<option value="${v}"${v === (cur ?? '') ? new Safe(' selected') : ''}>${label}</option>`
  const filters = html`<form class="filters" method="get" action="${base}">
${store === null ? '' : html`<input type="hidden" name="store" value="${store}">`}
<label>Workspace <input name="workspace" value="${q.workspace ?? ''}" placeholder="path or folder name"></label>
<label>Host <select name="host">${option('', 'any', q.host)}${HOST_SOURCES.map((h) => option(h, h, q.host))}</select></label>
<label>Mode <input name="mode" value="${q.mode ?? ''}" placeholder="code, orchestrator…" list="modes"></label>
<datalist id="modes">${['code', 'architect', 'ask', 'debug', 'orchestrator'].map((m) => html`<option value="${m}">`)}</datalist>
<label>Active from <input type="date" name="since" value="${q.sinceText ?? ''}"></label>
<label>to <input type="date" name="until" value="${q.untilText ?? ''}"></label>
<label>Order <select name="sort">${[['', 'last activity'], ['createdAt', 'created'], ['title', 'title'], ['messageCount', 'messages'], ['totalCost', 'cost']].map(([v, l]) => option(v, l, q.sort))}</select></label>
<button type="submit">Filter</button> <a href="${base}${qs({ store })}">clear</a></form>`
  const first = total ? offset + 1 : 0
  const last = offset + roots.length
  const shownTasks = roots.reduce((k, r) => k + countNodes(r), 0)
  const nav = html`<nav class="pager">${q.page > 1 ? html`<a rel="prev" href="${base}${qs({ ...keep, page: q.page - 1 })}">← newer</a>` : ''}
<span>page ${q.page} of ${pages}</span>${q.page < pages ? html`<a rel="next" href="${base}${qs({ ...keep, page: q.page + 1 })}">older →</a>` : ''}</nav>`
  const where = store === null && stores.length > 1 ? `in these ${stores.length} stores` : 'in this store'
  const body = html`${storeTabs(`${base}`, stores, store, keep, true)}${filters}
<p class="summary" id="summary"><span id="conversations">${count(total)}</span> conversations match (of ${count(tasks)} tasks ${where}); showing ${count(first)}–${count(last)}, <span id="shown-tasks">${count(shownTasks)}</span> tasks; <span id="sorted-by">sorted by ${SORT_WORDS[q.sort ?? 'lastActivity'] ?? q.sort}</span>.</p>
${nav}<ul class="tree">${roots.map((r) => treeNode(base, r))}</ul>${total ? nav : html`<p>No conversation matches these filters.</p>`}`
  return layout(base, 'Tasks', 'Tasks', body)
}

function isAction(item) {
  return item && typeof item === 'object' && 'name' in item && 'status' in item && !('role' in item)
}

/** A run of tool calls, folded. */
function actions(run) {
  const label = run.length === 1 ? `${run[0].name} (${run[0].status})` : `${run.length} tool calls: ${[...new Set(run.map((a) => a.name))].join(', ')}`
  return html`<details class="tools"><summary>${label}</summary><ol>${run.map(
    (a) => html`<li><span class="tool">${a.type} ${a.name}</span> <span class="status ${a.status}">${a.status}</span> <span class="ts">${date(a.timestamp)}</span>${a.file_path ? html` <code>${a.file_path}</code>` : ''}
<pre>${JSON.stringify(a.parameters, null, 2)}</pre></li>`,
  )}</ol></details>`
}

/** The message a search hit points at: the first one at or after `at`. */
function hitIndex(sequence, at) {
  const t = at ? Date.parse(at) : NaN
  if (!Number.isFinite(t)) return -1
  return sequence.findIndex((m) => !isAction(m) && Date.parse(m.timestamp) >= t)
}

/** A message that hands a tool's result back to the model (`[read_file for 'x'] Result:`). */
function isToolResult(item) {
  return item.role === 'user' && /^\[[^\]\n]{1,300}\] Result:/.test(item.content ?? '')
}

/** Messages from which a task page gets a table of contents of the person's turns. */
const TOC_FROM = 20

/** A message: a tool's result folded under its first line, any other as it is. */
function message(item, i, hit) {
  const id = i === hit ? 'hit' : `m${i}`
  const head = html`<div class="who">${item.role} <span class="ts">${date(item.timestamp)}</span>${item.isTruncated ? ' · cut' : ''}</div>`
  if (isToolResult(item) && i !== hit) {
    const text = String(item.content)
    const first = text.split('\n', 1)[0]
    const lines = text.split('\n').length
    return html`<article class="msg ${item.role} result" id="${id}" data-ts="${item.timestamp}">${head}<details class="result"><summary>${cut(first, 160)} <span class="n">${count(lines)} lines</span></summary><div class="text">${text}</div></details></article>`
  }
  return html`<article class="msg ${item.role}${i === hit ? ' hit' : ''}" id="${id}" data-ts="${item.timestamp}">${head}<div class="text">${item.content}</div></article>`
}

/** The person's turns of a long conversation, each a link to its message. */
function tableOfContents(seq, hit) {
  const turns = []
  seq.forEach((item, i) => {
    if (!isAction(item) && item.role === 'user' && !isToolResult(item)) turns.push(html`<li><a href="#${i === hit ? 'hit' : `m${i}`}"><span class="ts">${date(item.timestamp)}</span> ${cut(String(item.content ?? '').replace(/\s+/g, ' '), 100)}</a></li>`)
  })
  return turns.length ? html`<nav class="toc" id="toc"><h2>The person's messages (${count(turns.length)})</h2><ol>${turns}</ol></nav>` : ''
}

/** One task: where it sits, its figures, its messages (tool calls and results folded, a table of contents when long), its subtasks. */
export function taskPage(base, { store, tasksDir, header, skeleton, ancestors, children, at, alsoIn = [] }) {
  const m = skeleton.metadata
  const t = skeleton.apiTotals
  const seq = skeleton.sequence ?? []
  const hit = hitIndex(seq, at)
  const items = []
  let run = []
  seq.forEach((item, i) => {
    if (isAction(item)) {
      run.push(item)
      return
    }
    if (run.length) items.push(actions(run))
    run = []
    items.push(message(item, i, hit))
  })
  if (run.length) items.push(actions(run))
  const crumbs = ancestors.map((a) => html`<a href="${base}task/${encodeURIComponent(a.taskId)}">${cut(a.title || a.taskId, 60)}</a> › `)
  const ev = header.parentEvidence
  const subtasks = children.length
    ? html`<section class="subtasks"><h2>Subtasks (<span id="subtask-count">${children.length}</span>)</h2><ul>${children.map((c) => html`<li>${nodeRow(base, c)}</li>`)}</ul></section>`
    : ''
  const messages = seq.filter((x) => !isAction(x)).length
  const body = html`<p class="crumbs"><a href="${base}${qs({ store })}">${tasksDir}</a> › ${crumbs}</p>
<h1>${cut(m.title || '(untitled)', 300)}</h1>
<dl class="facts">
<dt>Task</dt><dd><code>${skeleton.taskId}</code></dd>
<dt>Created</dt><dd>${date(m.createdAt)}</dd><dt>Last activity</dt><dd>${date(m.lastActivity)}</dd>
<dt>Mode</dt><dd>${m.mode ?? ''}</dd><dt>Workspace</dt><dd>${m.workspace ?? ''}</dd><dt>Host</dt><dd>${m.source}</dd>
<dt>Cost</dt><dd id="cost">${money(t.totalCost)}</dd>
<dt>Tokens</dt><dd id="tokens">${count(t.tokensIn)} in · ${count(t.tokensOut)} out · ${count(t.cacheWrites)} cache writes · ${count(t.cacheReads)} cache reads · ${count(t.requests)} requests</dd>
<dt>Parent</dt><dd>${header.parentTaskId ? html`<a href="${base}task/${encodeURIComponent(header.parentTaskId)}">${header.parentTaskId}</a> <span class="link" title="${evidenceText(ev)}">${ev ? evidenceText(ev) : ''}</span>` : 'none'}</dd>
<dt>Completed</dt><dd>${skeleton.isCompleted ? 'yes' : 'no'}</dd>
${skeleton.storedLinks?.status ? html`<dt>Status</dt><dd id="status" title="history_item.json: active, completed, delegated, or interrupted (Zoo Code 3.80+)">${skeleton.storedLinks.status}</dd>` : ''}
${alsoIn.length ? html`<dt>Also in</dt><dd id="also-in">${alsoIn.map((a) => html`<code>${a.path}</code> (${a.host ?? 'another store'}; ${a.differs ? 'an older copy that differs' : 'the same conversation'}) `)}</dd>` : ''}
</dl>${subtasks}
<section class="conversation"><h2>Conversation (<span id="message-count">${messages}</span> messages, ${count(seq.length - messages)} tool calls)</h2>${messages >= TOC_FROM ? tableOfContents(seq, hit) : ''}${items}</section>
${skeleton.diagnostics.length ? html`<section class="diagnostics"><h2>Problems reading it</h2><ul>${skeleton.diagnostics.map((d) => html`<li>${d.severity}: ${d.file} ${d.message}</li>`)}</ul></section>` : ''}`
  return layout(base, m.title || skeleton.taskId, '', body)
}

/** The search form and its results: each task, its snippets, each a link to its message. */
export function searchPage(base, { query, result, error }) {
  const option = (v, label) => html`<option value="${v}"${v === (query.mode ?? '') ? new Safe(' selected') : ''}>${label}</option>`
  const form = html`<form class="search" method="get" action="${base}search">
<input name="q" value="${query.query}" placeholder="what was said, an error, an identifier" autofocus>
<select name="mode">${option('', 'best available')}${option('hybrid', 'hybrid')}${option('semantic', 'semantic')}${option('lexical', 'lexical')}</select>
<input name="workspace" value="${query.workspace ?? ''}" placeholder="workspace (optional)">
<button type="submit">Search</button></form>`
  /** @type {string | Safe} */
  let out = ''
  if (error) {
    out = html`<p class="error" id="search-error">${error.code}: ${error.message}</p><p>Build the index with <code>roo-state index</code>, or start <code>roo-state serve --index</code>.</p>`
  } else if (result) {
    out = html`<p class="summary"><span id="result-count">${result.results.length}</span> tasks (${result.mode}, ${result.embedder.model})${result.notes.map((n) => html` · ${n}`)}</p>
<ol class="results">${result.results.map(
      (r) => html`<li><a class="title" href="${base}task/${encodeURIComponent(r.taskId)}">${r.title || r.taskId}</a> <span class="meta">${r.workspace ?? ''} · ${date(r.lastActivity)} · score ${r.score.toFixed(3)}</span>
<ul class="snippets">${r.snippets.map(
        (s) => html`<li><a class="snippet" href="${base}task/${encodeURIComponent(r.taskId)}${qs({ at: s.timestamp })}#hit"><span class="ts">${date(s.timestamp)} · ${s.role}</span> ${cut(s.text, 400)}</a></li>`,
      )}</ul></li>`,
    )}</ol>`
  }
  return layout(base, 'Search', 'Search', html`${form}${out}`)
}

export function errorPage(base, status, message) {
  return layout(base, String(status), '', html`<h1>${status}</h1><p>${message}</p><p><a href="${base}">Back to the tasks</a></p>`)
}
