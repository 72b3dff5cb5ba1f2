/**
 * Inputs and expected values of specs/extension-formats.md §10 shared by the suites that run the
 * acceptance cases: `condense.test.ts` (the binding) and `compat/extension-context.test.ts` /
 * `compat/extension-condense.test.ts` (the extension's names and call shapes). Plain data, no
 * imports of either module.
 */

/** Prices (USD per million tokens) of cases 1–5. */
export const PRICES = { contextWindow: 200000, inputPrice: 3, outputPrice: 15, cacheWritesPrice: 3.75, cacheReadsPrice: 0.3 }

/** Long-context pricing of cases 6–8: threshold 272 000, ×2 input, ×1.5 output, ×2 cache. */
export const LONG_CONTEXT = {
  thresholdTokens: 272000,
  inputPriceMultiplier: 2,
  outputPriceMultiplier: 1.5,
  cacheWritesPriceMultiplier: 2,
  cacheReadsPriceMultiplier: 2,
}

/** Case 18: `[contextWindow, maxTokens, largest total kept, smallest total truncated]`. */
export const ALLOWED_TOKENS_BOUNDARIES: ReadonlyArray<readonly [number, number | undefined, number, number]> = [
  [100000, 50000, 39999, 50001],
  [100000, undefined, 81807, 81809],
  [50000, 10000, 34999, 40001],
  [200000, 30000, 149999, 170001],
]

/** Case 21 (contextWindow 100 000, maxTokens 30 000, current profile `p1`). */
export interface WillManageCase {
  totalTokens: number
  autoCondenseContext: boolean
  autoCondenseContextPercent: number
  profileThresholds: Record<string, number>
  lastMessageTokens: number
  expected: boolean
}

const will = (
  totalTokens: number,
  autoCondenseContext: boolean,
  autoCondenseContextPercent: number,
  expected: boolean,
  profileThresholds: Record<string, number> = {},
  lastMessageTokens = 0,
): WillManageCase => ({ totalTokens, autoCondenseContext, autoCondenseContextPercent, profileThresholds, lastMessageTokens, expected })

export const WILL_MANAGE_CONTEXT_CASES: readonly WillManageCase[] = [
  will(60000, true, 50, true),
  will(40000, true, 50, false),
  will(60001, false, 100, true),
  will(59999, false, 100, false),
  will(55000, true, 80, true, { p1: 50 }),
  will(55000, true, 80, false, { p1: -1 }),
  will(49000, true, 50, false, {}, 0),
  will(49000, true, 50, true, {}, 2000),
]

/** Cases 17–22: five messages whose last one is empty, so the newest message adds 0 tokens. */
export function fiveEndingEmpty(): Array<{ role: 'user' | 'assistant'; content: string; ts: number }> {
  return [
    { role: 'user', content: 'First message', ts: 1 },
    { role: 'assistant', content: 'Second message', ts: 2 },
    { role: 'user', content: 'Third message', ts: 3 },
    { role: 'assistant', content: 'Fourth message', ts: 4 },
    { role: 'user', content: '', ts: 5 },
  ]
}

/** Cases 30–35: the summary stream ("This is " + "a summary", cost 0.05, 150 output tokens). */
export function summaryStream(): Array<{ type: string; text?: string; inputTokens?: number; outputTokens?: number; totalCost?: number }> {
  return [
    { type: 'text', text: 'This is ' },
    { type: 'text', text: 'a summary' },
    { type: 'usage', inputTokens: 0, outputTokens: 150, totalCost: 0.05 },
  ]
}

/** Cases 17–22: the settings every `manageContext` call starts from (auto-condense off). */
export function contextDefaults() {
  return {
    messages: fiveEndingEmpty(),
    contextWindow: 100000,
    maxTokens: 30000 as number | undefined,
    autoCondenseContext: false,
    autoCondenseContextPercent: 100,
    taskId: 'task-1',
    profileThresholds: {} as Record<string, number>,
    currentProfileId: 'default',
  }
}

/** Case 42: a command and two output records, combined into `"ls\nOutput:file1.txt\nfile2.txt"`. */
export function commandSequence(): Array<{ type: 'ask'; ask: string; text: string; ts: number }> {
  return [
    { type: 'ask', ask: 'command', text: 'ls', ts: 1 },
    { type: 'ask', ask: 'command_output', text: 'file1.txt', ts: 2 },
    { type: 'ask', ask: 'command_output', text: 'file2.txt', ts: 3 },
  ]
}

/** Case 9: `[content, tiktoken(content)]`. */
export const TIKTOKEN_TEXT_CASES: ReadonlyArray<readonly [Array<{ type: string; text?: string }>, number]> = [
  [[], 0],
  [[{ type: 'text', text: '' }], 0],
  [[{ type: 'text' }], 0],
  [[{ type: 'text', text: 'Hello world' }], 3],
]
