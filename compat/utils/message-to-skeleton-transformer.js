'use strict'
/**
 * `MessageToSkeletonTransformer` of roo-state-core/compat: a skeleton header from an in-memory UI
 * message array (no file access). `legacy` mode keeps the legacy transformer's edge behaviour (an
 * unparsable request payload or a missing first `ts` rejects); `fixed` mode reads past them.
 * Inventory: docs/compat.md §3.
 */
const { UIMessagesDeserializer } = require('./ui-messages-deserializer.js')
const { computeInstructionPrefix } = require('./task-instruction-index.js')
const { currentMode } = require('../services/compat-mode.js')

const K = 192

/** The legacy `GenericError`: a message and a string `code`. */
class GenericError extends Error {
  constructor(message, code) {
    super(message)
    this.name = 'GenericError'
    this.code = code
  }
}

const WORKSPACE = /Current Workspace Directory \(([^)]+)\)/

class MessageToSkeletonTransformer {
  constructor(options = {}) {
    this.options = {
      normalizePrefixes: options.normalizePrefixes ?? true,
      includeMetadata: options.includeMetadata ?? false,
      strictValidation: options.strictValidation ?? false,
    }
    this.deserializer = new UIMessagesDeserializer()
  }

  async transform(messages, taskId, workspace) {
    const started = Date.now()
    const list = Array.isArray(messages) ? messages : []
    const fixed = currentMode() === 'fixed'
    const detectedWorkspace = workspace || this.autoDetectWorkspace(list)
    const toolCalls = this.deserializer.extractToolCalls(list)
    const newTasks = this.deserializer.extractNewTasks(list)
    const apiReqs = this.deserializer.extractApiRequests(list)
    const userMessages = list.filter((m) => m?.type === 'ask' && m.ask !== 'tool' && m.text)
    const instruction = this.buildMainInstruction(userMessages, fixed ? apiReqs.filter(Boolean) : apiReqs)
    const prefixes = this.buildChildTaskPrefixes(newTasks)
    const isCompleted = this.detectCompletion(list, toolCalls)

    let startedAt
    let completedAt = null
    if (list.length === 0) {
      startedAt = Date.now()
    } else if (fixed) {
      const stamps = list.map((m) => m?.ts).filter((t) => Number.isFinite(t))
      startedAt = stamps.length > 0 ? stamps[0] : Date.now()
      completedAt = isCompleted && stamps.length > 0 ? stamps[stamps.length - 1] : null
    } else {
      startedAt = list[0]?.ts
      completedAt = isCompleted ? list[list.length - 1]?.ts : null
    }

    const skeleton = {
      taskId,
      sequence: [],
      metadata: {
        workspace: detectedWorkspace || undefined,
        // An absent or invalid first `ts` makes toISOString() throw a RangeError, as in legacy mode.
        createdAt: new Date(startedAt).toISOString(),
        lastActivity: new Date(completedAt || startedAt).toISOString(),
        messageCount: list.length,
        actionCount: toolCalls.length,
        totalSize: JSON.stringify(list).length,
      },
      childTaskInstructionPrefixes: prefixes.length > 0 ? prefixes : undefined,
      truncatedInstruction: instruction,
      isCompleted,
    }
    if (this.options.strictValidation) this.validateSkeletonCompatibility(skeleton)
    return {
      skeleton,
      metadata: {
        messageCount: list.length,
        userMessageCount: userMessages.length,
        toolCallCount: toolCalls.length,
        newTaskCount: newTasks.length,
        hasInitialInstruction: Boolean(instruction),
        processingTimeMs: Date.now() - started,
      },
    }
  }

  autoDetectWorkspace(messages) {
    for (const m of messages) {
      if (m?.say !== 'api_req_started' || typeof m.text !== 'string') continue
      const found = WORKSPACE.exec(m.text)
      if (found) return found[1].replace(/\\\\/g, '\\').trim()
    }
    return undefined
  }

  buildMainInstruction(userMessages, apiReqs) {
    const cut = (raw) => (this.options.normalizePrefixes ? computeInstructionPrefix(raw, K) : raw.substring(0, K))
    // The first request payload that has a `request` (an unparsable payload is `undefined` here and
    // makes the legacy lookup throw).
    const first = apiReqs.find((req) => req.request)
    if (typeof first?.request === 'string') {
      const task = /<task>([\s\S]*?)<\/task>/i.exec(first.request)
      if (task) return cut(task[1].trim())
    }
    if (userMessages.length > 0 && userMessages[0].text) return cut(userMessages[0].text)
    return ''
  }

  buildChildTaskPrefixes(newTasks) {
    const prefixes = newTasks
      .map((t) => (this.options.normalizePrefixes ? computeInstructionPrefix(t.message, K) : String(t.message).trim()))
      .filter((p) => p.length > 0)
    return [...new Set(prefixes)]
  }

  detectCompletion(messages, toolCalls) {
    if (toolCalls.some((t) => t.tool === 'attempt_completion')) return true
    const last = messages[messages.length - 1]
    if (last?.type === 'say') return ['completion_result', 'error', 'user_feedback'].includes(last.say || '')
    return false
  }

  validateSkeletonCompatibility(skeleton) {
    const fail = (why) => {
      throw new GenericError(`Skeleton validation failed: ${why}`, 'INVALID_ARGUMENT')
    }
    if (!skeleton.taskId) fail('taskId is required')
    if (!skeleton.metadata.createdAt) fail('invalid createdAt timestamp')
    if (new Date(skeleton.metadata.lastActivity).getTime() < new Date(skeleton.metadata.createdAt).getTime()) {
      fail('lastActivity before createdAt')
    }
    if (skeleton.isCompleted && !skeleton.metadata.lastActivity) fail('isCompleted but no lastActivity')
    for (const p of skeleton.childTaskInstructionPrefixes ?? []) {
      if (!p) fail('empty prefix detected')
      if (p.length > K) fail('prefix exceeds 192 chars')
    }
    if (skeleton.truncatedInstruction && skeleton.truncatedInstruction.length > K) fail('truncatedInstruction exceeds 192 chars')
  }
}

module.exports = { MessageToSkeletonTransformer, GenericError }
