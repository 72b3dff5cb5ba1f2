'use strict'
/**
 * `src/shared/combineApiRequests.ts`: a request's start and finish records as one.
 */

const core = require('../../index.js')
const { getMode } = require('../mode.js')
const legacy = require('./legacy.js')
const { array } = require('./shared.js')

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

module.exports = {
  combineApiRequests,
}
