// One order for every task list: the handle's `list`, the binding's `listOrder` (what the CLI and
// the MCP server use to merge the lists of several stores), and the merged lists themselves.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import type { ListOrderKey } from '../index.js'
import { core, repoRoot, tempDir } from './helpers'
// @ts-expect-error the CLI's modules are plain JavaScript without declarations
import { tasksPage } from '../cli/lib/pages.mjs'

type Header = Awaited<ReturnType<typeof core.scanTasks>>['skeletons'][number]

const fixtures = path.join(repoRoot, 'fixtures', 'stores')
const STORES = ['history-item-v3.50', 'native-tools-v3.45', 'stack-era-v3.20', 'kilo-code-v4', 'zoo-code-2026']
const SORTS = ['lastActivity', 'createdAt', 'title', 'messageCount', 'actionCount', 'totalSize', 'totalCost'] as const
const ORDERS = [undefined, 'asc', 'desc'] as const

function keyOf(s: Header): ListOrderKey {
  return {
    taskId: s.taskId,
    createdAtMs: s.createdAtMs ?? undefined,
    lastActivityMs: s.lastActivityMs ?? undefined,
    title: s.metadata.title ?? undefined,
    messageCount: s.metadata.messageCount,
    actionCount: s.metadata.actionCount,
    totalSize: s.metadata.totalSize,
    totalCost: s.apiTotals.totalCost,
  }
}

let work: string
let combined: string
let split: string[]

beforeAll(() => {
  work = tempDir('roo-state-list-order-')
  // The same tasks as one store and as five.
  combined = path.join(work, 'one', 'tasks')
  split = STORES.map((name) => path.join(work, name, 'tasks'))
  for (const [i, name] of STORES.entries()) {
    fs.cpSync(path.join(fixtures, name, 'tasks'), combined, { recursive: true })
    fs.cpSync(path.join(fixtures, name, 'tasks'), split[i], { recursive: true })
  }
  // Three copies of one task, in three stores, equal in every key but their ids: ties a merge must
  // break as the handle does (by bytes: `B` before `a`), not as a locale would.
  const twin = path.join(fixtures, STORES[0], 'tasks', fs.readdirSync(path.join(fixtures, STORES[0], 'tasks')).sort()[0])
  for (const [i, id] of ['B-twin', 'a-twin', 'b-twin'].entries()) {
    fs.cpSync(twin, path.join(combined, id), { recursive: true })
    fs.cpSync(twin, path.join(split[i], id), { recursive: true })
  }
})

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

describe('listOrder', () => {
  it('orders headers as the handle lists them, for every key and direction', async () => {
    const store = await core.TaskStore.open({ tasksDir: combined, cacheDir: path.join(work, 'cache-a') })
    const headers = store.headers()
    expect(headers.length).toBeGreaterThan(10)
    const keys = headers.map(keyOf)
    for (const sort of SORTS) {
      for (const order of ORDERS) {
        const listed = store.list({ sort, order }).items.map((s) => s.taskId)
        const ordered = core.listOrder(keys, sort, order).map((i) => headers[i].taskId)
        expect(ordered, `${sort} ${order ?? 'natural'}`).toEqual(listed)
      }
    }
  })

  it('breaks ties by task id byte order, puts unknown times last, compares titles without case', () => {
    const tied = [
      { taskId: 'b', lastActivityMs: 5 },
      { taskId: 'B', lastActivityMs: 5 },
      { taskId: 'a', lastActivityMs: 5 },
      { taskId: 'c' },
      { taskId: 'd', lastActivityMs: 9 },
    ]
    expect(core.listOrder(tied).map((i) => tied[i].taskId)).toEqual(['d', 'B', 'a', 'b', 'c'])
    expect(core.listOrder(tied, 'lastActivity', 'asc').map((i) => tied[i].taskId)).toEqual(['c', 'B', 'a', 'b', 'd'])
    const titled = [
      { taskId: '1', title: 'banana' },
      { taskId: '2', title: 'Apple' },
      { taskId: '3', title: 'apple' },
      { taskId: '4' },
    ]
    expect(core.listOrder(titled, 'title').map((i) => titled[i].taskId)).toEqual(['4', '2', '3', '1'])
    expect(core.listOrder(titled, 'title', 'desc').map((i) => titled[i].taskId)).toEqual(['1', '2', '3', '4'])
  })

  it('refuses an unknown key or direction', () => {
    const codeOf = (f: () => unknown) => {
      try {
        f()
      } catch (e) {
        return [(e as { code?: string }).code, (e as Error).message]
      }
      return ['no error']
    }
    expect(codeOf(() => core.listOrder([], 'size' as never))).toEqual(['INVALID_ARGUMENT', expect.stringMatching(/^sort must be .*, not size$/)])
    expect(codeOf(() => core.listOrder([], 'title', 'up' as never))).toEqual(['INVALID_ARGUMENT', 'order must be asc or desc, not up'])
  })
})

describe('lists of several stores', () => {
  it('merge into the order one store holding every task gives', async () => {
    const sel = (tasksDirs: string[]) => ({ tasksDirs, cacheDir: path.join(work, 'cache-b') })
    for (const sortBy of SORTS) {
      for (const sortOrder of ORDERS) {
        const opts = { sort: sortBy, order: sortOrder, limit: 1000 }
        const one = await tasksPage(sel([combined]), opts)
        const many = await tasksPage(sel(split), opts)
        const ids = (r: { tasks: Array<{ taskId: string }> }) => r.tasks.map((t) => t.taskId)
        expect(many.total).toBe(one.total)
        expect(ids(many), `${sortBy} ${sortOrder ?? 'natural'}`).toEqual(ids(one))
      }
    }
  })
})
