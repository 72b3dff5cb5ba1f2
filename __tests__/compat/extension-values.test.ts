/**
 * compat/extension's values in each compat mode (`legacy`: the extension's, quirks included;
 * `fixed`: the same shapes with the native rules' values), its log lines, and `manageContext`
 * asking this module's own export for the summary (no caller's modules here: see
 * extension-host.test.ts for those).
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createRequire } from 'node:module'
import type { ClineMessage, SummarizeResponse } from '../../compat/extension/index.js'
import { contextOptions, ext, makeHandler, SYSTEM_PROMPT, turns, user } from './extension-fixtures'

const { setMode } = createRequire(import.meta.url)('../../compat/mode.js') as typeof import('../../compat/mode.js')

afterEach(() => {
  setMode(null)
  vi.restoreAllMocks()
})

const started = (text: string, ts = 1): ClineMessage => ({ type: 'say', say: 'api_req_started', text, ts })
const finished = (text: string, ts = 2): ClineMessage => ({ type: 'say', say: 'api_req_finished', text, ts })

describe('getApiMetrics contextTokens per mode', () => {
  const records = [
    started('{"tokensIn":100,"tokensOut":50}', 1),
    started('{"tokensIn":"12","tokensOut":"34","cost":0.5}', 2),
  ]

  it('legacy: JavaScript’s sum of the newest record, strings concatenated, true counted 1', () => {
    setMode('legacy')
    expect(ext.getApiMetrics(records).contextTokens).toBe('1234')
    expect(ext.getApiMetrics([started('{"tokensIn":true,"tokensOut":2}')]).contextTokens).toBe(3)
    expect(ext.getApiMetrics([...records, started('null', 3)]).contextTokens).toBe('1234')
    expect(ext.getApiMetrics(records)).toMatchObject({ totalTokensIn: 100, totalTokensOut: 50, totalCost: 0.5 })
  })

  it('fixed: non-numbers count 0, so the newest record with a size decides', () => {
    setMode('fixed')
    expect(ext.getApiMetrics(records).contextTokens).toBe(150)
    expect(ext.getApiMetrics([started('{"tokensIn":true,"tokensOut":2}')]).contextTokens).toBe(2)
  })

  it('both modes agree on numeric records and condense events', () => {
    const msgs: ClineMessage[] = [
      started('{"tokensIn":100,"tokensOut":50}', 1),
      { type: 'say', say: 'condense_context', ts: 2, contextCondense: { cost: 0.1, prevContextTokens: 150, newContextTokens: 40, summary: 's' } },
    ]
    for (const mode of ['legacy', 'fixed'] as const) {
      setMode(mode)
      expect(ext.getApiMetrics(msgs).contextTokens).toBe(40)
      expect(ext.getApiMetrics(msgs.slice(0, 1)).contextTokens).toBe(150)
    }
  })
})

describe('legacy JavaScript and the native rules agree on well-formed input', () => {
  /** A seeded generator (LCG), so that the cases are the same on every run. */
  const seeded = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  const legacyRules = createRequire(import.meta.url)('../../compat/extension/legacy.js') as {
    contextTokens(m: ClineMessage[]): unknown
    willManageContext(o: object, limits: object): boolean
  }
  const limits = {
    TOKEN_BUFFER_PERCENTAGE: ext.TOKEN_BUFFER_PERCENTAGE,
    ANTHROPIC_DEFAULT_MAX_TOKENS: ext.ANTHROPIC_DEFAULT_MAX_TOKENS,
    MIN_CONDENSE_THRESHOLD: ext.MIN_CONDENSE_THRESHOLD,
    MAX_CONDENSE_THRESHOLD: ext.MAX_CONDENSE_THRESHOLD,
  }

  it('contextTokens over 300 histories of numeric, missing, zero and unparsable records and condense events', () => {
    const rnd = seeded(7)
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]
    for (let n = 0; n < 300; n++) {
      const msgs: ClineMessage[] = Array.from({ length: 1 + Math.floor(rnd() * 6) }, (_, i) => {
        const kind = pick(['record', 'record', 'zero', 'broken', 'condense', 'text'])
        if (kind === 'condense') return { type: 'say', say: 'condense_context', ts: i, contextCondense: { cost: 0, prevContextTokens: 0, newContextTokens: pick([0, 40, 900]), summary: '' } }
        if (kind === 'text') return { type: 'say', say: 'text', text: '{"tokensIn":5}', ts: i }
        if (kind === 'broken') return started(pick(['', 'not json', '{"tokensIn":']), i)
        const value = () => (kind === 'zero' ? 0 : pick([undefined, 0, Math.floor(rnd() * 5000)]))
        return started(JSON.stringify({ tokensIn: value(), tokensOut: value(), cacheWrites: value(), apiProtocol: pick(['anthropic', 'openai', undefined]) }), i)
      })
      setMode('fixed')
      expect(legacyRules.contextTokens(msgs)).toBe(ext.getApiMetrics(msgs).contextTokens)
    }
  })

  it('willManageContext over 300 complete option sets', () => {
    const rnd = seeded(11)
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]
    for (let n = 0; n < 300; n++) {
      const o = {
        totalTokens: Math.floor(rnd() * 120000),
        lastMessageTokens: Math.floor(rnd() * 5000),
        contextWindow: pick([8000, 100000, 200000]),
        maxTokens: pick([undefined, null, 0, 4096, 30000]),
        autoCondenseContext: rnd() < 0.7,
        autoCondenseContextPercent: pick([5, 50, 75, 100]),
        profileThresholds: pick([{}, { p: -1 }, { p: 3 }, { p: 60 }, { p: 150 }]),
        currentProfileId: pick(['p', 'default']),
      }
      expect(legacyRules.willManageContext(o, limits)).toBe(ext.willManageContext(o as never))
    }
  })
})

describe('combineApiRequests', () => {
  it('hands back the caller’s array when there is no request record or one message', () => {
    for (const mode of ['legacy', 'fixed'] as const) {
      setMode(mode)
      const none: ClineMessage[] = [
        { type: 'say', say: 'text', text: 'a', ts: 1 },
        { type: 'ask', ask: 'followup', text: 'b', ts: 2 },
      ]
      expect(ext.combineApiRequests(none)).toBe(none)
      const one = [started('{"a":1}')]
      expect(ext.combineApiRequests(one)).toBe(one)
      expect(ext.combineApiRequests([])).toEqual([])
    }
  })

  it('legacy: a string or array record is spread into numbered keys, as object spread does', () => {
    setMode('legacy')
    const a = ext.combineApiRequests([started('"ab"'), finished('{"cost":0.5}')])
    expect(a).toHaveLength(1)
    expect(a[0].text).toBe('{"0":"a","1":"b","cost":0.5}')
    const b = ext.combineApiRequests([started('{"request":"x"}'), finished('[7]')])
    expect(b[0].text).toBe('{"0":7,"request":"x"}')
    const other = { type: 'say', say: 'text', text: 'kept', ts: 3 } as ClineMessage
    const c = ext.combineApiRequests([started('"z"'), other, finished('{}')])
    expect(c[1]).toBe(other)
  })

  it('fixed: such a record counts as no fields', () => {
    setMode('fixed')
    const a = ext.combineApiRequests([started('"ab"'), finished('{"cost":0.5}')])
    expect(JSON.parse(String(a[0].text))).toEqual({ cost: 0.5 })
    const b = ext.combineApiRequests([started('{"request":"x"}'), finished('[7]')])
    expect(JSON.parse(String(b[0].text))).toEqual({ request: 'x' })
  })
})

describe('willManageContext and manageContext on incomplete options, per mode', () => {
  const base = { contextWindow: 100000, autoCondenseContextPercent: 50, profileThresholds: {}, currentProfileId: 'default' }

  it('legacy: a missing count makes NaN (false), a missing switch is off, a missing profile map throws', () => {
    setMode('legacy')
    expect(ext.willManageContext({ ...base, lastMessageTokens: 95000, autoCondenseContext: false } as never)).toBe(false)
    expect(ext.willManageContext({ ...base, totalTokens: 60000, lastMessageTokens: 0 } as never)).toBe(false)
    expect(() => ext.willManageContext({ totalTokens: 1, lastMessageTokens: 1, contextWindow: 100000, autoCondenseContext: true, autoCondenseContextPercent: 50 } as never)).toThrow(TypeError)
    expect(ext.willManageContext({ ...base, totalTokens: 60000, lastMessageTokens: 0, autoCondenseContext: true })).toBe(true)
  })

  it('fixed: a missing count is 0, a missing switch is on, a missing profile map is empty', () => {
    setMode('fixed')
    expect(ext.willManageContext({ ...base, lastMessageTokens: 95000, autoCondenseContext: false } as never)).toBe(true)
    expect(ext.willManageContext({ ...base, totalTokens: 60000, lastMessageTokens: 0 } as never)).toBe(true)
    expect(ext.willManageContext({ totalTokens: 1, lastMessageTokens: 1, contextWindow: 100000, autoCondenseContext: true, autoCondenseContextPercent: 50 } as never)).toBe(false)
  })

  it('manageContext with no messages: legacy rejects as the extension does, fixed counts no message', async () => {
    const options = contextOptions(5, makeHandler({ count: 0 }).handler, { messages: [] })
    setMode('legacy')
    await expect(ext.manageContext(options)).rejects.toThrow(new TypeError("Cannot read properties of undefined (reading 'content')"))
    setMode('fixed')
    const r = await ext.manageContext(options)
    expect([r.messages, r.prevContextTokens]).toEqual([[], 5])
  })
})

describe('log lines of the extension', () => {
  it('an invalid handler is reported on console.error, as the extension does', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const r = await ext.summarizeConversation({ messages: turns(5), apiHandler: {} as never, systemPrompt: SYSTEM_PROMPT, taskId: 't' })
    expect(r.error).toBeTruthy()
    expect(error).toHaveBeenCalledWith('API handler is invalid for condensing. Cannot proceed.')
  })
})

describe('foldFileContext, this package’s extra', () => {
  it('is called once a summary came back; its sections follow the summary, replacing foldedFileContext', async () => {
    const fold = vi.fn(async () => ['<system-reminder>\n## File Context: a.ts\n</system-reminder>'])
    const r = await ext.summarizeConversation({
      messages: turns(5),
      apiHandler: makeHandler({ count: 10 }).handler,
      systemPrompt: SYSTEM_PROMPT,
      taskId: 't',
      foldedFileContext: ['replaced'],
      foldFileContext: fold,
    })
    expect(fold).toHaveBeenCalledTimes(1)
    const blocks = r.messages[r.messages.length - 1].content as Array<{ text?: string }>
    expect(blocks.map((b) => b.text)).toEqual([expect.stringContaining('## Conversation Summary'), '<system-reminder>\n## File Context: a.ts\n</system-reminder>'])
  })

  it('is not called when no summary comes back, and a failing one keeps foldedFileContext', async () => {
    const fold = vi.fn(async () => ['x'])
    await ext.summarizeConversation({ messages: turns(1), apiHandler: makeHandler().handler, systemPrompt: SYSTEM_PROMPT, taskId: 't', foldFileContext: fold })
    expect(fold).not.toHaveBeenCalled()
    const r = await ext.summarizeConversation({
      messages: turns(5),
      apiHandler: makeHandler({ count: 10 }).handler,
      systemPrompt: SYSTEM_PROMPT,
      taskId: 't',
      foldedFileContext: ['kept'],
      foldFileContext: async () => {
        throw new Error('no parser')
      },
    })
    const blocks = r.messages[r.messages.length - 1].content as Array<{ text?: string }>
    expect(blocks.map((b) => b.text)).toEqual([expect.stringContaining('## Conversation Summary'), 'kept'])
  })
})

describe('manageContext through this module’s exports', () => {
  it('a stub put on the CommonJS export of summarizeConversation is what summarises', async () => {
    const response: SummarizeResponse = { messages: [user('summary', 9, { isSummary: true })], summary: 'summary', cost: 0.2, newContextTokens: 10 }
    const spy = vi.spyOn(ext, 'summarizeConversation').mockResolvedValue(response)
    const m = makeHandler({ count: 0 })
    const messages = [...turns(4), user('')]
    const r = await ext.manageContext(contextOptions(70001, m.handler, { messages, autoCondenseContext: true }))
    expect(spy).toHaveBeenCalledTimes(1)
    expect(spy.mock.calls[0][0]).toMatchObject({ messages, apiHandler: m.handler, isAutomaticTrigger: true, taskId: 'task-1' })
    expect(r).toEqual({ ...response, prevContextTokens: 70001 })
    expect(m.calls).toHaveLength(0)
  })
})
