// What the compat layer costs: `RooStorageDetector.analyzeConversation` (roo-state-core/compat, files
// read through fs/promises, contents handed to the native parsers) against the binding's own
// `analyzeConversation` (files read natively) over every task of a store, same run, same
// concurrency. Prints both times and the ratio (target: compat ≤ 1.2× the binding in `fixed` mode).
//
// Usage: node bench/compat.mjs [storeDir] [--concurrency N]
//        (default store: the 5 000-task, ~850 MiB corpus of bench/scan-store.mjs, generated once with
//        the roo-corpus generator into bench/out/store-5000)
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'
import { benchTasksDir } from './store.mjs'

const require = createRequire(import.meta.url)

const args = process.argv.slice(2)
const concIdx = args.indexOf('--concurrency')
const concurrency = concIdx >= 0 ? Number(args[concIdx + 1]) : 8
const positional = args.filter((a, i) => !a.startsWith('--') && (concIdx < 0 || i !== concIdx + 1))

const tasksDir = benchTasksDir(positional[0])
const ids = fs
  .readdirSync(tasksDir, { withFileTypes: true })
  .filter((e) => e.isDirectory() && !/^[_.]/.test(e.name))
  .map((e) => e.name)

/** Runs `fn` over every id with `concurrency` calls in flight; returns elapsed ms and non-null results. */
async function timed(fn) {
  let next = 0
  let found = 0
  const t0 = process.hrtime.bigint()
  async function worker() {
    while (next < ids.length) {
      const id = ids[next++]
      const r = await fn(id, path.join(tasksDir, id))
      if (r) found++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, found }
}

const core = require('../index.js')
const { RooStorageDetector } = require('../compat/utils/roo-storage-detector.js')
const { setMode } = require('../compat/mode.js')
const { globalTaskInstructionIndex } = require('../compat/utils/task-instruction-index.js')

// Silence the legacy progress lines the compat layer prints per task.
const quiet = () => {}
console.log = quiet
console.warn = quiet
console.debug = quiet
const print = (line) => process.stdout.write(`${line}\n`)

// Warm the page cache and both code paths once.
await timed((id, dir) => core.analyzeConversation(id, dir).catch(() => null))

const rows = []
for (let round = 0; round < 2; round++) {
  const direct = await timed((id, dir) => core.analyzeConversation(id, dir).catch(() => null))
  setMode('fixed')
  const fixed = await timed((id, dir) => RooStorageDetector.analyzeConversation(id, dir, false))
  setMode('legacy')
  globalTaskInstructionIndex.clear()
  const legacy = await timed((id, dir) => RooStorageDetector.analyzeConversation(id, dir, true))
  rows.push({ direct, fixed, legacy })
}
const best = (k) => rows.reduce((a, r) => (r[k].ms < a.ms ? r[k] : a), rows[0][k])
const direct = best('direct')
const fixed = best('fixed')
const legacy = best('legacy')
print(`store: ${tasksDir} (${ids.length} tasks), ${concurrency} calls in flight, best of ${rows.length}`)
print(`binding analyzeConversation          ${direct.ms.toFixed(0).padStart(7)} ms  (${direct.found} skeletons)`)
print(`compat analyzeConversation, fixed    ${fixed.ms.toFixed(0).padStart(7)} ms  (${fixed.found})  ratio ${(fixed.ms / direct.ms).toFixed(2)}× (target ≤ 1.2×)`)
print(`compat analyzeConversation, legacy   ${legacy.ms.toFixed(0).padStart(7)} ms  (${legacy.found})  ratio ${(legacy.ms / direct.ms).toFixed(2)}×`)
