/**
 * `RooStorageDetector` of roo-state-core/compat: task stores and legacy skeletons. docs/compat.md §2.
 */
import type { MessageSkeleton } from '../../index.js'

/** One item of a legacy skeleton's `sequence`: a message (the core's generated type, the same shape). */
export type { MessageSkeleton }

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

/** The task metadata a summary carries (the legacy `TaskMetadata` subset compat fills). */
export interface SummaryMetadata {
  title?: string
  prompt: { task: string }
  workspace?: string
  parentTaskId?: string
  parent_task_id?: string
  rootTaskId?: string
  lastActivity?: string
  createdAt?: string
  mode?: string
  [key: string]: unknown
}

/** @deprecated the legacy summary of one conversation. */
export interface ConversationSummary {
  taskId: string
  parentTaskId?: string
  path: string
  metadata: SummaryMetadata
  messageCount: number
  lastActivity: string
  hasApiHistory: boolean
  hasUiMessages: boolean
  size: number
  prompt: string
  mode?: string
}

/** Tasks, size and latest file time of one workspace (`getWorkspaceBreakdown`). */
export interface WorkspaceBreakdownEntry {
  count: number
  totalSize: number
  lastActivity: string
}

/** What a workspace detector answers for a task folder. */
export interface WorkspaceDetection {
  workspace: string | null
  source: string
  confidence: number
  detectedAt?: string
}

/** The paths `analyzeConversation` hands to the analysis it dispatches to. */
export interface TaskFilePaths {
  metadataPath: string
  apiHistoryPath: string
  uiMessagesPath: string
  historyItemPath: string
}

/** The cache used when the caller wired no cache manager (docs/drop-in.md); replaceable. */
export interface CompatCacheManager {
  get(key: string): Promise<unknown> | unknown
  set(key: string, value: unknown): Promise<void> | void
}

export interface ExtractionCoordinator {
  extractFromMessages(
    messages: unknown[],
    options?: { maxLines?: number; onlyJsonFormat?: boolean; enableDebug?: boolean },
  ): { instructions: NewTaskInstruction[]; errors?: unknown[] }
}

export declare class RooStorageError extends Error {
  constructor(message: string, code: string)
  code: string
}

export declare function detectSourceFromPath(p: string | undefined): 'roo' | 'zoo-code' | 'claude-code'

export declare class RooStorageDetector {
  static MAX_CONVERSATION_FILE_SIZE: number
  static readonly COMMON_ROO_PATHS: string[]
  static ROO_EXTENSION_PATTERNS: string[]
  static cacheManager: CompatCacheManager
  static _coordinatorOverride: ExtractionCoordinator | null
  static setCoordinatorOverride(coordinator: ExtractionCoordinator | null): void

  static detectStorageLocations(): Promise<string[]>
  static findPotentialStorageLocations(): Promise<string[]>
  static validateCustomPath(customPath: string): Promise<boolean>
  /** @deprecated */
  static detectRooStorage(): Promise<{ locations: Array<{ path: string; type: 'local' }> }>
  static getStatsForPath(storagePath: string): Promise<StorageStats>
  static getStorageStats(): Promise<{ totalLocations: number; totalConversations: number; totalSize: number }>
  static getWorkspaceBreakdown(): Promise<Record<string, WorkspaceBreakdownEntry>>
  static detectWorkspaceForTask(taskPath: string): Promise<string>
  static detectWorkspaceForTaskWithDetector(
    taskPath: string,
    detector: { detect(taskPath: string): Promise<WorkspaceDetection> },
    fallbackWorkspace: string,
  ): Promise<string>
  static getTaskPathById(taskId: string): Promise<string | null>
  static findConversationById(taskId: string): Promise<ConversationSummary | null>
  static findConversation(taskId: string): Promise<ConversationSummary | null>
  static scanConversationsMetadata(
    storagePath: string,
    options: { limit: number; offset: number; sortBy: string; sortOrder: 'asc' | 'desc' },
  ): Promise<ConversationSummary[]>
  static scanConversations(tasksPath: string): Promise<ConversationSummary[]>

  static analyzeConversation(taskId: string, taskPath: string, useProductionHierarchy?: boolean): Promise<ConversationSkeleton | null>
  static analyzeWithOldSystem(taskId: string, taskPath: string, useProductionHierarchy: boolean, paths: TaskFilePaths): Promise<ConversationSkeleton | null>
  static analyzeWithNewSystem(taskId: string, taskPath: string, useProductionHierarchy: boolean, paths: TaskFilePaths): Promise<ConversationSkeleton | null>
  static analyzeWithComparison(taskId: string, taskPath: string, useProductionHierarchy: boolean, paths: TaskFilePaths): Promise<ConversationSkeleton | null>
  static loadUIMessages(uiMessagesPath: string): Promise<unknown[]>
  static buildSequenceFromFiles(
    apiHistoryPath: string,
    uiMessagesPath: string,
    preloadedApiContent?: string,
    preloadedUiContent?: string,
  ): Promise<Array<MessageSkeleton | ActionMetadata>>
  static extractMainInstructionFromUI(uiMessagesPath: string, preloadedContent?: string): Promise<string | undefined>
  static extractNewTaskInstructionsFromUI(uiMessagesPath: string, maxLines?: number, preloadedContent?: string): Promise<NewTaskInstruction[]>
  static extractFromMessageFile(
    filePath: string,
    instructions: NewTaskInstruction[],
    maxLines?: number,
    onlyJsonFormat?: boolean,
    preloadedContent?: string,
  ): Promise<void>
  static coordinator(): Promise<ExtractionCoordinator>
  static extractNewTaskInstructions(messages: unknown[]): Promise<NewTaskInstruction[]>

  /** @deprecated always `undefined` */
  static inferParentTaskIdFromContent(...args: unknown[]): Promise<undefined>
  /** @deprecated always `false` */
  static analyzeParentForNewTaskInstructions(...args: unknown[]): Promise<false>
  /** @deprecated always `undefined` */
  static findParentByNewTaskInstructions(...args: unknown[]): Promise<undefined>
  /** @deprecated always `undefined` */
  static legacyInferParentFromChildContent(...args: unknown[]): Promise<undefined>
  static extractParentFromApiHistory(apiHistoryPath: string): Promise<string | undefined>
  static extractParentFromUiMessages(uiMessagesPath: string): Promise<string | undefined>
  static extractTaskIdFromText(text: string | null | undefined): string | undefined

  static processBatch<T, R>(
    items: T[],
    processor: (item: T) => Promise<R>,
    batchSize?: number,
    onProgress?: (processed: number, total: number) => void,
  ): Promise<R[]>
  static calculateTreeDepth(skeletons: Array<{ taskId: string; parentTaskId?: string }>): number
  static buildHierarchicalSkeletons(workspacePath?: string, useFullVolume?: boolean, forceRebuild?: boolean): Promise<ConversationSkeleton[]>
  static buildHierarchicalSkeletonsLegacy(workspacePath?: string, useFullVolume?: boolean): Promise<ConversationSkeleton[]>
  static rebuildIndexFromExistingSkeletons(): Promise<void>
  static getAllConversationsInWorkspace(workspacePath: string, maxTasks?: number): Promise<ConversationSkeleton[]>
}
