/**
 * Compiled with `tsc --strict` (scripts/test.sh, __tests__/compat/tsconfig.json), not run: the calls
 * the legacy server's tool handlers make on the hot-path modules — build_skeleton_cache,
 * get_task_tree, export_data and roosync_search — written against `roo-state-core/compat` through
 * the package's own `exports` map, with the handlers' argument and result shapes. A compat type that
 * drifts from those shapes fails the build.
 */
import { RooStorageDetector, type ConversationSkeleton } from 'roo-state-core/compat/utils/roo-storage-detector.js'
import { globalTaskInstructionIndex, computeInstructionPrefix } from 'roo-state-core/compat/utils/task-instruction-index.js'
import { HierarchyReconstructionEngine } from 'roo-state-core/compat/utils/hierarchy-reconstruction-engine.js'
import { SkeletonCacheService } from 'roo-state-core/compat/services/skeleton-cache.service.js'
import { XmlExporterService } from 'roo-state-core/compat/services/XmlExporterService.js'
import { ExportConfigManager } from 'roo-state-core/compat/services/ExportConfigManager.js'
import * as compat from 'roo-state-core/compat'

type ToolResult = { content: Array<{ type: 'text'; text: string }>; isError?: boolean }

/** build_skeleton_cache: analyse every task of every store, rebuild the shared index, run the engine. */
export async function buildSkeletonCache(
  conversationCache: Map<string, ConversationSkeleton>,
  args: { force_rebuild?: boolean; workspace_filter?: string },
): Promise<ToolResult> {
  const locations = await RooStorageDetector.detectStorageLocations()
  for (const location of locations) {
    const taskPath = `${location}/tasks/some-task-id`
    const skeleton = await RooStorageDetector.analyzeConversation('some-task-id', taskPath)
    if (skeleton && (!args.workspace_filter || skeleton.metadata.workspace === args.workspace_filter)) {
      conversationCache.set(skeleton.taskId, skeleton)
    }
  }
  globalTaskInstructionIndex.clear()
  for (const skeleton of conversationCache.values()) {
    for (const prefix of skeleton.childTaskInstructionPrefixes ?? []) globalTaskInstructionIndex.addInstruction(skeleton.taskId, prefix)
  }
  const stats = globalTaskInstructionIndex.getStats()
  const engine = new HierarchyReconstructionEngine({ batchSize: 50, strictMode: false, similarityThreshold: 0.85, minConfidenceScore: 0.85, debugMode: true, forceRebuild: false })
  const enhanced = Array.from(conversationCache.values()).map((s) => ({
    ...s,
    parsedSubtaskInstructions: undefined,
    processingState: { phase1Completed: (s.childTaskInstructionPrefixes?.length ?? 0) > 0, phase2Completed: false, processingErrors: [] as string[], lastProcessedAt: new Date().toISOString() },
    sourceFileChecksums: {},
  }))
  const phase1 = await engine.executePhase1(enhanced, { strictMode: false })
  const phase2 = await engine.executePhase2(enhanced, { strictMode: false, similarityThreshold: 0.85, minConfidenceScore: 0.85 })
  for (const s of phase2.skeletons) {
    const cached = conversationCache.get(s.taskId)
    if (cached && s.reconstructedParentId) cached.parentTaskId = s.reconstructedParentId
  }
  const text = `${conversationCache.size} skeletons, ${stats.totalInstructions} prefixes, phase 1 ${phase1.processedCount}, phase 2 resolved ${phase2.resolvedCount}`
  return { content: [{ type: 'text', text }] }
}

/** get_task_tree: fill the index from the cache when empty, then look parents up by instruction. */
export async function getTaskTree(conversationCache: Map<string, ConversationSkeleton>, taskId: string): Promise<ToolResult> {
  const skeletons = Array.from(conversationCache.values())
  if (globalTaskInstructionIndex.getStats().totalInstructions === 0) {
    for (const s of skeletons) for (const p of s.childTaskInstructionPrefixes ?? []) globalTaskInstructionIndex.addInstruction(s.taskId, p)
  }
  const childrenMap = new Map<string, string[]>()
  for (const s of skeletons.filter((x) => !x.parentTaskId)) {
    const instruction = (typeof s.metadata.title === 'string' ? s.metadata.title : undefined) || s.truncatedInstruction || ''
    if (instruction.length <= 10) continue
    const candidates = await globalTaskInstructionIndex.getParentsForInstruction(instruction)
    const parentId = candidates[0]?.taskId
    if (parentId) childrenMap.set(parentId, [...(childrenMap.get(parentId) ?? []), s.taskId])
  }
  const key: string = computeInstructionPrefix(conversationCache.get(taskId)?.truncatedInstruction)
  return { content: [{ type: 'text', text: `${childrenMap.size} parents; key ${key}` }] }
}

/** export_data (xml): one task, one conversation, one project, with the export configuration. */
export async function exportData(
  conversationCache: Map<string, ConversationSkeleton>,
  args: { target: 'task' | 'conversation' | 'project'; id: string; projectPath?: string; filePath?: string },
): Promise<ToolResult> {
  const configManager = new ExportConfigManager()
  const config = await configManager.getConfig()
  const xml = new XmlExporterService()
  const root = conversationCache.get(args.id)
  if (!root) return { content: [{ type: 'text', text: `Task ${args.id} not found` }], isError: true }
  const options = { includeContent: config.defaults.includeContent, prettyPrint: config.defaults.prettyPrint }
  let content: string
  if (args.target === 'task') {
    content = xml.generateTaskXml(root, options)
  } else if (args.target === 'conversation') {
    const children = Array.from(conversationCache.values()).filter((s) => s.parentTaskId === root.taskId)
    content = xml.generateConversationXml(root, children, { ...options, maxDepth: 3 })
  } else {
    content = xml.generateProjectXml(Array.from(conversationCache.values()), args.projectPath ?? '', { startDate: '2025-01-01', endDate: '2026-12-31' })
  }
  if (args.filePath) await xml.saveXmlToFile(content, args.filePath)
  return { content: [{ type: 'text', text: content }] }
}

/** roosync_search (fallback path): a fresh cache within a budget, then the conversations it names. */
export async function roosyncSearch(args: { search_query: string; conversation_id?: string }): Promise<ToolResult> {
  const cache = SkeletonCacheService.getInstance()
  const fresh: boolean = await cache.awaitFreshnessWithBudget(5_000)
  const all = await cache.getCache()
  const hits = Array.from(all.values()).filter((s) => JSON.stringify(s).toLowerCase().includes(args.search_query.toLowerCase()))
  const summary = args.conversation_id ? await RooStorageDetector.findConversationById(args.conversation_id) : null
  const stats = await cache.getCacheTierStats()
  return { content: [{ type: 'text', text: `${hits.length} hits (fresh: ${fresh}, ${stats.total} cached)${summary ? `, ${summary.prompt}` : ''}` }] }
}

/** The aggregate entry names the same classes. */
export const sameDetector: typeof RooStorageDetector = compat.RooStorageDetector
export const mode: 'legacy' | 'fixed' = compat.getMode()

/** The server's validation scripts: its own skeleton type on the engine's result, the deprecated lookups with both arguments. */
interface ServerSkeleton {
  taskId: string
  parentTaskId?: string
  sequence: Array<{ role: 'user' | 'assistant'; content: string }>
  metadata: { createdAt: string; workspace?: string }
}
export async function validateReconstruction(workspace: string): Promise<number> {
  const seen = new Map<string, ServerSkeleton>()
  const skeletons = await HierarchyReconstructionEngine.reconstructHierarchy(workspace, true)
  skeletons.forEach((skeleton: ServerSkeleton) => seen.set(skeleton.taskId, skeleton))
  const parent: string | undefined = globalTaskInstructionIndex.findPotentialParent('some child text', 'child-id')
  const parents: string[] = globalTaskInstructionIndex.findAllPotentialParents('some child text')
  return seen.size + (parent ? 1 : 0) + parents.length
}
