'use strict'
// The sub-task instructions of one task, as compat/utils/hierarchy-reconstruction-engine.js extracts
// them in its phase 1 (the engine's own extractor, not the message extraction coordinator's): from
// `<metadata.dataSource>/ui_messages.json`, read through the `fs` and `path` modules of compat/io.js
// looked up at call time (so spies and mocks of `fs` reach it). Each `newTask` tool ask, `[new_task in …]` request text,
// `<new_task>` or other mode/message XML block, `<task>` block and French delegation sentence gives
// one instruction; with none, the XML and `<task>` blocks of all messages joined.

const binding = require('../../index.js')
const io = require('../io.js')

const CUT = 200

// `engine` supplies `extractModeFromRooMode` and `normalizeEscaping` (its own members, so that a
// test replacing them is seen here). The records are read by the core
// (`compatEngineCandidates`: which record gives what, in the engine's order); what stays here is
// the file, read through the caller's `fs`, and the engine's own steps.
function extractSubtaskInstructions(engine, skeleton) {
  const fs = io.mod('fs')
  const file = io.mod('path').join(skeleton.metadata.dataSource || '', 'ui_messages.json')
  if (!fs.existsSync(file)) return []
  const text = fs.readFileSync(file, 'utf-8')
  let candidates
  try {
    candidates = binding.compatEngineCandidates(String(text))
  } catch (err) {
    // Where the legacy extractor threw, it throws the same error.
    if (err?.details?.reason === 'not_json') JSON.parse(text)
    if (err?.details?.reason === 'null_record') throw new TypeError("Cannot read properties of null (reading 'type')")
    throw err
  }
  return candidates.map((c) => {
    let message = c.kind === 'api' || c.kind === 'xml' ? engine.normalizeEscaping(c.message) : c.message
    if (c.kind !== 'api') message = message.substring(0, CUT)
    const entry = {
      timestamp: c.timestamp === null ? Date.now() : c.timestamp,
      mode: c.kind === 'tool' ? engine.extractModeFromRooMode(c.mode) : c.mode,
      message,
    }
    if (c.kind === 'tool') entry.taskId = c.taskId
    // `realTs`: the record's own `ts` (epoch ms), kept apart for the fixed mode's time checks.
    if (typeof c.realTs === 'number' && Number.isFinite(c.realTs)) {
      Object.defineProperty(entry, 'realTs', { value: c.realTs, enumerable: false })
    }
    return entry
  })
}

module.exports = { extractSubtaskInstructions }
