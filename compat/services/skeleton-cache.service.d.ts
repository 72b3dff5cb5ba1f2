/**
 * `SkeletonCacheService` of roo-state-core/compat: the legacy singleton over the task store's
 * skeletons. See docs/compat-services.md §4.
 */

export interface SkeletonCacheServiceConfig {
  /** Load one skeleton per Claude Code project (the caller's Claude storage detector). */
  enableClaudeTier?: boolean
  /** Load the archived tasks of every machine (the caller's task archiver). */
  enableArchiveTier?: boolean
}

/**
 * What the cache holds: the skeleton objects read from the skeleton files, built by the storage
 * detector or added by the caller, as they are (the caller's own skeleton type accepts them).
 */
export interface SkeletonLike {
  taskId: string
  parentTaskId?: string
  metadata: any
  sequence: any[]
  childTaskInstructionPrefixes?: string[]
  isCompleted?: boolean
  truncatedInstruction?: string
  [key: string]: any
}

/** What callers may add: any object with a `taskId`. */
export interface SkeletonInput {
  taskId: string
}

export interface CacheTierStats {
  tier1_roo: number
  tier2_claude: number
  tier3_archives: number
  total: number
  config: { enableClaudeTier: boolean; enableArchiveTier: boolean }
  cacheAgeMs: number | null
  stale: boolean
}

export declare class SkeletonCacheService {
  static config: SkeletonCacheServiceConfig
  static configure(config: SkeletonCacheServiceConfig): void
  static getInstance(): SkeletonCacheService
  static reset(): void
  getCache(): Promise<Map<string, SkeletonLike>>
  getSkeleton(taskId: string): Promise<SkeletonLike | undefined>
  has(taskId: string): Promise<boolean>
  getAllSkeletons(): Promise<SkeletonLike[]>
  addOrUpdate(taskId: string, skeleton: SkeletonInput): Promise<void>
  saveSkeleton(taskId: string, skeleton?: SkeletonInput): Promise<boolean>
  saveAllToDisk(): Promise<{ saved: number; errors: number }>
  getCacheSize(): number
  forceRefresh(): Promise<void>
  warmCache(): Promise<void>
  awaitFreshnessWithBudget(timeoutMs: number): Promise<boolean>
  getCacheTierStats(): Promise<CacheTierStats>
}
