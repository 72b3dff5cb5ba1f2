
/* Storage discovery, the skeleton cache and the maintenance tools. */

/** One task store found on this machine. */
export interface StorageLocation {
  /** The storage folder (parent of `tasks/`). */
  path: string
  tasksDir: string
  /** Extension id: `rooveterinaryinc.roo-cline`, `zoocodeorganization.zoo-code`, `saoudrizwan.claude-dev`, `kilocode.kilo-code`; null when unknown. */
  host: string | null
  source: 'roo' | 'zoo-code' | 'cline' | 'kilo-code' | 'unknown'
  /** Editor build (`Code`, `Code - Insiders`, `VSCodium`, `Cursor`, `Windsurf`, `Code (server)`, …); null when unknown. */
  editor: string | null
  /** How it was found. */
  kind: 'standard' | 'server' | 'custom' | 'env' | 'extra'
  taskCount: number
  /** Bytes under `tasks/`, checkpoints included; null when not measured. */
  sizeBytes: number | null
  /** The editor's `state.vscdb`, when it exists. */
  stateDb: string | null
  /** `tasks/_index.json` exists. */
  hasHistoryIndex: boolean
}

export interface StorageDiscovery {
  locations: StorageLocation[]
  /** Every folder looked at, in order. */
  searched: string[]
  /** Roots given explicitly that hold no store, settings that could not be read. */
  warnings: string[]
}

/** What a cache build did to one store. */
export interface StoreBuild {
  tasksDir: string
  cacheFile: string
  tasks: number
  built: number
  reused: number
  failed: number
  removed: number
  /** Changed tasks of other workspaces left stale (`workspaceFilter`). */
  skipped: number
  /** A new cache file was written (false when nothing changed). */
  written: boolean
  hierarchy: HierarchyMetrics | null
  elapsedMs: number
  /** Cached skeletons that failed their checksum and were read again from their folders. */
  repaired: number
}

export interface BuildCacheReport {
  built: number
  reused: number
  failed: number
  removed: number
  skipped: number
  elapsedMs: number
  diagnostics: Diagnostic[]
  stores: StoreBuild[]
}

export interface LoadedStore {
  tasksDir: string
  cacheFile: string
  /** ms since the epoch. */
  builtAt: number
  tasks: number
  served: number
}

export interface LoadedSkeletons {
  skeletons: ConversationSkeleton[]
  stores: LoadedStore[]
  diagnostics: Diagnostic[]
}

export type HealthStatus = 'OK' | 'WARNING' | 'ERROR'

export interface HealthReason {
  status: HealthStatus
  message: string
}

export interface FileCheck {
  name: string
  exists: boolean
  parses: boolean
  bytes: number
  problems: number
  firstProblem?: string
}

export interface RecentTaskCheck {
  taskId: string
  lastModified: number
  files: FileCheck[]
  ok: boolean
}

export interface SizeSplit {
  totalBytes: number
  conversationBytes: number
  conversationFiles: number
  checkpointBytes: number
  checkpointFiles: number
  otherBytes: number
  otherFiles: number
  /** `<storage>/checkpoints/` (pre-3.8 per-workspace repositories), not in the figures above. */
  legacyCheckpointBytes: number
}

export interface StateDbReport {
  path: string
  exists: boolean
  readable: boolean
  error: string | null
  fileBytes: number
  totalKeys: number
  extensionKeys: Array<{ key: string; bytes: number }>
  extensionBytes: number
  taskHistory: {
    entries: number
    onDisk: number
    matched: number
    onlyOnDisk: number
    onlyInHistory: number
    sampleOnlyOnDisk: string[]
  } | null
}

export interface CacheStatus {
  cacheFile: string
  exists: boolean
  unusable: string | null
  builtAt: number | null
  entries: number
  stale: number
  missing: number
  removed: number
  /** Cached skeletons that fail their checksum (the next build reads those tasks again). */
  damaged: number
  /** A journal line that failed its checksum. */
  journalDamage?: string
}

export interface LocationHealth {
  tasksDir: string
  host: string | null
  editor: string | null
  exists: boolean
  readable: boolean
  taskCount: number
  recentTasks: RecentTaskCheck[]
  sizes: SizeSplit
  historyIndexEntries: number | null
  stateDb: StateDbReport | null
  cache: CacheStatus
  status: HealthStatus
  reasons: HealthReason[]
}

export interface DiagnoseReport {
  status: HealthStatus
  reasons: HealthReason[]
  generatedAt: string
  cacheRoot: string
  locations: LocationHealth[]
}

export interface ExtensionIndexReport {
  indexFile: string
  entries: number
  historyItemsCreated: string[]
  historyItemsReplaced: string[]
  historyItemsKept: number
  backups: string[]
  written: string[]
}

export interface RebuildReport {
  tasksDir: string
  dryRun: boolean
  tasks: number
  skeletons: number
  workspaces: Array<{ workspace: string; tasks: number }>
  roots: number
  orphans: number
  orphanIds: string[]
  hierarchy: HierarchyMetrics | null
  cacheRebuilt: boolean
  cache: StoreBuild | null
  extensionIndex: ExtensionIndexReport | null
  diagnostics: Diagnostic[]
}

export interface TaskCleanup {
  taskId: string
  lastActivity: number
  files: number
  bytes: number
  /** Relative to the task folder; `checkpoints/` for the whole repository. */
  paths: string[]
  removed: boolean
  error?: string
}

export interface CleanupReport {
  tasksDir: string
  dryRun: boolean
  tasksScanned: number
  tasksAffected: number
  tasksKept: number
  files: number
  bytes: number
  tasks: TaskCleanup[]
}

export interface CleanupSummary {
  dryRun: boolean
  tasksAffected: number
  files: number
  /** Bytes freed, or that would be in a dry run. */
  bytes: number
  stores: CleanupReport[]
}

export interface MigrateReport {
  from: string
  to: string
  dryRun: boolean
  method: 'rename' | 'copy' | 'none'
  alreadyDone: boolean
  resumed: boolean
  files: number
  bytes: number
  marker: string
  steps: string[]
}

/** One tasks folder of a `TaskStore`. */
export interface TaskStoreInfo {
  tasksDir: string
  /** The host family the folder's path names (`roo`, `zoo-code`, `cline`, `kilo-code`), if any. */
  host?: string
  tasks: number
}

/** What `TaskStore.refresh()` did. */
export interface TaskStoreRefresh {
  /** Task folders on disk now. */
  tasks: number
  added: number
  changed: number
  removed: number
  /** Tasks parsed that gave no skeleton (see `diagnostics()`). */
  failed: number
  /** Unchanged tasks whose parent the hierarchy changed. */
  relinked: number
  /** How the skeleton cache took the change. */
  cache: 'none' | 'appended' | 'rewritten' | 'disabled'
  elapsedMs: number
}

/** Where a task lives (`findTask`). */
export interface TaskLocation {
  taskId: string
  /** The tasks folder holding it, as given. */
  tasksDir: string
  /** Its own folder (`tasksDir` + `taskId`). */
  taskDir: string
}
