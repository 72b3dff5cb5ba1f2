// Usage reports through the binding on a store of N tasks (fixture tasks copied under new ids,
// see copy-store.mjs): the first report (every task's records read), a report with nothing
// changed, and a report after one task changed (the handle refreshed first). Ratios against a
// warm refresh of the handle measured in the same run. Targets at 50 000 tasks: a report
// <= 2x a warm refresh; after a one-task change <= 10 ms.
//
//   node bench/usage.mjs [tasks=50000] [group=daily]
//   node bench/usage.mjs <tasks folder> [group=daily]   (a generated store, e.g. roo-corpus
//                                                       --tasks 50000: only modification times
//                                                       are touched; the cache goes to a temp dir)
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { changeOneTask, copyStore, generatedStore, givenFolder, median, ms } from './copy-store.mjs'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const core = require(path.join(root, 'index.js'))
const given = givenFolder(process.argv[2])
const group = process.argv[3] ?? 'daily'

const { work, tasks, cacheDir, ids } = given ? generatedStore(given, 'roo-usage-bench-') : copyStore(root, Number(process.argv[2] ?? 50000), 'roo-usage-bench-')
const N = ids.length

try {
  const store = await core.TaskStore.open({ tasksDir: tasks, cacheDir })
  if (store.size !== N) throw new Error(`opened ${store.size} of ${N}`)
  let t = process.hrtime.bigint()
  const first = await store.usageReport({ group })
  const firstMs = ms(t)
  if (first.sync.read !== N) throw new Error(`the first report read ${first.sync.read} tasks`)
  const warmRefresh = await median(9, async () => {
    const r = await store.refresh()
    if (r.cache !== 'none') throw new Error('a warm refresh changed something')
  })
  const warmReport = await median(9, async () => {
    const r = await store.usageReport({ group })
    if (r.sync.read !== 0) throw new Error('a report with nothing changed read a task')
  })
  const afterChange = []
  const syncs = []
  const blocks = []
  for (let round = 0; round < 7; round++) {
    await changeOneTask(store, tasks, ids, round)
    const s = process.hrtime.bigint()
    const rep = await store.usageReport({ group })
    afterChange.push(ms(s))
    syncs.push(rep.sync.elapsedMs)
    blocks.push(`${rep.sync.blocksSummed}/${rep.sync.blocksSummed + rep.sync.blocksKept}`)
    if (rep.sync.read !== 1) throw new Error(`expected one task read, got ${rep.sync.read}`)
    if (Math.abs(rep.totals.cost - first.totals.cost) > 1e-6 * Math.max(1, first.totals.cost)) throw new Error('the totals moved after touching a file')
  }
  afterChange.sort((a, b) => a - b)
  syncs.sort((a, b) => a - b)
  const one = afterChange[3]
  const r = (x) => (x / warmRefresh).toFixed(2)
  console.log(`usage report (${group}) over ${N} tasks, ${first.totals.requests} requests, ${first.rows.length} rows`)
  console.log(`  warm refresh of the handle     ${warmRefresh.toFixed(1)} ms (baseline)`)
  console.log(`  first report (reads every task) ${firstMs.toFixed(1)} ms  (${r(firstMs)}x)`)
  console.log(`  report, nothing changed         ${warmReport.toFixed(1)} ms  (${r(warmReport)}x; target <= 2x)`)
  console.log(`  report after one task changed   ${one.toFixed(1)} ms  (${r(one)}x; target <= 10 ms; its sync ${syncs[3].toFixed(2)} ms, ${blocks[3]} of the report's blocks summed again)`)
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
