// Skeleton cache through the binding: a store of N tasks (fixture tasks copied under new ids),
// cold build, warm build with nothing changed (target <= 50 ms for 5 000 tasks), warm build with
// 1 % changed, and loadSkeletons. Baseline measured in the same run: stat'ing the same source
// files from Node (fs.statSync), the least a freshness check has to do.
//
//   node bench/cache.mjs [tasks=5000]
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { copyStore } from './copy-store.mjs'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const core = require(path.join(root, 'index.js'))
const N = Number(process.argv[2] ?? 5000)

const { work, tasks, cacheDir, ids } = copyStore(root, N, 'roo-cache-bench-')
const FILES = ['ui_messages.json', 'claude_messages.json', 'api_conversation_history.json', 'history_item.json', 'task_metadata.json']

function statFloor() {
  let n = 0
  for (const e of fs.readdirSync(tasks, { withFileTypes: true })) {
    if (!e.isDirectory()) continue
    for (const f of FILES) {
      const st = fs.statSync(path.join(tasks, e.name, f), { throwIfNoEntry: false })
      if (st) n += st.size > -1 ? 1 : 0
    }
  }
  return n
}

async function median(runs, fn) {
  const t = []
  for (let i = 0; i < runs; i++) {
    const s = process.hrtime.bigint()
    await fn(i)
    t.push(Number(process.hrtime.bigint() - s) / 1e6)
  }
  t.sort((a, b) => a - b)
  return t[Math.floor(t.length / 2)]
}

const t0 = process.hrtime.bigint()
const cold = await core.buildSkeletonCache({ tasksDir: tasks, cacheDir })
const coldMs = Number(process.hrtime.bigint() - t0) / 1e6
if (cold.built + cold.failed !== N) throw new Error(`cold build saw ${cold.built + cold.failed} of ${N}`)

const floor = await median(9, () => statFloor())
const warm = await median(9, async () => {
  const r = await core.buildSkeletonCache({ tasksDir: tasks, cacheDir })
  if (r.built !== 0) throw new Error('warm build parsed tasks')
})
const changed = await median(5, async (round) => {
  const when = new Date(Date.now() + (round + 1) * 1000)
  for (let i = 0; i < N; i += 100) {
    const dir = path.join(tasks, ids[i])
    const f = FILES.map((n) => path.join(dir, n)).find((p) => fs.existsSync(p))
    fs.utimesSync(f, when, when)
  }
  const r = await core.buildSkeletonCache({ tasksDir: tasks, cacheDir })
  if (r.built !== N / 100) throw new Error(`expected ${N / 100} parsed, got ${r.built}`)
})
const load = await median(5, async () => {
  const r = await core.loadSkeletons({ tasksDir: tasks, cacheDir })
  if (r.skeletons.length === 0) throw new Error('nothing served')
})

console.log(`${N} tasks (fixture copies)`)
console.log(`  cold build             ${coldMs.toFixed(0)} ms`)
console.log(`  warm, nothing changed  ${warm.toFixed(1)} ms  (target <= 50 ms; ${(warm / floor).toFixed(2)}x the fs.statSync floor of ${floor.toFixed(1)} ms; ${(coldMs / warm).toFixed(0)}x faster than cold)`)
console.log(`  warm, 1 % changed      ${changed.toFixed(1)} ms  (${(coldMs / changed).toFixed(0)}x faster than cold)`)
console.log(`  loadSkeletons          ${load.toFixed(1)} ms`)
fs.rmSync(work, { recursive: true, force: true })
