'use strict'
/**
 * `RooStorageDetector` of roo-state-core/compat: the legacy static class that finds task stores and
 * turns a task folder into a `ConversationSkeleton`, statics for statics (private ones included).
 *
 * Outside modules are looked up at call time: Node's `fs`, `fs/promises` and `path` through
 * compat/io.js, the caller's own modules (cache manager, workspace detector, parsing config,
 * comparator, instruction index, extraction coordinator, transformer, hierarchy engine, `glob`)
 * through the importer its replacement file hands over (compat/utils/caller-modules.js), with
 * compat's own equivalents when none was. So a test's mocks and spies reach this class as they
 * reached the legacy one. Calls between statics go through the class at call time, so patching a
 * static changes what the others call.
 *
 * When nothing observes the work (no replaced fs function, no patched static, the caller's index
 * and coordinator being compat's own), `analyzeConversation` reads and analyses a task natively:
 * the legacy builder in `legacy` mode, the engine's skeleton in `fixed` mode. Inventory:
 * docs/compat.md §2.
 */
const binding = require('../../index.js')
const io = require('../io.js')
const { currentMode } = require('../services/compat-mode.js')
const { exportOf } = require('./caller-modules.js')
const { registerDetector } = require('./detector-class.js')
const { matchesPerPattern } = require('./detector-glob.js')
const fallbacks = require('./detector-fallbacks.js')
const oldSystem = require('./detector-old-system.js')
const { own, deps, newWorkspaceDetector } = require('./detector-deps.js')
const { nativeEligible, analyzeNativeLegacy, analyzeNativeFixed, recordSkeleton, rememberStatics } = require('./detector-native.js')
const { looseItems, conversationText, sequenceItem, messagesForExtraction, workspaceKey, folderFiles, summaryOf, errorText, detectSourceFromPath } = require('./detector-files.js')

const { stripBom } = fallbacks
const fsp = () => io.mod('fs/promises')
const fss = () => io.mod('fs')
const pth = () => io.mod('path')

const FILE_NAMES = {
  metadataPath: 'task_metadata.json',
  apiHistoryPath: 'api_conversation_history.json',
  uiMessagesPath: 'ui_messages.json',
  historyItemPath: 'history_item.json',
}
const LEGACY_MAX_TASKS = 50
const UUID_V4 = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'

/** `RooStorageError` (`name` 'RooStorageError', a `code`). */
class RooStorageError extends Error {
  constructor(message, code) {
    super(message)
    this.name = 'RooStorageError'
    this.code = code
  }
}



// ------------------------------------------------------------------ the class

class RooStorageDetector {
  /** The cache used when the caller wired no cache manager; replace it to inject locations. */
  static cacheManager = fallbacks.memoryCache()

  /** The extraction coordinator `extractFromMessageFile` uses instead of the caller's (tests). */
  static _coordinatorOverride = null

  static setCoordinatorOverride(coordinator) {
    RooStorageDetector._coordinatorOverride = coordinator
  }

  /** Where the legacy class looked for extension folders (VS Code and Insiders, Windows, Linux, macOS). */
  static get COMMON_ROO_PATHS() {
    const path = pth()
    const home = io.mod('os').homedir()
    return [
      path.join(home, '.vscode', 'extensions'),
      path.join(home, '.vscode-insiders', 'extensions'),
      path.join(home, 'AppData', 'Roaming', 'Code', 'User', 'globalStorage'),
      path.join(home, 'AppData', 'Roaming', 'Code - Insiders', 'User', 'globalStorage'),
      path.join(home, '.config', 'Code', 'User', 'globalStorage'),
      path.join(home, 'Library', 'Application Support', 'Code', 'User', 'globalStorage'),
    ]
  }

  // ---------------------------------------------------------------- storage

  static async detectStorageLocations() {
    const cache = await deps.cache()
    const cached = await cache.get('storage_locations')
    if (cached) return cached
    const valid = []
    for (const location of await RooStorageDetector.findPotentialStorageLocations()) {
      try {
        if (await RooStorageDetector.validateCustomPath(location)) valid.push(location)
      } catch {
        // a location that cannot be checked is left out
      }
    }
    await cache.set('storage_locations', valid)
    return valid
  }

  /** Extension folders under the common VS Code paths (the caller's `glob`), else the engine's discovery. */
  static async findPotentialStorageLocations() {
    const glob = exportOf(await deps.glob(), 'glob')
    if (typeof glob !== 'function') {
      try {
        const found = await binding.discoverStorage({})
        return [...new Set(found.locations.map((l) => l.path))]
      } catch (err) {
        console.error(`[RooStorageDetector] storage discovery failed: ${errorText(err)}`)
        return []
      }
    }
    const found = []
    for (const base of RooStorageDetector.COMMON_ROO_PATHS) {
      try {
        await fsp().access(base)
      } catch {
        continue
      }
      for await (const matches of matchesPerPattern(glob, base, RooStorageDetector.ROO_EXTENSION_PATTERNS)) {
        for (const match of matches ?? []) {
          try {
            if ((await fsp().stat(match)).isDirectory()) found.push(match)
          } catch {
            // an unreadable match is left out
          }
        }
      }
    }
    return [...new Set(found)]
  }

  static async validateCustomPath(customPath) {
    try {
      const path = pth()
      return fss().existsSync(path.join(path.resolve(customPath), 'tasks'))
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
    const entries = await fsp().readdir(storagePath, { withFileTypes: true })
    if (!entries || !Array.isArray(entries)) return { conversationCount: 0, totalSize: 0, fileTypes: {} }
    let conversationCount = 0
    let totalSize = 0
    for (const entry of entries) {
      if (!entry.isDirectory()) continue
      const { size } = await folderFiles(pth().join(storagePath, entry.name))
      conversationCount++
      totalSize += size
    }
    return { conversationCount, totalSize, fileTypes: {} }
  }

  static async getStorageStats() {
    const locations = await RooStorageDetector.detectStorageLocations()
    let totalConversations = 0
    let totalSize = 0
    for (const location of locations) {
      const stats = await RooStorageDetector.getStatsForPath(pth().join(location, 'tasks'))
      totalConversations += stats.conversationCount
      totalSize += stats.totalSize
    }
    return { totalLocations: locations.length, totalConversations, totalSize }
  }

  /** Task count, size and latest file time per detected workspace (the location's folder name when none). */
  static async getWorkspaceBreakdown() {
    const locations = await RooStorageDetector.detectStorageLocations()
    const breakdown = {}
    const detector = newWorkspaceDetector(await deps.workspaceDetector())
    for (const location of locations) {
      const tasksPath = pth().join(location, 'tasks')
      const fallback = pth().basename(location)
      let entries
      try {
        entries = await fsp().readdir(tasksPath, { withFileTypes: true })
      } catch (err) {
        console.warn(`[getWorkspaceBreakdown] cannot read ${tasksPath}: ${errorText(err)}`)
        continue
      }
      for (let i = 0; i < entries.length; i += 50) {
        const batch = entries.slice(i, i + 50).filter((e) => e.isDirectory())
        await Promise.all(
          batch.map(async (entry) => {
            const taskPath = pth().join(tasksPath, entry.name)
            try {
              const workspace = await RooStorageDetector.detectWorkspaceForTaskWithDetector(taskPath, detector, fallback)
              const { size, mtime } = await folderFiles(taskPath)
              const lastActivity = mtime ? mtime.toISOString() : new Date().toISOString()
              const slot = (breakdown[workspace] ??= { count: 0, totalSize: 0, lastActivity })
              slot.count++
              slot.totalSize += size
              if (new Date(lastActivity) > new Date(slot.lastActivity)) slot.lastActivity = lastActivity
            } catch (err) {
              console.warn(`[getWorkspaceBreakdown] cannot analyse task ${entry.name}: ${errorText(err)}`)
            }
          }),
        )
      }
    }
    return breakdown
  }

  static async detectWorkspaceForTaskWithDetector(taskPath, detector, fallbackWorkspace) {
    try {
      const result = await detector.detect(taskPath)
      if (process.env.DEBUG_WORKSPACE === 'true') {
        console.log(`[detectWorkspaceForTask] ${taskPath}:`, { workspace: result.workspace, source: result.source, confidence: result.confidence })
      }
      return result.workspace || fallbackWorkspace || 'UNKNOWN'
    } catch {
      return fallbackWorkspace || 'UNKNOWN'
    }
  }

  static async detectWorkspaceForTask(taskPath) {
    const path = pth()
    const storeName = () => {
      const name = path.basename(path.dirname(path.dirname(taskPath)))
      return name && name.length >= 2 ? name : undefined
    }
    try {
      const result = await newWorkspaceDetector(await deps.workspaceDetector()).detect(taskPath)
      if (!result.workspace) {
        const name = storeName()
        if (name) return name
      }
      return result.workspace || 'UNKNOWN'
    } catch {
      return storeName() ?? 'UNKNOWN'
    }
  }

  static async getTaskPathById(taskId) {
    for (const location of await RooStorageDetector.detectStorageLocations()) {
      const taskPath = pth().join(location, 'tasks', taskId)
      try {
        if ((await fsp().stat(taskPath)).isDirectory()) return taskPath
      } catch {
        // not in this location
      }
    }
    return null
  }

  static async findConversationById(taskId) {
    for (const location of await RooStorageDetector.detectStorageLocations()) {
      const taskPath = pth().join(location, 'tasks', taskId)
      try {
        const st = await fsp().stat(taskPath)
        if (st.isDirectory()) {
          const skeleton = await RooStorageDetector.analyzeConversation(taskId, taskPath)
          if (!skeleton) return null
          return summaryOf(skeleton, taskPath, false)
        }
      } catch {
        // not in this location
      }
    }
    return null
  }

  static findConversation(taskId) {
    return RooStorageDetector.findConversationById(taskId)
  }

  static async scanConversationsMetadata(storagePath, options) {
    const conversations = []
    for (const taskId of await fsp().readdir(storagePath)) {
      const taskPath = pth().join(storagePath, taskId)
      const st = await fsp().stat(taskPath)
      if (!st.isDirectory()) continue
      const skeleton = await RooStorageDetector.analyzeConversation(taskId, taskPath)
      if (skeleton) conversations.push(summaryOf(skeleton, taskPath, true))
    }
    conversations.sort((a, b) => {
      let d = 0
      if (options.sortBy === 'lastActivity') d = new Date(b.lastActivity).getTime() - new Date(a.lastActivity).getTime()
      else if (options.sortBy === 'messageCount') d = b.messageCount - a.messageCount
      return options.sortOrder === 'asc' ? -d : d
    })
    return conversations.slice(options.offset, options.offset + options.limit)
  }

  static async scanConversations(tasksPath) {
    const conversations = []
    let names
    try {
      names = await fsp().readdir(tasksPath)
    } catch (err) {
      throw new RooStorageError(`Impossible de lire le répertoire des tâches: ${errorText(err)}`, 'TASKS_READ_ERROR')
    }
    for (const taskId of names) {
      const taskPath = pth().join(tasksPath, taskId)
      try {
        if (!(await fsp().stat(taskPath)).isDirectory()) continue
        const skeleton = await RooStorageDetector.analyzeConversation(taskId, taskPath)
        if (skeleton) conversations.push(summaryOf(skeleton, taskPath, true))
      } catch {
        // a task that cannot be analysed is left out
      }
    }
    return conversations
  }

  // -------------------------------------------------------------- skeletons

  static async analyzeConversation(taskId, taskPath, useProductionHierarchy = true) {
    const path = pth()
    const paths = {
      metadataPath: path.join(taskPath, FILE_NAMES.metadataPath),
      apiHistoryPath: path.join(taskPath, FILE_NAMES.apiHistoryPath),
      uiMessagesPath: path.join(taskPath, FILE_NAMES.uiMessagesPath),
      historyItemPath: path.join(taskPath, FILE_NAMES.historyItemPath),
    }
    if (await nativeEligible()) {
      if (currentMode() === 'fixed') {
        const fixed = await analyzeNativeFixed(taskId, taskPath, paths)
        return fixed && recordSkeleton(fixed, useProductionHierarchy)
      }
      const skeleton = await analyzeNativeLegacy(taskId, taskPath, useProductionHierarchy, paths)
      return skeleton && recordSkeleton(skeleton, useProductionHierarchy)
    }
    const parsing = await deps.parsing()
    parsing.getParsingConfig()
    if (parsing.isComparisonMode()) {
      return RooStorageDetector.analyzeWithComparison(taskId, taskPath, useProductionHierarchy, paths)
    }
    if (parsing.shouldUseNewParsing()) {
      return RooStorageDetector.analyzeWithNewSystem(taskId, taskPath, useProductionHierarchy, paths)
    }
    return RooStorageDetector.analyzeWithOldSystem(taskId, taskPath, useProductionHierarchy, paths)
  }

  /** The transformer's skeleton of the task's UI messages (the legacy "new system"). */
  static async analyzeWithNewSystem(taskId, taskPath, useProductionHierarchy, paths) {
    try {
      const messages = await RooStorageDetector.loadUIMessages(paths.uiMessagesPath)
      if (messages.length === 0) {
        console.warn(`[NEW PARSING] No messages found for ${taskId}`)
        return null
      }
      const found = await newWorkspaceDetector(await deps.workspaceDetector()).detect(taskPath)
      if (process.env.DEBUG_PARSING === 'true') {
        console.log(`[NEW PARSING] Workspace for ${taskId}:`, { workspace: found.workspace, source: found.source, confidence: found.confidence })
      }
      const { MessageToSkeletonTransformer } = await deps.transformer()
      const transformer = new MessageToSkeletonTransformer({ normalizePrefixes: true, strictValidation: true })
      const result = await transformer.transform(messages, taskId, found.workspace || undefined)
      if (process.env.DEBUG_PARSING === 'true') console.log('[NEW PARSING] Metadata:', result.metadata)
      await (await deps.cache()).set(`conversation-skeleton:${taskId}`, result.skeleton)
      return result.skeleton
    } catch (err) {
      console.error(`[NEW PARSING] Error for ${taskId}:`, err)
      return null
    }
  }

  /** The legacy composition: metadata, history item, instructions, sequence, dates, workspace. */
  static async analyzeWithOldSystem(taskId, taskPath, useProductionHierarchy, paths) {
    return oldSystem.analyzeWithOldSystem(RooStorageDetector, taskId, taskPath, useProductionHierarchy, paths)
  }

  /** Both parses; the new one when the comparator validates it (or new parsing is on), else the old one. */
  static async analyzeWithComparison(taskId, taskPath, useProductionHierarchy, paths) {
    const config = (await deps.parsing()).getParsingConfig()
    try {
      const oldSkeleton = await RooStorageDetector.analyzeWithOldSystem(taskId, taskPath, useProductionHierarchy, paths)
      const newSkeleton = await RooStorageDetector.analyzeWithNewSystem(taskId, taskPath, useProductionHierarchy, paths)
      if (!oldSkeleton && !newSkeleton) return null
      if (!oldSkeleton) {
        console.warn(`[COMPARISON] Old system failed for ${taskId}, using new system`)
        return newSkeleton
      }
      if (!newSkeleton) {
        console.warn(`[COMPARISON] New system failed for ${taskId}, using old system`)
        return oldSkeleton
      }
      const { SkeletonComparator } = await deps.comparator()
      const comparator = new SkeletonComparator()
      const result = comparator.compareWithImprovements(oldSkeleton, newSkeleton)
      if (config.logDifferences || !result.isValidUpgrade) {
        console.log(`[COMPARISON] Task ${taskId}: similarity ${result.similarityScore}%, improvements: ${result.improvements.join(', ')}`)
        console.log(`[COMPARISON] ${result.isValidUpgrade ? 'accepted' : 'rejected'}: ${result.validationReason}`)
        if (!result.isValidUpgrade) console.log(comparator.formatReport(result))
      }
      if (result.isValidUpgrade || config.useNewParsing) return newSkeleton
      console.warn(`[FALLBACK] old system kept for ${taskId}: comparison not validated`)
      return oldSkeleton
    } catch (err) {
      console.error(`[COMPARISON] Error for ${taskId}:`, err)
      return null
    }
  }

  static async loadUIMessages(uiMessagesPath) {
    try {
      if (!fss().existsSync(uiMessagesPath)) return []
      const messages = JSON.parse(stripBom(await fsp().readFile(uiMessagesPath, 'utf8')))
      return Array.isArray(messages) ? messages : []
    } catch (err) {
      console.error(`Error loading ui_messages.json from ${uiMessagesPath}:`, err)
      return []
    }
  }

  /** The API history's then the UI record's items as one time-sorted sequence of messages and actions. */
  static async buildSequenceFromFiles(apiHistoryPath, uiMessagesPath, preloadedApiContent, preloadedUiContent) {
    const items = async (filePath, preloaded) => {
      try {
        const text = await conversationText(filePath, preloaded)
        if (text === undefined) return []
        const { items, skipped } = looseItems(text, true)
        if (skipped > 0) console.warn(`[readJsonFile] ⚠️ ${skipped} invalid JSONL lines skipped in ${pth().basename(filePath)}`)
        return items
      } catch (err) {
        console.error(`[readJsonFile] ❌ cannot read ${filePath}:`, err)
        return []
      }
    }
    const combined = [...(await items(apiHistoryPath, preloadedApiContent)), ...(await items(uiMessagesPath, preloadedUiContent))]
    const sequence = []
    for (const item of combined) {
      const entry = sequenceItem(item)
      if (entry) sequence.push(entry)
    }
    sequence.sort((a, b) => new Date(a.timestamp).getTime() - new Date(b.timestamp).getTime())
    return sequence
  }

  /**
   * The first non-empty `say:"text"`; when short or cut (`...`), the first `<task>` of a request
   * payload instead (`roo_legacy::main_instruction`). The file is read here, through the caller's `fs`.
   */
  static async extractMainInstructionFromUI(uiMessagesPath, preloadedContent) {
    try {
      let content = preloadedContent
      if (content === undefined) {
        if (!fss().existsSync(uiMessagesPath)) return undefined
        const st = await fsp().stat(uiMessagesPath)
        if (st.size > RooStorageDetector.MAX_CONVERSATION_FILE_SIZE) return undefined
        content = stripBom(await fsp().readFile(uiMessagesPath, 'utf-8'))
      }
      return binding.compatMainInstructionLegacy(String(content)) ?? undefined
    } catch (err) {
      if (process.env.ROO_DEBUG_INSTRUCTIONS === '1') console.warn(`[extractMainInstructionFromUI] ⚠️ ${uiMessagesPath}:`, err)
      return undefined
    }
  }

  static async extractNewTaskInstructionsFromUI(uiMessagesPath, maxLines = 0, preloadedContent) {
    const instructions = []
    await RooStorageDetector.extractFromMessageFile(uiMessagesPath, instructions, maxLines, false, preloadedContent)
    if (process.env.ROO_DEBUG_INSTRUCTIONS === '1') {
      console.log(`[extractNewTaskInstructionsFromUI] ✅ ${instructions.length} instructions found in ui_messages.json`)
    }
    return instructions
  }

  static async extractFromMessageFile(filePath, instructions, maxLines = 0, onlyJsonFormat = false, preloadedContent) {
    try {
      let content = preloadedContent
      if (content === undefined) {
        if (!fss().existsSync(filePath)) return
        const st = await fsp().stat(filePath)
        if (st.size > RooStorageDetector.MAX_CONVERSATION_FILE_SIZE) return
        content = stripBom(await fsp().readFile(filePath, 'utf-8'))
      }
      const text = maxLines > 0 ? content.split('\n').slice(0, maxLines).join('\n') : content
      const messages = messagesForExtraction(text, filePath)
      if (!messages) return
      const coordinator = await RooStorageDetector.coordinator()
      const debug = process.env.ROO_DEBUG_INSTRUCTIONS === '1'
      const result = coordinator.extractFromMessages(messages, { maxLines, onlyJsonFormat, enableDebug: debug })
      if (debug) {
        console.log(`[extractFromMessageFile] 📊 ${result.instructions.length} instructions found`)
        console.log('[extractFromMessageFile] 📋 Instructions:', JSON.stringify(result.instructions, null, 2))
      }
      instructions.push(...result.instructions)
      if (result.errors.length > 0 && debug) console.log(`[extractFromMessageFile] ⚠️ extraction errors for ${filePath}:`, result.errors)
    } catch (err) {
      console.error(`[extractFromMessageFile] ❌ ${filePath}:`, err)
    }
  }

  /** The override, else the caller's extraction coordinator (else compat's). */
  static async coordinator() {
    return RooStorageDetector._coordinatorOverride || exportOf(await deps.coordinator(), 'messageExtractionCoordinator')
  }

  static async extractNewTaskInstructions(messages) {
    const coordinator = await RooStorageDetector.coordinator()
    return coordinator.extractFromMessages(messages, { enableDebug: process.env.ROO_DEBUG_INSTRUCTIONS === '1' }).instructions
  }

  // -------------------------------------------------------------- parents

  /** @deprecated always `undefined` (parents are not inferred from children). */
  static inferParentTaskIdFromContent() {
    return Promise.resolve(undefined)
  }

  /** @deprecated always `false`. */
  static async analyzeParentForNewTaskInstructions() {
    return false
  }

  /** @deprecated always `undefined`. */
  static async findParentByNewTaskInstructions() {
    return undefined
  }

  /** @deprecated always `undefined`. */
  static async legacyInferParentFromChildContent() {
    return undefined
  }

  /** A task id in the first user message of an API history. */
  static async extractParentFromApiHistory(apiHistoryPath) {
    try {
      const data = JSON.parse(stripBom(await fsp().readFile(apiHistoryPath, 'utf-8')))
      const messages = Array.isArray(data) ? data : data?.messages || []
      const first = messages.find((m) => m.role === 'user')
      if (!first?.content) return undefined
      const text = Array.isArray(first.content) ? first.content.find((c) => c.type === 'text')?.text || '' : first.content
      return RooStorageDetector.extractTaskIdFromText(text)
    } catch (err) {
      console.error('[extractParentFromApiHistory] error:', err)
      return undefined
    }
  }

  /** A task id in the first `type:"user"` UI message. */
  static async extractParentFromUiMessages(uiMessagesPath) {
    try {
      const data = JSON.parse(stripBom(await fsp().readFile(uiMessagesPath, 'utf-8')))
      const first = (Array.isArray(data) ? data : []).find((m) => m.type === 'user')
      if (!first?.content) return undefined
      return RooStorageDetector.extractTaskIdFromText(first.content)
    } catch (err) {
      console.error('[extractParentFromUiMessages] error:', err)
      return undefined
    }
  }

  /** The first UUID v4 of a text (the parent-marker patterns only matter where none is). */
  static extractTaskIdFromText(text) {
    if (!text) return undefined
    const any = text.match(new RegExp(UUID_V4, 'gi'))
    if (any && any.length > 0) return any[0]
    for (const marker of ['CONTEXTE HÉRITÉ', 'ORCHESTRATEUR', 'tâche parent']) {
      const found = text.match(new RegExp(`${marker}.*?(${UUID_V4})`, 'i'))
      if (found && found[1]) return found[1]
    }
    return undefined
  }

  // -------------------------------------------------------------- hierarchy

  /** `processor` over `items` in batches of `batchSize` run together; failed or null results dropped. */
  static async processBatch(items, processor, batchSize = 20, onProgress) {
    const results = []
    for (let i = 0; i < items.length; i += batchSize) {
      const batch = items.slice(i, i + batchSize).map((item) =>
        processor(item).catch((err) => {
          console.warn('[processBatch] item failed:', err)
          return null
        }),
      )
      for (const r of await Promise.all(batch)) if (r !== null) results.push(r)
      if (onProgress) onProgress(Math.min(i + batchSize, items.length), items.length)
    }
    return results
  }

  static async buildHierarchicalSkeletons(workspacePath, useFullVolume = true, forceRebuild = false) {
    console.log(`[buildHierarchicalSkeletons] rebuilding ${workspacePath || 'all workspaces'}`)
    try {
      const { HierarchyReconstructionEngine } = await deps.engine()
      const skeletons = await HierarchyReconstructionEngine.reconstructHierarchy(workspacePath, forceRebuild)
      const linked = skeletons.filter((s) => s.parentTaskId).length
      const depth = RooStorageDetector.calculateTreeDepth(skeletons)
      console.log(`[buildHierarchicalSkeletons] ${skeletons.length} tasks, ${linked} with a parent, depth ${depth}`)
      return skeletons
    } catch (err) {
      console.error('[buildHierarchicalSkeletons] ❌ reconstruction failed, legacy method used:', err)
      return RooStorageDetector.buildHierarchicalSkeletonsLegacy(workspacePath, useFullVolume)
    }
  }

  /** The longest parent chain; a chain that loops throws a RangeError, as the legacy recursion did. */
  static calculateTreeDepth(skeletons) {
    const byId = new Map(skeletons.map((s) => [s.taskId, s]))
    let max = 0
    for (const s of skeletons) {
      let depth = 0
      let node = byId.get(s.taskId)
      while (node && node.parentTaskId) {
        depth++
        if (depth > byId.size) throw new RangeError('Maximum call stack size exceeded')
        node = byId.get(node.parentTaskId)
      }
      if (depth > max) max = depth
    }
    return max
  }

  static async buildHierarchicalSkeletonsLegacy(workspacePath, useFullVolume = true) {
    void useFullVolume
    const locations = await RooStorageDetector.detectStorageLocations()
    await RooStorageDetector.rebuildIndexFromExistingSkeletons()
    const entries = []
    for (const location of locations) {
      const tasksPath = pth().join(location, 'tasks')
      try {
        for (const entry of await fsp().readdir(tasksPath, { withFileTypes: true })) {
          if (entries.length >= LEGACY_MAX_TASKS) break
          if (!entry.isDirectory()) continue
          const taskPath = pth().join(tasksPath, entry.name)
          if (workspacePath !== undefined) {
            const taskWorkspace = await RooStorageDetector.detectWorkspaceForTask(taskPath)
            if (!workspaceKey(taskWorkspace).includes(workspaceKey(workspacePath))) continue
          }
          entries.push({ taskId: entry.name, taskPath, locationPath: location })
        }
      } catch (err) {
        console.warn(`[buildHierarchicalSkeletonsLegacy] ⚠️ cannot scan ${tasksPath}:`, err)
      }
    }
    if (workspacePath !== undefined) {
      // The legacy diagnostics detect each kept task's workspace once more.
      for (const entry of entries) await RooStorageDetector.detectWorkspaceForTask(entry.taskPath)
    }
    const skeletons = await RooStorageDetector.processBatch(
      entries,
      async (entry) => {
        try {
          const s = await RooStorageDetector.analyzeConversation(entry.taskId, entry.taskPath, true)
          return s && (workspacePath === undefined || s.metadata.workspace === workspacePath) ? s : null
        } catch (err) {
          console.warn(`[buildHierarchicalSkeletonsLegacy] ⚠️ task ${entry.taskId}:`, err)
          return null
        }
      },
      20,
    )
    const conversations = skeletons.filter((s) => s !== null)
    const indexModule = await deps.index()
    const index = exportOf(indexModule, 'globalTaskInstructionIndex')
    let resolved = 0
    for (const orphan of conversations.filter((c) => !c.parentTaskId)) {
      if (!orphan.truncatedInstruction) continue
      const matches = index.searchExactPrefix(orphan.truncatedInstruction)
      if (matches && matches.length === 1) {
        const candidate = matches[0]
        if (candidate.taskId !== orphan.taskId && conversations.find((c) => c.taskId === candidate.taskId)) {
          orphan.parentTaskId = candidate.taskId
          resolved++
        }
      }
    }
    const stats = index.getStats()
    console.log(
      `[buildHierarchicalSkeletonsLegacy] ${conversations.length} skeletons, ${resolved} parents resolved by exact prefix; index: ${stats.totalInstructions} instructions, ${stats.totalNodes} nodes`,
    )
    return conversations
  }

  /** Fills the instruction index from the `.skeleton` files already in the stores. */
  static async rebuildIndexFromExistingSkeletons() {
    const skeletonPaths = []
    for (const location of await RooStorageDetector.detectStorageLocations()) {
      const tasksPath = pth().join(location, 'tasks')
      try {
        for (const entry of await fsp().readdir(tasksPath, { withFileTypes: true })) {
          if (!entry.isDirectory()) continue
          const p = pth().join(tasksPath, entry.name, '.skeleton')
          if (fss().existsSync(p)) skeletonPaths.push(p)
        }
      } catch (err) {
        console.warn(`[rebuildIndexFromExistingSkeletons] ⚠️ cannot scan ${tasksPath}:`, err)
      }
    }
    const found = await RooStorageDetector.processBatch(
      skeletonPaths,
      async (p) => {
        try {
          const s = JSON.parse(stripBom(await fsp().readFile(p, 'utf-8')))
          return s.childTaskInstructionPrefixes && s.childTaskInstructionPrefixes.length > 0 ? { taskId: s.taskId, prefixes: s.childTaskInstructionPrefixes } : null
        } catch {
          return null
        }
      },
      30,
    )
    const byTask = new Map()
    for (const f of found) if (f) byTask.set(f.taskId, f.prefixes)
    exportOf(await deps.index(), 'globalTaskInstructionIndex').rebuildFromSkeletons(byTask)
  }

  static async getAllConversationsInWorkspace(workspacePath, maxTasks = 100) {
    return RooStorageDetector.buildHierarchicalSkeletons(workspacePath, maxTasks < 1000)
  }
}

RooStorageDetector.MAX_CONVERSATION_FILE_SIZE = 10 * 1024 * 1024
RooStorageDetector.ROO_EXTENSION_PATTERNS = ['**/saoudrizwan.claude-dev-*', '**/claude-dev*', '**/roo*', '**/cline*', '**/zoo-code*', '**/zoocodeorgan*']
rememberStatics(RooStorageDetector)
registerDetector(RooStorageDetector)

module.exports = { RooStorageDetector, RooStorageError, detectSourceFromPath }
