'use strict'
/**
 * How compat's `RooStorageDetector` reads task files when it reads them in JavaScript (the
 * composition a caller observes): JSON Lines and loose items, conversation texts, sequence items,
 * the messages the extraction chain reads, a folder's files, a conversation summary.
 */
const io = require('../io.js')
const fallbacks = require('./detector-fallbacks.js')

const { stripBom } = fallbacks
const SEQUENCE_TEXT_MAX = 400
const fsp = () => io.mod('fs/promises')
const fss = () => io.mod('fs')
const pth = () => io.mod('path')

/** The class, looked up at call time (detector-class.js). */
const { detectorClass: detector } = require('./detector-class.js')


/** The JSON values of a text's non-blank lines, and how many lines were not JSON. */
function jsonLines(text) {
  const items = []
  let skipped = 0
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    try {
      items.push(JSON.parse(line))
    } catch {
      skipped++
    }
  }
  return { items, skipped }
}

/**
 * The items of a message file's text: a JSON array, else a bracket-less list, else JSON Lines
 * (`lines` set, with the count of lines that were not JSON). For the sequence (`sequence` true) an
 * object's `messages` count as its items, an empty parse moves on to the next shape and a trailing
 * comma is dropped before the list is tried, as the legacy sequence reader did.
 */
function looseItems(text, sequence) {
  try {
    const data = JSON.parse(text)
    const items = Array.isArray(data) ? data : sequence ? data?.messages || [] : []
    if (!sequence || items.length > 0) return { items }
  } catch {
    // not one JSON value: the other shapes follow
  }
  let listed = text.trim()
  if (sequence && listed.endsWith(',')) listed = listed.slice(0, -1)
  if (!listed.startsWith('[') && !listed.endsWith(']')) listed = `[${listed}]`
  try {
    const data = JSON.parse(listed)
    return { items: Array.isArray(data) ? data : [] }
  } catch {
    // JSON Lines last
  }
  return { ...jsonLines(text), lines: true }
}

/** Text of a file as the legacy reads it for the sequence: `[]`-worthy (undefined) when absent or oversized. */
async function conversationText(filePath, preloaded) {
  if (preloaded !== undefined) return preloaded
  if (!fss().existsSync(filePath)) return undefined
  const st = await fsp().stat(filePath)
  if (st.size > detector().MAX_CONVERSATION_FILE_SIZE) return undefined
  return stripBom(await fsp().readFile(filePath, 'utf-8'))
}

/** One sequence item of an API or UI record, or `undefined` for records that are neither. */
function sequenceItem(item) {
  const timestamp = item.timestamp || new Date(0).toISOString()
  const role = item.role || (item.type === 'ask' ? 'user' : 'assistant')
  const type = item.type
  if (role === 'user' || role === 'assistant' || type === 'say') {
    let content = item.content ?? item.text ?? ''
    if (Array.isArray(content)) {
      const texts = content.filter((c) => c.type === 'text' && c.text).map((c) => c.text)
      content = texts.length > 0 ? texts.join('\n\n') : '[contenu non textuel]'
    }
    if (typeof content === 'string' && (content.includes('"sequence"') || content.includes('"taskId"'))) {
      content = '[Contenu suspect ignoré pour éviter une boucle]'
    } else if (typeof content !== 'string') {
      content = JSON.stringify(content)
    }
    let isTruncated = false
    if (content.length > SEQUENCE_TEXT_MAX) {
      const half = SEQUENCE_TEXT_MAX / 2
      content = `${content.substring(0, half)}...${content.substring(content.length - half)}`
      isTruncated = true
    }
    return { role, content, isTruncated, timestamp }
  }
  if (type === 'tool' || type === 'command' || type === 'tool_use' || type === 'tool_result') {
    const input = item.toolInput || item.parameters || {}
    const result = item.toolResult || {}
    const action = {
      type: type === 'tool_use' || type === 'tool_result' ? 'tool' : type,
      name: item.tool || item.name || 'unknown_action',
      status: item.isError ? 'failure' : item.toolResult ? 'success' : 'in_progress',
      parameters: input,
      timestamp,
    }
    if (input.path) action.file_path = input.path
    if (result.line_count) action.line_count = result.line_count
    else if (input.content) action.line_count = String(input.content).split('\n').length
    if (result.content_size) action.content_size = result.content_size
    else if (item.toolResult) action.content_size = JSON.stringify(item.toolResult).length
    else if (input.content) action.content_size = String(input.content).length
    return action
  }
  return undefined
}

/** The messages of a UI file text for the extraction chain; `undefined` when no shape reads. */
function messagesForExtraction(text, filePath) {
  const { items, skipped, lines } = looseItems(text, false)
  if (!lines) return items
  if (skipped > 0) console.warn(`[extractFromMessageFile] ⚠️ ${skipped} invalid JSONL lines skipped in ${pth().basename(filePath)}`)
  if (items.length > 0) return items
  console.warn(`[extractFromMessageFile] ⚠️ no JSON array, list or JSON Lines in ${filePath}`)
  return undefined
}

/** The legacy normalisation of two workspace paths before the `includes` filter. */
function workspaceKey(p) {
  const path = pth()
  let key = path.normalize(p || '').replace(/\//g, '\\').toLowerCase()
  if (key.startsWith('.\\') && path.isAbsolute(p || '')) key = key.substring(2)
  return key
}

/** Sizes of a task folder's files and the latest mtime among them (unreadable entries skipped). */
async function folderFiles(taskPath) {
  let size = 0
  let mtime = null
  try {
    for (const file of await fsp().readdir(taskPath)) {
      try {
        const st = await fsp().stat(pth().join(taskPath, file))
        if (st.isFile()) size += st.size
        if (!mtime || st.mtime > mtime) mtime = st.mtime
      } catch {
        // an unreadable file is left out
      }
    }
  } catch {
    // an unreadable folder counts as empty
  }
  return { size, mtime }
}

/** The legacy summary of a skeleton (`ConversationSummary`); `workspace` where the legacy kept it. */
function summaryOf(skeleton, taskPath, withWorkspace) {
  const m = skeleton.metadata
  const metadata = { title: m.title, prompt: { task: '' } }
  if (withWorkspace) metadata.workspace = m.workspace
  return {
    taskId: skeleton.taskId,
    path: taskPath,
    metadata,
    messageCount: m.messageCount,
    lastActivity: m.lastActivity,
    hasApiHistory: m.totalSize > 0,
    hasUiMessages: m.totalSize > 0,
    size: m.totalSize,
    prompt: skeleton.metadata?.title || 'No prompt',
  }
}

function errorText(err) {
  return err instanceof Error ? err.message : String(err)
}

/** `'zoo-code'`, `'claude-code'` or `'roo'` from a task or storage path. */
function detectSourceFromPath(p) {
  if (!p) return 'roo'
  const n = String(p).replace(/\\/g, '/').toLowerCase()
  if (n.includes('zoocodeorganization.zoo-code')) return 'zoo-code'
  if (n.includes('.claude/projects') || n.startsWith('claude-')) return 'claude-code'
  return 'roo'
}

module.exports = { jsonLines, looseItems, conversationText, sequenceItem, messagesForExtraction, workspaceKey, folderFiles, summaryOf, errorText, detectSourceFromPath }
