// Zoo Code 3.80 as it is on disk (fixtures/stores/zoo-code-3.80), beside the Roo Code store it
// imported two tasks from (fixtures/stores/roo-code-3.52), laid out under a home as the two
// extensions keep them: the subtask abandoned in Zoo (the child's own record decides), its
// interrupted tasks and startup repair, its own files in tasks/ that are not tasks, the stale
// _index.json, and each imported task counted once in trees, lists, usage and search, shown from
// its newer copy with the other named.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { readJson, repoRoot, isolatedEnv, tempDir } from './helpers'

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const fixtures = path.join(repoRoot, 'fixtures', 'stores')

// The tasks of zoo-code-3.80 (see fixtures/stores/README.md).
const ORCHESTRATOR = '01a04220-2cc0-7a41-b9c2-d4e5f6071829'
const ABANDONED = '01a04220-49a8-793c-ae8f-1a07b4d5e6c3'
const RECOVERED = '01a04238-e60c-7b7d-80a1-e96c3f28b5a4'
const ARCHITECT = '01a042c4-f840-78e2-b5a6-b7c0d1e2f3a4'
const INTERRUPTED = '01a042c5-47f0-7a0c-bd6e-9f2b5c8d1e4f'
// Imported from roo-code-3.52: the first continued in Zoo afterwards, the second untouched.
const CONTINUED = '019e1c4a-6c60-7b2e-9f8a-1c4d7e0f3a6b'
const UNTOUCHED = '019e25c9-2600-79d4-a7b0-c3e6f9a2b5c8'

let work: string
let env: NodeJS.ProcessEnv
let roo: string
let zoo: string

/** Every file under `dir` given the time `t` (seconds). */
function stamp(dir: string, t: number) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) stamp(p, t)
    else fs.utimesSync(p, t, t)
  }
}

function run(args: string[], status = 0) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: work, env, encoding: 'utf8', timeout: 120_000 })
  if (r.status !== status) throw new Error(`roo-state ${args.join(' ')} exited ${r.status}:\n${r.stderr}\n${r.stdout}`)
  return r.stdout
}
const json = (args: string[]) => JSON.parse(run([...args, '--json']))

beforeAll(() => {
  work = tempDir('roo-state-zoo-')
  const home = path.join(work, 'home')
  const global = path.join(home, '.config', 'Code', 'User', 'globalStorage')
  roo = path.join(global, 'rooveterinaryinc.roo-cline', 'tasks')
  zoo = path.join(global, 'zoocodeorganization.zoo-code', 'tasks')
  fs.cpSync(path.join(fixtures, 'roo-code-3.52', 'tasks'), roo, { recursive: true })
  fs.cpSync(path.join(fixtures, 'zoo-code-3.80', 'tasks'), zoo, { recursive: true })
  // Roo's files as Roo left them in May; Zoo's copies made by the import in August.
  stamp(roo, Date.UTC(2026, 4, 14, 10, 0, 0) / 1000)
  stamp(zoo, Date.UTC(2026, 7, 28, 10, 0, 0) / 1000)
  env = { ...isolatedEnv(work), ROO_STATE_STORAGE: '' }
})

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

const walk = (nodes: any[]): any[] => nodes.flatMap((n) => [n, ...walk(n.children ?? [])])

/** A module of the CLI (plain JavaScript, no declarations), loaded by its file URL. */
function cliModule(rel: string): Promise<any> {
  return import(pathToFileURL(path.join(repoRoot, 'cli', rel)).href)
}

describe('a Zoo Code 3.80 store', () => {
  it('is found under its extension folder, its own files and folders not taken for tasks', () => {
    const found = json(['discover'])
    const z = found.locations.find((l: any) => l.tasksDir === zoo)
    expect(z).toMatchObject({ source: 'zoo-code', host: 'zoocodeorganization.zoo-code', taskCount: 7, hasHistoryIndex: true })
    const scan = json(['scan', '--tasks-dir', zoo])
    expect(scan.stores[0].skeletons).toHaveLength(7)
    expect(scan.stores[0].diagnostics).toEqual([])
    const built = json(['cache', 'build', '--tasks-dir', zoo])
    expect([built.built + built.reused, built.failed, built.diagnostics]).toEqual([7, 0, []])
    const cleanup = json(['cleanup', '--tasks-dir', zoo])
    expect(cleanup.stores[0]).toMatchObject({ tasksScanned: 7, files: 0 })
  })

  it('leaves the abandoned subtask without a parent and says its parent abandoned it', () => {
    const tree = json(['tree', '--tasks-dir', zoo])
    const [store] = tree.stores
    expect(store.metrics.abandoned).toBe(1)
    expect(store.metrics.issues).toEqual([
      expect.objectContaining({ kind: 'abandoned', taskId: ABANDONED, candidates: [ORCHESTRATOR] }),
    ])
    const nodes = walk(store.roots)
    const byId = new Map(nodes.map((n) => [n.taskId, n]))
    // The parent keeps the subtask that finished; the abandoned one is a conversation of its own.
    expect(byId.get(ORCHESTRATOR).children.map((c: any) => c.taskId)).toEqual([RECOVERED])
    expect(byId.get(ORCHESTRATOR).abandonedSubtasks).toEqual([ABANDONED])
    expect(store.roots.map((r: any) => r.taskId)).toContain(ABANDONED)
    expect(byId.get(ABANDONED)).toMatchObject({ depth: 0, abandonedBy: [ORCHESTRATOR] })
    expect(byId.get(ABANDONED).parentTaskId).toBeUndefined()
    // The subtask cut short by a restart keeps its link (its own record names its parent).
    expect(byId.get(INTERRUPTED)).toMatchObject({ parentTaskId: ARCHITECT, parentEvidence: { source: 'history_item' } })
    const text = run(['tree', '--tasks-dir', zoo])
    expect(text).toContain('1 abandoned')
    // Ids as a person is shown them: their shortest unique prefix.
    expect(text).toContain(`abandoned by its parent ${ORCHESTRATOR.slice(0, 8)}`)
    expect(text).toContain(`abandoned 1 subtask: ${ABANDONED.slice(0, 8)}`)
  })

  it('reads the statuses and the recovery Zoo wrote', () => {
    const show = (id: string) => json(['show', id, '--tasks-dir', zoo]).skeleton
    expect(show(ABANDONED).storedLinks).toMatchObject({ status: 'interrupted' })
    expect(show(ABANDONED).storedLinks.historyItemParent).toBeUndefined()
    expect(show(INTERRUPTED).storedLinks).toMatchObject({ status: 'interrupted', historyItemParent: ARCHITECT })
    expect(show(ORCHESTRATOR).storedLinks).toMatchObject({ status: 'completed', childIds: [ABANDONED, RECOVERED] })
    expect(run(['show', ABANDONED, '--tasks-dir', zoo])).toContain('status     interrupted (history_item.json)')
    const item = readJson<any>(path.join(zoo, ORCHESTRATOR, 'history_item.json'))
    expect(item.completionResultSummary).toBe('Task completed (recovered after interruption)')
  })

  it('diagnose says its _index.json is stale and ignored, without asking to regenerate it', () => {
    // With our cache current, nothing is wrong with the store: the stale index is no warning.
    run(['cache', 'build', '--tasks-dir', zoo])
    const r = JSON.parse(run(['diagnose', '--tasks-dir', zoo, '--json']))
    expect(r.status).toBe('OK')
    const [l] = r.locations
    expect(l).toMatchObject({ taskCount: 7, historyIndexEntries: 1, historyIndexStale: true })
    expect(l.reasons).toContainEqual(expect.objectContaining({ status: 'OK', message: expect.stringContaining('stale and ignored') }))
    expect(l.reasons.filter((x: any) => x.status !== 'OK' && x.message.includes('_index.json'))).toEqual([])
  })
})

describe('tasks imported from Roo Code, in both folders', () => {
  const both = () => ['--tasks-dir', roo, '--tasks-dir', zoo]

  it('are one task each in the trees: shown from the newer copy, the other named', () => {
    const tree = json(['tree', ...both()])
    const [r, z] = tree.stores
    expect(r.tasksDir).toBe(roo)
    expect(r.roots).toEqual([])
    expect(r.shownElsewhere).toBe(2)
    const nodes = walk(z.roots)
    const continued = nodes.find((n) => n.taskId === CONTINUED)
    const untouched = nodes.find((n) => n.taskId === UNTOUCHED)
    expect(continued.alsoIn).toEqual([{ tasksDir: roo, host: 'roo', path: path.join(roo, CONTINUED), differs: true }])
    expect(untouched.alsoIn).toEqual([{ tasksDir: roo, host: 'roo', path: path.join(roo, UNTOUCHED), differs: false }])
    // The continued copy is the one shown: its later messages are there.
    expect(continued.messageCount).toBe(5)
    const ids = [...walk(r.roots), ...nodes].map((n) => n.taskId)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toHaveLength(7)
    const text = run(['tree', ...both()])
    expect(text).toContain('2 shown from a newer copy in another store')
    expect(text).toContain(`also in roo (${path.join(roo, CONTINUED)}): an older copy that differs`)
    // A task found by id in both folders is the newer copy's.
    expect(json(['tree', CONTINUED, ...both()]).stores.map((s: any) => s.tasksDir)).toEqual([zoo])
    expect(json(['show', CONTINUED.slice(0, 13), ...both()]).tasksDir).toBe(zoo)
  })

  it('are counted once by usage, from the newer copy', () => {
    const all = json(['usage', 'tasks', ...both(), '--cost', 'recorded'])
    expect(all.rows.map((x: any) => x.key).sort()).toEqual([ABANDONED, ARCHITECT, CONTINUED, INTERRUPTED, ORCHESTRATOR, RECOVERED, UNTOUCHED].sort())
    const want = (store: string, id: string) => readJson<any>(path.join(fixtures, store, 'expected', `${id}.json`)).totalCost
    const row = (id: string) => all.rows.find((x: any) => x.key === id)
    expect(row(CONTINUED).cost).toBeCloseTo(want('zoo-code-3.80', CONTINUED), 12)
    expect(row(CONTINUED).cost).toBeGreaterThan(want('roo-code-3.52', CONTINUED))
  })

  it('are found once by search, the other copy named', () => {
    const indexDir = path.join(work, 'index')
    run(['index', ...both(), '--index-dir', indexDir, '--embedder', 'none'])
    const found = json(['search', 'X-Total-Count pagination clients', ...both(), '--index-dir', indexDir, '-n', '10'])
    const hits = found.results.filter((t: any) => t.taskId === CONTINUED)
    expect(hits).toHaveLength(1)
    expect(hits[0].alsoIn).toEqual([{ tasksDir: roo, host: 'roo', path: path.join(roo, CONTINUED), differs: true }])
  })

  describe('over MCP', () => {
    let client: Client

    beforeAll(async () => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', ...both()], env: env as Record<string, string>, cwd: work, stderr: 'pipe' })
      client = new Client({ name: 'roo-state-zoo-test', version: '1.0.0' })
      await client.connect(transport)
    })

    afterAll(async () => {
      await client?.close()
    })

    it('list_tasks lists each task once, with the other copy named', async () => {
      const r = await client.callTool({ name: 'list_tasks', arguments: {} })
      const content = r.content as Array<{ text: string }>
      expect(r.isError).toBeFalsy()
      const list = JSON.parse(content[0].text)
      expect(list.total).toBe(7)
      const ids = list.tasks.map((t: any) => t.taskId)
      expect(new Set(ids).size).toBe(7)
      const continued = list.tasks.find((t: any) => t.taskId === CONTINUED)
      expect(list.stores[continued.store]).toBe(zoo)
      expect(continued).toMatchObject({ alsoIn: [{ tasksDir: roo, differs: true }] })
    })
  })

  it("the web view's pages mark the copy and name the other", async () => {
    const { ServeData } = await cliModule('serve/data.mjs')
    const data = await ServeData.open({ tasksDirs: [roo, zoo], cacheDir: path.join(work, 'serve-cache') })
    const stores = data.stores()
    const at = (dir: string) => stores.findIndex((s: any) => s.tasksDir === dir)
    const q = { page: 1, pageSize: 50 }
    const rooList = data.list(at(roo), q)
    expect(rooList.items.map((s: any) => [s.taskId, s.shownIn]).sort()).toEqual([
      [CONTINUED, zoo],
      [UNTOUCHED, zoo],
    ])
    const zooTree = data.treePage(at(zoo), q)
    const continued = walk(zooTree.roots).find((n: any) => n.taskId === CONTINUED)
    expect(continued.alsoIn).toEqual([{ tasksDir: roo, host: 'roo', path: path.join(roo, CONTINUED), differs: true }])
    expect(walk(zooTree.roots).find((n: any) => n.taskId === ABANDONED).abandonedBy).toEqual([ORCHESTRATOR])
    // A task page opens the newer copy.
    const page = await data.task(CONTINUED)
    expect(page.tasksDir).toBe(zoo)
    expect(page.alsoIn).toHaveLength(1)
    const { taskPage } = await cliModule('serve/views.mjs')
    const html = String(taskPage('/t/', await data.task(ABANDONED)))
    expect(html).toContain('<dd id="status"')
    expect(html).toContain('>interrupted</dd>')
  })
})
