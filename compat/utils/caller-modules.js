'use strict'
/**
 * The caller's own modules next to a swapped module, reached as the legacy module imported them.
 * A replacement file hands over one importer that runs in the caller's module graph
 * (docs/drop-in.md), under a key naming the caller's folder its specifiers are relative to; the
 * `src/utils/*` replacements hand over
 *
 *     use({ utilsImport: (specifier: string) => import(specifier) })
 *
 * so that a test's `vi.mock('../cache-manager.js')` or `vi.mock('glob')` reaches compat exactly as
 * it reached the legacy module. Each specifier is imported once per importer (a module namespace is
 * live, and a legacy module bound its imports once at load too). Without an importer, or when the
 * import fails, a lookup gives `undefined` and compat uses its own equivalent.
 */
const io = require('../io.js')

/** @type {WeakMap<Function, Map<string, {promise: Promise<object | undefined>, value?: object}>>} */
const loaded = new WeakMap()

function entry(key, specifier) {
  const importer = io.mod(key)
  if (typeof importer !== 'function') return undefined
  let byName = loaded.get(importer)
  if (!byName) {
    byName = new Map()
    loaded.set(importer, byName)
  }
  let e = byName.get(specifier)
  if (!e) {
    const fresh = { promise: undefined, value: undefined }
    fresh.promise = Promise.resolve()
      .then(() => importer(specifier))
      .then(
        (m) => (fresh.value = m ?? undefined),
        () => undefined,
      )
    byName.set(specifier, fresh)
    e = fresh
  }
  return e
}

/**
 * The lookups of the importer handed over under `key`: `module(specifier)` (a promise of the
 * module or `undefined`) and `moduleNow(specifier)` (the module once its import has finished,
 * else `undefined`; it starts the import).
 */
function callerImporter(key) {
  return {
    module(specifier) {
      const e = entry(key, specifier)
      return e ? e.promise : Promise.resolve(undefined)
    },
    moduleNow(specifier) {
      return entry(key, specifier)?.value
    },
  }
}

/** A property of a (possibly mocked) module; a mock without that export reads as `undefined`. */
function exportOf(mod, name) {
  try {
    return mod ? mod[name] : undefined
  } catch {
    return undefined
  }
}

/** The `src/utils/*` replacements' importer (specifiers relative to the caller's `src/utils/`). */
const utils = callerImporter('utilsImport')

module.exports = { callerImporter, callerModule: utils.module, callerModuleNow: utils.moduleNow, exportOf }
