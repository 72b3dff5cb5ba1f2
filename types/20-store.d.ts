
/* Storage discovery, the skeleton cache and the maintenance tools. */

export interface CleanupSummary {
  dryRun: boolean
  tasksAffected: number
  files: number
  /** Bytes freed, or that would be in a dry run. */
  bytes: number
  stores: CleanupReport[]
}

/** A task's `history_item.json` as it stands in the file: `HistoryItem`'s fields and any others. */
export interface HistoryItemRecord {
  id: string
  status?: 'active' | 'delegated' | 'completed' | 'interrupted' | string
  childIds?: string[]
  [field: string]: unknown
}

/** What a writer changes in a `history_item.json`: fields to set and fields to remove. */
export interface HistoryItemChange {
  set?: Record<string, unknown>
  unset?: string[]
  /** Check a status change against the state machine (default true; false: the rules before 3.80). */
  checkStatus?: boolean
}
