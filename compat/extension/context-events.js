'use strict'
/**
 * `packages/types/src/context-management.ts`: the `say` values that record a context-management event.
 */

const core = require('../../index.js')

/** The three `say` values that record a context-management event. */
const CONTEXT_MANAGEMENT_EVENTS = Object.freeze(core.contextManagementEvents())

function isContextManagementEvent(value) {
  return core.isContextManagementEvent(value)
}

module.exports = {
  CONTEXT_MANAGEMENT_EVENTS,
  isContextManagementEvent,
}
