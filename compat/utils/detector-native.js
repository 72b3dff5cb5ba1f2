'use strict'
/**
 * The native path of compat's `RooStorageDetector.analyzeConversation`: when nothing observes the
 * work (no replaced fs function, no patched static, the caller's index and coordinator being
 * compat's own), a task is read and analysed natively, the legacy builder in `legacy` mode, the
 * engine's skeleton in `fixed` mode, through the read-ahead of compat/utils/read-ahead.js when it
 * serves the call.
 */
const binding = require('../../index.js')
const io = require('../io.js')
const nodePath = require('path')
const { exportOf } = require('./caller-modules.js')
const fallbacks = require('./detector-fallbacks.js')
const { own, deps } = require('./detector-deps.js')
const { detectSourceFromPath } = require('./detector-files.js')

const { stripBom } = fallbacks
const pth = () => io.mod('path')

/** The class, looked up at call time (detector-class.js). */
const { detectorClass: detector } = require('./detector-class.js')


/** The statics whose replacement means a caller watches the composition (then no native path). */
const OBSERVED_STATICS = [
  'analyzeWithOldSystem',
  'analyzeWithNewSystem',
  'analyzeWithComparison',
  'buildSequenceFromFiles',
  'extractNewTaskInstructionsFromUI',
  'extractMainInstructionFromUI',
  'extractFromMessageFile',
  'loadUIMessages',
]
const originals = {}

/**
 * Whether `analyzeConversation` may read and analyse the task natively with the same result: the
 * files are read unobserved, no static of the composition is replaced, the parse is the default one,
 * and the caller's instruction index and extraction coordinator are compat's own.
 */
async function nativeEligible() {
  if (!readsUnobserved() || pth().join !== nodePath.join) return false
  if (detector()._coordinatorOverride) return false
  for (const name of OBSERVED_STATICS) if (detector()[name] !== originals[name]) return false
  const parsing = await deps.parsing()
  if (parsing !== fallbacks.parsingConfig) {
    try {
      if (parsing.isComparisonMode() || parsing.shouldUseNewParsing()) return false
    } catch {
      return false
    }
  } else if (parsing.shouldUseNewParsing()) {
    return false
  }
  const index = await deps.index()
  const ownIndex = own.index()
  if (exportOf(index, 'computeInstructionPrefix') !== ownIndex.computeInstructionPrefix) return false
  const coordinator = exportOf(await deps.coordinator(), 'messageExtractionCoordinator')
  const ownCoordinator = own.coordinator().messageExtractionCoordinator
  return coordinator === ownCoordinator && typeof ownCoordinator?.extractFromMessages === 'function'
}

/** `io.readsAreNative()`, false where asking throws (a module mock without a `default` export throws on reading it). */
function readsUnobserved() {
  try {
    return io.readsAreNative()
  } catch {
    return false
  }
}

const readAheadModule = require('./read-ahead.js')
const readAhead = () => readAheadModule

async function nodeStat(p) {
  try {
    return await io.mod('fs/promises').stat(p)
  } catch {
    return null
  }
}

/** One task file for the native builder: size, and bytes unless too large (conversation files) or unreadable. */
async function nativeFile(p, st, capped) {
  if (!st) return undefined
  const size = Number(st.size) || 0
  if (capped && size > detector().MAX_CONVERSATION_FILE_SIZE) return { size }
  try {
    return { size, bytes: await io.mod('fs/promises').readFile(p) }
  } catch {
    return { size }
  }
}

/** A skeleton in the legacy key set from flat values (`null` reads as absent). */
function legacyKeySet(v, taskPath) {
  const metadata = {
    title: v.title ?? undefined,
    createdAt: v.createdAt,
    lastActivity: v.lastActivity,
    mode: v.mode ?? undefined,
    messageCount: v.messageCount,
    actionCount: v.actionCount,
    totalSize: v.totalSize,
    workspace: v.workspace ?? undefined,
    dataSource: taskPath,
    source: detectSourceFromPath(taskPath),
  }
  if (v.oversizedFiles?.length > 0) metadata.oversizedFiles = v.oversizedFiles
  const prefixes = v.childTaskInstructionPrefixes ?? []
  return {
    taskId: v.taskId,
    parentTaskId: v.parentTaskId ?? undefined,
    sequence: v.sequence ?? [],
    metadata,
    childTaskInstructionPrefixes: prefixes.length > 0 ? prefixes : undefined,
    isCompleted: v.isCompleted,
    truncatedInstruction: v.truncatedInstruction ?? undefined,
  }
}

/** The skeleton of the native legacy analysis (dates from the files, else the folder's). */
function skeletonOfAnalysis(analysis, taskPath, useProductionHierarchy, dirStats) {
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
  const childTaskInstructionPrefixes = useProductionHierarchy ? analysis.childTaskInstructionPrefixes : []
  return legacyKeySet({ ...analysis, createdAt, lastActivity, childTaskInstructionPrefixes }, taskPath)
}

/** Legacy mode, natively: the legacy builder over the task's bytes; `null` where it skips the task. */
async function analyzeNativeLegacy(taskId, taskPath, useProductionHierarchy, paths) {
  try {
    const served = await readAhead()?.legacyFolder(taskId, taskPath)
    if (served !== undefined) return served.analysis ? skeletonOfAnalysis(served.analysis, taskPath, useProductionHierarchy, served.dirStats) : null
    const [dirStats, metaSt, apiSt, uiSt, histSt] = await Promise.all(
      [taskPath, paths.metadataPath, paths.apiHistoryPath, paths.uiMessagesPath, paths.historyItemPath].map(nodeStat),
    )
    if (!metaSt && !apiSt && !uiSt) return null
    const [metadata, apiHistory, uiMessages, historyItem] = await Promise.all([
      nativeFile(paths.metadataPath, metaSt, false),
      nativeFile(paths.apiHistoryPath, apiSt, true),
      nativeFile(paths.uiMessagesPath, uiSt, true),
      nativeFile(paths.historyItemPath, histSt, false),
    ])
    const analysis = await binding.compatAnalyzeLegacyFiles(String(taskId), { metadata, apiHistory, uiMessages, historyItem })
    if (!analysis) return null
    return skeletonOfAnalysis(analysis, taskPath, useProductionHierarchy, dirStats)
  } catch (err) {
    console.error(`[analyzeConversation] ${taskId}: ${err?.message ?? err}`)
    return null
  }
}

/** The engine's skeleton reduced to the legacy key set (no engine-only fields). */
function skeletonOfEngine(s, taskPath, parentTaskId) {
  return legacyKeySet({ ...s, ...s.metadata, oversizedFiles: undefined, parentTaskId: parentTaskId ?? s.parentTaskId }, taskPath)
}

function parseJsonText(text) {
  if (text === undefined || text === null) return undefined
  try {
    return JSON.parse(stripBom(String(text)))
  } catch {
    return undefined
  }
}

/** Fixed mode, natively: the engine's skeleton; parents in the legacy priority (metadata, then history item). */
async function analyzeNativeFixed(taskId, taskPath, paths) {
  const ahead = readAhead()
  const early = ahead ? await ahead.fixedFolder(taskId, taskPath) : undefined
  if (early !== undefined) return early.skeleton && skeletonOfEngine(early.skeleton, taskPath, early.parentTaskId ?? undefined)
  const dir = await nodeStat(taskPath)
  if (!dir || !dir.isDirectory()) return null
  const present = await Promise.all([paths.metadataPath, paths.apiHistoryPath, paths.uiMessagesPath].map(nodeStat))
  if (present.every((st) => !st)) return null
  const read = (p) => io.mod('fs/promises').readFile(p, 'utf8').catch(() => undefined)
  const [metaText, histText] = await Promise.all([read(paths.metadataPath), read(paths.historyItemPath)])
  let s
  try {
    s = await binding.analyzeConversation(String(taskId), taskPath, { includeSequence: true })
  } catch (err) {
    if (err?.code === 'TASK_NOT_FOUND' || err?.code === 'INVALID_PATH') return null
    throw err
  }
  const meta = parseJsonText(metaText)
  const hist = parseJsonText(histText)
  const parent = meta?.parentTaskId || meta?.parent_task_id || hist?.parentTaskId
  return skeletonOfEngine(s, taskPath, parent ? String(parent) : undefined)
}

/** What the legacy analysis does with a finished skeleton: index its child prefixes, cache it. */
async function recordSkeleton(skeleton, useProductionHierarchy) {
  const prefixes = skeleton.childTaskInstructionPrefixes ?? []
  if (useProductionHierarchy && prefixes.length > 0) {
    const index = exportOf(await deps.index(), 'globalTaskInstructionIndex')
    for (const prefix of prefixes) index.addInstruction(skeleton.taskId, prefix)
    console.log(`[analyzeConversation] ✅ Extracted ${prefixes.length} instruction prefixes for ${String(skeleton.taskId).substring(0, 8)}`)
  }
  await (await deps.cache()).set(`conversation-skeleton:${skeleton.taskId}`, skeleton)
  return skeleton
}

/** Keeps the class's own statics, so that a replaced one is seen (called once the class exists). */
function rememberStatics(cls) {
  for (const name of OBSERVED_STATICS) originals[name] = cls[name]
}

module.exports = {
  nativeEligible,
  readsUnobserved,
  analyzeNativeLegacy,
  analyzeNativeFixed,
  recordSkeleton,
  skeletonOfAnalysis,
  skeletonOfEngine,
  legacyKeySet,
  parseJsonText,
  nodeStat,
  nativeFile,
  rememberStatics,
}
