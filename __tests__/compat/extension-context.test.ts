/**
 * Acceptance cases 1–29 of specs/extension-formats.md §10 (cost, token counting, truncation,
 * context management, effective history), each called through `roo-state-core/compat/extension`
 * with the extension's call shapes (positional arguments where the extension's functions take them,
 * option objects where they take those, `await` only where the extension's functions are async).
 * One `it` per case, named `case N`; cases 30–46 are in `extension-condense.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import type { ApiMessage, ContentBlockParam, ModelInfo } from '../../compat/extension/index.js'
import { ALLOWED_TOKENS_BOUNDARIES, LONG_CONTEXT, TIKTOKEN_TEXT_CASES, WILL_MANAGE_CONTEXT_CASES } from '../condense-cases'
import { assistant, contextOptions, ext, makeHandler, prices, summaryMsg, SYSTEM_PROMPT, textOf, turns, user } from './extension-fixtures'

const longContext = LONG_CONTEXT

// ------------------------------------------------------------------ cost

describe('cost (src/shared/cost.ts)', () => {
  it('case 1: Anthropic (1000, 500) → 0.0105', () => {
    expect(ext.calculateApiCostAnthropic(prices, 1000, 500)).toEqual({ totalInputTokens: 1000, totalOutputTokens: 500, totalCost: 0.0105 })
  })

  it('case 2: Anthropic with cache writes → 0.018000000000000002', () => {
    const r = ext.calculateApiCostAnthropic(prices, 1000, 500, 2000)
    expect(r.totalCost).toBe(0.018000000000000002)
    expect(r.totalInputTokens).toBe(3000)
  })

  it('case 3: Anthropic with cache reads → 0.0114', () => {
    const r = ext.calculateApiCostAnthropic(prices, 1000, 500, undefined, 3000)
    expect(r.totalCost).toBe(0.0114)
    expect(r.totalInputTokens).toBe(4000)
  })

  it('case 4: Anthropic with both, without prices, without cache prices', () => {
    const both = ext.calculateApiCostAnthropic(prices, 1000, 500, 2000, 3000)
    expect([both.totalCost, both.totalInputTokens]).toEqual([0.0189, 6000])
    const none = ext.calculateApiCostAnthropic({ contextWindow: 200000 }, 1000, 500, 2000, 3000)
    expect([none.totalCost, none.totalInputTokens]).toEqual([0, 6000])
    const noCache = ext.calculateApiCostAnthropic({ contextWindow: 200000, inputPrice: 3, outputPrice: 15 }, 1000, 500, 2000, 3000)
    expect([noCache.totalCost, noCache.totalInputTokens]).toEqual([0.0105, 6000])
  })

  it('case 5: OpenAI counts cache inside the input', () => {
    const w = ext.calculateApiCostOpenAI(prices, 3000, 500, 2000)
    expect([w.totalCost, w.totalInputTokens]).toEqual([0.018000000000000002, 3000])
    expect(ext.calculateApiCostOpenAI(prices, 4000, 500, undefined, 3000).totalCost).toBe(0.0114)
    expect(ext.calculateApiCostOpenAI(prices, 6000, 500, 2000, 3000).totalCost).toBe(0.0189)
    expect(ext.calculateApiCostOpenAI({ contextWindow: 1 }, 1000, 500, 2000, 3000)).toEqual({ totalInputTokens: 1000, totalOutputTokens: 500, totalCost: 0 })
    expect(ext.calculateApiCostOpenAI(prices, 0, 0).totalCost).toBe(0)
  })

  it('case 6: long context, at the threshold → no surcharge (0.561)', () => {
    const r = ext.calculateApiCostOpenAI({ ...prices, longContextPricing: longContext }, 272000, 1000, undefined, 100000)
    expect(r.totalCost).toBe(0.561)
  })

  it('case 7: long context above the threshold → 1.1725 (f64 1.1724999999999999)', () => {
    const info: ModelInfo = { inputPrice: 2.5, outputPrice: 15, cacheWritesPrice: 5, cacheReadsPrice: 0.25, longContextPricing: longContext }
    const r = ext.calculateApiCostOpenAI(info, 300000, 1000, 20000, 100000)
    expect(r.totalCost).toBeCloseTo(1.1725, 12)
    expect(r.totalCost).toBe(1.1724999999999999)
  })

  it('case 8: long context limited to other service tiers → 1.08', () => {
    const info: ModelInfo = { inputPrice: 5, outputPrice: 30, cacheReadsPrice: 0.5, longContextPricing: { ...longContext, appliesToServiceTiers: ['default', 'flex'] } }
    expect(ext.calculateApiCostOpenAI(info, 300000, 1000, undefined, 100000, 'priority').totalCost).toBe(1.08)
    // The same call on a listed tier pays the surcharge.
    expect(ext.calculateApiCostOpenAI(info, 300000, 1000, undefined, 100000, 'flex').totalCost).toBeGreaterThan(1.08)
  })
})

// ------------------------------------------------------------------ tokens

describe('token counting (src/utils/tiktoken.ts, countTokens.ts)', () => {
  it('case 9: empty, missing text, "Hello world" → 3', async () => {
    for (const [content, expected] of TIKTOKEN_TEXT_CASES) expect([content, await ext.tiktoken(content)]).toEqual([content, expected])
    expect(await ext.countTokens([{ type: 'text', text: 'Hello world' }], { useWorker: false })).toBe(3)
  })

  it('case 10: images count ceil(sqrt(data.length)) × 1.5, 300 × 1.5 without data', async () => {
    const image = (data?: string): ContentBlockParam => ({
      type: 'image',
      source: data === undefined ? { type: 'base64', media_type: 'image/png' } : { type: 'base64', media_type: 'image/png', data },
    })
    expect(await ext.tiktoken([image('X'.repeat(1000))])).toBe(48)
    const png1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
    expect(png1x1).toHaveLength(96)
    expect(await ext.countTokens([image(png1x1)])).toBe(15)
    expect(await ext.countTokens([image()])).toBe(450)
  })
})

// ------------------------------------------------------------------ truncation

describe('truncateConversation (src/core/context-management)', () => {
  it('case 11: 3 messages, frac 0.5 → nothing removed, the same array', () => {
    const msgs = turns(3)
    const r = ext.truncateConversation(msgs, 0.5, 'task-1')
    expect(r.messagesRemoved).toBe(0)
    expect(r.messages).toBe(msgs)
    expect(r.messages.some((m) => m.isTruncationMarker)).toBe(false)
    expect(typeof r.truncationId).toBe('string')
  })

  it('case 12: 5 messages, frac 0.5 → 2 tagged, marker at 3', () => {
    const msgs = turns(5)
    const r = ext.truncateConversation(msgs, 0.5, 'task-1')
    expect(r.messagesRemoved).toBe(2)
    expect(r.messages.map((m) => (m.isTruncationMarker ? `marker:${m.role}` : m.truncationParent === r.truncationId ? 'hidden' : 'kept'))).toEqual([
      'kept',
      'hidden',
      'hidden',
      'marker:user',
      'kept',
      'kept',
    ])
    expect(r.messages[3].truncationId).toBe(r.truncationId)
    expect(r.messages[5]).not.toHaveProperty('truncationParent')
    // Untouched messages are the caller's objects; the input is not modified.
    expect(r.messages[0]).toBe(msgs[0])
    expect(r.messages[4]).toBe(msgs[3])
    expect(msgs[1].truncationParent).toBeUndefined()
  })

  it('case 13: 7 messages, frac 0.3 → 0 removed; frac 0 → the input', () => {
    expect(ext.truncateConversation(turns(7), 0.3, 'task-1').messagesRemoved).toBe(0)
    const msgs = turns(7)
    const r = ext.truncateConversation(msgs, 0, 'task-1')
    expect(r.messagesRemoved).toBe(0)
    expect(r.messages).toEqual(turns(7))
  })

  it('case 14: 4 messages, frac 1 → 2 removed, marker at 3, last untagged', () => {
    const r = ext.truncateConversation(turns(4), 1, 'task-1')
    expect(r.messagesRemoved).toBe(2)
    expect(r.messages).toHaveLength(5)
    expect(r.messages[3].isTruncationMarker).toBe(true)
    expect(r.messages[4].truncationParent).toBeUndefined()
  })

  it('case 15: 11 messages → marker text and ts, effective history, cleanup', () => {
    const msgs: ApiMessage[] = [user('Initial task', 1000)]
    for (let i = 1; i <= 10; i++) msgs.push(i % 2 === 1 ? assistant(`Reply ${i}`, 1000 + 100 * i) : user(`Follow-up ${i}`, 1000 + 100 * i))
    const r = ext.truncateConversation(msgs, 0.5, 'task-1')
    expect(r.messagesRemoved).toBe(4)
    expect(r.messages.filter((m) => m.truncationParent === r.truncationId)).toHaveLength(4)
    expect(r.messages[5].content).toContain('Sliding window truncation')
    expect(r.messages[5]).toEqual({
      role: 'user',
      content: '[Sliding window truncation: 4 messages hidden to reduce context]',
      ts: 1499,
      isTruncationMarker: true,
      truncationId: r.truncationId,
    })
    const effective = ext.getEffectiveApiHistory(r.messages)
    expect([effective.length, effective[0].content, effective[1].isTruncationMarker]).toEqual([8, 'Initial task', true])
    expect(effective[0]).toEqual(msgs[0])
    const withoutMarker = r.messages.filter((m) => !m.isTruncationMarker)
    expect(ext.getEffectiveApiHistory(withoutMarker)).toHaveLength(11)
    const cleaned = ext.cleanupAfterTruncation(withoutMarker)
    expect(cleaned.every((m) => m.truncationParent === undefined)).toBe(true)
  })

  it('case 16: 12 messages → 4; 2 messages → 0; 3 messages at frac 1 → marker last', () => {
    const twelve = [user('Initial task', 1), ...turns(11).map((m) => ({ ...m, ts: (m.ts ?? 0) + 1 }))]
    expect(ext.truncateConversation(twelve, 0.5, 'task-1').messagesRemoved).toBe(4)
    expect(ext.truncateConversation(turns(2), 0.5, 'task-1').messagesRemoved).toBe(0)
    const r = ext.truncateConversation(turns(3), 1.0, 'task-1')
    expect(r.messagesRemoved).toBe(2)
    expect(r.messages).toHaveLength(4)
    expect(r.messages[3].isTruncationMarker).toBe(true)
    expect(r.messages[0].truncationParent).toBeUndefined()
  })
})

// ------------------------------------------------------------------ manageContext / willManageContext

describe('manageContext / willManageContext (src/core/context-management)', () => {
  it('case 17: below the limit nothing; above it truncation', async () => {
    const { handler } = makeHandler()
    const o = contextOptions(59999, handler)
    const none = await ext.manageContext(o)
    expect(none).toEqual({ messages: o.messages, summary: '', cost: 0, prevContextTokens: 59999 })
    expect(none.messages).toBe(o.messages)
    for (const total of [60001, 69999, 70001]) {
      const r = await ext.manageContext(contextOptions(total, handler))
      expect(r).toMatchObject({ messagesRemoved: 2, summary: '', cost: 0, prevContextTokens: total })
      expect(r.messages).toHaveLength(6)
    }
  })

  it('case 18: allowedTokens boundaries', async () => {
    const { handler } = makeHandler()
    for (const [contextWindow, maxTokens, below, above] of ALLOWED_TOKENS_BOUNDARIES) {
      const kept = await ext.manageContext(contextOptions(below, handler, { contextWindow, maxTokens }))
      expect(kept.truncationId).toBeUndefined()
      expect(kept.prevContextTokens).toBe(below)
      const cut = await ext.manageContext(contextOptions(above, handler, { contextWindow, maxTokens }))
      expect(cut.messagesRemoved).toBe(2)
    }
  })

  it('case 19: auto-condense at the global threshold calls the summary as an automatic trigger', async () => {
    // Counts as the providers do, so the empty newest message adds 0 (a fixed count would add it to the total).
    const m = makeHandler()
    const env = '<environment_details>\n# Current Time\n2026-01-02T03:04:05Z\n</environment_details>'
    const o = contextOptions(60000, m.handler, { autoCondenseContext: true, autoCondenseContextPercent: 50, environmentDetails: env })
    const r = await ext.manageContext(o)
    expect(m.calls).toHaveLength(1)
    // The conversation went to the handler, with the extension's summary system prompt.
    const sent = m.calls[0].messages.map((x) => (typeof x.content === 'string' ? x.content : JSON.stringify(x.content))).join('\n')
    expect(sent).toContain('First message')
    expect(sent).toContain('Fourth message')
    expect(r.prevContextTokens).toBe(60000)
    expect(r.summary).toBe('This is a summary')
    // isAutomaticTrigger: the environment details follow the summary.
    const last = r.messages[r.messages.length - 1]
    expect(last.isSummary).toBe(true)
    expect(textOf(last)).toContain('# Current Time')
    const quiet = makeHandler()
    const o2 = contextOptions(40000, quiet.handler, { autoCondenseContext: true, autoCondenseContextPercent: 50 })
    expect(await ext.manageContext(o2)).toEqual({ messages: o2.messages, summary: '', cost: 0, prevContextTokens: 40000 })
    expect(quiet.calls).toHaveLength(0)
  })

  it('case 20: profile thresholds and the truncation fallback', async () => {
    let m = makeHandler()
    await ext.manageContext(contextOptions(65000, m.handler, { autoCondenseContext: true, profileThresholds: { p1: 60 }, currentProfileId: 'p1' }))
    expect(m.calls).toHaveLength(1)
    m = makeHandler()
    await ext.manageContext(contextOptions(80000, m.handler, { autoCondenseContext: true, autoCondenseContextPercent: 75, profileThresholds: { p1: -1 }, currentProfileId: 'p1' }))
    expect(m.calls).toHaveLength(1)
    m = makeHandler()
    const untouched = await ext.manageContext(
      contextOptions(50000, m.handler, { autoCondenseContext: true, autoCondenseContextPercent: 80, profileThresholds: { other: 40 }, currentProfileId: 'p1' }),
    )
    expect(m.calls).toHaveLength(0)
    expect(untouched.summary).toBe('')
    const failing = makeHandler({ chunks: [], throws: 'upstream 500' })
    const r = await ext.manageContext(contextOptions(70001, failing.handler, { autoCondenseContext: true }))
    expect(failing.calls).toHaveLength(1)
    expect(r.error).toBe('Condensing API call failed: upstream 500')
    expect(r.messagesRemoved).toBe(2)
    expect(r.messages).toHaveLength(6)
    expect(r).not.toHaveProperty('errorKey')
    m = makeHandler()
    await ext.manageContext(contextOptions(70001, m.handler))
    expect(m.calls).toHaveLength(0)
  })

  it('case 21: willManageContext', () => {
    expect(WILL_MANAGE_CONTEXT_CASES).toHaveLength(8)
    for (const { expected, ...c } of WILL_MANAGE_CONTEXT_CASES) {
      expect([c, ext.willManageContext({ ...c, contextWindow: 100000, maxTokens: 30000, currentProfileId: 'p1' })]).toEqual([c, expected])
    }
  })

  it('case 22: tokens after truncation lie between the system prompt and the previous context', async () => {
    const { handler, counted } = makeHandler()
    const r = await ext.manageContext(contextOptions(70001, handler))
    const systemOnly = await ext.countTokens([{ type: 'text', text: SYSTEM_PROMPT }])
    expect(systemOnly).toBeGreaterThan(0)
    expect(r.newContextTokensAfterTruncation).toBeGreaterThanOrEqual(systemOnly)
    expect(r.newContextTokensAfterTruncation).toBeLessThan(r.prevContextTokens)
    // The counts went through the handler's countTokens, as in the extension.
    expect(counted.some((c) => c.length === 1 && c[0].text === SYSTEM_PROMPT)).toBe(true)
  })
})

// ------------------------------------------------------------------ effective history

describe('effective history, cleanup, nesting (src/core/condense)', () => {
  it('case 23: a fresh-start summary hides everything before it', () => {
    const base = [
      user('First', 1, { condenseParent: 'X' }),
      assistant('Second', 2, { condenseParent: 'X' }),
      user('Third', 3, { condenseParent: 'X' }),
      summaryMsg('Summary', 4, 'X'),
    ]
    expect(ext.getEffectiveApiHistory(base)).toEqual([base[3]])
    const more = [...base, assistant('New response after summary', 5), user('New user message', 6)]
    expect(ext.getEffectiveApiHistory(more)).toHaveLength(3)
    const plain = turns(4)
    expect(ext.getEffectiveApiHistory(plain)).toEqual(plain)
    const orphaned = base.slice(0, 3)
    expect(ext.getEffectiveApiHistory(orphaned)).toHaveLength(3)
  })

  it('case 24: condenseParent after the summary is not checked (rewind)', () => {
    const msgs = [
      user('First message', 1, { condenseParent: 'c-1' }),
      assistant('First response', 2, { condenseParent: 'c-1' }),
      user('Second message', 3, { condenseParent: 'c-1' }),
      summaryMsg('Summary of the work', 4, 'c-1'),
      user('Third message', 5, { condenseParent: 'c-1' }),
      assistant('Third response', 6, { condenseParent: 'c-1' }),
    ]
    const effective = ext.getEffectiveApiHistory(msgs)
    expect(effective.map(textOf)).toEqual(['Summary of the work', 'Third message', 'Third response'])
  })

  it('case 25: tool results whose call is before the summary are dropped', () => {
    const toolUse = (id: string): ContentBlockParam => ({ type: 'tool_use', id, name: 'read_file', input: { path: 'a.ts' } })
    const toolResult = (id: string): ContentBlockParam => ({ type: 'tool_result', tool_use_id: id, content: 'contents' })
    const s = summaryMsg('Summary', 3, 'c1')
    const orphan = [user('Hello', 1, { condenseParent: 'c1' }), assistant([toolUse('tool-orphan')], 2, { condenseParent: 'c1' }), s, user([toolResult('tool-orphan')], 4)]
    expect(ext.getEffectiveApiHistory(orphan)).toEqual([s])
    const mixed = [...orphan.slice(0, 3), assistant([toolUse('tool-valid')], 4), user([toolResult('tool-orphan'), toolResult('tool-valid')], 5)]
    const effective = ext.getEffectiveApiHistory(mixed)
    expect(effective).toHaveLength(3)
    expect(effective[2].content).toEqual([toolResult('tool-valid')])
    const withText = [...orphan.slice(0, 3), user([{ type: 'text', text: 'Please continue' }, toolResult('tool-orphan')], 4)]
    expect(ext.getEffectiveApiHistory(withText)[1].content).toEqual([{ type: 'text', text: 'Please continue' }])
  })

  it('case 26: a truncation inside the summary range', () => {
    const s = summaryMsg('Summary', 2, 'c1')
    const marker = user('[Sliding window truncation: 1 messages hidden to reduce context]', 4, { isTruncationMarker: true, truncationId: 't1' })
    const after = user('After truncation', 5)
    const msgs = [user('First', 1, { condenseParent: 'c1' }), s, assistant('Response', 3, { truncationParent: 't1' }), marker, after]
    expect(ext.getEffectiveApiHistory(msgs)).toEqual([s, marker, after])
  })

  it('case 27: nested summaries', () => {
    const s1 = summaryMsg('Summary one', 399, 'c1', { condenseParent: 'c2' })
    const s2 = summaryMsg('Summary two', 599, 'c2')
    const msgs = [
      user('Build the API', 100, { condenseParent: 'c1' }),
      assistant('Done', 200, { condenseParent: 'c1' }),
      s1,
      user('Add a database', 400, { condenseParent: 'c2' }),
      assistant('Added', 500, { condenseParent: 'c2' }),
      s2,
      assistant('Database added', 600),
      user('Now test it', 700),
    ]
    const effective = ext.getEffectiveApiHistory(msgs)
    expect(effective).toHaveLength(3)
    expect(effective[0]).toEqual(s2)
    expect(ext.getMessagesSinceLastSummary(effective)).toEqual(effective)
    const s3 = summaryMsg('Summary three', 900, 'c3')
    const triple = [...msgs.map((m) => (m.condenseParent ? m : { ...m, condenseParent: 'c3' })), s3, user('Current work', 1000)]
    expect(ext.getEffectiveApiHistory(triple).map(textOf)).toEqual(['Summary three', 'Current work'])
  })

  it('case 28: cleanupAfterTruncation', () => {
    const s = summaryMsg('S', 3, 'c-valid')
    const marker = user('[Sliding window truncation: 2 messages hidden to reduce context]', 6, { isTruncationMarker: true, truncationId: 't-valid' })
    const cleaned = ext.cleanupAfterTruncation([user('a', 1, { condenseParent: 'c-gone' }), user('b', 2, { condenseParent: 'c-valid' }), s])
    expect(cleaned[0]).not.toHaveProperty('condenseParent')
    expect(cleaned[1].condenseParent).toBe('c-valid')
    const t = ext.cleanupAfterTruncation([user('a', 4, { truncationParent: 't-gone' }), user('b', 5, { truncationParent: 't-valid' }), marker])
    expect(t[0]).not.toHaveProperty('truncationParent')
    expect(t[1].truncationParent).toBe('t-valid')
    const mixed = ext.cleanupAfterTruncation([user('a', 1, { condenseParent: 'c-gone', truncationParent: 't-gone' }), user('b', 2, { condenseParent: 'c-valid', truncationParent: 't-valid' }), s, marker])
    expect([mixed[0].condenseParent, mixed[0].truncationParent]).toEqual([undefined, undefined])
    expect([mixed[1].condenseParent, mixed[1].truncationParent]).toEqual(['c-valid', 't-valid'])
    const untagged = turns(4)
    expect(ext.cleanupAfterTruncation(untagged)).toEqual(untagged)
  })

  it('case 29: getMessagesSinceLastSummary', () => {
    const plain = turns(3)
    expect(ext.getMessagesSinceLastSummary(plain)).toEqual(plain)
    const one = [user('u1', 1), assistant('a2', 2), user('summary', 3, { isSummary: true }), assistant('a4', 4), user('u5', 5)]
    const since = ext.getMessagesSinceLastSummary(one)
    expect(since.map((m) => m.ts)).toEqual([3, 4, 5])
    expect(since[0]).toBe(one[2])
    const two = [user('u1', 1), user('s1', 2, { isSummary: true }), assistant('a3', 3), user('s2', 4, { isSummary: true }), assistant('a5', 5)]
    expect(ext.getMessagesSinceLastSummary(two).map((m) => m.ts)).toEqual([4, 5])
    expect(ext.getMessagesSinceLastSummary([])).toEqual([])
  })
})
