'use strict'
/**
 * `messageExtractionCoordinator` of roo-state-core/compat: the legacy chain of seven new-task
 * extractors over a message array (first extractor that finds something wins for a message), run
 * natively in one call. In `fixed` mode the instructions come from the engine's typed extraction
 * instead (each subtask once, never the task's own instruction). Inventory: docs/compat.md §3.
 */
const binding = require('../../index.js')
const { currentMode } = require('../services/compat-mode.js')

const PATTERN_NAMES = [
  'API Content Extractor',
  'API Text Extractor',
  'UI Simple Task Extractor',
  'UI XML Pattern Extractor',
  'UI Ask/Tool Extractor',
  'UI Object Extractor',
  'UI Legacy Extractor',
]

/** `String(mode || 'task')` without non-word characters, trimmed, lowercased (non-ASCII letters go too). */
function cleanMode(mode) {
  return String(mode || 'task')
    .replace(/[^\w\s]/g, '')
    .trim()
    .toLowerCase()
}

/** `new Date(msg.timestamp || msg.ts || 0).getTime()`. */
function extractTimestamp(msg) {
  return new Date(msg?.timestamp || msg?.ts || 0).getTime()
}

/** A new-task instruction, or `null` when the message is not a string of at least `minLength`. */
function createInstruction(timestamp, mode, message, minLength = 20, maxLength = 200) {
  if (typeof message !== 'string' || message.trim().length < minLength) return null
  let m = message.trim()
  if (maxLength > 0 && m.length > maxLength) m = `${m.substring(0, maxLength - 3)}...`
  return { timestamp, mode: cleanMode(mode) || 'task', message: m }
}

class MessageExtractionCoordinator {
  constructor() {
    this.debug = false
  }

  setDebugEnabled(enabled) {
    this.debug = Boolean(enabled)
  }

  getAvailableExtractors() {
    return [...PATTERN_NAMES]
  }

  /** Sync: `{instructions, processedMessages, matchedPatterns, errors}`; never throws. */
  extractFromMessages(messages, options = {}) {
    const list = Array.isArray(messages) ? messages : []
    const result = { instructions: [], processedMessages: list.length, matchedPatterns: [], errors: [] }
    try {
      if (currentMode() === 'fixed') {
        result.instructions = fixedInstructions(list)
      } else {
        const found = binding.compatExtractionChain(JSON.stringify(list))
        result.instructions = found.instructions
        result.matchedPatterns = Array.from(new Set(found.matchedPatterns))
      }
    } catch (err) {
      result.errors.push(String(err?.message ?? err))
    }
    if (this.debug || options.enableDebug) {
      console.log(`[MessageExtractionCoordinator] ${result.instructions.length} instructions from ${list.length} messages`)
    }
    return result
  }

  extractFromMessage(message, options = {}) {
    return this.extractFromMessages([message], options)
  }
}

/** Fixed mode: the engine's typed extraction over UI records (each subtask once). */
function fixedInstructions(list) {
  return binding.compatExtractFixed(JSON.stringify(list)).map((t) => ({
    timestamp: t.timestamp,
    mode: t.mode,
    message: t.message,
  }))
}

const messageExtractionCoordinator = new MessageExtractionCoordinator()

module.exports = {
  MessageExtractionCoordinator,
  messageExtractionCoordinator,
  createInstruction,
  cleanMode,
  extractTimestamp,
  PATTERN_NAMES,
}
