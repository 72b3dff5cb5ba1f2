// The tools another usage tracker's MCP server offers (splitrail: get_daily_stats,
// get_model_usage, get_cost_breakdown, get_file_operations, compare_tools, list_analyzers), under
// its names and with its arguments (`date`, `analyzer`, `limit`, `start_date`, `end_date`) beside
// ours, answered from our usage report as structured content with its fields' names, which each
// tool's output schema describes; and its two resources (`splitrail://summary`,
// `splitrail://models`). An agent set up for that server gets answers here. An analyzer is one of
// our hosts (Roo Code, Zoo Code, Cline, Kilo Code); another tool's name narrows to nothing.
import { z } from 'zod'
import { HOST_NAMES, HOST_SOURCES } from '../lib/registry.generated.mjs'
import { day, report, usageInput } from './usage-tools.mjs'
import { ANSWER_CHARS, fitCount, offsetCursor, offsetOf } from './pages.mjs'

/** Our hosts under the names such a server gives its analyzers. */
export const ANALYZERS = HOST_SOURCES.map((host) => ({ name: HOST_NAMES[host], host }))
const PRODUCTS = ANALYZERS.map((a) => a.name).join(', ')

const nameOf = (host) => ANALYZERS.find((a) => a.host === host)?.name ?? host

/** The hosts an `analyzer` argument names: one of ours by name or id, else none. */
function hostsOf(a) {
  if (a.analyzer === undefined) return a.hosts
  const want = a.analyzer.trim().toLowerCase()
  const found = ANALYZERS.find((x) => x.name.toLowerCase() === want || x.host === want)
  return found ? [found.host] : []
}

/** The report the arguments ask for; `null` when the analyzer is none of our hosts. */
async function trackerReport(a, ctx, options) {
  const hosts = hostsOf(a)
  if (hosts && hosts.length === 0) return null
  const one = a.date ? { since: a.date, until: a.date } : {}
  const range = { since: a.since ?? a.start_date, until: a.until ?? a.end_date }
  return report({ ...a, ...range, ...one, hosts }, ctx, options)
}

const analyzer = z.string().describe(`One of our hosts by name (${PRODUCTS}) or id; default all of them. Another tool's name gives no usage.`).optional()
const date = day('One day (YYYY-MM-DD, in the time zone): since and until at once.')
const startDate = day('First day counted (YYYY-MM-DD), as since.')
const endDate = day('Last day counted, included, as until.')

const n = z.number()
const count = z.int().min(0)
const cursor = z.string().min(1).describe('The next_cursor of the previous page (the other arguments unchanged).').optional()
/** What a paged answer adds: the items left out after this page, and the cursor of the next. */
const pageFields = {
  left_out: count.describe('Items after this page.').optional(),
  next_cursor: z.string().nullable().describe('Pass it back as cursor for the next page; null on the last.').optional(),
}

/** The page of `items` from the cursor on that fits an answer, as `make(items, pageFields)` shapes it. */
function paged(items, cur, make) {
  const from = offsetOf(cur)
  const rest = items.slice(from)
  return fitCount(rest.length, (k) => make(rest.slice(0, k), { left_out: rest.length - k, next_cursor: k < rest.length ? offsetCursor(from + k) : null }), ANSWER_CHARS).value
}
const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false }

// ---- get_daily_stats ----------------------------------------------------------------------------

const dailySummary = z.object({
  date: z.string().describe('The day, YYYY-MM-DD, in time_zone.'),
  user_messages: count.describe('Messages of the person: a top task\'s opening message, answers and feedback.'),
  ai_messages: count.describe('API requests (each answer of the model).'),
  conversations: count.describe('Conversations (top tasks) started that day.'),
  total_cost: n.describe('USD.'),
  input_tokens: n.describe('Input tokens neither written to nor read from the cache.'),
  output_tokens: n,
  cache_read_tokens: n,
  cache_write_tokens: n,
  total_tokens: n.describe('input + output + cache reads + cache writes.'),
  tool_calls: count.describe('Tool calls, commands included.'),
  terminal_commands: count,
  files_read: count,
  files_edited: count.describe('Files edited or written over.'),
  files_added: count.describe('Files created.'),
  files_deleted: count,
  models: z.record(z.string(), count).describe('Requests per model.'),
})

function summaryOf(r) {
  const f = r.files ?? {}
  return {
    date: r.key,
    user_messages: r.userMessages,
    ai_messages: r.requests,
    conversations: r.conversations,
    total_cost: r.cost,
    input_tokens: r.input,
    output_tokens: r.tokensOut,
    cache_read_tokens: r.cacheReads,
    cache_write_tokens: r.cacheWrites,
    total_tokens: r.totalTokens,
    tool_calls: r.toolCalls,
    terminal_commands: r.commands,
    files_read: f.reads ?? 0,
    files_edited: (f.edits ?? 0) + (f.writes ?? 0),
    files_added: f.creates ?? 0,
    files_deleted: f.deletes ?? 0,
    models: Object.fromEntries((r.models ?? []).map((m) => [m.model, m.requests])),
  }
}

const zoneOf = (r, a) => r?.timeZone ?? a.timeZone ?? 'local'

const dailyStats = {
  name: 'get_daily_stats',
  title: 'Usage per day',
  description:
    'Usage per day, newest first: the person\'s messages, requests, conversations started, cost, tokens (input without the cache, output, cache reads and writes), tool calls, commands, files read, edited, created and deleted, and requests per model. date: one day; limit: the most recent days that hold usage; analyzer: one host.',
  input: { date, analyzer, limit: z.int().min(1).max(100_000).describe('The most recent days that hold usage.').optional(), cursor, ...usageInput },
  output: z.object({ results: z.array(dailySummary), time_zone: z.string(), cost_mode: z.string(), ...pageFields }),
  annotations: readOnly,
  async run(a, ctx) {
    const r = await trackerReport(a, ctx, { group: 'daily', order: 'desc', last: a.limit, breakdown: true })
    const all = (r?.rows ?? []).map(summaryOf)
    return paged(all, a.cursor, (results, page) => ({ results, time_zone: zoneOf(r, a), cost_mode: r?.costMode ?? a.costMode ?? 'auto', ...page }))
  },
}

// ---- get_model_usage ----------------------------------------------------------------------------

const modelUsage = {
  name: 'get_model_usage',
  title: 'Usage per model',
  description: 'Requests per model (most first), with each model\'s cost and tokens. date: one day; analyzer: one host.',
  input: { date, analyzer, ...usageInput },
  output: z.object({
    models: z.array(z.object({ model: z.string(), message_count: count.describe('Requests.'), total_cost: n, total_tokens: n })),
    total_messages: count.describe('Requests of every model.'),
  }),
  annotations: readOnly,
  async run(a, ctx) {
    const r = await trackerReport(a, ctx, { group: 'models' })
    const models = (r?.rows ?? []).map((m) => ({ model: m.key, message_count: m.requests, total_cost: m.cost, total_tokens: m.totalTokens }))
    models.sort((x, y) => y.message_count - x.message_count || x.model.localeCompare(y.model))
    return { models, total_messages: r?.totals.requests ?? 0 }
  },
}

// ---- get_cost_breakdown -------------------------------------------------------------------------

/** Every calendar day from `first` to `last` (YYYY-MM-DD). */
function calendar(first, last) {
  const out = []
  for (let t = Date.parse(`${first}T00:00:00Z`), end = Date.parse(`${last}T00:00:00Z`); t <= end; t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10))
  return out
}

const costBreakdown = {
  name: 'get_cost_breakdown',
  title: 'Cost per day over a range',
  description: 'The cost of each calendar day from the first to the last day with usage in the range (empty days at 0), their total and the average per day. start_date, end_date: the range; analyzer: one host.',
  input: { start_date: startDate, end_date: endDate, analyzer, cursor, ...usageInput },
  output: z.object({
    total_cost: n,
    daily_costs: z.array(z.object({ date: z.string(), cost: n })),
    average_daily_cost: n.describe('total_cost over the days of the range (every page of daily_costs).'),
    time_zone: z.string(),
    ...pageFields,
  }),
  annotations: readOnly,
  async run(a, ctx) {
    const r = await trackerReport(a, ctx, { group: 'daily', order: 'asc' })
    const rows = r?.rows ?? []
    const cost = new Map(rows.map((x) => [x.key, x.cost]))
    const days = rows.length ? calendar(rows[0].key, rows[rows.length - 1].key) : []
    const total = r?.totals.cost ?? 0
    const daily = days.map((d) => ({ date: d, cost: cost.get(d) ?? 0 }))
    return paged(daily, a.cursor, (page, more) => ({ total_cost: total, daily_costs: page, average_daily_cost: days.length ? total / days.length : 0, time_zone: zoneOf(r, a), ...more }))
  },
}

// ---- get_file_operations ------------------------------------------------------------------------

const fileOperations = {
  name: 'get_file_operations',
  title: 'File operations',
  description: 'Files read, edited, created and deleted by the tasks\' tool calls, lines written, tool calls and terminal commands. date: one day; analyzer: one host.',
  input: { date, analyzer, ...usageInput },
  output: z.object({
    files_read: count,
    files_edited: count.describe('Files edited or written over.'),
    files_added: count.describe('Files created.'),
    files_deleted: count,
    lines_written: count.describe('Lines of the content written or the diffs applied, where the records hold them.'),
    tool_calls: count,
    terminal_commands: count,
  }),
  annotations: readOnly,
  async run(a, ctx) {
    const r = await trackerReport(a, ctx, { group: 'daily' })
    const t = r?.totals ?? {}
    const f = t.files ?? {}
    return {
      files_read: f.reads ?? 0,
      files_edited: (f.edits ?? 0) + (f.writes ?? 0),
      files_added: f.creates ?? 0,
      files_deleted: f.deletes ?? 0,
      lines_written: f.lines ?? 0,
      tool_calls: t.toolCalls ?? 0,
      terminal_commands: t.commands ?? 0,
    }
  },
}

// ---- compare_tools, list_analyzers --------------------------------------------------------------

const compareTools = {
  name: 'compare_tools',
  title: 'Usage per host',
  description: `Each host's (${PRODUCTS}) cost, messages (the person's and the model's), conversations started, tokens and tool calls. start_date, end_date: the range.`,
  input: { start_date: startDate, end_date: endDate, ...usageInput },
  output: z.object({
    tools: z.array(
      z.object({
        name: z.string(),
        host: z.string(),
        total_cost: n,
        total_messages: count.describe('The person\'s messages and the requests.'),
        total_conversations: count,
        total_tokens: n.describe('input + output + cache reads + cache writes.'),
        total_tool_calls: count,
      }),
    ),
  }),
  annotations: readOnly,
  async run(a, ctx) {
    const r = await trackerReport(a, ctx, { group: 'hosts' })
    const tools = (r?.rows ?? []).map((h) => ({
      name: nameOf(h.key),
      host: h.key,
      total_cost: h.cost,
      total_messages: h.userMessages + h.requests,
      total_conversations: h.conversations,
      total_tokens: h.totalTokens,
      total_tool_calls: h.toolCalls,
    }))
    return { tools }
  },
}

const listAnalyzers = {
  name: 'list_analyzers',
  title: 'The hosts read',
  description: `The coding agents whose task folders this server reads (${PRODUCTS}), each with the host id the other usage tools take.`,
  input: {},
  output: z.object({ analyzers: z.array(z.string()), hosts: z.array(z.object({ name: z.string(), host: z.string() })) }),
  annotations: readOnly,
  run: async () => ({ analyzers: ANALYZERS.map((x) => x.name), hosts: ANALYZERS.map((x) => ({ ...x })) }),
}

export const trackerTools = [dailyStats, modelUsage, costBreakdown, fileOperations, compareTools, listAnalyzers]

/** The arguments these tools take in the other server's snake_case spelling (ours are camelCase). */
export const foreignArguments = { get_cost_breakdown: ['start_date', 'end_date'], compare_tools: ['start_date', 'end_date'] }

// ---- Resources ----------------------------------------------------------------------------------

const dollars = (c) => `$${c.toFixed(2)}`

/** The resources such a server lists: the last day's summary and the requests per model, as text. */
export const trackerResources = [
  {
    uri: 'splitrail://summary',
    name: 'Daily Summary',
    description: 'The most recent day with usage: messages, conversations, cost and tokens.',
    async read(ctx) {
      const r = await report({}, ctx, { group: 'daily', order: 'desc', last: 1 })
      const d = r.rows[0]
      if (!d) return 'No usage recorded.'
      return [
        `Date: ${d.key} (${r.timeZone})`,
        `Messages: ${d.userMessages} from the person, ${d.requests} requests`,
        `Conversations started: ${d.conversations}`,
        `Cost: ${dollars(d.cost)}`,
        `Tokens: ${d.input} input, ${d.tokensOut} output, ${d.cacheReads} cache reads, ${d.cacheWrites} cache writes`,
      ].join('\n')
    },
  },
  {
    uri: 'splitrail://models',
    name: 'Model Breakdown',
    description: 'Requests per model, most first, over all the usage recorded.',
    async read(ctx) {
      const r = await report({}, ctx, { group: 'models' })
      const rows = [...r.rows].sort((x, y) => y.requests - x.requests || x.key.localeCompare(y.key))
      return rows.length ? rows.map((m) => `${m.key}: ${m.requests} requests, ${dollars(m.cost)}`).join('\n') : 'No usage recorded.'
    },
  },
]
