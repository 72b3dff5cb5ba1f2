/** `messageExtractionCoordinator` of roo-state-core/compat. docs/compat.md §3. */
import type { NewTaskInstruction } from './roo-storage-detector.js'

export interface MessageExtractionOptions {
  /** Debug logs for this call (the coordinator's debug flag is set to it at each call). */
  enableDebug?: boolean
  maxLines?: number
  onlyJsonFormat?: boolean
  patterns?: string[]
  minLength?: number
  maxLength?: number
}

export interface ExtractionResult {
  instructions: NewTaskInstruction[]
  processedMessages: number
  matchedPatterns: string[]
  errors: string[]
}

export declare const PATTERN_NAMES: readonly string[]

export declare class MessageExtractionCoordinator {
  private extractors
  private debugEnabled
  setDebugEnabled(enabled: boolean): void
  getAvailableExtractors(): string[]
  extractFromMessages(messages: unknown[], options?: MessageExtractionOptions): ExtractionResult
  extractFromMessage(message: unknown, options?: MessageExtractionOptions): ExtractionResult
}

export declare const messageExtractionCoordinator: MessageExtractionCoordinator
export declare function cleanMode(mode: unknown): string
export declare function extractTimestamp(msg: { timestamp?: unknown; ts?: unknown } | null | undefined): number
export declare function createInstruction(
  timestamp: number,
  mode: string,
  message: unknown,
  minLength?: number,
  maxLength?: number,
): NewTaskInstruction | null
