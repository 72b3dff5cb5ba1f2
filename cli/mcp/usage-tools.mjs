// The usage report as an MCP tool (`usage_report`, the options of `roo-state usage`), answered as
// structured content that its declared output schema describes. The tools other usage trackers'
// servers offer, under their names and with their arguments, are in ./tracker-tools.mjs.
import { z } from 'zod'
import { confinedStore } from '../lib/stores.mjs'
import { COST_MODES, GROUPS, HOSTS, ORDERS, usageReport } from '../lib/usage.mjs'
import { ANSWER_CHARS, fitCount, offsetCursor, offsetOf, pageNote } from './pages.mjs'

export const day = (what) => z.string().regex(/^\d{4}-\d{2}-\d{2}$/).describe(what).optional()

/** The options every usage tool takes (ours). */
export const usageInput = {
  since: day('First day counted (YYYY-MM-DD, in timeZone).'),
  until: day('Last day counted, included.'),
  timeZone: z.string().describe('An IANA name such as Europe/Paris, UTC, or an offset such as +02:00; default the local time zone of the server (TZ, else the system\'s).').optional(),
  costMode: z.enum(COST_MODES).describe('auto (default): recorded, else calculated from tokens; recorded; calculate.').optional(),
  workspace: z.string().describe('Only tasks of this workspace (a path, or its folder name).').optional(),
  hosts: z.array(z.enum(HOSTS)).describe('Only tasks of these hosts.').optional(),
  tasksDir: z.string().describe('One of the server\'s task stores; default all of them.').optional(),
}

/** The report over the server's stores (or the one `tasksDir` names, among them). */
export async function report(a, ctx, options) {
  const sel = a.tasksDir ? { ...ctx.sel, tasksDirs: [await confinedStore(ctx.sel, a.tasksDir)] } : ctx.sel
  const own = { since: a.since, until: a.until, timeZone: a.timeZone, costMode: a.costMode, workspace: a.workspace, hosts: a.hosts }
  return usageReport(sel, { ...own, ...options }, ctx.io)
}

// ---- The output schema of usage_report ------------------------------------------------------

const n = z.number()
const sums = {
  requests: n.describe('API requests (a condense operation is not one; its cost is in cost).'),
  input: n.describe('Input tokens neither written to nor read from the cache: input + tokensOut + cacheWrites + cacheReads = totalTokens.'),
  tokensIn: n.describe('Input tokens as recorded (with the cache tokens on OpenAI-protocol records).'),
  tokensOut: n,
  cacheWrites: n,
  cacheReads: n,
  totalTokens: n,
  cost: n.describe('USD, by the report\'s cost mode.'),
  cancelled: n,
  failed: n,
  withoutCost: n,
}
const activity = {
  userMessages: n.describe('Messages of the person: a top task\'s opening message, answers and feedback.'),
  conversations: n.describe('Conversations started (top tasks created).'),
  toolCalls: n,
  commands: n,
}
const files = z.looseObject({ reads: n, writes: n, edits: n, creates: n, deletes: n, lines: n })
const row = z.looseObject({
  key: z.string().describe('A day (YYYY-MM-DD; a week by its Monday), YYYY-MM, YYYY, a task id, a root task id, a model, a workspace, a host or a mode.'),
  label: z.string().optional(),
  ...sums,
  tasks: n,
  ...activity,
  files,
  models: z.array(z.looseObject({ model: z.string(), ...sums })).optional(),
  modes: z.array(z.looseObject({ mode: z.string(), ...sums })).optional(),
  conversation: z.looseObject({ rootTaskId: z.string(), tasks: z.array(z.looseObject({ taskId: z.string(), depth: n, share: n })), modes: z.array(z.looseObject({ mode: z.string(), cost: n, share: n })) }).optional(),
})
/** A page of a report's rows that fits an answer: the totals always, the rows from the cursor on. */
export function pageOfRows(r, cursor) {
  const from = offsetOf(cursor)
  const rows = r.rows.slice(from)
  const make = (k) => ({
    ...r,
    rows: rows.slice(0, k),
    page: pageNote({ shown: k, total: r.rows.length, offset: from, nextCursor: k < rows.length ? offsetCursor(from + k) : null, unit: 'rows (the totals are of every row)' }),
  })
  return fitCount(rows.length, make, ANSWER_CHARS).value
}

const pageOutput = z.looseObject({ shown: z.number(), total: z.number(), leftOut: z.number(), nextCursor: z.string().nullable() }).describe('This page of the rows, and how to get the next.')

export const reportOutput = z.looseObject({
  group: z.enum(GROUPS),
  timeZone: z.string(),
  localZone: z.boolean().describe('The zone was not given: the server\'s local one.'),
  order: z.enum(ORDERS),
  since: z.string().optional(),
  until: z.string().optional(),
  costMode: z.enum(COST_MODES),
  rows: z.array(row),
  totals: row,
  noRecordedCost: z.array(z.looseObject({ taskId: z.string(), requests: n })),
  unpricedModels: z.array(z.string()),
  historyDisagreements: z.array(z.looseObject({ taskId: z.string(), fields: z.array(z.string()) })),
  inputBelowCache: n,
  notes: z.array(z.string()),
  warnings: z.array(z.string()),
  sync: z.looseObject({ read: n, cached: n, kept: n }),
  page: pageOutput.optional(),
})

export const usageTools = [
  {
    name: 'usage_report',
    title: 'Usage and cost report',
    description:
      'Tokens (input, output, cache writes and reads, adding up to the total), requests, the person\'s messages, conversations started, tool calls and cost, by day, week, month, year, task, conversation (a root task and all its subtasks, with the share of each task and mode), model, workspace, host or mode, in the local time zone unless timeZone is given; with file operations per row, the tasks that recorded no cost or whose history item disagrees with their records, and totals.',
    input: {
      group: z.enum(GROUPS).describe('The rows (default daily).').optional(),
      ...usageInput,
      order: z.enum(ORDERS).describe('Periods oldest first (asc, default) or newest first; other rows most expensive first (desc, default) or cheapest.').optional(),
      last: z.int().min(1).max(100_000).describe('Periods only: the last N periods that hold usage (the totals are theirs).').optional(),
      breakdown: z.boolean().describe('Per-model sums in each row.').optional(),
      byMode: z.boolean().describe('Per-mode sums in each row.').optional(),
      cursor: z.string().min(1).describe('The nextCursor of the previous page (the other arguments unchanged).').optional(),
    },
    output: reportOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    async run(a, ctx) {
      const r = await report(a, ctx, { group: a.group ?? 'daily', order: a.order, last: a.last, breakdown: a.breakdown, byMode: a.byMode })
      return pageOfRows(r, a.cursor)
    },
  },
]
