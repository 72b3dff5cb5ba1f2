'use strict'
/**
 * `src/shared/combineCommandSequences.ts`: a command and its output as one message.
 */

const core = require('../../index.js')
const { array } = require('./shared.js')

/** Joins a command and its output in `combineCommandSequences`. */
const COMMAND_OUTPUT_STRING = 'Output:'

function combineCommandSequences(messages) {
  return core.combineCommandSequences(array('messages', messages))
}

module.exports = {
  combineCommandSequences,
  COMMAND_OUTPUT_STRING,
}
