'use strict'
/**
 * `src/core/task/mergeConsecutiveApiMessages.ts`: consecutive messages of one role as one.
 */

const core = require('../../index.js')
const { array } = require('./shared.js')

/** `mergeConsecutiveApiMessages(messages, { roles })` (src/core/task): sync, default roles `["user"]`. */
function mergeConsecutiveApiMessages(messages, options) {
  return core.mergeConsecutiveApiMessages(array('messages', messages), options)
}

module.exports = {
  mergeConsecutiveApiMessages,
}
