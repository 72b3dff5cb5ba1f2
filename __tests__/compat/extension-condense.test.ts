/**
 * Acceptance cases 30–46 of specs/extension-formats.md §10 (summarizeConversation, metrics, message
 * merging, models, the history store, events) and the checks of `roo-state-core/compat/extension`
 * as a module, with the extension's call shapes as in `extension-context.test.ts` (cases 1–29).
 * One `it` per case, named `case N`.
 */
import { afterEach, describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import type * as Ext from '../../compat/extension/index.js'
import type { ApiHandler, ApiMessage, ClineMessage, ContentBlockParam, HistoryItem, ModelInfo } from '../../compat/extension/index.js'
import { core, tempDir } from '../helpers'
import { commandSequence } from '../condense-cases'
import { assistant, contextOptions, ext, makeHandler, prices, SYSTEM_PROMPT, turns, user } from './extension-fixtures'

// ------------------------------------------------------------------ summarizeConversation

describe('summarizeConversation (src/core/condense)', () => {
  it('case 30: one message → not enough messages, no call', async () => {
    const m = makeHandler({ count: 100 })
    const msgs = [user('Only message', 1)]
    const r = await ext.summarizeConversation({ messages: msgs, apiHandler: m.handler, systemPrompt: SYSTEM_PROMPT, taskId: 'task-1' })
    expect(r.messages).toBe(msgs)
    expect([r.cost, r.summary, r.newContextTokens]).toEqual([0, '', undefined])
    expect(r.error).toBe('Not enough messages to condense context')
    expect(m.calls).toHaveLength(0)
  })

  it('case 31: seven messages → a user summary appended, everything tagged', async () => {
    const m = makeHandler({ count: 100 })
    const msgs = turns(7)
    const r = await ext.summarizeConversation({ messages: msgs, apiHandler: m.handler, systemPrompt: SYSTEM_PROMPT, taskId: 'task-1' })
    expect(r.error).toBeUndefined()
    expect(r.messages).toHaveLength(8)
    expect(r.messages.slice(0, 7).every((x) => x.condenseParent === r.condenseId)).toBe(true)
    const last = r.messages[7]
    expect(last).toMatchObject({ role: 'user', isSummary: true, condenseId: r.condenseId, ts: 8 })
    const content = last.content as ContentBlockParam[]
    expect(content).toHaveLength(1)
    expect(content[0].type).toBe('text')
    expect(content[0].text).toContain('## Conversation Summary')
    expect(content[0].text).toContain('This is a summary')
    expect(ext.getEffectiveApiHistory(r.messages)).toEqual([last])
    expect([r.cost, r.summary, r.newContextTokens]).toEqual([0.05, 'This is a summary', 100])
    expect(msgs[0].condenseParent).toBeUndefined()
  })

  it('case 32: command blocks of the first message become Active Workflows', async () => {
    const msgs = turns(5)
    msgs[0] = user('Hello <command name="prr">/prr #123</command>', 1)
    const r = await ext.summarizeConversation({ messages: msgs, apiHandler: makeHandler({ count: 100 }).handler, systemPrompt: SYSTEM_PROMPT, taskId: 'task-1' })
    const content = r.messages[r.messages.length - 1].content as ContentBlockParam[]
    expect(content).toHaveLength(2)
    expect(content[1].text).toContain('<system-reminder>')
    expect(content[1].text).toContain('Active Workflows')
    expect(content[1].text).toContain('<command name="prr">')
    const plain = await ext.summarizeConversation({ messages: turns(5), apiHandler: makeHandler({ count: 100 }).handler, systemPrompt: SYSTEM_PROMPT, taskId: 'task-1' })
    const one = plain.messages[plain.messages.length - 1].content as ContentBlockParam[]
    expect(one).toHaveLength(1)
    expect(String(one[0].text)).not.toContain('<system-reminder>')
  })

  it('case 33: an empty summary, an invalid handler', async () => {
    const msgs = turns(5)
    const empty = await ext.summarizeConversation({
      messages: msgs,
      apiHandler: makeHandler({ chunks: [{ type: 'usage', inputTokens: 10, outputTokens: 0, totalCost: 0.02 }] }).handler,
      systemPrompt: SYSTEM_PROMPT,
      taskId: 'task-1',
    })
    expect(empty.messages).toBe(msgs)
    expect([empty.cost, empty.summary, empty.newContextTokens]).toEqual([0.02, '', undefined])
    expect(empty.error).toBe('Failed to condense context')
    const invalid = { getModel: () => ({ id: 'x', info: {} }), countTokens: async () => 0 } as unknown as ApiHandler
    const bad = await ext.summarizeConversation({ messages: msgs, apiHandler: invalid, systemPrompt: SYSTEM_PROMPT, taskId: 'task-1' })
    expect(bad.cost).toBe(0)
    expect(bad.error).toBe('API handler for condensing context is invalid')
  })

  it('case 34: a summary among the last two → condensed recently', async () => {
    const msgs = [user('First message with /command', 1), user('Previous summary', 2, { isSummary: true })]
    const m = makeHandler()
    const r = await ext.summarizeConversation({ messages: msgs, apiHandler: m.handler, systemPrompt: SYSTEM_PROMPT, taskId: 'task-1' })
    expect(r.error).toBe('Context was condensed recently; skipping this attempt')
    expect(r.messages).toBe(msgs)
    expect(m.calls).toHaveLength(0)
  })

  it('case 35: the request (system prompt, instructions, custom prompt)', async () => {
    const msgs = [user('Initial ask', 1), ...turns(4).map((x) => ({ ...x, ts: (x.ts ?? 0) + 1 }))]
    const m = makeHandler({ count: 100 })
    await ext.summarizeConversation({ messages: msgs, apiHandler: m.handler, systemPrompt: SYSTEM_PROMPT, taskId: 'task-1' })
    const req = m.calls[0]
    expect(req.systemPrompt).toContain('You are a helpful AI assistant tasked with summarizing conversations.')
    expect(req.systemPrompt).toContain('CRITICAL: This is a summarization-only request')
    expect(req.systemPrompt).toContain('CRITICAL: This summarization request is a SYSTEM OPERATION')
    const lastReq = req.messages[req.messages.length - 1]
    expect(lastReq.role).toBe('user')
    expect(lastReq.content).toContain('Your task is to create a detailed summary of the conversation')
    expect(JSON.stringify(req.messages)).toContain('Initial ask')
    const custom = makeHandler({ count: 100 })
    await ext.summarizeConversation({ messages: msgs, apiHandler: custom.handler, systemPrompt: SYSTEM_PROMPT, taskId: 'task-1', customCondensingPrompt: 'Summarise in three bullet points.' })
    expect(custom.calls[0].messages[custom.calls[0].messages.length - 1].content).toBe('Summarise in three bullet points.')
    const blank = makeHandler({ count: 100 })
    await ext.summarizeConversation({ messages: msgs, apiHandler: blank.handler, systemPrompt: SYSTEM_PROMPT, taskId: 'task-1', customCondensingPrompt: '  ' })
    expect(blank.calls[0].messages[blank.calls[0].messages.length - 1].content).toContain('Your task is to create a detailed summary of the conversation')
  })

  it('case 36: toolUseToText and toolResultToText', () => {
    expect(ext.toolUseToText({ type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'test.ts', encoding: 'utf-8' } })).toBe('[Tool Use: read_file]\npath: test.ts\nencoding: utf-8')
    expect(ext.toolUseToText({ type: 'tool_use', id: 't2', name: 'execute_command', input: 'ls -la' })).toBe('[Tool Use: execute_command]\nls -la')
    expect(ext.toolUseToText({ type: 'tool_use', id: 't3', name: 'some_tool', input: {} })).toBe('[Tool Use: some_tool]\n')
    expect(ext.toolResultToText({ type: 'tool_result', tool_use_id: 't1', content: 'File contents here' })).toBe('[Tool Result]\nFile contents here')
    expect(ext.toolResultToText({ type: 'tool_result', tool_use_id: 't1', content: 'File not found', is_error: true })).toBe('[Tool Result (Error)]\nFile not found')
    expect(
      ext.toolResultToText({ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'First line' }, { type: 'text', text: 'Second line' }] }),
    ).toBe('[Tool Result]\nFirst line\nSecond line')
    expect(
      ext.toolResultToText({
        type: 'tool_result',
        tool_use_id: 't1',
        content: [{ type: 'text', text: 'Screenshot:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }],
      }),
    ).toBe('[Tool Result]\nScreenshot:\n[Image]')
    expect(ext.toolResultToText({ type: 'tool_result', tool_use_id: 't1' })).toBe('[Tool Result]')
  })

  it('case 37: extractCommandBlocks', () => {
    const m = user('Run <command name="prr">/prr #123</command> then <command name="mode">/mode code</command> please', 1)
    expect(ext.extractCommandBlocks(m)).toBe('<command name="prr">/prr #123</command>\n<command name="mode">/mode code</command>')
    expect(ext.extractCommandBlocks(user('no commands here', 1))).toBe('')
  })

  it('case 38: injectSyntheticToolResults', () => {
    const call = (id: string): ContentBlockParam => ({ type: 'tool_use', id, name: 'attempt_completion', input: { result: 'done' } })
    const orphan = ext.injectSyntheticToolResults([user('Go', 1), assistant([call('call-1')], 2)])
    expect(orphan).toHaveLength(3)
    expect(orphan[2].role).toBe('user')
    expect(orphan[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'call-1', content: 'Context condensation triggered. Tool execution deferred.' }])
    const answered = [
      user('Go', 1),
      assistant([call('a'), call('b')], 2),
      user([{ type: 'tool_result', tool_use_id: 'a', content: 'ok' }], 3),
      assistant('next', 4),
      user([{ type: 'tool_result', tool_use_id: 'b', content: 'ok' }], 5),
    ]
    expect(ext.injectSyntheticToolResults(answered)).toEqual(answered)
    expect(ext.injectSyntheticToolResults([])).toEqual([])
  })
})

// ------------------------------------------------------------------ metrics, merging, models, store, events

const apiReq = (info: Record<string, unknown>, ts = 1): ClineMessage => ({ type: 'say', say: 'api_req_started', text: JSON.stringify(info), ts })
const condenseRecord = (cost: number, newContextTokens: number, ts = 1): ClineMessage => ({
  type: 'say',
  say: 'condense_context',
  ts,
  contextCondense: { summary: 'summary', cost, newContextTokens, prevContextTokens: 1000 },
})

describe('metrics, merging, models, history store, events', () => {
  it('case 39: getApiMetrics sums records; the context is the last one', () => {
    const first = apiReq({ tokensIn: 100, tokensOut: 200, cacheWrites: 5, cacheReads: 10, cost: 0.005 })
    expect(ext.getApiMetrics([first])).toEqual({ totalTokensIn: 100, totalTokensOut: 200, totalCacheWrites: 5, totalCacheReads: 10, totalCost: 0.005, contextTokens: 300 })
    const second = apiReq({ tokensIn: 50, tokensOut: 150, cacheWrites: 3, cacheReads: 7, cost: 0.003 }, 2)
    expect(ext.getApiMetrics([first, second])).toEqual({ totalTokensIn: 150, totalTokensOut: 350, totalCacheWrites: 8, totalCacheReads: 17, totalCost: 0.008, contextTokens: 200 })
  })

  it('case 40: condensation records', () => {
    expect(ext.getApiMetrics([condenseRecord(0.002, 500), condenseRecord(0.003, 400, 2)])).toMatchObject({ totalCost: 0.005, contextTokens: 400 })
    expect(ext.getApiMetrics([apiReq({ tokensIn: 100, tokensOut: 200 }), condenseRecord(0.001, 500, 2)]).contextTokens).toBe(500)
    expect(
      ext.getApiMetrics([condenseRecord(0.001, 500), apiReq({ tokensIn: 100, tokensOut: 200 }, 2), condenseRecord(0.001, 400, 3), apiReq({ tokensIn: 50, tokensOut: 150 }, 4)]).contextTokens,
    ).toBe(200)
  })

  it('case 41: partial, null, invalid and no records', () => {
    const partial = [apiReq({ tokensIn: 100 }), apiReq({ tokensOut: 200 }, 2), apiReq({ cacheWrites: 5 }, 3), apiReq({ cacheReads: 10 }, 4), apiReq({ cost: 0.005 }, 5)]
    expect(ext.getApiMetrics(partial)).toEqual({ totalTokensIn: 100, totalTokensOut: 200, totalCacheWrites: 5, totalCacheReads: 10, totalCost: 0.005, contextTokens: 200 })
    expect(ext.getApiMetrics([apiReq({ tokensIn: null, tokensOut: null, cacheWrites: null, cacheReads: null, cost: null })]).contextTokens).toBe(0)
    const invalid = ext.getApiMetrics([{ type: 'say', say: 'api_req_started', text: '{"tokensIn": 100', ts: 1 }])
    expect([invalid.totalTokensIn, invalid.totalTokensOut, invalid.totalCost, invalid.contextTokens]).toEqual([0, 0, 0, 0])
    const none = ext.getApiMetrics([])
    expect(none).toEqual({ totalTokensIn: 0, totalTokensOut: 0, totalCacheWrites: undefined, totalCacheReads: undefined, totalCost: 0, contextTokens: 0 })
    expect(Object.keys(none)).toEqual(['totalTokensIn', 'totalTokensOut', 'totalCacheWrites', 'totalCacheReads', 'totalCost', 'contextTokens'])
  })

  it('case 42: combineCommandSequences', () => {
    const combined = ext.combineCommandSequences(commandSequence())
    expect(combined).toHaveLength(1)
    expect(combined[0].text).toBe(`ls\n${ext.COMMAND_OUTPUT_STRING}file1.txt\nfile2.txt`)
    const request = { serverName: 'docs-server', toolName: 'lookup', arguments: { q: 'napi' } }
    const mcp = ext.combineCommandSequences([
      { type: 'ask', ask: 'use_mcp_server', text: JSON.stringify(request), ts: 10 },
      { type: 'say', say: 'mcp_server_response', text: 'Response data', ts: 11 },
    ])
    expect(mcp).toHaveLength(1)
    expect(mcp[0].text).toBe(JSON.stringify({ ...request, response: 'Response data' }))
  })

  it('case 43: mergeConsecutiveApiMessages', () => {
    const merged = ext.mergeConsecutiveApiMessages([user('A', 1), user([{ type: 'text', text: 'B' }], 2), assistant('C', 3)])
    expect(merged).toHaveLength(2)
    expect(merged[0].content).toEqual([{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }])
    const intoSummary = ext.mergeConsecutiveApiMessages([user('Summary', 1, { isSummary: true }), user('After', 2)])
    expect(intoSummary).toHaveLength(1)
    expect(intoSummary[0].isSummary).toBe(true)
    expect(intoSummary[0].content).toEqual([{ type: 'text', text: 'Summary' }, { type: 'text', text: 'After' }])
    expect(ext.mergeConsecutiveApiMessages([user('Before', 1), user('Summary', 2, { isSummary: true })])).toHaveLength(2)
  })

  it('case 44: getModelMaxOutputTokens', () => {
    const max = ext.getModelMaxOutputTokens
    expect(max({ modelId: 'claude-3-7-sonnet', model: { maxTokens: 8192, contextWindow: 200000 } })).toBe(8192)
    const budget: ModelInfo = { contextWindow: 200000, maxTokens: 64000, requiredReasoningBudget: true }
    expect(max({ modelId: 'claude-3-7-sonnet:thinking', model: budget, settings: { modelMaxTokens: 32000 } })).toBe(32000)
    expect(max({ modelId: 'claude-3-7-sonnet:thinking', model: budget, settings: { modelMaxTokens: 4000 } })).toBe(4000)
    expect(max({ modelId: 'claude-3-7-sonnet:thinking', model: budget, settings: {} })).toBe(ext.DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS)
    expect(max({ modelId: 'some-local-model', model: { contextWindow: 200000 } })).toBe(ext.ANTHROPIC_DEFAULT_MAX_TOKENS)
    expect(max({ modelId: 'claude-sonnet-4', model: { contextWindow: 200000, maxTokens: 64000, supportsReasoningBudget: true }, settings: { enableReasoningEffort: false } })).toBe(8192)
    expect(max({ modelId: 'gemini-2.5-pro', model: { contextWindow: 1048576, maxTokens: 65535, supportsReasoningBudget: true } })).toBe(65535)
    expect(max({ modelId: 'gpt-4', model: { contextWindow: 100000, maxTokens: 50000 } })).toBe(20000)
    expect(max({ modelId: 'gpt-4', model: { contextWindow: 100000, maxTokens: 20000 } })).toBe(20000)
    for (const modelId of ['gpt-5', 'gpt-5-mini', 'GPT-5-Codex', 'openai/gpt-5.1']) {
      expect(max({ modelId, model: { contextWindow: 200000, maxTokens: 128000 } })).toBe(128000)
    }
    expect(max({ modelId: 'gpt-4.1', model: { contextWindow: 200000, maxTokens: 128000 } })).toBe(40000)
  })

  describe('case 45: TaskHistoryStore', () => {
    const stores: Ext.TaskHistoryStore[] = []
    afterEach(() => {
      for (const s of stores.splice(0)) s.dispose()
    })
    const item = (id: string, ts: number, extra: Partial<HistoryItem> = {}): HistoryItem => ({
      id,
      number: 1,
      ts,
      task: `Task ${id}`,
      tokensIn: 0,
      tokensOut: 0,
      totalCost: 0,
      ...extra,
    })

    it('case 45: getAll order, upsert merge, no index, migration', async () => {
      const root = tempDir('compat-ext-store-')
      const store = new ext.TaskHistoryStore(root)
      stores.push(store)
      await store.initialize()
      await store.initialized
      await store.upsert(item('old', 1000))
      await store.upsert(item('new', 3000))
      await store.upsert(item('mid', 2000))
      expect(store.getAll().map((i) => i.id)).toEqual(['new', 'mid', 'old'])

      await store.upsert(item('parent', 4000, { tokensIn: 500, tokensOut: 200 }))
      await store.upsert({ id: 'parent', ts: 4000, status: 'delegated', delegatedToId: 'child-1', awaitingChildId: 'child-1', childIds: ['child-1'] })
      const parent = store.get('parent')!
      expect([parent.tokensIn, parent.tokensOut, parent.status, parent.childIds]).toEqual([500, 200, 'delegated', ['child-1']])
      const onDisk = JSON.parse(fs.readFileSync(path.join(root, 'tasks', 'parent', 'history_item.json'), 'utf8'))
      expect(onDisk).toMatchObject({ tokensIn: 500, tokensOut: 200, status: 'delegated' })

      // Today's store keeps no index: flushing writes nothing.
      await store.flushIndex()
      expect(fs.existsSync(path.join(root, 'tasks', '_index.json'))).toBe(false)

      fs.mkdirSync(path.join(root, 'tasks', 'kept'), { recursive: true })
      fs.writeFileSync(path.join(root, 'tasks', 'kept', 'history_item.json'), JSON.stringify(item('kept', 500, { task: 'Original task text', tokensIn: 999 })))
      await store.migrateFromGlobalState([item('no-folder', 100), item('kept', 500, { task: 'Replacement text', tokensIn: 1 })])
      expect(fs.existsSync(path.join(root, 'tasks', 'no-folder'))).toBe(false)
      expect(store.get('no-folder')).toBeUndefined()
      const kept = JSON.parse(fs.readFileSync(path.join(root, 'tasks', 'kept', 'history_item.json'), 'utf8'))
      expect([kept.task, kept.tokensIn]).toEqual(['Original task text', 999])

      // A second store starts from the folders. The parent waits on a child that does not exist:
      // the start-up repair sets it active again.
      const again = new ext.TaskHistoryStore(root)
      stores.push(again)
      await again.initialize()
      expect(again.getAll().map((i) => i.id)).toEqual(['parent', 'new', 'mid', 'old', 'kept'])
      expect(again.get('parent')).toMatchObject({ status: 'active' })
      expect(again.get('parent')!.awaitingChildId).toBeUndefined()
    })
  })

  it('case 46: isContextManagementEvent', () => {
    for (const v of ['condense_context', 'condense_context_error', 'sliding_window_truncation']) expect(ext.isContextManagementEvent(v)).toBe(true)
    for (const v of ['text', 'error', null, undefined]) expect(ext.isContextManagementEvent(v)).toBe(false)
    expect(ext.CONTEXT_MANAGEMENT_EVENTS).toHaveLength(3)
  })
})

// ------------------------------------------------------------------ the module itself

describe('compat/extension as a module', () => {
  it('the ESM entry exports the same functions as the CommonJS one', async () => {
    const esm = (await import('../../compat/extension/index.mjs' as string)) as typeof Ext
    const names = Object.keys(ext).sort()
    expect(Object.keys(esm).filter((k) => k !== 'default').sort()).toEqual(names)
    for (const k of names) expect((esm as Record<string, unknown>)[k]).toBe((ext as Record<string, unknown>)[k])
  })

  it('constants agree with the native rules', () => {
    expect(core.getAllowedTokens(100000)).toBe(100000 * (1 - ext.TOKEN_BUFFER_PERCENTAGE) - ext.ANTHROPIC_DEFAULT_MAX_TOKENS)
    expect(core.getEffectiveThreshold(80, { p: ext.MIN_CONDENSE_THRESHOLD }, 'p').threshold).toBe(ext.MIN_CONDENSE_THRESHOLD)
    expect(core.getEffectiveThreshold(80, { p: ext.MAX_CONDENSE_THRESHOLD }, 'p').threshold).toBe(ext.MAX_CONDENSE_THRESHOLD)
    expect(core.getEffectiveThreshold(80, { p: ext.MIN_CONDENSE_THRESHOLD - 1 }, 'p').threshold).toBe(80)
    expect(ext.N_MESSAGES_TO_KEEP).toBe(3)
  })

  it('sync functions are sync, async ones return promises', () => {
    expect(ext.truncateConversation(turns(3), 0.5, 't')).not.toBeInstanceOf(Promise)
    expect(ext.getApiMetrics([])).not.toBeInstanceOf(Promise)
    expect(ext.calculateApiCostOpenAI(prices, 1, 1)).not.toBeInstanceOf(Promise)
    const p = ext.countTokens([])
    expect(p).toBeInstanceOf(Promise)
    return p
  })

  it('async functions reject on bad input instead of throwing', async () => {
    const bad = 'not blocks' as unknown as ContentBlockParam[]
    let thrown: unknown
    let promise: Promise<number> | undefined
    try {
      promise = ext.countTokens(bad)
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeUndefined()
    await expect(promise).rejects.toThrow(/INVALID_ARGUMENT/)
    await expect(ext.tiktoken(bad)).rejects.toThrow(/INVALID_ARGUMENT/)
    await expect(ext.countTokens(undefined as unknown as ContentBlockParam[])).rejects.toThrow(TypeError)
  })

  it('a null entry in the history is truncated as the extension spreads it', () => {
    const msgs = [user('a', 1), null as unknown as ApiMessage, assistant('b', 2), user('c', 3), assistant('d', 4), user('e', 5)]
    const r = ext.truncateConversation(msgs, 0.5, 't')
    expect(r.messagesRemoved).toBe(2)
    expect(r.messages[1]).toEqual({ truncationParent: r.truncationId })
    expect(r.messages[3].isTruncationMarker).toBe(true)
    expect(r.messages[4]).toBe(msgs[3])
  })

  it('sync functions given undefined throw a TypeError naming the argument', () => {
    const none = undefined as unknown as ApiMessage[]
    for (const f of [ext.getEffectiveApiHistory, ext.getMessagesSinceLastSummary, ext.cleanupAfterTruncation, ext.injectSyntheticToolResults]) {
      expect(() => f(none)).toThrow(TypeError)
      expect(() => f(none)).toThrow('INVALID_ARGUMENT: messages: expected an array, got undefined')
    }
    expect(() => ext.truncateConversation(none, 0.5, 't')).toThrow(TypeError)
    expect(() => ext.getApiMetrics(undefined as unknown as ClineMessage[])).toThrow(TypeError)
  })

  it('token counts that are not numbers follow JavaScript arithmetic (NaN stays a number)', () => {
    const r = ext.calculateApiCostAnthropic(prices, undefined as unknown as number, 500)
    expect(Number.isNaN(r.totalCost)).toBe(true)
    expect(Number.isNaN(r.totalInputTokens)).toBe(true)
    expect(ext.calculateApiCostAnthropic(prices, null as unknown as number, 0).totalCost).toBe(0)
    // Math.max(0, NaN) is NaN in the OpenAI formula too.
    expect(Number.isNaN(ext.calculateApiCostOpenAI(prices, undefined as unknown as number, 500).totalCost)).toBe(true)
  })

  it('an invalid profile threshold warns as the extension does', async () => {
    const warnings: unknown[] = []
    const original = console.warn
    console.warn = (...args: unknown[]) => void warnings.push(args.join(' '))
    try {
      const r = await ext.manageContext(contextOptions(1000, makeHandler().handler, { autoCondenseContext: true, profileThresholds: { p1: 150 }, currentProfileId: 'p1' }))
      expect(r).not.toHaveProperty('thresholdWarning')
    } finally {
      console.warn = original
    }
    expect(warnings).toHaveLength(1)
    expect(String(warnings[0])).toContain('150')
  })

  it('estimateTokenCount uses the handler, convertToolBlocksToText keeps strings', async () => {
    const m = makeHandler({ count: 42 })
    expect(await ext.estimateTokenCount([{ type: 'text', text: 'hi' }], m.handler)).toBe(42)
    expect(await ext.estimateTokenCount([], m.handler)).toBe(0)
    expect(m.counted).toHaveLength(1)
    expect(ext.convertToolBlocksToText('plain')).toBe('plain')
    expect(ext.convertToolBlocksToText([{ type: 'tool_use', id: 'x', name: 'list_files', input: { path: '.' } }])).toEqual([
      { type: 'text', text: '[Tool Use: list_files]\npath: .' },
    ])
  })

  it('hasTokenUsageChanged / hasToolUsageChanged', () => {
    const usage = ext.getApiMetrics([apiReq({ tokensIn: 1, tokensOut: 2 })])
    expect(ext.hasTokenUsageChanged(usage)).toBe(true)
    expect(ext.hasTokenUsageChanged(usage, { ...usage })).toBe(false)
    expect(ext.hasTokenUsageChanged(usage, { ...usage, contextTokens: 4 })).toBe(true)
    expect(ext.hasToolUsageChanged({})).toBe(false)
    expect(ext.hasToolUsageChanged({ read_file: { attempts: 1, failures: 0 } })).toBe(true)
    expect(ext.hasToolUsageChanged({ read_file: { attempts: 1, failures: 0 } }, { read_file: { attempts: 1, failures: 0 } })).toBe(false)
    expect(ext.hasToolUsageChanged({ read_file: { attempts: 2, failures: 0 } }, { read_file: { attempts: 1, failures: 0 } })).toBe(true)
  })
})
