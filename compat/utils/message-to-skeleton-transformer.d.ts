/** `MessageToSkeletonTransformer` of roo-state-core/compat. docs/compat.md §3. */
import type { UIMessage } from './ui-messages-deserializer.js'
import type { ConversationSkeleton } from './roo-storage-detector.js'

export interface TransformerOptions {
  /** `computeInstructionPrefix` on instructions and prefixes (default true). */
  normalizePrefixes?: boolean
  /** Accepted, unused. */
  includeMetadata?: boolean
  /** Reject with `GenericError` `INVALID_ARGUMENT` on an inconsistent skeleton (default false). */
  strictValidation?: boolean
}

export interface TransformationResult {
  skeleton: ConversationSkeleton
  metadata: {
    messageCount: number
    userMessageCount: number
    toolCallCount: number
    newTaskCount: number
    hasInitialInstruction: boolean
    processingTimeMs: number
  }
}

export declare class GenericError extends Error {
  constructor(message: string, code: string)
  code: string
}

export declare class MessageToSkeletonTransformer {
  constructor(options?: TransformerOptions)
  options: Required<TransformerOptions>
  transform(messages: UIMessage[], taskId: string, workspace?: string): Promise<TransformationResult>
  extractUserMessages(messages: UIMessage[]): UIMessage[]
  buildMainInstruction(messages: UIMessage[], apiReqs: Array<{ request?: string } | undefined>): { instruction: string; truncatedInstruction: boolean }
  buildChildTaskPrefixes(newTasks: Array<{ message: string }>): string[]
  detectCompletion(messages: UIMessage[], toolCalls: Array<{ tool: string }>): boolean
  extractTimestamps(messages: UIMessage[], isCompleted: boolean): { startedAt: number; completedAt: number | null }
  validateSkeletonCompatibility(skeleton: ConversationSkeleton): void
  autoDetectWorkspace(messages: UIMessage[]): Promise<string | null>
}
