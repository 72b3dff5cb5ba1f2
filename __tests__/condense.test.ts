import { describe, expect, it } from 'vitest'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { core, haveShared, readJson, realTasks, PARENT } from './helpers'
import { ALLOWED_TOKENS_BOUNDARIES, commandSequence, contextDefaults, fiveEndingEmpty, LONG_CONTEXT, PRICES, summaryStream, TIKTOKEN_TEXT_CASES, WILL_MANAGE_CONTEXT_CASES } from './condense-cases'
import type { ApiMessage, ApiStreamChunk, ClineMessage, ManageContextOptions } from '../index.js'

const prices = PRICES

const u = (content: string, ts: number): ApiMessage => ({ role: 'user', content, ts })
const a = (content: string, ts: number): ApiMessage => ({ role: 'assistant', content, ts })
const conversation = (n: number): ApiMessage[] =>
  Array.from({ length: n }, (_, i) => (i % 2 === 0 ? u(`Message ${i + 1}`, i + 1) : a(`Message ${i + 1}`, i + 1)))

/** A handler like the extension's tests use: a fixed stream and a fixed token count. */
function mockHandler(opts: { chunks?: unknown[]; throws?: string; count?: number } = {}) {
  const calls: Array<{ systemPrompt: string; messages: Array<{ role: string; content: unknown }>; metadata: unknown }> = []
  const chunks = opts.chunks ?? summaryStream()
  return {
    calls,
    handler: {
      async *createMessage(systemPrompt: string, messages: Array<{ role: string; content: unknown }>, metadata?: unknown) {
        calls.push({ systemPrompt, messages, metadata })
        // Chunks as given, malformed ones included (the handler must cope with what a provider sends).
        for (const c of chunks) yield c as ApiStreamChunk
        if (opts.throws) throw new Error(opts.throws)
      },
      ...(opts.count === undefined ? {} : { countTokens: async () => opts.count as number }),
      getModel: () => ({ id: 'mock', info: { supportsImages: true } }),
    },
  }
}

describe('cost (§10 cases 1–8)', () => {
  it('Anthropic: exact floats', () => {
    expect(core.calculateApiCostAnthropic(prices, 1000, 500)).toEqual({
      totalInputTokens: 1000,
      totalOutputTokens: 500,
      totalCost: 0.0105,
    })
    const withWrites = core.calculateApiCostAnthropic(prices, 1000, 500, 2000)
    expect(withWrites.totalCost).toBe(0.018000000000000002)
    expect(withWrites.totalInputTokens).toBe(3000)
    expect(core.calculateApiCostAnthropic(prices, 1000, 500, undefined, 3000).totalCost).toBe(0.0114)
    const both = core.calculateApiCostAnthropic(prices, 1000, 500, 2000, 3000)
    expect([both.totalCost, both.totalInputTokens]).toEqual([0.0189, 6000])
    expect(core.calculateApiCostAnthropic({}, 1000, 500, 2000, 3000).totalCost).toBe(0)
    expect(core.calculateApiCostAnthropic({ inputPrice: 3, outputPrice: 15 }, 1000, 500, 2000, 3000).totalCost).toBe(0.0105)
  })

  it('OpenAI: cache included in input', () => {
    const r = core.calculateApiCostOpenAI(prices, 3000, 500, 2000)
    expect(r.totalCost).toBeCloseTo(0.018, 12)
    expect(r.totalInputTokens).toBe(3000)
    expect(core.calculateApiCostOpenAI(prices, 4000, 500, undefined, 3000).totalCost).toBe(0.0114)
    expect(core.calculateApiCostOpenAI(prices, 6000, 500, 2000, 3000).totalCost).toBe(0.0189)
    expect(core.calculateApiCostOpenAI({}, 1000, 500, 2000, 3000)).toEqual({
      totalInputTokens: 1000,
      totalOutputTokens: 500,
      totalCost: 0,
    })
    expect(core.calculateApiCostOpenAI(prices, 0, 0).totalCost).toBe(0)
  })

  it('long-context pricing and service tiers', () => {
    const lc = LONG_CONTEXT
    expect(core.calculateApiCostOpenAI({ ...prices, longContextPricing: lc }, 272000, 1000, undefined, 100000).totalCost).toBeCloseTo(0.561, 9)
    const b = { inputPrice: 2.5, outputPrice: 15, cacheWritesPrice: 5, cacheReadsPrice: 0.25, longContextPricing: lc }
    expect(core.calculateApiCostOpenAI(b, 300000, 1000, 20000, 100000).totalCost).toBeCloseTo(1.1725, 9)
    const tiers = { inputPrice: 5, outputPrice: 30, cacheReadsPrice: 0.5, longContextPricing: { ...lc, appliesToServiceTiers: ['default', 'flex'] } }
    expect(core.calculateApiCostOpenAI(tiers, 300000, 1000, undefined, 100000, 'priority').totalCost).toBeCloseTo(1.08, 9)
  })
})

describe('tokens (§10 cases 9–10)', () => {
  it('tiktoken and countTokens', async () => {
    for (const [content, expected] of TIKTOKEN_TEXT_CASES) expect([content, await core.tiktoken(content)]).toEqual([content, expected])
    const image = (data?: string) => ({ type: 'image', source: data === undefined ? { type: 'base64' } : { type: 'base64', media_type: 'image/png', data } })
    expect(await core.tiktoken([image('X'.repeat(1000))])).toBe(48)
    expect(await core.countTokens([image('A'.repeat(96))])).toBe(15)
    expect(await core.countTokens([image()])).toBe(450)
    expect(core.countTokensSync([{ type: 'tool_use', id: 't', name: 'read_file', input: { path: 'a.ts' } }])).toBeGreaterThan(0)
  })
})

describe('truncation (§10 cases 11–16)', () => {
  it('hides an even number of messages behind a marker', () => {
    expect(core.truncateConversation(conversation(3), 0.5, 't').messagesRemoved).toBe(0)
    const r = core.truncateConversation(conversation(5), 0.5, 't')
    expect(r.messagesRemoved).toBe(2)
    expect(r.messages).toHaveLength(6)
    expect(r.messages[1].truncationParent).toBe(r.truncationId)
    expect(r.messages[2].truncationParent).toBe(r.truncationId)
    expect(r.messages[3]).toMatchObject({ role: 'user', isTruncationMarker: true, truncationId: r.truncationId })
    expect(r.messages[4].truncationParent).toBeUndefined()
    expect(Object.keys(r.messages[1])).toEqual(['role', 'content', 'ts', 'truncationParent'])
    expect(core.truncateConversation(conversation(7), 0.3, 't').messagesRemoved).toBe(0)
    const four = core.truncateConversation(conversation(4), 1, 't')
    expect([four.messagesRemoved, four.messages.length, four.messages[3].isTruncationMarker]).toEqual([2, 5, true])
  })

  it('marker text, effective history and cleanup', () => {
    const msgs = [u('Initial task', 1000), ...Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a(`r${i}`, 1100 + 100 * i) : u(`m${i}`, 1100 + 100 * i)))]
    const r = core.truncateConversation(msgs, 0.5, 't')
    expect(r.messagesRemoved).toBe(4)
    expect(r.messages[5]).toMatchObject({ content: '[Sliding window truncation: 4 messages hidden to reduce context]', ts: 1499 })
    const effective = core.getEffectiveApiHistory(r.messages)
    expect(effective).toHaveLength(8)
    expect(effective[0].content).toBe('Initial task')
    expect(effective[1].isTruncationMarker).toBe(true)
    const withoutMarker = r.messages.filter((m) => !m.isTruncationMarker)
    expect(core.getEffectiveApiHistory(withoutMarker)).toHaveLength(11)
    expect(core.cleanupAfterTruncation(withoutMarker).every((m) => m.truncationParent === undefined)).toBe(true)
  })

  it('older releases delete instead', () => {
    const r = core.truncateConversation(conversation(5), 0.5, 't', { era: '3.30.0' })
    expect(r.messages).toHaveLength(3)
    expect(r.truncationId).toBeUndefined()
  })
})

const fiveWithEmptyLast = (): ApiMessage[] => fiveEndingEmpty()

function manageOptions(totalTokens: number, extra: Partial<ManageContextOptions> = {}): ManageContextOptions {
  return { ...contextDefaults(), messages: fiveWithEmptyLast(), totalTokens, systemPrompt: 'System prompt', ...extra }
}

describe('manageContext / willManageContext (§10 cases 17–22)', () => {
  it('17: nothing below the limit, truncation above', async () => {
    const o = manageOptions(59999)
    expect(await core.manageContext(o)).toEqual({ messages: o.messages, summary: '', cost: 0, prevContextTokens: 59999 })
    for (const total of [60001, 69999, 70001]) {
      const r = await core.manageContext(manageOptions(total))
      expect(r).toMatchObject({ messagesRemoved: 2, summary: '', cost: 0, prevContextTokens: total })
      expect(r.messages).toHaveLength(6)
    }
  })

  it('18: allowedTokens boundaries', async () => {
    for (const [contextWindow, maxTokens, below, above] of ALLOWED_TOKENS_BOUNDARIES) {
      expect((await core.manageContext(manageOptions(below, { contextWindow, maxTokens }))).messagesRemoved).toBeUndefined()
      expect((await core.manageContext(manageOptions(above, { contextWindow, maxTokens }))).messagesRemoved).toBe(2)
    }
    expect(core.getAllowedTokens(100000)).toBe(81808)
  })

  it('19: summarises at the threshold with the JS handler', async () => {
    const { handler, calls } = mockHandler()
    const r = await core.manageContext(manageOptions(60000, { autoCondenseContext: true, autoCondenseContextPercent: 50, apiHandler: handler }))
    expect(calls).toHaveLength(1)
    expect(r).toMatchObject({ prevContextTokens: 60000, summary: 'This is a summary', cost: 0.05 })
    const o = manageOptions(40000, { autoCondenseContext: true, autoCondenseContextPercent: 50, apiHandler: mockHandler().handler })
    expect(await core.manageContext(o)).toEqual({ messages: o.messages, summary: '', cost: 0, prevContextTokens: 40000 })
  })

  it('20: profile thresholds, fallback to truncation', async () => {
    let m = mockHandler()
    await core.manageContext(manageOptions(65000, { autoCondenseContext: true, profileThresholds: { p1: 60 }, currentProfileId: 'p1', apiHandler: m.handler }))
    expect(m.calls).toHaveLength(1)
    m = mockHandler()
    await core.manageContext(manageOptions(80000, { autoCondenseContext: true, autoCondenseContextPercent: 75, profileThresholds: { p1: -1 }, currentProfileId: 'p1', apiHandler: m.handler }))
    expect(m.calls).toHaveLength(1)
    m = mockHandler()
    await core.manageContext(manageOptions(50000, { autoCondenseContext: true, autoCondenseContextPercent: 80, profileThresholds: { other: 40 }, currentProfileId: 'p1', apiHandler: m.handler }))
    expect(m.calls).toHaveLength(0)
    const failing = mockHandler({ chunks: [], throws: 'boom' })
    const r = await core.manageContext(manageOptions(70001, { autoCondenseContext: true, apiHandler: failing.handler }))
    expect(r).toMatchObject({ messagesRemoved: 2, error: 'Condensing API call failed: boom', errorKey: 'condense_api_failed' })
    expect(r.messages).toHaveLength(6)
    m = mockHandler()
    await core.manageContext(manageOptions(70001, { apiHandler: m.handler }))
    expect(m.calls).toHaveLength(0)
    const warned = await core.manageContext(manageOptions(1000, { autoCondenseContext: true, profileThresholds: { p1: 150 }, currentProfileId: 'p1' }))
    expect(warned.thresholdWarning).toContain('150')
    expect(core.getEffectiveThreshold(80, { p1: 3 }, 'p1')).toMatchObject({ threshold: 80, source: 'invalidProfile' })
  })

  it('21: willManageContext', () => {
    for (const { expected, ...c } of WILL_MANAGE_CONTEXT_CASES) {
      expect([c, core.willManageContext({ ...c, contextWindow: 100000, maxTokens: 30000, currentProfileId: 'p1' })]).toEqual([c, expected])
    }
  })

  it('22: tokens after truncation; the decision agrees', async () => {
    const o = manageOptions(70001)
    const r = await core.manageContext(o)
    expect(r.newContextTokensAfterTruncation!).toBeGreaterThanOrEqual(await core.countTokens([{ type: 'text', text: 'System prompt' }]))
    expect(r.newContextTokensAfterTruncation!).toBeLessThan(r.prevContextTokens)
    const d = core.decideContext(o)
    expect(d.action).toBe('truncate')
    expect(d.truncation!.newContextTokensAfterTruncation).toBe(r.newContextTokensAfterTruncation)
    expect(core.decideContext(manageOptions(60000, { autoCondenseContext: true, autoCondenseContextPercent: 50 })).action).toBe('summarize')
  })
})

describe('effective history and summaries (§10 cases 23–38)', () => {
  const summary = (text: string, ts: number, id: string): ApiMessage => ({ role: 'user', content: [{ type: 'text', text }], ts, isSummary: true, condenseId: id })

  it('23–29', () => {
    const base = [{ ...u('First', 1), condenseParent: 'X' }, { ...a('Second', 2), condenseParent: 'X' }, { ...u('Third', 3), condenseParent: 'X' }, summary('Summary', 4, 'X')]
    expect(core.getEffectiveApiHistory(base)).toEqual([base[3]])
    expect(core.getEffectiveApiHistory(base.slice(0, 3))).toHaveLength(3)
    const rewind = [...base, { ...u('Third message', 5), condenseParent: 'X' }, { ...a('Third response', 6), condenseParent: 'X' }]
    expect(core.getEffectiveApiHistory(rewind).map((m) => m.ts)).toEqual([4, 5, 6])
    const orphan = [summary('S', 3, 'c1'), { role: 'user', content: [{ type: 'text', text: 'Note' }, { type: 'tool_result', tool_use_id: 'gone', content: 'x' }], ts: 4 }]
    expect(core.getEffectiveApiHistory(orphan)[1].content).toEqual([{ type: 'text', text: 'Note' }])
    const cleaned = core.cleanupAfterTruncation([{ ...u('a', 1), condenseParent: 'gone' }, { ...u('b', 2), condenseParent: 'c1' }, summary('S', 3, 'c1')])
    expect(cleaned[0].condenseParent).toBeUndefined()
    expect(cleaned[1].condenseParent).toBe('c1')
    const s = { ...u('summary', 3), isSummary: true }
    expect(core.getMessagesSinceLastSummary([u('1', 1), a('2', 2), s, a('4', 4), u('5', 5)])).toHaveLength(3)
    expect(core.getMessagesSinceLastSummary([])).toEqual([])
  })

  it('30–35 with the JS handler', async () => {
    const one = await core.summarizeConversation({ messages: [u('Only', 1)], systemPrompt: 'S', taskId: 't', apiHandler: mockHandler().handler })
    expect(one).toMatchObject({ summary: '', cost: 0, errorKey: 'condense_not_enough_messages' })
    expect(one.newContextTokens).toBeUndefined()

    const m = mockHandler({ count: 100 })
    const msgs = conversation(7)
    msgs[0].content = 'Hello <command name="prr">/prr #123</command>'
    const r = await core.summarizeConversation({ messages: msgs, systemPrompt: 'S', taskId: 't', apiHandler: m.handler })
    expect(r.messages).toHaveLength(8)
    expect(r.messages.slice(0, 7).every((x) => x.condenseParent === r.condenseId)).toBe(true)
    const last = r.messages[7]
    expect(last).toMatchObject({ role: 'user', isSummary: true, condenseId: r.condenseId, ts: 8 })
    const content = last.content as Array<{ text: string }>
    expect(content[0].text).toContain('## Conversation Summary')
    expect(content[0].text).toContain('This is a summary')
    expect(content[1].text).toContain('<command name="prr">')
    expect([r.cost, r.summary, r.newContextTokens, r.error]).toEqual([0.05, 'This is a summary', 100, undefined])
    expect(core.getEffectiveApiHistory(r.messages)).toEqual([last])
    const req = m.calls[0]
    expect(req.systemPrompt).toContain('You are a helpful AI assistant tasked with summarizing conversations.')
    expect(req.messages.at(-1)!.content).toContain('Your task is to create a detailed summary of the conversation')

    const empty = await core.summarizeConversation({ messages: conversation(5), systemPrompt: 'S', taskId: 't', apiHandler: mockHandler({ chunks: [{ type: 'usage', inputTokens: 0, outputTokens: 0, totalCost: 0.02 }] }).handler })
    expect(empty).toMatchObject({ cost: 0.02, summary: '', errorKey: 'condense_failed' })
    const invalid = await core.summarizeConversation({ messages: conversation(5), systemPrompt: 'S', taskId: 't' })
    expect(invalid).toMatchObject({ cost: 0, errorKey: 'condense_handler_invalid' })
    const recent = await core.summarizeConversation({ messages: [u('First message with /command', 1), { ...u('Previous summary', 2), isSummary: true }], systemPrompt: 'S', taskId: 't', apiHandler: mockHandler().handler })
    expect(recent.errorKey).toBe('condensed_recently')
    const custom = mockHandler()
    await core.summarizeConversation({ messages: conversation(5), systemPrompt: 'S', taskId: 't', apiHandler: custom.handler, customCondensingPrompt: 'Custom prompt' })
    expect(custom.calls[0].messages.at(-1)!.content).toBe('Custom prompt')
  })

  it('an aborted handler call rejects with ABORTED', async () => {
    const ctrl = new AbortController()
    const handler = {
      async *createMessage() {
        yield { type: 'text', text: 'partial' }
        await new Promise((resolve) => setTimeout(resolve, 60_000))
      },
    }
    const p = core.summarizeConversation({ messages: conversation(5), systemPrompt: 'S', taskId: 't', apiHandler: handler, signal: ctrl.signal })
    setTimeout(() => ctrl.abort(), 50)
    await expect(p).rejects.toMatchObject({ code: 'ABORTED' })
  })

  it('36–38 helpers', () => {
    expect(core.toolUseToText({ type: 'tool_use', name: 'read_file', input: { path: 'test.ts', encoding: 'utf-8' } })).toBe('[Tool Use: read_file]\npath: test.ts\nencoding: utf-8')
    expect(core.toolResultToText({ type: 'tool_result', content: 'File not found', is_error: true })).toBe('[Tool Result (Error)]\nFile not found')
    expect(core.extractCommandBlocks(u('<command name="prr">/prr #123</command> x <command name="mode">/mode code</command>', 1))).toBe(
      '<command name="prr">/prr #123</command>\n<command name="mode">/mode code</command>',
    )
    const injected = core.injectSyntheticToolResults([u('go', 1), { role: 'assistant', content: [{ type: 'tool_use', id: 'o', name: 'x', input: {} }], ts: 2 }])
    expect(injected[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'o', content: 'Context condensation triggered. Tool execution deferred.' }])
  })
})

describe('metrics and the rest (§10 cases 39–46)', () => {
  const req = (info: object): ClineMessage => ({ type: 'say', say: 'api_req_started', text: JSON.stringify(info), ts: 1 })
  const condense = (cost: number, newContextTokens: number): ClineMessage => ({ type: 'say', say: 'condense_context', ts: 1, contextCondense: { summary: 's', cost, newContextTokens, prevContextTokens: 1000 } })

  it('getApiMetrics', () => {
    const one = req({ tokensIn: 100, tokensOut: 200, cacheWrites: 5, cacheReads: 10, cost: 0.005 })
    expect(core.getApiMetrics([one])).toEqual({ totalTokensIn: 100, totalTokensOut: 200, totalCacheWrites: 5, totalCacheReads: 10, totalCost: 0.005, contextTokens: 300 })
    expect(core.getApiMetrics([one, req({ tokensIn: 50, tokensOut: 150, cacheWrites: 3, cacheReads: 7, cost: 0.003 })])).toEqual({
      totalTokensIn: 150, totalTokensOut: 350, totalCacheWrites: 8, totalCacheReads: 17, totalCost: 0.008, contextTokens: 200,
    })
    expect(core.getApiMetrics([condense(0.002, 500), condense(0.003, 400)])).toMatchObject({ totalCost: 0.005, contextTokens: 400 })
    expect(core.consolidateTokenUsage([req({ tokensIn: 100 }), req({ tokensOut: 200 }), req({ cost: 0.005 })]).contextTokens).toBe(200)
    expect(core.getApiMetrics([{ type: 'say', say: 'api_req_started', text: '{bad', ts: 1 }])).toEqual({ totalTokensIn: 0, totalTokensOut: 0, totalCost: 0, contextTokens: 0 })
  })

  it('combineCommandSequences, mergeConsecutiveApiMessages, getModelMaxOutputTokens, events', () => {
    const combined = core.combineCommandSequences(commandSequence())
    expect(combined).toHaveLength(1)
    expect(combined[0].text).toBe('ls\nOutput:file1.txt\nfile2.txt')
    const merged = core.mergeConsecutiveApiMessages([u('A', 1), { role: 'user', content: [{ type: 'text', text: 'B' }], ts: 2 }, a('C', 3)])
    expect(merged).toHaveLength(2)
    expect(merged[0].content).toEqual([{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }])
    expect(core.getModelMaxOutputTokens({ modelId: 'gpt-4', model: { maxTokens: 50000, contextWindow: 100000 } })).toBe(20000)
    expect(core.getModelMaxOutputTokens({ modelId: 'gpt-5-mini', model: { maxTokens: 128000, contextWindow: 200000 } })).toBe(128000)
    expect(core.getModelMaxOutputTokens({ modelId: 'x', model: { contextWindow: 1000 }, format: 'openai' })).toBeUndefined()
    for (const v of ['condense_context', 'condense_context_error', 'sliding_window_truncation']) expect(core.isContextManagementEvent(v)).toBe(true)
    for (const v of ['text', 'error', null, undefined]) expect(core.isContextManagementEvent(v)).toBe(false)
    expect(core.contextManagementEvents()).toHaveLength(3)
  })

  it('bad input is a coded error', () => {
    expect(() => core.getApiMetrics('nope' as unknown as ClineMessage[])).toThrow(/INVALID_ARGUMENT/)
    expect(() => core.truncateConversation(conversation(3), 0.5, 't', { era: 'yesterday' })).toThrow(/INVALID_ARGUMENT/)
  })
})

describe('what a task\'s records tell a replay', () => {
  const started = (text: string, ts: number) => ({ ts, type: 'say', say: 'api_req_started', text }) as ClineMessage

  it('eraOfRecords: records carrying the request are of the 3.28 era; others tell nothing', () => {
    expect(core.eraOfRecords([started('{"request":"<task>go</task>","tokensIn":3}', 1)])).toBe('3.28.0')
    expect(core.eraOfRecords([started('{"apiProtocol":"anthropic","tokensIn":3}', 1)])).toBeUndefined()
    expect(core.eraOfRecords([{ ts: 1, type: 'say', say: 'text', text: '{"request":1}' } as ClineMessage])).toBeUndefined()
    expect(core.eraOfRecords([])).toBeUndefined()
  })

  it('apiProtocolOfRecords: the last request record decides, anthropic by default', () => {
    expect(core.apiProtocolOfRecords([started('{"apiProtocol":"anthropic"}', 1), started('{"apiProtocol":"openai"}', 2)])).toBe('openai')
    expect(core.apiProtocolOfRecords([started('{"apiProtocol":"openai"}', 1), started('damaged', 2)])).toBe('anthropic')
    expect(core.apiProtocolOfRecords([])).toBe('anthropic')
  })

  it('calculateApiCostForProtocol: the protocol chooses the cost function', () => {
    expect(core.calculateApiCostForProtocol('openai', prices, 1000, 500, null, 400)).toEqual(core.calculateApiCostOpenAI(prices, 1000, 500, null, 400))
    for (const protocol of ['anthropic', 'bedrock']) {
      expect(core.calculateApiCostForProtocol(protocol, prices, 1000, 500, null, 400)).toEqual(core.calculateApiCostAnthropic(prices, 1000, 500, null, 400))
    }
  })
})

describe('the HTTP provider through the binding', () => {
  it('streams from a local OpenAI-compatible server, after a 429', async () => {
    let hits = 0
    const server = http.createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        hits += 1
        if (hits === 1) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' })
          res.end('{"error":{"message":"slow down"}}')
          return
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        const delta = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`
        res.write(delta('Summary '))
        res.write(delta('text'))
        res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, cost: 0.001 } })}\n\n`)
        res.end('data: [DONE]\n\n')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const r = await core.summarizeConversation({
        messages: conversation(5),
        systemPrompt: 'S',
        taskId: 't',
        httpProvider: { baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm', retryBaseDelayMs: 10 },
      })
      expect([r.summary, r.cost, hits]).toEqual(['Summary text', 0.001, 2])
    } finally {
      server.close()
    }
  })
})

describe.skipIf(!haveShared('condense: the worked example on a real task', realTasks))('worked example on a real task', () => {
  it('decides differently at two context windows', () => {
    const dir = path.join(realTasks, PARENT)
    const history = readJson<ApiMessage[]>(path.join(dir, 'api_conversation_history.json'))
    const ui = readJson<ClineMessage[]>(path.join(dir, 'ui_messages.json'))
    // Recorded by a release before 3.29.5: context = tokensIn + tokensOut + cache tokens.
    expect(core.getTaskTokenUsage(ui).contextTokens).toBe(1104)
    const usage = core.getTaskTokenUsage(ui, { era: '3.28.0' })
    expect(usage.contextTokens).toBe(1104 + 2025 + 107461)
    const base = { era: '3.28.0', messages: history, totalTokens: usage.contextTokens, maxTokens: 8192, autoCondenseContext: true, autoCondenseContextPercent: 100, systemPrompt: 'S', taskId: PARENT, profileThresholds: {}, currentProfileId: 'default' }
    expect(core.decideContext({ ...base, contextWindow: 1_000_000 }).action).toBe('none')
    const small = core.decideContext({ ...base, contextWindow: 128_000 })
    expect(small.action).toBe('summarize')
    expect(small.truncateOnFailure).toBe(true)
    expect(small.truncation!.messagesRemoved).toBeGreaterThan(0)
  })
})
