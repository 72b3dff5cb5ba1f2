'use strict'
/**
 * `src/core/condense/index.ts`: summaries (with the caller's telemetry, image rule and folded file
 * context beside the caller's condense module, host.js), the effective history and the helpers that
 * turn tool blocks into text.
 */

const core = require('../../index.js')
const host = require('./host.js')
const { CONDENSE_MODULE, array, extensionShape, isHeadEra, reuseAfterSummary } = require('./shared.js')

/** Inclusive bounds of a per-profile condensing threshold, in percent (condense). */
const MIN_CONDENSE_THRESHOLD = 5

const MAX_CONDENSE_THRESHOLD = 100

/** Messages kept after a summary by releases up to 3.42 (the fresh-start model of today keeps none). */
const N_MESSAGES_TO_KEEP = 3

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

module.exports = {
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
}
