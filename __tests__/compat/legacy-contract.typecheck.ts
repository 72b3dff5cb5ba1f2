// Compat's declarations against the legacy server's contract, checked by the compiler
// (`tsc -p __tests__/compat/tsconfig.json`, run by scripts/test.sh and CI).
//
// The legacy server cannot be part of this project, so its contract is stated here as types of
// our own, written from what the shared specs record of it: the data model (legacy-server.md §1)
// and the exported members with the signatures the server's own code calls (legacy-api.md §3–§10).
// Each check says which way the server needs it:
// - `Same`: a data type the server both hands to compat and reads back (assignable both ways);
// - `Into`: a compat result the server reads as its own type;
// - a class or module's members against the legacy signatures, written as function-typed fields
//   so that parameters are checked contravariantly (compat accepts every legacy argument) and
//   results covariantly (the server can use what compat returns as its own type).
// The `@ts-expect-error` lines at the end change one compat field or signature and must fail: they
// show that each kind of check can fail.
// The real check stays the legacy server's own `tsc` over compat (docs/drop-in.md).

import type * as C from '../../compat/index.js'
import {
  HierarchyReconstructionEngine,
  MessageToSkeletonTransformer,
  RooStorageDetector,
  SkeletonCacheService,
  TaskInstructionIndex,
  UIMessagesDeserializer,
  XmlExporterService,
  ExportConfigManager,
  computeInstructionPrefix,
  createInstruction,
  cleanMode,
  extractTimestamp,
  globalTaskInstructionIndex,
  messageExtractionCoordinator,
} from '../../compat/index.js'

// ---------------------------------------------------------------------------------------------
// The legacy contract (legacy-server.md §1, legacy-api.md §3–§10)
// ---------------------------------------------------------------------------------------------

declare namespace Legacy {
  // LS §1.1
  interface MessageSkeleton {
    role: 'user' | 'assistant'
    content: string
    timestamp: string
    isTruncated: boolean
  }
  interface ActionMetadata {
    type: 'tool' | 'command'
    name: string
    parameters: Record<string, any>
    status: 'success' | 'failure' | 'in_progress'
    timestamp: string
    line_count?: number
    content_size?: number
    file_path?: string
  }
  interface SkeletonMetadata {
    title?: string
    lastActivity: string
    createdAt: string
    mode?: string
    messageCount: number
    actionCount: number
    totalSize: number
    oversizedFiles?: string[]
    workspace?: string
    machineId?: string
    qdrantIndexedAt?: string
    dataSource?: string
    source?: 'roo' | 'claude-code' | 'zoo-code'
    parentTaskId?: string
    /** LS §8.6 (out of this contract's scope: any object). */
    indexingState?: object
    /** LLM synthesis metadata (out of scope). */
    synthesis?: object
  }
  interface SkeletonHeader {
    taskId: string
    parentTaskId?: string
    metadata: SkeletonMetadata
    childTaskInstructionPrefixes?: string[]
    isCompleted?: boolean
    truncatedInstruction?: string
  }
  interface ConversationSkeleton extends SkeletonHeader {
    sequence: (MessageSkeleton | ActionMetadata)[]
  }
  interface NewTaskInstruction {
    timestamp: number
    mode: string
    message: string
    taskId?: string
  }
  interface TaskMetadata {
    parentTaskId?: string
    parent_task_id?: string
    rootTaskId?: string
    prompt?: { task: string }
    title?: string
    lastActivity?: string
    createdAt?: string
    mode?: string
    files_in_context?: { path: string; content: string; lineCount: number; [key: string]: any }[]
    workspace?: string
  }
  interface ConversationSummary {
    taskId: string
    parentTaskId?: string
    prompt: string
    lastActivity: string
    messageCount: number
    size: number
    hasApiHistory: boolean
    hasUiMessages: boolean
    mode?: string
    path: string
    metadata: TaskMetadata
  }
  interface StorageStats {
    conversationCount: number
    totalSize: number
    fileTypes: Record<string, number>
  }

  // LS §1.2
  interface FileInfo {
    path: string
    exists: boolean
    size?: number
    lastModified?: string
  }
  interface ProcessingState {
    phase1Completed: boolean
    phase2Completed: boolean
    processingErrors: string[]
    lastProcessedAt?: string
  }
  interface Phase1Result {
    processedCount: number
    parsedCount: number
    errors: { taskId: string; error: string }[]
    totalInstructionsExtracted: number
    radixTreeSize: number
    processingTimeMs: number
  }
  interface Phase2Result {
    processedCount: number
    resolvedCount: number
    unresolvedCount: number
    resolutionMethods: Record<string, number>
    averageConfidenceScore: number
    errors: { taskId: string; error: string }[]
    processingTimeMs: number
    skeletons: EnhancedConversationSkeleton[]
  }
  interface ReconstructionConfig {
    forceRebuild?: boolean
    batchSize?: number
    similarityThreshold?: number
    minConfidenceScore?: number
    workspaceFilter?: string
    debugMode?: boolean
    operationTimeout?: number
    strictMode?: boolean
  }
  interface ParentValidation {
    isValid: boolean
    validationType: 'temporal' | 'circular' | 'workspace' | 'existence'
    reason?: string
  }
  interface ParsedSubtaskInstructions {
    instructions: NewTaskInstruction[]
    parsingTimestamp: string
    sourceFiles: { uiMessages: FileInfo; apiHistory: FileInfo }
    extractionStats: { totalPatterns: number; xmlDelegations: number; taskTags: number; duplicatesRemoved: number; processingTimeMs?: number }
  }
  interface EnhancedConversationSkeleton extends ConversationSkeleton {
    parsedSubtaskInstructions?: ParsedSubtaskInstructions
    subtaskParsingTimestamp?: string
    processingState: ProcessingState
    sourceFileChecksums: { uiMessages?: string; apiHistory?: string; metadata?: string }
    reconstructedParentId?: string
    parentConfidenceScore?: number
    parentResolutionMethod?: 'radix_tree' | 'radix_tree_exact' | 'metadata' | 'temporal_proximity' | 'manual' | 'root_detected'
    ownInstructionPrefix?: string
    isRootTask?: boolean
    depth?: number
    parent?: EnhancedConversationSkeleton
  }

  // legacy-api.md §3 (message-types.ts). Inferred from a zod schema: a type alias, not an interface.
  type UIMessage = {
    ts: number
    type: 'ask' | 'say'
    ask?: string
    say?: string
    text?: string
    images?: string[]
    partial?: boolean
    reasoning?: string
    conversationHistoryIndex?: number
  }
  interface ToolCallInfo {
    tool: string
    mode?: string
    message?: string
    content?: string
    timestamp: number
  }
  interface NewTaskInfo {
    mode: string
    message: string
    timestamp: number
  }
  interface ApiReqInfo {
    request?: string
    cost?: number
    cancelReason?: string | null
    streamingFailedMessage?: string
  }

  // legacy-api.md §8
  interface ExtractionResult {
    instructions: NewTaskInstruction[]
    processedMessages: number
    matchedPatterns: string[]
    errors: string[]
  }
  interface MessageExtractionOptions {
    patterns?: string[]
    minLength?: number
    maxLength?: number
    includeMetadata?: boolean
  }
}

// legacy-api.md §4: the statics the server's tools and services call.
interface LegacyDetector {
  MAX_CONVERSATION_FILE_SIZE: number
  detectStorageLocations: () => Promise<string[]>
  validateCustomPath: (p: string) => Promise<boolean>
  detectRooStorage: () => Promise<{ locations: { path: string; type: 'local' }[] }>
  getStatsForPath: (storagePath: string) => Promise<Legacy.StorageStats>
  getStorageStats: () => Promise<{ totalLocations: number; totalConversations: number; totalSize: number }>
  getWorkspaceBreakdown: () => Promise<Record<string, { count: number; totalSize: number }>>
  detectWorkspaceForTask: (taskPath: string) => Promise<string>
  findConversationById: (taskId: string) => Promise<Legacy.ConversationSummary | null>
  findConversation: (taskId: string) => Promise<Legacy.ConversationSummary | null>
  scanConversationsMetadata: (
    storagePath: string,
    options: { limit: number; offset: number; sortBy: string; sortOrder: 'asc' | 'desc' },
  ) => Promise<Legacy.ConversationSummary[]>
  analyzeConversation: (taskId: string, taskPath: string, useProductionHierarchy?: boolean) => Promise<Legacy.ConversationSkeleton | null>
  extractMainInstructionFromUI: (uiMessagesPath: string, preloadedContent?: string) => Promise<string | undefined>
  buildHierarchicalSkeletons: (workspacePath?: string, useFullVolume?: boolean, forceRebuild?: boolean) => Promise<Legacy.ConversationSkeleton[]>
  extractTaskIdFromText: (text: string) => string | undefined
  setCoordinatorOverride: (coordinator: any | null) => void
}

// legacy-api.md §5
interface LegacyIndex {
  addInstruction: (parentTaskId: string, instructionPrefix: string, instruction?: string, K?: number) => void
  addParentTaskWithSubInstructions: (parentTaskId: string, fullText: string) => number
  searchExactPrefix: (childText: string, K?: number) => { taskId: string; prefix: string }[]
  getParentsForInstruction: (text: string) => Promise<{ taskId: string; prefix: string }[]>
  validateParentChildRelation: (childText: string, parentId: string) => boolean
  calculateSimilarity: (a: string, b: string) => number
  searchSimilar: (
    text: string,
    threshold?: number,
  ) => Promise<{ taskId: string; similarity: number; prefix: string; similarityScore?: number; matchType?: 'exact' | 'prefix' | 'fuzzy' }[]>
  rebuildFromSkeletons: (skeletonPrefixes: Map<string, string[]>) => void
  getStats: () => { totalNodes: number; totalInstructions: number; avgDepth: number }
  getSize: () => Promise<number>
  getAllParentTaskIds: () => Promise<string[]>
  searchByTaskId: (taskId: string) => Promise<{ taskId: string; prefix: string }[]>
  getInstructionsByParent: (taskId: string) => string[]
  getTruncatedInstruction: (taskId: string) => string | undefined
  clearTempTruncatedInstructions: () => void
  clear: () => void
  findPotentialParent: (childText: string, excludeTaskId?: string) => string | undefined
  findAllPotentialParents: (childText: string) => string[]
  testSimilarityAlgorithm: () => void
  tempTruncatedInstructions: Map<string, string>
}
interface LegacyIndexModule {
  computeInstructionPrefix: (raw: string, K?: number) => string
  globalTaskInstructionIndex: LegacyIndex
}

/**
 * An enhanced skeleton as the engine writes it: the legacy type declares `sourceFiles` as
 * `{uiMessages, apiHistory}`, while the legacy engine fills it (typed `any`) with `ui_messages`
 * and `api_history`, which compat declares. The server's own code never reads that field.
 */
type EnhancedAsWritten = Omit<Legacy.EnhancedConversationSkeleton, 'parsedSubtaskInstructions'> & {
  parsedSubtaskInstructions?: Omit<Legacy.ParsedSubtaskInstructions, 'sourceFiles'> & { sourceFiles: object }
}

// legacy-api.md §6: the server hands the engine its own skeletons and reads them back.
interface LegacyEngine {
  doReconstruction: (skeletons: Legacy.ConversationSkeleton[]) => Promise<EnhancedAsWritten[]>
  executePhase1: (skeletons: Legacy.EnhancedConversationSkeleton[], config?: Legacy.ReconstructionConfig) => Promise<Legacy.Phase1Result>
  executePhase2: (skeletons: Legacy.EnhancedConversationSkeleton[], config?: Legacy.ReconstructionConfig) => Promise<Legacy.Phase2Result>
  validateParentCandidate: (
    child: Legacy.EnhancedConversationSkeleton,
    parentId: string,
    byId: Map<string, Legacy.EnhancedConversationSkeleton>,
  ) => Promise<Legacy.ParentValidation>
  normalizeEscaping: (text: string) => string
  extractModeFromRooMode: (rooMode: string) => string
}
interface LegacyEngineClass {
  new (config?: Partial<Legacy.ReconstructionConfig>): LegacyEngine
  reconstructHierarchy: (workspacePath?: string, forceRebuild?: boolean) => Promise<Legacy.ConversationSkeleton[]>
}

// legacy-api.md §7
interface LegacyDeserializer {
  safeJsonParse: <T>(s: string | null | undefined, defaultValue?: T) => T | undefined
  readTaskMessages: (path: string) => Promise<Legacy.UIMessage[]>
  extractToolCalls: (messages: Legacy.UIMessage[]) => Legacy.ToolCallInfo[]
  extractApiRequests: (messages: Legacy.UIMessage[]) => (Legacy.ApiReqInfo | undefined)[]
  extractNewTasks: (messages: Legacy.UIMessage[]) => Legacy.NewTaskInfo[]
  extractUserMessages: (messages: Legacy.UIMessage[]) => Legacy.UIMessage[]
  extractErrors: (messages: Legacy.UIMessage[]) => Legacy.UIMessage[]
  getMessageStats: (messages: Legacy.UIMessage[]) => {
    total: number
    askMessages: number
    sayMessages: number
    toolCalls: number
    apiRequests: number
    newTasks: number
    errors: number
  }
}
interface LegacyTransformer {
  transform: (
    messages: Legacy.UIMessage[],
    taskId: string,
    workspace?: string,
  ) => Promise<{
    skeleton: Legacy.ConversationSkeleton
    metadata: {
      messageCount: number
      userMessageCount: number
      toolCallCount: number
      newTaskCount: number
      hasInitialInstruction: boolean
      processingTimeMs: number
    }
  }>
}
interface LegacyTransformerClass {
  new (options?: { normalizePrefixes?: boolean; includeMetadata?: boolean; strictValidation?: boolean }): LegacyTransformer
}

// legacy-api.md §8
interface LegacyExtraction {
  extractFromMessages: (messages: any[], options?: Legacy.MessageExtractionOptions) => Legacy.ExtractionResult
  createInstruction: (timestamp: number, mode: string, message: string, minLength?: number, maxLength?: number) => Legacy.NewTaskInstruction | null
  cleanMode: (mode: string) => string
  extractTimestamp: (msg: any) => number
}

// legacy-api.md §9
interface LegacyCache {
  getCache: () => Promise<Map<string, Legacy.ConversationSkeleton>>
  getSkeleton: (id: string) => Promise<Legacy.ConversationSkeleton | undefined>
  has: (id: string) => Promise<boolean>
  getAllSkeletons: () => Promise<Legacy.ConversationSkeleton[]>
  addOrUpdate: (id: string, skeleton: Legacy.ConversationSkeleton) => unknown
  saveSkeleton: (id: string, skeleton?: Legacy.ConversationSkeleton) => Promise<boolean>
  saveAllToDisk: () => Promise<{ saved: number; errors: number }>
  awaitFreshnessWithBudget: (ms: number) => Promise<boolean>
  forceRefresh: () => Promise<void>
  getCacheSize: () => number
  getCacheTierStats: () => Promise<{
    tier1_roo: number
    tier2_claude: number
    tier3_archives: number
    total: number
    cacheAgeMs: number | null
    stale: boolean
  }>
}
interface LegacyCacheClass {
  getInstance: () => LegacyCache
  configure: (config: { enableClaudeTier?: boolean; enableArchiveTier?: boolean }) => void
  reset: () => void
}

// legacy-api.md §10
interface LegacyXmlExporter {
  generateTaskXml: (s: Legacy.ConversationSkeleton, o?: { prettyPrint?: boolean; includeContent?: boolean; maxDepth?: number }) => string
  generateConversationXml: (root: Legacy.ConversationSkeleton, children: Legacy.ConversationSkeleton[], o?: { maxDepth?: number }) => string
  generateProjectXml: (skeletons: Legacy.ConversationSkeleton[], projectPath: string, o?: { startDate?: string; endDate?: string }) => string
  saveXmlToFile: (xml: string, filePath: string) => Promise<void>
}
interface LegacyExportConfigManager {
  getConfig: () => Promise<unknown>
  resetConfig: () => Promise<void>
  removeTemplate: (name: string) => Promise<boolean>
  removeFilter: (name: string) => Promise<boolean>
  invalidateCache: () => void
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

/** `A` can be used where `B` is expected. */
type Into<A, B> = [A] extends [B] ? true : false
/** Assignable both ways. */
type Same<A, B> = Into<A, B> extends true ? Into<B, A> : false
type Check<T extends true> = T

/** `T` with the field `K` of type `V` instead (keeps the other fields and any index signature). */
type Change<T, K extends keyof T, V> = { [P in keyof T]: P extends K ? V : T[P] }
/** `T` without its index signature: the named fields only. */
type Known<T> = { [P in keyof T as string extends P ? never : number extends P ? never : P]: T[P] }
/** Compat's skeleton, named fields only, metadata included. */
type KnownSkeleton = Change<Known<C.ConversationSkeleton>, 'metadata', Known<C.SkeletonMetadata>>

// Data the server both hands to compat and reads back.
export type DataChecks = [
  Check<Same<C.MessageSkeleton, Legacy.MessageSkeleton>>,
  Check<Same<C.ActionMetadata, Legacy.ActionMetadata>>,
  Check<Same<C.UIMessage, Legacy.UIMessage>>,
  Check<Same<C.ReconstructionConfig, Legacy.ReconstructionConfig>>,
  // The skeleton: the legacy interfaces have no index signature and compat's keep the extra keys
  // a skeleton file holds, so the server reads compat's as its own (`Into`), and every named
  // field is the same both ways (`Same` without the index signature).
  Check<Into<C.ConversationSkeleton, Legacy.ConversationSkeleton>>,
  Check<Same<Known<C.SkeletonMetadata>, Legacy.SkeletonMetadata>>,
  Check<Same<KnownSkeleton, Legacy.ConversationSkeleton>>,
  // Results the server reads as its own types.
  Check<Into<C.NewTaskInstruction, Legacy.NewTaskInstruction>>,
  Check<Into<C.ConversationSummary, Legacy.ConversationSummary>>,
  Check<Into<C.StorageStats, Legacy.StorageStats>>,
  Check<Into<C.Phase1Result, Legacy.Phase1Result>>,
  // The server runs phase 2 on its own enhanced skeletons and reads the result as its own.
  Check<Into<C.Phase2Result<Legacy.EnhancedConversationSkeleton>, Legacy.Phase2Result>>,
  Check<Into<C.ToolCallInfo, Legacy.ToolCallInfo>>,
  Check<Into<C.NewTaskInfo, Legacy.NewTaskInfo>>,
  Check<Into<C.ApiReqInfo, Legacy.ApiReqInfo>>,
  Check<Into<C.ExtractionResult, Legacy.ExtractionResult>>,
]

// Members and signatures.
export type ApiChecks = [
  Check<Into<typeof RooStorageDetector, LegacyDetector>>,
  Check<Into<TaskInstructionIndex, LegacyIndex>>,
  Check<Into<{ computeInstructionPrefix: typeof computeInstructionPrefix; globalTaskInstructionIndex: typeof globalTaskInstructionIndex }, LegacyIndexModule>>,
  Check<Into<typeof HierarchyReconstructionEngine, LegacyEngineClass>>,
  Check<Into<UIMessagesDeserializer, LegacyDeserializer>>,
  Check<Into<typeof MessageToSkeletonTransformer, LegacyTransformerClass>>,
  Check<
    Into<
      {
        extractFromMessages: typeof messageExtractionCoordinator.extractFromMessages
        createInstruction: typeof createInstruction
        cleanMode: typeof cleanMode
        extractTimestamp: typeof extractTimestamp
      },
      LegacyExtraction
    >
  >,
  Check<Into<typeof SkeletonCacheService, LegacyCacheClass>>,
  Check<Into<XmlExporterService, LegacyXmlExporter>>,
  Check<Into<ExportConfigManager, LegacyExportConfigManager>>,
]

type NeedsPaths = (taskId: string, taskPath: string, production: boolean, paths: object) => Promise<C.ConversationSkeleton | null>

// Each kind of check fails on a changed compat field or signature.
export type MustFail = [
  // @ts-expect-error a skeleton whose `taskId` is a number is not the legacy one
  Check<Same<Change<C.ConversationSkeleton, 'taskId', number>, Legacy.ConversationSkeleton>>,
  // @ts-expect-error metadata whose `createdAt` may be missing cannot be read as the legacy one
  Check<Into<Change<C.SkeletonMetadata, 'createdAt', string | undefined>, Legacy.SkeletonMetadata>>,
  // @ts-expect-error a named metadata field the legacy one does not declare
  Check<Same<Known<C.SkeletonMetadata> & { machineName: string }, Legacy.SkeletonMetadata>>,
  // @ts-expect-error an action `status` the legacy union does not have
  Check<Same<Change<C.ActionMetadata, 'status', string>, Legacy.ActionMetadata>>,
  // @ts-expect-error an instruction whose `timestamp` is an ISO string
  Check<Into<Change<C.NewTaskInstruction, 'timestamp', string>, Legacy.NewTaskInstruction>>,
  // @ts-expect-error an analysis that requires an argument the server does not pass
  Check<Into<Change<typeof RooStorageDetector, 'analyzeConversation', NeedsPaths>, LegacyDetector>>,
  // @ts-expect-error a lookup that resolves to `undefined` where the server expects `null`
  Check<Into<Change<typeof RooStorageDetector, 'findConversationById', (taskId: string) => Promise<C.ConversationSummary | undefined>>, LegacyDetector>>,
  // @ts-expect-error a splitter count given as a string
  Check<Into<Change<TaskInstructionIndex, 'addParentTaskWithSubInstructions', (p: string, t: string) => string>, LegacyIndex>>,
]
