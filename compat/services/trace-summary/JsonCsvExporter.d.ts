/**
 * `JsonCsvExporter` of roo-state-core/compat: JSON and CSV summaries of one legacy skeleton.
 * See docs/compat-services.md §5.
 */

export interface SummaryOptions {
  jsonVariant?: 'light' | 'full'
  csvVariant?: 'conversations' | 'messages' | 'tools' | string
  truncationChars: number
}

/** The statistics of a JSON summary (the caller's own type when it has one with these fields). */
export interface SummaryStatistics {
  totalSections: number
  userMessages: number
  assistantMessages: number
  toolResults: number
  userContentSize: number
  assistantContentSize: number
  toolResultsSize: number
  totalContentSize: number
  userSizePercentage: number
  assistantSizePercentage: number
  toolResultsSizePercentage: number
  userMessagePercentage: number
  assistantMessagePercentage: number
  toolResultsMessagePercentage: number
  compressionRatio?: number
}

/**
 * A summary result. `S` is what the caller's `getEmptyStatistics` gives: a failure, and a CSV
 * summary, carry that object; a JSON summary carries the statistics computed here.
 */
export interface SummaryResult<S = SummaryStatistics> {
  success: boolean
  content: string
  statistics: S | SummaryStatistics
  error?: string
}

/** The caller's classifier (only `isToolResult` is used). */
export interface ContentClassifierLike {
  isToolResult(content: string): boolean
}

export interface SummarySkeleton {
  taskId: string
  isCompleted?: boolean
  metadata: { createdAt: string; lastActivity: string; messageCount: number; actionCount: number; totalSize: number; workspace?: string }
  sequence?: unknown[]
}

export interface JsonToolCall {
  toolName: string
  serverName?: string
  arguments: Record<string, unknown>
  result: string
  success: boolean
}

export declare class JsonCsvExporter {
  constructor(classifier: ContentClassifierLike)
  generateJsonSummary<C extends SummarySkeleton, S>(
    conversation: C,
    options: SummaryOptions,
    helpers: {
      truncateContent: (content: string, maxChars: number) => string
      isContentTruncated: (content: string, maxChars: number) => boolean
      getEmptyStatistics: () => S
      getOriginalContentSize: (conversation: C) => number
      calculateCompressionRatio: (original: number, final: number) => number
    },
  ): Promise<SummaryResult<S>>
  generateCsvSummary<C extends SummarySkeleton, S>(
    conversation: C,
    options: SummaryOptions,
    helpers: {
      isContentTruncated: (content: string, maxChars: number) => boolean
      getEmptyStatistics: () => S
      truncateText: (text: string, maxLength: number) => string
    },
  ): Promise<SummaryResult<S>>
  extractToolCallsFromMessage(content: string): JsonToolCall[]
  escapeCsv(value: unknown): string
  truncateText(text: string, maxLength: number): string
}
