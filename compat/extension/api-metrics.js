'use strict'
/**
 * `src/shared/getApiMetrics.ts` (`consolidateTokenUsage` of `packages/core`): a task's totals from
 * its UI messages, and whether they or the tool usage changed.
 */

const core = require('../../index.js')
const { getMode } = require('../mode.js')
const legacy = require('./legacy.js')
const { array } = require('./shared.js')

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

module.exports = {
  getApiMetrics,
  consolidateTokenUsage: getApiMetrics,
  hasTokenUsageChanged,
  hasToolUsageChanged,
}
