/** `UIMessagesDeserializer` of roo-state-core/compat. docs/compat.md §3. */

/** A `ui_messages.json` record as the legacy module types it (never validated). */
export interface UIMessage {
  ts: number
  type: 'ask' | 'say'
  ask?: string
  say?: string
  text?: string
  images?: string[]
  partial?: boolean
  reasoning?: string
  conversationHistoryIndex?: number
  [key: string]: unknown
}

export interface ToolCallInfo {
  tool: string
  mode?: string
  message?: string
  content?: string
  timestamp: number
}

export interface NewTaskInfo {
  mode: string
  message: string
  timestamp: number
}

export interface ApiReqInfo {
  request?: string
  cost?: number
  cancelReason?: string | null
  streamingFailedMessage?: string
  [key: string]: unknown
}

export interface MessageStats {
  total: number
  askMessages: number
  sayMessages: number
  toolCalls: number
  apiRequests: number
  newTasks: number
  errors: number
}

export declare class UIMessagesDeserializer {
  safeJsonParse<T>(jsonString: string | null | undefined, defaultValue?: T): T | undefined
  readTaskMessages(uiMessagesPath: string): Promise<UIMessage[]>
  extractToolCalls(messages: UIMessage[]): ToolCallInfo[]
  /** An unparsable payload stays in the list as `undefined`. */
  extractApiRequests(messages: UIMessage[]): Array<ApiReqInfo | undefined>
  extractNewTasks(messages: UIMessage[]): NewTaskInfo[]
  extractUserMessages(messages: UIMessage[]): UIMessage[]
  extractErrors(messages: UIMessage[]): UIMessage[]
  getInitialInstruction(messages: UIMessage[]): string | undefined
  getMessageStats(messages: UIMessage[]): MessageStats
}
