'use strict'
/**
 * The compat layer's mode, read at each call by every compat module:
 * - `legacy` (default): the legacy modules' behaviour bit for bit, quirks included;
 * - `fixed`: the same shapes, names and errors, with correct values from the engine.
 * `setMode()` wins over the environment variable `ROO_STATE_COMPAT_MODE`; `setMode(null)` returns
 * to the environment.
 */

/** @type {'legacy' | 'fixed' | null} */
let chosen = null

function normalise(value) {
  return value === 'fixed' ? 'fixed' : value === 'legacy' ? 'legacy' : null
}

/** @returns {'legacy' | 'fixed'} */
function getMode() {
  return chosen ?? normalise(process.env.ROO_STATE_COMPAT_MODE) ?? 'legacy'
}

/** @param {'legacy' | 'fixed' | null} mode */
function setMode(mode) {
  if (mode !== null && normalise(mode) === null) {
    throw new TypeError(`INVALID_ARGUMENT: compat mode must be 'legacy' or 'fixed', got ${JSON.stringify(mode)}`)
  }
  chosen = mode === null ? null : normalise(mode)
}

module.exports = { getMode, setMode }
