/* Hierarchy types. */

/** Something the reconstruction met and reports instead of guessing. */
export interface HierarchyIssue {
  kind: 'conflict' | 'ambiguous' | 'cycle' | 'orphan' | 'self_link'
  taskId: string
  detail: string
  /** The parent ids in play, or the members of a cycle. */
  candidates: string[]
}

export interface HierarchyMetrics {
  tasks: number
  linksBySource: { historyItem: number; childIds: number; taskMetadata: number; instructionPrefix: number }
  roots: number
  /** Tasks whose parent id is not on disk. */
  orphans: number
  ambiguous: number
  cyclesBroken: number
  conflicts: number
  maxDepth: number
  elapsedMs: number
  issues: HierarchyIssue[]
}

export interface HierarchyResult {
  skeletons: ConversationSkeleton[]
  metrics: HierarchyMetrics
}

/** A node of `getTaskTree` and `TaskStore.tree`: children in creation order (`createdAt`, then
 *  task id). The fields after `children` are always set by this library (optional so that nodes
 *  written before them still type-check). */
export interface TaskTreeNode {
  taskId: string
  title?: string
  createdAt: string
  workspace?: string
  mode?: string
  parentEvidence?: ParentEvidence
  depth: number
  children: TaskTreeNode[]
  lastActivity?: string
  messageCount?: number
  actionCount?: number
  isCompleted?: boolean
  /** The task's parent, when it has one. */
  parentTaskId?: string
  /** `true` on a top node whose parent is not among the tasks at all (not merely left out by the
   *  workspace filter or the subtree asked for). */
  parentMissing?: boolean
}
