// The TaskStore handle through the binding, on a store of N tasks (fixture tasks copied under new
// ids, see copy-store.mjs): open (cold, then warm from the cache), a warm refresh with nothing
// changed, one changed task, the hierarchy pass, the bulk transfer of every header, and peak RSS.
// Ratios against the warm refresh measured in the same run (targets at 5 000 tasks: one change
// <= 3x, headers into JS <= 3x, warm refresh <= 50 ms; at 50 000: warm refresh <= 250 ms,
// hierarchy <= 100 ms in Rust, peak RSS <= 400 MiB for open + tree).
//
//   node bench/task-store.mjs [tasks=5000]
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { changeOneTask, copyStore, median, ms } from './copy-store.mjs'
import { execFileSync } from 'node:child_process'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const core = require(path.join(root, 'index.js'))
const N = Number(process.argv[2] ?? 5000)

const { work, tasks, cacheDir, ids } = copyStore(root, N, 'roo-task-store-bench-')


let t = process.hrtime.bigint()
const first = await core.TaskStore.open({ tasksDir: tasks, cacheDir })
const coldOpen = ms(t)
if (first.size !== N) throw new Error(`opened ${first.size} of ${N}`)
t = process.hrtime.bigint()
const store = await core.TaskStore.open({ tasksDir: tasks, cacheDir })
const warmOpen = ms(t)

const warm = await median(9, async () => {
  const r = await store.refresh()
  if (r.cache !== 'none') throw new Error('a warm refresh changed something')
})
const passes = []
const oneChanged = await median(7, async (round) => {
  await changeOneTask(store, tasks, ids, round)
  passes.push(store.metrics().elapsedMs)
})
const headers = await median(5, () => {
  const h = store.headers()
  if (h.length !== N) throw new Error('headers')
})
const tree = await median(5, () => store.tree())
// The pass each of those refreshes ran (the median).
const hierarchyRust = passes.sort((a, b) => a - b)[Math.floor(passes.length / 2)]
const list = await median(9, () => store.list({ limit: 50 }))
const rss = process.resourceUsage().maxRSS / 1024
// Peak RSS of a process that only opens the handle (warm cache) and builds the tree, as a server
// showing the task tree does.
const probe = `const c = require(${JSON.stringify(path.join(root, 'index.js'))});
c.TaskStore.open({ tasksDir: ${JSON.stringify(tasks)}, cacheDir: ${JSON.stringify(cacheDir)} }).then((s) => {
  if (s.tree().length === 0) throw new Error('empty tree');
  // VmHWM: this process's own peak (a forked child's maxRSS starts from the parent's on Linux).
  let peak = process.resourceUsage().maxRSS / 1024;
  try { peak = Number(/VmHWM:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]) / 1024 } catch {}
  console.log(peak, s.metrics().elapsedMs);
});`
const [openTreeRss, probeHierarchyMs] = execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' }).trim().split(' ').map(Number)
if (process.env.BENCH_DEBUG) console.log('probe hierarchy ms', probeHierarchyMs, 'handle', store.metrics().elapsedMs)

const r = (x) => (x / warm).toFixed(2)
console.log(`TaskStore, ${N} tasks (${os.cpus().length} cores)`)
console.log(`  open cold (cache built)      ${coldOpen.toFixed(0)} ms`)
console.log(`  open warm (from the cache)   ${warmOpen.toFixed(0)} ms`)
console.log(`  refresh, nothing changed     ${warm.toFixed(1)} ms   (baseline)`)
console.log(`  refresh, one task changed    ${oneChanged.toFixed(1)} ms   ${r(oneChanged)}x the warm refresh`)
console.log(`  hierarchy pass (Rust)        ${hierarchyRust.toFixed(1)} ms   (median of the one-change refreshes)`)
console.log(`  headers() into JS            ${headers.toFixed(1)} ms   ${r(headers)}x the warm refresh`)
console.log(`  tree()                       ${tree.toFixed(1)} ms`)
console.log(`  list({ limit: 50 })          ${list.toFixed(2)} ms`)
console.log(`  peak RSS, this whole bench    ${rss.toFixed(0)} MiB`)
console.log(`  peak RSS, open + tree only   ${openTreeRss.toFixed(0)} MiB   (a fresh process)`)
fs.rmSync(work, { recursive: true, force: true })
