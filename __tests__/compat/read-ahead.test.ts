// The compat detector's read-ahead (compat/utils/read-ahead.js): a walk of a tasks folder, task by
// task, gets from it exactly what the legacy builder gives over the bytes Node reads, whatever the
// order of the calls, and the read-ahead stands aside where it cannot serve a call.
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { core, legacyTasks, haveShared, repoRoot } from '../helpers.js'

const require = createRequire(import.meta.url)
const { legacyFolder, fixedFolder } = require('../../compat/utils/read-ahead.js') as {
  legacyFolder(taskId: string, taskPath: string): Promise<{ analysis: unknown; dirStats: { mtime: Date; birthtime: Date } | null } | undefined>
  fixedFolder(taskId: string, taskPath: string): Promise<{ skeleton: unknown; parentTaskId: string | null } | undefined>
}

const FILES = ['task_metadata.json', 'api_conversation_history.json', 'ui_messages.json', 'history_item.json'] as const
const CAPPED = new Set(['api_conversation_history.json', 'ui_messages.json'])

/** The legacy analysis over the four files read by Node, as the detector's own native path does. */
async function analysedFromNodeReads(taskId: string, taskPath: string) {
  const file = (name: string) => {
    const p = path.join(taskPath, name)
    if (!fs.existsSync(p)) return undefined
    const size = fs.statSync(p).size
    if (CAPPED.has(name) && size > 10 * 1024 * 1024) return { size }
    try {
      return { size, bytes: fs.readFileSync(p) }
    } catch {
      return { size }
    }
  }
  const [metadata, apiHistory, uiMessages, historyItem] = FILES.map(file)
  return core.compatAnalyzeLegacyFiles(taskId, { metadata, apiHistory, uiMessages, historyItem })
}

/** Every store of fixtures/stores and, when present, the legacy fixtures: folders holding task folders. */
function taskFolders(): string[] {
  const stores = path.join(repoRoot, 'fixtures', 'stores')
  const dirs = fs
    .readdirSync(stores)
    .map((s) => path.join(stores, s, 'tasks'))
    .filter((d) => fs.existsSync(d))
  if (haveShared('compat read-ahead', legacyTasks)) {
    dirs.push(path.join(legacyTasks, 'real-tasks'), path.join(legacyTasks, 'controlled-hierarchy'))
  }
  return dirs
}

const previous = process.env.ROO_STATE_COMPAT_READ_AHEAD
afterEach(() => {
  if (previous === undefined) delete process.env.ROO_STATE_COMPAT_READ_AHEAD
  else process.env.ROO_STATE_COMPAT_READ_AHEAD = previous
})

describe('compat read-ahead', () => {
  it('a walk in listing order, in reverse and skipping gets the analysis of the bytes Node reads', async () => {
    let compared = 0
    for (const dir of taskFolders()) {
      const names = fs.readdirSync(dir).filter((n) => fs.statSync(path.join(dir, n)).isDirectory())
      const orders = [names, [...names].reverse(), names.filter((_, i) => i % 2 === 0)]
      for (const order of orders) {
        for (const name of order) {
          const taskPath = path.join(dir, name)
          const got = await legacyFolder(name, taskPath)
          expect(got, taskPath).toBeDefined()
          expect(got!.analysis, taskPath).toEqual(await analysedFromNodeReads(name, taskPath))
          const st = fs.statSync(taskPath)
          expect(got!.dirStats!.mtime.getTime()).toBe(st.mtime.getTime())
          expect(got!.dirStats!.birthtime.getTime()).toBe(st.birthtime.getTime())
          compared++
        }
      }
    }
    expect(compared).toBeGreaterThan(30)
  })

  it("fixed mode: the engine's skeleton and the parent in the legacy priority, as the detector's own reads give them", async () => {
    const jsonOf = (p: string) => {
      try {
        return JSON.parse(fs.readFileSync(p, 'utf8').replace(/^\uFEFF/, ''))
      } catch {
        return undefined
      }
    }
    let compared = 0
    for (const dir of taskFolders()) {
      const names = fs.readdirSync(dir).filter((n) => fs.statSync(path.join(dir, n)).isDirectory())
      for (const name of [...names, ...[...names].reverse()]) {
        const taskPath = path.join(dir, name)
        const got = await fixedFolder(name, taskPath)
        expect(got, taskPath).toBeDefined()
        const present = ['task_metadata.json', 'api_conversation_history.json', 'ui_messages.json'].some((f) => fs.existsSync(path.join(taskPath, f)))
        if (!present) {
          expect(got!.skeleton).toBeNull()
          continue
        }
        expect(got!.skeleton, taskPath).toEqual(await core.analyzeConversation(name, taskPath, { includeSequence: true }))
        const meta = jsonOf(path.join(taskPath, 'task_metadata.json'))
        const hist = jsonOf(path.join(taskPath, 'history_item.json'))
        const parent = meta?.parentTaskId || meta?.parent_task_id || hist?.parentTaskId
        expect(got!.parentTaskId).toBe(parent ? String(parent) : null)
        compared++
      }
    }
    expect(compared).toBeGreaterThan(30)
  })

  it('fixed mode: a parent written as a number or under the older key is read as the detector reads it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-read-ahead-'))
    try {
      const src = path.join(repoRoot, 'fixtures', 'stores', 'stack-era-v3.20', 'tasks')
      const [first] = fs.readdirSync(src)
      const cases: Array<[string, unknown, string | null]> = [
        ['numeric', { parentTaskId: 42 }, '42'],
        ['older-key', { parentTaskId: '', parent_task_id: 'p-1' }, 'p-1'],
        ['bom', '\uFEFF{"parentTaskId":"p-2"}', 'p-2'],
        ['broken', '{"parentTaskId":', null],
        // JSON.parse takes a lone surrogate escape, which a strict JSON reader refuses.
        ['lone-surrogate', '{"title":"\\ud800","parentTaskId":"p-3"}', 'p-3'],
      ]
      for (const [name, meta] of cases) {
        fs.cpSync(path.join(src, first), path.join(dir, name), { recursive: true })
        fs.writeFileSync(path.join(dir, name, 'task_metadata.json'), typeof meta === 'string' ? meta : JSON.stringify(meta))
        fs.rmSync(path.join(dir, name, 'history_item.json'), { force: true })
      }
      for (const [name, , expected] of cases) {
        expect((await fixedFolder(name, path.join(dir, name)))?.parentTaskId, name).toBe(expected)
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('serves a folder made after the listing, and stands aside where it cannot serve', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-read-ahead-'))
    try {
      const src = path.join(repoRoot, 'fixtures', 'stores', 'stack-era-v3.20', 'tasks')
      const [first] = fs.readdirSync(src)
      fs.cpSync(path.join(src, first), path.join(dir, 'a'), { recursive: true })
      expect((await legacyFolder('a', path.join(dir, 'a')))?.analysis).toEqual(await analysedFromNodeReads('a', path.join(dir, 'a')))
      fs.cpSync(path.join(src, first), path.join(dir, 'b'), { recursive: true })
      expect((await legacyFolder('b', path.join(dir, 'b')))?.analysis).toEqual(await analysedFromNodeReads('b', path.join(dir, 'b')))
      // An id other than the folder's name, a folder that does not exist, the read-ahead turned off.
      expect(await legacyFolder('other-id', path.join(dir, 'a'))).toBeUndefined()
      expect(await legacyFolder('nope', path.join(dir, 'nope'))).toBeUndefined()
      process.env.ROO_STATE_COMPAT_READ_AHEAD = '0'
      expect(await legacyFolder('a', path.join(dir, 'a'))).toBeUndefined()
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a task without files gives a null analysis, as the legacy builder skips it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-read-ahead-'))
    try {
      fs.mkdirSync(path.join(dir, 'empty'))
      const got = await legacyFolder('empty', path.join(dir, 'empty'))
      expect(got).toBeDefined()
      expect(got!.analysis).toBeNull()
      expect(got!.dirStats).not.toBeNull()
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
