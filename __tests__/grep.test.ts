import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { core, repoRoot, tempDir } from './helpers'

// grepTasks through the binding, `roo-state grep` and the MCP tool grep_tasks, over a copy of a
// fixture store with a task added whose texts hold quotes, backslashes, accents, CJK and a phrase
// cut in two by a message boundary.

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const V350 = path.join(repoRoot, 'fixtures', 'stores', 'history-item-v3.50', 'tasks')
const ROOT = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'
const CHILD = '019cd6ce-5036-7f70-a11e-7f86d559ebe2'
const GRANDCHILD = '019cd6cf-3402-7119-95b7-f7d5c886c374'
const ADDED = '019d0000-0000-7000-8000-0000000000aa'

let work: string
let tasks: string
let env: NodeJS.ProcessEnv

function addTask() {
  const dir = path.join(tasks, ADDED)
  fs.mkdirSync(dir, { recursive: true })
  const ts = Date.parse('2026-03-01T10:00:00Z')
  const ui = [
    { ts, type: 'say', say: 'text', text: 'Why does C:\\Users\\dev\\app print "Hello, wörld"?\n東京都の設定を確認して' },
    { ts: ts + 1000, type: 'say', say: 'api_req_started', text: '{"request":"boundary-one"}' },
    { ts: ts + 2000, type: 'ask', ask: 'command', text: 'node app.js --greet "wörld"' },
    { ts: ts + 3000, type: 'say', say: 'command_output', text: 'line 1\nError: ENOENT: no such file\nline 3' },
    { ts: ts + 4000, type: 'say', say: 'text', text: 'the end of one message' },
    { ts: ts + 5000, type: 'say', say: 'text', text: 'start of the next one' },
  ]
  fs.writeFileSync(path.join(dir, 'ui_messages.json'), JSON.stringify(ui))
  const item = { id: ADDED, number: 9, ts: ts + 5000, task: ui[0].text, tokensIn: 1, tokensOut: 1, totalCost: 0, workspace: '/home/dev/app' }
  fs.writeFileSync(path.join(dir, 'history_item.json'), JSON.stringify(item))
}

const grep = (pattern: string, o: Partial<Parameters<typeof core.grepTasks>[0]> = {}) =>
  core.grepTasks({ pattern, tasksDirs: [tasks], ...o })

beforeAll(() => {
  work = tempDir('roo-state-grep-')
  tasks = path.join(work, 'store', 'tasks')
  fs.cpSync(V350, tasks, { recursive: true })
  addTask()
  process.env.ROO_STATE_CACHE_DIR = path.join(work, 'cache')
  env = { ...process.env, ROO_STATE_CACHE_DIR: path.join(work, 'cache'), ROO_STATE_STORAGE: path.join(work, 'store') }
})

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

describe('grepTasks', () => {
  it('finds a literal with its task, time, kind, line and range', async () => {
    const r = await grep('Error: ENOENT')
    expect(r.matches).toHaveLength(1)
    const m = r.matches[0]
    expect([m.taskId, m.kind, m.lineNumber, m.messageIndex, m.timestamp]).toEqual([ADDED, 'toolResult', 2, 3, '2026-03-01T10:00:03.000Z'])
    expect(m.line.slice(m.ranges[0][0], m.ranges[0][1])).toBe('Error: ENOENT')
    expect(r.tasksSearched).toBe(5)
    const ctx = await grep('Error: ENOENT', { context: 1 })
    expect([ctx.matches[0].before, ctx.matches[0].after]).toEqual([['line 1'], ['line 3']])
  })

  it('takes quotes, backslashes, accents and CJK literally', async () => {
    expect((await grep('print "Hello, wörld"')).matches.map((m) => m.kind)).toEqual(['user'])
    expect((await grep('C:\\Users\\dev')).matches).toHaveLength(1)
    const cjk = (await grep('東京都')).matches
    expect(cjk).toHaveLength(1)
    expect(cjk[0].line.slice(...cjk[0].ranges[0])).toBe('東京都')
    expect((await grep('WÖRLD', { ignoreCase: true })).matches).toHaveLength(2)
    expect((await grep('prévisions', { task: ROOT })).tasksSearched).toBeGreaterThan(1)
    // Regex metacharacters are literal unless regex is set.
    expect((await grep('app.js --greet')).matches).toHaveLength(1)
    expect((await grep('app.js --greet "w.rld"')).matches).toHaveLength(0)
    expect((await grep('--greet "w.rld"', { regex: true })).matches).toHaveLength(1)
  })

  it('reads the text store its first grep wrote, and the folders when asked', async () => {
    const first = await grep('ENOENT')
    const again = await grep('ENOENT')
    expect(again.matches).toEqual(first.matches)
    expect([again.tasksFromTextStore, again.filesParsed]).toEqual([again.tasksSearched, 0])
    const files = await grep('ENOENT', { noTextStore: true })
    expect(files.matches).toEqual(first.matches)
    expect(files.tasksFromTextStore).toBe(0)
    expect(fs.readdirSync(path.join(work, 'cache', 'stores')).some((k) => fs.existsSync(path.join(work, 'cache', 'stores', k, 'dialogue.texts')))).toBe(true)
  })

  it('never matches across a message boundary', async () => {
    expect((await grep('of one message')).matches).toHaveLength(1)
    expect((await grep('one message\nstart of')).matches).toHaveLength(0)
    expect((await grep('message\\s+start', { regex: true })).matches).toHaveLength(0)
  })

  it('selects kinds and filters like search', async () => {
    expect((await grep('wörld', { kinds: ['toolInput'] })).matches.map((m) => m.kind)).toEqual(['toolInput'])
    expect((await grep('boundary-one')).matches).toHaveLength(0)
    expect((await grep('wörld', { workspace: 'app' })).tasksSearched).toBe(1)
    expect((await grep('cache', { workspace: 'meteo-cli' })).tasksSearched).toBe(4)
    // The subtree of CHILD: itself and its own subtask.
    const sub = await grep('cache', { task: CHILD.slice(0, 13) })
    expect(sub.tasksSearched).toBe(2)
    expect(sub.matches.length).toBeGreaterThan(0)
    for (const m of sub.matches) expect([CHILD, GRANDCHILD]).toContain(m.taskId)
    expect((await grep('wörld', { dateRange: { startDate: '2026-03-02' } })).matches).toHaveLength(0)
    expect((await grep('wörld', { dateRange: { endDate: '2026-03-01' } })).matches).toHaveLength(2)
    const few = await grep('e', { maxMatches: 3 })
    expect([few.matches.length, few.truncated]).toEqual([3, true])
  })

  it('refuses bad patterns and options, and runs hostile ones in linear time', async () => {
    await expect(grep('(a')).resolves.toBeDefined() // a literal
    await expect(grep('(a', { regex: true })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(grep('(?<=a)b', { regex: true })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(grep('\\w{1000}{1000}', { regex: true })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(grep('')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(grep('x', { kinds: ['tools' as 'user'] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    const r = await grep('(a+)+$|(\\w+\\s?)*!$', { regex: true })
    expect(r.tasksSearched).toBe(5)
  })
})

describe('roo-state grep', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [cli, 'grep', ...args, '--tasks-dir', tasks], { env, encoding: 'utf8', timeout: 120_000 })

  it('prints matches under their task, or JSON', () => {
    const t = run(['Error: ENOENT', '-C', '1'])
    expect(t.status, t.stderr).toBe(0)
    // The task by the shortest prefix that names it alone (eight characters at least).
    expect(t.stdout).toContain(`${ADDED.slice(0, 8)} · `)
    expect(t.stdout).toMatch(/toolResult +#3:2: Error: ENOENT/)
    expect(t.stdout).toContain('- line 1')
    const j = run(['-E', 'ENOENT|wörld', '--kind', 'toolResult,toolInput', '--json'])
    expect(j.status, j.stderr).toBe(0)
    const data = JSON.parse(j.stdout)
    expect(data.matches.map((m: { kind: string }) => m.kind).sort()).toEqual(['toolInput', 'toolResult'])
    const bad = run(['x', '--kind', 'nope'])
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toContain('--kind takes')
  })
})

describe('MCP grep_tasks', () => {
  let client: Client
  beforeAll(async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp'], env: env as Record<string, string>, cwd: work, stderr: 'pipe' })
    client = new Client({ name: 'roo-state-test', version: '1.0.0' })
    await client.connect(transport)
  })
  afterAll(async () => {
    await client?.close()
  })
  const call = (args: Record<string, unknown>) => client.callTool({ name: 'grep_tasks', arguments: args })
  const textOf = (r: Awaited<ReturnType<typeof call>>) => (r.content as Array<{ text: string }>)[0].text

  it('is listed with its schema and answers', async () => {
    const { tools } = await client.listTools()
    const t = tools.find((x) => x.name === 'grep_tasks')!
    expect(t.inputSchema.required).toEqual(['pattern'])
    expect(t.annotations?.readOnlyHint).toBe(true)
    const r = await call({ pattern: 'ENOENT', kinds: ['toolResult'], context: 1 })
    expect(r.isError, textOf(r)).toBeFalsy()
    const data = JSON.parse(textOf(r))
    expect(data.matches[0].after).toEqual(['line 3'])
  })

  it('refuses untrusted arguments', async () => {
    for (const args of [
      { pattern: 'x', tasksDir: path.join(work, 'elsewhere') },
      { pattern: 'x'.repeat(4097) },
      { pattern: 'x', context: 21 },
      { pattern: 'x', kinds: ['everything'] },
      { pattern: 'x', extra: true },
      { pattern: '(a', regex: true },
    ]) {
      const r = await call(args)
      expect(r.isError, JSON.stringify(args).slice(0, 80)).toBe(true)
    }
  })
})
