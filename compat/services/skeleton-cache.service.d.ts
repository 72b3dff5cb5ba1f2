/**
 * `SkeletonCacheService` of roo-state-core/compat: the legacy singleton over the task store's
 * skeletons. See docs/compat-services.md §4.
 */

export interface SkeletonCacheServiceConfig {
  enableClaudeTier?: boolean
  enableArchiveTier?: boolean
  /** Write skeleton files to `<storage>/tasks/.skeletons` as the legacy service did (default: our cache dir). */
  writeToStorage?: boolean
}

/** What the cache holds: legacy skeleton objects (fields beyond these are kept as they are). */
export interface SkeletonLike {
  taskId: string
  metadata?: { dataSource?: string; [key: string]: unknown }
  [key: string]: unknown
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
  /** The storage detector used (tests may replace it). */
  static storageDetector(): {
    detectStorageLocations(): Promise<string[]>
    analyzeConversation(taskId: string, taskPath: string): Promise<SkeletonLike | null>
  }
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
