'use strict'
/**
 * The storage detector's search for extension folders: for each pattern,
 * `glob(pattern, { cwd: base, absolute: true })` with the caller's `glob`, as the legacy class did.
 * Each call walks the whole folder, task folders included; on a large store six patterns cost
 * seconds. When that `glob` is the glob package's own (not a test's stand-in), Node's file
 * functions are Node's own and the platform is Linux (where glob matches names case-sensitively),
 * the patterns of the form `** /<prefix>*` are answered by one native walk of the folder that gives
 * the same entries (crates/legacy/src/name_walk.rs).
 */
const io = require('../io.js')
const binding = require('../../index.js')

/** Whether `glob` is the glob package's own function (version 9 and later), not a mock. */
function isRealGlob(glob) {
  return (
    typeof glob === 'function' &&
    !('mock' in glob) &&
    typeof glob.globSync === 'function' &&
    typeof glob.hasMagic === 'function' &&
    typeof glob.Glob === 'function'
  )
}

const MAGIC = /[*?[\]{}()!+@\\/]/

/** The `<prefix>` of a `** /<prefix>*` pattern with no other special character, else null. */
function prefixOf(pattern) {
  if (typeof pattern !== 'string' || !pattern.startsWith('**/') || !pattern.endsWith('*')) return null
  const prefix = pattern.slice(3, -1)
  return prefix && !MAGIC.test(prefix) && !prefix.startsWith('.') ? prefix : null
}

/**
 * The matches of each of `patterns` under `base`, in their order (null where `glob` throws), one
 * pattern at a time: the caller handles a pattern's matches before the next `glob` call, as the
 * legacy loop did.
 */
async function* matchesPerPattern(glob, base, patterns) {
  const prefixes = patterns.map(prefixOf)
  const walkable = prefixes.filter((p) => p !== null)
  let walked = null
  if (process.platform === 'linux' && walkable.length > 0 && isRealGlob(glob) && io.readsAreNative()) {
    try {
      walked = await binding.compatEntriesNamedWithPrefixes(base, walkable)
    } catch {
      walked = null
    }
  }
  let k = 0
  for (const [i, pattern] of patterns.entries()) {
    if (walked && prefixes[i] !== null) {
      yield walked[k++]
      continue
    }
    let matches
    try {
      matches = await glob(pattern, { cwd: base, absolute: true })
    } catch {
      matches = null
    }
    yield matches
  }
}

module.exports = { matchesPerPattern, isRealGlob, prefixOf }
