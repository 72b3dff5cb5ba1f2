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

// The trace-summary service's call: its own statistics and result types, its skeleton type with a
// required sequence, the result returned as its own `SummaryResult`.
interface ActionMetadata { type: 'tool' | 'command'; name: string; parameters: Record<string, unknown>; status: 'success' | 'failure' | 'in_progress'; timestamp: string }
interface FullSkeleton extends Omit<ConversationSkeleton, 'sequence'> { sequence: (MessageSkeleton | ActionMetadata)[] }
interface ServerStatistics {
  totalSections: number
  userMessages: number
  assistantMessages: number
  toolResults: number
  userContentSize: number
  assistantContentSize: number
  toolResultsSize: number
  totalContentSize: number
  userSizePercentage: number
  assistantSizePercentage: number
  toolResultsSizePercentage: number
  userMessagePercentage: number
  assistantMessagePercentage: number
  toolResultsMessagePercentage: number
  compressionRatio?: number
}
interface ServerSummaryResult { success: boolean; content: string; statistics: ServerStatistics; error?: string }
interface ServerSummaryOptions { detailLevel: 'Full' | 'Summary'; truncationChars: number; outputFormat: 'json' | 'csv'; jsonVariant?: 'light' | 'full'; csvVariant?: 'conversations' | 'messages' | 'tools' }

class TraceSummary {
  private exporter = new JsonCsvExporter({ isToolResult: (c: string) => c.startsWith('[') })
  private empty(): ServerStatistics {
    return {
      totalSections: 0, userMessages: 0, assistantMessages: 0, toolResults: 0, userContentSize: 0, assistantContentSize: 0,
      toolResultsSize: 0, totalContentSize: 0, userSizePercentage: 0, assistantSizePercentage: 0, toolResultsSizePercentage: 0,
      userMessagePercentage: 0, assistantMessagePercentage: 0, toolResultsMessagePercentage: 0,
    }
  }
  private originalSize(conversation: FullSkeleton): number {
    return conversation.sequence.length
  }
  async generateSummary(conversation: FullSkeleton, options: ServerSummaryOptions): Promise<ServerSummaryResult> {
    if (options.outputFormat === 'json') {
      return await this.exporter.generateJsonSummary(conversation, options, {
        truncateContent: (c, m) => c.slice(0, m),
        isContentTruncated: (c, m) => c.length > m,
        getEmptyStatistics: () => this.empty(),
        getOriginalContentSize: (c) => this.originalSize(c),
        calculateCompressionRatio: (o, f) => o / f,
      })
    }
    return await this.exporter.generateCsvSummary(conversation, options, {
      isContentTruncated: (c, m) => c.length > m,
      getEmptyStatistics: () => this.empty(),
      truncateText: (t, m) => t.slice(0, m),
    })
  }
}

// list_conversations: cached skeletons go into the server's own skeleton arrays.
export async function archivedSkeletons(): Promise<FullSkeleton[]> {
  const out: FullSkeleton[] = []
  for (const [, skeleton] of await SkeletonCacheService.getInstance().getCache()) {
    if (skeleton.metadata?.dataSource === 'gdrive-archive') out.push(skeleton)
  }
  return out.concat(await SkeletonCacheService.getInstance().getAllSkeletons())
}

export const traceSummary = new TraceSummary()
