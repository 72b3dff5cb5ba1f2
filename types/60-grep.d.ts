/** What a grep searched: what the user wrote, what the assistant wrote, tool inputs, tool results. */
export type GrepKind = 'user' | 'assistant' | 'toolInput' | 'toolResult'

/** A line (or lines, for a match over several) of one message where the pattern stands. */
export interface GrepMatch {
  taskId: string
  title?: string
  workspace?: string
  /** ISO 8601 time of the message, when it has one. */
  timestamp?: string
  kind: GrepKind
  /** Position of the message in its file, from 0. */
  messageIndex: number
  /** Line of the match in its message, from 1. */
  lineNumber: number
  /** The line; a long one is cut around the match, with `…`. */
  line: string
  /** Where the matches stand in `line`: `[start, end)` string indexes (UTF-16 code units). */
  ranges: Array<[number, number]>
  /** Lines of the same message before and after (`context`). */
  before: string[]
  after: string[]
}

/** What `grepTasks` found. */
export interface GrepTasksResult {
  matches: GrepMatch[]
  /** Whether matches were left out (`maxMatches`). */
  truncated: boolean
  tasksSearched: number
  tasksMatched: number
  /**
   * Files parsed after their bytes passed the pattern's pre-check, or (through the text store)
   * because the store did not hold the task's current texts.
   */
  filesParsed: number
  /** Tasks whose texts came from the text store of our cache (decoded once, kept per store). */
  tasksFromTextStore: number
  bytesRead: number
  elapsedMs: number
  notes?: string[]
}
