'use strict'
/**
 * `RooStorageDetector.analyzeWithOldSystem` of compat: the legacy composition in JavaScript (metadata,
 * history item, child instructions, sequence, dates, workspace), through the class's replaceable
 * statics and the caller's modules, for calls a caller observes (a mocked fs, a patched static). The
 * unobserved path is native (compat/utils/detector-native.js) and gives the same skeletons.
 */
const io = require('../io.js')
const { exportOf } = require('./caller-modules.js')
const fallbacks = require('./detector-fallbacks.js')
const { deps } = require('./detector-deps.js')
const { detectSourceFromPath } = require('./detector-files.js')

const { stripBom } = fallbacks
const fsp = () => io.mod('fs/promises')
const PREFIX_K = 192

/** The legacy composition for one task; `RooStorageDetector` is the class (its statics at call time). */
async function analyzeWithOldSystem(RooStorageDetector, taskId, taskPath, useProductionHierarchy, paths) {
  const { metadataPath, apiHistoryPath, uiMessagesPath, historyItemPath } = paths
  try {
    const fs = fsp()
    const [dirSt, metaSt, apiSt, uiSt, histSt] = await Promise.all(
      [taskPath, metadataPath, apiHistoryPath, uiMessagesPath, historyItemPath].map((p) => fs.stat(p).catch(() => null)),
    )
    if (!apiSt && !uiSt && !metaSt) {
      console.warn(`⚠️ [analyzeConversation] Skipping ${taskId}: no task file found`)
      return null
    }
    const metadataText = stripBom(metaSt ? await fs.readFile(metadataPath, 'utf-8') : '{}')
    let meta
    try {
      meta = JSON.parse(metadataText)
    } catch (err) {
      console.error(`[analyzeConversation] unreadable task_metadata.json for ${taskId}:`, err)
      meta = {}
    }
    let history = {}
    if (histSt) {
      try {
        const parsed = JSON.parse(stripBom(await fs.readFile(historyItemPath, 'utf-8')))
        history = { parentTaskId: parsed.parentTaskId, childIds: Array.isArray(parsed.childIds) ? parsed.childIds : undefined }
      } catch (err) {
        console.warn(`[analyzeConversation] unreadable history_item.json for ${taskId}:`, err)
      }
    }
    const oversizedFiles = []
    const preload = async (st, p, name) => {
      if (!st) return undefined
      if (st.size > RooStorageDetector.MAX_CONVERSATION_FILE_SIZE) {
        const mb = (st.size / 1024 / 1024).toFixed(1)
        console.warn(`⚠️ [analyzeConversation] ${taskId}: ${name} too large (${mb}MB > 10MB), not read`)
        oversizedFiles.push(`${name} (${mb}MB)`)
        return undefined
      }
      try {
        return stripBom(await fs.readFile(p, 'utf-8'))
      } catch {
        return undefined
      }
    }
    const uiText = await preload(uiSt, uiMessagesPath, 'ui_messages.json')
    const apiText = await preload(apiSt, apiHistoryPath, 'api_conversation_history.json')

    const parentTaskId = meta.parentTaskId || meta.parent_task_id || history.parentTaskId
    const index = await deps.index()
    const computePrefix = exportOf(index, 'computeInstructionPrefix')
    let prefixes = []
    if (useProductionHierarchy) {
      if (uiSt) {
        const instructions = await RooStorageDetector.extractNewTaskInstructionsFromUI(uiMessagesPath, 0, uiText)
        prefixes = [...new Set(instructions.map((i) => computePrefix(i.message, PREFIX_K)).filter((p) => p.length > 10))]
        if (prefixes.length > 0) {
          console.log(`[analyzeConversation] ✅ Extracted ${prefixes.length} instruction prefixes for ${taskId.substring(0, 8)}`)
        }
      }
    } else {
      console.log(`[analyzeConversation] useProductionHierarchy=false for ${taskId}: no parent inference`)
    }

    const sequence = await RooStorageDetector.buildSequenceFromFiles(apiHistoryPath, uiMessagesPath, apiText, uiText)
    const messageCount = sequence.filter((s) => 'role' in s).length
    const actionCount = sequence.length - messageCount
    const totalSize = (metaSt?.size || 0) + (apiSt?.size || 0) + (uiSt?.size || 0)
    const assistant = sequence.filter((s) => 'role' in s && s.role === 'assistant')
    const isCompleted = assistant.length > 0 && assistant[assistant.length - 1].content.toLowerCase().includes('attempt_completion')

    let truncatedInstruction
    if (uiSt) {
      const main = await RooStorageDetector.extractMainInstructionFromUI(uiMessagesPath, uiText)
      if (main) {
        truncatedInstruction = computePrefix(main, PREFIX_K)
        if (process.env.ROO_DEBUG_INSTRUCTIONS === '1') {
          console.log(`[analyzeConversation] main instruction of ${taskId}: "${truncatedInstruction}"`)
        }
      }
    }

    const dates = []
    let workspace
    if (apiSt && apiText) {
      try {
        const data = JSON.parse(apiText)
        const messages = Array.isArray(data) ? data : data?.messages || []
        const found = apiText.match(/Current Workspace Directory \(([^)]+)\)/)
        if (found && found[1]) workspace = found[1].trim()
        for (const m of messages) if (m.ts && typeof m.ts === 'number') dates.push(new Date(m.ts))
      } catch (err) {
        console.error(`[analyzeConversation] cannot read the dates of ${apiHistoryPath}:`, err)
      }
    }
    if (metaSt && meta.files_in_context) {
      try {
        for (const f of meta.files_in_context) {
          for (const key of ['roo_read_date', 'roo_edit_date', 'user_edit_date']) if (f[key]) dates.push(new Date(f[key]))
        }
      } catch (err) {
        console.error('[analyzeConversation] cannot read the dates of task_metadata.json:', err)
      }
    }
    let createdAt
    let lastActivity
    if (dates.length > 0) {
      dates.sort((a, b) => a.getTime() - b.getTime())
      createdAt = dates[0]
      lastActivity = dates[dates.length - 1]
    } else if (dirSt) {
      lastActivity = dirSt.mtime
      createdAt = dirSt.birthtime
    } else {
      lastActivity = createdAt = new Date()
    }

    const skeleton = {
      taskId,
      parentTaskId,
      sequence,
      metadata: {
        title: meta.title,
        createdAt: createdAt.toISOString(),
        lastActivity: lastActivity.toISOString(),
        mode: meta.mode,
        messageCount,
        actionCount,
        totalSize,
        workspace: workspace || meta.workspace,
        dataSource: taskPath,
        source: detectSourceFromPath(taskPath),
        ...(oversizedFiles.length > 0 ? { oversizedFiles } : {}),
      },
      childTaskInstructionPrefixes: prefixes.length > 0 ? prefixes : undefined,
      isCompleted,
      truncatedInstruction,
    }
    if (useProductionHierarchy && prefixes.length > 0) {
      const globalIndex = exportOf(index, 'globalTaskInstructionIndex')
      for (const prefix of prefixes) globalIndex.addInstruction(taskId, prefix)
    }
    await (await deps.cache()).set(`conversation-skeleton:${taskId}`, skeleton)
    return skeleton
  } catch (err) {
    if (!(err instanceof Error)) {
      console.error(`❌ [analyzeConversation] non-Error exception for ${taskId}:`, err)
      return null
    }
    if (err.message.includes('ENOENT')) {
      console.warn(`⚠️ [analyzeConversation] File not found for ${taskId}, skipping`)
      return null
    }
    if (err.message.includes('JSON')) {
      console.warn(`⚠️ [analyzeConversation] JSON parse error for ${taskId}, minimal skeleton`)
      const now = new Date().toISOString()
      return {
        taskId,
        parentTaskId: undefined,
        sequence: [],
        metadata: {
          title: `Task ${taskId} (corrupted)`,
          createdAt: now,
          lastActivity: now,
          mode: 'unknown',
          messageCount: 0,
          actionCount: 0,
          totalSize: 0,
          workspace: 'unknown',
          source: detectSourceFromPath(taskPath),
        },
      }
    }
    console.error(`❌ [analyzeConversation] Unexpected error for ${taskId}:`, { taskId, taskPath, error: { name: err.name, message: err.message, code: err.code || 'NO_CODE' } })
    return null
  }
}

module.exports = { analyzeWithOldSystem }
