/**
 * `TaskInstructionIndex` of roo-state-core/compat: the legacy instruction index (normalised prefix →
 * parent task ids, exact-trie lookups), kept in Rust. docs/compat.md §1.
 */

export interface PrefixMatch {
  taskId: string
  prefix: string
}

export interface SimilarMatch extends PrefixMatch {
  similarity: number
  similarityScore?: number
  matchType?: 'exact' | 'prefix' | 'fuzzy'
}

export interface IndexStats {
  totalNodes: number
  totalInstructions: number
  avgDepth: number
}

/** The legacy matching key: falsy input gives `''`, other non-strings go through `String()`. */
export declare function computeInstructionPrefix(raw: unknown, K?: number): string

/** Sub-instructions of a parent's text (new_task messages, code blocks, list items, task blocks, indented lines). */
export declare function extractSubInstructions(parentText: string): string[]

export declare class TaskInstructionIndex {
  constructor()
  tempTruncatedInstructions: Map<string, string>
  addInstruction(parentTaskId: string, instructionPrefix: string, instruction?: string, K?: number): void
  addParentTaskWithSubInstructions(parentTaskId: string, fullText: string): number
  searchExactPrefix(childText: string, K?: number): PrefixMatch[]
  getParentsForInstruction(text: string): Promise<PrefixMatch[]>
  validateParentChildRelation(childText: string, parentId: string): boolean
  calculateSimilarity(a: string, b: string): number
  searchSimilar(text: string, threshold?: number): Promise<SimilarMatch[]>
  rebuildFromSkeletons(skeletonPrefixes: Map<string, string[]>): void
  getStats(): IndexStats
  getSize(): Promise<number>
  getAllParentTaskIds(): Promise<string[]>
  searchByTaskId(taskId: string): Promise<PrefixMatch[]>
  getInstructionsByParent(taskId: string): string[]
  getTruncatedInstruction(taskId: string): string | undefined
  clearTempTruncatedInstructions(): void
  clear(): void
  /** @deprecated always `undefined` */
  findPotentialParent(childText?: string, excludeTaskId?: string): string | undefined
  /** @deprecated always `[]` */
  findAllPotentialParents(childText?: string): string[]
  testSimilarityAlgorithm(): void
}

/** The process-wide index that `RooStorageDetector.analyzeConversation` fills. */
export declare const globalTaskInstructionIndex: TaskInstructionIndex
