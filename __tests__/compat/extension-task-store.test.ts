/**
 * The extension's task store as Zoo Code 3.80+ keeps it, through `roo-state-core/compat/extension`
 * and the native writer behind it (`updateHistoryItem`): writers in other processes that use the
 * real `proper-lockfile` package on the same files, a record changed between our read and our
 * write, the status state machine, and the release switch that gives Roo Code's rules back.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import type { HistoryItem } from '../../compat/extension/index.js'
import { core, tempDir } from '../helpers'
import { ext } from './extension-fixtures'

const PEER = path.join(__dirname, 'task-store', 'lockfile-peer.mjs')

type Peer = { started: Promise<void>; done: Promise<void>; finished: () => boolean }

/**
 * `lockfile-peer.mjs` writing `field` into `file` for `rounds` rounds, in its own process; with
 * `otherField`, it waits halfway until another writer has changed that field.
 */
function runPeer(file: string, rounds: number, field: string, otherField?: string): Peer {
  const args = [PEER, file, String(rounds), field, ...(otherField ? [otherField] : [])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let finished = false
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const started = new Promise<void>((resolve) => child.on('spawn', () => resolve()))
  const done = new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => {
      finished = true
      if (code === 0) resolve()
      else reject(new Error(`peer exited with ${code}: ${err}`))
    }),
  )
  return { started, done, finished: () => finished }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

function record(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, 'utf8'))
}

function seed(root: string, item: Record<string, unknown>): string {
  const file = path.join(root, 'tasks', String(item.id), 'history_item.json')
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(item))
  return file
}

const item = (id: string, extra: Partial<HistoryItem> = {}): HistoryItem => ({
  id,
  number: 1,
  ts: 1_780_000_000_000,
  task: `Task ${id}`,
  tokensIn: 0,
  tokensOut: 0,
  totalCost: 0,
  ...extra,
})

const stores: InstanceType<typeof ext.TaskHistoryStore>[] = []
afterEach(() => {
  for (const s of stores.splice(0)) s.dispose()
  ext.setExtensionRelease(null)
})

describe('the native writer beside a proper-lockfile writer', () => {
  it('both write the same file in a loop and nothing is lost', async () => {
    const root = tempDir('task-store-lock-')
    const file = seed(root, { id: 't1', status: 'active', childIds: [] })
    const rounds = 120
    const peer = runPeer(file, rounds, 'peerRound', 'ourRound')
    await peer.started
    let ours = 0
    let sawPeerMidway = 0
    while (!peer.finished() || ours < rounds) {
      ours += 1
      const written = await core.updateHistoryItem(file, { id: 't1' }, { set: { ourRound: ours, childIds: [`ours-${ours}`] } })
      const p = Number(written.peerRound ?? 0)
      if (p > 0 && p < rounds) sawPeerMidway += 1
      await pause(1)
    }
    await peer.done
    const final = record(file)
    expect(final.peerRound).toBe(rounds)
    expect(final.ourRound).toBe(ours)
    const children = final.childIds as string[]
    expect(new Set(children).size).toBe(children.length)
    for (let i = 1; i <= rounds; i++) expect(children).toContain(`peerRound-${i}`)
    for (let i = 1; i <= ours; i++) expect(children).toContain(`ours-${i}`)
    // The two really interleaved (the peer waits halfway for one of ours): some of our writes
    // landed between the peer's, on top of its record.
    expect(sawPeerMidway).toBeGreaterThan(0)
    expect(fs.existsSync(`${file}.lock`)).toBe(false)
    expect(final.status).toBe('active')
  })

  it('the store of one window and a proper-lockfile writer keep each other\'s fields', async () => {
    const root = tempDir('task-store-lock-')
    const file = seed(root, item('shared', { status: 'active' }))
    const store = new ext.TaskHistoryStore(root)
    stores.push(store)
    await store.initialize()
    const rounds = 60
    const peer = runPeer(file, rounds, 'peerRound')
    await peer.started
    let tokens = 0
    while (!peer.finished() || tokens < rounds) {
      tokens += 1
      await store.upsert({ ...store.get('shared')!, tokensIn: tokens })
      await pause(1)
    }
    await peer.done
    const final = record(file)
    expect([final.peerRound, final.tokensIn]).toEqual([rounds, tokens])
    expect((final.childIds as string[]).length).toBe(rounds)
    await store.reconcile()
    expect(store.get('shared')).toMatchObject({ peerRound: rounds, tokensIn: tokens })
  })

  it('a write waits for a lock the peer holds, then applies on top of the peer\'s record', async () => {
    const root = tempDir('task-store-lock-')
    const file = seed(root, { id: 't2', status: 'active' })
    const release = await lockfile.lock(file, { stale: 31_000, realpath: false })
    const pending = core.updateHistoryItem(file, { id: 't2' }, { set: { ours: 1 } })
    await pause(150)
    fs.writeFileSync(file, JSON.stringify({ id: 't2', status: 'completed', theirs: 1 }))
    await release()
    await pending
    expect(record(file)).toEqual({ id: 't2', status: 'completed', theirs: 1, ours: 1 })
  })

  it('a lock left behind by a writer that is gone is taken over; a live one is waited for, then refused', async () => {
    const root = tempDir('task-store-lock-')
    const file = seed(root, { id: 't3' })
    fs.mkdirSync(`${file}.lock`)
    const old = new Date(Date.now() - 60_000)
    fs.utimesSync(`${file}.lock`, old, old)
    await core.updateHistoryItem(file, { id: 't3' }, { set: { after: true } })
    expect(record(file)).toEqual({ id: 't3', after: true })
    expect(fs.existsSync(`${file}.lock`)).toBe(false)
    fs.mkdirSync(`${file}.lock`)
    await expect(core.updateHistoryItem(file, { id: 't3' }, { set: { refused: true } })).rejects.toMatchObject({ code: 'STORE_BUSY' })
    expect(record(file)).toEqual({ id: 't3', after: true })
  })
})

describe('a record changed by a peer between our read and our write', () => {
  it('keeps the peer\'s change, and a status the peer made final refuses ours', async () => {
    const root = tempDir('task-store-peer-')
    const file = seed(root, item('t4', { status: 'active', totalCost: 0.01 }))
    const store = new ext.TaskHistoryStore(root)
    stores.push(store)
    await store.initialize()
    // The peer (another window) completes the task after we read it.
    fs.writeFileSync(file, JSON.stringify({ ...record(file), status: 'completed', completionResultSummary: 'done elsewhere' }))
    await store.upsert({ ...store.get('t4')!, totalCost: 2.5 })
    expect(record(file)).toMatchObject({ status: 'completed', completionResultSummary: 'done elsewhere', totalCost: 2.5 })
    expect(store.get('t4')).toMatchObject({ status: 'completed', totalCost: 2.5 })

    // Our stale view would delegate it: the file's status refuses, nothing is written.
    fs.writeFileSync(file, JSON.stringify({ ...record(file), status: 'completed' }))
    const before = fs.readFileSync(file, 'utf8')
    const stale = { ...store.get('t4')!, status: 'active' as const }
    ;(store as unknown as { cache: Map<string, HistoryItem> }).cache.set('t4', stale)
    await expect(store.upsert({ ...stale, status: 'delegated', awaitingChildId: 'c' })).rejects.toBeInstanceOf(ext.DeltaRejectedError)
    expect(fs.readFileSync(file, 'utf8')).toBe(before)
    expect(store.get('t4')!.status).toBe('completed')
  })

  it('the merge is the native one: childIds united, removed fields gone, the state machine enforced', () => {
    const disk = { id: 'c', parentTaskId: 'p', rootTaskId: 'p', status: 'interrupted', childIds: ['a'] }
    const merged = core.mergeHistoryItem(disk, { id: 'c' }, { set: { childIds: ['a', 'b'] }, unset: ['parentTaskId', 'rootTaskId'] })
    expect(merged).toEqual({ id: 'c', status: 'interrupted', childIds: ['a', 'b'] })
    expect(() => core.mergeHistoryItem(disk, { id: 'c' }, { set: { status: 'active' } })).toThrow(
      'Delta rejected for task c: disk status interrupted rejects transition to active',
    )
    expect(() => ext.assertValidTransition('completed', 'active')).toThrow('Invalid task status transition: completed → active')
    expect(() => ext.assertValidTransition(undefined, 'interrupted')).not.toThrow()
  })
})

describe('the release whose rules apply', () => {
  it('today: no _index.json read or written; 3.52.1: the index store of Roo Code', async () => {
    const root = tempDir('task-store-release-')
    seed(root, item('on-disk', { ts: 2 }))
    fs.writeFileSync(path.join(root, 'tasks', '_index.json'), JSON.stringify({ version: 1, updatedAt: 1, entries: [item('only-in-index', { ts: 1 })] }))
    const today = new ext.TaskHistoryStore(root)
    stores.push(today)
    await today.initialize()
    expect(today.getAll().map((i) => i.id)).toEqual(['on-disk'])

    ext.setExtensionRelease('3.52.1')
    expect(ext.extensionRelease()).toBe('3.52.1')
    fs.mkdirSync(path.join(root, 'tasks', 'only-in-index'))
    const roo = new ext.TaskHistoryStore(root)
    stores.push(roo)
    await roo.initialize()
    expect(roo.getAll().map((i) => i.id).sort()).toEqual(['on-disk', 'only-in-index'])
    // Roo Code changed statuses freely.
    await roo.upsert({ ...roo.get('on-disk')!, status: 'completed' })
    await roo.upsert({ ...roo.get('on-disk')!, status: 'active' })
    await roo.flushIndex()
    const index = JSON.parse(fs.readFileSync(path.join(root, 'tasks', '_index.json'), 'utf8'))
    expect(index.entries.map((e: HistoryItem) => e.id).sort()).toEqual(['on-disk', 'only-in-index'])
    expect(() => ext.setExtensionRelease('soon')).toThrow(/INVALID_ARGUMENT/)
  })

  it('the context rule: a maxTokens of -1 reserves 8 192 today, -1 in 3.52.1', () => {
    const o = {
      totalTokens: 85_000,
      contextWindow: 100_000,
      maxTokens: -1,
      autoCondenseContext: false,
      autoCondenseContextPercent: 100,
      profileThresholds: {},
      currentProfileId: 'default',
      lastMessageTokens: 0,
    }
    expect(ext.willManageContext(o)).toBe(true)
    expect(core.getAllowedTokens(100_000, -1)).toBe(81_808)
    ext.setExtensionRelease('3.52.1')
    expect(ext.willManageContext(o)).toBe(false)
    expect(core.getAllowedTokens(100_000, -1, { era: '3.52.1' })).toBe(90_001)
    // The JavaScript rule for malformed options (a count given as text) follows the release too.
    const textual = { ...o, maxTokens: '-1' as unknown as number }
    expect(ext.willManageContext(textual)).toBe(false)
    ext.setExtensionRelease(null)
    expect(ext.willManageContext(textual)).toBe(true)
  })

  it('useAvailableInputForContextPercent measures against the window less the reserve', () => {
    const o = {
      totalTokens: 100_000,
      contextWindow: 200_000,
      maxTokens: 64_000,
      autoCondenseContext: true,
      autoCondenseContextPercent: 70,
      profileThresholds: {},
      currentProfileId: 'default',
      lastMessageTokens: 0,
    }
    expect(ext.willManageContext(o)).toBe(false)
    expect(ext.willManageContext({ ...o, useAvailableInputForContextPercent: true })).toBe(true)
    // A reserve as large as the window leaves no room: 100 %.
    expect(ext.willManageContext({ ...o, totalTokens: 1, maxTokens: 200_000, autoCondenseContextPercent: 99, useAvailableInputForContextPercent: true })).toBe(true)
    expect(core.decideContext({ ...o, messages: [], systemPrompt: '', taskId: 't', useAvailableInputForContextPercent: true }).contextPercent).toBeCloseTo(73.529, 3)
  })
})
