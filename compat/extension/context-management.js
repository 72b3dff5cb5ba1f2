'use strict'
/**
 * `src/core/context-management/index.ts`: the decision to condense or truncate, and carrying it out
 * (`manageContext`), with the summary asked of the condense module as the extension asks it.
 */

const core = require('../../index.js')
const { getMode } = require('../mode.js')
const host = require('./host.js')
const legacy = require('./legacy.js')
const { releaseAtLeast, withRelease } = require('./release.js')
const { ANTHROPIC_DEFAULT_MAX_TOKENS } = require('./api.js')
const { MIN_CONDENSE_THRESHOLD, MAX_CONDENSE_THRESHOLD, summarizeConversation } = require('./condense.js')
const { CONDENSE_MODULE, array, extensionShape, isHeadEra, reuseAfterSummary, reuseAfterTruncation } = require('./shared.js')

/** Share of the context window kept free when deciding to truncate (context-management). */
const TOKEN_BUFFER_PERCENTAGE = 0.1

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
  // Without a caller's module, through compat/extension's own export (where a test may replace it).
  const summarize = condense ? condense.exports.summarizeConversation : require('./index.js').summarizeConversation
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

module.exports = {
  TOKEN_BUFFER_PERCENTAGE,
  estimateTokenCount,
  truncateConversation,
  willManageContext,
  manageContext,
}
