'use strict'
/**
 * The caller's modules that stand for the extension's own after the one-line swap
 * (`export * from "roo-state-core/compat/extension"` in `src/core/condense/index.ts`, …), and the
 * collaborators the extension's modules import next to them.
 *
 * In the extension, `manageContext` calls `summarizeConversation` through the condense module, and
 * `summarizeConversation` calls `maybeRemoveImageBlocks` (`../../api/transform/image-cleaning`),
 * `generateFoldedFileContext` (`./foldedFileContext`) and `TelemetryService`
 * (`@roo-code/telemetry`). A test replaces those with `vi.spyOn(condenseModule, …)` or `vi.mock(…)`.
 * When Vitest (its Vite module runner, or vite-node in Vitest 3) evaluates this package's ESM
 * entry, the runner's module graph names the modules that import it; the one whose path ends with
 * the extension's module path is the caller's module, and its collaborators are imported through
 * the same runner, from beside it, so that the test's doubles are what compat/extension calls. Anywhere else (a bundle, plain Node, this
 * package loaded from `node_modules` and so not evaluated by the runner) no caller's module is known
 * and compat/extension uses its own rules for each step.
 */

const path = require('node:path')
const { createRequire } = require('node:module')

/** The ESM entry, as the runner's graph names its file. */
const ENTRY = path.join(__dirname, 'index.mjs')
/** A source file's extension, dropped before comparing paths. */
const SOURCE_EXTENSION = /\.[cm]?[jt]sx?$/

/** `(specifier) => import(specifier)` evaluated in the ESM entry, so that it runs in the runner. */
let entryImport = null

/** Called once by the ESM entry with its own `import()`. */
function useEntryImport(importer) {
  entryImport = typeof importer === 'function' ? importer : null
}

/**
 * The modules that import this package's ESM entry, as `{file, exports}`, from the module graph of
 * the Vitest worker running this code: Vitest 4 keeps Vite's `evaluatedModules` (nodes with
 * `importers`, `file`, `exports`), Vitest 3 its `moduleCache` (entries keyed by file with
 * `importers` and `exports`). Empty anywhere else.
 */
function entryImporters() {
  const worker = globalThis.__vitest_worker__
  if (!worker) return []
  const found = []
  const graph = worker.evaluatedModules
  if (graph && graph.fileToModulesMap instanceof Map && typeof graph.getModuleById === 'function') {
    for (const entry of graph.fileToModulesMap.get(ENTRY) || []) {
      for (const id of entry.importers || []) {
        const m = graph.getModuleById(id)
        if (m && m.exports && typeof m.file === 'string') found.push({ file: m.file, exports: m.exports })
      }
    }
    return found
  }
  const cache = worker.moduleCache
  if (cache instanceof Map) {
    const entry = cache.get(ENTRY)
    for (const id of (entry && entry.importers) || []) {
      const m = cache.get(id)
      if (m && m.exports) found.push({ file: id.replace(/[?#].*$/, ''), exports: m.exports })
    }
  }
  return found
}

/**
 * The caller's module standing for the extension's `modulePath` (e.g. `core/condense/index`): a
 * module that imports this package's ESM entry and whose file, without its extension, ends with
 * `/<modulePath>`. `{file, exports}` (`exports` is the live namespace a test spies on), or `null`.
 */
function callerModule(modulePath) {
  const tail = `/${modulePath}`
  for (const m of entryImporters()) {
    if (m.file.split(path.sep).join('/').replace(SOURCE_EXTENSION, '').endsWith(tail)) return m
  }
  return null
}

/**
 * An `import()` that runs in the caller's module runner, with its mocks: the one Vitest's mocker
 * uses (Vite's module runner in Vitest 4, vite-node's executor in Vitest 3), so this package may
 * itself be loaded from `node_modules`, outside the runner; else the ESM entry's own `import()`.
 */
function runnerImport() {
  const mocker = globalThis.__vitest_mocker__
  const runner = mocker && mocker.moduleRunner
  if (runner && typeof runner.import === 'function') return (specifier) => runner.import(specifier)
  const executor = mocker && mocker.executor
  if (executor && typeof executor.resolveUrl === 'function' && typeof executor.dependencyRequest === 'function') {
    return async (specifier) => {
      const [id, file] = await executor.resolveUrl(specifier)
      return executor.dependencyRequest(id, file, [])
    }
  }
  return entryImport
}

/**
 * The module `specifier` as the caller's module would import it (a relative path from its folder,
 * a package from its `node_modules`), imported through the runner; `null` when it cannot be found
 * or fails to load.
 */
async function importBeside(caller, specifier) {
  const importer = runnerImport()
  if (!caller || !importer) return null
  try {
    const target = specifier.startsWith('.')
      ? path.resolve(path.dirname(caller.file), specifier)
      : createRequire(caller.file).resolve(specifier)
    return (await importer(target)) || null
  } catch {
    return null
  }
}

module.exports = { useEntryImport, callerModule, importBeside }
