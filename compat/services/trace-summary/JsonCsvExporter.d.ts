/**
 * `JsonCsvExporter` of roo-state-core/compat: JSON and CSV summaries of one legacy skeleton.
 * See docs/compat-services.md §5.
 */

export interface SummaryOptions {
  jsonVariant?: 'light' | 'full'
  csvVariant?: 'conversations' | 'messages' | 'tools' | string
  truncationChars: number
}

export type SummaryStatistics = Record<string, number>

export interface SummaryResult {
  success: boolean
  content: string
  statistics: SummaryStatistics
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
  generateJsonSummary(
    conversation: SummarySkeleton,
    options: SummaryOptions,
    helpers: {
      truncateContent: (content: string, maxChars: number) => string
      isContentTruncated: (content: string, maxChars: number) => boolean
      getEmptyStatistics: () => SummaryStatistics
      getOriginalContentSize: (conversation: SummarySkeleton) => number
      calculateCompressionRatio: (original: number, final: number) => number
    },
  ): Promise<SummaryResult>
  generateCsvSummary(
    conversation: SummarySkeleton,
    options: SummaryOptions,
    helpers: {
      isContentTruncated: (content: string, maxChars: number) => boolean
      getEmptyStatistics: () => SummaryStatistics
      truncateText: (text: string, maxLength: number) => string
    },
  ): Promise<SummaryResult>
  extractToolCallsFromMessage(content: string): JsonToolCall[]
  escapeCsv(value: unknown): string
  truncateText(text: string, maxLength: number): string
}
