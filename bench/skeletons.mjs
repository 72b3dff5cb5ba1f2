// Skeleton building through the binding, next to fs.readFileSync and JSON.parse of the same bytes,
// measured in the same run. Usage: node bench/skeletons.mjs [tasksDir ...]
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const core = createRequire(import.meta.url)('../index.js')
const FILES = ['ui_messages.json', 'claude_messages.json', 'api_conversation_history.json', 'history_item.json', 'task_metadata.json']

const roots = process.argv.slice(2).length
  ? process.argv.slice(2)
  : [
      path.join(here, '../../shared/fixtures/legacy-tasks/real-tasks'),
      path.join(here, '../../shared/fixtures/legacy-tasks/controlled-hierarchy'),
      ...fs.readdirSync(path.join(here, '../fixtures/stores')).map(s => path.join(here, '../fixtures/stores', s, 'tasks')),
    ].filter(p => fs.existsSync(p))

const tasks = roots.flatMap(r =>
  fs.readdirSync(r, { withFileTypes: true }).filter(e => e.isDirectory() && !/^[_.]/.test(e.name)).map(e => path.join(r, e.name)),
)
const files = tasks.flatMap(t => FILES.map(f => path.join(t, f))).filter(f => fs.statSync(f, { throwIfNoEntry: false })?.isFile())
const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0)
const mib = bytes / 1024 / 1024

async function median(fn, runs = 15) {
  const times = []
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint()
    await fn()
    times.push(Number(process.hrtime.bigint() - t) / 1e9)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(runs / 2)]
}

const readRaw = () => { for (const f of files) fs.readFileSync(f) }
const readParse = () => {
  for (const f of files) {
    try { JSON.parse(fs.readFileSync(f, 'utf8')) } catch { /* damaged fixtures */ }
  }
}
const analyzeEach = () => Promise.all(tasks.map(t => core.analyzeConversation(path.basename(t), t, { includeSequence: false }).catch(() => null)))
const scanAll = () => Promise.all(roots.map(r => core.scanTasks(r)))

await scanAll()
const raw = await median(readRaw)
const parse = await median(readParse)
const analyze = await median(analyzeEach)
const scan = await median(scanAll)
console.log(`${tasks.length} tasks, ${mib.toFixed(2)} MiB of task JSON (median of 15 runs)`)
console.table({
  'fs.readFileSync': { 'MiB/s': +(mib / raw).toFixed(1), 'x raw read': 1 },
  'readFileSync + JSON.parse': { 'MiB/s': +(mib / parse).toFixed(1), 'x raw read': +(parse / raw).toFixed(2) },
  'analyzeConversation (headers)': { 'MiB/s': +(mib / analyze).toFixed(1), 'x raw read': +(analyze / raw).toFixed(2) },
  'scanTasks (headers)': { 'MiB/s': +(mib / scan).toFixed(1), 'x raw read': +(scan / raw).toFixed(2) },
})
console.log(`scanTasks / JSON.parse: ${(scan / parse).toFixed(2)}x the time`)
