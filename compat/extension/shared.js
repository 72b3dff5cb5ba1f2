'use strict'
/**
 * Helpers the modules of compat/extension share: argument checks as the extension fails on them,
 * the shapes of results the extension hands back (its own arrays and objects where it returns them
 * unchanged), JavaScript's arithmetic on token counts, and the extension's module whose
 * collaborators compat/extension calls through the caller's copy.
 */

/** The extension's module whose collaborators compat/extension calls through the caller's copy. */
const CONDENSE_MODULE = 'core/condense/index'

/** Drops the fields the binding adds beyond the extension's result types. */
function extensionShape(result) {
  const { errorKey, thresholdWarning, ...rest } = result
  void errorKey
  void thresholdWarning
  return rest
}

/**
 * After a truncation, the messages the extension leaves untouched are the caller's objects; only
 * the tagged ones and the marker are new.
 */
function reuseAfterTruncation(input, output, truncationId) {
  const out = output.slice()
  let j = 0
  for (let i = 0; i < out.length; i++) {
    const m = out[i]
    if (m && m.isTruncationMarker && m.truncationId === truncationId) continue
    const before = input[j]
    const taggedNow = Boolean(m && m.truncationParent === truncationId && !(before && before.truncationParent === truncationId))
    if (j < input.length && !taggedNow) out[i] = before
    j++
  }
  return out
}

/** After a fresh-start summary, messages that already had a `condenseParent` are the caller's objects. */
function reuseAfterSummary(input, output) {
  if (output.length !== input.length + 1) return output
  const out = output.slice()
  for (let i = 0; i < input.length; i++) {
    if (input[i] && input[i].condenseParent) out[i] = input[i]
  }
  return out
}

/**
 * `undefined` where the extension expects an array: a `TypeError` (the extension's own failure) whose
 * message and code follow the binding's argument errors.
 */
function array(name, v) {
  if (v === undefined) {
    throw Object.assign(new TypeError(`INVALID_ARGUMENT: ${name}: expected an array, got undefined`), { code: 'InvalidArg' })
  }
  return v
}

function isHeadEra(options) {
  return !options || options.era === undefined || options.era === null
}

/** Token counts as JavaScript arithmetic sees them: `null` adds 0, anything else not a number is NaN. */
function tokenNumber(v) {
  if (typeof v === 'number') return v
  if (v === null) return 0
  return Number.NaN
}

function optionalTokenNumber(v) {
  return typeof v === 'number' ? v : undefined
}

module.exports = {
  CONDENSE_MODULE,
  extensionShape,
  reuseAfterTruncation,
  reuseAfterSummary,
  array,
  isHeadEra,
  tokenNumber,
  optionalTokenNumber,
}
