'use strict'
/**
 * `UIMessagesDeserializer` of roo-state-core/compat: reads `ui_messages.json` (through Node's
 * `fs/promises`, looked up at call time) and answers typed questions about a message array.
 * `legacy` mode reads the file as the legacy class did (a BOM-prefixed file gives `[]`); `fixed` mode
 * also reads BOM-prefixed and UTF-16 files. Inventory: docs/compat.md §3.
 */
const { currentMode } = require('../services/compat-mode.js')

const io = require('../io.js')

const fsp = () => io.mod('fs/promises')

/** Text of a file's bytes in fixed mode: UTF-16 by its BOM, else UTF-8 without BOM. */
function decodeTolerant(bytes) {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(String(bytes), 'utf8')
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) return new TextDecoder('utf-16le').decode(b.subarray(2))
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return new TextDecoder('utf-16be').decode(b.subarray(2))
  const text = b.toString('utf8')
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

class UIMessagesDeserializer {
  /** `JSON.parse` or `defaultValue` (falsy input, or a parse error, which is logged). */
  safeJsonParse(jsonString, defaultValue) {
    if (!jsonString) return defaultValue
    try {
      return JSON.parse(jsonString)
    } catch (err) {
      console.error(`[UIMessagesDeserializer] invalid JSON: ${err?.message ?? err}`)
      return defaultValue
    }
  }

  /** The messages of a file: `[]` when it is missing, unreadable, invalid or not an array. */
  async readTaskMessages(uiMessagesPath) {
    try {
      try {
        await fsp().access(uiMessagesPath)
      } catch {
        return []
      }
      const fixed = currentMode() === 'fixed'
      const raw = await fsp().readFile(uiMessagesPath, fixed ? undefined : 'utf8')
      const text = fixed ? decodeTolerant(raw) : String(raw)
      const parsed = JSON.parse(text)
      return Array.isArray(parsed) ? parsed : []
    } catch (err) {
      console.error(`[UIMessagesDeserializer] cannot read ${uiMessagesPath}: ${err?.message ?? err}`)
      return []
    }
  }

  /** `ask:"tool"` records whose text names a tool: `{tool, mode, message, timestamp}`. */
  extractToolCalls(messages) {
    const out = []
    for (const m of messages ?? []) {
      if (m?.ask !== 'tool' || !m.text) continue
      const data = this.safeJsonParse(m.text)
      if (data?.tool) out.push({ tool: data.tool, mode: data.mode, message: data.message || data.content, timestamp: m.ts })
    }
    return out
  }

  /** The parsed payloads of `say:"api_req_started"` records (an unparsable one stays as `undefined`). */
  extractApiRequests(messages) {
    return (messages ?? [])
      .filter((m) => m?.say === 'api_req_started' && m.text)
      .map((m) => this.safeJsonParse(m.text))
      .filter((item) => item !== null)
  }

  /** `newTask` / `new_task` tool calls with a mode and a message. */
  extractNewTasks(messages) {
    return this.extractToolCalls(messages)
      .filter((t) => (t.tool === 'new_task' || t.tool === 'newTask') && t.mode && t.message)
      .map((t) => ({ mode: t.mode, message: t.message, timestamp: t.timestamp }))
  }

  /** `type:"ask"` records without an `ask` kind. */
  extractUserMessages(messages) {
    return (messages ?? []).filter((m) => m?.type === 'ask' && !m.ask)
  }

  extractErrors(messages) {
    return (messages ?? []).filter((m) => m?.say === 'error')
  }

  getInitialInstruction(messages) {
    const users = this.extractUserMessages(messages)
    return users.length > 0 ? users[0].text : undefined
  }

  getMessageStats(messages) {
    const list = messages ?? []
    return {
      total: list.length,
      askMessages: list.filter((m) => m?.type === 'ask').length,
      sayMessages: list.filter((m) => m?.type === 'say').length,
      toolCalls: this.extractToolCalls(list).length,
      apiRequests: this.extractApiRequests(list).length,
      newTasks: this.extractNewTasks(list).length,
      errors: this.extractErrors(list).length,
    }
  }
}

module.exports = { UIMessagesDeserializer }
