/**
 * Compiled with `tsc --strict` by services.test.ts (not run): uses the compat engine and services
 * the way the legacy tool handlers do (build_skeleton_cache, export_data, export_config,
 * list_conversations / diagnose), with skeletons typed the way the legacy server types them.
 */
import { HierarchyReconstructionEngine } from '../../compat/utils/hierarchy-reconstruction-engine.js'
import { XmlExporterService, StateManagerError } from '../../compat/services/XmlExporterService.js'
import { ExportConfigManager, ExportConfigManagerErrorCode } from '../../compat/services/ExportConfigManager.js'
import { SkeletonCacheService } from '../../compat/services/skeleton-cache.service.js'
import { JsonCsvExporter } from '../../compat/services/trace-summary/JsonCsvExporter.js'

interface MessageSkeleton { role: 'user' | 'assistant'; content: string; timestamp: string; isTruncated: boolean }
interface ConversationSkeleton {
  taskId: string
  parentTaskId?: string
  sequence: MessageSkeleton[]
  metadata: {
    title?: string
    createdAt: string
    lastActivity: string
    mode?: string
    messageCount: number
    actionCount: number
    totalSize: number
    workspace?: string
    dataSource?: string
  }
  childTaskInstructionPrefixes?: string[]
  isCompleted?: boolean
  truncatedInstruction?: string
}

export async function buildSkeletonCache(cached: ConversationSkeleton[]): Promise<string> {
  const engine = new HierarchyReconstructionEngine({
    batchSize: 50,
    strictMode: false,
    similarityThreshold: 0.85,
    minConfidenceScore: 0.85,
    debugMode: true,
    forceRebuild: false,
  })
  const copies = engine.enhanceSkeletons(cached).map((s) => ({
    ...s,
    processingState: { ...s.processingState, phase1Completed: (s.childTaskInstructionPrefixes ?? []).length > 0 },
  }))
  const p1 = await engine.executePhase1(copies, { strictMode: false })
  const p2 = await engine.executePhase2(copies, { strictMode: false })
  let relations = 0
  for (const s of p2.skeletons) {
    if (s.reconstructedParentId && s.reconstructedParentId !== s.taskId) relations++
    const method: string | undefined = s.parentResolutionMethod
    void method
  }
  return `Built: ${p1.processedCount}, Hierarchy relations found: ${relations}`
}

export async function exportData(all: ConversationSkeleton[], id: string, filePath?: string): Promise<string> {
  const exporter = new XmlExporterService()
  const root = all.find((s) => s.taskId === id)
  if (!root) return ''
  const task = exporter.generateTaskXml(root, { includeContent: false, prettyPrint: true })
  const conv = exporter.generateConversationXml(root, all.filter((s) => s.parentTaskId === id), { maxDepth: 3 })
  const project = exporter.generateProjectXml(all, '/home/me/project', { startDate: '2025-01-01', endDate: '2025-12-31' })
  if (filePath) {
    try {
      await exporter.saveXmlToFile(task, filePath)
    } catch (e) {
      if (e instanceof StateManagerError && e.code === 'PATH_TRAVERSAL_DETECTED') return 'refused'
      throw e
    }
  }
  const csv = await new JsonCsvExporter({ isToolResult: (c) => c.startsWith('[') }).generateCsvSummary(
    root,
    { csvVariant: 'messages', truncationChars: 0 },
    { isContentTruncated: () => false, getEmptyStatistics: () => ({}), truncateText: (t) => t },
  )
  return task + conv + project + (csv.success ? csv.content : csv.error ?? '')
}

export async function exportConfig(action: 'get' | 'set' | 'reset'): Promise<string> {
  const m = new ExportConfigManager()
  try {
    if (action === 'set') await m.updateConfig({ defaults: { prettyPrint: false } })
    if (action === 'reset') await m.resetConfig()
    const c = await m.getConfig()
    return JSON.stringify(c.defaults)
  } catch (e) {
    const code = (e as { code?: string }).code
    return code === ExportConfigManagerErrorCode.CONFIG_SAVE_FAILED ? 'save failed' : 'error'
  }
}

export async function listConversations(): Promise<number> {
  const cache = SkeletonCacheService.getInstance()
  const fresh: boolean = await cache.awaitFreshnessWithBudget(2000)
  const map = await cache.getCache()
  const stats = await cache.getCacheTierStats()
  return (fresh ? map.size : 0) + stats.tier1_roo + (stats.cacheAgeMs ?? 0)
}
