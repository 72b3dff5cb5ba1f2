// Cold scan of a whole store to skeletons + hierarchy, against reading the same bytes raw and
// JSON.parse of them, each in a fresh process (so peak RSS is per measurement), same run. The scan
// is measured as one call (`scanTasks` with the `hierarchy` option) and as two (the skeletons sent
// back to `reconstructHierarchy`).
//
// Usage: node bench/scan-store.mjs [storeDir]      (default: generates a 5 000-task, ~850 MiB store
//        with the roo-corpus generator into bench/out/store-5000)
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchTasksDir } from './store.mjs'

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

if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv[4])
} else {
  const tasksDir = benchTasksDir(process.argv[2])
  // Warm the page cache once so every measurement reads from memory alike.
  run('raw', tasksDir)
  const raw = run('raw', tasksDir)
  const parse = run('parse', tasksDir)
  const scan = run('scan', tasksDir)
  const twoCalls = run('scan-then-link', tasksDir)
  const mib = raw.bytes / 1024 / 1024
  console.log(`${tasksDir}: ${scan.skeletons} tasks, ${mib.toFixed(1)} MiB of task JSON`)
  console.table({
    'raw read (fs.readFileSync)': { ms: Math.round(raw.ms), 'MiB/s': +(mib / raw.ms * 1000).toFixed(0), 'x raw': 1, 'peak RSS MiB': Math.round(raw.maxRssMiB) },
    'readFileSync + JSON.parse': { ms: Math.round(parse.ms), 'MiB/s': +(mib / parse.ms * 1000).toFixed(0), 'x raw': +(parse.ms / raw.ms).toFixed(2), 'peak RSS MiB': Math.round(parse.maxRssMiB) },
    'scanTasks({ hierarchy })': { ms: Math.round(scan.ms), 'MiB/s': +(mib / scan.ms * 1000).toFixed(0), 'x raw': +(scan.ms / raw.ms).toFixed(2), 'peak RSS MiB': Math.round(scan.maxRssMiB) },
    'scanTasks, then reconstructHierarchy': { ms: Math.round(twoCalls.ms), 'MiB/s': +(mib / twoCalls.ms * 1000).toFixed(0), 'x raw': +(twoCalls.ms / raw.ms).toFixed(2), 'peak RSS MiB': Math.round(twoCalls.maxRssMiB) },
  })
  console.log(`links ${JSON.stringify(scan.links)}; in two calls: scan ${twoCalls.scanMs.toFixed(0)} ms + hierarchy ${twoCalls.hierarchyMs.toFixed(0)} ms`)
}
