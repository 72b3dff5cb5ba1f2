// Usage reports on a generated store of N tasks (roo-corpus, ~170 KiB a task, in a home laid out
// as an editor's: <home>/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks, made
// once under $TMPDIR), every figure the median of paired rounds in which the commands run in turn,
// the order rotated each round. Ratios are printed from this one run.
//
// The command line (a fresh process each time, stores found by discovery in that home):
// - `roo-state usage daily --json`, warm: the skeleton cache and the kept usage records current;
//   targets <= 0.2x the same with --no-cache (every folder read), <= 3x a warm `roo-state tree
//   --json` (the closest listing command: `roo-state list` is not there yet), and the floor any
//   listing pays, a warm `roo-state cache build`, printed beside it;
// - with SPLITRAIL=<its binary>: `splitrail stats` on the same home, side by side in the same
//   rounds; target roo-state <= 0.5x its wall time.
// The handle (one process): the first report (every task read), a report with nothing changed,
// a report after one task changed, against a warm refresh of the handle.
//
//   node bench/usage.mjs [tasks=5000] [rounds=7]
//   SPLITRAIL=/tmp/splitrail/target/release/splitrail node bench/usage.mjs
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { changeOneTask, median, ms } from './copy-store.mjs'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const core = require(path.join(root, 'index.js'))
const N = Number(process.argv[2] ?? 5000)
const ROUNDS = Number(process.argv[3] ?? 7)
const splitrail = process.env.SPLITRAIL ? path.resolve(process.env.SPLITRAIL) : null
const cli = path.join(root, 'cli', 'roo-state.mjs')

/** The bench's home (made once): a generated store where the editor keeps Roo Code's tasks. */
function home() {
  const dir = path.join(os.tmpdir(), `roo-usage-bench-${N}`, 'home')
  const storage = path.join(dir, '.config', 'Code', 'User', 'globalStorage', 'rooveterinaryinc.roo-cline')
  const tasks = path.join(storage, 'tasks')
  if (!fs.existsSync(tasks) || fs.readdirSync(tasks).length <= N) {
    const mib = String(Math.round((N * 850) / 5000))
    execFileSync('cargo', ['run', '-q', '--release', '-p', 'roo-corpus', '--', '--out', storage, '--tasks', String(N), '--target-mib', mib, '--force'], { cwd: root, stdio: 'inherit' })
  }
  return { dir, tasks }
}

const { dir: HOME, tasks } = home()
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-usage-bench-run-'))
// The same home for every command; our cache in a fresh folder of this run.
const env = { PATH: process.env.PATH, HOME, TZ: 'UTC', ROO_STATE_CACHE_DIR: path.join(work, 'cache'), LANG: 'C.UTF-8' }

/** Wall time of one command (ms), its standard output kept for the checks. */
function timed(cmd, args) {
  const t = process.hrtime.bigint()
  const r = spawnSync(cmd, args, { env, encoding: 'utf8', maxBuffer: 1 << 30 })
  const wall = ms(t)
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(0, 2000)}`)
  return { wall, out: r.stdout }
}

const node = (args) => () => timed(process.execPath, [cli, ...args])
const COMMANDS = {
  usage: node(['usage', 'daily', '--json']),
  noCache: node(['usage', 'daily', '--json', '--no-cache']),
  tree: node(['tree', '--json']),
  cacheBuild: node(['cache', 'build', '--json']),
  ...(splitrail ? { splitrail: () => timed(splitrail, ['stats']) } : {}),
}

const mid = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
const spread = (a) => `${Math.min(...a).toFixed(0)}-${Math.max(...a).toFixed(0)}`

try {
  const files = fs.readdirSync(tasks, { withFileTypes: true }).filter((e) => e.isDirectory()).length
  // The cold run: the skeleton cache built, every task's usage read and kept.
  const cold = COMMANDS.usage()
  const first = JSON.parse(cold.out)
  if (first.sync.read !== files) throw new Error(`the cold run read ${first.sync.read} of ${files} tasks`)
  const warm = JSON.parse(COMMANDS.usage().out)
  if (warm.sync.read !== 0 || warm.sync.cached !== files) throw new Error(`a warm run read ${warm.sync.read} tasks, took ${warm.sync.cached} kept`)
  const bare = JSON.parse(COMMANDS.noCache().out)
  if (JSON.stringify(bare.totals) !== JSON.stringify(warm.totals)) throw new Error('the kept records give other totals than the folders')
  if (splitrail) COMMANDS.splitrail()

  // Paired rounds: every command once per round, the order rotated.
  const names = Object.keys(COMMANDS)
  const times = Object.fromEntries(names.map((n) => [n, []]))
  const load = []
  for (let round = 0; round < ROUNDS; round++) {
    load.push(os.loadavg()[0])
    const order = names.map((_, i) => names[(i + round) % names.length])
    for (const n of order) times[n].push(COMMANDS[n]().wall)
  }
  const m = Object.fromEntries(names.map((n) => [n, mid(times[n])]))
  const per = (n) => `${m[n].toFixed(0)} ms (${spread(times[n])})`
  console.log(`usage on a generated store of ${files} tasks (${first.totals.requests} requests, ${first.rows.length} days) in ${HOME}`)
  console.log(`machine: ${os.cpus().length} cores, load average ${mid(load).toFixed(2)} (${Math.min(...load).toFixed(2)}-${Math.max(...load).toFixed(2)}) during the rounds; medians of ${ROUNDS} paired rounds, order rotated`)
  console.log(`  cold: roo-state usage daily --json      ${cold.wall.toFixed(0)} ms (skeleton cache built, every task's usage read and kept)`)
  console.log(`  roo-state usage daily --json (warm)      ${per('usage')}`)
  console.log(`  roo-state usage daily --json --no-cache  ${per('noCache')}  -> warm/no-cache ${(m.usage / m.noCache).toFixed(3)}x (target <= 0.2x)`)
  console.log(`  roo-state tree --json (warm)             ${per('tree')}  -> usage/tree ${(m.usage / m.tree).toFixed(2)}x (target <= 3x; tree is the closest listing command, roo-state list not being there)`)
  console.log(`  roo-state cache build --json (warm)      ${per('cacheBuild')}  -> usage/cache build ${(m.usage / m.cacheBuild).toFixed(2)}x (the floor of any listing)`)
  if (splitrail) {
    const pairs = times.usage.map((u, i) => u / times.splitrail[i])
    console.log(`  splitrail stats (same home)              ${per('splitrail')}  -> roo-state/splitrail ${(m.usage / m.splitrail).toFixed(3)}x (target <= 0.5x; per round ${pairs.map((p) => p.toFixed(2)).join(' ')})`)
  }

  // The handle, in this process.
  const store = await core.TaskStore.open({ tasksDir: tasks, cacheDir: path.join(work, 'handle-cache') })
  let t = process.hrtime.bigint()
  const firstReport = await store.usageReport({ group: 'daily' })
  const firstMs = ms(t)
  const warmRefresh = await median(9, async () => {
    if ((await store.refresh()).cache !== 'none') throw new Error('a warm refresh changed something')
  })
  const warmReport = await median(9, async () => {
    if ((await store.usageReport({ group: 'daily' })).sync.read !== 0) throw new Error('a report with nothing changed read a task')
  })
  const ids = fs.readdirSync(tasks, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name)
  const afterChange = []
  for (let round = 0; round < 7; round++) {
    await changeOneTask(store, tasks, ids, round)
    const s = process.hrtime.bigint()
    const rep = await store.usageReport({ group: 'daily' })
    afterChange.push(ms(s))
    if (rep.sync.read !== 1) throw new Error(`expected one task read, got ${rep.sync.read}`)
  }
  const r = (x) => (x / warmRefresh).toFixed(2)
  console.log(`  handle: warm refresh ${warmRefresh.toFixed(1)} ms (baseline); first report ${firstMs.toFixed(0)} ms (${r(firstMs)}x, every task read: ${firstReport.sync.read}); nothing changed ${warmReport.toFixed(1)} ms (${r(warmReport)}x); one task changed ${mid(afterChange).toFixed(1)} ms (${r(mid(afterChange))}x)`)
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
