/**
 * Compiled with `tsc --strict` (not run): calls every export of `roo-state-core/compat/extension`
 * the way the extension's modules are called, with types declared the way the extension declares
 * them (Anthropic SDK interfaces without index signatures, `ApiMessage` as an intersection, the
 * provider's `ApiHandler` with an async-generator stream, zod-inferred `ModelInfo`/`ClineMessage`).
 */
import {
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  COMMAND_OUTPUT_STRING,
  CONTEXT_MANAGEMENT_EVENTS,
  DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS,
  DEFAULT_HYBRID_REASONING_MODEL_THINKING_TOKENS,
  MAX_CONDENSE_THRESHOLD,
  MIN_CONDENSE_THRESHOLD,
  N_MESSAGES_TO_KEEP,
  TOKEN_BUFFER_PERCENTAGE,
  TaskHistoryStore,
  DeltaRejectedError,
  assertValidTransition,
  setExtensionRelease,
  extensionRelease,
  calculateApiCostAnthropic,
  calculateApiCostOpenAI,
  cleanupAfterTruncation,
  combineApiRequests,
  combineCommandSequences,
  consolidateTokenUsage,
  convertToolBlocksToText,
  countTokens,
  estimateTokenCount,
  extractCommandBlocks,
  getApiMetrics,
  getEffectiveApiHistory,
  getMessagesSinceLastSummary,
  getModelMaxOutputTokens,
  hasTokenUsageChanged,
  hasToolUsageChanged,
  injectSyntheticToolResults,
  isContextManagementEvent,
  manageContext,
  mergeConsecutiveApiMessages,
  parseApiPrice,
  summarizeConversation,
  tiktoken,
  toolResultToText,
  toolUseToText,
  transformMessagesForCondensing,
  truncateConversation,
  willManageContext,
} from '../../compat/extension/index.js'
import type { ContextManagementResult, SummarizeResponse, TokenUsage, TruncationResult } from '../../compat/extension/index.js'

// ---- the extension's types, declared as it declares them

interface TextBlockParam {
  type: 'text'
  text: string
  cache_control?: { type: 'ephemeral' } | null
}
interface Base64ImageSource {
  type: 'base64'
  media_type: 'image/png' | 'image/jpeg'
  data: string
}
interface ImageBlockParam {
  type: 'image'
  source: Base64ImageSource
}
interface ToolUseBlockParam {
  type: 'tool_use'
  id: string
  name: string
  input: unknown
}
interface ToolResultBlockParam {
  type: 'tool_result'
  tool_use_id: string
  content?: string | Array<TextBlockParam | ImageBlockParam>
  is_error?: boolean
}
type ContentBlockParam = TextBlockParam | ImageBlockParam | ToolUseBlockParam | ToolResultBlockParam
interface MessageParam {
  role: 'user' | 'assistant'
  content: string | ContentBlockParam[]
}
type ApiMessage = MessageParam & {
  ts?: number
  isSummary?: boolean
  id?: string
  type?: 'reasoning'
  condenseId?: string
  condenseParent?: string
  truncationId?: string
  truncationParent?: string
  isTruncationMarker?: boolean
}

type ServiceTier = 'default' | 'flex' | 'priority'
type ModelInfo = {
  maxTokens?: number | null
  maxThinkingTokens?: number | null
  contextWindow: number
  supportsImages?: boolean
  supportsPromptCache: boolean
  supportsReasoningBudget?: boolean
  requiredReasoningBudget?: boolean
  inputPrice?: number
  outputPrice?: number
  cacheWritesPrice?: number
  cacheReadsPrice?: number
  description?: string
  tiers?: Array<{ name?: ServiceTier; contextWindow: number; inputPrice?: number; outputPrice?: number }>
  longContextPricing?: {
    thresholdTokens: number
    inputPriceMultiplier?: number
    outputPriceMultiplier?: number
    cacheWritesPriceMultiplier?: number
    cacheReadsPriceMultiplier?: number
    appliesToServiceTiers?: ServiceTier[]
  }
}

type ApiStreamChunk =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string; signature?: string }
  | { type: 'usage'; inputTokens: number; outputTokens: number; cacheWriteTokens?: number; cacheReadTokens?: number; reasoningTokens?: number; totalCost?: number }
  | { type: 'tool_call_partial'; index: number; id?: string; name?: string; arguments?: string }
  | { type: 'error'; error: string; message: string }
type ApiStream = AsyncGenerator<ApiStreamChunk>
interface ApiHandlerCreateMessageMetadata {
  mode?: string
  taskId: string
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: unknown } }>
  tool_choice?: 'auto' | 'none' | 'required'
  parallelToolCalls?: boolean
}
interface ApiHandler {
  createMessage(systemPrompt: string, messages: MessageParam[], metadata?: ApiHandlerCreateMessageMetadata): ApiStream
  getModel(): { id: string; info: ModelInfo }
  countTokens(content: Array<ContentBlockParam>): Promise<number>
}

type ClineAsk = 'followup' | 'command' | 'command_output' | 'completion_result' | 'tool' | 'api_req_failed' | 'use_mcp_server'
type ClineSay = 'api_req_started' | 'text' | 'condense_context' | 'condense_context_error' | 'sliding_window_truncation' | 'mcp_server_response'
type ClineMessage = {
  ts: number
  type: 'ask' | 'say'
  ask?: ClineAsk
  say?: ClineSay
  text?: string
  images?: string[]
  partial?: boolean
  reasoning?: string
  conversationHistoryIndex?: number
  checkpoint?: Record<string, unknown>
  progressStatus?: { icon?: string; text?: string }
  contextCondense?: { cost: number; prevContextTokens: number; newContextTokens: number; summary: string; condenseId?: string }
  contextTruncation?: { truncationId: string; messagesRemoved: number; prevContextTokens: number; newContextTokens: number }
  isProtected?: boolean
  apiProtocol?: 'openai' | 'anthropic'
  isAnswered?: boolean
}
type HistoryItem = {
  id: string
  rootTaskId?: string
  parentTaskId?: string
  number: number
  ts: number
  task: string
  tokensIn: number
  tokensOut: number
  cacheWrites?: number
  cacheReads?: number
  totalCost: number
  size?: number
  workspace?: string
  mode?: string
  status?: 'active' | 'completed' | 'delegated'
  delegatedToId?: string
  childIds?: string[]
  awaitingChildId?: string
  completedByChildId?: string
  completionResultSummary?: string
}

// ---- values

declare const handler: ApiHandler
declare const history: ApiMessage[]
declare const uiMessages: ClineMessage[]
const model: ModelInfo = { contextWindow: 200000, supportsPromptCache: true, inputPrice: 3, outputPrice: 15 }

export async function typecheck(): Promise<void> {
  // src/shared/cost.ts
  const a = calculateApiCostAnthropic(model, 1000, 500)
  const b = calculateApiCostAnthropic(model, 1000, 500, 2000, 3000)
  const o = calculateApiCostOpenAI(model, 6000, 500, 2000, 3000, 'flex')
  const price: number | undefined = parseApiPrice('0.000003')
  const costSum: number = a.totalCost + b.totalInputTokens + o.totalOutputTokens + (price ?? 0)

  // src/utils/countTokens.ts, tiktoken.ts
  const blocks: ContentBlockParam[] = [{ type: 'text', text: 'Hello world' }]
  const n1: number = await countTokens(blocks)
  const n2: number = await countTokens(blocks, { useWorker: false })
  const n3: number = await tiktoken(blocks)

  // src/core/context-management
  const lastTokens: number = await estimateTokenCount(blocks, handler)
  const t: TruncationResult<ApiMessage> = truncateConversation(history, 0.5, 'task-id')
  const kept: ApiMessage[] = t.messages
  const will: boolean = willManageContext({
    totalTokens: 1000,
    contextWindow: model.contextWindow,
    maxTokens: model.maxTokens,
    autoCondenseContext: true,
    autoCondenseContextPercent: 100,
    profileThresholds: {},
    currentProfileId: 'default',
    lastMessageTokens: lastTokens,
  })
  const managed: ContextManagementResult<ApiMessage> = await manageContext({
    messages: history,
    totalTokens: 1000,
    contextWindow: model.contextWindow,
    maxTokens: model.maxTokens,
    apiHandler: handler,
    autoCondenseContext: true,
    autoCondenseContextPercent: 100,
    systemPrompt: 'system',
    taskId: 'task-id',
    customCondensingPrompt: undefined,
    profileThresholds: { default: -1 },
    currentProfileId: 'default',
    metadata: { taskId: 'task-id', tools: [], tool_choice: 'auto', parallelToolCalls: true },
    environmentDetails: '<environment_details>\n</environment_details>',
    filesReadByRoo: ['src/index.ts'],
    cwd: '/work',
  })
  if (managed.messages !== history && (managed.summary || managed.truncationId)) {
    const next: ApiMessage[] = managed.messages
    void next
  }

  // src/core/condense
  const s: SummarizeResponse<ApiMessage> = await summarizeConversation({
    messages: history,
    apiHandler: handler,
    systemPrompt: 'system',
    taskId: 'task-id',
    isAutomaticTrigger: false,
  })
  const since: ApiMessage[] = getMessagesSinceLastSummary(history)
  const effective: ApiMessage[] = getEffectiveApiHistory(history)
  const cleaned: ApiMessage[] = cleanupAfterTruncation(history)
  const injected: ApiMessage[] = injectSyntheticToolResults(history)
  const commands: string = extractCommandBlocks(history[0])
  const use: string = toolUseToText({ type: 'tool_use', id: 't', name: 'read_file', input: { path: 'a.ts' } })
  const result: string = toolResultToText({ type: 'tool_result', tool_use_id: 't', content: 'ok' })
  const converted = convertToolBlocksToText(blocks)
  const transformed: MessageParam[] = transformMessagesForCondensing(history.map(({ role, content }) => ({ role, content })))
  const merged: ApiMessage[] = mergeConsecutiveApiMessages(effective, { roles: ['user'] })

  // src/shared/getApiMetrics.ts and friends
  const usage: TokenUsage = getApiMetrics(combineApiRequests(combineCommandSequences(uiMessages.slice(1))))
  const same: TokenUsage = consolidateTokenUsage(uiMessages)
  const changed: boolean = hasTokenUsageChanged(usage, same) || hasToolUsageChanged({ read_file: { attempts: 1, failures: 0 } }, undefined)
  const say = uiMessages[0].say
  if (isContextManagementEvent(say)) {
    const event: 'condense_context' | 'condense_context_error' | 'sliding_window_truncation' = say
    void event
  }
  const maxTokens: number | undefined = getModelMaxOutputTokens({ modelId: 'claude-sonnet-4', model, settings: { modelMaxTokens: 32000 }, format: 'anthropic' })

  // src/core/task-persistence/TaskHistoryStore.ts
  const store = new TaskHistoryStore<HistoryItem>('/globalStorage', { onWrite: async (items) => void items.length })
  await store.initialize()
  await store.initialized
  const items: HistoryItem[] = await store.upsert({ id: 'a', number: 1, ts: 1, task: 'x', tokensIn: 0, tokensOut: 0, totalCost: 0, status: 'delegated' })
  const one: HistoryItem | undefined = store.get('a')
  const inWorkspace: HistoryItem[] = store.getByWorkspace('/work')
  await store.migrateFromGlobalState(items)
  await store.delete('a')
  await store.deleteMany(['b'])
  await store.reconcile()
  await store.reconcile({ forceRefresh: true })
  await store.invalidate('a')
  await store.invalidateAll()
  await store.flushIndex()
  await store.atomicReadAndUpdate('a', (current) => ({ ...current, status: 'completed' }))
  await store.atomicUpdatePair('c', 'p', (c) => ({ ...c, parentTaskId: undefined }), (p) => ({ ...p, status: 'active', awaitingChildId: undefined }))
  assertValidTransition(one?.status, 'interrupted')
  const rejected: Error = new DeltaRejectedError('a', 'completed', 'active')
  const diskStatus: string = new DeltaRejectedError('a', 'completed', 'active').diskStatus
  setExtensionRelease('3.52.1')
  const release: string | null = extensionRelease()
  setExtensionRelease(null)
  store.dispose()

  const constants: number[] = [
    TOKEN_BUFFER_PERCENTAGE,
    MIN_CONDENSE_THRESHOLD,
    MAX_CONDENSE_THRESHOLD,
    N_MESSAGES_TO_KEEP,
    ANTHROPIC_DEFAULT_MAX_TOKENS,
    DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS,
    DEFAULT_HYBRID_REASONING_MODEL_THINKING_TOKENS,
  ]
  const strings: readonly string[] = [COMMAND_OUTPUT_STRING, ...CONTEXT_MANAGEMENT_EVENTS]
  void [costSum, n1, n2, n3, kept, will, s, since, cleaned, injected, commands, use, result, converted, transformed, merged, changed, maxTokens, one, inWorkspace, constants, strings, rejected, diskStatus, release]
}
