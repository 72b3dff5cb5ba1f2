'use strict'
/**
 * `src/utils/tiktoken.ts`: the o200k estimate of content blocks.
 */

const core = require('../../index.js')
const { array } = require('./shared.js')

/** `tiktoken(content)`: o200k_base estimate ×1.5, rounded up once. Async, as in the extension: bad input rejects. */
async function tiktoken(content) {
  return core.tiktoken(array('content', content))
}

module.exports = {
  tiktoken,
}
