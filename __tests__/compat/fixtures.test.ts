/**
 * roo-state-core/compat in `legacy` mode against the legacy server's own outputs on the shared
 * fixtures: every field of every reference file (prefixes, counts, sizes, dates, title, mode,
 * workspace, completion, sequence length, oversized files, parent).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { haveShared, legacyOutputs, legacyTasks } from '../helpers'
import type * as Detector from '../../compat/utils/roo-storage-detector.js'
import type * as Mode from '../../compat/mode.js'

const require = createRequire(import.meta.url)
const { RooStorageDetector } = require('../../compat/utils/roo-storage-detector.js') as typeof Detector
const { setMode } = require('../../compat/mode.js') as typeof Mode

const sharedPresent = haveShared('compat fixtures: the reference comparison', legacyOutputs)

interface Reference {
  taskId: string
  fixtureSet: string
  parentTaskId: string | null
  workspace: string | null
  title: string | null
  childTaskInstructionPrefixes: string[]
  messageCount: number
  actionCount: number
  totalSize: number
  lastActivity: string
  createdAt: string
  mode: string | null
  isCompleted: boolean
  sequenceLength: number
  oversizedFiles: string[]
}

function references(): Reference[] {
  if (!sharedPresent) return []
  return fs
    .readdirSync(legacyOutputs)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(legacyOutputs, f), 'utf8')) as Reference)
}

function taskDir(ref: Reference): string {
  return path.join(legacyTasks, ref.fixtureSet, ref.taskId)
}

/** Whether the legacy builder found dates in the task's data (else it falls back to the folder's). */
function datedByData(dir: string): boolean {
  const api = path.join(dir, 'api_conversation_history.json')
  const meta = path.join(dir, 'task_metadata.json')
  const text = (p: string) => (fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : '')
  return /"ts"\s*:\s*[1-9]/.test(text(api)) || /"(roo_read_date|roo_edit_date|user_edit_date)"\s*:\s*"?[0-9]/.test(text(meta))
}

describe.skipIf(!sharedPresent)('compat legacy mode equals the legacy outputs, field by field', () => {
  beforeAll(() => {
    setMode('legacy')
    vi.spyOn(console, 'log').mockImplementation(() => {})
  })
  afterAll(() => {
    setMode(null)
    vi.restoreAllMocks()
  })

  const refs = references()
  it('has every reference task on disk', () => {
    expect(refs.length).toBeGreaterThanOrEqual(17)
    for (const ref of refs) expect(fs.existsSync(taskDir(ref)), ref.taskId).toBe(true)
  })

  for (const ref of refs) {
    it(`${ref.fixtureSet}/${ref.taskId}`, async () => {
      const dir = taskDir(ref)
      const s = await RooStorageDetector.analyzeConversation(ref.taskId, dir, true)
      expect(s).not.toBeNull()
      if (!s) return
      expect(s.taskId).toBe(ref.taskId)
      expect(s.parentTaskId ?? null).toBe(ref.parentTaskId)
      expect(s.metadata.workspace ?? null).toBe(ref.workspace)
      expect(s.metadata.title ?? null).toBe(ref.title)
      expect(s.metadata.mode ?? null).toBe(ref.mode)
      expect(s.childTaskInstructionPrefixes ?? []).toEqual(ref.childTaskInstructionPrefixes)
      expect(s.metadata.messageCount).toBe(ref.messageCount)
      expect(s.metadata.actionCount).toBe(ref.actionCount)
      expect(s.metadata.totalSize).toBe(ref.totalSize)
      expect(s.isCompleted).toBe(ref.isCompleted)
      expect(s.sequence).toHaveLength(ref.sequenceLength)
      expect(s.metadata.oversizedFiles ?? []).toEqual(ref.oversizedFiles)
      expect(s.metadata.dataSource).toBe(dir)
      expect(s.metadata.source).toBe('roo')
      if (datedByData(dir)) {
        expect(s.metadata.createdAt).toBe(ref.createdAt)
        expect(s.metadata.lastActivity).toBe(ref.lastActivity)
      } else {
        // No date in the data: the legacy builder takes the folder's own times, which on the
        // reference machine were those of its copy; here they are this checkout's.
        const st = fs.statSync(dir)
        expect(s.metadata.lastActivity).toBe(st.mtime.toISOString())
        expect(s.metadata.createdAt).toBe(st.birthtime.toISOString())
      }
      // Every item of the sequence is a message (Roo data never reaches the action branch); Roo's
      // records carry `ts`, not `timestamp`, so each is stamped with the epoch.
      for (const item of s.sequence) {
        expect(item).toHaveProperty('role')
        if (ref.fixtureSet === 'real-tasks') expect(item.timestamp).toBe('1970-01-01T00:00:00.000Z')
      }
    })
  }

  it('the real pair: the child task is 209 messages with 161 cut in the middle, as measured on the legacy server', async () => {
    const ref = refs.find((r) => r.taskId.startsWith('bc93a6f7'))
    expect(ref).toBeDefined()
    if (!ref) return
    const s = await RooStorageDetector.analyzeConversation(ref.taskId, taskDir(ref), false)
    expect(s?.sequence).toHaveLength(209)
    const messages = (s?.sequence ?? []) as Array<{ role: string; content: string; isTruncated: boolean }>
    expect(messages.filter((m) => m.role === 'user')).toHaveLength(68)
    expect(messages.filter((m) => m.isTruncated)).toHaveLength(161)
    for (const m of messages.filter((x) => x.isTruncated)) expect(m.content).toHaveLength(403)
  })
})
