'use strict'
/**
 * The storage detector's class, as its parts (detector-deps.js, detector-files.js,
 * detector-native.js) read it at call time: its statics are the legacy module's replaceable
 * contract (a test sets `RooStorageDetector.MAX_CONVERSATION_FILE_SIZE` or replaces a static
 * method), so the parts look them up on the class itself. roo-storage-detector.js registers the
 * class once it is defined; the parts require this module, not the detector, so no module
 * requires another that requires it back.
 */

let registered = null

/** Called once by roo-storage-detector.js with its class. */
function registerDetector(cls) {
  registered = cls
}

/** The detector's class (its parts are called only through it, so it is registered by then). */
function detectorClass() {
  return registered
}

module.exports = { registerDetector, detectorClass }
