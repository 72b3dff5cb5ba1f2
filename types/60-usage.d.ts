// Usage and cost reports (TaskStore.usageReport; crates/usage). The shape is plain JSON: a web
// view can chart `rows` directly (a row's `key` is its x value, its sums the series).

/** Token and cost sums of a row, a model or a task. */
export interface UsageSums {
  /** API requests (a condense operation is not a request; its cost is in `cost`). */
  requests: number
  /** As recorded: since v3.29.5 (Anthropic protocol) and for the OpenAI protocol it includes cache tokens. */
  tokensIn: number
  tokensOut: number
  cacheWrites: number
  cacheReads: number
  /** Input, output and cache tokens, each counted once. */
  totalTokens: number
  /** USD, by the report's cost mode. */
  cost: number
  /** Requests the user cancelled (counted with what they recorded, as the extension does). */
  cancelled: number
  /** Requests whose stream failed (counted likewise). */
  failed: number
  /** Requests counted whose record holds no cost (and, calculating, whose model has no price). */
  withoutCost: number
}

/** File operations of tool calls. */
export interface UsageFileOps {
  reads: number
  writes: number
  edits: number
  creates: number
  deletes: number
  /** Lines written or changed, where the records hold them. */
  lines: number
}

export interface UsageModelRow extends UsageSums {
  model: string
}

/** One task of a conversation. */
export interface UsageConversationTask extends UsageSums {
  taskId: string
  parentTaskId?: string
  /** 0 for the root. */
  depth: number
  mode?: string
  title?: string
  /** The link's evidence: `history_item`, `child_ids`, `metadata`, `instruction_prefix` (inferred), … */
  link?: string
  /** The task's part of the conversation's cost (0 to 1; of its tokens when nothing cost). */
  share: number
}

export interface UsageConversation {
  rootTaskId: string
  tasks: UsageConversationTask[]
  modes: { mode: string; cost: number; totalTokens: number; share: number }[]
}

export interface UsageRow extends UsageSums {
  /** `YYYY-MM-DD` (a day; a week by its Monday), `YYYY-MM`, a task id, a root task id, a model, a workspace, a host or a mode (`unknown` / `none` when not recorded). */
  key: string
  /** A conversation's title. */
  label?: string
  /** Tasks with a record in the row. */
  tasks: number
  files: UsageFileOps
  /** Per-model sums (with `breakdown`), most expensive first. */
  models?: UsageModelRow[]
  /** `conversations`: the tasks and the share of each task and mode. */
  conversation?: UsageConversation
}

export interface UsageReport {
  group: 'daily' | 'weekly' | 'monthly' | 'tasks' | 'conversations' | 'models' | 'workspaces' | 'hosts' | 'modes'
  timeZone: string
  since?: string
  until?: string
  costMode: 'recorded' | 'calculate' | 'auto'
  /** The bundled price table's date, and the override file when one was given. */
  prices: { updated: string; file?: string }
  /** Days, weeks and months in order; other groups most expensive first. */
  rows: UsageRow[]
  /** Every counted record (`key` is `total`). */
  totals: UsageRow
  /** Tasks with requests that recorded no cost, and how many. */
  noRecordedCost: { taskId: string; requests: number }[]
  /** Models of counted requests the price table does not know (cost modes `calculate`, `auto`). */
  unpricedModels: string[]
  /** How the figures were counted. */
  notes: string[]
  /**
   * What the handle read again before this report, and how many blocks of 1 024 tasks it summed
   * again or kept from the last report with the same options (a refresh changes only the blocks
   * holding a changed task).
   */
  sync: { read: number; kept: number; dropped: number; elapsedMs: number; blocksSummed: number; blocksKept: number }
}
