'use strict'
// The compat mode seen by the engine and the services: the compat layer's shared setting when it
// is loaded (compat/mode.js), else ROO_STATE_COMPAT_MODE, else `legacy`. Read at each call.

function currentMode() {
  try {
    const m = require('../mode.js')
    if (m && typeof m.getMode === 'function') return m.getMode() === 'fixed' ? 'fixed' : 'legacy'
  } catch {
    // no shared setting: the environment decides
  }
  return process.env.ROO_STATE_COMPAT_MODE === 'fixed' ? 'fixed' : 'legacy'
}

module.exports = { currentMode }
