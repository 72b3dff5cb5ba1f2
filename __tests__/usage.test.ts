import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { core, repoRoot, tempDir } from './helpers'

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
  const home = path.join(work, 'home')
  fs.mkdirSync(home, { recursive: true })
  env = { ...process.env, HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), ROO_STATE_CACHE_DIR: path.join(work, 'cache'), ROO_STATE_STORAGE: '' }
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

function run(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: repoRoot, env, encoding: 'utf8', timeout: 120_000 })
  if (r.status !== 0) throw new Error(`roo-state ${args.join(' ')} exited ${r.status}:\n${r.stderr}\n${r.stdout}`)
  return r.stdout
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
})

describe('MCP usage tools', () => {
  let client: Client

  beforeAll(async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, 'mcp', '--tasks-dir', storeDir('stack-era-v3.20'), '--tasks-dir', storeDir('cline-v3.4x')],
      env: env as Record<string, string>,
      cwd: work,
      stderr: 'pipe',
    })
    client = new Client({ name: 'roo-state-usage-test', version: '1.0.0' })
    await client.connect(transport)
  })

  afterAll(async () => {
    await client?.close()
  })

  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args })
    const content = r.content as Array<{ text: string }>
    if (r.isError) throw new Error(`${name}: ${content[0].text}`)
    return JSON.parse(content[0].text)
  }

  it('usage_report and its aliases give the same figures', async () => {
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    for (const n of ['usage_report', 'get_daily_stats', 'get_model_usage', 'get_cost_breakdown', 'get_file_operations']) expect(names).toContain(n)
    const want = expected(['stack-era-v3.20', 'cline-v3.4x'])
    const daily = await call('usage_report', { group: 'daily', costMode: 'recorded' })
    expect(daily.totals.cost).toBeCloseTo(want.cost, 12)
    const stats = await call('get_daily_stats', { costMode: 'recorded' })
    expect(stats.rows).toEqual(daily.rows)
    const models = await call('get_model_usage', {})
    expect(models.group).toBe('models')
    expect(models.rows.map((r: any) => r.key)).toContain('claude-sonnet-4-5-20250929')
    const breakdown = await call('get_cost_breakdown', { date: daily.rows[0].key })
    expect(breakdown.rows).toHaveLength(1)
    expect(breakdown.rows[0].models.length).toBeGreaterThan(0)
    const files = await call('get_file_operations', {})
    expect(files.totals.files.reads + files.totals.files.edits + files.totals.files.creates).toBeGreaterThan(0)
  })
})
