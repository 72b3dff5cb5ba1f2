import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

// Hierarchy reconstruction through the N-API binding: the real pair by inference alone, the legacy
// engine's links beside ours on every fixture tree (diff table), and a generated store with known truth.

interface ParentEvidence {
  source: 'history_item' | 'child_ids' | 'task_metadata' | 'instruction_prefix'
  confidence: number
  matchedPrefix?: string
  newTaskTs?: number
  matchKind?: 'exact' | 'prefix'
  gapMs?: number
  conflicts?: string[]
}
interface Skeleton {
  taskId: string
  parentTaskId?: string
  rootTaskId?: string
  parentEvidence?: ParentEvidence
  [k: string]: unknown
}
interface HierarchyMetrics {
  tasks: number
  linksBySource: { historyItem: number; childIds: number; taskMetadata: number; instructionPrefix: number }
  roots: number
  orphans: number
  ambiguous: number
  cyclesBroken: number
  conflicts: number
  maxDepth: number
  elapsedMs: number
  issues: Array<{ kind: string; taskId: string; detail: string; candidates: string[] }>
}
interface TaskTreeNode {
  taskId: string
  depth: number
  parentEvidence?: ParentEvidence
  children: TaskTreeNode[]
}
interface HierarchyBinding {
  scanTasks(dir: string, options?: { includeSequence?: boolean }): Promise<{ skeletons: Skeleton[] }>
  reconstructHierarchy(
    skeletons: Skeleton[],
    options?: { workspaceFilter?: string; useStoredLinks?: boolean },
  ): Promise<{ skeletons: Skeleton[]; metrics: HierarchyMetrics }>
  getTaskTree(skeletons: Skeleton[], options?: { rootId?: string; workspace?: string; maxDepth?: number }): TaskTreeNode[]
  legacyHierarchyLinks(tasksDir: string): Promise<Array<{ childId: string; parentId: string }>>
}

const core = createRequire(import.meta.url)('../index.js') as HierarchyBinding

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, '..')
const shared = path.resolve(repoRoot, '..', 'shared')
const legacyTasks = path.join(shared, 'fixtures', 'legacy-tasks')
const realTasks = path.join(legacyTasks, 'real-tasks')
const PARENT = 'ac8aa7b4-319c-4925-a139-4f4adca81921'
const CHILD = 'bc93a6f7-cd2e-4686-a832-46e3cd14d338'

const short = (id?: string) => (id ? id.slice(0, 8) : '—')

async function ours(tasksDir: string, useStoredLinks: boolean) {
  const { skeletons } = await core.scanTasks(tasksDir, { includeSequence: false })
  return core.reconstructHierarchy(skeletons, { useStoredLinks })
}

function linkMap(skeletons: Skeleton[]): Map<string, string> {
  const m = new Map<string, string>()
  for (const s of skeletons) if (s.parentTaskId) m.set(s.taskId, s.parentTaskId)
  return m
}

type Row = { set: string; child: string; legacy: string; ours: string; verdict: string }

/** Links only in one engine, links that differ, and (optionally) agreement rows. */
function diffRows(set: string, legacy: Map<string, string>, mine: Map<string, string>, withSame = false): Row[] {
  const rows: Row[] = []
  const ids = [...new Set([...legacy.keys(), ...mine.keys()])].sort()
  for (const id of ids) {
    const a = legacy.get(id)
    const b = mine.get(id)
    const verdict = a && b ? (a === b ? 'same' : 'DIFFERENT') : a ? 'legacy only' : 'ours only'
    if (verdict !== 'same' || withSame) rows.push({ set, child: short(id), legacy: short(a), ours: short(b), verdict })
  }
  return rows
}

/** Every acyclic check, independent of the engine's own metrics. */
function assertNoCycles(skeletons: Skeleton[]) {
  const parent = linkMap(skeletons)
  for (const start of parent.keys()) {
    const seen = new Set<string>([start])
    let cur = parent.get(start)
    while (cur) {
      expect(seen.has(cur), `cycle through ${start}`).toBe(false)
      seen.add(cur)
      cur = parent.get(cur)
    }
  }
}

describe('hierarchy binding', () => {
  it('exposes reconstructHierarchy, getTaskTree and legacyHierarchyLinks', () => {
    expect(typeof core.reconstructHierarchy).toBe('function')
    expect(typeof core.getTaskTree).toBe('function')
    expect(typeof core.legacyHierarchyLinks).toBe('function')
  })
})

describe('the real pair', () => {
  it('links bc93a6f7 → ac8aa7b4 by inference alone, with evidence', async () => {
    const { skeletons, metrics } = await ours(realTasks, false)
    const child = skeletons.find(s => s.taskId === CHILD)
    expect(child?.parentTaskId).toBe(PARENT)
    expect(child?.rootTaskId).toBe(PARENT)
    expect(child?.parentEvidence?.source).toBe('instruction_prefix')
    expect(child?.parentEvidence?.confidence).toBeGreaterThanOrEqual(0.8)
    expect(typeof child?.parentEvidence?.newTaskTs).toBe('number')
    expect(metrics.linksBySource.instructionPrefix).toBe(1)
    expect(metrics.cyclesBroken).toBe(0)
    expect(metrics.maxDepth).toBe(1)
  })

  it('is a two-level tree', async () => {
    const { skeletons } = await ours(realTasks, false)
    const tree = core.getTaskTree(skeletons, {})
    expect(tree.map(n => n.taskId)).toEqual([PARENT])
    expect(tree[0].depth).toBe(0)
    expect(tree[0].children.map(n => n.taskId)).toEqual([CHILD])
    expect(tree[0].children[0].depth).toBe(1)
    expect(core.getTaskTree(skeletons, { rootId: CHILD }).map(n => n.taskId)).toEqual([CHILD])
    expect(core.getTaskTree(skeletons, { maxDepth: 0 })[0].children).toEqual([])
  })

  it('is found by the legacy engine too', async () => {
    const links = await core.legacyHierarchyLinks(realTasks)
    expect(links).toEqual([{ childId: CHILD, parentId: PARENT }])
  })
})

describe('legacy engine beside ours on the fixture trees', () => {
  const sets: Array<[string, string]> = [
    ['real-tasks', realTasks],
    ['controlled-hierarchy', path.join(legacyTasks, 'controlled-hierarchy')],
  ]
  const stores = path.join(repoRoot, 'fixtures', 'stores')
  if (fs.existsSync(stores)) {
    for (const name of fs.readdirSync(stores).sort()) {
      const dir = path.join(stores, name, 'tasks')
      if (fs.existsSync(dir)) sets.push([name, dir])
    }
  }
  const table: Row[] = []
  afterAll(() => {
    console.log('legacy (legacy prefixes, exact-trie lookup) vs ours (stored links ignored): every link')
    console.table(table)
  })

  for (const [name, dir] of sets) {
    it(`${name}: no cycles, stored links honoured, diff against legacy`, async () => {
      const legacy = new Map((await core.legacyHierarchyLinks(dir)).map(l => [l.childId, l.parentId] as const))
      const { skeletons, metrics } = await ours(dir, false)
      assertNoCycles(skeletons)
      expect(metrics.cyclesBroken).toBe(0)
      const mine = linkMap(skeletons)
      table.push(...diffRows(name, legacy, mine, true))
      // With stored links kept, every link the files store is honoured.
      const kept = await ours(dir, true)
      assertNoCycles(kept.skeletons)
      for (const s of kept.skeletons) {
        const stored = (s as { storedLinks?: { historyItemParent?: string } }).storedLinks?.historyItemParent
        if (stored && stored !== s.taskId) expect(s.parentTaskId).toBe(stored)
      }
    })
  }
})

describe('generated store with traps (roo-corpus), stored links stripped', () => {
  let dir = ''
  let truth: Map<string, string | undefined> = new Map()
  let available = true

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-hier-'))
    try {
      execFileSync(
        'cargo',
        ['run', '-q', '-p', 'roo-corpus', '--', '--out', dir, '--tasks', '400', '--seed', '7', '--traps', '--strip-links', '--target-mib', '8', '--force'],
        { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] },
      )
    } catch (e) {
      available = false
      console.warn(`roo-corpus unavailable, generated-store checks skipped: ${e}`)
      return
    }
    const t = JSON.parse(fs.readFileSync(path.join(dir, 'truth.json'), 'utf8')) as {
      tasks: Array<{ task_id: string; parent?: string | null }>
    }
    truth = new Map(t.tasks.map(x => [x.task_id, x.parent ?? undefined]))
  }, 600_000)

  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('ours: precision ≥ 99 %, recall ≥ 97 %, no cycles; legacy beside it', async ({ skip }) => {
    if (!available) skip()
    const tasksDir = path.join(dir, 'tasks')
    const { skeletons, metrics } = await ours(tasksDir, false)
    assertNoCycles(skeletons)
    expect(metrics.cyclesBroken).toBe(0)
    const present = new Set(skeletons.map(s => s.taskId))
    const score = (links: Map<string, string>) => {
      let expected = 0
      let predicted = 0
      let correct = 0
      for (const id of present) {
        const want = truth.get(id)
        const wantHere = want && present.has(want) ? want : undefined
        const got = links.get(id)
        if (wantHere) expected++
        if (got && present.has(got)) {
          predicted++
          if (got === wantHere) correct++
        }
      }
      return { expected, predicted, correct, precision: correct / Math.max(1, predicted), recall: correct / Math.max(1, expected) }
    }
    const mine = linkMap(skeletons)
    const legacy = new Map((await core.legacyHierarchyLinks(tasksDir)).map(l => [l.childId, l.parentId] as const))
    const a = score(mine)
    const b = score(legacy)
    console.table([
      { engine: 'ours', ...a, ms: Math.round(metrics.elapsedMs * 10) / 10 },
      { engine: 'legacy', ...b },
    ])
    const diff = diffRows('corpus', legacy, mine).map(r => ({
      ...r,
      truth: short(truth.get(skeletons.find(s => s.taskId.startsWith(r.child))?.taskId ?? '')),
    }))
    console.log(`links only in one engine or different: ${diff.length}`)
    console.table(diff.slice(0, 40))
    expect(a.precision).toBeGreaterThanOrEqual(0.99)
    expect(a.recall).toBeGreaterThanOrEqual(0.97)
  })
})
