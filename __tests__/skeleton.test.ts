import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { CHILD, PARENT, core, haveShared, readJson, realTasks, legacyTasks } from './helpers'

const sharedPresent = haveShared('skeleton: the real pair and the controlled hierarchy', realTasks)

interface UiRecord { ts?: number; type?: string; say?: string; text?: string }

describe.skipIf(!sharedPresent)('skeletons of the real parent/child pair', () => {
  it('bc93a6f7 has its 6 children, none equal to its own instruction', async () => {
    const s = await core.analyzeConversation(CHILD, path.join(realTasks, CHILD))
    expect(s.childTasks).toHaveLength(6)
    expect(s.childTaskInstructionPrefixes).toHaveLength(6)
    expect(s.childTaskInstructionPrefixes).not.toContain(s.truncatedInstruction)
    for (const c of s.childTasks) expect(c.message.trim()).not.toBe(s.instruction?.trim())
    expect(s.metadata.workspace).toBe('d:/dev/roo-extensions')
    expect(s.metadata.actionCount).toBeGreaterThan(0)
    expect(s.sequence?.length).toBe(s.metadata.messageCount + s.metadata.actionCount)
  })

  it('ac8aa7b4 has its 22 children and lists bc93a6f7 among them', async () => {
    const parent = await core.analyzeConversation(PARENT, path.join(realTasks, PARENT))
    const child = await core.analyzeConversation(CHILD, path.join(realTasks, CHILD))
    expect(parent.childTasks).toHaveLength(22)
    expect(parent.childTaskInstructionPrefixes).toContain(child.truncatedInstruction)
    expect(parent.childTaskInstructionPrefixes).not.toContain(parent.truncatedInstruction)
  })

  it('createdAt/lastActivity are the first/last message ts, and every sequence item has its own time', async () => {
    for (const id of [PARENT, CHILD]) {
      const ui = readJson<UiRecord[]>(path.join(realTasks, id, 'ui_messages.json'))
      const ts = ui.map(m => m.ts).filter((t): t is number => typeof t === 'number')
      const s = await core.analyzeConversation(id, path.join(realTasks, id))
      expect(s.metadata.createdAt).toBe(new Date(ts[0]).toISOString())
      expect(s.metadata.lastActivity).toBe(new Date(ts[ts.length - 1]).toISOString())
      expect(s.createdAtMs).toBe(ts[0])
      const times = new Set((s.sequence ?? []).map(i => i.timestamp))
      expect(times.has('1970-01-01T00:00:00.000Z')).toBe(false)
      expect(times.size).toBeGreaterThan(10)
    }
  })

  it('headers leave the sequence out; content is cut in the middle at the chosen length', async () => {
    const header = await core.analyzeConversation(CHILD, path.join(realTasks, CHILD), { includeSequence: false })
    expect(header.sequence).toBeUndefined()
    const full = await core.analyzeConversation(CHILD, path.join(realTasks, CHILD), { maxContentLength: 100 })
    const cut = full.sequence!.filter(i => 'role' in i && i.isTruncated)
    expect(cut.length).toBeGreaterThan(0)
    for (const item of cut) if ('role' in item) expect(item.content).toContain('...')
  })

  it('a missing task is TASK_NOT_FOUND', async () => {
    await expect(core.analyzeConversation('x', path.join(realTasks, 'does-not-exist'))).rejects.toMatchObject({
      code: 'TASK_NOT_FOUND',
    })
  })
})

describe('scanTasks', () => {
  it.skipIf(!sharedPresent)('scans every fixture task, reports progress, never fails on one task', async () => {
    const seen: number[] = []
    const r = await core.scanTasks(path.join(legacyTasks, 'controlled-hierarchy'), {
      onProgress: ({ done }) => seen.push(done),
      concurrency: 2,
    })
    expect(r.total).toBe(15)
    expect(r.skeletons).toHaveLength(15)
    expect(r.cancelled).toBe(false)
    await new Promise(resolve => setTimeout(resolve, 50))
    expect(seen.length).toBeGreaterThan(0)
    expect(Math.max(...seen)).toBe(15)
  })

  it.skipIf(!sharedPresent)('aborting during the call rejects with ABORTED', async () => {
    const ac = new AbortController()
    const p = core.scanTasks(realTasks, { signal: ac.signal })
    ac.abort()
    await expect(p).rejects.toMatchObject({ code: 'ABORTED' })
  })

  it.skipIf(!sharedPresent)('a signal aborted before the call rejects with ABORTED too', async () => {
    await expect(core.scanTasks(realTasks, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED' })
    await expect(
      core.analyzeConversation('x', path.join(realTasks, CHILD), undefined, AbortSignal.abort()),
    ).rejects.toMatchObject({ code: 'ABORTED' })
  })

  it('a missing tasks directory is INVALID_PATH', async () => {
    await expect(core.scanTasks(path.join(realTasks, 'nope'))).rejects.toMatchObject({ code: 'INVALID_PATH' })
  })
})

describe.skipIf(!sharedPresent)('readers and extraction', () => {
  it('reads typed UI messages and API history with their diagnostics', async () => {
    const ui = await core.readUiMessages(path.join(realTasks, CHILD, 'ui_messages.json'))
    expect(ui.value).toHaveLength(146)
    expect(ui.diagnostics).toEqual([])
    expect(ui.value[0]).toMatchObject({ type: 'say', say: 'text' })
    const api = await core.readApiHistory(path.join(realTasks, CHILD, 'api_conversation_history.json'))
    expect(api.value?.format).toBe('anthropicArray')
    expect(api.value?.messages).toHaveLength(63)
    const missing = await core.readHistoryItem(path.join(realTasks, CHILD, 'history_item.json'))
    expect(missing.value).toBeNull()
  })

  it('extractNewTasks finds each child once with its time and mode', async () => {
    const children = await core.extractNewTasks(path.join(realTasks, CHILD))
    expect(children).toHaveLength(6)
    for (const c of children) {
      expect(typeof c.ts).toBe('number')
      expect(['code', 'debug', 'architect', 'ask', 'orchestrator']).toContain(c.mode)
      expect(c.sources).toContain('ui_ask')
    }
  })
})
