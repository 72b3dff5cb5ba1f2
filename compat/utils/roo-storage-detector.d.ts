/**
 * `RooStorageDetector` of roo-state-core/compat: task stores and legacy skeletons. docs/compat.md §2.
 */

/** One item of a legacy skeleton's `sequence`: a message. */
export interface MessageSkeleton {
  role: 'user' | 'assistant'
  content: string
  timestamp: string
  isTruncated: boolean
}

/** One item of a legacy skeleton's `sequence`: a tool or command. */
export interface ActionMetadata {
  type: 'tool' | 'command'
  name: string
  parameters: Record<string, unknown>
  status: 'success' | 'failure' | 'in_progress'
  timestamp: string
  line_count?: number
  content_size?: number
  file_path?: string
}

export interface SkeletonMetadata {
  title?: string
  createdAt: string
  lastActivity: string
  mode?: string
  messageCount: number
  actionCount: number
  totalSize: number
  oversizedFiles?: string[]
  workspace?: string
  dataSource?: string
  source?: 'roo' | 'zoo-code' | 'claude-code'
  [key: string]: unknown
}

/** The legacy `ConversationSkeleton`. */
export interface ConversationSkeleton {
  taskId: string
  parentTaskId?: string
  sequence: Array<MessageSkeleton | ActionMetadata>
  metadata: SkeletonMetadata
  childTaskInstructionPrefixes?: string[]
  isCompleted?: boolean
  truncatedInstruction?: string
  [key: string]: unknown
}

/** A new-task instruction found by the extraction chain (`timestamp` in epoch ms). */
export interface NewTaskInstruction {
  timestamp: number
  mode: string
  message: string
  [key: string]: unknown
}

export interface StorageStats {
  conversationCount: number
  totalSize: number
  fileTypes: Record<string, number>
}

/** @deprecated the legacy summary of one conversation. */
export interface ConversationSummary {
  taskId: string
  path: string
  metadata: { title?: string; prompt: { task: string } }
  messageCount: number
  lastActivity: string
  hasApiHistory: boolean
  hasUiMessages: boolean
  size: number
  prompt: string
}

/** What `detectStorageLocations` consults first (the legacy `globalCacheManager`); replaceable. */
export interface CompatCacheManager {
  get(key: string): Promise<unknown> | unknown
  set(key: string, value: unknown): Promise<void> | void
}

export interface ExtractionCoordinator {
  extractFromMessages(messages: unknown[], options?: { maxLines?: number; onlyJsonFormat?: boolean; enableDebug?: boolean }): { instructions: NewTaskInstruction[] }
}

export declare class RooStorageError extends Error {
  constructor(message: string, code: string)
  code: string
}

export declare function detectSourceFromPath(p: string | undefined): 'roo' | 'zoo-code' | 'claude-code'

export declare class RooStorageDetector {
  static MAX_CONVERSATION_FILE_SIZE: number
  static cacheManager: CompatCacheManager
  static _coordinatorOverride: ExtractionCoordinator | null
  static setCoordinatorOverride(coordinator: ExtractionCoordinator | null): void

  static detectStorageLocations(): Promise<string[]>
  static validateCustomPath(p: string): Promise<boolean>
  /** @deprecated */
  static detectRooStorage(): Promise<{ locations: Array<{ path: string; type: 'local' }> }>
  static getStatsForPath(storagePath: string): Promise<StorageStats>
  static getStorageStats(): Promise<{ totalLocations: number; totalConversations: number; totalSize: number }>
  static getTaskPathById(taskId: string): Promise<string | null>
  static findConversationById(taskId: string): Promise<ConversationSummary | null>
  static findConversation(taskId: string): Promise<ConversationSummary | null>
  static scanConversationsMetadata(
    storagePath: string,
    options?: { limit?: number; offset?: number; sortBy?: string; sortOrder?: 'asc' | 'desc' },
  ): Promise<ConversationSkeleton[]>

  static analyzeConversation(taskId: string, taskPath: string, useProductionHierarchy?: boolean): Promise<ConversationSkeleton | null>
  static analyzeWithOldSystem(taskId: string, taskPath: string, useProductionHierarchy?: boolean, paths?: Record<string, string>): Promise<ConversationSkeleton | null>
  static analyzeWithNewSystem(taskId: string, taskPath: string, useProductionHierarchy?: boolean, paths?: Record<string, string>): Promise<ConversationSkeleton | null>
  static analyzeWithComparison(taskId: string, taskPath: string, useProductionHierarchy?: boolean, paths?: Record<string, string>): Promise<ConversationSkeleton | null>
  static loadUIMessages(uiMessagesPath: string): Promise<unknown[]>
  static extractMainInstructionFromUI(uiMessagesPath: string, preloadedContent?: string): Promise<string | undefined>
  static extractNewTaskInstructionsFromUI(uiMessagesPath: string, maxLines?: number, preloadedContent?: string): Promise<NewTaskInstruction[]>
  static extractFromMessageFile(
    filePath: string,
    instructions: NewTaskInstruction[],
    maxLines?: number,
    onlyJsonFormat?: boolean,
    preloadedContent?: string,
  ): Promise<void>
  static extractNewTaskInstructions(messages: unknown[]): NewTaskInstruction[]

  static inferParentTaskIdFromContent(...args: unknown[]): Promise<undefined>
  static analyzeParentForNewTaskInstructions(...args: unknown[]): false
  static findParentByNewTaskInstructions(...args: unknown[]): undefined
  static legacyInferParentFromChildContent(...args: unknown[]): undefined
  static extractTaskIdFromText(text: string | undefined): string | undefined

  static buildHierarchicalSkeletonsLegacy(workspacePath?: string, useFullVolume?: boolean): Promise<ConversationSkeleton[]>
  static buildHierarchicalSkeletons(workspacePath?: string, useFullVolume?: boolean, forceRebuild?: boolean): Promise<ConversationSkeleton[]>
}
