'use strict'
/**
 * `roo-state-core/compat/extension`: the Roo Code extension's context-management, condensation,
 * cost, metrics and token-counting functions under the names, argument shapes and sync/async
 * contracts of the extension's own modules, served by the native binding (`roo-condense`).
 *
 * Module by module (docs/compat-extension.md has the full inventory):
 *   src/core/context-management/index.ts  TOKEN_BUFFER_PERCENTAGE, estimateTokenCount, truncateConversation,
 *                                          willManageContext, manageContext
 *   src/core/condense/index.ts             MIN/MAX_CONDENSE_THRESHOLD, toolUseToText, toolResultToText,
 *                                          convertToolBlocksToText, transformMessagesForCondensing,
 *                                          injectSyntheticToolResults, extractCommandBlocks, summarizeConversation,
 *                                          getMessagesSinceLastSummary, getEffectiveApiHistory, cleanupAfterTruncation
 *   src/shared/cost.ts                     calculateApiCostAnthropic, calculateApiCostOpenAI, parseApiPrice
 *   src/shared/getApiMetrics.ts            getApiMetrics (= consolidateTokenUsage), hasTokenUsageChanged,
 *                                          hasToolUsageChanged
 *   src/utils/countTokens.ts, tiktoken.ts  countTokens, tiktoken
 *   and the helpers the acceptance cases use: getModelMaxOutputTokens, mergeConsecutiveApiMessages,
 *   combineCommandSequences, combineApiRequests, isContextManagementEvent, TaskHistoryStore.
 *
 * What differs from calling the binding directly: results that the extension returns unchanged are
 * the caller's own array and objects again (the extension's `result.messages !== history` test
 * works), binding-only fields (`errorKey`, `thresholdWarning`) are left out of results, an invalid
 * profile threshold is reported with `console.warn` as the extension does, and `getApiMetrics`
 * always carries the two cache keys. Under a module runner, the extension's collaborators are
 * called through the caller's modules (host.js); `legacy` mode gives the extension's JavaScript
 * values on malformed records (legacy.js).
 */

const core = require('../../index.js')
const { getMode } = require('../mode.js')
const host = require('./host.js')
const legacy = require('./legacy.js')
const { extensionRelease, setExtensionRelease, releaseAtLeast, withRelease } = require('./release.js')
const { TaskHistoryStore, DeltaRejectedError, assertValidTransition } = require('./task-history-store.js')

/** The extension's module whose collaborators compat/extension calls through the caller's copy. */
const CONDENSE_MODULE = 'core/condense/index'

// ------------------------------------------------------------------ constants

/** Share of the context window kept free when deciding to truncate (context-management). */
const TOKEN_BUFFER_PERCENTAGE = 0.1
/** Inclusive bounds of a per-profile condensing threshold, in percent (condense). */
const MIN_CONDENSE_THRESHOLD = 5
const MAX_CONDENSE_THRESHOLD = 100
/** Messages kept after a summary by releases up to 3.42 (the fresh-start model of today keeps none). */
const N_MESSAGES_TO_KEEP = 3
/** Output tokens reserved when a model states none (`@roo-code/types`). */
const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192
/** `getModelMaxOutputTokens` defaults for reasoning-budget models (src/shared/api.ts). */
const DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS = 16384
const DEFAULT_HYBRID_REASONING_MODEL_THINKING_TOKENS = 8192
/** Joins a command and its output in `combineCommandSequences`. */
const COMMAND_OUTPUT_STRING = 'Output:'
/** The three `say` values that record a context-management event. */
const CONTEXT_MANAGEMENT_EVENTS = Object.freeze(core.contextManagementEvents())

// ------------------------------------------------------------------ shared helpers

/** Drops the fields the binding adds beyond the extension's result types. */
function extensionShape(result) {
  const { errorKey, thresholdWarning, ...rest } = result
  void errorKey
  void thresholdWarning
  return rest
}

/**
 * After a truncation, the messages the extension leaves untouched are the caller's objects; only
 * the tagged ones and the marker are new.
 */
function reuseAfterTruncation(input, output, truncationId) {
  const out = output.slice()
  let j = 0
  for (let i = 0; i < out.length; i++) {
    const m = out[i]
    if (m && m.isTruncationMarker && m.truncationId === truncationId) continue
    const before = input[j]
    const taggedNow = Boolean(m && m.truncationParent === truncationId && !(before && before.truncationParent === truncationId))
    if (j < input.length && !taggedNow) out[i] = before
    j++
  }
  return out
}

/** After a fresh-start summary, messages that already had a `condenseParent` are the caller's objects. */
function reuseAfterSummary(input, output) {
  if (output.length !== input.length + 1) return output
  const out = output.slice()
  for (let i = 0; i < input.length; i++) {
    if (input[i] && input[i].condenseParent) out[i] = input[i]
  }
  return out
}

/**
 * `undefined` where the extension expects an array: a `TypeError` (the extension's own failure) whose
 * message and code follow the binding's argument errors.
 */
function array(name, v) {
  if (v === undefined) {
    throw Object.assign(new TypeError(`INVALID_ARGUMENT: ${name}: expected an array, got undefined`), { code: 'InvalidArg' })
  }
  return v
}

function isHeadEra(options) {
  return !options || options.era === undefined || options.era === null
}

/** Token counts as JavaScript arithmetic sees them: `null` adds 0, anything else not a number is NaN. */
function tokenNumber(v) {
  if (typeof v === 'number') return v
  if (v === null) return 0
  return Number.NaN
}

function optionalTokenNumber(v) {
  return typeof v === 'number' ? v : undefined
}

// ------------------------------------------------------------------ tokens (src/utils)

/** `tiktoken(content)`: o200k_base estimate ×1.5, rounded up once. Async, as in the extension: bad input rejects. */
async function tiktoken(content) {
  return core.tiktoken(array('content', content))
}

/**
 * `countTokens(content, { useWorker })`: what every provider's `countTokens` returns. The count
 * always runs off the JavaScript thread in the native pool; `useWorker` is accepted and ignored.
 */
async function countTokens(content, _options) {
  return core.countTokens(array('content', content))
}

// ------------------------------------------------------------------ context management

/**
 * `estimateTokenCount(content, apiHandler)`: 0 for no content, otherwise the handler's
 * `countTokens(content)` (this package's estimate when the handler has none).
 */
async function estimateTokenCount(content, apiHandler) {
  if (!content || content.length === 0) return 0
  if (apiHandler && typeof apiHandler.countTokens === 'function') return apiHandler.countTokens(content)
  return core.countTokens(content)
}

/** `truncateConversation(messages, fracToRemove, taskId)`: sync. */
function truncateConversation(messages, fracToRemove, taskId) {
  const r = core.truncateConversation(array('messages', messages), fracToRemove, taskId)
  if (!Array.isArray(messages)) return r
  if (r.messagesRemoved === 0) return { messages, truncationId: r.truncationId, messagesRemoved: 0 }
  return {
    messages: reuseAfterTruncation(messages, r.messages, r.truncationId),
    truncationId: r.truncationId,
    messagesRemoved: r.messagesRemoved,
  }
}

/**
 * `willManageContext(options)`: sync, no side effects. In `legacy` mode, options the native rule
 * would read differently (a count that is not a number, no `autoCondenseContext`, no profile map)
 * get the extension's JavaScript result; `fixed` counts a missing number as 0.
 */
function willManageContext(options) {
  if (getMode() === 'legacy' && !legacy.wellFormedWillManage(options)) {
    const limits = { TOKEN_BUFFER_PERCENTAGE, ANTHROPIC_DEFAULT_MAX_TOKENS, MIN_CONDENSE_THRESHOLD, MAX_CONDENSE_THRESHOLD }
    return legacy.willManageContext(options, limits, releaseAtLeast(3, 66))
  }
  return core.willManageContext(withRelease(options))
}

/**
 * `manageContext(options)`: async. Uses `options.apiHandler` (`createMessage` to summarise,
 * `countTokens` for every count, `getModel().info.supportsImages`).
 *
 * The summary is asked of `summarizeConversation` as the extension's context-management module
 * reaches it: through the caller's condense module when there is one (host.js), else through this
 * module's exports, so a spy or stub put on either is what summarises. When neither exists nor was
 * replaced, the whole call runs natively.
 */
async function manageContext(options) {
  if (getMode() === 'legacy' && options && Array.isArray(options.messages) && options.messages.length === 0) {
    // the extension reads the newest message's content first
    throw new TypeError("Cannot read properties of undefined (reading 'content')")
  }
  const condense = host.callerModule(CONDENSE_MODULE)
  const summarize = condense ? condense.exports.summarizeConversation : module.exports.summarizeConversation
  const messages = options && options.messages
  if ((!condense && summarize === summarizeConversation) || typeof summarize !== 'function' || !Array.isArray(messages) || messages.length === 0) {
    return manageNatively(options, true)
  }
  return manageThrough(summarize, options)
}

/** The native `manageContext`, its result in the extension's shape and with the caller's objects. */
async function manageNatively(options, warn) {
  const r = await core.manageContext(withRelease(options))
  if (warn && r.thresholdWarning) console.warn(r.thresholdWarning)
  if (!Array.isArray(options.messages)) return extensionShape(r)
  const input = options.messages
  let messages = input
  if (r.summary && isHeadEra(options)) messages = reuseAfterSummary(input, r.messages)
  else if (r.summary) messages = r.messages
  else if (r.truncationId !== undefined && r.messagesRemoved > 0) {
    messages = isHeadEra(options) ? reuseAfterTruncation(input, r.messages, r.truncationId) : r.messages
  }
  return { ...extensionShape(r), messages }
}

/**
 * `manageContext` with the summary asked of `summarize`: the newest message counted by the
 * handler, the native decision, the call, and on failure the native truncation when the context is
 * over the limit.
 */
async function manageThrough(summarize, options) {
  const { messages, apiHandler } = options
  const content = messages[messages.length - 1] ? messages[messages.length - 1].content : undefined
  const lastMessageTokens = await estimateTokenCount(Array.isArray(content) ? content : [{ type: 'text', text: content }], apiHandler)
  const decision = core.decideContext(withRelease({ ...options, lastMessageTokens }))
  const warning = decision.effectiveThreshold && decision.effectiveThreshold.warning
  if (warning) console.warn(warning)
  const prevContextTokens = decision.prevContextTokens
  let failed = { cost: 0, error: undefined, errorDetails: undefined }
  if (decision.action === 'summarize') {
    const r = await summarize(
      summarize === summarizeConversation
        ? { ...options, isAutomaticTrigger: true, prevContextTokens }
        : extensionSummarizeOptions(options),
    )
    if (!r.error) return { ...r, prevContextTokens }
    failed = { cost: r.cost, error: r.error, errorDetails: r.errorDetails }
  }
  if (decision.truncateOnFailure) {
    const t = await manageNatively({ ...options, autoCondenseContext: false, lastMessageTokens }, false)
    return { ...t, summary: '', ...failed, prevContextTokens }
  }
  return { messages, summary: '', ...failed, prevContextTokens }
}

/** The option object the extension's `manageContext` hands to `summarizeConversation`. */
function extensionSummarizeOptions(o) {
  return {
    messages: o.messages,
    apiHandler: o.apiHandler,
    systemPrompt: o.systemPrompt,
    taskId: o.taskId,
    isAutomaticTrigger: true,
    customCondensingPrompt: o.customCondensingPrompt,
    metadata: o.metadata,
    environmentDetails: o.environmentDetails,
    filesReadByRoo: o.filesReadByRoo,
    cwd: o.cwd,
    rooIgnoreController: o.rooIgnoreController,
  }
}

// ------------------------------------------------------------------ condensation

/**
 * `summarizeConversation(options)`: async, the extension's option object. Uses
 * `options.apiHandler.createMessage(systemPrompt, messages, metadata)`, `countTokens` and
 * `getModel()`. With a caller's condense module (host.js), the extension's collaborators beside it
 * take part as in the extension: telemetry's `captureContextCondensed` first, the caller's
 * `maybeRemoveImageBlocks` on the request, and `generateFoldedFileContext(filesReadByRoo, {cwd,
 * rooIgnoreController})` for the folded file sections; without one, `filesReadByRoo` is not folded
 * (pass rendered sections as `foldedFileContext`).
 */
async function summarizeConversation(options) {
  const condense = options ? host.callerModule(CONDENSE_MODULE) : null
  const r = await core.summarizeConversation(condense ? await withCallerCollaborators(condense, options) : options)
  if (r.errorKey === 'condense_handler_invalid') console.error('API handler is invalid for condensing. Cannot proceed.')
  if (!Array.isArray(options.messages)) return extensionShape(r)
  const input = options.messages
  const messages = r.error ? input : isHeadEra(options) ? reuseAfterSummary(input, r.messages) : r.messages
  return { ...extensionShape(r), messages }
}

/** `options` with the caller's collaborators applied (telemetry reported, images, folded files). */
async function withCallerCollaborators(condense, options) {
  const telemetry = await host.importBeside(condense, '@roo-code/telemetry')
  if (telemetry && telemetry.TelemetryService) {
    const prompt = options.customCondensingPrompt
    telemetry.TelemetryService.instance.captureContextCondensed(
      options.taskId,
      options.isAutomaticTrigger ?? false,
      typeof prompt === 'string' && prompt.trim() !== '',
    )
  }
  const out = { ...options }
  const images = isHeadEra(options) ? await host.importBeside(condense, '../../api/transform/image-cleaning') : null
  if (images && typeof images.maybeRemoveImageBlocks === 'function' && Array.isArray(options.messages)) {
    out.apiHandler = withCallerImageRule(options.apiHandler, images.maybeRemoveImageBlocks, options.messages)
  }
  const files = options.filesReadByRoo
  if (out.foldFileContext === undefined && out.foldedFileContext === undefined && Array.isArray(files) && files.length > 0 && options.cwd) {
    out.foldFileContext = () => callerFoldedSections(condense, files, options)
  }
  return out
}

/**
 * The caller's `generateFoldedFileContext(files, {cwd, rooIgnoreController})` sections, blank ones
 * left out (the native summary asks once it has a summary); `null` when the caller has no such
 * module, `[]` after logging a failure as the extension does.
 */
async function callerFoldedSections(condense, files, options) {
  const folding = await host.importBeside(condense, './foldedFileContext')
  if (!folding || typeof folding.generateFoldedFileContext !== 'function') return null
  try {
    const folded = await folding.generateFoldedFileContext(files, { cwd: options.cwd, rooIgnoreController: options.rooIgnoreController })
    return folded.sections.filter((section) => section.trim())
  } catch (error) {
    console.error('[summarizeConversation] Failed to generate folded file context:', error)
    return []
  }
}

/**
 * The handler as the native summary sees it when the caller's `maybeRemoveImageBlocks` decides
 * about images. The native request keeps image blocks (the model is said to take them); at
 * `createMessage` the request is made again as the extension makes it: the stored messages since
 * the last summary with synthetic tool results, plus the native request's last message (the
 * instructions), go through the caller's rule (given the caller's handler), then tool blocks
 * become text and each message is cut to `{role, content}`.
 */
function withCallerImageRule(apiHandler, maybeRemoveImageBlocks, stored) {
  if (!apiHandler || typeof apiHandler.createMessage !== 'function') return apiHandler
  return {
    createMessage: (systemPrompt, request, metadata) => {
      const toSummarize = core.injectSyntheticToolResults(getMessagesSinceLastSummary(stored))
      const cleaned = maybeRemoveImageBlocks([...toSummarize, request[request.length - 1]], apiHandler)
      const sent = core.transformMessagesForCondensing(cleaned).map(({ role, content }) => ({ role, content }))
      return apiHandler.createMessage(systemPrompt, sent, metadata)
    },
    countTokens: typeof apiHandler.countTokens === 'function' ? (content) => apiHandler.countTokens(content) : undefined,
    getModel: () => ({ id: 'caller', info: { supportsImages: true } }),
  }
}

/** `getMessagesSinceLastSummary(messages)`: sync; the input array itself when there is no summary. */
function getMessagesSinceLastSummary(messages) {
  const r = core.getMessagesSinceLastSummary(array('messages', messages))
  if (!Array.isArray(messages)) return r
  if (r.length === messages.length) return messages
  return messages.slice(messages.length - r.length)
}

/** `getEffectiveApiHistory(messages)`: sync. */
function getEffectiveApiHistory(messages) {
  return core.getEffectiveApiHistory(array('messages', messages))
}

/** `cleanupAfterTruncation(messages)`: sync. */
function cleanupAfterTruncation(messages) {
  return core.cleanupAfterTruncation(array('messages', messages))
}

function toolUseToText(block) {
  return core.toolUseToText(block)
}

function toolResultToText(block) {
  return core.toolResultToText(block)
}

/** `convertToolBlocksToText(content)`: a string is returned as is; tool blocks become text blocks. */
function convertToolBlocksToText(content) {
  if (typeof content === 'string') return content
  const [m] = core.transformMessagesForCondensing([{ role: 'user', content }])
  return m.content
}

function transformMessagesForCondensing(messages) {
  return core.transformMessagesForCondensing(array('messages', messages))
}

function injectSyntheticToolResults(messages) {
  return core.injectSyntheticToolResults(array('messages', messages))
}

function extractCommandBlocks(message) {
  return core.extractCommandBlocks(message)
}

// ------------------------------------------------------------------ cost (src/shared/cost.ts)

/** `calculateApiCostAnthropic(modelInfo, inputTokens, outputTokens, cacheWrites?, cacheReads?)`: sync. */
function calculateApiCostAnthropic(modelInfo, inputTokens, outputTokens, cacheCreationInputTokens, cacheReadInputTokens) {
  return core.calculateApiCostAnthropic(
    modelInfo,
    tokenNumber(inputTokens),
    tokenNumber(outputTokens),
    optionalTokenNumber(cacheCreationInputTokens),
    optionalTokenNumber(cacheReadInputTokens),
  )
}

/** `calculateApiCostOpenAI(modelInfo, inputTokens, outputTokens, cacheWrites?, cacheReads?, serviceTier?)`: sync. */
function calculateApiCostOpenAI(modelInfo, inputTokens, outputTokens, cacheCreationInputTokens, cacheReadInputTokens, serviceTier) {
  return core.calculateApiCostOpenAI(
    modelInfo,
    tokenNumber(inputTokens),
    tokenNumber(outputTokens),
    optionalTokenNumber(cacheCreationInputTokens),
    optionalTokenNumber(cacheReadInputTokens),
    typeof serviceTier === 'string' ? serviceTier : undefined,
  )
}

/** `parseApiPrice(price)`: a per-token price → USD per million tokens; `undefined` for a falsy price. */
function parseApiPrice(price) {
  return core.parseApiPrice(price)
}

// ------------------------------------------------------------------ metrics (src/shared/getApiMetrics.ts)

/**
 * `getApiMetrics(messages)` / `consolidateTokenUsage(messages)`: sync. In `legacy` mode
 * `contextTokens` is the extension's JavaScript sum (string counts concatenate); `fixed` counts
 * anything but a number as 0.
 */
function getApiMetrics(messages) {
  const r = core.getApiMetrics(array('messages', messages))
  return {
    totalTokensIn: r.totalTokensIn,
    totalTokensOut: r.totalTokensOut,
    totalCacheWrites: r.totalCacheWrites,
    totalCacheReads: r.totalCacheReads,
    totalCost: r.totalCost,
    contextTokens: getMode() === 'legacy' && Array.isArray(messages) ? legacy.contextTokens(messages) : r.contextTokens,
  }
}

const TOKEN_USAGE_KEYS = ['totalTokensIn', 'totalTokensOut', 'totalCacheWrites', 'totalCacheReads', 'totalCost', 'contextTokens']

/** True when there is no snapshot or any of the six totals differs (`!==`). */
function hasTokenUsageChanged(current, snapshot) {
  if (!snapshot) return true
  return TOKEN_USAGE_KEYS.some((k) => current[k] !== snapshot[k])
}

/** True when the set of tools or any tool's attempts/failures differs; no snapshot counts as `{}`. */
function hasToolUsageChanged(current, snapshot) {
  const before = snapshot || {}
  const names = Object.keys(current)
  if (names.length !== Object.keys(before).length) return true
  for (const name of names) {
    const now = current[name]
    const then = before[name]
    if (!now || !then) return true
    if (now.attempts !== then.attempts || now.failures !== then.failures) return true
  }
  return false
}

function combineCommandSequences(messages) {
  return core.combineCommandSequences(array('messages', messages))
}

/**
 * `combineApiRequests(messages)`: sync; the caller's array itself when it holds one message or no
 * request record. In `legacy` mode a record whose JSON is a string or an array is spread into the
 * merged object as the extension does (numbered keys); `fixed` ignores it.
 */
function combineApiRequests(messages) {
  if (Array.isArray(messages) && messages.length > 0) {
    const unchanged = messages.length === 1 || !messages.some((m) => m && m.type === 'say' && (m.say === 'api_req_started' || m.say === 'api_req_finished'))
    if (unchanged) return messages
    const spread = getMode() === 'legacy' ? legacy.combineApiRequestsSpreading(messages) : null
    if (spread) return spread
  }
  return core.combineApiRequests(array('messages', messages))
}

function isContextManagementEvent(value) {
  return core.isContextManagementEvent(value)
}

/** `getModelMaxOutputTokens({ modelId, model, settings, format })` (src/shared/api.ts): sync. */
function getModelMaxOutputTokens(params) {
  return core.getModelMaxOutputTokens(params)
}

/** `mergeConsecutiveApiMessages(messages, { roles })` (src/core/task): sync, default roles `["user"]`. */
function mergeConsecutiveApiMessages(messages, options) {
  return core.mergeConsecutiveApiMessages(array('messages', messages), options)
}

module.exports = {
  // context-management
  TOKEN_BUFFER_PERCENTAGE,
  estimateTokenCount,
  truncateConversation,
  willManageContext,
  manageContext,
  // condense
  MIN_CONDENSE_THRESHOLD,
  MAX_CONDENSE_THRESHOLD,
  N_MESSAGES_TO_KEEP,
  toolUseToText,
  toolResultToText,
  convertToolBlocksToText,
  transformMessagesForCondensing,
  injectSyntheticToolResults,
  extractCommandBlocks,
  summarizeConversation,
  getMessagesSinceLastSummary,
  getEffectiveApiHistory,
  cleanupAfterTruncation,
  // cost
  calculateApiCostAnthropic,
  calculateApiCostOpenAI,
  parseApiPrice,
  // metrics
  getApiMetrics,
  consolidateTokenUsage: getApiMetrics,
  hasTokenUsageChanged,
  hasToolUsageChanged,
  combineCommandSequences,
  combineApiRequests,
  COMMAND_OUTPUT_STRING,
  CONTEXT_MANAGEMENT_EVENTS,
  isContextManagementEvent,
  // tokens
  countTokens,
  tiktoken,
  // models
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS,
  DEFAULT_HYBRID_REASONING_MODEL_THINKING_TOKENS,
  getModelMaxOutputTokens,
  // task
  mergeConsecutiveApiMessages,
  TaskHistoryStore,
  DeltaRejectedError,
  assertValidTransition,
  // the release whose rules apply
  extensionRelease,
  setExtensionRelease,
}
