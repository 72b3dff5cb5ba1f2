// `roo-state usage`: usage and cost reports (TaskStore.usageReport over every chosen store), as
// an aligned table with totals (a compact one when the full one does not fit), JSON or CSV, or
// redrawn in place as tasks change (--watch).
import { core, has } from './binding.mjs'
import { RooStateError, usageError } from './errors.mjs'
import { dayRange } from './dates.mjs'
import { keepHandle, resolveStores, storeHandle } from './stores.mjs'
import { renderUsage, tokens, usageCsv } from './usage-text.mjs'
import { watchUsage } from './usage-watch.mjs'
import { COST_MODES, HOST_SOURCES, TIME_GROUPS, USAGE_GROUPS } from './registry.generated.mjs'

export { renderUsage, tokens, usageCsv }

/** The usage groups, time groups and cost modes of the core (crates/usage, generated). */
export const GROUPS = USAGE_GROUPS
export { COST_MODES, TIME_GROUPS }
export const ORDERS = ['asc', 'desc']
/** The hosts a report can be narrowed to (a task's `source`). */
export const HOSTS = HOST_SOURCES

/** One handle over all the stores of a selection, kept for the process (the MCP server refreshes it per call). */
const handles = new Map()

/** The handle of a selection of stores, refreshed when the process already holds it. */
export async function usageHandle(dirs, { cacheDir, noCache, signal }) {
  if (!has('TaskStore') || typeof core().TaskStore.prototype.usageReport !== 'function') {
    throw new RooStateError('NOT_AVAILABLE', 'This build of roo-state-core has no TaskStore.usageReport() yet.')
  }
  // One store: the handle its pages read (one open, one watch in a process that keeps both).
  if (dirs.length === 1) return storeHandle(dirs[0], { cacheDir, noCache, signal })
  const key = JSON.stringify([dirs, cacheDir ?? null, Boolean(noCache)])
  const known = handles.get(key)
  if (known) {
    await known.refresh(signal)
    return known
  }
  const handle = await core().TaskStore.open({ tasksDirs: dirs, cacheDir, noCache: Boolean(noCache), signal })
  handles.set(key, handle)
  return keepHandle(handle, signal)
}

/**
 * The report over every store of `sel`.
 * @param {{tasksDirs?: string[], cwd?: string, cacheDir?: string}} sel
 * @param {import('../../index.js').UsageReportOptions & {noCache?: boolean}} opts
 */
export async function usageReport(sel, opts = {}, io = {}) {
  const dirs = await resolveStores(sel)
  const handle = await usageHandle(dirs, { cacheDir: sel.cacheDir, noCache: opts.noCache, signal: io.signal })
  const { noCache, ...options } = opts
  const report = await handle.usageReport({ ...options, signal: io.signal })
  // The handle it came from, kept out of its JSON: the ids a person is shown, what a filter matched.
  Object.defineProperty(report, 'handle', { value: handle, enumerable: false })
  return report
}

/** The rows of a report cut to the first `limit`, and how many were left out (said in its JSON too). */
export function limitRows(report, limit) {
  if (limit === undefined || report.rows.length <= limit) return report
  const out = { ...report, rows: report.rows.slice(0, limit), rowsLeftOut: report.rows.length - limit }
  Object.defineProperty(out, 'handle', { value: report.handle, enumerable: false })
  return out
}

/** The ids a report shows (its task and conversation rows, their subtasks), as a person is shown them. */
function shortIdsOfReport(report) {
  if (!['tasks', 'conversations'].includes(report.group) || typeof report.handle?.shortIds !== 'function') return undefined
  const ids = report.rows.flatMap((r) => [r.key, ...(r.conversation?.tasks ?? []).map((t) => t.taskId)])
  const list = [...new Set(ids)]
  const short = report.handle.shortIds(list)
  return new Map(list.map((id, i) => [id, short[i]]))
}

/** What a report with no row says of a workspace filter that matched no task. */
function nothingOf(report, ctx) {
  const ws = ctx.opts.workspace
  if (report.rows.length || ws === undefined || !report.handle) return []
  if (report.handle.list({ workspace: ws, limit: 0, fields: [] }).total > 0) return []
  return ['', `No task of workspace "${ws}" (a path, or a folder name such as the last part of one).`]
}

/** The report options of the command line. */
function reportOptions(ctx, group) {
  const costMode = ctx.opts.cost ?? 'auto'
  if (!COST_MODES.includes(costMode)) throw usageError(`--cost takes ${COST_MODES.join(', ')}; not "${costMode}".`)
  const order = ctx.opts.order
  if (order !== undefined && !ORDERS.includes(order)) throw usageError(`--order takes asc or desc; not "${order}".`)
  let last
  if (ctx.opts.last !== undefined) {
    last = Number(ctx.opts.last)
    if (!Number.isInteger(last) || last < 1) throw usageError(`--last takes a number of periods (1 or more), not "${ctx.opts.last}".`)
    if (!TIME_GROUPS.includes(group)) throw usageError(`--last applies to ${TIME_GROUPS.join(', ')} reports.`)
  }
  const hosts = ctx.opts.host
  for (const h of hosts ?? []) if (!HOSTS.includes(h)) throw usageError(`--host takes ${HOSTS.join(', ')}; not "${h}".`)
  const by = ctx.opts['breakdown-by']
  if (by !== undefined && !['model', 'mode'].includes(by)) throw usageError(`--breakdown-by takes model or mode; not "${by}".`)
  const { since, until } = dayRange(ctx.opts, { timeZone: ctx.opts.tz })
  return {
    group,
    since,
    until,
    timeZone: ctx.opts.tz,
    costMode,
    order,
    last,
    hosts,
    breakdown: Boolean(ctx.opts.breakdown) || by === 'model',
    byMode: by === 'mode',
    workspace: ctx.opts.workspace,
    priceFile: ctx.opts.prices ? new URL(ctx.opts.prices, `file://${ctx.cwd}/`).pathname : undefined,
    noCache: ctx.opts['no-cache'],
  }
}

/** @type {Record<string, import('./main.mjs').Command>} */
export const usageCommands = {
  usage: {
    args: `[${GROUPS.join('|')}]`,
    summary: 'tokens and cost by day, week, month, year, task, conversation, model, workspace, host or mode',
    options: {
      since: { type: 'string', arg: 'DATE', help: 'from this day, in --tz: YYYY-MM-DD, YYYYMMDD, or 7d, 2w, 3m, 1y before today' },
      until: { type: 'string', arg: 'DATE', help: 'up to this day, included' },
      limit: { type: 'string', short: 'n', arg: 'N', help: 'the first N rows only (totals of every row)' },
      last: { type: 'string', arg: 'N', help: 'the last N days, weeks, months or years that hold usage (totals of those alone)' },
      order: { type: 'string', arg: 'asc|desc', help: 'periods oldest first (asc, default) or newest first; other rows most expensive first (desc, default) or cheapest' },
      tz: { type: 'string', arg: 'ZONE', help: 'time zone of the days: the local one by default (TZ, else the system\'s); UTC, an IANA name (Europe/Paris) or an offset (+02:00)' },
      breakdown: { type: 'boolean', help: 'per-model rows under each row' },
      'breakdown-by': { type: 'string', arg: 'model|mode', help: 'per-model or per-mode rows under each row' },
      host: { type: 'string', multiple: true, arg: 'HOST', help: `only the tasks of this host (${HOSTS.join(', ')}); repeatable` },
      cost: { type: 'string', arg: 'MODE', help: 'auto (recorded, else calculated; default), recorded, or calculate (from tokens and the price table)' },
      prices: { type: 'string', arg: 'FILE', help: 'a price table (the shape of crates/usage/data/prices.json) whose entries come first' },
      workspace: { type: 'string', arg: 'PATH|NAME', help: 'only tasks of this workspace (a path, or just its folder name)' },
      csv: { type: 'boolean', help: 'print CSV instead of a table' },
      compact: { type: 'boolean', help: 'fewer columns and short numbers (automatic when the full table is wider than the terminal)' },
      watch: { type: 'boolean', help: 'redraw the report in place whenever a task changes (a terminal only; Ctrl-C to quit)' },
      'no-cache': { type: 'boolean', help: 'read every task folder instead of our skeleton cache and kept usage records' },
    },
    examples: [
      'roo-state usage                       # by day, in the local time zone',
      'roo-state usage daily --last 7 --order desc',
      'roo-state usage daily --since 7d      # the last week, today included',
      'roo-state usage tasks -n 20           # the 20 most expensive tasks',
      'roo-state usage monthly --tz Europe/Paris --breakdown',
      'roo-state usage yearly --tz UTC',
      'roo-state usage conversations --since 2026-03-01   # an orchestrator run and its subtasks, with shares',
      'roo-state usage models --cost calculate --json',
      'roo-state usage daily --watch         # redrawn as the tasks change',
      'roo-state usage daily --csv > usage.csv',
    ],
    maxArgs: 1,
    async run(ctx) {
      const group = ctx.args[0] ?? 'daily'
      if (!GROUPS.includes(group)) throw usageError(`usage takes ${GROUPS.join(', ')}; not "${group}".`)
      const options = reportOptions(ctx, group)
      // Compact when asked; otherwise when the full table is wider than the terminal (full when piped).
      const width = ctx.tty ? ctx.width : undefined
      const text = (data, short) => renderUsage(data, { width, compact: Boolean(ctx.opts.compact), short, color: ctx.color })
      if (ctx.opts.watch) {
        if (ctx.opts.csv || ctx.json) throw usageError('--watch draws the table; it takes neither --csv nor --json.')
        if (!process.stdout.isTTY) throw usageError('--watch redraws the report in place: standard output must be a terminal.')
        const data = await watchUsage(ctx, options, text, usageHandle)
        return { data, text: () => '' }
      }
      const limit = ctx.opts.limit === undefined ? undefined : Number(ctx.opts.limit)
      if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) throw usageError(`--limit takes a number of rows (1 or more), not "${ctx.opts.limit}".`)
      const p = ctx.progress('reading tasks')
      const report = await usageReport(ctx.sel, options, ctx.io).finally(p.done)
      const data = limitRows(report, limit)
      if (ctx.opts.csv) return { data, text: () => usageCsv(data) }
      return { data, text: () => [text(data, shortIdsOfReport(data)), ...nothingOf(data, ctx)].join('\n') }
    },
  },
}
