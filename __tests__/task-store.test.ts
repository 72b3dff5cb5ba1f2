// The TaskStore handle through the binding: open (cache and no cache), queries, refresh appending
// to the cache, and no size limit at the boundary: 60 000 generated tasks for open, refresh, tree,
// list, the bulk transfer and the array-taking hierarchy functions.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import vm from 'node:vm'
import { core, repoRoot, tempDir } from './helpers'

const fixtures = (name: string) => path.join(repoRoot, 'fixtures', 'stores', name, 'tasks')

describe('TaskStore on the fixtures', () => {
  let cacheDir: string
  beforeAll(() => {
    cacheDir = tempDir('roo-task-store-cache-')
  })
  afterAll(() => fs.rmSync(cacheDir, { recursive: true, force: true }))

  it('opens from the cache as from a scan and answers queries in place', async () => {
    const tasksDir = fixtures('history-item-v3.50')
    const cached = await core.TaskStore.open({ tasksDir, cacheDir })
    const scanned = await core.TaskStore.open({ tasksDir, noCache: true })
    const strip = (h: ReturnType<typeof cached.headers>) => h.map(s => [s.taskId, s.parentTaskId ?? null, s.metadata.title])
    expect(strip(cached.headers())).toEqual(strip(scanned.headers()))
    expect(cached.size).toBe(4)
    expect(cached.stores()).toEqual([{ tasksDir: fs.realpathSync(tasksDir), tasks: 4 }])
    const root = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'
    expect(cached.get('019cd6ce-1c')?.taskId).toBe(root)
    expect(cached.get('nothing-like-it')).toBeNull()
    expect(() => cached.get('019cd6')).toThrow(/several tasks start with 019cd6/)
    const tree = cached.tree()
    expect(tree.map(n => n.taskId)).toEqual([root])
    expect(tree[0].children.length).toBe(2)
    expect(cached.tree({ rootId: '019cd6ce-1c', maxDepth: 0 })[0].children).toEqual([])
    expect(cached.descendants(root).length).toBe(3)
    for (const d of cached.descendants(root)) expect(cached.ancestors(d)).toContain(root)
    const page = cached.list({ offset: 1, limit: 2 })
    expect(page.total).toBe(4)
    expect(page.items.map(s => s.taskId)).toEqual(cached.list().items.slice(1, 3).map(s => s.taskId))
    expect(cached.list({ rootsOnly: true }).total).toBe(1)
    expect(cached.list({ workspace: '/HOME/dev/projets/meteo-cli/' }).total).toBe(4)
    expect(cached.list({ host: 'cline' }).total).toBe(0)
    expect(cached.list({ workspace: 'Meteo-CLI' }).total).toBe(4)
    expect(() => cached.list({ sort: 'size' as 'title' })).toThrow(/sort must be/)
    expect(() => cached.list({ order: 'up' as 'asc' })).toThrow(/order must be asc or desc/)
    // Every key in its own order, and reversed by `order`.
    for (const sort of ['lastActivity', 'createdAt', 'messageCount', 'actionCount', 'totalSize', 'totalCost'] as const) {
      const value = (s: (typeof page.items)[number]) =>
        sort === 'totalCost' ? s.apiTotals.totalCost
        : sort === 'lastActivity' ? s.lastActivityMs ?? 0
        : sort === 'createdAt' ? s.createdAtMs ?? 0
        : s.metadata[sort]
      const asc = cached.list({ sort, order: 'asc' }).items.map(value)
      expect(asc, sort).toEqual([...asc].sort((x, y) => x - y))
      expect(cached.list({ sort }).items.map(value), sort).toEqual(cached.list({ sort, order: 'desc' }).items.map(value))
    }
    expect(core.workspaceMatches('/home/me/shop', 'Shop')).toBe(true)
    expect(core.workspaceMatches('/home/me/shop', '/home/me')).toBe(false)
    expect(JSON.parse(cached.headersJson())).toEqual(cached.headers())
    // A list view's headers: only the fields asked for (and the id), the same values.
    const fields = ['metadata', 'parentTaskId', 'isCompleted'] as const
    const pick = (header: object) => {
      const s = header as Record<string, unknown>
      return Object.fromEntries(['taskId', ...fields].filter((k) => k in s).map((k) => [k, s[k]]))
    }
    expect(cached.headers({ fields: [...fields] })).toEqual(cached.headers().map(pick))
    expect(JSON.parse(cached.headersJson({ fields: [...fields] }))).toEqual(cached.headers().map(pick))
    expect(cached.list({ sort: 'title', fields: [...fields] }).items).toEqual(cached.list({ sort: 'title' }).items.map(pick))
    expect(() => cached.headers({ fields: ['instructions' as 'instruction'] })).toThrow(/instructions is not a field/)
    expect(() => cached.list({ fields: ['nope' as 'taskId'] })).toThrow(/nope is not a field/)
  })

  it('builds trees whose nodes carry dates, counts, completion and a missing parent, in creation order', async () => {
    const work = tempDir('roo-task-store-tree-')
    const tasksDir = path.join(work, 'tasks')
    fs.cpSync(fixtures('history-item-v3.50'), tasksDir, { recursive: true })
    const root = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'
    const full = await core.TaskStore.open({ tasksDir, noCache: true })
    const byId = new Map(full.headers().map((s) => [s.taskId, s]))
    type Node = ReturnType<typeof full.tree>[number]
    const walk = (nodes: Node[], visit: (n: Node) => void) => nodes.forEach((n) => (visit(n), walk(n.children, visit)))
    const tree = full.tree()
    let seen = 0
    walk(tree, (n) => {
      const s = byId.get(n.taskId)
      expect(n.lastActivity).toBe(s?.metadata.lastActivity)
      expect(n.messageCount).toBe(s?.metadata.messageCount)
      expect(n.actionCount).toBe(s?.metadata.actionCount)
      expect(n.isCompleted).toBe(s?.isCompleted)
      expect(n.parentTaskId).toBe(s?.parentTaskId)
      expect(n.parentMissing).toBeUndefined()
      const created = n.children.map((c) => `${c.createdAt} ${c.taskId}`)
      expect(created).toEqual([...created].sort())
      seen += 1
    })
    expect(seen).toBe(4)
    // The same nodes from the array-taking function.
    expect(core.getTaskTree(full.headers())).toEqual(tree)
    // Without the root's folder, its child is a top node whose parent is not in the store.
    fs.rmSync(path.join(tasksDir, root), { recursive: true })
    const cut = await core.TaskStore.open({ tasksDir, noCache: true })
    const orphan = cut.tree().find((n) => n.parentTaskId === root)
    expect(orphan?.parentMissing).toBe(true)
    expect(orphan?.depth).toBe(0)
    expect(core.getTaskTree(cut.headers())).toEqual(cut.tree())
    fs.rmSync(work, { recursive: true, force: true })
  })

  it('serves the kept tree again and again across collections and refreshes', async () => {
    // V8 may read the kept tree text in place (an external string holding a reference to it):
    // collected strings release their reference, a refresh replaces the text, and each tree
    // reads the same.
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc') as () => void
    const work = tempDir('roo-task-store-gc-')
    const tasksDir = path.join(work, 'tasks')
    fs.cpSync(fixtures('history-item-v3.50'), tasksDir, { recursive: true })
    const store = await core.TaskStore.open({ tasksDir, noCache: true })
    const first = JSON.stringify(store.tree())
    for (let i = 0; i < 40; i++) {
      expect(JSON.stringify(store.tree())).toBe(first)
      if (i % 8 === 0) {
        gc()
        await store.refresh()
      }
    }
    fs.rmSync(work, { recursive: true, force: true })
  })

  it('refreshes one changed task alone and appends it to the cache', async () => {
    const work = tempDir('roo-task-store-')
    const tasksDir = path.join(work, 'tasks')
    fs.cpSync(fixtures('stack-era-v3.20'), tasksDir, { recursive: true })
    const store = await core.TaskStore.open({ tasksDir, cacheDir })
    expect((await store.refresh()).cache).toBe('none')
    const id = store.list({ sort: 'title' }).items[0].taskId
    const ui = path.join(tasksDir, id, 'ui_messages.json')
    const msgs = JSON.parse(fs.readFileSync(ui, 'utf8')) as Array<{ text?: string }>
    msgs[0].text = 'A brand new request\n\nwith details'
    fs.writeFileSync(ui, JSON.stringify(msgs))
    const later = new Date(Date.now() + 5000)
    fs.utimesSync(ui, later, later)
    const r = await store.refresh()
    expect([r.changed, r.added, r.removed, r.cache]).toEqual([1, 0, 0, 'appended'])
    expect(store.get(id)?.instruction).toBe('A brand new request\n\nwith details')
    const reopened = await core.TaskStore.open({ tasksDir, cacheDir })
    expect(reopened.get(id)?.instruction).toBe('A brand new request\n\nwith details')
    fs.rmSync(work, { recursive: true, force: true })
  })

  it('reports progress while it opens and stops on an aborted signal', async () => {
    const tasksDir = fixtures('native-tools-v3.45')
    const names = fs.readdirSync(tasksDir).filter(n => core.isTaskName(n) && fs.statSync(path.join(tasksDir, n)).isDirectory())
    for (const options of [{ noCache: true }, { cacheDir: tempDir('roo-task-store-progress-') }]) {
      const seen: Array<{ done: number; total: number }> = []
      const store = await core.TaskStore.open({ tasksDir, ...options, onProgress: p => seen.push(p) })
      expect(seen.length).toBeGreaterThan(0)
      expect(seen.every(p => p.total === names.length)).toBe(true)
      expect(Math.max(...seen.map(p => p.done))).toBe(names.length)
      expect(store.size).toBeGreaterThan(0)
    }
    const aborted = AbortSignal.abort()
    await expect(core.TaskStore.open({ tasksDir, noCache: true, signal: aborted })).rejects.toMatchObject({ code: 'ABORTED' })
    expect(core.isTaskName('_index.json')).toBe(false)
    expect(core.isTaskName('.DS_Store')).toBe(false)
    expect(core.isTaskName('019cd6ce-1c9e')).toBe(true)
  })

  it('refuses a file, a task folder or an empty path with what it is', async () => {
    const file = path.join(fixtures('history-item-v3.50'), '_index.json')
    await expect(core.TaskStore.open({ tasksDir: file, noCache: true })).rejects.toThrow(/is a file, not a tasks folder/)
    await expect(core.TaskStore.open({ tasksDir: '', noCache: true })).rejects.toThrow(/no tasks folder was given/)
  })
})

describe('60 000 tasks through the boundary', () => {
  const N = 60_000
  let work: string
  let tasksDir: string
  beforeAll(() => {
    work = tempDir('roo-task-store-60k-')
    tasksDir = path.join(work, 'tasks')
    fs.mkdirSync(tasksDir)
    const t0 = 1_770_000_000_000
    for (let i = 0; i < N; i++) {
      const id = `t${String(i).padStart(6, '0')}`
      const dir = path.join(tasksDir, id)
      fs.mkdirSync(dir)
      const ts = t0 + i * 1000
      fs.writeFileSync(
        path.join(dir, 'ui_messages.json'),
        JSON.stringify([
          { ts, type: 'say', say: 'text', text: `Task ${i}: check item ${i % 97}` },
          { ts: ts + 10, type: 'say', say: 'completion_result', text: 'done' },
        ]),
      )
      // Every tenth task is a root; the nine after it are its children (a stored link).
      if (i % 10 !== 0) {
        const parent = `t${String(i - (i % 10)).padStart(6, '0')}`
        fs.writeFileSync(path.join(dir, 'task_metadata.json'), JSON.stringify({ files_in_context: [], parentTaskId: parent }))
      }
    }
  }, 600_000)
  // Removing 60 000 folders takes as long as writing them on a busy disk.
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }), 600_000)

  it('opens, refreshes, lists, builds the tree and hands every header over', async () => {
    const cacheDir = tempDir('roo-task-store-60k-cache-')
    const store = await core.TaskStore.open({ tasksDir, cacheDir })
    expect(store.size).toBe(N)
    const tree = store.tree()
    expect(tree.length).toBe(N / 10)
    expect(tree.every(n => n.children.length === 9)).toBe(true)
    const page = store.list({ limit: 50, offset: 100 })
    expect(page.total).toBe(N)
    expect(page.items.length).toBe(50)
    expect(page.items[0].taskId).toBe(`t${String(N - 101).padStart(6, '0')}`)
    const headers = store.headers()
    expect(headers.length).toBe(N)
    expect(headers[N - 1].parentTaskId).toBe(`t${String(N - 10).padStart(6, '0')}`)
    // One new task: parsed alone, appended.
    const extra = path.join(tasksDir, 't999999')
    fs.mkdirSync(extra)
    fs.writeFileSync(path.join(extra, 'ui_messages.json'), JSON.stringify([{ ts: 1_780_000_000_000, type: 'say', say: 'text', text: 'One more' }]))
    const r = await store.refresh()
    expect([r.added, r.changed, r.removed, r.cache]).toEqual([1, 0, 0, 'appended'])
    expect(store.size).toBe(N + 1)
    expect(store.list({ limit: 1 }).items[0].taskId).toBe('t999999')
    fs.rmSync(extra, { recursive: true })
    expect((await store.refresh()).removed).toBe(1)

    // The array-taking functions take the same 60 000 skeletons (no value-count limit).
    const linked = await core.reconstructHierarchy(headers)
    expect(linked.skeletons.length).toBe(N)
    expect(linked.metrics.linksBySource.taskMetadata).toBe(N - N / 10)
    expect(core.getTaskTree(headers).length).toBe(N / 10)
    expect(core.getDescendants(headers, 't000000').length).toBe(9)
    expect(core.getAncestors(headers, 't000009')).toEqual(['t000000'])
    fs.rmSync(cacheDir, { recursive: true, force: true })
  }, 600_000)
})
