/**
 * The contract rows of docs/compat.md §3: `UIMessagesDeserializer`, `MessageToSkeletonTransformer`
 * and `messageExtractionCoordinator` on message arrays in memory, missing/empty/non-array/BOM/UTF-16
 * files, invalid JSON, file contents served through spies on `fs/promises`, and the real child task.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { createRequire } from 'node:module'
import { realTasks, CHILD, tempDir, haveShared } from '../helpers'
import type * as Deser from '../../compat/utils/ui-messages-deserializer.js'
import type * as Transformer from '../../compat/utils/message-to-skeleton-transformer.js'
import type * as Coordinator from '../../compat/utils/message-extraction-coordinator.js'
import type * as Mode from '../../compat/mode.js'

const require = createRequire(import.meta.url)
const { UIMessagesDeserializer } = require('../../compat/utils/ui-messages-deserializer.js') as typeof Deser
const { MessageToSkeletonTransformer } = require('../../compat/utils/message-to-skeleton-transformer.js') as typeof Transformer
const { messageExtractionCoordinator, createInstruction, cleanMode, extractTimestamp } =
  require('../../compat/utils/message-extraction-coordinator.js') as typeof Coordinator
const { setMode } = require('../../compat/mode.js') as typeof Mode

const sharedPresent = haveShared('compat readers: the real child task', realTasks)

type Msg = Parameters<InstanceType<typeof UIMessagesDeserializer>['extractToolCalls']>[0][number]

const MESSAGES: Msg[] = [
  { ts: 1700000000000, type: 'say', say: 'text', text: 'Plan the parser release' },
  {
    ts: 1700000000500,
    type: 'say',
    say: 'api_req_started',
    text: JSON.stringify({ request: '<task>\nPlan the parser release\n</task>\n<environment_details>\n# Current Workspace Directory (/home/me/parser) Files\n</environment_details>', cost: 0.01 }),
  },
  { ts: 1700000001000, type: 'ask', ask: 'tool', text: JSON.stringify({ tool: 'newTask', mode: 'code', content: 'Write the streaming reader of the history files' }) },
  { ts: 1700000002000, type: 'ask', ask: 'tool', text: JSON.stringify({ tool: 'readFile', path: 'src/a.ts' }) },
  { ts: 1700000003000, type: 'say', say: 'error', text: 'boom' },
  { ts: 1700000004000, type: 'say', say: 'api_req_started', text: '{not json' },
  { ts: 1700000005000, type: 'say', say: 'completion_result', text: 'Done' },
]

beforeEach(() => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
  vi.spyOn(console, 'log').mockImplementation(() => {})
})
afterEach(() => {
  vi.restoreAllMocks()
  setMode(null)
})

describe('UIMessagesDeserializer', () => {
  const d = new UIMessagesDeserializer()

  it('safeJsonParse: falsy → default, invalid → default with a logged error', () => {
    expect(d.safeJsonParse(null, 7)).toBe(7)
    expect(d.safeJsonParse('', 'x')).toBe('x')
    expect(d.safeJsonParse('{bad', [])).toEqual([])
    expect(console.error).toHaveBeenCalled()
    expect(d.safeJsonParse<{ a: number }>('{"a":1}')).toEqual({ a: 1 })
  })

  it('answers typed questions over a message array in memory', () => {
    expect(d.extractToolCalls(MESSAGES)).toEqual([
      { tool: 'newTask', mode: 'code', message: 'Write the streaming reader of the history files', timestamp: 1700000001000 },
      { tool: 'readFile', mode: undefined, message: undefined, timestamp: 1700000002000 },
    ])
    expect(d.extractNewTasks(MESSAGES)).toEqual([{ mode: 'code', message: 'Write the streaming reader of the history files', timestamp: 1700000001000 }])
    const reqs = d.extractApiRequests(MESSAGES)
    expect(reqs).toHaveLength(2)
    expect(reqs[1]).toBeUndefined()
    expect(d.extractErrors(MESSAGES).map((m) => m.text)).toEqual(['boom'])
    expect(d.extractUserMessages([{ ts: 1, type: 'ask', text: 'hi' }, ...MESSAGES]).map((m) => m.text)).toEqual(['hi'])
    expect(d.getInitialInstruction(MESSAGES)).toBeUndefined()
    expect(d.getMessageStats(MESSAGES)).toEqual({ total: 7, askMessages: 2, sayMessages: 5, toolCalls: 2, apiRequests: 2, newTasks: 1, errors: 1 })
  })

  it('readTaskMessages: missing, empty, invalid, non-array → []; BOM → [] in legacy mode, read in fixed mode; UTF-16 read in fixed mode', async () => {
    const dir = tempDir()
    const file = (name: string, content: string | Buffer) => {
      const p = path.join(dir, name)
      fs.writeFileSync(p, content)
      return p
    }
    const array = JSON.stringify([{ ts: 1, type: 'say', say: 'text', text: 'hello' }])
    const empty = file('empty.json', '')
    const invalid = file('invalid.json', '[{"ts":')
    const object = file('object.json', '{"not":"array"}')
    const bom = file('bom.json', `\ufeff${array}`)
    const wide = file('wide.json', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(array, 'utf16le')]))
    setMode('legacy')
    for (const p of [path.join(dir, 'missing.json'), empty, invalid, object, bom, wide]) expect(await d.readTaskMessages(p)).toEqual([])
    setMode('fixed')
    expect(await d.readTaskMessages(object)).toEqual([])
    expect((await d.readTaskMessages(bom)).map((m) => m.text)).toEqual(['hello'])
    expect((await d.readTaskMessages(wide)).map((m) => m.text)).toEqual(['hello'])
  })

  it('readTaskMessages reads through fs/promises (spies serve the content)', async () => {
    vi.spyOn(fsp, 'access').mockResolvedValue(undefined)
    vi.spyOn(fsp, 'readFile').mockResolvedValue(JSON.stringify([{ ts: 5, type: 'say', say: 'text', text: 'from a spy' }]) as never)
    expect((await d.readTaskMessages('/virtual/ui_messages.json')).map((m) => m.text)).toEqual(['from a spy'])
  })
})

describe('MessageToSkeletonTransformer', () => {
  it('builds the header from messages: instruction from the first request, prefixes, counts, completion, workspace', async () => {
    const { skeleton, metadata } = await new MessageToSkeletonTransformer().transform(MESSAGES, 'task-1')
    expect(skeleton.truncatedInstruction).toBe('plan the parser release')
    expect(skeleton.childTaskInstructionPrefixes).toEqual(['write the streaming reader of the history files'])
    expect(skeleton.metadata).toMatchObject({
      workspace: '/home/me/parser',
      createdAt: new Date(1700000000000).toISOString(),
      lastActivity: new Date(1700000005000).toISOString(),
      messageCount: 7,
      actionCount: 2,
      totalSize: JSON.stringify(MESSAGES).length,
    })
    expect(skeleton.isCompleted).toBe(true)
    expect(skeleton.sequence).toEqual([])
    expect(metadata).toMatchObject({ messageCount: 7, userMessageCount: 0, toolCallCount: 2, newTaskCount: 1, hasInitialInstruction: true })
  })

  it('edge rules: [] dates now; a missing first ts rejects with a RangeError; strict validation rejects with INVALID_ARGUMENT', async () => {
    const before = Date.now()
    const empty = await new MessageToSkeletonTransformer().transform([], 'empty')
    expect(Date.parse(empty.skeleton.metadata.createdAt)).toBeGreaterThanOrEqual(before - 1)
    expect(empty.skeleton.truncatedInstruction).toBe('')
    expect(empty.skeleton.childTaskInstructionPrefixes).toBeUndefined()
    await expect(new MessageToSkeletonTransformer().transform([{ type: 'say', say: 'text', text: 'x' } as Msg], 't')).rejects.toBeInstanceOf(RangeError)
    const long = 'word '.repeat(100)
    const raw = new MessageToSkeletonTransformer({ normalizePrefixes: false, strictValidation: true })
    await expect(
      raw.transform([{ ts: 1, type: 'ask', ask: 'tool', text: JSON.stringify({ tool: 'newTask', mode: 'code', content: long }) }], 't'),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('Skeleton validation failed: prefix exceeds 192 chars') })
  })

  it('legacy mode rejects on an unparsable request payload before any valid one; fixed mode reads past it', async () => {
    const msgs: Msg[] = [
      { ts: 1, type: 'say', say: 'api_req_started', text: '{not json' },
      { ts: 2, type: 'say', say: 'api_req_started', text: JSON.stringify({ request: '<task>Second request task text</task>' }) },
    ]
    setMode('legacy')
    await expect(new MessageToSkeletonTransformer().transform(msgs, 't')).rejects.toBeInstanceOf(TypeError)
    setMode('fixed')
    expect((await new MessageToSkeletonTransformer().transform(msgs, 't')).skeleton.truncatedInstruction).toBe('second request task text')
  })
})

describe('messageExtractionCoordinator', () => {
  it('helpers: createInstruction, cleanMode, extractTimestamp', () => {
    expect(createInstruction(1, '💻 Code', 'short')).toBeNull()
    expect(createInstruction(1, '💻 Code', '  a message long enough to be kept  ')).toEqual({ timestamp: 1, mode: 'code', message: 'a message long enough to be kept' })
    expect(createInstruction(1, '', 'x'.repeat(300))?.message).toBe(`${'x'.repeat(197)}...`)
    expect(cleanMode('🪲 Debug mode')).toBe('debug mode')
    expect(cleanMode('Débogage')).toBe('dbogage')
    expect(extractTimestamp({ ts: 5 })).toBe(5)
    expect(extractTimestamp({})).toBe(0)
    expect(messageExtractionCoordinator.getAvailableExtractors()).toHaveLength(7)
  })

  it('runs the chain over an array in memory and reports bad input as the legacy errors, without throwing', () => {
    const r = messageExtractionCoordinator.extractFromMessages(MESSAGES as unknown[])
    expect(r.processedMessages).toBe(7)
    expect(r.instructions.map((i) => i.message)).toContain('Write the streaming reader of the history files')
    expect(r.matchedPatterns).toContain('UI Ask/Tool Extractor')
    expect(r.errors).toEqual([])
    const none = messageExtractionCoordinator.extractFromMessages(null as unknown as unknown[])
    expect(none.processedMessages).toBe(0)
    expect(none.errors).toEqual([expect.stringMatching(/^Global extraction error: TypeError/)])
    // A null message throws in every extractor's canHandle: seven errors, the walk goes on.
    const bad = messageExtractionCoordinator.extractFromMessages([null, 3, 'x'])
    expect(bad.instructions).toEqual([])
    expect(bad.processedMessages).toBe(3)
    expect(bad.errors).toHaveLength(7)
    expect(bad.errors[0]).toMatch(/^API Content Extractor error: TypeError/)
  })

  it.skipIf(!sharedPresent)('the real child task: 10 raw instructions in legacy mode, its 6 children once each in fixed mode', () => {
    const ui = JSON.parse(fs.readFileSync(path.join(realTasks, CHILD, 'ui_messages.json'), 'utf8')) as unknown[]
    setMode('legacy')
    const legacy = messageExtractionCoordinator.extractFromMessages(ui)
    expect(legacy.instructions).toHaveLength(10)
    expect(legacy.processedMessages).toBe(146)
    setMode('fixed')
    const fixed = messageExtractionCoordinator.extractFromMessages(ui)
    expect(fixed.instructions).toHaveLength(6)
    expect(new Set(fixed.instructions.map((i) => i.message)).size).toBe(6)
  })

  it.skipIf(!sharedPresent)('the transformer on the real child task: 6 prefixes, 146 messages, 22 actions, as the legacy new path measured', async () => {
    const ui = JSON.parse(fs.readFileSync(path.join(realTasks, CHILD, 'ui_messages.json'), 'utf8')) as Msg[]
    const { skeleton } = await new MessageToSkeletonTransformer().transform(ui, CHILD)
    expect(skeleton.childTaskInstructionPrefixes).toHaveLength(6)
    expect(skeleton.metadata.messageCount).toBe(146)
    expect(skeleton.metadata.actionCount).toBe(22)
  })
})
