/* Condensation, context management, cost and token types. */

/** Prices in USD per million tokens (the price fields of the extension's `ModelInfo`; other fields are ignored). */
export interface ModelPricing {
  inputPrice?: number | null
  outputPrice?: number | null
  cacheWritesPrice?: number | null
  cacheReadsPrice?: number | null
  longContextPricing?: {
    thresholdTokens?: number
    inputPriceMultiplier?: number
    outputPriceMultiplier?: number
    cacheWritesPriceMultiplier?: number
    cacheReadsPriceMultiplier?: number
    appliesToServiceTiers?: Array<'default' | 'flex' | 'priority' | string>
  }
  [extra: string]: JsonValue | undefined
}

/**
 * Which release's rules to follow, on the one release line Roo Code (up to 3.52.x) and Zoo Code
 * (3.53 and later) share: `"3.80.0"` (default, today's Zoo Code), `"3.52.1"` (Roo Code's last:
 * a `maxTokens` of -1 is reserved as it is), or an older one such as `"3.20.0"` (keep the last 3
 * messages, "context grew" check), `"3.30.0"` (destructive), `"3.40.0"` (tagged).
 */
export interface EraOptions {
  era?: string
}

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
   * zero), 100 when that leaves no room; what VS Code's language-model provider asks for (3.66+).
   */
  useAvailableInputForContextPercent?: boolean
  era?: string
}

/** One chunk of an API handler's stream (the kinds a summary uses). */
export type ApiStreamChunk =
  | { type: 'text'; text: string }
  | {
      type: 'usage'
      inputTokens: number
      outputTokens: number
      cacheWriteTokens?: number
      cacheReadTokens?: number
      totalCost?: number
    }
  | { type: string; [extra: string]: unknown }

/** The extension's API handler, as far as condensing uses it. */
export interface CondenseApiHandler {
  createMessage(
    systemPrompt: string,
    messages: Array<{ role: string; content: string | ContentBlock[] }>,
    metadata?: JsonValue,
  ): AsyncIterable<ApiStreamChunk> | Iterable<ApiStreamChunk>
  /** Used for every count when present (unless `useHandlerCountTokens: false`); this package's estimate otherwise. */
  countTokens?(content: ContentBlock[]): Promise<number> | number
  /** `info.supportsImages` false → images are sent as a text placeholder. */
  getModel?(): { id?: string; info?: { supportsImages?: boolean; [k: string]: unknown } }
}

/** The built-in OpenAI-compatible streaming client (http:// only unless built with TLS). */
export interface HttpProviderConfig {
  /** Up to the API version, e.g. `http://127.0.0.1:8080/v1`; `/chat/completions` is added. */
  baseUrl: string
  apiKey?: string
  model: string
  maxTokens?: number
  temperature?: number
  headers?: Record<string, string>
  connectTimeoutMs?: number
  /** Longest wait for the headers or the next piece of the stream (default 60 000). */
  idleTimeoutMs?: number
  /** Longest a call may take, retries included (default 600 000). */
  requestTimeoutMs?: number
  /** Retries after 429, 5xx or a failed connection (default 3), with exponential backoff or Retry-After. */
  maxRetries?: number
  retryBaseDelayMs?: number
  retryMaxDelayMs?: number
  supportsImages?: boolean
  /** Prices to compute a cost with when the server reports none as `usage.cost`. */
  modelInfo?: ModelPricing
}

export interface CondenseProviderOptions {
  /** The extension's API handler. Without one (and without `httpProvider`) summarising fails with `condense_handler_invalid`. */
  apiHandler?: CondenseApiHandler
  httpProvider?: HttpProviderConfig
  /** Default true: count with `apiHandler.countTokens` when it has one. */
  useHandlerCountTokens?: boolean
  /** Aborting rejects the promise with code `ABORTED` and stops the handler's stream. */
  signal?: AbortSignal
  /** Folded file context, already rendered (one `<system-reminder>` section per entry). `filesReadByRoo` is not read. */
  foldedFileContext?: string[]
  /** Replaces this package's summary system prompt. */
  summaryPrompt?: string
  era?: string
}

export interface SummarizeConversationOptions extends CondenseProviderOptions {
  messages: ApiMessage[]
  systemPrompt: string
  taskId: string
  isAutomaticTrigger?: boolean
  customCondensingPrompt?: string
  metadata?: { tools?: JsonValue[]; tool_choice?: JsonValue; parallelToolCalls?: boolean; [k: string]: JsonValue | undefined }
  environmentDetails?: string
  /** Context size before condensing, for the "context grew" check of releases 3.19–3.42. */
  prevContextTokens?: number
}

export interface ManageContextOptions extends CondenseProviderOptions {
  messages: ApiMessage[]
  totalTokens: number
  contextWindow: number
  maxTokens?: number | null
  autoCondenseContext: boolean
  autoCondenseContextPercent: number
  systemPrompt: string
  taskId: string
  customCondensingPrompt?: string
  profileThresholds: Record<string, number>
  currentProfileId: string
  metadata?: SummarizeConversationOptions['metadata']
  environmentDetails?: string
  /** Skip counting the newest message (as `willManageContext` takes it). */
  lastMessageTokens?: number
  /** As in `WillManageContextOptions`. */
  useAvailableInputForContextPercent?: boolean
}
