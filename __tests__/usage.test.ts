import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { core, repoRoot, isolatedEnv, tempDir } from './helpers'

// Usage reports through the binding (TaskStore.usageReport), the CLI (`roo-state usage`) and
// the MCP server (usage_report and the other trackers' tool names), on the bundled fixtures. The
// references are the hand-derived facts of each task (fixtures/stores/*/expected/*.json).

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const fixtures = path.join(repoRoot, 'fixtures', 'stores')
const STORES = fs.readdirSync(fixtures).filter((n) => fs.existsSync(path.join(fixtures, n, 'tasks'))).sort()
const storeDir = (name: string) => path.join(fixtures, name, 'tasks')

/**
 * Sums of the hand-derived facts of some stores, each task once: a task two stores hold (Zoo's
 * import of Roo's history) counts as its copy with the later last activity (the copies the
 * fixtures hold are either the same conversation or one continued later).
 */
function expected(stores: string[]) {
  const t = { tokensIn: 0, tokensOut: 0, cacheWrites: 0, cacheReads: 0, cost: 0 }
  const byId = new Map<string, any>()
  for (const s of stores) {
    const dir = path.join(fixtures, s, 'expected')
    for (const f of fs.readdirSync(dir)) {
      const e = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))
      const other = byId.get(e.taskId)
      if (!other || (e.lastActivity ?? 0) > (other.lastActivity ?? 0)) byId.set(e.taskId, e)
    }
  }
  for (const e of byId.values()) {
    t.tokensIn += e.tokensIn ?? 0
    t.tokensOut += e.tokensOut ?? 0
    t.cacheWrites += e.cacheWrites ?? 0
    t.cacheReads += e.cacheReads ?? 0
    t.cost += e.totalCost ?? 0
  }
  return t
}

let work: string
let env: NodeJS.ProcessEnv

beforeAll(() => {
  work = tempDir('roo-state-usage-')
  env = { ...isolatedEnv(work), ROO_STATE_STORAGE: '' }
})

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

describe('TaskStore.usageReport', () => {
  it('daily and monthly totals of every store equal the hand-derived facts', async () => {
    const store = await core.TaskStore.open({ tasksDirs: STORES.map(storeDir), noCache: true })
    const want = expected(STORES)
    for (const group of ['daily', 'monthly', 'weekly'] as const) {
      const r = await store.usageReport({ group, costMode: 'recorded' })
      expect(r.group).toBe(group)
      expect(r.totals.tokensIn).toBe(want.tokensIn)
      expect(r.totals.tokensOut).toBe(want.tokensOut)
      expect(r.totals.cacheReads).toBe(want.cacheReads)
      expect(r.totals.cost).toBeCloseTo(want.cost, 12)
      const rowCost = r.rows.reduce((a, x) => a + x.cost, 0)
      expect(rowCost).toBeCloseTo(r.totals.cost, 12)
      const keys = r.rows.map((x) => x.key)
      expect([...keys].sort()).toEqual(keys)
    }
    const monthly = await store.usageReport({ group: 'monthly' })
    for (const row of monthly.rows) expect(row.key).toMatch(/^\d{4}-\d{2}$/)
    // Read once: the second report read no task again.
    expect(monthly.sync.read).toBe(0)
    expect(monthly.sync.kept).toBe(store.size)
  })

  it('a conversation holds its subtasks with their shares; a date range and a zone narrow the days', async () => {
    const store = await core.TaskStore.open({ tasksDir: storeDir('history-item-v3.50'), noCache: true })
    const r = await store.usageReport({ group: 'conversations', breakdown: true })
    const conv = r.rows.find((x) => x.key === '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6')!
    expect(conv.conversation!.tasks).toHaveLength(4)
    const sum = conv.conversation!.tasks.reduce((a, t) => a + t.cost, 0)
    expect(sum).toBeCloseTo(conv.cost, 12)
    expect(conv.models!.length).toBeGreaterThan(0)
    const all = await store.usageReport({ group: 'daily', timeZone: 'Europe/Paris' })
    const first = all.rows[0].key
    const one = await store.usageReport({ group: 'daily', timeZone: 'Europe/Paris', since: first, until: first })
    expect(one.rows.map((x) => x.key)).toEqual([first])
    expect(one.totals.cost).toBeCloseTo(all.rows[0].cost, 12)
  })

  it('refuses bad options with INVALID_ARGUMENT', async () => {
    const store = await core.TaskStore.open({ tasksDir: storeDir('v2-wrapper'), noCache: true })
    await expect(store.usageReport({ timeZone: 'Mars/Olympus' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(store.usageReport({ since: '2026-02-31' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(store.usageReport({ group: 'hourly' as any })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })
})

function run(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: repoRoot, env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 120_000 })
  if (r.status !== 0) throw new Error(`roo-state ${args.join(' ')} exited ${r.status}:\n${r.stderr}\n${r.stdout}`)
  return r.stdout
}

/** The local day (YYYY-MM-DD) of `ms` in `zone`, by the JavaScript engine's own time zone data. */
const localDay = (ms: number, zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms)

/**
 * Per local day, the recorded cost of every request and condense operation of some stores' UI
 * records (a legacy `api_req_finished` on the day of the request it completes).
 */
function costPerDay(stores: string[], zone: string) {
  const days = new Map<string, number>()
  const cost = (text: string) => {
    try {
      return JSON.parse(text).cost ?? 0
    } catch {
      return 0
    }
  }
  // A task two stores hold (Roo Code history imported into Zoo Code) counts once: its copy with the
  // latest message.
  const copies = new Map<string, any[]>()
  const lastTs = (msgs: any[]) => Math.max(0, ...msgs.map((m) => (typeof m?.ts === 'number' ? m.ts : 0)))
  for (const s of stores) {
    for (const id of fs.readdirSync(storeDir(s))) {
      const file = ['ui_messages.json', 'claude_messages.json'].map((f) => path.join(storeDir(s), id, f)).find((f) => fs.existsSync(f))
      if (!file) continue
      let msgs: any[]
      try {
        msgs = JSON.parse(fs.readFileSync(file, 'utf8'))
      } catch {
        continue
      }
      if (!Array.isArray(msgs)) continue
      const other = copies.get(id)
      if (!other || lastTs(msgs) > lastTs(other)) copies.set(id, msgs)
    }
  }
  for (const msgs of copies.values()) {
    let started = ''
    for (const m of msgs) {
      let day = localDay(m.ts, zone)
      let c = 0
      if (m?.say === 'api_req_started') {
        started = day
        c = cost(m.text)
      } else if (m?.say === 'api_req_finished') {
        day = started || day
        c = cost(m.text)
      } else if (m?.say === 'condense_context') c = m.contextCondense?.cost ?? 0
      if (c) days.set(day, (days.get(day) ?? 0) + c)
    }
  }
  return days
}

describe('roo-state usage', () => {
  const dirs = STORES.flatMap((s) => ['--tasks-dir', storeDir(s)])

  it('prints an aligned table with totals, JSON and CSV that agree', () => {
    const data = JSON.parse(run(['usage', 'daily', ...dirs, '--cost', 'recorded', '--json']))
    expect(data.totals.cost).toBeCloseTo(expected(STORES).cost, 12)
    const text = run(['usage', 'daily', ...dirs, '--cost', 'recorded'])
    const lines = text.split('\n')
    const header = lines.find((l) => l.startsWith('Day'))!
    const total = lines.find((l) => l.startsWith('Total'))!
    // Aligned: the totals line is as wide as the header, and the cost column ends where it does.
    expect(total.length).toBe(header.length)
    expect(total.endsWith(data.totals.files ? `${data.totals.files.reads}/${data.totals.files.writes + data.totals.files.creates}/${data.totals.files.edits}` : '')).toBe(true)
    for (const row of data.rows) expect(text).toContain(row.key)
    // One meaning per column: Input + Output + Cache write + Cache read = Total tokens, said once.
    const t = data.totals
    expect(t.input + t.tokensOut + t.cacheWrites + t.cacheReads).toBe(t.totalTokens)
    expect(text.split('Input + Output + Cache write + Cache read = Total tokens').length).toBe(2)
    for (const row of data.rows) expect(row.input + row.tokensOut + row.cacheWrites + row.cacheReads).toBe(row.totalTokens)
    const csv = run(['usage', 'monthly', ...dirs, '--csv']).trim().split('\n')
    expect(csv[0].startsWith('key,label,model,requests')).toBe(true)
    expect(csv[csv.length - 1].startsWith('total,')).toBe(true)
  })

  it('has a compact form for narrow terminals', () => {
    const wide = run(['usage', 'monthly', ...dirs])
    const narrow = run(['usage', 'monthly', ...dirs, '--compact'])
    const width = (t: string) => Math.max(...t.split('\n').filter((l) => l.startsWith('Total')).map((l) => l.length))
    expect(width(narrow)).toBeLessThan(width(wide))
    expect(width(narrow)).toBeLessThanOrEqual(70)
  })

  it('keeps the usage records and the sums of a report between runs: a second run reads no task, --no-cache reads every one', () => {
    const cache = path.join(work, 'kept-cache')
    const args = ['usage', 'daily', ...dirs, '--json', '--cache-dir', cache]
    const first = JSON.parse(run(args))
    const n = first.sync.read + first.sync.cached
    expect(first.sync.read).toBe(n)
    // The same report again: its kept sums, no task's records read.
    const second = JSON.parse(run(args))
    expect(second.sync).toMatchObject({ read: 0, cached: 0, blocksSummed: 0 })
    expect(second.sync.blocksKept).toBeGreaterThan(0)
    expect(second.rows).toEqual(first.rows)
    expect(second.totals).toEqual(first.totals)
    // Another report: every task's records from the kept records, none read from its folder.
    const models = JSON.parse(run(['usage', 'models', ...dirs, '--json', '--cache-dir', cache]))
    expect(models.sync).toMatchObject({ read: 0, cached: n })
    const bare = JSON.parse(run([...args, '--no-cache']))
    expect(bare.sync).toMatchObject({ read: n, cached: 0 })
    expect(bare.totals).toEqual(first.totals)
  })

  it('counts days in the local time zone (TZ) by default, and says so; --tz UTC as before', () => {
    const stores = STORES.filter((s) => s !== 'damaged')
    const some = stores.flatMap((s) => ['--tasks-dir', storeDir(s)])
    const seen = new Set<string>()
    for (const zone of ['Asia/Tokyo', 'America/Los_Angeles']) {
      const data = JSON.parse(run(['usage', 'daily', ...some, '--cost', 'recorded', '--json'], { TZ: zone }))
      expect(data).toMatchObject({ timeZone: zone, localZone: true })
      const want = costPerDay(stores, zone)
      const got = new Map(data.rows.filter((r: any) => r.cost !== 0).map((r: any) => [r.key, r.cost]))
      expect([...got.keys()].sort()).toEqual([...want.keys()].sort())
      for (const [d, c] of want) expect(got.get(d)).toBeCloseTo(c, 12)
      seen.add(JSON.stringify([...got.keys()]))
      expect(run(['usage', 'daily', ...some], { TZ: zone }).split('\n')[0]).toBe(`Usage daily (${zone}, the local time zone; cost auto)`)
    }
    // The two zones put some request on another day.
    expect(seen.size).toBe(2)
    const utc = JSON.parse(run(['usage', 'daily', ...some, '--json', '--tz', 'UTC'], { TZ: 'Asia/Tokyo' }))
    expect(utc).toMatchObject({ timeZone: 'UTC', localZone: false })
    expect(utc.rows.map((r: any) => r.key)).toContain(localDay(Date.UTC(2025, 5, 19, 12), 'UTC'))
  })

  it('orders, keeps the last periods, groups by year', () => {
    const asc = JSON.parse(run(['usage', 'monthly', ...dirs, '--json', '--tz', 'UTC']))
    const desc = JSON.parse(run(['usage', 'monthly', ...dirs, '--json', '--tz', 'UTC', '--order', 'desc']))
    expect(desc.rows.map((r: any) => r.key)).toEqual(asc.rows.map((r: any) => r.key).reverse())
    const last = JSON.parse(run(['usage', 'monthly', ...dirs, '--json', '--tz', 'UTC', '--last', '2']))
    expect(last.rows).toEqual(asc.rows.slice(-2))
    expect(last.totals.cost).toBeCloseTo(asc.rows.slice(-2).reduce((a: number, r: any) => a + r.cost, 0), 12)
    const years = JSON.parse(run(['usage', 'yearly', ...dirs, '--json', '--tz', 'UTC']))
    expect(years.rows.map((r: any) => r.key)).toEqual([...new Set(asc.rows.map((r: any) => r.key.slice(0, 4)))])
    expect(years.totals.userMessages).toBe(asc.totals.userMessages)
    const r = spawnSync(process.execPath, [cli, 'usage', 'models', ...dirs, '--last', '2'], { cwd: repoRoot, env, encoding: 'utf8' })
    expect(r.status).toBe(2)
  })

  it('--watch redraws the report in place when a task changes, on a terminal only', async () => {
    const refused = spawnSync(process.execPath, [cli, 'usage', '--watch', '--tasks-dir', storeDir('v2-wrapper')], { cwd: repoRoot, env, encoding: 'utf8' })
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain('terminal')
    // A copy of a store, watched through a pseudo-terminal (script(1)).
    const tasks = path.join(work, 'watched', 'tasks')
    fs.cpSync(storeDir('v2-wrapper'), tasks, { recursive: true })
    const command = [process.execPath, cli, 'usage', 'daily', '--watch', '--tz', 'UTC', '--tasks-dir', tasks].map((a) => `'${a}'`).join(' ')
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env, detached: true })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const until = async (pred: () => boolean, ms = 30_000) => {
      for (const end = Date.now() + ms; !pred(); ) {
        if (Date.now() > end) throw new Error(`no such output after ${ms} ms:\n${out}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    try {
      await until(() => out.includes('Ctrl-C to quit'))
      expect(out).toContain('\x1b[H\x1b[2J')
      expect(out).not.toContain('2031-01-02')
      // A new task with one request of $1.2345 on 2031-01-02.
      const dir = path.join(tasks, '019f0000-0000-7000-8000-000000000abc')
      fs.mkdirSync(dir)
      const t0 = Date.UTC(2031, 0, 2, 10)
      fs.writeFileSync(path.join(dir, 'ui_messages.json'), JSON.stringify([
        { ts: t0, type: 'say', say: 'text', text: 'A new task' },
        { ts: t0 + 1000, type: 'say', say: 'api_req_started', text: JSON.stringify({ tokensIn: 10, tokensOut: 5, cost: 1.2345 }) },
      ]))
      await until(() => out.includes('Drawn again'))
      const frames = out.split('\x1b[H\x1b[2J')
      const last = frames[frames.length - 1]
      expect(last).toContain('2031-01-02')
      expect(last).toContain('1 added')
    } finally {
      process.kill(-child.pid!, 'SIGINT')
    }
  })
})

describe('MCP usage tools', () => {
  let client: Client
  const validator = new AjvJsonSchemaValidator()
  const TWO = ['stack-era-v3.20', 'cline-v3.4x']

  beforeAll(async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, 'mcp', ...TWO.flatMap((s) => ['--tasks-dir', storeDir(s)])],
      // Days in the server's local time zone, as for the command line.
      env: { ...env, TZ: 'UTC' } as Record<string, string>,
      cwd: work,
      stderr: 'pipe',
    })
    client = new Client({ name: 'roo-state-usage-test', version: '1.0.0' })
    await client.connect(transport)
  })

  afterAll(async () => {
    await client?.close()
  })

  /** A call whose structured content validates against the tool's listed output schema. */
  const call = async (name: string, args: Record<string, unknown>) => {
    const { tools } = await client.listTools()
    const tool = tools.find((t) => t.name === name)!
    expect(tool.outputSchema, name).toBeDefined()
    // The SDK's client validates too; the check is repeated here with the SDK's own validator.
    const r = await client.callTool({ name, arguments: args })
    const content = r.content as Array<{ text: string }>
    if (r.isError) throw new Error(`${name}: ${content[0].text}`)
    const check = validator.getValidator(tool.outputSchema as any)(r.structuredContent)
    expect(check.valid, `${name}: ${check.errorMessage}`).toBe(true)
    expect(JSON.parse(content[0].text)).toEqual(r.structuredContent)
    return r.structuredContent as any
  }

  it('usage_report answers structured content that its output schema describes', async () => {
    const want = expected(TWO)
    const daily = await call('usage_report', { group: 'daily', costMode: 'recorded' })
    expect(daily.totals.cost).toBeCloseTo(want.cost, 12)
    expect(daily).toMatchObject({ timeZone: 'UTC', localZone: true })
    const models = await call('usage_report', { group: 'models' })
    expect(models.rows.map((r: any) => r.key)).toContain('claude-sonnet-4-5-20250929')
  })

  // The arguments the other tracker's server declares for each of its tools (its published tool
  // definitions), called by those names as an agent set up for that server calls them.
  const THEIRS: Record<string, Record<string, unknown>> = {
    get_daily_stats: { date: '2025-06-19', analyzer: 'Roo Code', limit: 3 },
    get_model_usage: { date: '2025-06-19', analyzer: 'Roo Code' },
    get_cost_breakdown: { start_date: '2025-01-01', end_date: '2026-12-31', analyzer: 'Cline' },
    get_file_operations: { date: '2025-06-19', analyzer: 'Roo Code' },
    compare_tools: { start_date: '2025-01-01', end_date: '2026-12-31' },
    list_analyzers: {},
  }

  it('serves the other tracker\'s tools under their names and arguments, with structured content', async () => {
    const { tools } = await client.listTools()
    for (const [name, args] of Object.entries(THEIRS)) {
      const tool = tools.find((t) => t.name === name)
      expect(tool, name).toBeDefined()
      for (const a of Object.keys(args)) expect(Object.keys(tool!.inputSchema.properties ?? {}), `${name} ${a}`).toContain(a)
      await call(name, args)
    }
  })

  it('answers them with the figures of usage_report', async () => {
    const day = await call('usage_report', { group: 'daily', since: '2025-06-19', until: '2025-06-19', hosts: ['roo'], breakdown: true })
    const stats = await call('get_daily_stats', THEIRS.get_daily_stats)
    expect(stats.results).toHaveLength(1)
    const d = stats.results[0]
    const row = day.rows[0]
    expect(d).toMatchObject({ date: '2025-06-19', ai_messages: row.requests, user_messages: row.userMessages, conversations: row.conversations, total_cost: row.cost, input_tokens: row.input, cache_read_tokens: row.cacheReads })
    expect(Object.values(d.models).reduce((a: number, b: any) => a + b, 0)).toBe(row.requests)
    // Newest first, at most `limit` days; another tool's analyzer gives no usage.
    const recent = await call('get_daily_stats', { limit: 2 })
    expect(recent.results.map((x: any) => x.date)).toEqual([...recent.results.map((x: any) => x.date)].sort().reverse())
    expect(recent.results.length).toBeLessThanOrEqual(2)
    expect((await call('get_daily_stats', { analyzer: 'Claude Code' })).results).toEqual([])
    const all = await call('usage_report', { group: 'daily' })
    const costs = await call('get_cost_breakdown', {})
    expect(costs.total_cost).toBeCloseTo(all.totals.cost, 12)
    const first = all.rows[0].key
    const last = all.rows[all.rows.length - 1].key
    expect(costs.daily_costs[0].date).toBe(first)
    expect(costs.daily_costs).toHaveLength((Date.parse(last) - Date.parse(first)) / 86_400_000 + 1)
    expect(costs.average_daily_cost).toBeCloseTo(costs.total_cost / costs.daily_costs.length, 12)
    const tools = await call('compare_tools', {})
    const hosts = await call('usage_report', { group: 'hosts' })
    expect(tools.tools.map((t: any) => t.host).sort()).toEqual(hosts.rows.map((r: any) => r.key).sort())
    for (const t of tools.tools) expect(['Roo Code', 'Zoo Code', 'Cline', 'Kilo Code']).toContain(t.name)
    const files = await call('get_file_operations', {})
    expect(files.files_read).toBe(all.totals.files.reads)
    expect((await call('list_analyzers', {})).analyzers).toEqual(['Roo Code', 'Zoo Code', 'Cline', 'Kilo Code'])
    const models = await call('get_model_usage', {})
    expect(models.total_messages).toBe(all.totals.requests)
  })

  it('lists and reads the other tracker\'s two resources', async () => {
    const { resources } = await client.listResources()
    expect(resources.map((r) => r.uri).sort()).toEqual(['splitrail://models', 'splitrail://summary'])
    const all = await call('usage_report', { group: 'daily' })
    const latest = all.rows[all.rows.length - 1]
    const summary = await client.readResource({ uri: 'splitrail://summary' })
    expect((summary.contents[0] as any).text).toContain(`Date: ${latest.key}`)
    const models = await client.readResource({ uri: 'splitrail://models' })
    expect((models.contents[0] as any).text).toContain('claude-sonnet-4-5-20250929: ')
    await expect(client.readResource({ uri: 'splitrail://nothing' })).rejects.toThrow()
  })
})
