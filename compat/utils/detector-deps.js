'use strict'
/**
 * The modules compat's `RooStorageDetector` calls where the legacy class imported the caller's own
 * (cache manager, instruction index, coordinator, transformer, engine, workspace detector,
 * comparator, parsing config, `glob`): the caller's through the importer its replacement file
 * hands over (compat/utils/caller-modules.js), else compat's equivalents.
 */
const { callerModule, exportOf } = require('./caller-modules.js')
const fallbacks = require('./detector-fallbacks.js')

/** The class, looked up at call time (detector-class.js). */
const { detectorClass: detector } = require('./detector-class.js')


const own = {
  index: () => require('./task-instruction-index.js'),
  coordinator: () => require('./message-extraction-coordinator.js'),
  transformer: () => require('./message-to-skeleton-transformer.js'),
  engine: () => require('./hierarchy-reconstruction-engine.js'),
}

/** The module the legacy class imported from `specifier`, else compat's equivalent. */
async function dep(specifier, fallback) {
  return (await callerModule(specifier)) ?? fallback()
}

const deps = {
  cache: async () => exportOf(await callerModule('./cache-manager.js'), 'globalCacheManager') ?? detector().cacheManager,
  index: () => dep('./task-instruction-index.js', own.index),
  coordinator: () => dep('./message-extraction-coordinator.js', own.coordinator),
  transformer: () => dep('./message-to-skeleton-transformer.js', own.transformer),
  engine: () => dep('./hierarchy-reconstruction-engine.js', own.engine),
  workspaceDetector: () => dep('./workspace-detector.js', () => ({ WorkspaceDetector: fallbacks.FileWorkspaceDetector })),
  comparator: () => dep('./skeleton-comparator.js', () => ({ SkeletonComparator: fallbacks.PlainComparator })),
  parsing: () => dep('./parsing-config.js', () => fallbacks.parsingConfig),
  glob: () => callerModule('glob'),
}

function newWorkspaceDetector(mod) {
  const WorkspaceDetector = exportOf(mod, 'WorkspaceDetector')
  return new WorkspaceDetector({ enableCache: true, validateExistence: false, normalizePaths: true })
}

module.exports = { own, deps, newWorkspaceDetector }
