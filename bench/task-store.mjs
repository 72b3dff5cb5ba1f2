// The TaskStore handle through the binding: open (cold in a fresh process, cache built; then
// warm from the cache), a warm refresh with nothing changed, one changed task, the hierarchy
// pass, the tree (after a change in place: patched; asked again: kept; after a task was added:
// rebuilt, its unchanged runs copied; the first of a fresh process: built, beside V8's parse
// of the same text alone, its floor), a list page, the bulk transfer of every header (full, and
// the fields a list view shows), and peak RSS of a fresh process holding the handle and one
// tree. Ratios against the warm refresh measured in the same run.
//
// Goals on a generated store of 50 000 tasks (issue 31): cold open <= 4 000 ms with peak
// <= 400 MiB, warm open <= 300 ms, warm refresh <= 120 ms, tree() <= 100 ms, list({ limit: 50 })
// <= 5 ms, open + tree peak <= 300 MiB; at 5 000: warm refresh <= 25 ms, tree <= 15 ms. On the
// copies store: the headers a list view uses <= 3x the warm refresh.
//
//   node bench/task-store.mjs [tasks=5000]     (fixture tasks copied under new ids, copy-store.mjs)
//   node bench/task-store.mjs <tasks folder>   (a generated store, e.g. roo-corpus --tasks 50000
//                                              --out <d>/globalStorage/rooveterinaryinc.roo-cline:
//                                              a path naming the host, as a real store's does, so
//                                              a folder's time may stand for its files; the bench
//                                              rewrites a few task files by rename, as the host
//                                              does, and adds a task folder three times, removed
//                                              each time; the cache goes to a temp dir)
//   TASK_STORE_ADDON=<other .node> node bench/task-store.mjs ...   (another build, e.g. main's kept
//                                              aside, for a before/after in the same session)
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { addOneTask, changeOneTask, copyStore, generatedStore, givenFolder, median, ms, removeTask } from './copy-store.mjs'
import { execFileSync } from 'node:child_process'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
// TASK_STORE_ADDON: another build's .node (e.g. main's, kept aside) to compare in the same run.
const addon = process.env.TASK_STORE_ADDON ? path.resolve(process.env.TASK_STORE_ADDON) : path.join(root, 'index.js')
const core = require(addon)
const given = givenFolder(process.argv[2])
const { work, tasks, cacheDir, ids } = given
  ? generatedStore(given, 'roo-task-store-bench-')
  : copyStore(root, Number(process.argv[2] ?? 5000), 'roo-task-store-bench-')
const N = ids.length
// The median of timings taken apart (sorted in place).
const mid = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)]

// A fresh process that opens the handle (and builds the tree when asked): its open time, the
// time of its first tree, its own peak (VmHWM: a forked child's maxRSS starts from the parent's
// on Linux) and its size.
function probe(withTree) {
  const script = `const c = require(${JSON.stringify(addon)});
const t = process.hrtime.bigint();
c.TaskStore.open({ tasksDir: ${JSON.stringify(tasks)}, cacheDir: ${JSON.stringify(cacheDir)} }).then((s) => {
  const open = Number(process.hrtime.bigint() - t) / 1e6;
  const t1 = process.hrtime.bigint();
  if (${withTree} && s.tree().length === 0) throw new Error('empty tree');
  const tree = Number(process.hrtime.bigint() - t1) / 1e6;
  let peak = process.resourceUsage().maxRSS / 1024;
  try { peak = Number(/VmHWM:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]) / 1024 } catch {}
  console.log(open, tree, peak, s.size);
});`
  const [open, tree, peak, size] = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim().split(' ').map(Number)
  return { open, tree, peak, size }
}

// What V8 alone spends on a tree's text: `JSON.parse` of the same text, one-byte as the handle
// hands it over (characters above U+00FF escaped), in a fresh process without the addon (the
// median of 3). No tree() can take less in a fresh process: this is its floor on this machine.
function v8ParseAlone(tree) {
  const file = path.join(work, 'tree.json')
  const text = JSON.stringify(tree).replace(/[\u0100-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  fs.writeFileSync(file, text, 'latin1')
  const script = `const text = require('fs').readFileSync(${JSON.stringify(file)}, 'latin1');
const t = process.hrtime.bigint();
if (JSON.parse(text).length !== ${tree.length}) throw new Error('another tree');
console.log(Number(process.hrtime.bigint() - t) / 1e6);`
  const times = [0, 1, 2].map(() => Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })))
  fs.rmSync(file)
  return mid(times)
}

// A fresh process that opens the handle with every file stat'ed on each refresh (`everyFile`):
// the median of its refreshes with nothing changed.
function everyFileRefresh() {
  const script = `const c = require(${JSON.stringify(addon)});
c.TaskStore.open({ tasksDir: ${JSON.stringify(tasks)}, cacheDir: ${JSON.stringify(cacheDir)}, everyFile: true }).then(async (s) => {
  const t = [];
  for (let i = 0; i < 9; i++) { const s0 = process.hrtime.bigint(); await s.refresh(); t.push(Number(process.hrtime.bigint() - s0) / 1e6) }
  console.log(t.sort((a, b) => a - b)[4]);
});`
  return Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim())
}

// Every file of every task folder read once in a fresh process (one thread): the bytes a cold open
// parses. Run twice before the cold open: the first run says whether the store came from the disk
// (a store out of the page cache makes the cold open 3-4x slower: 13 s against 3.7 s at 50 000),
// the second is the floor the cold open is compared with, and leaves the store in the page cache
// for it.
function rawRead() {
  const script = `const fs = require('fs'), path = require('path');
const t = process.hrtime.bigint(); let bytes = 0;
for (const d of fs.readdirSync(${JSON.stringify(tasks)}, { withFileTypes: true })) {
  if (!d.isDirectory()) continue;
  const dir = path.join(${JSON.stringify(tasks)}, d.name);
  for (const f of fs.readdirSync(dir, { withFileTypes: true })) if (f.isFile()) bytes += fs.readFileSync(path.join(dir, f.name)).length;
}
console.log(Number(process.hrtime.bigint() - t) / 1e6, bytes);`
  const [ms, bytes] = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim().split(' ').map(Number)
  return { ms, bytes }
}

try {
  const firstRead = rawRead()
  const raw = rawRead()
  const cold = probe(false)
  if (cold.size !== N) throw new Error(`opened ${cold.size} of ${N}`)
  let t = process.hrtime.bigint()
  const store = await core.TaskStore.open({ tasksDir: tasks, cacheDir })
  const warmOpen = ms(t)

  let trusted = 0
  const warm = await median(9, async () => {
    const r = await store.refresh()
    if (r.cache !== 'none') throw new Error('a warm refresh changed something')
    trusted = r.foldersTrusted ?? 0
  })
  const everyFile = everyFileRefresh()
  const passes = []
  const oneChanged = await median(7, async (round) => {
    await changeOneTask(store, tasks, ids, round)
    passes.push(store.metrics().elapsedMs)
  })
  // The pass each of those refreshes ran (the median).
  const hierarchyRust = mid(passes)
  // The tree after a refresh that changed a task in place (the kept tree patched: what a view
  // pays after each message a task gets), then the same tree asked again (kept: parsed by V8
  // only).
  const patched = []
  const kept = []
  for (let round = 0; round < 5; round++) {
    await changeOneTask(store, tasks, ids, 100 + round)
    const t0 = process.hrtime.bigint()
    if (store.tree().length === 0) throw new Error('empty tree')
    patched.push(ms(t0))
    const t1 = process.hrtime.bigint()
    store.tree()
    kept.push(ms(t1))
  }
  const [tree, treeKept] = [mid(patched), mid(kept)]
  // The tree after a task was added (a copy of a top task without children): the tree is
  // rebuilt, the runs that do not show the new task copied.
  const lone = store.tree().find((n) => n.children.length === 0)
  if (!lone) throw new Error('no top task without children')
  const afterAdd = []
  for (let round = 0; round < 3; round++) {
    const added = await addOneTask(store, tasks, lone.taskId, round)
    try {
      const t0 = process.hrtime.bigint()
      store.tree()
      afterAdd.push(ms(t0))
    } finally {
      await removeTask(store, added)
    }
  }
  const treeAdded = mid(afterAdd)
  const list = await median(9, () => store.list({ limit: 50 }))
  const headers = await median(5, () => {
    if (store.headers().length !== N) throw new Error('headers')
  })
  // What a list view shows of a task: no instructions, no child messages.
  const fields = ['parentTaskId', 'metadata', 'isCompleted', 'rootTaskId', 'apiTotals', 'createdAtMs', 'lastActivityMs']
  const lean = await median(5, () => {
    if (store.headers({ fields }).length !== N) throw new Error('lean headers')
  })
  const rss = process.resourceUsage().maxRSS / 1024
  // Three fresh processes that open the handle and take one tree, as a server or a CLI run just
  // started: the median first tree, and the highest peak.
  const fresh = [probe(true), probe(true), probe(true)]
  const firstTree = mid(fresh.map((p) => p.tree))
  const openTreePeak = Math.max(...fresh.map((p) => p.peak))
  const parseAlone = v8ParseAlone(store.tree())

  const r = (x) => `${(x / warm).toFixed(2)}x`
  const row = (name, value, note = '') => console.log(`  ${name.padEnd(30)}${value.padStart(10)}   ${note}`)
  console.log(`TaskStore, ${N} tasks, ${given ? `generated store ${given}` : 'copies of fixture tasks'} (${os.cpus().length} cores)`)
  row('raw read of the task files', `${raw.ms.toFixed(0)} ms`, `${(raw.bytes / 1048576).toFixed(0)} MiB, one thread (first read: ${firstRead.ms.toFixed(0)} ms)`)
  row('open cold (cache built)', `${cold.open.toFixed(0)} ms`, `${(cold.open / raw.ms).toFixed(2)}x the raw read, peak ${cold.peak.toFixed(0)} MiB (a fresh process)`)
  row('open warm (from the cache)', `${warmOpen.toFixed(0)} ms`)
  row('refresh, nothing changed', `${warm.toFixed(1)} ms`, `(baseline; ${trusted} of ${N} folders stood for their files)`)
  row('  the same, every file stat\'ed', `${everyFile.toFixed(1)} ms`, `${r(everyFile)} (everyFile, a fresh process)`)
  row('refresh, one task changed', `${oneChanged.toFixed(1)} ms`, r(oneChanged))
  row('hierarchy pass (Rust)', `${hierarchyRust.toFixed(1)} ms`, '(median of the one-change refreshes)')
  row('tree() into JS, after a change', `${tree.toFixed(1)} ms`, `${r(tree)} (a task changed in place: patched)`)
  row('  the same tree asked again', `${treeKept.toFixed(1)} ms`, `${r(treeKept)} (kept: parsed by V8 only)`)
  row('  after a task was added', `${treeAdded.toFixed(1)} ms`, `${r(treeAdded)} (rebuilt: unchanged runs copied)`)
  row('  the first of a fresh process', `${firstTree.toFixed(1)} ms`, `${r(firstTree)} (built, median of 3 processes)`)
  row('  V8 parsing that text alone', `${parseAlone.toFixed(1)} ms`, `(a fresh process without the addon; the first tree is ${(firstTree / parseAlone).toFixed(2)}x it)`)
  row('list({ limit: 50 })', `${list.toFixed(2)} ms`, r(list))
  row('headers() into JS', `${headers.toFixed(1)} ms`, r(headers))
  row('headers({ fields }) (list view)', `${lean.toFixed(1)} ms`, r(lean))
  row('peak RSS, this whole bench', `${rss.toFixed(0)} MiB`)
  row('peak RSS, open + tree only', `${openTreePeak.toFixed(0)} MiB`, '(the highest of those 3 processes)')
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
