'use strict'
// The sub-task instructions of one task, as compat/utils/hierarchy-reconstruction-engine.js extracts
// them in its phase 1 (the engine's own extractor, not the message extraction coordinator's): from
// `<metadata.dataSource>/ui_messages.json`, read through the `fs` and `path` modules of compat/io.js
// looked up at call time (so spies and mocks of `fs` reach it). Each `newTask` tool ask, `[new_task in …]` request text,
// `<new_task>` or other mode/message XML block, `<task>` block and French delegation sentence gives
// one instruction; with none, the XML and `<task>` blocks of all messages joined.

const io = require('../io.js')

const NEW_TASK_XML = /<\s*new_task\b[\s\S]*?<\/\s*new_task\s*>/gi
const MODE_TAG = /<\s*mode\s*>([\s\S]*?)<\/\s*mode\s*>/i
const MESSAGE_TAG = /<\s*message\s*>([\s\S]*?)<\/\s*message\s*>/i
const GENERIC_BLOCK_SRC =
  '<\\s*([a-z_][\\w\\-]*)\\b[^>]*>[\\s\\S]*?<\\s*mode\\s*>([\\s\\S]*?)<\\/\\s*mode\\s*>[\\s\\S]*?<\\s*message\\s*>([\\s\\S]*?)<\\/\\s*message\\s*>[\\s\\S]*?<\\/\\s*\\1\\s*>'
const TASK_TAG_SRC = '<\\s*task\\s*>([\\s\\S]*?)<\\/\\s*task\\s*>'
const DELEGATION = /je (?:te passe|délègue|confie|transfère).*?(?:en|au) mode?\s+(\w+)/i
const API_NEW_TASK_SRC = '\\[new_task in ([^:]+):\\s*[\'"](.+?)[\'"]\\]'

// What each block pattern cannot match without (a linear test first: the generic block pattern
// scans to the end of the text from every tag when no `<mode>` follows, so a long message full of
// tags would cost its length times its tags).
const HAS_NEW_TASK = /<\s*new_task\b/i
const HAS_MODE_AND_MESSAGE = [/<\s*mode\s*>/i, /<\s*message\s*>/i]
const HAS_TASK_TAG = /<\s*task\s*>/i

// `engine` supplies `extractModeFromRooMode` and `normalizeEscaping` (its own members, so that a
// test replacing them is seen here).
function extractSubtaskInstructions(engine, skeleton) {
  const out = []
  const fs = io.mod('fs')
  const file = io.mod('path').join(skeleton.metadata.dataSource || '', 'ui_messages.json')
  if (!fs.existsSync(file)) return out
  const data = JSON.parse(fs.readFileSync(file, 'utf-8'))
  const messages = Array.isArray(data) ? data : Array.isArray(data && data.messages) ? data.messages : []
  const push = (message, entry, realTs) => {
    // `realTs`: the record's own `ts` (epoch ms), kept apart for the fixed mode's time checks.
    if (typeof realTs === 'number' && Number.isFinite(realTs)) {
      Object.defineProperty(entry, 'realTs', { value: realTs, enumerable: false })
    }
    out.push(entry)
  }
  for (const message of messages) {
    if (message.type === 'ask' && message.ask === 'tool') {
      try {
        let tool = null
        if (typeof message.text === 'object' && message.text) tool = message.text
        else if (typeof message.text === 'string') {
          try {
            tool = JSON.parse(message.text)
          } catch {
            tool = null
          }
        } else if (typeof message.content === 'object' && message.content) tool = message.content
        else if (typeof message.content === 'string') {
          try {
            tool = JSON.parse(message.content)
          } catch {
            tool = null
          }
        }
        if (tool && tool.tool === 'newTask' && tool.content) {
          const body = String(tool.content)
          push(
            message,
            {
              timestamp: message.ts || Date.now(),
              mode: engine.extractModeFromRooMode(String(tool.mode || 'task')),
              message: body.substring(0, 200),
              taskId: tool.taskId,
            },
            message.ts,
          )
        }
      } catch {
        // a record that cannot be read as a tool call is not one
      }
    }
    if (message.type === 'say' && message.say === 'api_req_started' && typeof message.text === 'string') {
      try {
        const api = JSON.parse(message.text)
        if (api && typeof api.request === 'string') {
          const re = new RegExp(API_NEW_TASK_SRC, 'gs')
          let m
          while ((m = re.exec(api.request)) !== null) {
            const modeMatch = m[1].trim().match(/([A-Za-z]+)\s*mode/i)
            const body = m[2].trim()
            if (body.length > 10) {
              push(
                message,
                {
                  timestamp: message.ts || message.timestamp || Date.now(),
                  mode: modeMatch ? modeMatch[1].trim().toLowerCase() : 'task',
                  message: engine.normalizeEscaping(body),
                },
                message.ts,
              )
            }
          }
        }
      } catch {
        // not a JSON request record
      }
    }
    const content = message.text || message.content
    if (content) {
      const blocks = typeof content === 'string' && HAS_NEW_TASK.test(content) ? content.match(NEW_TASK_XML) : null
      for (const block of blocks || []) {
        const mm = block.match(MODE_TAG)
        const msg = block.match(MESSAGE_TAG)
        if (mm && msg) {
          const body = String(msg[1] || '').trim()
          if (body.length > 5) {
            push(
              message,
              {
                timestamp: message.ts || message.timestamp || Date.now(),
                mode: String(mm[1] || '').trim().toLowerCase() || 'task',
                message: engine.normalizeEscaping(body).substring(0, 200),
              },
              message.ts,
            )
          }
        }
      }
      const generic =
        typeof content === 'string' && HAS_MODE_AND_MESSAGE.every((re) => re.test(content))
          ? content.match(new RegExp(GENERIC_BLOCK_SRC, 'gi'))
          : null
      for (const block of generic || []) {
        const m = block.match(new RegExp(GENERIC_BLOCK_SRC, 'i'))
        if (!m || String(m[1] || '').trim().toLowerCase() === 'new_task') continue
        const body = String(m[3] || '').trim()
        if (body.length > 5) {
          push(
            message,
            {
              timestamp: message.ts || message.timestamp || Date.now(),
              mode: String(m[2] || '').trim().toLowerCase() || 'task',
              message: body.substring(0, 200),
            },
            message.ts,
          )
        }
      }
      const tasks = typeof content === 'string' && HAS_TASK_TAG.test(content) ? content.match(new RegExp(TASK_TAG_SRC, 'gi')) : null
      for (const t of tasks || []) {
        const m = t.match(new RegExp(TASK_TAG_SRC, 'i'))
        const body = m && m[1] ? m[1].trim() : undefined
        if (body && body.length > 5) {
          push(
            message,
            { timestamp: message.ts || message.timestamp || Date.now(), mode: 'task', message: body.substring(0, 200) },
            message.ts,
          )
        }
      }
      if (message.type === 'say' || message.role === 'assistant') {
        const d = typeof content === 'string' ? content.match(DELEGATION) : null
        if (d) {
          push(
            message,
            { timestamp: message.ts || Date.now(), mode: d[1].toLowerCase(), message: content.substring(0, 200) },
            message.ts,
          )
        }
      }
    }
  }
  if (out.length === 0 && messages.length > 0) {
    const all = messages
      .map((m) => (typeof m?.text === 'string' ? m.text : typeof m?.content === 'string' ? m.content : ''))
      .join('\n')
    for (const block of all.match(NEW_TASK_XML) || []) {
      const mm = block.match(MODE_TAG)
      const msg = block.match(MESSAGE_TAG)
      const body = String(msg?.[1] || '').trim()
      if (body.length > 5) {
        out.push({
          timestamp: Date.now(),
          mode: String(mm?.[1] || '').trim().toLowerCase() || 'task',
          message: body.substring(0, 200),
        })
      }
    }
    for (const b of all.match(new RegExp(TASK_TAG_SRC, 'gi')) || []) {
      const m = b.match(new RegExp(TASK_TAG_SRC, 'i'))
      const body = m?.[1]?.trim()
      if (body && body.length > 5) out.push({ timestamp: Date.now(), mode: 'task', message: body.substring(0, 200) })
    }
  }
  return out
}

module.exports = { extractSubtaskInstructions }
