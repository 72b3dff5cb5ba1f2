/**
 * Types of `roo-state-core/compat/extension`: the Roo Code extension's context-management,
 * condensation, cost, metrics and token functions under its own names and signatures.
 *
 * The types are structural and have no index signatures, so the extension's own interfaces
 * (`ApiMessage`, `ClineMessage`, `ModelInfo`, `ApiHandler`, Anthropic content blocks) are accepted
 * as they are; functions that return the caller's messages are generic over the message type.
 */

import type { ApiCostResult, TokenUsage } from '../../index.js'

// ------------------------------------------------------------------ shapes

/** A content block (Anthropic `ContentBlockParam` and the extension's extra block kinds). */
export interface ContentBlockParam {
  type: string
  text?: unknown
  source?: unknown
  id?: unknown
  name?: unknown
  input?: unknown
  tool_use_id?: unknown
  content?: unknown
  is_error?: unknown
  thinking?: unknown
  signature?: unknown
  data?: unknown
  summary?: unknown
  encrypted_content?: unknown
  thoughtSignature?: unknown
  cache_control?: unknown
  citations?: unknown
}

/** A stored API message (`api_conversation_history.json`). */
export interface ApiMessage {
  role?: 'user' | 'assistant' | string
  content?: string | ContentBlockParam[]
  ts?: number
  id?: string
  type?: string
  isSummary?: boolean
  condenseId?: string
  condenseParent?: string
  isTruncationMarker?: boolean
  truncationId?: string
  truncationParent?: string
  reasoning_details?: unknown
  reasoning_content?: unknown
}

export interface ContextCondense {
  cost?: number
  prevContextTokens?: number
  newContextTokens?: number
  summary?: string
  condenseId?: string
}

/** A UI message (`ui_messages.json`). */
export interface ClineMessage {
  ts?: number
  type?: 'ask' | 'say' | string
  ask?: string
  say?: string
  text?: string
  images?: string[]
  partial?: boolean
  reasoning?: string
  contextCondense?: ContextCondense
  contextTruncation?: unknown
  apiProtocol?: string
  isProtected?: boolean
  isAnswered?: boolean
  progressStatus?: unknown
  checkpoint?: unknown
  conversationHistoryIndex?: number
}

export type ServiceTier = 'default' | 'flex' | 'priority'

export interface LongContextPricing {
  thresholdTokens: number
  inputPriceMultiplier?: number
  outputPriceMultiplier?: number
  cacheWritesPriceMultiplier?: number
  cacheReadsPriceMultiplier?: number
  appliesToServiceTiers?: readonly ServiceTier[]
}

/** The parts of the extension's `ModelInfo` these functions read (prices per million tokens). */
export interface ModelInfo {
  maxTokens?: number | null
  contextWindow?: number
  supportsImages?: boolean
  supportsReasoningBudget?: boolean
  requiredReasoningBudget?: boolean
  inputPrice?: number
  outputPrice?: number
  cacheWritesPrice?: number
  cacheReadsPrice?: number
  longContextPricing?: LongContextPricing
}

/** One chunk of an API stream (the kinds a summary reads: `text` and `usage`; others are skipped). */
export interface ApiStreamChunk {
  type: string
  text?: unknown
  inputTokens?: unknown
  outputTokens?: unknown
  cacheWriteTokens?: unknown
  cacheReadTokens?: unknown
  totalCost?: unknown
}

export interface ApiHandlerCreateMessageMetadata {
  taskId?: string
  mode?: string
  tools?: unknown[]
  tool_choice?: unknown
  parallelToolCalls?: boolean
}

/**
 * The extension's `ApiHandler`, as far as these functions use it: `createMessage` streams the
 * summary, `countTokens` counts every estimate, `getModel().info.supportsImages` decides whether
 * images are sent.
 */
export interface ApiHandler {
  createMessage(
    systemPrompt: string,
    messages: Array<{ role: 'user' | 'assistant'; content: string | ContentBlockParam[] }>,
    metadata?: ApiHandlerCreateMessageMetadata,
  ): AsyncIterable<ApiStreamChunk>
  getModel(): { id: string; info: ModelInfo }
  countTokens(content: ContentBlockParam[]): Promise<number>
}

// ------------------------------------------------------------------ context management

export declare const TOKEN_BUFFER_PERCENTAGE: 0.1

export declare function estimateTokenCount(content: ContentBlockParam[], apiHandler: ApiHandler): Promise<number>

export interface TruncationResult<M extends ApiMessage = ApiMessage> {
  messages: M[]
  truncationId: string
  messagesRemoved: number
}

export declare function truncateConversation<M extends ApiMessage>(
  messages: M[],
  fracToRemove: number,
  taskId: string,
): TruncationResult<M>

export interface WillManageContextOptions {
  totalTokens: number
  contextWindow: number
  maxTokens?: number | null
  autoCondenseContext: boolean
  autoCondenseContextPercent: number
  profileThresholds: Record<string, number>
  currentProfileId: string
  lastMessageTokens: number
  /**
   * Measure the percentage against the window less the output reserve (`maxTokens` when above
   * zero), 100 when that leaves no room (3.66+; what VS Code's language-model provider asks for).
   */
  useAvailableInputForContextPercent?: boolean
}

export declare function willManageContext(options: WillManageContextOptions): boolean

export interface ContextManagementOptions<M extends ApiMessage = ApiMessage> {
  messages: M[]
  totalTokens: number
  contextWindow: number
  maxTokens?: number | null
  apiHandler: ApiHandler
  autoCondenseContext: boolean
  autoCondenseContextPercent: number
  systemPrompt: string
  taskId: string
  customCondensingPrompt?: string
  profileThresholds: Record<string, number>
  currentProfileId: string
  /** As in `WillManageContextOptions`. */
  useAvailableInputForContextPercent?: boolean
  metadata?: ApiHandlerCreateMessageMetadata
  environmentDetails?: string
  /** Folded by the caller's `generateFoldedFileContext` beside its condense module when one is known (docs/compat-extension.md); otherwise not folded (see `foldedFileContext`). */
  filesReadByRoo?: string[]
  cwd?: string
  /** Handed to the caller's `generateFoldedFileContext`; not used otherwise. */
  rooIgnoreController?: unknown
  /** This package's extra: folded file context already rendered, one `<system-reminder>` section each. */
  foldedFileContext?: string[]
  /**
   * This package's extra: called once a summary has come back non-empty (as the extension calls
   * `generateFoldedFileContext`); its sections replace `foldedFileContext`. `null` or a failure
   * keeps `foldedFileContext`.
   */
  foldFileContext?: () => Promise<string[] | null> | string[] | null
  /** This package's extra: aborting rejects with code `ABORTED`. */
  signal?: AbortSignal
}

export interface SummarizeResponse<M extends ApiMessage = ApiMessage> {
  messages: M[]
  summary: string
  cost: number
  newContextTokens?: number
  error?: string
  errorDetails?: string
  condenseId?: string
}

export type ContextManagementResult<M extends ApiMessage = ApiMessage> = SummarizeResponse<M> & {
  prevContextTokens: number
  truncationId?: string
  messagesRemoved?: number
  newContextTokensAfterTruncation?: number
}

export declare function manageContext<M extends ApiMessage>(
  options: ContextManagementOptions<M>,
): Promise<ContextManagementResult<M>>

// ------------------------------------------------------------------ condensation

export declare const MIN_CONDENSE_THRESHOLD: 5
export declare const MAX_CONDENSE_THRESHOLD: 100
/** Messages kept after a summary by releases up to 3.42; today's fresh-start model keeps none. */
export declare const N_MESSAGES_TO_KEEP: 3

export interface SummarizeConversationOptions<M extends ApiMessage = ApiMessage> {
  messages: M[]
  apiHandler: ApiHandler
  systemPrompt: string
  taskId: string
  isAutomaticTrigger?: boolean
  customCondensingPrompt?: string
  metadata?: ApiHandlerCreateMessageMetadata
  environmentDetails?: string
  filesReadByRoo?: string[]
  cwd?: string
  rooIgnoreController?: unknown
  foldedFileContext?: string[]
  foldFileContext?: () => Promise<string[] | null> | string[] | null
  signal?: AbortSignal
}

export declare function summarizeConversation<M extends ApiMessage>(
  options: SummarizeConversationOptions<M>,
): Promise<SummarizeResponse<M>>

export declare function toolUseToText(block: ContentBlockParam): string
export declare function toolResultToText(block: ContentBlockParam): string
export declare function convertToolBlocksToText(content: string | ContentBlockParam[]): string | ContentBlockParam[]
export declare function transformMessagesForCondensing<
  T extends { role: string; content: string | ContentBlockParam[] },
>(messages: T[]): T[]
export declare function injectSyntheticToolResults<M extends ApiMessage>(messages: M[]): M[]
export declare function extractCommandBlocks(message: ApiMessage): string
export declare function getMessagesSinceLastSummary<M extends ApiMessage>(messages: M[]): M[]
export declare function getEffectiveApiHistory<M extends ApiMessage>(messages: M[]): M[]
export declare function cleanupAfterTruncation<M extends ApiMessage>(messages: M[]): M[]

// ------------------------------------------------------------------ cost

/** The core's own result type (generated from its Rust struct): the same shape. */
export type { ApiCostResult }

export declare function calculateApiCostAnthropic(
  modelInfo: ModelInfo,
  inputTokens: number,
  outputTokens: number,
  cacheCreationInputTokens?: number,
  cacheReadInputTokens?: number,
): ApiCostResult

export declare function calculateApiCostOpenAI(
  modelInfo: ModelInfo,
  inputTokens: number,
  outputTokens: number,
  cacheCreationInputTokens?: number,
  cacheReadInputTokens?: number,
  serviceTier?: ServiceTier,
): ApiCostResult

export declare function parseApiPrice(price: any): number | undefined

// ------------------------------------------------------------------ metrics

/** The core's own result type (generated from its Rust struct): the same shape. */
export type { TokenUsage }

export type ToolUsage = Record<string, { attempts: number; failures: number }>

export interface ParsedApiReqStartedTextType {
  tokensIn: number
  tokensOut: number
  cacheWrites: number
  cacheReads: number
  cost?: number
  apiProtocol?: 'anthropic' | 'openai'
}

/** In `legacy` mode `contextTokens` is the extension's JavaScript sum, a string when a record's counts are strings. */
export declare function getApiMetrics(messages: ClineMessage[]): TokenUsage
export declare function consolidateTokenUsage(messages: ClineMessage[]): TokenUsage
export declare function hasTokenUsageChanged(current: TokenUsage, snapshot?: TokenUsage): boolean
export declare function hasToolUsageChanged(current: ToolUsage, snapshot?: ToolUsage): boolean
export declare const COMMAND_OUTPUT_STRING: 'Output:'
export declare function combineCommandSequences<M extends ClineMessage>(messages: M[]): M[]
export declare function combineApiRequests<M extends ClineMessage>(messages: M[]): M[]

export type ContextManagementEvent = 'condense_context' | 'condense_context_error' | 'sliding_window_truncation'
export declare const CONTEXT_MANAGEMENT_EVENTS: readonly ContextManagementEvent[]
export declare function isContextManagementEvent(value: unknown): value is ContextManagementEvent

// ------------------------------------------------------------------ tokens

export interface CountTokensOptions {
  /** Accepted and ignored: counting always runs off the JavaScript thread. */
  useWorker?: boolean
}

export declare function countTokens(content: ContentBlockParam[], options?: CountTokensOptions): Promise<number>
export declare function tiktoken(content: ContentBlockParam[]): Promise<number>

// ------------------------------------------------------------------ models

export declare const ANTHROPIC_DEFAULT_MAX_TOKENS: 8192
export declare const DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS: 16384
export declare const DEFAULT_HYBRID_REASONING_MODEL_THINKING_TOKENS: 8192

export interface ProviderSettingsForMaxTokens {
  modelMaxTokens?: number
  enableReasoningEffort?: boolean
}

export declare function getModelMaxOutputTokens(params: {
  modelId: string
  model: ModelInfo
  settings?: ProviderSettingsForMaxTokens
  format?: 'anthropic' | 'openai' | 'gemini' | 'openrouter'
}): number | undefined

// ------------------------------------------------------------------ task

export declare function mergeConsecutiveApiMessages<M extends ApiMessage>(
  messages: M[],
  options?: { roles?: Array<'user' | 'assistant'> },
): M[]

export interface HistoryItem {
  id: string
  ts: number
  task?: string
  number?: number
  tokensIn?: number
  tokensOut?: number
  totalCost?: number
  workspace?: string
  /** `active` (also when absent), `delegated`, `completed` or `interrupted`. */
  status?: string
  parentTaskId?: string
  rootTaskId?: string
  delegatedToId?: string
  awaitingChildId?: string
  completedByChildId?: string
  completionResultSummary?: string
  childIds?: string[]
}

export interface TaskHistoryStoreOptions<T extends HistoryItem = HistoryItem> {
  /** Called inside the store lock after each write with every item. */
  onWrite?: (items: T[]) => Promise<void>
}

/** A status change refused because the record on disk reached a status it may not leave that way. */
export declare class DeltaRejectedError extends Error {
  constructor(taskId: string, diskStatus: string, attemptedStatus: string)
  readonly taskId: string
  readonly diskStatus: string
  readonly attemptedStatus: string
}

/**
 * Throws `Invalid task status transition: <from> → <to>` unless the task state machine allows it:
 * active (also `undefined`) → delegated | completed | interrupted, delegated → active,
 * interrupted → completed.
 */
export declare function assertValidTransition(from: string | undefined, to: string): void

/**
 * The task store: one `tasks/<id>/history_item.json` per task, each write merged into the file
 * under its `proper-lockfile` lock (Zoo Code 3.80+; before 3.80, `setExtensionRelease`, also
 * `tasks/_index.json`).
 */
export declare class TaskHistoryStore<T extends HistoryItem = HistoryItem> {
  constructor(globalStoragePath: string, options?: TaskHistoryStoreOptions<T>)
  readonly initialized: Promise<void>
  initialize(): Promise<void>
  dispose(): void
  get(taskId: string): T | undefined
  getAll(): T[]
  getByWorkspace(workspace: string): T[]
  upsert(item: T): Promise<T[]>
  delete(taskId: string): Promise<void>
  deleteMany(taskIds: string[]): Promise<void>
  atomicReadAndUpdate(taskId: string, updater: (current: T) => T): Promise<T[]>
  atomicUpdatePair(firstId: string, secondId: string, firstUpdater: (current: T) => T, secondUpdater: (current: T) => T): Promise<T[]>
  reconcile(options?: { forceRefresh?: boolean }): Promise<void>
  invalidate(taskId: string): Promise<void>
  invalidateAll(): Promise<void>
  migrateFromGlobalState(taskHistoryEntries: T[]): Promise<void>
  /** Releases before 3.80: writes `tasks/_index.json`; today's rules keep no index. */
  flushIndex(): Promise<void>
}

// ------------------------------------------------------------------ the release whose rules apply

/** The release named with `setExtensionRelease` or `ROO_STATE_EXTENSION_RELEASE`; `null`: today's rules (3.80+). */
export declare function extensionRelease(): string | null

/**
 * Follow the rules of release `release` (`"3.52.1"`: Roo Code's last) instead of today's; `null`
 * returns to `ROO_STATE_EXTENSION_RELEASE`, else today's. Throws `INVALID_ARGUMENT` for a text that
 * is not a release number.
 */
export declare function setExtensionRelease(release: string | null): void
