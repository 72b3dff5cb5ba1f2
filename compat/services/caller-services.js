'use strict'
/**
 * The caller's own modules next to the swapped services (the legacy server's `src/services/*`):
 * its error classes (`../types/errors.js`), its storage detector, the Claude and archive tiers of
 * the skeleton cache and the dual-write helper, reached as the legacy services imported them. A
 * replacement file hands over one importer that runs in the caller's module graph
 * (docs/drop-in.md):
 *
 *     use({ servicesImport: (specifier: string) => import(specifier) })
 *
 * with specifiers relative to the caller's `src/services/`, so that a test's
 * `vi.mock('../utils/roo-storage-detector.js')` or `vi.mock('./unified-store/dual-write.js')`
 * reaches compat, and errors are instances of the caller's own classes. The importer is looked up
 * and its modules kept by `callerImporter` (compat/utils/caller-modules.js), the one cache the
 * `src/utils/*` replacements' importer goes through too: each specifier is imported once per
 * importer. Without an importer, or when the import fails, the lookups give `undefined` and the
 * services use their own equivalents.
 */
const { callerImporter, exportOf } = require('../utils/caller-modules.js')

const KEY = 'servicesImport'

const services = callerImporter(KEY)

/** The caller's module at `specifier`, or `undefined` (no importer, or the import failed). */
const serviceModule = services.module

/** The caller's module when its import has already finished (starts it otherwise). */
const serviceModuleNow = services.moduleNow

/**
 * `mod[name]`, or `undefined`. A test runner's factory mock throws on a name its factory did not
 * return; the legacy code would not have used such a name either.
 */
const pick = exportOf

const ERRORS = '../types/errors.js'

/** The caller's error classes where it has them, else ours (compat/services/errors.js). */
function errorClassesOf(mod) {
  const own = require('./errors.js')
  return {
    StateManagerError: pick(mod, 'StateManagerError') ?? own.StateManagerError,
    ExportConfigManagerError: pick(mod, 'ExportConfigManagerError') ?? own.ExportConfigManagerError,
  }
}

const errorClasses = async () => errorClassesOf(await serviceModule(ERRORS))
const errorClassesNow = () => errorClassesOf(serviceModuleNow(ERRORS))

/** The caller's `RooStorageDetector` when it has one, else compat's. */
async function storageDetector() {
  const theirs = pick(await serviceModule('../utils/roo-storage-detector.js'), 'RooStorageDetector')
  return theirs ?? require('../utils/roo-storage-detector.js').RooStorageDetector
}

module.exports = {
  serviceModule,
  serviceModuleNow,
  pick,
  errorClasses,
  errorClassesNow,
  storageDetector,
  SERVICES_IMPORT_KEY: KEY,
}
