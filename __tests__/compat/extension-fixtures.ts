/**
 * What the two suites of the extension's acceptance cases share (`extension-context.test.ts`, cases
 * 1–29, and `extension-condense.test.ts`, cases 30–46 and the module itself): the compat module
 * loaded as the extension's code loads it, message builders, a recording API handler, and the
 * options of the context-management calls.
 */
import { createRequire } from 'node:module'
import type * as Ext from '../../compat/extension/index.js'
import type { ApiHandler, ApiMessage, ApiStreamChunk, ContentBlockParam, ModelInfo } from '../../compat/extension/index.js'
import { contextDefaults, PRICES, summaryStream } from '../condense-cases'

const require = createRequire(import.meta.url)
export const ext: typeof Ext = require('../../compat/extension/index.js')

export const prices: ModelInfo = PRICES

export const user = (content: ApiMessage['content'], ts?: number, extra: Partial<ApiMessage> = {}): ApiMessage => ({ role: 'user', content, ...(ts === undefined ? {} : { ts }), ...extra })
export const assistant = (content: ApiMessage['content'], ts?: number, extra: Partial<ApiMessage> = {}): ApiMessage => ({ role: 'assistant', content, ...(ts === undefined ? {} : { ts }), ...extra })
export const summaryMsg = (text: string, ts: number, condenseId: string, extra: Partial<ApiMessage> = {}): ApiMessage =>
  user([{ type: 'text', text }], ts, { isSummary: true, condenseId, ...extra })

/** n alternating messages, user first, ts 1..n. */
export const turns = (n: number): ApiMessage[] =>
  Array.from({ length: n }, (_, i) => (i % 2 === 0 ? user(`Turn ${i + 1} from the user`, i + 1) : assistant(`Turn ${i + 1} from the model`, i + 1)))

interface Recorded {
  systemPrompt: string
  messages: Array<{ role: string; content: string | ContentBlockParam[] }>
  metadata: unknown
}

/**
 * An API handler of the extension's shape. `count` fixes what `countTokens` returns; without it
 * the handler counts as the extension's providers do (tiktoken, here through compat).
 */
export function makeHandler(opts: { chunks?: ApiStreamChunk[]; throws?: string; count?: number } = {}) {
  const calls: Recorded[] = []
  const counted: ContentBlockParam[][] = []
  const chunks: ApiStreamChunk[] = opts.chunks ?? summaryStream()
  const handler: ApiHandler = {
    async *createMessage(systemPrompt, messages, metadata) {
      calls.push({ systemPrompt, messages, metadata })
      for (const c of chunks) yield c
      if (opts.throws) throw new Error(opts.throws)
    },
    getModel: () => ({ id: 'test-model', info: { contextWindow: 100000, supportsImages: true } }),
    async countTokens(content) {
      counted.push(content)
      return opts.count ?? ext.countTokens(content)
    },
  }
  return { handler, calls, counted }
}

export const textOf = (m: ApiMessage): string =>
  typeof m.content === 'string' ? m.content : (m.content ?? []).map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n')

export const SYSTEM_PROMPT = 'You are a careful engineer working in a repository of TypeScript services.'

/** The options of `manageContext` with the defaults of the acceptance cases. */
export function contextOptions(totalTokens: number, apiHandler: ApiHandler, extra: Partial<Ext.ContextManagementOptions> = {}): Ext.ContextManagementOptions {
  return { ...contextDefaults(), totalTokens, apiHandler, systemPrompt: SYSTEM_PROMPT, ...extra }
}
