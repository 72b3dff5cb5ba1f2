// The usage report as text (an aligned table with totals, a compact one when the full one does not
// fit the terminal) and as CSV.

import { count, exact, usd } from './format.mjs'
import { styles } from './terminal.mjs'

const money = (n) => usd(n)
/** 1234567 → 1.23M (compact) or 1 234 567. */
export function tokens(n, compact) {
  if (!compact) return count(n)
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}G`
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`
  return String(Math.round(n))
}

const KEY_TITLE = {
  daily: 'Day',
  weekly: 'Week of',
  monthly: 'Month',
  yearly: 'Year',
  tasks: 'Task',
  conversations: 'Conversation',
  models: 'Model',
  workspaces: 'Workspace',
  hosts: 'Host',
  modes: 'Mode',
}

/** What belongs to no request (messages, conversations, files) is in the totals only in these. */
const BY_REQUEST = ['models', 'modes']

/**
 * The columns of a report's table: each a title and what it writes of a row.
 * @returns {Array<[string, (s: any, compact?: boolean) => string]>}
 */
function columns(compact, group) {
  const activity = !BY_REQUEST.includes(group)
  const figure = (f) => (s) => (s[f] === undefined ? '' : count(s[f]))
  /** @type {Array<[string, (s: any, compact?: boolean) => string]>} */
  const full = [
    ['Requests', figure('requests')],
    ...(activity ? /** @type {Array<[string, (s: any) => string]>} */ ([['Msgs', figure('userMessages')], ['Convs', figure('conversations')]]) : []),
    ['Input', (s, c) => tokens(s.input ?? s.tokensIn, c)],
    ['Output', (s, c) => tokens(s.tokensOut, c)],
    ['Cache write', (s, c) => tokens(s.cacheWrites, c)],
    ['Cache read', (s, c) => tokens(s.cacheReads, c)],
    ['Total tokens', (s, c) => tokens(s.totalTokens, c)],
    ['Cost (USD)', (s) => money(s.cost)],
    ['Files r/w/e', (s) => (s.files ? `${count(s.files.reads)}/${count(s.files.writes + s.files.creates)}/${count(s.files.edits)}` : '')],
  ]
  const short = ['Requests', 'Total tokens', 'Cost (USD)']
  return compact ? full.filter(([t]) => short.includes(t)) : full
}

/** The characters of a cell (code points; a surrogate pair is one). */
function chars(c) {
  return /[\uD800-\uDFFF]/.test(c) ? Array.from(c).length : c.length
}

/** An aligned table: the first `left` columns (keys) left, numbers right, a rule and the totals under it. */
function alignedTable(header, rows, totals, left = 1) {
  const all = [header, ...rows, ...(totals ? [totals] : [])]
  const widths = header.map((_, i) => Math.max(...all.map((r) => chars(r[i] ?? ''))))
  const pad = (c, w, end) => {
    const room = ' '.repeat(Math.max(0, w - chars(c)))
    return end ? c + room : room + c
  }
  const line = (r) => r.map((c, i) => pad(c ?? '', widths[i], i < left)).join('  ').trimEnd()
  const out = [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)]
  if (totals) out.push(widths.map((w) => '─'.repeat(w)).join('  '), line(totals))
  return out.join('\n')
}

/** Rows keyed by a task: an id column before the title. */
const BY_TASK = ['tasks', 'conversations']

/** The table of a report, full or compact; `short`: the id each task is shown with. */
function table(report, compact, short) {
  const cols = columns(compact, report.group)
  const keyWidth = compact ? 30 : 40
  const cut = (k) => (Array.from(k).length > keyWidth ? `${Array.from(k).slice(0, keyWidth - 1).join('')}…` : k)
  const byTask = BY_TASK.includes(report.group)
  const id = (x) => short?.get(x) ?? x.slice(0, 8)
  const keys = (r) => (byTask ? [id(r.key), cut(r.label ?? '(no title)')] : [cut(r.key)])
  const under = (name) => (byTask ? ['', cut(name)] : [cut(name)])
  const header = [...(byTask ? ['Id'] : []), KEY_TITLE[report.group] ?? 'Key', ...cols.map(([t]) => t)]
  const rows = []
  for (const r of report.rows) {
    rows.push([...keys(r), ...cols.map(([, f]) => f(r, compact))])
    for (const m of r.models ?? []) rows.push([...under(`  └ ${m.model}`), ...cols.map(([, f]) => f(m, compact))])
    for (const m of r.modes ?? []) rows.push([...under(`  └ ${m.mode}`), ...cols.map(([, f]) => f(m, compact))])
    for (const t of r.conversation?.tasks ?? []) {
      const name = `${'  '.repeat(t.depth + 1)}${String(Math.round(t.share * 100)).padStart(3)}% ${t.mode ?? '?'}`
      rows.push([id(t.taskId), cut(name), ...cols.map(([, f]) => f(t, compact))])
    }
  }
  const totals = [...(byTask ? [''] : []), 'Total', ...cols.map(([, f]) => f(report.totals, compact))]
  return alignedTable(header, rows, totals, byTask ? 2 : 1)
}

/** The zone as the header says it. */
function zoneText(report) {
  return report.localZone ? `${report.timeZone}, the local time zone` : report.timeZone
}

/** The report's title line. */
export function usageHead(report) {
  const unit = report.group === 'daily' ? 'days' : report.group.replace(/ly$/, 's')
  const range = report.last
    ? `, the last ${report.last} ${unit} with usage${report.since ? ` (from ${report.since}${report.until ? ` to ${report.until}` : ''})` : ''}`
    : report.since || report.until
      ? `, ${report.since ?? '…'} to ${report.until ?? '…'}`
      : ''
  const hosts = report.hosts?.length ? `, ${report.hosts.join(' and ')} only` : ''
  return `Usage ${report.group} (${zoneText(report)}${range}${hosts}; cost ${report.costMode})`
}

/** The lines under the table: the column rule (when the columns are shown), what was not counted as it stands, and why. */
function footnotes(report, compact) {
  const lines = []
  const t = report.totals
  if (report.rowsLeftOut) lines.push(`${count(report.rowsLeftOut)} more row${report.rowsLeftOut === 1 ? '' : 's'} not shown (the totals are of every row): a larger --limit, or none, shows them.`)
  if (!compact && report.rows.length) lines.push('Input: input tokens neither written to nor read from the cache (taken out of tokensIn where it holds them), so Input + Output + Cache write + Cache read = Total tokens.')
  if (!compact && report.inputBelowCache) lines.push(`${report.inputBelowCache} request(s) recorded fewer input tokens than their cache tokens, though their protocol counts the cache in the input: their Input is 0.`)
  if (t.cancelled || t.failed) lines.push(`${t.cancelled} cancelled and ${t.failed} failed requests are counted with what they recorded, as the extension counts them.`)
  if (report.noRecordedCost.length) {
    const n = report.noRecordedCost.reduce((a, x) => a + x.requests, 0)
    lines.push(`${report.noRecordedCost.length} task(s) recorded no cost for ${n} request(s)${report.costMode === 'recorded' ? ' (counted as 0; --cost calculate prices them from tokens)' : ''}: ${report.noRecordedCost.slice(0, 5).map((x) => x.taskId).join(', ')}${report.noRecordedCost.length > 5 ? ', …' : ''}`)
  }
  const h = report.historyDisagreements ?? []
  if (h.length) {
    const shown = h.slice(0, 5).map((x) => `${x.taskId} (${x.fields.join(', ')})`).join(', ')
    lines.push(`${h.length} task(s) have a history_item.json whose totals disagree with their request records (estimated by a repair tool?); the records are counted: ${shown}${h.length > 5 ? ', …' : ''}`)
  }
  if (report.unpricedModels.length) lines.push(`No price for: ${report.unpricedModels.join(', ')} (give --prices FILE).`)
  // What was refused (records past belief, price entries) is said, never left out in silence.
  for (const n of report.notes ?? []) if (/refused/.test(n)) lines.push(n)
  for (const w of report.warnings ?? []) lines.push(`Warning: ${w}`)
  return lines.flatMap((l) => ['', l])
}

/**
 * The report as text.
 * @param {any} report
 * @param {{width?: number, compact?: boolean, short?: (id: string) => string, color?: boolean}} [opts] compact: fewer columns, short numbers (automatic when the full table is wider than `width`); short: how an id is shown; color: on a terminal
 */
export function renderUsage(report, opts = {}) {
  let body = 'No usage recorded in this range.'
  let compact = Boolean(opts.compact)
  if (report.rows.length) {
    body = table(report, compact, opts.short)
    const widest = Math.max(...body.split('\n').map((l) => Array.from(l).length))
    if (!compact && opts.width !== undefined && widest > opts.width) {
      compact = true
      body = table(report, true, opts.short)
    }
    const st = styles(Boolean(opts.color))
    const lines = body.split('\n')
    body = [st.bold(lines[0]), ...lines.slice(1)].join('\n')
  }
  return [usageHead(report), '', body, ...footnotes(report, compact)].join('\n')
}

function csvCell(v) {
  const s = v === undefined || v === null ? '' : typeof v === 'number' ? exact(v) : String(v)
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/** The rows (and per-model or per-mode rows with `model` or `mode` filled) as CSV, totals last. */
export function usageCsv(report) {
  const head = ['key', 'label', 'model', 'requests', 'tokensIn', 'tokensOut', 'cacheWrites', 'cacheReads', 'totalTokens', 'cost', 'cancelled', 'failed', 'tasks', 'reads', 'writes', 'edits', 'creates', 'deletes', 'lines', 'input', 'userMessages', 'conversations', 'toolCalls', 'commands', 'mode']
  const line = (r, s, model = '', mode = '') => {
    const f = r.files ?? {}
    const own = s === r
    const act = (k) => (own ? r[k] : '')
    return [r.key, r.label ?? '', model, s.requests, s.tokensIn, s.tokensOut, s.cacheWrites, s.cacheReads, s.totalTokens, s.cost, s.cancelled, s.failed, r.tasks, f.reads, f.writes, f.edits, f.creates, f.deletes, f.lines, s.input, act('userMessages'), act('conversations'), act('toolCalls'), act('commands'), mode]
      .map(csvCell)
      .join(',')
  }
  const out = [head.join(',')]
  for (const r of report.rows) {
    out.push(line(r, r))
    for (const m of r.models ?? []) out.push(line(r, m, m.model))
    for (const m of r.modes ?? []) out.push(line(r, m, '', m.mode))
  }
  out.push(line(report.totals, report.totals))
  return `${out.join('\n')}\n`
}
