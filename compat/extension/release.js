'use strict'
/**
 * Which release of the extension compat/extension follows. Roo Code (up to 3.52.x) and Zoo Code
 * (3.53 and later) are one release line; by default the rules are today's Zoo Code (3.80+).
 * A caller that still runs Roo Code, or replays what an older release did, names the release:
 * `setExtensionRelease('3.52.1')`, or the environment variable `ROO_STATE_EXTENSION_RELEASE`
 * (`setExtensionRelease()` wins; `setExtensionRelease(null)` returns to the environment).
 *
 * Where the release matters (docs/compat-extension.md, "Releases"):
 * - the context rule: before 3.66 a `maxTokens` of -1 is reserved as it is; from 3.66 a
 *   `maxTokens` of zero or below reserves 8 192 tokens (`era` of the context functions);
 * - the task store: before 3.80 `tasks/_index.json` is read at start and written after changes,
 *   and statuses change freely; from 3.80 there is no index and statuses follow the state machine.
 */

/** `"3.52.1"`, `"v3.66"` → `[3, 52, 1]`, `[3, 66, 0]`; `null` when it is not a release number. */
function parseRelease(text) {
  const m = /^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/i.exec(String(text))
  return m ? [Number(m[1]), Number(m[2] || 0), Number(m[3] || 0)] : null
}

/** @type {string | null} */
let chosen = null

/** The release named by the caller or the environment, or `null` for today's rules. */
function extensionRelease() {
  if (chosen !== null) return chosen
  const fromEnv = process.env.ROO_STATE_EXTENSION_RELEASE
  return fromEnv && parseRelease(fromEnv) ? fromEnv.trim() : null
}

/** @param {string | null} release */
function setExtensionRelease(release) {
  if (release !== null && parseRelease(release) === null) {
    throw new TypeError(`INVALID_ARGUMENT: an extension release is a number such as "3.52.1", got ${JSON.stringify(release)}`)
  }
  chosen = release === null ? null : String(release).trim()
}

/** Whether the release followed is `major.minor` or later (today's rules are later than any). */
function releaseAtLeast(major, minor) {
  const r = parseRelease(extensionRelease() ?? '')
  if (!r) return true
  return r[0] > major || (r[0] === major && r[1] >= minor)
}

/** `options` with the followed release as its `era` unless it names one. */
function withRelease(options) {
  const release = extensionRelease()
  if (!release || !options || typeof options !== 'object' || (options.era !== undefined && options.era !== null)) return options
  return { ...options, era: release }
}

module.exports = { extensionRelease, setExtensionRelease, releaseAtLeast, withRelease }
