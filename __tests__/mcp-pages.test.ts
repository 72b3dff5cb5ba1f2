import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { core, repoRoot, isolatedEnv, tempDir } from './helpers'
// @ts-expect-error an untyped JavaScript module of the CLI
import { ANSWER_CHARS, ANSWER_NOTE } from '../cli/mcp/pages.mjs'

// The MCP answers are bounded by design: every tool answers at most ANSWER_CHARS characters and
// says so in its description, and the tools whose answers can be long answer pages that a cursor
// continues, visiting every conversation of every store once.
//
// The stores: two made of 2 400 copies of the bundled tasks under new ids (a Roo Code store and a
// Kilo Code one; their copied links name the originals, so most copies are conversations of their
// own: some 2 000 roots), and every bundled store (two of which hold the same imported tasks). A
// generated 50 000-task store would take minutes to write and cache in a test; what is checked
// (answers within the limit, cursors that visit every root once) does not depend on the size once
// a page cannot hold everything, which 2 400 tasks already ensure. bench/cli.mjs runs at 50 000,
// and ROO_STATE_PAGES_STORES (a path list of tasks folders) runs this suite on other stores.

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const fixtures = path.join(repoRoot, 'fixtures', 'stores')
const storeDir = (name: string) => path.join(fixtures, name, 'tasks')
const N = 2400

let work: string
let stores: string[]
let client: Client

type Result = Awaited<ReturnType<Client['callTool']>>

function text(r: Result): string {
  const content = r.content as Array<{ type: string; text: string }>
  return content.map((c) => c.text).join('')
}

async function call(name: string, args: Record<string, unknown> = {}): Promise<Result> {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 })
  if (r.isError) throw new Error(`${name} failed: ${text(r)}`)
  // No answer is longer than the limit its tool states.
  for (const c of r.content as Array<{ text: string }>) expect(c.text.length, name).toBeLessThanOrEqual(ANSWER_CHARS)
  return r
}

/** A store of `n` copies of the bundled tasks under new ids, in a host's storage folder. */
function copies(host: string, n: number): string {
  const tasks = path.join(work, host, 'globalStorage', host, 'tasks')
  fs.mkdirSync(tasks, { recursive: true })
  const sources = ['stack-era-v3.20', 'native-tools-v3.45', 'history-item-v3.50', 'claude-dev-2024', 'v2-wrapper'].flatMap((s) =>
    fs.readdirSync(storeDir(s)).filter((x) => !x.startsWith('_')).map((x) => path.join(storeDir(s), x)),
  )
  for (let i = 0; i < n; i++) fs.cpSync(sources[i % sources.length], path.join(tasks, crypto.randomUUID()), { recursive: true })
  return tasks
}

beforeAll(async () => {
  work = tempDir('roo-state-mcp-pages-')
  const given = process.env.ROO_STATE_PAGES_STORES?.split(path.delimiter).filter(Boolean)
  stores = given?.length
    ? given
    : [
        copies('rooveterinaryinc.roo-cline', (N * 2) / 3),
        copies('kilocode.kilo-code', N / 3),
        ...fs.readdirSync(fixtures).map(storeDir).filter((d) => fs.existsSync(d)),
      ]
  const env = isolatedEnv(work)
  if (process.env.ROO_STATE_PAGES_CACHE) env.ROO_STATE_CACHE_DIR = process.env.ROO_STATE_PAGES_CACHE
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', ...stores.flatMap((s) => ['--tasks-dir', s])],
    env,
    cwd: work,
    stderr: 'pipe',
  })
  client = new Client({ name: 'roo-state-pages-test', version: '1.0.0' })
  await client.connect(transport)
}, 600_000)

afterAll(async () => {
  await client?.close()
  fs.rmSync(work, { recursive: true, force: true })
})

describe('pages of the whole history', () => {
  it('get_task_tree without an id pages through every conversation of every store, each once, newest first', async () => {
    // The truth, from the core: the top tasks of each store's forest, a task two stores hold once.
    const want = new Set<string>()
    for (const dir of stores) {
      const h = await core.TaskStore.open({ tasksDir: dir, cacheDir: path.join(work, 'truth-cache') })
      for (const s of h.list({ topOnly: true, fields: [] }).items) want.add(s.taskId)
    }
    expect(want.size).toBeGreaterThan(1000)
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    let last = '9999'
    do {
      const answer = JSON.parse(text(await call('get_task_tree', cursor ? { limit: 200, cursor } : { limit: 200 })))
      pages++
      seen.push(...answer.order)
      // Newest first, across the pages.
      const dates = new Map<string, string>()
      for (const s of answer.stores) for (const r of s.roots) dates.set(r.taskId, r.createdAt)
      for (const id of answer.order) {
        expect(dates.get(id)! <= last).toBe(true)
        last = dates.get(id)!
      }
      expect(answer.page.shown).toBe(answer.order.length)
      cursor = answer.page.nextCursor ?? undefined
      if (cursor) expect(answer.page.more).toContain('cursor')
    } while (cursor)
    expect(pages).toBeGreaterThan(1)
    expect(seen.length).toBe(new Set(seen).size)
    expect(new Set(seen)).toEqual(want)
  })

  it('list_tasks pages through every task once', async () => {
    const ids: string[] = []
    let cursor: string | undefined
    let total = 0
    do {
      const answer = JSON.parse(text(await call('list_tasks', cursor ? { limit: 1000, cursor } : { limit: 1000 })))
      total = answer.total
      ids.push(...answer.tasks.map((t: any) => t.taskId))
      cursor = answer.page.nextCursor ?? undefined
    } while (cursor)
    expect(ids.length).toBe(total)
    expect(new Set(ids).size).toBe(total)
  })

  it('no tool answers more than the limit its description states, whatever it is asked', async () => {
    const { tools } = await client.listTools()
    for (const t of tools) expect(t.description, t.name).toContain(ANSWER_NOTE)
    const some = JSON.parse(text(await call('list_tasks', { sortBy: 'messageCount', limit: 1 }))).tasks[0].taskId
    const asks: Array<[string, Record<string, unknown>]> = [
      ['get_task_tree', { limit: 200, outputFormat: 'ascii-tree' }],
      ['get_task_tree', { limit: 200, outputFormat: 'markdown' }],
      ['get_task_tree', { conversationId: some }],
      ['list_tasks', { limit: 1000 }],
      ['usage_report', { group: 'tasks' }],
      ['usage_report', { group: 'conversations', breakdown: true }],
      ['usage_report', { group: 'daily', breakdown: true, byMode: true }],
      ['get_daily_stats', {}],
      ['get_cost_breakdown', {}],
      ['get_model_usage', {}],
      ['grep_tasks', { pattern: 'e', maxMatches: 10000, context: 3 }],
      ['view_conversation_tree', { taskId: some, detailLevel: 'full', viewMode: 'cluster' }],
      ['diagnose_roo_state', {}],
      ['discover_roo_storage', { measureSize: false }],
    ]
    for (const [name, args] of asks) {
      const r = await call(name, args)
      const body = text(r)
      if (body.startsWith('{')) {
        const v = JSON.parse(body)
        // A page says what it left out and how to get it.
        const page = v.page ?? (v.next_cursor !== undefined ? { nextCursor: v.next_cursor, leftOut: v.left_out } : null)
        if (page?.nextCursor) expect(page.leftOut, name).toBeGreaterThan(0)
      }
    }
    // grep's pages continue where the last stopped.
    const first = JSON.parse(text(await call('grep_tasks', { pattern: 'e', maxMatches: 10000, context: 3 })))
    expect(first.page.nextCursor).toBeTruthy()
    const second = JSON.parse(text(await call('grep_tasks', { pattern: 'e', maxMatches: 10000, context: 3, cursor: first.page.nextCursor })))
    const key = (m: any) => `${m.taskId}#${m.messageIndex}:${m.lineNumber}`
    expect(new Set(first.matches.map(key)).has(key(second.matches[0]))).toBe(false)
  })

  it('the tool list stays small: no legacy names, compact', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).not.toContain('conversation_browser')
    expect(JSON.stringify(tools).length).toBeLessThan(ANSWER_CHARS)
  })
})
