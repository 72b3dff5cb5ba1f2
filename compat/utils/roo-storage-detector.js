'use strict'
/**
 * `RooStorageDetector` of roo-state-core/compat: the legacy static class that finds task stores and
 * turns a task folder into a `ConversationSkeleton`. Files are read through Node's `fs/promises`
 * (looked up at call time, so callers' mocks and spies apply) and their bytes handed to the native
 * legacy builder (`legacy` mode); `fixed` mode gives the engine's values in the same shape. Calls
 * between statics go through the class at call time. Inventory: docs/compat.md §2.
 */
const path = require('node:path')
const binding = require('../../index.js')
const { currentMode } = require('../services/compat-mode.js')
const { globalTaskInstructionIndex } = require('./task-instruction-index.js')

const fsp = () => require('fs/promises')
const fss = () => require('fs')

const FILES = {
  metadataPath: 'task_metadata.json',
  apiHistoryPath: 'api_conversation_history.json',
  uiMessagesPath: 'ui_messages.json',
  historyItemPath: 'history_item.json',
}

const stripBom = (s) => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s)

/** `RooStorageError` (`name` 'RooStorageError', a `code`). */
class RooStorageError extends Error {
  constructor(message, code) {
    super(message)
    this.name = 'RooStorageError'
    this.code = code
  }
}

/** An in-process key/value cache standing in for the legacy `globalCacheManager` (replaceable). */
function memoryCache() {
  const map = new Map()
  return {
    async get(key) {
      return map.get(key)
    },
    async set(key, value) {
      map.set(key, value)
    },
    async clear() {
      map.clear()
    },
  }
}

/** `'zoo-code'`, `'claude-code'` or `'roo'` from a task or storage path. */
function detectSourceFromPath(p) {
  if (!p) return 'roo'
  const n = String(p).replace(/\\/g, '/').toLowerCase()
  if (n.includes('zoocodeorganization.zoo-code')) return 'zoo-code'
  if (n.includes('.claude/projects') || n.startsWith('claude-')) return 'claude-code'
  return 'roo'
}

async function statOrNull(p) {
  try {
    return await fsp().stat(p)
  } catch {
    return null
  }
}

/** One task file for the native builder: size, and bytes unless too large (conversation files) or unreadable. */
async function readTaskFile(p, st, capped) {
  if (!st) return undefined
  const size = Number(st.size) || 0
  if (capped && size > RooStorageDetector.MAX_CONVERSATION_FILE_SIZE) return { size }
  try {
    const data = await fsp().readFile(p)
    return { size, bytes: Buffer.isBuffer(data) ? data : Buffer.from(String(data), 'utf8') }
  } catch {
    return { size }
  }
}

function parseJsonText(text) {
  if (text === undefined || text === null) return undefined
  try {
    return JSON.parse(stripBom(String(text)))
  } catch {
    return undefined
  }
}

/** The legacy parent priority: metadata `parentTaskId`, then `parent_task_id`, then the history item's. */
function parentFrom(metadata, historyItem) {
  const pick = metadata?.parentTaskId || metadata?.parent_task_id || historyItem?.parentTaskId
  return pick ? String(pick) : undefined
}

/** The skeleton in the legacy key set from the native legacy analysis. */
function legacySkeleton(analysis, taskPath, useProductionHierarchy, dirStats) {
  let createdAt
  let lastActivity
  if (analysis.createdAtMs != null && analysis.lastActivityMs != null) {
    createdAt = new Date(analysis.createdAtMs).toISOString()
    lastActivity = new Date(analysis.lastActivityMs).toISOString()
  } else if (dirStats) {
    lastActivity = new Date(dirStats.mtime).toISOString()
    createdAt = new Date(dirStats.birthtime ?? dirStats.mtime).toISOString()
  } else {
    createdAt = lastActivity = new Date().toISOString()
  }
  const prefixes = useProductionHierarchy ? analysis.childTaskInstructionPrefixes : []
  const metadata = {
    title: analysis.title ?? undefined,
    createdAt,
    lastActivity,
    mode: analysis.mode ?? undefined,
    messageCount: analysis.messageCount,
    actionCount: analysis.actionCount,
    totalSize: analysis.totalSize,
    workspace: analysis.workspace ?? undefined,
    dataSource: taskPath,
    source: detectSourceFromPath(taskPath),
  }
  if (analysis.oversizedFiles.length > 0) metadata.oversizedFiles = analysis.oversizedFiles
  return {
    taskId: analysis.taskId,
    parentTaskId: analysis.parentTaskId ?? undefined,
    sequence: analysis.sequence ?? [],
    metadata,
    childTaskInstructionPrefixes: prefixes.length > 0 ? prefixes : undefined,
    isCompleted: analysis.isCompleted,
    truncatedInstruction: analysis.truncatedInstruction ?? undefined,
  }
}

/** The engine's skeleton reduced to the legacy key set (no engine-only fields). */
function fixedSkeleton(s, taskPath, parentTaskId) {
  const m = s.metadata ?? {}
  const metadata = {
    title: m.title ?? undefined,
    createdAt: m.createdAt,
    lastActivity: m.lastActivity,
    mode: m.mode ?? undefined,
    messageCount: m.messageCount,
    actionCount: m.actionCount,
    totalSize: m.totalSize,
    workspace: m.workspace ?? undefined,
    dataSource: taskPath,
    source: detectSourceFromPath(taskPath),
  }
  const prefixes = s.childTaskInstructionPrefixes ?? []
  return {
    taskId: s.taskId,
    parentTaskId: parentTaskId ?? s.parentTaskId ?? undefined,
    sequence: s.sequence ?? [],
    metadata,
    childTaskInstructionPrefixes: prefixes.length > 0 ? prefixes : undefined,
    isCompleted: s.isCompleted,
    truncatedInstruction: s.truncatedInstruction ?? undefined,
  }
}

/** Messages of a `ui_messages.json` text: JSON array, else bracket-wrapped, else JSON Lines. */
function messagesFromText(content) {
  const text = String(content).trim()
  if (!text) return []
  try {
    const v = JSON.parse(text)
    return Array.isArray(v) ? v : []
  } catch {
    // not one JSON value
  }
  try {
    const v = JSON.parse(`[${text.replace(/,\s*$/, '')}]`)
    if (Array.isArray(v)) return v
  } catch {
    // not a bracket-less list
  }
  const out = []
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    try {
      out.push(JSON.parse(line))
    } catch {
      // not a JSON line
    }
  }
  return out
}

class RooStorageDetector {
  /** The cache the legacy server keeps storage locations in; replace it to inject locations. */
  static cacheManager = memoryCache()

  /** @deprecated the coordinator used by extractFromMessageFile; `null` = compat/utils/message-extraction-coordinator. */
  static _coordinatorOverride = null

  static setCoordinatorOverride(coordinator) {
    RooStorageDetector._coordinatorOverride = coordinator ?? null
  }

  // ---------------------------------------------------------------- storage

  static async detectStorageLocations() {
    const cached = await RooStorageDetector.cacheManager.get('storage_locations')
    if (cached) return cached
    let locations = []
    try {
      const found = await binding.discoverStorage({})
      locations = Array.from(new Set(found.locations.map((l) => l.path)))
    } catch (err) {
      console.error(`[RooStorageDetector] storage discovery failed: ${err?.message ?? err}`)
    }
    const valid = []
    for (const loc of locations) if (await RooStorageDetector.validateCustomPath(loc)) valid.push(loc)
    await RooStorageDetector.cacheManager.set('storage_locations', valid)
    return valid
  }

  static async validateCustomPath(p) {
    try {
      return fss().existsSync(path.join(path.resolve(p), 'tasks'))
    } catch {
      return false
    }
  }

  /** @deprecated */
  static async detectRooStorage() {
    const locations = await RooStorageDetector.detectStorageLocations()
    return { locations: locations.map((p) => ({ path: p, type: 'local' })) }
  }

  static async getStatsForPath(storagePath) {
    let conversationCount = 0
    let totalSize = 0
    const entries = await fsp().readdir(storagePath, { withFileTypes: true })
    if (!entries || !Array.isArray(entries)) return { conversationCount: 0, totalSize: 0, fileTypes: {} }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue
      conversationCount++
      try {
        const dir = path.join(storagePath, entry.name)
        for (const file of await fsp().readdir(dir)) {
          const st = await statOrNull(path.join(dir, file))
          if (st && st.isFile()) totalSize += st.size
        }
      } catch {
        // an unreadable task folder counts with size 0
      }
    }
    return { conversationCount, totalSize, fileTypes: {} }
  }

  static async getStorageStats() {
    const locations = await RooStorageDetector.detectStorageLocations()
    let totalConversations = 0
    let totalSize = 0
    for (const loc of locations) {
      const stats = await RooStorageDetector.getStatsForPath(path.join(loc, 'tasks'))
      totalConversations += stats.conversationCount
      totalSize += stats.totalSize
    }
    return { totalLocations: locations.length, totalConversations, totalSize }
  }

  static async getTaskPathById(taskId) {
    for (const loc of await RooStorageDetector.detectStorageLocations()) {
      const p = path.join(loc, 'tasks', taskId)
      const st = await statOrNull(p)
      if (st && st.isDirectory()) return p
    }
    return null
  }

  static async findConversationById(taskId) {
    const taskPath = await RooStorageDetector.getTaskPathById(taskId)
    if (!taskPath) return null
    const skeleton = await RooStorageDetector.analyzeConversation(taskId, taskPath)
    if (!skeleton) return null
    const m = skeleton.metadata
    return {
      taskId: skeleton.taskId,
      path: taskPath,
      metadata: { title: m.title, prompt: { task: '' } },
      messageCount: m.messageCount,
      lastActivity: m.lastActivity,
      hasApiHistory: m.totalSize > 0,
      hasUiMessages: m.totalSize > 0,
      size: m.totalSize,
      prompt: m.title || 'No prompt',
    }
  }

  static findConversation(taskId) {
    return RooStorageDetector.findConversationById(taskId)
  }

  static async scanConversationsMetadata(storagePath, options = {}) {
    const { limit, offset = 0, sortBy = 'lastActivity', sortOrder = 'desc' } = options
    let entries
    try {
      entries = await fsp().readdir(storagePath, { withFileTypes: true })
    } catch (err) {
      throw new RooStorageError(`Cannot read tasks folder ${storagePath}: ${err?.message ?? err}`, 'TASKS_READ_ERROR')
    }
    const out = []
    for (const e of entries ?? []) {
      if (!e.isDirectory()) continue
      const s = await RooStorageDetector.analyzeConversation(e.name, path.join(storagePath, e.name))
      if (s) out.push(s)
    }
    const key = sortBy === 'messageCount' ? (s) => s.metadata.messageCount : (s) => Date.parse(s.metadata.lastActivity)
    out.sort((a, b) => key(b) - key(a))
    if (sortOrder === 'asc') out.reverse()
    return out.slice(offset, limit === undefined ? undefined : offset + limit)
  }

  // -------------------------------------------------------------- skeletons

  static async analyzeConversation(taskId, taskPath, useProductionHierarchy = true) {
    const paths = Object.fromEntries(Object.entries(FILES).map(([k, f]) => [k, path.join(taskPath, f)]))
    if (currentMode() === 'fixed') {
      return RooStorageDetector.analyzeWithNewSystem(taskId, taskPath, useProductionHierarchy, paths)
    }
    return RooStorageDetector.analyzeWithOldSystem(taskId, taskPath, useProductionHierarchy, paths)
  }

  /** Legacy mode: the legacy builder over the bytes read here; `null` where it skips the task. */
  static async analyzeWithOldSystem(taskId, taskPath, useProductionHierarchy = true, paths) {
    const p = paths ?? Object.fromEntries(Object.entries(FILES).map(([k, f]) => [k, path.join(taskPath, f)]))
    try {
      const [dirStats, metaSt, apiSt, uiSt, histSt] = await Promise.all([
        statOrNull(taskPath),
        statOrNull(p.metadataPath),
        statOrNull(p.apiHistoryPath),
        statOrNull(p.uiMessagesPath),
        statOrNull(p.historyItemPath),
      ])
      if (!metaSt && !apiSt && !uiSt) return null
      const [metadata, apiHistory, uiMessages, historyItem] = await Promise.all([
        readTaskFile(p.metadataPath, metaSt, false),
        readTaskFile(p.apiHistoryPath, apiSt, true),
        readTaskFile(p.uiMessagesPath, uiSt, true),
        readTaskFile(p.historyItemPath, histSt, false),
      ])
      const analysis = await binding.compatAnalyzeLegacyFiles(String(taskId), { metadata, apiHistory, uiMessages, historyItem })
      if (!analysis) return null
      const skeleton = legacySkeleton(analysis, taskPath, useProductionHierarchy, dirStats)
      const prefixes = skeleton.childTaskInstructionPrefixes ?? []
      if (useProductionHierarchy) {
        for (const prefix of prefixes) globalTaskInstructionIndex.addInstruction(skeleton.taskId, prefix)
        if (prefixes.length > 0) {
          console.log(`[analyzeConversation] ✅ Extracted ${prefixes.length} instruction prefixes for ${String(taskId).slice(0, 8)}`)
        }
      }
      await RooStorageDetector.cacheManager.set(`conversation-skeleton:${taskId}`, skeleton)
      return skeleton
    } catch (err) {
      console.error(`[analyzeConversation] ${taskId}: ${err?.message ?? err}`)
      return null
    }
  }

  /** Fixed mode: the engine's skeleton in the legacy key set; parents in the legacy priority. */
  static async analyzeWithNewSystem(taskId, taskPath, useProductionHierarchy = true, paths) {
    const p = paths ?? Object.fromEntries(Object.entries(FILES).map(([k, f]) => [k, path.join(taskPath, f)]))
    const dir = await statOrNull(taskPath)
    if (!dir || !dir.isDirectory()) return null
    // As in legacy mode: a folder with none of metadata, API history and UI record is not a task.
    const present = await Promise.all([p.metadataPath, p.apiHistoryPath, p.uiMessagesPath].map(statOrNull))
    if (present.every((st) => !st)) return null
    const [metaText, histText] = await Promise.all([
      fsp().readFile(p.metadataPath, 'utf8').catch(() => undefined),
      fsp().readFile(p.historyItemPath, 'utf8').catch(() => undefined),
    ])
    let s
    try {
      s = await binding.analyzeConversation(String(taskId), taskPath, { includeSequence: true })
    } catch (err) {
      if (err?.code === 'TASK_NOT_FOUND' || err?.code === 'INVALID_PATH') return null
      throw err
    }
    const skeleton = fixedSkeleton(s, taskPath, parentFrom(parseJsonText(metaText), parseJsonText(histText)))
    if (useProductionHierarchy) {
      for (const prefix of skeleton.childTaskInstructionPrefixes ?? []) globalTaskInstructionIndex.addInstruction(skeleton.taskId, prefix)
    }
    return skeleton
  }

  static async analyzeWithComparison(taskId, taskPath, useProductionHierarchy = true, paths) {
    try {
      const [oldS, newS] = await Promise.all([
        RooStorageDetector.analyzeWithOldSystem(taskId, taskPath, useProductionHierarchy, paths),
        RooStorageDetector.analyzeWithNewSystem(taskId, taskPath, false, paths),
      ])
      return newS ?? oldS
    } catch {
      return null
    }
  }

  static async loadUIMessages(uiMessagesPath) {
    try {
      const text = await fsp().readFile(uiMessagesPath, 'utf8')
      const v = JSON.parse(stripBom(String(text)))
      return Array.isArray(v) ? v : []
    } catch {
      return []
    }
  }

  static async extractMainInstructionFromUI(uiMessagesPath, preloadedContent) {
    let content = preloadedContent
    if (content === undefined) {
      const st = await statOrNull(uiMessagesPath)
      if (!st || st.size > RooStorageDetector.MAX_CONVERSATION_FILE_SIZE) return undefined
      try {
        content = stripBom(String(await fsp().readFile(uiMessagesPath, 'utf8')))
      } catch {
        return undefined
      }
    }
    if (!content) return undefined
    return binding.compatMainInstructionLegacy(String(content)) ?? undefined
  }

  static async extractNewTaskInstructionsFromUI(uiMessagesPath, maxLines = 0, preloadedContent) {
    const instructions = []
    await RooStorageDetector.extractFromMessageFile(uiMessagesPath, instructions, maxLines, false, preloadedContent)
    if (process.env.ROO_DEBUG_INSTRUCTIONS === '1') {
      console.log(`[extractNewTaskInstructionsFromUI] ${instructions.length} instructions from ${uiMessagesPath}`)
    }
    return instructions
  }

  static async extractFromMessageFile(filePath, instructions, maxLines = 0, onlyJsonFormat = false, preloadedContent) {
    try {
      let content
      if (preloadedContent !== undefined) {
        content = String(preloadedContent)
      } else {
        if (!fss().existsSync(filePath)) return
        const st = await fsp().stat(filePath)
        if (st.size > RooStorageDetector.MAX_CONVERSATION_FILE_SIZE) return
        content = stripBom(String(await fsp().readFile(filePath, 'utf8')))
      }
      if (maxLines > 0) content = content.split('\n').slice(0, maxLines).join('\n')
      if (!content.trim()) return
      const coordinator = RooStorageDetector._coordinatorOverride
      if (coordinator) {
        const result = coordinator.extractFromMessages(messagesFromText(content), {
          maxLines,
          onlyJsonFormat,
          enableDebug: process.env.ROO_DEBUG_INSTRUCTIONS === '1',
        })
        for (const inst of result?.instructions ?? []) instructions.push(inst)
        return
      }
      for (const inst of binding.compatExtractLegacyFromText(content.trim())) instructions.push(inst)
    } catch (err) {
      console.error(`[extractFromMessageFile] ${filePath}: ${err?.message ?? err}`)
    }
  }

  static extractNewTaskInstructions(messages) {
    const list = Array.isArray(messages) ? messages : []
    const coordinator = RooStorageDetector._coordinatorOverride
    if (coordinator) return coordinator.extractFromMessages(list, { enableDebug: false })?.instructions ?? []
    return binding.compatExtractLegacyFromText(JSON.stringify(list))
  }

  // -------------------------------------------------------------- stubs the legacy class keeps

  static async inferParentTaskIdFromContent() {
    return undefined
  }

  static analyzeParentForNewTaskInstructions() {
    return false
  }

  static findParentByNewTaskInstructions() {
    return undefined
  }

  static legacyInferParentFromChildContent() {
    return undefined
  }

  static extractTaskIdFromText(text) {
    if (!text) return undefined
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/i
    const marked = /(?:CONTEXTE HÉRITÉ|ORCHESTRATEUR|tâche parent)[\s\S]{0,200}?([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})/i.exec(text)
    if (marked) return marked[1]
    return uuid.exec(text)?.[0]
  }

  /** The legacy builder of a workspace's skeletons (every store, every task), for the engine's static entry. */
  static async buildHierarchicalSkeletonsLegacy(workspacePath, useFullVolume = true) {
    const out = []
    for (const loc of await RooStorageDetector.detectStorageLocations()) {
      const tasksDir = path.join(loc, 'tasks')
      let entries = []
      try {
        entries = await fsp().readdir(tasksDir, { withFileTypes: true })
      } catch {
        continue
      }
      for (const e of entries) {
        if (!e.isDirectory() || e.name.startsWith('.') || e.name.startsWith('_')) continue
        const s = await RooStorageDetector.analyzeConversation(e.name, path.join(tasksDir, e.name), true)
        if (!s) continue
        if (workspacePath && s.metadata.workspace !== workspacePath) continue
        out.push(s)
        if (!useFullVolume && out.length >= 100) break
      }
    }
    for (const s of out) {
      if (s.parentTaskId || !s.truncatedInstruction) continue
      const found = globalTaskInstructionIndex.searchExactPrefix(s.truncatedInstruction)
      if (found.length === 1 && found[0].taskId !== s.taskId) s.parentTaskId = found[0].taskId
    }
    return out
  }

  static async buildHierarchicalSkeletons(workspacePath, useFullVolume = true, forceRebuild = false) {
    const { HierarchyReconstructionEngine } = require('./hierarchy-reconstruction-engine.js')
    try {
      return await HierarchyReconstructionEngine.reconstructHierarchy(workspacePath, forceRebuild)
    } catch {
      return RooStorageDetector.buildHierarchicalSkeletonsLegacy(workspacePath, useFullVolume)
    }
  }
}

RooStorageDetector.MAX_CONVERSATION_FILE_SIZE = 10 * 1024 * 1024

module.exports = { RooStorageDetector, RooStorageError, detectSourceFromPath }
