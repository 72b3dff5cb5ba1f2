import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { core, repoRoot, tempDir } from './helpers'

// Storage discovery, the skeleton cache and the maintenance tools through the binding. The Rust
// suites (crates/store/tests) cover fake homes of every OS, state.vscdb, concurrency, failure
// injection and the property test; here: the JS surface, its codes, and byte-identity of what is
// written for the extension with JSON.stringify.

const fixtures = path.join(repoRoot, 'fixtures', 'stores')
const STORES = ['claude-dev-2024', 'damaged', 'history-item-v3.50', 'native-tools-v3.45', 'stack-era-v3.20', 'v2-wrapper']

function storeFrom(names: string[], root = tempDir('roo-store-')): { root: string; tasks: string } {
  const tasks = path.join(root, 'rooveterinaryinc.roo-cline', 'tasks')
  fs.mkdirSync(tasks, { recursive: true })
  for (const n of names) fs.cpSync(path.join(fixtures, n, 'tasks'), tasks, { recursive: true })
  return { root, tasks }
}

function taskIds(tasks: string): string[] {
  return fs
    .readdirSync(tasks)
    .filter((n) => !n.startsWith('_') && !n.startsWith('.') && fs.statSync(path.join(tasks, n)).isDirectory())
    .sort()
}

function touch(file: string, seconds: number) {
  const st = fs.statSync(file)
  const t = new Date(st.mtimeMs + seconds * 1000)
  fs.utimesSync(file, t, t)
}

let work: string
let cacheDir: string
const savedEnv = { ...process.env }

beforeAll(() => {
  work = tempDir('roo-store-js-')
  cacheDir = path.join(work, 'cache')
  // Never touch the real cache of the machine running the tests.
  process.env.ROO_STATE_CACHE_DIR = path.join(work, 'env-cache')
})

afterAll(() => {
  process.env = savedEnv
  fs.rmSync(work, { recursive: true, force: true })
})

describe('discoverStorage', () => {
  it('finds stores given as extra roots and through ROO_STATE_STORAGE', async () => {
    const a = storeFrom(['history-item-v3.50'], path.join(work, 'disc-a'))
    const b = storeFrom(['stack-era-v3.20'], path.join(work, 'disc-b'))
    const found = await core.discoverStorage({ extraRoots: [path.dirname(a.tasks)] })
    const loc = found.locations.find((l) => l.tasksDir === a.tasks)
    expect(loc).toBeDefined()
    expect(loc!.kind).toBe('extra')
    expect(loc!.host).toBe('rooveterinaryinc.roo-cline')
    expect(loc!.source).toBe('roo')
    expect(loc!.taskCount).toBe(4)
    expect(loc!.sizeBytes).toBeGreaterThan(0)
    expect(loc!.hasHistoryIndex).toBe(true)

    process.env.ROO_STATE_STORAGE = [a.root, b.tasks].join(path.delimiter)
    try {
      const env = await core.discoverStorage({ measureSize: false })
      expect(env.locations.map((l) => l.tasksDir)).toEqual([a.tasks, b.tasks])
      expect(env.locations.every((l) => l.kind === 'env' && l.sizeBytes === null)).toBe(true)
    } finally {
      delete process.env.ROO_STATE_STORAGE
    }
  })
})

describe('findTask', () => {
  it('takes an exact id, or a prefix in any case that one task folder starts with, across stores', async () => {
    const v350 = storeFrom(['history-item-v3.50'])
    const stack = storeFrom(['stack-era-v3.20'])
    const dirs = [v350.tasks, stack.tasks]
    const root = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'
    expect(await core.findTask(dirs, root)).toEqual({ taskId: root, tasksDir: v350.tasks, taskDir: path.join(v350.tasks, root) })
    expect((await core.findTask(dirs, '019CD6CE-1C')).taskId).toBe(root)
    const other = taskIds(stack.tasks)[0]
    expect(await core.findTask(dirs, other.slice(0, 12))).toEqual({ taskId: other, tasksDir: stack.tasks, taskDir: path.join(stack.tasks, other) })
    // The index and folders starting with `_` or `.` are not tasks.
    fs.mkdirSync(path.join(v350.tasks, '.019cd6-leftover'))
    await expect(core.findTask(dirs, '_index.json')).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' })
    await expect(core.findTask(dirs, '.019cd6')).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' })
    fs.rmSync(v350.root, { recursive: true, force: true })
    fs.rmSync(stack.root, { recursive: true, force: true })
  })

  it('rejects an ambiguous prefix with every candidate, and a missing id with the stores it looked in', async () => {
    const v350 = storeFrom(['history-item-v3.50'])
    const ids = taskIds(v350.tasks).filter((id) => id.startsWith('019cd6'))
    expect(ids.length).toBeGreaterThan(1)
    const ambiguous = await core.findTask([v350.tasks], '019cd6').catch((e) => e)
    expect(ambiguous.code).toBe('AMBIGUOUS_TASK_ID')
    expect(ambiguous.message).toBe(`"019cd6" is the start of ${ids.length} task ids: ${ids.join(', ')}.`)
    expect(ambiguous.details).toEqual({ candidates: ids })
    const missing = await core.findTask([v350.tasks, path.join(v350.root, 'nowhere')], 'zz').catch((e) => e)
    expect(missing.code).toBe('TASK_NOT_FOUND')
    expect(missing.message).toBe(`No task "zz" in the 2 stores (${v350.tasks}, ${path.join(v350.root, 'nowhere')}).`)
    expect(missing.details).toBeUndefined()
    fs.rmSync(v350.root, { recursive: true, force: true })
  })
})

describe('skeleton cache', () => {
  it('builds, reuses, re-parses only what changed and serves from the cache', async () => {
    const { tasks } = storeFrom(['history-item-v3.50', 'native-tools-v3.45', 'stack-era-v3.20'], path.join(work, 'c1'))
    const ids = taskIds(tasks)
    const progress: number[] = []
    const cold = await core.buildSkeletonCache({ tasksDir: tasks, cacheDir, onProgress: (p) => progress.push(p.done) })
    expect(cold.built).toBe(ids.length)
    expect(cold.stores[0].written).toBe(true)
    expect(cold.stores[0].hierarchy?.tasks).toBe(ids.length)

    const warm = await core.buildSkeletonCache({ tasksDir: tasks, cacheDir })
    expect([warm.built, warm.reused, warm.stores[0].written]).toEqual([0, ids.length, false])

    touch(path.join(tasks, ids[1], 'ui_messages.json'), 5)
    fs.rmSync(path.join(tasks, ids[0]), { recursive: true })
    const after = await core.buildSkeletonCache({ locations: [{ tasksDir: tasks }], cacheDir })
    expect([after.built, after.reused, after.removed]).toEqual([1, ids.length - 2, 1])

    const loaded = await core.loadSkeletons({ cacheDir, tasksDir: tasks })
    expect(loaded.skeletons.map((s) => s.taskId).sort()).toEqual(ids.slice(1))
    expect(loaded.stores[0].served).toBe(ids.length - 1)
    const ws = loaded.skeletons.find((s) => s.metadata.workspace)!.metadata.workspace!
    const inWs = loaded.skeletons.filter((s) => s.metadata.workspace === ws).length
    const filtered = await core.loadSkeletons({ cacheDir, workspace: ws.toUpperCase() + '/' })
    expect(filtered.skeletons.length).toBe(inWs)
    // Stored links come back with their evidence.
    expect(loaded.skeletons.some((s) => s.parentTaskId && s.parentEvidence)).toBe(true)
  })

  it('uses ROO_STATE_CACHE_DIR when no cacheDir is given', async () => {
    const { tasks } = storeFrom(['v2-wrapper'], path.join(work, 'c2'))
    const r = await core.buildSkeletonCache({ tasksDir: tasks })
    expect(r.stores[0].cacheFile.startsWith(process.env.ROO_STATE_CACHE_DIR!)).toBe(true)
  })

  it('rejects with stable codes', async () => {
    await expect(core.buildSkeletonCache({ tasksDir: path.join(work, 'missing'), cacheDir })).rejects.toMatchObject({
      code: 'INVALID_PATH',
    })
    const { root, tasks } = storeFrom(['v2-wrapper'], path.join(work, 'c3'))
    await expect(
      core.buildSkeletonCache({ tasksDir: tasks, cacheDir: path.join(root, 'rooveterinaryinc.roo-cline', 'x') }),
    ).rejects.toMatchObject({ code: 'INVALID_CACHE_DIR' })
    const ac = new AbortController()
    const pending = core.buildSkeletonCache({ tasksDir: tasks, cacheDir, forceRebuild: true, signal: ac.signal })
    ac.abort()
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' })
    await expect(core.buildSkeletonCache({ locations: [42 as unknown as string], cacheDir })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    })
  })
})

describe('diagnoseRooState', () => {
  it('reports sizes by kind, recent tasks and the cache state', async () => {
    const { tasks } = storeFrom(['history-item-v3.50', 'damaged'], path.join(work, 'd1'))
    const ids = taskIds(tasks)
    fs.mkdirSync(path.join(tasks, ids[0], 'checkpoints', '.git'), { recursive: true })
    fs.writeFileSync(path.join(tasks, ids[0], 'checkpoints', '.git', 'pack'), Buffer.alloc(2048))
    const report = await core.diagnoseRooState({ tasksDir: tasks, cacheDir })
    expect(report.status).toBe('WARNING')
    const l = report.locations[0]
    expect(l.taskCount).toBe(ids.length)
    expect(l.recentTasks.length).toBe(10)
    expect(l.sizes.checkpointBytes).toBe(2048)
    expect(l.sizes.totalBytes).toBe(l.sizes.conversationBytes + l.sizes.checkpointBytes + l.sizes.otherBytes)
    expect(l.cache.exists).toBe(false)
    expect(report.reasons.some((r) => r.message.includes('buildSkeletonCache'))).toBe(true)
    const missing = await core.diagnoseRooState({ tasksDir: path.join(work, 'nowhere', 'tasks'), cacheDir })
    expect(missing.status).toBe('ERROR')
  })
})

describe('rebuildRooStateFromTasks', () => {
  it('writes _index.json and history_item.json files byte-identical to JSON.stringify', async () => {
    const { tasks } = storeFrom(STORES, path.join(work, 'r1'))
    fs.rmSync(path.join(tasks, '_index.json'))
    const before = new Map(
      taskIds(tasks)
        .filter((id) => fs.existsSync(path.join(tasks, id, 'history_item.json')))
        .map((id) => [id, fs.readFileSync(path.join(tasks, id, 'history_item.json'))]),
    )

    const dry = await core.rebuildRooStateFromTasks({ tasksDir: tasks, cacheDir, regenerateExtensionIndex: true })
    expect(dry.dryRun).toBe(true)
    expect(dry.extensionIndex!.written).toEqual([])
    expect(fs.existsSync(path.join(tasks, '_index.json'))).toBe(false)

    const real = await core.rebuildRooStateFromTasks({
      tasksDir: tasks,
      cacheDir,
      regenerateExtensionIndex: true,
      dryRun: false,
    })
    expect(real.cacheRebuilt).toBe(true)
    expect(real.workspaces.length).toBeGreaterThan(1)
    const ix = real.extensionIndex!
    expect(ix.historyItemsCreated.length).toBeGreaterThan(5)
    for (const id of ix.historyItemsCreated) {
      const file = path.join(tasks, id, 'history_item.json')
      const text = fs.readFileSync(file, 'utf8')
      expect(text).toBe(JSON.stringify(JSON.parse(text)))
      const read = await core.readHistoryItem(file)
      expect(read.value?.id).toBe(id)
      expect(read.diagnostics.filter((d) => d.severity !== 'info')).toEqual([])
      const keys = Object.keys(JSON.parse(text))
      expect(keys.slice(0, 3).filter((k) => k !== 'rootTaskId' && k !== 'parentTaskId')[0]).toBe('id')
      expect(keys.indexOf('ts')).toBeLessThan(keys.indexOf('task'))
      expect(keys.indexOf('tokensIn')).toBeLessThan(keys.indexOf('totalCost'))
    }
    // Readable history items were left byte for byte as they were.
    for (const [id, bytes] of before) {
      if (ix.historyItemsReplaced.includes(id)) continue
      expect(fs.readFileSync(path.join(tasks, id, 'history_item.json')).equals(bytes)).toBe(true)
    }
    const indexText = fs.readFileSync(path.join(tasks, '_index.json'), 'utf8')
    expect(indexText).toBe(JSON.stringify(JSON.parse(indexText)))
    const index = await core.readHistoryIndex(path.join(tasks, '_index.json'))
    expect(index.value?.version).toBe(1)
    expect(index.value?.entries.length).toBe(real.skeletons)
    const ts = index.value!.entries.map((e) => e.ts ?? 0)
    expect([...ts].sort((a, b) => b - a)).toEqual(ts)

    // A second run backs the index up before replacing it.
    const again = await core.rebuildRooStateFromTasks({ tasksDir: tasks, cacheDir, regenerateExtensionIndex: true, dryRun: false })
    expect(again.extensionIndex!.backups.length).toBe(1)
    expect(fs.readFileSync(again.extensionIndex!.backups[0], 'utf8')).toBe(indexText)
  })
})

describe('history item numbers', () => {
  it('are written as JavaScript writes them (1e-7, 0.30000000000000004, 0); figures past belief left out', async () => {
    const tasks = path.join(work, 'n1', 'rooveterinaryinc.roo-cline', 'tasks')
    const id = '019d0000-0000-7000-8000-000000000001'
    fs.mkdirSync(path.join(tasks, id), { recursive: true })
    const req = { request: 'go', tokensIn: 123456789, tokensOut: 0, cacheWrites: 1e-7, cacheReads: 0.0000015, cost: 0.1 + 0.2 }
    // More tokens than any request can count (1e10 of a kind): counted as a request, adds nothing.
    const pastBelief = { request: 'again', tokensIn: 1e21, tokensOut: 5, cost: 1 }
    const ui = [
      { ts: 1750000000000, type: 'say', say: 'text', text: '  Compute the numbers  ' },
      { ts: 1750000000100, type: 'say', say: 'api_req_started', text: JSON.stringify(req) },
      { ts: 1750000000150, type: 'say', say: 'api_req_started', text: JSON.stringify(pastBelief) },
      { ts: 1750000000200, type: 'say', say: 'completion_result', text: 'done' },
      { ts: 1750000000300, type: 'ask', ask: 'resume_completed_task' },
    ]
    fs.writeFileSync(path.join(tasks, id, 'ui_messages.json'), JSON.stringify(ui))
    const r = await core.rebuildRooStateFromTasks({ tasksDir: tasks, cacheDir, regenerateExtensionIndex: true, dryRun: false })
    expect(r.extensionIndex!.historyItemsCreated).toEqual([id])
    const text = fs.readFileSync(path.join(tasks, id, 'history_item.json'), 'utf8')
    const item = JSON.parse(text)
    expect(text).toBe(JSON.stringify(item))
    expect(item.task).toBe('Compute the numbers')
    expect(item.ts).toBe(1750000000200)
    expect(item.number).toBe(1)
    expect(item.status).toBe('completed')
    expect(text).toContain('"tokensIn":123456789,')
    expect(text).toContain('"tokensOut":0,')
    expect(text).toContain('"cacheWrites":1e-7')
    expect(text).toContain('"cacheReads":0.0000015')
    expect(text).toContain('"totalCost":0.30000000000000004')
    expect(Object.keys(item)).toEqual([
      'id', 'number', 'ts', 'task', 'tokensIn', 'tokensOut', 'cacheWrites', 'cacheReads', 'totalCost', 'size', 'status',
    ])
  })
})

describe('cleanupObsoleteCheckpoints', () => {
  it('frees checkpoint data only, dry run first', async () => {
    const { tasks } = storeFrom(['stack-era-v3.20'], path.join(work, 'k1'))
    const ids = taskIds(tasks)
    const conv = new Map<string, Buffer>()
    for (const id of ids) {
      fs.mkdirSync(path.join(tasks, id, 'checkpoints', '.git'), { recursive: true })
      fs.writeFileSync(path.join(tasks, id, 'checkpoints', '.git', 'objects'), Buffer.alloc(1000))
      for (const f of fs.readdirSync(path.join(tasks, id))) {
        const p = path.join(tasks, id, f)
        if (fs.statSync(p).isFile()) conv.set(p, fs.readFileSync(p))
      }
    }
    const dry = await core.cleanupObsoleteCheckpoints({ tasksDir: tasks, olderThanDays: 0, keepLast: 1 })
    expect(dry.dryRun).toBe(true)
    expect(dry.tasksAffected).toBe(ids.length - 1)
    expect(dry.bytes).toBe(1000 * (ids.length - 1))
    expect(ids.every((id) => fs.existsSync(path.join(tasks, id, 'checkpoints')))).toBe(true)

    const real = await core.cleanupObsoleteCheckpoints({ tasksDir: tasks, olderThanDays: 0, keepLast: 1, dryRun: false })
    expect(real.bytes).toBe(dry.bytes)
    expect(ids.filter((id) => fs.existsSync(path.join(tasks, id, 'checkpoints'))).length).toBe(1)
    for (const [p, bytes] of conv) expect(fs.readFileSync(p).equals(bytes)).toBe(true)
  })
})

describe('migrateTasksDir', () => {
  it('moves a store, writes a marker, and is idempotent', async () => {
    const { tasks } = storeFrom(['native-tools-v3.45'], path.join(work, 'm1'))
    const ids = taskIds(tasks)
    const to = path.join(work, 'm2', 'tasks')
    const dry = await core.migrateTasksDir(tasks, to, { dryRun: true })
    expect(dry.files).toBeGreaterThan(0)
    expect(fs.existsSync(to)).toBe(false)
    const r = await core.migrateTasksDir(tasks, to, { forceCopy: true })
    expect(r.method).toBe('copy')
    expect(taskIds(to)).toEqual(ids)
    expect(fs.existsSync(tasks)).toBe(false)
    expect(fs.existsSync(path.join(to, '.roo-state-migration.json'))).toBe(true)
    const again = await core.migrateTasksDir(tasks, to)
    expect(again.alreadyDone).toBe(true)
    await expect(core.migrateTasksDir(path.join(work, 'none'), path.join(work, 'none2'))).rejects.toMatchObject({
      code: 'INVALID_PATH',
    })
  })
})
