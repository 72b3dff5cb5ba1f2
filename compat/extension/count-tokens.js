'use strict'
/**
 * `src/utils/countTokens.ts`: what every provider's `countTokens` returns.
 */

const core = require('../../index.js')
const { array } = require('./shared.js')

/**
 * `countTokens(content, { useWorker })`: what every provider's `countTokens` returns. The count
 * always runs off the JavaScript thread in the native pool; `useWorker` is accepted and ignored.
 */
async function countTokens(content, _options) {
  return core.countTokens(array('content', content))
}

module.exports = {
  countTokens,
}
