
/* Storage discovery, the skeleton cache and the maintenance tools. */

export interface CleanupSummary {
  dryRun: boolean
  tasksAffected: number
  files: number
  /** Bytes freed, or that would be in a dry run. */
  bytes: number
  stores: CleanupReport[]
}
