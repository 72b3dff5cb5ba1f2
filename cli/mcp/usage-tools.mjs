// The usage report as an MCP tool (`usage_report`, the options of `roo-state usage`), and the
// tool names other usage trackers' MCP servers use, as aliases of it.
import { z } from 'zod'
import { confinedStore } from '../lib/stores.mjs'
import { COST_MODES, GROUPS, usageReport } from '../lib/usage.mjs'
import { inputOf } from './input.mjs'

const day = (what) => z.string().regex(/^\d{4}-\d{2}-\d{2}$/).describe(what).optional()

/** The options every usage tool takes. */
const usageInput = {
  since: day('First day counted (YYYY-MM-DD, in timeZone).'),
  until: day('Last day counted, included.'),
  timeZone: z.string().describe('UTC (default), an IANA name such as Europe/Paris, or an offset such as +02:00.').optional(),
  costMode: z.enum(COST_MODES).describe('auto (default): recorded, else calculated from tokens; recorded; calculate.').optional(),
  breakdown: z.boolean().describe('Per-model sums in each row.').optional(),
  workspace: z.string().describe('Only tasks of this workspace (a path, or its folder name).').optional(),
  tasksDir: z.string().describe('One of the server\'s task stores; default all of them.').optional(),
}

async function run(a, ctx, group) {
  const sel = a.tasksDir ? { ...ctx.sel, tasksDirs: [await confinedStore(ctx.sel, a.tasksDir)] } : ctx.sel
  return usageReport(sel, { group, since: a.since, until: a.until, timeZone: a.timeZone, costMode: a.costMode, breakdown: a.breakdown, workspace: a.workspace }, ctx.io)
}

export const usageTools = [
  {
    name: 'usage_report',
    title: 'Usage and cost report',
    description:
      'Tokens (input, output, cache writes and reads), requests and cost, by day, week, month, task, conversation (a root task and all its subtasks, with the share of each task and mode), model, workspace, host or mode; with file operations (reads, writes, edits) per row, the tasks that recorded no cost, and totals.',
    input: { group: z.enum(GROUPS).describe('The rows (default daily).').optional(), ...usageInput },
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    run: (a, ctx) => run(a, ctx, a.group ?? 'daily'),
  },
]

/** A date argument of the other trackers: one day. */
const oneDay = (a) => (a.date ? { since: a.since ?? a.date, until: a.until ?? a.date } : {})
/** The arguments usage_report knows (a loose alias input may carry others). */
const known = (o) => Object.fromEntries(Object.entries(o).filter(([k, v]) => k in usageInput && v !== undefined))
// Strict as the tools are: an argument the report does not take is refused by name.
const aliasInput = inputOf({ ...usageInput, date: day('One day (YYYY-MM-DD): since and until at once.') })
const alias = (name, group, description, extra = {}) => ({
  name,
  listed: true,
  description,
  input: aliasInput,
  map: (a) => ({ tool: 'usage_report', args: { ...known({ ...a, ...oneDay(a) }), group, ...extra } }),
})

export const usageAliases = [
  alias('get_daily_stats', 'daily', 'Usage per day (tokens, requests, cost, file operations): usage_report with group daily.'),
  alias('get_model_usage', 'models', 'Usage per model: usage_report with group models.'),
  alias('get_cost_breakdown', 'daily', 'Cost per day with a per-model breakdown: usage_report with group daily and breakdown.', { breakdown: true }),
  alias('get_file_operations', 'daily', 'File operations per day (reads, writes, edits, creates, deletes, lines) with the usage of each day: usage_report with group daily.'),
]
