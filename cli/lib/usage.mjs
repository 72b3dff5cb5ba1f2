// `roo-state usage`: usage and cost reports (TaskStore.usageReport over every chosen store), as
// an aligned table with totals (a compact one when the full one does not fit), JSON or CSV, or
// redrawn in place as tasks change (--watch).
import { core, has } from './binding.mjs'
import { RooStateError, usageError } from './errors.mjs'
import { resolveStores } from './stores.mjs'
import { renderUsage, tokens, usageCsv } from './usage-text.mjs'
import { watchUsage } from './usage-watch.mjs'

export { renderUsage, tokens, usageCsv }

import { COST_MODES, HOST_SOURCES, TIME_GROUPS, USAGE_GROUPS } from './registry.generated.mjs'

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
 * @param {import('../../index.js').UsageReportOptions & {noCache?: boolean}} opts
 */
export async function usageReport(sel, opts = {}, io = {}) {
  const dirs = await resolveStores(sel)
  const handle = await usageHandle(dirs, { cacheDir: sel.cacheDir, noCache: opts.noCache, signal: io.signal })
  const { noCache, ...options } = opts
  return handle.usageReport({ ...options, signal: io.signal })
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
  return {
    group,
    since: ctx.opts.since,
    until: ctx.opts.until,
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

export const usageCommands = {
  usage: {
    args: `[${GROUPS.join('|')}]`,
    summary: 'tokens and cost by day, week, month, year, task, conversation, model, workspace, host or mode',
    options: {
      since: { type: 'string', arg: 'DATE', help: 'from this day (YYYY-MM-DD, in --tz)' },
      until: { type: 'string', arg: 'DATE', help: 'up to this day, included' },
      last: { type: 'string', arg: 'N', help: 'the last N days, weeks, months or years that hold usage (totals of those alone)' },
      order: { type: 'string', arg: 'asc|desc', help: 'periods oldest first (asc, default) or newest first; other rows most expensive first (desc, default) or cheapest' },
      tz: { type: 'string', arg: 'ZONE', help: 'time zone of the days: the local one by default (TZ, else the system\'s); UTC, an IANA name (Europe/Paris) or an offset (+02:00)' },
      breakdown: { type: 'boolean', help: 'per-model rows under each row' },
      'breakdown-by': { type: 'string', arg: 'model|mode', help: 'per-model or per-mode rows under each row' },
      host: { type: 'string', multiple: true, arg: 'HOST', help: `only the tasks of this host (${HOSTS.join(', ')}); repeatable` },
      cost: { type: 'string', arg: 'MODE', help: 'auto (recorded, else calculated; default), recorded, or calculate (from tokens and the price table)' },
      prices: { type: 'string', arg: 'FILE', help: 'a price table (the shape of crates/usage/data/prices.json) whose entries come first' },
      workspace: { type: 'string', arg: 'PATH', help: 'only tasks of this workspace' },
      csv: { type: 'boolean', help: 'print CSV instead of a table' },
      compact: { type: 'boolean', help: 'fewer columns and short numbers (automatic when the full table is wider than the terminal)' },
      watch: { type: 'boolean', help: 'redraw the report in place whenever a task changes (a terminal only; Ctrl-C to quit)' },
      'no-cache': { type: 'boolean', help: 'read every task folder instead of our skeleton cache and kept usage records' },
    },
    examples: [
      'roo-state usage                       # by day, in the local time zone',
      'roo-state usage daily --last 7 --order desc',
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
      const width = process.stdout.isTTY ? ctx.width : undefined
      const text = (data) => renderUsage(data, { width, compact: Boolean(ctx.opts.compact) })
      if (ctx.opts.watch) {
        if (ctx.opts.csv || ctx.json) throw usageError('--watch draws the table; it takes neither --csv nor --json.')
        if (!process.stdout.isTTY) throw usageError('--watch redraws the report in place: standard output must be a terminal.')
        const data = await watchUsage(ctx, options, text, usageHandle)
        return { data, text: () => '' }
      }
      const p = ctx.progress('reading tasks')
      const data = await usageReport(ctx.sel, options, ctx.io).finally(p.done)
      if (ctx.opts.csv) return { data, text: () => usageCsv(data) }
      return { data, text: () => text(data) }
    },
  },
}
