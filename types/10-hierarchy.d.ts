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

export interface TaskTreeNode {
  taskId: string
  title?: string
  createdAt: string
  workspace?: string
  mode?: string
  parentEvidence?: ParentEvidence
  depth: number
  children: TaskTreeNode[]
}
