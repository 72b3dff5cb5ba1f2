// The usage page of `roo-state serve`: a store's usage report (`TaskStore.usageReport`) as charts
// drawn here in SVG (./usage-charts.mjs) and a table with totals whose rows link to their tasks
// and conversations. Its query: the report's options, what the charts stack by, one conversation.
import { COST_MODES, HOSTS, TIME_GROUPS, tokens as tokensOf } from '../lib/usage.mjs'
import { USAGE_GROUPS } from '../lib/registry.generated.mjs'
import { HttpError } from './data.mjs'
import { MEASURES, calendarChart, conversationsChart, legend, modeSeries, modeShareChart, namedBars, periodRange, seriesOf, subtasksChart } from './usage-charts.mjs'
import { Safe, count, html, layout, money, qs, storeTabs } from './views.mjs'

export { USAGE_GROUPS }
/** What the charts over time stack each period by. */
export const STACKS = ['model', 'mode', 'none']
const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/

const tokens = (n) => tokensOf(n, true)

/** The page's (and /api/usage's) query, checked. */
export function usageQuery(query) {
  const text = (k) => query.get(k)?.trim() || undefined
  const oneOf = (k, values, fallback) => {
    const v = text(k) ?? fallback
    if (v !== undefined && !values.includes(v)) throw new HttpError(400, `${k} must be one of ${values.join(', ')}.`)
    return v
  }
  const date = (k) => {
    const v = text(k)
    if (v && !/^\d{4}-\d{2}-\d{2}$/.test(v)) throw new HttpError(400, `${k} must be a date (YYYY-MM-DD).`)
    return v
  }
  const timeZone = text('tz')
  if (timeZone && timeZone.length > 64) throw new HttpError(400, 'tz is too long.')
  const workspace = text('workspace')
  if (workspace && workspace.length > 1000) throw new HttpError(400, 'workspace is too long.')
  const conversation = text('conversation')
  if (conversation && !TASK_ID.test(conversation)) throw new HttpError(400, 'conversation must be a task id.')
  return {
    group: oneOf('group', USAGE_GROUPS, 'daily'),
    since: date('since'),
    until: date('until'),
    timeZone,
    costMode: oneOf('cost', COST_MODES),
    stack: oneOf('stack', STACKS, 'model'),
    host: oneOf('host', HOSTS),
    workspace,
    conversation,
  }
}

/** The options of `TaskStore.usageReport` for a query. */
export function usageOptions(q) {
  const time = TIME_GROUPS.includes(q.group)
  return {
    group: q.group,
    since: q.since,
    until: q.until,
    timeZone: q.timeZone,
    costMode: q.costMode,
    breakdown: time && q.stack === 'model',
    byMode: time && q.stack === 'mode',
    hosts: q.host ? [q.host] : undefined,
    workspace: q.workspace,
  }
}

/** The query a link keeps (everything but what it changes). */
const keepOf = (store, q) => ({ store, group: q.group, since: q.since, until: q.until, tz: q.timeZone, cost: q.costMode, stack: q.stack === 'model' ? undefined : q.stack, host: q.host, workspace: q.workspace })

/** Where a row leads: a period to its tasks, a task to its page, a conversation to its chart. */
function rowLink(base, store, q, report, r) {
  const keep = keepOf(store, q)
  if (TIME_GROUPS.includes(report.group)) {
    const [since, until] = periodRange(report.group, r.key)
    return `${base}usage${qs({ ...keep, group: 'tasks', since, until, stack: undefined })}`
  }
  if (report.group === 'tasks') return `${base}task/${encodeURIComponent(r.key)}`
  if (report.group === 'conversations') return `${base}usage${qs({ ...keep, conversation: r.key })}#conversation`
  if (report.group === 'hosts') return `${base}usage${qs({ ...keep, group: 'daily', host: r.key })}`
  if (report.group === 'workspaces' && r.key !== 'none') return `${base}usage${qs({ ...keep, group: 'daily', workspace: r.key })}`
  return null
}

const rowName = (r) => (r.label ? html`${r.label} <code>${r.key.slice(0, 8)}</code>` : r.key)

function table(base, store, q, report) {
  const cells = (s) =>
    html`<td>${count(s.requests)}</td><td>${count(s.userMessages)}</td><td>${count(s.conversations)}</td><td>${tokens(s.input)}</td><td>${tokens(s.tokensOut)}</td><td>${tokens(s.cacheWrites)}</td><td>${tokens(s.cacheReads)}</td><td>${tokens(s.totalTokens)}</td><td>${money(s.cost)}</td>`
  const rows = report.rows.map((r) => {
    const href = rowLink(base, store, q, report, r)
    const root = report.group === 'conversations' ? html` <a class="to-task" href="${base}task/${encodeURIComponent(r.key)}">task</a>` : ''
    return html`<tr data-key="${r.key}"><th scope="row">${href ? html`<a href="${href}">${rowName(r)}</a>` : rowName(r)}${root}</th>${cells(r)}</tr>`
  })
  return html`<table class="usage" id="usage-table"><thead><tr><th></th><th>Requests</th><th>Messages</th><th>Conversations</th><th>Input</th><th>Output</th><th>Cache write</th><th>Cache read</th><th>Total tokens</th><th>Cost</th></tr></thead>
<tbody>${rows}</tbody><tfoot><tr><th scope="row">Total</th>${cells(report.totals)}</tr></tfoot></table>`
}

function form(base, store, q) {
  const option = (v, cur, label = v) => html`<option value="${v}"${v === cur ? new Safe(' selected') : ''}>${label}</option>`
  return html`<form class="filters" method="get" action="${base}usage">
<input type="hidden" name="store" value="${store}">
<label>By <select name="group">${USAGE_GROUPS.map((g) => option(g, q.group))}</select></label>
<label>Stacked by <select name="stack">${STACKS.map((s) => option(s, q.stack, s === 'none' ? 'nothing' : s))}</select></label>
<label>From <input type="date" name="since" value="${q.since ?? ''}"></label>
<label>to <input type="date" name="until" value="${q.until ?? ''}"></label>
<label>Time zone <input name="tz" value="${q.timeZone ?? ''}" placeholder="local, or UTC, Europe/Paris, +02:00"></label>
<label>Host <select name="host">${option('', q.host ?? '', 'any')}${HOSTS.map((h) => option(h, q.host))}</select></label>
<label>Cost <select name="cost">${COST_MODES.map((c) => option(c, q.costMode ?? 'auto'))}</select></label>
${q.workspace ? html`<input type="hidden" name="workspace" value="${q.workspace}">` : ''}<button type="submit">Show</button></form>`
}

/** The charts of a report: over the calendar, by name, or conversations. */
function charts(base, store, q, report) {
  const m = report.totals.cost > 0 ? MEASURES.cost : MEASURES.tokens
  if (report.rows.length === 0) return html`<p>No request in this range.</p>`
  if (TIME_GROUPS.includes(report.group)) {
    const series = seriesOf(report.rows)
    const stacked = q.stack !== 'none'
    return html`${stacked ? legend(series, 'usage-legend') : ''}${calendarChart(report, m, series, { id: 'usage-chart', by: q.stack })}
${m === MEASURES.cost ? calendarChart(report, MEASURES.tokens, series, { id: 'usage-tokens-chart', by: q.stack }) : ''}`
  }
  if (report.group === 'conversations') {
    const modes = modeSeries(report.rows)
    const label = (r) => (r.label ?? r.key).slice(0, 44)
    const one = q.conversation ? report.rows.find((r) => r.key === q.conversation) : null
    const detail = one
      ? html`<section id="conversation"><h2>${one.label ?? one.key}</h2><p><a href="${base}task/${encodeURIComponent(one.key)}">the root task</a> · ${count(one.conversation.tasks.length)} tasks · ${money(one.cost)} · ${tokens(one.totalTokens)} tokens</p>
<h3>By mode</h3>${modeShareChart(one, m, modes, { id: 'conversation-modes' })}<h3>By subtask</h3>${subtasksChart(one, m, modes, { id: 'conversation-chart' })}</section><h2>Every conversation</h2>`
      : q.conversation
        ? html`<p class="error" id="conversation-missing">No conversation ${q.conversation} in this range.</p>`
        : ''
    return html`${detail}${legend(modes, 'usage-legend')}${conversationsChart(report, m, modes, { id: 'usage-chart', label })}`
  }
  const label = (r) => {
    const k = r.label ? `${r.label} (${r.key.slice(0, 8)})` : r.key
    return k.length > 48 ? `${k.slice(0, 47)}…` : k
  }
  return namedBars(report.rows, m, { id: 'usage-chart', label })
}

/** The usage page: the store tabs, the report's options, its charts and its table. */
export function usagePage(base, { stores, store, query, report, error }) {
  const q = query
  const keep = keepOf(store, q)
  const tabs = storeTabs(`${base}usage`, stores, store, keep)
  if (error) return layout(base, 'Usage', 'Usage', html`${tabs}${form(base, store, q)}<p class="error" id="usage-error">${error.code}: ${error.message}</p>`)
  const noCost = report.noRecordedCost.length
  const zone = report.localZone ? `${report.timeZone}, the server's local time zone` : report.timeZone
  const narrowed = [q.host && `host ${q.host}`, q.workspace && `workspace ${q.workspace}`].filter(Boolean)
  const history = report.historyDisagreements.length
  const body = html`${tabs}${form(base, store, q)}
<p class="summary" id="usage-summary"><span id="usage-cost">${money(report.totals.cost)}</span> over <span id="usage-requests">${count(report.totals.requests)}</span> requests and ${tokens(report.totals.totalTokens)} tokens, ${count(report.totals.userMessages)} messages, ${count(report.totals.conversations)} conversations, ${count(report.totals.tasks)} tasks (${zone}, cost ${report.costMode}${narrowed.length ? `, ${narrowed.join(', ')}` : ''})${noCost ? html`; ${count(noCost)} tasks recorded no cost for some requests` : ''}.</p>
${history ? html`<p class="warn" id="usage-history">${count(history)} task(s) have a history_item.json whose totals disagree with their request records; the records are counted: ${report.historyDisagreements.slice(0, 5).map((h, i) => html`${i ? ', ' : ''}<a href="${base}task/${encodeURIComponent(h.taskId)}">${h.taskId.slice(0, 8)}</a> (${h.fields.join(', ')})`)}.</p>` : ''}
${charts(base, store, q, report)}${table(base, store, q, report)}<ul class="notes">${report.notes.map((n) => html`<li>${n}</li>`)}${report.warnings.map((w) => html`<li class="warn">${w}</li>`)}</ul>`
  return layout(base, 'Usage', 'Usage', body)
}
