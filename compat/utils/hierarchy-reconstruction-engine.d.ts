/**
 * `HierarchyReconstructionEngine` of roo-state-core/compat: the legacy server's two-phase engine
 * (names, options, result objects, mutations). See docs/compat-services.md §1.
 */

/** The legacy skeleton fields the engine reads; any other field is carried through. */
export interface LegacySkeletonLike {
  taskId: string
  parentTaskId?: string
  truncatedInstruction?: string
  childTaskInstructionPrefixes?: string[]
  metadata: {
    createdAt?: string
    lastActivity?: string
    workspace?: string
    dataSource?: string
  }
}

export interface NewTaskInstruction {
  timestamp: number
  mode: string
  message: string
  taskId?: string
}

export interface ProcessingState {
  phase1Completed: boolean
  phase2Completed: boolean
  processingErrors: string[]
  lastProcessedAt?: string
}

export interface FileInfo {
  path: string
  exists: boolean
  size?: number
  lastModified?: string
}

export interface ParsedSubtaskInstructions {
  instructions: NewTaskInstruction[]
  parsingTimestamp: string
  sourceFiles: { ui_messages?: FileInfo; api_history?: FileInfo }
  extractionStats: { totalPatterns: number; xmlDelegations: number; taskTags: number; duplicatesRemoved: number }
}

export type ParentResolutionMethod =
  | 'radix_tree'
  | 'radix_tree_exact'
  | 'metadata'
  | 'temporal_proximity'
  | 'manual'
  | 'root_detected'

export type EnhancedConversationSkeleton<S extends LegacySkeletonLike = LegacySkeletonLike> = S & {
  parsedSubtaskInstructions?: ParsedSubtaskInstructions
  processingState: ProcessingState
  sourceFileChecksums: { ui_messages?: string; api_history?: string; metadata?: string }
  reconstructedParentId?: string
  /** 0–1; set in `fixed` mode (legacy mode sets `reconstructionConfidence` instead). */
  parentConfidenceScore?: number
  parentResolutionMethod?: ParentResolutionMethod
  isRootTask?: boolean
  reconstructionConfidence?: number
  reconstructionMethod?: string
}

export interface ReconstructionConfig {
  forceRebuild?: boolean
  batchSize?: number
  similarityThreshold?: number
  /** `fixed` mode: inferred links below this confidence are refused. */
  minConfidenceScore?: number
  workspaceFilter?: string
  debugMode?: boolean
  operationTimeout?: number
  strictMode?: boolean
  /** `legacy` or `fixed`; default: the compat layer's mode. */
  mode?: 'legacy' | 'fixed'
}

export interface Phase1Result {
  processedCount: number
  parsedCount: number
  errors: Array<{ taskId: string; error: string }>
  totalInstructionsExtracted: number
  radixTreeSize: number
  processingTimeMs: number
}

export interface Phase2Result<S extends LegacySkeletonLike = LegacySkeletonLike> {
  processedCount: number
  resolvedCount: number
  unresolvedCount: number
  resolutionMethods: Record<string, number>
  averageConfidenceScore: number
  errors: Array<{ taskId: string; error: string }>
  processingTimeMs: number
  skeletons: Array<EnhancedConversationSkeleton<S>>
}

export interface ParentValidation {
  isValid: boolean
  validationType: 'temporal' | 'circular' | 'workspace' | 'existence'
  reason?: string
}

export declare class HierarchyReconstructionEngine {
  static DEFAULT_CONFIG: Required<Omit<ReconstructionConfig, 'workspaceFilter' | 'mode'>>
  constructor(config?: Partial<ReconstructionConfig>)
  config: ReconstructionConfig
  /**
   * The caller's skeletons (as `RooStorageDetector.buildHierarchicalSkeletonsLegacy` gives them) with
   * each reconstructed parent as `parentTaskId`. `S` defaults to `any` so that the caller's own
   * skeleton type is accepted where it annotates the result.
   */
  static reconstructHierarchy<S extends LegacySkeletonLike = any>(
    workspacePath?: string,
    forceRebuild?: boolean,
  ): Promise<Array<EnhancedConversationSkeleton<S>>>
  doReconstruction<S extends LegacySkeletonLike>(skeletons: S[]): Promise<Array<EnhancedConversationSkeleton<S>>>
  executePhase1<S extends LegacySkeletonLike>(
    skeletons: Array<EnhancedConversationSkeleton<S>>,
    config?: Partial<ReconstructionConfig>,
  ): Promise<Phase1Result>
  executePhase2<S extends LegacySkeletonLike>(
    skeletons: Array<EnhancedConversationSkeleton<S>>,
    config?: Partial<ReconstructionConfig>,
  ): Promise<Phase2Result<S>>
  enhanceSkeletons<S extends LegacySkeletonLike>(skeletons: S[]): Array<EnhancedConversationSkeleton<S>>
  extractSubtaskInstructions(skeleton: LegacySkeletonLike): Promise<NewTaskInstruction[]>
  findParentCandidate(
    skeleton: LegacySkeletonLike,
    byId: Map<string, LegacySkeletonLike>,
    config: ReconstructionConfig,
  ): Promise<{ parentId: string; confidence: number; method: string } | null>
  validateParentCandidate(child: LegacySkeletonLike, parentId: string, byId: Map<string, LegacySkeletonLike>): Promise<ParentValidation>
  isRootTask(skeleton: LegacySkeletonLike): boolean
  findParentByMetadata(skeleton: LegacySkeletonLike, byId: Map<string, LegacySkeletonLike>): Promise<string | null>
  findParentByTemporalProximity(skeleton: LegacySkeletonLike, byId: Map<string, LegacySkeletonLike>): Promise<string | null>
  wouldCreateCycle(childId: string, parentId: string, byId: Map<string, LegacySkeletonLike>): boolean
  shouldSkipPhase1(skeleton: EnhancedConversationSkeleton, config: ReconstructionConfig): Promise<boolean>
  calculateChecksums(skeleton: LegacySkeletonLike): Promise<Record<string, string>>
  getSourceFilesInfo(skeleton: LegacySkeletonLike): Promise<Record<string, FileInfo>>
  updateProcessingState(skeleton: LegacySkeletonLike, phase: 'phase1' | 'phase2', success: boolean, error?: string): void
  createBatches<T>(items: T[], batchSize: number): T[][]
  incrementResolutionMethod(result: Phase2Result, method: string): void
  normalizeEscaping(text: string): string
  detectInstructionFormat(text: string): 'json' | 'xml' | 'unknown'
  extractNormalizedInstruction(message: { text?: unknown; content?: unknown }): string | null
  extractModeFromRooMode(rooMode: string): string
  log(message: string, data?: unknown): void
}
