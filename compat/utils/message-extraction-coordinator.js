'use strict'
/**
 * `messageExtractionCoordinator` of roo-state-core/compat: the legacy chain of seven new-task
 * extractors over a message array (the first extractor that accepts a message and finds something
 * wins for it), with the legacy result, errors and debug logs. In `fixed` mode the same chain with
 * its defects corrected (`fixedFindings`): each subtask once, never the task's own instruction (a
 * `<task>` block of an API request record), the mode without its trailing ` mode`.
 *
 * The chain runs natively in one call over the whole array; the coordinator walks the messages in
 * JavaScript only to see what the legacy walk would see: whether iterating throws, and which
 * extractors throw on a message (a `null` message in every `canHandle`, the API content extractor on
 * a `newTask` call without text). When the caller replaced an extractor of `coordinator.extractors`
 * (or one of its methods), or debug logging is on, the walk calls the extractors one by one, each
 * extractor of ours answering through the native chain over that one message.
 * Inventory: docs/compat.md §3.
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

function debugEnv() {
  return process.env.ROO_DEBUG_INSTRUCTIONS === '1'
}

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

const isTextual = (m) => typeof m.text === 'string' || typeof m.content === 'string' || Array.isArray(m.content)
const isDialogue = (m) => m.type === 'say' || m.role === 'user' || m.role === 'assistant'

/**
 * Which messages each extractor takes, as the legacy extractors decide it (reading `message.type`
 * first, so a `null` or `undefined` message throws a `TypeError` in every one of them).
 */
const ACCEPTS = [
  (m) => m.type === 'api_req_started' && m.content && typeof m.content === 'object' && m.content.tool === 'newTask',
  (m) => (m.type === 'api_req_started' || (m.type === 'say' && m.say === 'api_req_started')) && typeof m.text === 'string',
  (m) => isDialogue(m) && isTextual(m),
  (m) => (m.type === 'tool_result' && typeof m.content === 'string') || (isDialogue(m) && isTextual(m)),
  (m) => m.type === 'ask' && m.ask === 'tool' && typeof m.text === 'string',
  (m) => typeof m.text === 'object' || typeof m.content === 'object',
  (m) => m.type === 'tool_call' && m.content && m.content.tool === 'new_task',
]

/** The error the API content extractor throws on a `newTask` call without a text (`GenericError`). */
function invalidContentError() {
  const err = new Error('Invalid content in message')
  err.name = 'GenericError'
  err.code = 'INVALID_ARGUMENT'
  return err
}

/** Throws as the legacy extractor `i` throws once it has accepted `message`. */
function checkExtractable(i, message) {
  if (i !== 0) return
  const c = message.content.content || message.content.message
  if (!c || typeof c !== 'string') throw invalidContentError()
}

/** Whether `m` is an API request record (its text holds the request sent to the model). */
const isApiRequest = (m) => m.type === 'api_req_started' || (m.type === 'say' && m.say === 'api_req_started')

/** The instructions kept so far for each result of a `fixed`-mode walk (their matching keys). */
const fixedSeen = new WeakMap()

/**
 * `fixed` mode: what `pattern` found in `message`, corrected. The `<task>` blocks of an API request
 * record are the task's own instruction as sent to the model, not a subtask; a subtask seen again
 * (its tool call, then its result in the next request) is kept once, at its first sighting; the mode
 * of a `[new_task in Debug mode: …]` result is `debug`, not `debug mode`.
 */
function fixedFindings(result, message, pattern, found) {
  if (isApiRequest(message) && !pattern.startsWith('API ')) return []
  let seen = fixedSeen.get(result)
  if (!seen) fixedSeen.set(result, (seen = []))
  const kept = []
  for (const i of found) {
    const text = i.message.endsWith('...') ? i.message.slice(0, -3) : i.message
    const key = binding.computeInstructionPrefix(text, 192)
    // Copies cut at different lengths share a start; short keys must be equal.
    const same = (k) => k === key || (Math.min(k.length, key.length) >= 40 && (k.startsWith(key) || key.startsWith(k)))
    if (seen.some(same)) continue
    seen.push(key)
    kept.push({ ...i, mode: i.mode.replace(/\s+mode$/, '') })
  }
  return kept
}

/** The native chain over a message array: `{ instructions, matched }` (`matched`: pattern names). */
function chain(messages) {
  const found = binding.compatExtractionChain(JSON.stringify(messages))
  return { instructions: found.instructions, matched: found.matchedPatterns }
}

/** One extractor of the legacy chain (`canHandle`, `extract`, `getPatternName`). */
class ChainExtractor {
  constructor(index) {
    this.index = index
  }

  canHandle(message) {
    return ACCEPTS[this.index](message)
  }

  /**
   * What this extractor finds in `message`: the native chain over that one message, kept when this
   * extractor is the one that found it. (When an earlier extractor of ours would have found
   * something, this one's own finding is not computed: it answers `[]`.)
   */
  extract(message) {
    checkExtractable(this.index, message)
    const found = chain([message])
    return found.matched[0] === PATTERN_NAMES[this.index] ? found.instructions : []
  }

  getPatternName() {
    return PATTERN_NAMES[this.index]
  }
}

const PROTO = {
  canHandle: ChainExtractor.prototype.canHandle,
  extract: ChainExtractor.prototype.extract,
  getPatternName: ChainExtractor.prototype.getPatternName,
}

class MessageExtractionCoordinator {
  constructor() {
    this.extractors = []
    this.debugEnabled = false
    this.initializeExtractors()
    this.debugEnabled = debugEnv()
  }

  initializeExtractors() {
    this.extractors = PATTERN_NAMES.map((_, i) => new ChainExtractor(i))
    this.ownExtractors = this.extractors.slice()
    if (this.debugEnabled) console.log(`[MessageExtractionCoordinator] Initialized ${this.extractors.length} extractors`)
  }

  setDebugEnabled(enabled) {
    this.debugEnabled = enabled
  }

  getAvailableExtractors() {
    return this.extractors.map((e) => e.getPatternName())
  }

  /** Whether `this.extractors` is still our chain, untouched (then one native call does the walk). */
  chainIsOwn() {
    const list = this.extractors
    const own = this.ownExtractors
    if (!Array.isArray(list) || list.length !== own.length) return false
    for (let i = 0; i < own.length; i++) {
      const e = list[i]
      if (e !== own[i] || e.canHandle !== PROTO.canHandle || e.extract !== PROTO.extract || e.getPatternName !== PROTO.getPatternName) {
        return false
      }
    }
    return (
      ChainExtractor.prototype.canHandle === PROTO.canHandle &&
      ChainExtractor.prototype.extract === PROTO.extract &&
      ChainExtractor.prototype.getPatternName === PROTO.getPatternName
    )
  }

  /** Sync: `{instructions, processedMessages, matchedPatterns, errors}`; never throws. */
  extractFromMessages(messages, options = {}) {
    if (debugEnv()) {
      this.debugEnabled = true
      console.log(`[MessageExtractionCoordinator] Processing ${messages.length} messages with ${this.extractors.length} extractors`)
    }
    const result = { instructions: [], processedMessages: 0, matchedPatterns: [], errors: [] }
    this.debugEnabled = options.enableDebug || false
    if (this.debugEnabled) {
      console.log(`[MessageExtractionCoordinator] 🚀 Extraction over ${messages.length} messages`)
      console.log(`[MessageExtractionCoordinator] 📋 Extractors: ${this.getAvailableExtractors().join(', ')}`)
    }
    try {
      if (!this.debugEnabled && this.chainIsOwn()) {
        this.extractNatively(messages, result)
      } else {
        for (const message of messages) {
          if (this.debugEnabled) {
            const text = typeof message.text === 'string' ? `${message.text.substring(0, 50)}...` : 'N/A'
            console.log(`[MessageExtractionCoordinator] 🔍 Traitement message: type=${message.type}, role=${message.role}, text=${text}`)
          }
          this.processMessage(message, result, options)
          result.processedMessages++
        }
      }
      this.logExtractionSummary(result)
    } catch (error) {
      result.errors.push(`Global extraction error: ${error}`)
      this.logError('Global extraction', error)
    }
    return result
  }

  /**
   * The walk of our own chain: the messages iterated as the legacy loop iterates them, the errors
   * the legacy extractors would throw recorded in order, the instructions from one native call
   * (`fixed` mode: one per message, each message's findings corrected).
   */
  extractNatively(messages, result) {
    const fixed = currentMode() === 'fixed'
    const list = []
    for (const message of messages) {
      list.push(message)
      for (let i = 0; i < ACCEPTS.length; i++) {
        try {
          if (ACCEPTS[i](message)) checkExtractable(i, message)
        } catch (error) {
          result.errors.push(`${PATTERN_NAMES[i]} error: ${error}`)
        }
      }
      result.processedMessages++
    }
    if (!fixed) {
      const found = chain(list)
      result.instructions = found.instructions
      result.matchedPatterns = found.matched
      return
    }
    for (const message of list) {
      if (message === null || typeof message !== 'object') continue
      const found = chain([message])
      if (found.matched.length === 0) continue
      const kept = fixedFindings(result, message, found.matched[0], found.instructions)
      if (kept.length === 0) continue
      result.instructions.push(...kept)
      result.matchedPatterns.push(found.matched[0])
    }
  }

  extractFromMessage(message, options = {}) {
    const result = { instructions: [], processedMessages: 1, matchedPatterns: [], errors: [] }
    this.processMessage(message, result, options)
    this.logExtractionSummary(result)
    return result
  }

  processMessage(message, result, _options) {
    const fixed = currentMode() === 'fixed'
    let matched = false
    for (const extractor of this.extractors) {
      try {
        if (extractor.canHandle(message)) {
          let found = extractor.extract(message)
          if (fixed && found.length > 0) {
            // The first extractor that finds something ends the walk, kept or not.
            found = fixedFindings(result, message, extractor.getPatternName(), found)
            if (found.length === 0) break
          }
          if (found.length > 0) {
            result.instructions.push(...found)
            result.matchedPatterns.push(extractor.getPatternName())
            matched = true
            if (this.debugEnabled) {
              console.log(`[MessageExtractionCoordinator] ✅ ${extractor.getPatternName()} matched: ${found.length} instructions`)
            }
            break
          }
        }
      } catch (error) {
        result.errors.push(`${extractor.getPatternName()} error: ${error}`)
        this.logError(extractor.getPatternName(), error)
      }
    }
    if (!matched && this.debugEnabled) {
      console.log(`[MessageExtractionCoordinator] ⚪ No extractor matched for message type: ${message.type}`)
    }
  }

  logExtractionSummary(result) {
    if (!this.debugEnabled) return
    console.log('[MessageExtractionCoordinator] 📊 Extraction Summary:')
    console.log(`  - Messages processed: ${result.processedMessages}`)
    console.log(`  - Instructions found: ${result.instructions.length}`)
    console.log(`  - Patterns matched: ${result.matchedPatterns.join(', ')}`)
    console.log(`  - Errors: ${result.errors.length}`)
    if (result.errors.length > 0) console.log('  - Error details:', result.errors)
  }

  logError(context, error) {
    if (this.debugEnabled) console.error(`[MessageExtractionCoordinator] ❌ ${context} error:`, error)
  }
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
