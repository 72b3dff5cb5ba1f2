import { describe, it, expect, beforeAll, afterAll } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import type { Progress } from '../index.js'
import { core, haveShared, realTasks, repoRoot, shared, tempDir, readJson } from './helpers'

interface Labelled {
  tasksDirs: string[]
  minRecallAt5: Record<string, number>
  queries: { id: string; kind: string; query: string; expected: string[] }[]
}

const labelled = readJson<Labelled>(path.join(repoRoot, 'fixtures', 'search', 'queries.json'))

const SHOP_IMPL = '087ad417-9168-4209-8cd6-4f60a86fcd4f'
const SHOP_TESTS = 'd9a65d7d-6db9-422f-8608-12ab47219197'

/** The labelled stores include the real pair of ../shared. */
const sharedPresent = haveShared('search: the labelled stores (the real pair among them)', realTasks)

/** A labelled store's folder: `../shared/…` is the shared folder, anything else is in the repository. */
function storeDir(dir: string): string {
  return dir.startsWith('../shared/') ? path.join(shared, dir.slice('../shared/'.length)) : path.resolve(repoRoot, dir)
}

/** The first `count` fixture stores copied to a scratch folder (tests change them). */
function copyFixtures(dest: string, count = labelled.tasksDirs.length): string[] {
  return labelled.tasksDirs.slice(0, count).map((dir, i) => {
    const target = path.join(dest, `store${i}`, 'tasks')
    fs.cpSync(storeDir(dir), target, { recursive: true })
    return target
  })
}

function codeOf(err: unknown): string | undefined {
  return (err as { code?: string }).code
}

describe.skipIf(!sharedPresent)('semantic search (embedded store, no network)', () => {
  const work = tempDir('roo-search-')
  const cacheDir = path.join(work, 'index')
  let tasksDir: string[] = []

  beforeAll(() => {
    tasksDir = copyFixtures(path.join(work, 'tasks'))
  })

  afterAll(() => {
    core.closeSearchIndex(cacheDir)
    fs.rmSync(work, { recursive: true, force: true })
  })

  it('indexes every fixture task with visible progress', async () => {
    const seen: Progress[] = []
    const report = await core.indexTasks({ tasksDir, cacheDir, onProgress: (p) => seen.push(p) })
    expect(report.tasksSeen).toBe(28)
    expect(report.tasksIndexed).toBe(28)
    expect(report.chunksEmbedded).toBeGreaterThan(200)
    expect(report.chunksTotal).toBe(report.chunksEmbedded)
    expect(report.store.kind).toBe('edge')
    expect(report.store.collection).toBe('roo_tasks_semantic_index')
    // The default: the static model distilled from the local model when that is installed.
    expect(['static', 'none']).toContain(report.embedder.kind)
    // Progress is reported on the JS thread; wait for the last calls to land.
    await new Promise((r) => setTimeout(r, 50))
    expect(seen.length).toBeGreaterThan(0)
    const last = seen.at(-1)!
    expect(last).toMatchObject({ done: 28, total: 28, phase: 'finishing', chunksEmbedded: report.chunksEmbedded, etaMs: 0 })
    expect(last.elapsedMs).toBeGreaterThanOrEqual(0)
    const indexing = seen.filter((p) => p.phase === 'indexing')
    expect(indexing.length).toBeGreaterThan(0)
    // The estimate of the time left is there once something is done, and never negative.
    expect(indexing.filter((p) => p.done > 0).every((p) => typeof p.etaMs === 'number' && p.etaMs >= 0)).toBe(true)
  }, 300_000)

  it('finds the task by an identifier, with what a person needs to jump to it', async () => {
    const r = await core.searchTasksSemantic({ query: 'InvalidDiscountError', cacheDir })
    const top = r.results[0]
    expect(top.taskId).toBe(SHOP_IMPL)
    expect(top.title).toMatch(/discount codes/)
    expect(top.workspace).toBe('/home/dev/projects/shop')
    expect(top.lastActivity).toMatch(/^2025-06-19T/)
    expect(top.snippets.length).toBeGreaterThan(0)
    expect(top.snippets.some((s) => s.text.includes('InvalidDiscountError'))).toBe(true)
    expect(top.snippets.every((s) => s.timestamp.startsWith('2025-06-19'))).toBe(true)
    expect(r.mode).toBe(r.embedder.kind === 'none' ? 'lexical' : 'hybrid')
  })

  it('filters by workspace and date range', async () => {
    const ws = await core.searchTasksSemantic({ query: 'discount', workspace: 'shop', cacheDir })
    expect(ws.results.map((t) => t.workspace)).toEqual(Array(3).fill('/home/dev/projects/shop'))
    const dated = await core.searchTasksSemantic({
      query: 'build',
      dateRange: { startDate: '2024-10-01', endDate: '2024-10-03' },
      cacheDir,
    })
    expect(dated.results.length).toBeGreaterThan(0)
    for (const t of dated.results) for (const s of t.snippets) expect(s.timestamp).toMatch(/^2024-10-0[1-3]/)
  })

  it('keeps recall@5 on the labelled queries', async () => {
    let sum = 0
    let mode = 'lexical'
    for (const q of labelled.queries) {
      const r = await core.searchTasksSemantic({ query: q.query, cacheDir, limit: 5 })
      mode = r.mode
      const top = r.results.map((t) => t.taskId)
      sum += q.expected.filter((e) => top.includes(e)).length / q.expected.length
    }
    const recall = sum / labelled.queries.length
    console.log(`recall@5 through the binding (${mode}, ${labelled.queries.length} queries): ${recall.toFixed(3)}`)
    expect(labelled.queries.length).toBeGreaterThanOrEqual(30)
    expect(recall).toBeGreaterThanOrEqual(labelled.minRecallAt5[mode] ?? 0)
  }, 120_000)

  it('embeds nothing on an unchanged tree and only the touched task after a change', async () => {
    const again = await core.indexTasks({ tasksDir, cacheDir })
    expect([again.tasksIndexed, again.chunksEmbedded, again.chunksDeleted]).toEqual([0, 0, 0])
    expect(again.tasksUnchanged).toBe(28)

    const ui = path.join(tasksDir[4], SHOP_TESTS, 'ui_messages.json')
    const msgs = JSON.parse(fs.readFileSync(ui, 'utf8')) as { ts: number }[]
    msgs.push({ ts: msgs[msgs.length - 1].ts + 1000, type: 'say', say: 'user_feedback', text: 'Also test the expired coupon ZZTOP1999' } as never)
    fs.writeFileSync(ui, JSON.stringify(msgs))
    const changed = await core.indexTasks({ tasksDir, cacheDir })
    expect(changed.indexedTaskIds).toEqual([SHOP_TESTS])
    expect(changed.chunksEmbedded).toBeGreaterThanOrEqual(1)
    expect(changed.chunksEmbedded).toBeLessThanOrEqual(2)
    const found = await core.searchTasksSemantic({ query: 'ZZTOP1999', mode: 'lexical', cacheDir })
    // indexDir is the option's name; cacheDir, its older one, still reads the same index.
    const byNewName = await core.searchTasksSemantic({ query: 'ZZTOP1999', mode: 'lexical', indexDir: cacheDir })
    expect(byNewName.results.map(r => r.taskId)).toEqual(found.results.map(r => r.taskId))
    expect((await core.searchIndexStatus({ indexDir: cacheDir })).chunks).toBe((await core.searchIndexStatus({ cacheDir })).chunks)
    expect(found.results.map((t) => t.taskId)).toEqual([SHOP_TESTS])
  }, 300_000)

  it('reports the index status', async () => {
    const s = await core.searchIndexStatus({ cacheDir })
    expect(s.exists).toBe(true)
    expect(s.tasks).toBe(28)
    expect(s.chunks).toBeGreaterThan(200)
    expect(s.store.kind).toBe('edge')
    expect(typeof s.localModelAvailable).toBe('boolean')
  })
})

describe('search errors carry a code and a sentence', () => {
  it('rejects a search before any index', async () => {
    const dir = tempDir('roo-search-empty-')
    const err = await core.searchTasksSemantic({ query: 'x', cacheDir: dir }).catch((e) => e)
    expect(codeOf(err)).toBe('NOT_INDEXED')
    expect(String(err.message)).toContain('indexTasks')
  })

  it('rejects bad arguments', async () => {
    const dir = tempDir('roo-search-args-')
    expect(codeOf(await core.searchTasksSemantic({ query: 'x', cacheDir: dir, mode: 'fuzzy' as never }).catch((e) => e))).toBe('INVALID_ARGUMENT')
    expect(codeOf(await core.indexTasks({ tasksDir: path.join(dir, 'missing'), cacheDir: dir }).catch((e) => e))).toBe('INVALID_PATH')
    expect(
      codeOf(await core.indexTasks({ tasksDir: dir, cacheDir: dir, embedder: { kind: 'telepathy' } as never }).catch((e) => e)),
    ).toBe('INVALID_ARGUMENT')
  })

  it('refuses semantic mode on a lexical-only index, and the default mode still answers', async () => {
    const work = tempDir('roo-search-lex-')
    const tasksDir = copyFixtures(work, 2)
    const cacheDir = path.join(work, 'index')
    const store = { kind: 'memory' as const, path: path.join(cacheDir, 'mem.json') }
    const report = await core.indexTasks({ tasksDir, cacheDir, store, embedder: { kind: 'none' } })
    expect(report.embedder).toEqual({ kind: 'none', model: 'bm25', dimension: 0 })
    const err = await core.searchTasksSemantic({ query: 'dry run', cacheDir, store, mode: 'semantic' }).catch((e) => e)
    expect(codeOf(err)).toBe('SEMANTIC_UNAVAILABLE')
    const ok = await core.searchTasksSemantic({ query: 'dry run', cacheDir, store })
    expect(ok.mode).toBe('lexical')
    expect(ok.results[0].taskId).toBe('3cb47840-33af-4c5c-a4e2-e347c0183356')
    core.closeSearchIndex(cacheDir)
  })

  it.skipIf(!sharedPresent)('rejects with ABORTED when aborted', async () => {
    const work = tempDir('roo-search-abort-')
    const ctrl = new AbortController()
    const p = core.indexTasks({ tasksDir: copyFixtures(work), cacheDir: path.join(work, 'index'), embedder: { kind: 'none' }, signal: ctrl.signal })
    ctrl.abort()
    const err = await p.catch((e) => e)
    expect(codeOf(err)).toBe('ABORTED')
    // What was written before the abort is kept; the next run completes the index.
    const done = await core.indexTasks({ tasksDir: copyFixtures(work), cacheDir: path.join(work, 'index'), embedder: { kind: 'none' } })
    expect(done.tasksSeen).toBe(28)
    core.closeSearchIndex(path.join(work, 'index'))
  })
})
