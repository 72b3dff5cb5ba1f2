'use strict'
/**
 * `MessageToSkeletonTransformer` of roo-state-core/compat: a skeleton header from an in-memory UI
 * message array (no file access). Its collaborators are the caller's own where its replacement file
 * handed over an importer (compat/utils/caller-modules.js): the UI message deserializer, the
 * instruction key (`computeInstructionPrefix`), the workspace detector and the error class; compat's
 * equivalents otherwise. They are looked up when `transform` starts, so a test's mocks reach them.
 * `legacy` mode keeps the legacy transformer's edge behaviour (an unparsable request payload or a
 * missing first `ts` rejects); `fixed` mode reads past them. Inventory: docs/compat.md §3.
 */
const { currentMode } = require('../services/compat-mode.js')
const { callerModule, exportOf } = require('./caller-modules.js')
const { FileWorkspaceDetector, workspaceInMessages } = require('./detector-fallbacks.js')

const K = 192
/** The legacy transformer's own workspace pattern (the environment-details heading only). */
const HEADING_WORKSPACE = [/# Current Workspace Directory \(([^)]+)\) Files/i]

/** The `GenericError` used when the caller handed over none: a message and a string `code`. */
class GenericError extends Error {
  constructor(message, code) {
    super(message)
    this.name = 'GenericError'
    this.code = code
  }
}


const own = {
  UIMessagesDeserializer: () => require('./ui-messages-deserializer.js').UIMessagesDeserializer,
  computeInstructionPrefix: () => require('./task-instruction-index.js').computeInstructionPrefix,
}

/** The collaborators in effect: the caller's (once `transform` resolved them), else compat's. */
async function collaborators() {
  const [deserializer, index, workspace, errors] = await Promise.all([
    callerModule('./ui-messages-deserializer.js'),
    callerModule('./task-instruction-index.js'),
    callerModule('./workspace-detector.js'),
    callerModule('../types/errors.js'),
  ])
  return {
    UIMessagesDeserializer: exportOf(deserializer, 'UIMessagesDeserializer') ?? own.UIMessagesDeserializer(),
    computeInstructionPrefix: exportOf(index, 'computeInstructionPrefix') ?? own.computeInstructionPrefix(),
    WorkspaceDetector: exportOf(workspace, 'WorkspaceDetector') ?? FileWorkspaceDetector,
    GenericError: exportOf(errors, 'GenericError') ?? GenericError,
  }
}

class MessageToSkeletonTransformer {
  constructor(options = {}) {
    this.options = {
      normalizePrefixes: options.normalizePrefixes ?? true,
      includeMetadata: options.includeMetadata ?? false,
      strictValidation: options.strictValidation ?? false,
    }
    this.collaborators = null
    this.deserializer = null
    this.workspaceDetector = null
  }

  /** Binds this transformer to the collaborators in effect now (the first `transform` does). */
  async resolve() {
    if (this.collaborators) return
    const c = await collaborators()
    this.collaborators = c
    this.deserializer = new c.UIMessagesDeserializer()
    this.workspaceDetector = new c.WorkspaceDetector({ enableCache: true, validateExistence: false, normalizePaths: true })
  }

  prefixOf(text) {
    const compute = this.collaborators?.computeInstructionPrefix ?? own.computeInstructionPrefix()
    return compute(text, K)
  }

  async transform(input, taskId, workspace) {
    const started = Date.now()
    await this.resolve()
    const fixed = currentMode() === 'fixed'
    const messages = fixed && !Array.isArray(input) ? [] : input
    const detectedWorkspace = workspace || (await this.autoDetectWorkspace(messages))
    const toolCalls = this.deserializer.extractToolCalls(messages)
    const newTasks = this.deserializer.extractNewTasks(messages)
    const apiReqs = this.deserializer.extractApiRequests(messages)
    const userMessages = this.extractUserMessages(messages)
    const { instruction } = this.buildMainInstruction(messages, fixed ? apiReqs.filter(Boolean) : apiReqs)
    const prefixes = this.buildChildTaskPrefixes(newTasks)
    const isCompleted = this.detectCompletion(messages, toolCalls)
    const { startedAt, completedAt } = fixed ? this.finiteTimestamps(messages, isCompleted) : this.extractTimestamps(messages, isCompleted)

    const skeleton = {
      taskId,
      sequence: [],
      metadata: {
        workspace: detectedWorkspace || undefined,
        // An absent or invalid first `ts` makes toISOString() throw a RangeError, as in legacy mode.
        createdAt: new Date(startedAt).toISOString(),
        lastActivity: new Date(completedAt || startedAt).toISOString(),
        messageCount: messages.length,
        actionCount: toolCalls.length,
        totalSize: JSON.stringify(messages).length,
      },
      childTaskInstructionPrefixes: prefixes.length > 0 ? prefixes : undefined,
      truncatedInstruction: instruction,
      isCompleted,
    }
    if (this.options.strictValidation) this.validateSkeletonCompatibility(skeleton)
    return {
      skeleton,
      metadata: {
        messageCount: messages.length,
        userMessageCount: userMessages.length,
        toolCallCount: toolCalls.length,
        newTaskCount: newTasks.length,
        hasInitialInstruction: !!instruction,
        processingTimeMs: Date.now() - started,
      },
    }
  }

  /** `type:"ask"` messages with a text, tool approvals excepted. */
  extractUserMessages(messages) {
    return messages.filter((m) => m.type === 'ask' && m.ask !== 'tool' && m.text)
  }

  /** The `<task>` of the first request payload that has a `request`, else the first user message; cut to 192. */
  buildMainInstruction(messages, apiReqs) {
    const cut = (raw) => (this.options.normalizePrefixes ? this.prefixOf(raw) : raw.substring(0, K))
    // An unparsable payload is `undefined` here and makes this lookup throw in legacy mode.
    const first = apiReqs.find((req) => req.request)
    if (first?.request) {
      const task = first.request.match(/<task>([\s\S]*?)<\/task>/i)
      if (task) return { instruction: cut(task[1].trim()), truncatedInstruction: false }
    }
    const users = this.extractUserMessages(messages)
    if (users.length > 0 && users[0].text) return { instruction: cut(users[0].text), truncatedInstruction: false }
    return { instruction: '', truncatedInstruction: true }
  }

  /** Distinct non-empty keys of the new tasks' messages (raw trimmed text when not normalising). */
  buildChildTaskPrefixes(newTasks) {
    if (newTasks.length === 0) return []
    const prefixes = newTasks.map((t) => (this.options.normalizePrefixes ? this.prefixOf(t.message) : t.message.trim())).filter((p) => p.length > 0)
    return [...new Set(prefixes)]
  }

  detectCompletion(messages, toolCalls) {
    if (toolCalls.some((t) => t.tool === 'attempt_completion')) return true
    const last = messages[messages.length - 1]
    if (last?.type === 'say') return ['completion_result', 'error', 'user_feedback'].includes(last.say || '')
    return false
  }

  /** First and (when completed) last message `ts`, as they are. */
  extractTimestamps(messages, isCompleted) {
    if (messages.length === 0) return { startedAt: Date.now(), completedAt: null }
    return { startedAt: messages[0].ts, completedAt: isCompleted ? messages[messages.length - 1].ts : null }
  }

  /** Fixed mode: the first and last finite `ts` (now when none). */
  finiteTimestamps(messages, isCompleted) {
    const stamps = messages.map((m) => m?.ts).filter((t) => Number.isFinite(t))
    if (stamps.length === 0) return { startedAt: Date.now(), completedAt: null }
    return { startedAt: stamps[0], completedAt: isCompleted ? stamps[stamps.length - 1] : null }
  }

  validateSkeletonCompatibility(skeleton) {
    const ErrorClass = this.collaborators?.GenericError ?? GenericError
    const fail = (why) => {
      throw new ErrorClass(`Skeleton validation failed: ${why}`, 'INVALID_ARGUMENT')
    }
    if (!skeleton.taskId) fail('taskId is required')
    if (!skeleton.metadata.createdAt) fail('invalid createdAt timestamp')
    if (new Date(skeleton.metadata.lastActivity).getTime() < new Date(skeleton.metadata.createdAt).getTime()) {
      fail('lastActivity before createdAt')
    }
    if (skeleton.isCompleted && !skeleton.metadata.lastActivity) fail('isCompleted but no lastActivity')
    const prefixes = skeleton.childTaskInstructionPrefixes
    if (prefixes) {
      if (prefixes.some((p) => p.length === 0)) fail('empty prefix detected')
      if (prefixes.some((p) => p.length > K)) fail('prefix exceeds 192 chars')
    }
    if (skeleton.truncatedInstruction && skeleton.truncatedInstruction.length > K) fail('truncatedInstruction exceeds 192 chars')
  }

  /** The workspace of the first say/ask message whose environment details name one, else `null`. */
  async autoDetectWorkspace(messages) {
    try {
      return workspaceInMessages(messages, HEADING_WORKSPACE)
    } catch (err) {
      console.warn('[MessageToSkeletonTransformer] workspace detection failed:', err)
      return null
    }
  }
}

module.exports = { MessageToSkeletonTransformer, GenericError }
