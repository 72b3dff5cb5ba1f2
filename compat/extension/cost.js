'use strict'
/**
 * `src/shared/cost.ts`: the cost of a request, in the extension's order of operations.
 */

const core = require('../../index.js')
const { optionalTokenNumber, tokenNumber } = require('./shared.js')

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

module.exports = {
  calculateApiCostAnthropic,
  calculateApiCostOpenAI,
  parseApiPrice,
}
