// `roo-state usage`: usage and cost reports (TaskStore.usageReport over every chosen store), as
// an aligned table with totals (a compact one on narrow terminals), JSON or CSV.
import { core, has } from './binding.mjs'
import { RooStateError, usageError } from './errors.mjs'
import { resolveStores } from './stores.mjs'

export const GROUPS = ['daily', 'weekly', 'monthly', 'tasks', 'conversations', 'models', 'workspaces', 'hosts', 'modes']
export const COST_MODES = ['auto', 'recorded', 'calculate']

/** One handle over all the stores of a selection, kept for the process (the MCP server refreshes it per call). */
const handles = new Map()

async function usageHandle(dirs, { cacheDir, noCache, signal }) {
  if (!has('TaskStore') || typeof core().TaskStore.prototype.usageReport !== 'function') {
    throw new RooStateError('NOT_AVAILABLE', 'This build of roo-state-core has no TaskStore.usageReport() yet.')
  }
  const key = JSON.stringify([dirs, cacheDir ?? null, Boolean(noCache)])
  const known = handles.get(key)
  if (known) {
    await known.refresh(signal)
    return known
  }
  const handle = await core().TaskStore.open({ tasksDirs: dirs, cacheDir, noCache: Boolean(noCache), signal })
  handles.set(key, handle)
  return handle
}

/**
 * The report over every store of `sel`.
 * @param {{tasksDirs?: string[], cwd?: string, cacheDir?: string}} sel
 * @param {{group?: string, since?: string, until?: string, timeZone?: string, costMode?: string, breakdown?: boolean, workspace?: string, priceFile?: string, noCache?: boolean}} opts
 */
export async function usageReport(sel, opts = {}, io = {}) {
  const dirs = await resolveStores(sel)
  const handle = await usageHandle(dirs, { cacheDir: sel.cacheDir, noCache: opts.noCache, signal: io.signal })
  const { noCache, ...options } = opts
  return handle.usageReport({ ...options, signal: io.signal })
}

const money = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(n >= 1 ? 2 : 4)).replace(/^0\.0000$/, '0')
/** 1234567 → 1.23M (compact) or 1 234 567. */
export function tokens(n, compact) {
  if (!compact) return Math.round(n).toLocaleString('en-US')
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}G`
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`
  return String(Math.round(n))
}

const KEY_TITLE = { daily: 'Day', weekly: 'Week of', monthly: 'Month', tasks: 'Task', conversations: 'Conversation', models: 'Model', workspaces: 'Workspace', hosts: 'Host', modes: 'Mode' }

function columns(compact) {
  const full = [
    ['Requests', (s) => String(s.requests)],
    ['Input', (s, c) => tokens(s.tokensIn, c)],
    ['Output', (s, c) => tokens(s.tokensOut, c)],
    ['Cache write', (s, c) => tokens(s.cacheWrites, c)],
    ['Cache read', (s, c) => tokens(s.cacheReads, c)],
    ['Total tokens', (s, c) => tokens(s.totalTokens, c)],
    ['Cost (USD)', (s) => money(s.cost)],
    ['Files r/w/e', (s) => (s.files ? `${s.files.reads}/${s.files.writes + s.files.creates}/${s.files.edits}` : '')],
  ]
  return compact ? [full[0], full[5], full[6]] : full
}

/** An aligned table: the key column left, numbers right, a rule and the totals under it. */
function alignedTable(header, rows, totals) {
  const all = [header, ...rows, ...(totals ? [totals] : [])]
  const widths = header.map((_, i) => Math.max(...all.map((r) => Array.from(r[i] ?? '').length)))
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd()
  const out = [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)]
  if (totals) out.push(widths.map((w) => '─'.repeat(w)).join('  '), line(totals))
  return out.join('\n')
}

/**
 * The report as text.
 * @param {any} report
 * @param {{width?: number, compact?: boolean}} [opts] compact: fewer columns, short numbers (automatic under 110 columns)
 */
export function renderUsage(report, opts = {}) {
  const compact = opts.compact ?? (opts.width ?? 100) < 110
  const cols = columns(compact)
  const keyWidth = compact ? 30 : 40
  const key = (r) => {
    const k = r.label ? `${r.label} (${r.key.slice(0, 8)})` : r.key
    return Array.from(k).length > keyWidth ? `${Array.from(k).slice(0, keyWidth - 1).join('')}…` : k
  }
  const header = [KEY_TITLE[report.group] ?? 'Key', ...cols.map(([t]) => t)]
  const rows = []
  for (const r of report.rows) {
    rows.push([key(r), ...cols.map(([, f]) => f(r, compact))])
    for (const m of r.models ?? []) rows.push([`  └ ${m.model}`.slice(0, keyWidth), ...cols.map(([, f]) => f(m, compact))])
    for (const t of r.conversation?.tasks ?? []) {
      const name = `${'  '.repeat(t.depth + 1)}${String(Math.round(t.share * 100)).padStart(3)}% ${t.mode ?? '?'} ${t.taskId.slice(0, 8)}`
      rows.push([name.slice(0, keyWidth), ...cols.map(([, f]) => f(t, compact))])
    }
  }
  const totals = ['Total', ...cols.map(([, f]) => f(report.totals, compact))]
  const range = report.since || report.until ? `, ${report.since ?? '…'} to ${report.until ?? '…'}` : ''
  const head = `Usage ${report.group} (${report.timeZone}${range}; cost ${report.costMode})`
  const lines = [head, '', report.rows.length ? alignedTable(header, rows, totals) : 'No usage recorded in this range.']
  const t = report.totals
  if (t.cancelled || t.failed) lines.push('', `${t.cancelled} cancelled and ${t.failed} failed requests are counted with what they recorded, as the extension counts them.`)
  if (report.noRecordedCost.length) {
    const n = report.noRecordedCost.reduce((a, x) => a + x.requests, 0)
    lines.push('', `${report.noRecordedCost.length} task(s) recorded no cost for ${n} request(s)${report.costMode === 'recorded' ? ' (counted as 0; --cost calculate prices them from tokens)' : ''}: ${report.noRecordedCost.slice(0, 5).map((x) => x.taskId).join(', ')}${report.noRecordedCost.length > 5 ? ', …' : ''}`)
  }
  if (report.unpricedModels.length) lines.push('', `No price for: ${report.unpricedModels.join(', ')} (give --prices FILE).`)
  // What was refused (records past belief, price entries) is said, never left out in silence.
  for (const n of report.notes ?? []) if (/refused/.test(n)) lines.push('', n)
  return lines.join('\n')
}

function csvCell(v) {
  const s = v === undefined || v === null ? '' : String(v)
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/** The rows (and per-model rows with `model` filled) as CSV, totals last. */
export function usageCsv(report) {
  const head = ['key', 'label', 'model', 'requests', 'tokensIn', 'tokensOut', 'cacheWrites', 'cacheReads', 'totalTokens', 'cost', 'cancelled', 'failed', 'tasks', 'reads', 'writes', 'edits', 'creates', 'deletes', 'lines']
  const line = (r, s, model = '') => {
    const f = r.files ?? {}
    return [r.key, r.label ?? '', model, s.requests, s.tokensIn, s.tokensOut, s.cacheWrites, s.cacheReads, s.totalTokens, s.cost, s.cancelled, s.failed, r.tasks, f.reads, f.writes, f.edits, f.creates, f.deletes, f.lines].map(csvCell).join(',')
  }
  const out = [head.join(',')]
  for (const r of report.rows) {
    out.push(line(r, r))
    for (const m of r.models ?? []) out.push(line(r, m, m.model))
  }
  out.push(line(report.totals, report.totals))
  return `${out.join('\n')}\n`
}

export const usageCommands = {
  usage: {
    args: `[${GROUPS.slice(0, 7).join('|')}|hosts|modes]`,
    summary: 'tokens and cost by day, week, month, task, conversation, model, workspace, host or mode',
    options: {
      since: { type: 'string', arg: 'DATE', help: 'from this day (YYYY-MM-DD, in --tz)' },
      until: { type: 'string', arg: 'DATE', help: 'up to this day, included' },
      tz: { type: 'string', arg: 'ZONE', help: 'time zone of the days: UTC (default), an IANA name (Europe/Paris) or an offset (+02:00)' },
      breakdown: { type: 'boolean', help: 'per-model rows under each row' },
      cost: { type: 'string', arg: 'MODE', help: 'auto (recorded, else calculated; default), recorded, or calculate (from tokens and the price table)' },
      prices: { type: 'string', arg: 'FILE', help: 'a price table (the shape of crates/usage/data/prices.json) whose entries come first' },
      workspace: { type: 'string', arg: 'PATH', help: 'only tasks of this workspace' },
      csv: { type: 'boolean', help: 'print CSV instead of a table' },
      compact: { type: 'boolean', help: 'fewer columns and short numbers (automatic on a terminal under 110 columns)' },
      'no-cache': { type: 'boolean', help: 'read the task folders directly instead of through the skeleton cache' },
    },
    examples: [
      'roo-state usage                       # by day',
      'roo-state usage monthly --tz Europe/Paris --breakdown',
      'roo-state usage conversations --since 2026-03-01   # an orchestrator run and its subtasks, with shares',
      'roo-state usage models --cost calculate --json',
      'roo-state usage daily --csv > usage.csv',
    ],
    maxArgs: 1,
    async run(ctx) {
      const group = ctx.args[0] ?? 'daily'
      if (!GROUPS.includes(group)) throw usageError(`usage takes ${GROUPS.join(', ')}; not "${group}".`)
      const costMode = ctx.opts.cost ?? 'auto'
      if (!COST_MODES.includes(costMode)) throw usageError(`--cost takes ${COST_MODES.join(', ')}; not "${costMode}".`)
      const p = ctx.progress('reading tasks')
      const data = await usageReport(
        ctx.sel,
        {
          group,
          since: ctx.opts.since,
          until: ctx.opts.until,
          timeZone: ctx.opts.tz,
          costMode,
          breakdown: Boolean(ctx.opts.breakdown),
          workspace: ctx.opts.workspace,
          priceFile: ctx.opts.prices ? new URL(ctx.opts.prices, `file://${ctx.cwd}/`).pathname : undefined,
          noCache: ctx.opts['no-cache'],
        },
        ctx.io,
      ).finally(p.done)
      if (ctx.opts.csv) return { data, text: () => usageCsv(data) }
      // Compact on a terminal too narrow for every column (or when asked); full when piped.
      const compact = Boolean(ctx.opts.compact) || (Boolean(process.stdout.isTTY) && ctx.width < 110)
      return { data, text: () => renderUsage(data, { width: ctx.width, compact }) }
    },
  },
}
