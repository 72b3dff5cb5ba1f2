// Cold scan of a whole store to skeletons + hierarchy, against reading the same bytes raw and
// JSON.parse of them, each in a fresh process (so peak RSS is per measurement), same run. The scan
// is measured as one call (`scanTasks` with the `hierarchy` option) and as two (the skeletons sent
// back to `reconstructHierarchy`).
//
// Usage: node bench/scan-store.mjs [storeDir | shared] [--runs N]   (default: generates a 5 000-task,
//        ~850 MiB store with the roo-corpus generator into bench/out/store-5000; `shared`: 5 000
//        copies of ../shared/fixtures' real tasks into bench/out/shared-5000; 5 raw/scan pairs)
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchTasksDir, sharedCopiesTasksDir } from './store.mjs'

const FILES = ['ui_messages.json', 'claude_messages.json', 'api_conversation_history.json', 'history_item.json', 'task_metadata.json']

function taskFiles(tasksDir) {
  const out = []
  for (const e of fs.readdirSync(tasksDir, { withFileTypes: true })) {
    if (!e.isDirectory() || /^[_.]/.test(e.name)) continue
    for (const f of FILES) {
      const p = path.join(tasksDir, e.name, f)
      if (fs.existsSync(p)) out.push(p)
    }
  }
  return out
}

async function child(kind, tasksDir) {
  const t0 = process.hrtime.bigint()
  let detail = {}
  if (kind === 'raw') {
    let bytes = 0
    for (const f of taskFiles(tasksDir)) bytes += fs.readFileSync(f).length
    detail = { bytes }
  } else if (kind === 'parse') {
    for (const f of taskFiles(tasksDir)) {
      try { JSON.parse(fs.readFileSync(f, 'utf8')) } catch { /* generated truncated files */ }
    }
  } else if (kind === 'scan') {
    // One call: skeletons and their links, the hierarchy pass run in Rust on the scan's own result.
    const core = createRequire(import.meta.url)('../index.js')
    const scan = await core.scanTasks(tasksDir, { hierarchy: {} })
    detail = { skeletons: scan.skeletons.length, links: scan.hierarchy.linksBySource }
  } else if (kind === 'scan-then-link') {
    // Two calls: the skeletons cross into JS, then back into Rust for the hierarchy pass.
    const core = createRequire(import.meta.url)('../index.js')
    const scan = await core.scanTasks(tasksDir)
    const scanned = process.hrtime.bigint()
    const { metrics } = await core.reconstructHierarchy(scan.skeletons)
    detail = {
      skeletons: scan.skeletons.length,
      scanMs: Number(scanned - t0) / 1e6,
      hierarchyMs: Number(process.hrtime.bigint() - scanned) / 1e6,
      links: metrics.linksBySource,
    }
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  process.stdout.write(JSON.stringify({ kind, ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, ...detail }))
}

function run(kind, tasksDir) {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', kind, tasksDir], {
    maxBuffer: 1 << 24,
  })
  return JSON.parse(out.toString())
}

/** The middle value of `xs` (the mean of the two middle ones for an even count). */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv[4])
} else {
  const args = process.argv.slice(2)
  const runsAt = args.indexOf('--runs')
  const runs = runsAt >= 0 ? Math.max(1, Number(args.splice(runsAt, 2)[1]) || 1) : 5
  const tasksDir = args[0] === 'shared' ? sharedCopiesTasksDir() : benchTasksDir(args[0])
  // Warm the page cache once so every measurement reads from memory alike.
  run('raw', tasksDir)
  // The raw read and the scan in alternating pairs: both swing by tens of per cent from one run
  // to the next on a shared machine, so each pair gives a ratio and the median ratio is reported.
  const pairs = []
  for (let i = 0; i < runs; i++) pairs.push({ raw: run('raw', tasksDir), scan: run('scan', tasksDir) })
  const ratios = pairs.map((p) => p.scan.ms / p.raw.ms)
  const mid = pairs.map((p, i) => ({ p, r: ratios[i] })).sort((a, b) => a.r - b.r)[(runs - 1) >> 1].p
  const { raw, scan } = mid
  const parse = run('parse', tasksDir)
  const twoCalls = run('scan-then-link', tasksDir)
  const mib = raw.bytes / 1024 / 1024
  console.log(`${tasksDir}: ${scan.skeletons} tasks, ${mib.toFixed(1)} MiB of task JSON`)
  console.table({
    'raw read (fs.readFileSync)': { ms: Math.round(raw.ms), 'MiB/s': +(mib / raw.ms * 1000).toFixed(0), 'x raw': 1, 'peak RSS MiB': Math.round(raw.maxRssMiB) },
    'readFileSync + JSON.parse': { ms: Math.round(parse.ms), 'MiB/s': +(mib / parse.ms * 1000).toFixed(0), 'x raw': +(parse.ms / raw.ms).toFixed(2), 'peak RSS MiB': Math.round(parse.maxRssMiB) },
    'scanTasks({ hierarchy })': { ms: Math.round(scan.ms), 'MiB/s': +(mib / scan.ms * 1000).toFixed(0), 'x raw': +(scan.ms / raw.ms).toFixed(2), 'peak RSS MiB': Math.round(scan.maxRssMiB) },
    'scanTasks, then reconstructHierarchy': { ms: Math.round(twoCalls.ms), 'MiB/s': +(mib / twoCalls.ms * 1000).toFixed(0), 'x raw': +(twoCalls.ms / raw.ms).toFixed(2), 'peak RSS MiB': Math.round(twoCalls.maxRssMiB) },
  })
  const fmt = (xs) => xs.map((x) => x.toFixed(2)).join(' ')
  console.log(`scan / raw over ${runs} pairs: median ${median(ratios).toFixed(2)}, range ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} (${fmt(ratios)}); the table shows the median pair`)
  console.log(`raw ms ${pairs.map((p) => Math.round(p.raw.ms)).join(' ')}; scan ms ${pairs.map((p) => Math.round(p.scan.ms)).join(' ')}; scan peak RSS MiB ${pairs.map((p) => Math.round(p.scan.maxRssMiB)).join(' ')}`)
  console.log(`links ${JSON.stringify(scan.links)}; in two calls: scan ${twoCalls.scanMs.toFixed(0)} ms + hierarchy ${twoCalls.hierarchyMs.toFixed(0)} ms`)
}
