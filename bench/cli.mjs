// What a person feels at the command line on a large store, warm: a fresh `roo-state` process for
// `list --limit 20`, `show <id>`, `tree --limit 20`, `usage daily` and, with SEARCH=1, `search`
// (lexical: an index built without a model, `--embedder none`, in the cache folder), each beside
// the start of a fresh `node -e ''`, alone and then answered by the daemon (`roo-state daemon
// start`, its socket in a temporary folder, stopped at the end); the handle's warm open in a
// fresh process beside a stat walk of the task folders; a page of the tree in a resident handle;
// the whole forest's tree() beside V8's own parse of the same text. Every floor is measured in
// the same run, each figure the median of its rounds.
//
// Goals (a generated store of 50 000 tasks): each command <= 200 ms and <= 4x the node
// start; warm open <= 3x the stat walk; a tree page in a resident handle <= 10 ms; the whole-forest
// tree() <= 1.5x V8's parse.
//
//   node bench/cli.mjs <tasks folder> [rounds=7]
//     a generated store, e.g. roo-corpus --tasks 50000 --out <d>/globalStorage/rooveterinaryinc.roo-cline
//     (a path naming the host, as a real store's). The cache goes to a temporary folder, built
//     first (with the usage records): at 50 000 tasks that takes minutes; the search index of
//     SEARCH=1, most of an hour on 2 cores (9 GiB of JSON). CACHE_DIR=<dir> keeps them there
//     instead, so a second run starts warm.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { givenFolder } from './copy-store.mjs'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cli = path.join(root, 'cli', 'roo-state.mjs')
const addon = path.join(root, 'index.js')
const tasks = givenFolder(process.argv[2])
if (!tasks) {
  console.error('usage: node bench/cli.mjs <tasks folder> [rounds]')
  process.exit(2)
}
const ROUNDS = Number(process.argv[3] ?? 7)
const kept = Boolean(process.env.CACHE_DIR)
const cacheDir = kept ? path.resolve(process.env.CACHE_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'roo-cli-bench-'))
const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-cli-bench-run-'))
// The daemon opens the store a bare command line works on: this one.
const env = { ...process.env, ROO_STATE_CACHE_DIR: cacheDir, NO_COLOR: '1', ROO_STATE_RUNTIME_DIR: runtimeDir, ROO_STATE_STORAGE: path.dirname(tasks) }
// Node parses the certificates NODE_EXTRA_CA_CERTS names at every start, before any script runs
// (a system bundle of 220 kB: 60 to 90 ms on these machines). Kept, it would swell the node floor
// and flatter every ratio; every process here starts without it (the header says so).
const extraCerts = Boolean(env.NODE_EXTRA_CA_CERTS)
delete env.NODE_EXTRA_CA_CERTS
const indexDir = path.join(cacheDir, 'search-index')

const mid = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6

/** The wall time of a fresh process, as the shell sees it (median of the rounds). */
function wall(args, rounds = ROUNDS) {
  const times = []
  for (let i = 0; i < rounds; i++) {
    const t = process.hrtime.bigint()
    const r = spawnSync(process.execPath, args, { env, encoding: 'utf8', maxBuffer: 1 << 28 })
    times.push(ms(t))
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  }
  return mid(times)
}

/** A fresh node process running `script`, which prints one number: the median of the rounds. */
function inside(script, rounds = ROUNDS) {
  const times = []
  for (let i = 0; i < rounds; i++) times.push(Number(execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' }).trim()))
  return mid(times)
}

const roo = (...args) => [cli, ...args, '--tasks-dir', tasks, '-q']

try {
  // Warm: the cache, the headers' summary, the usage records and the search index written once.
  let t = process.hrtime.bigint()
  const withSearch = process.env.SEARCH === '1'
  const warm = [roo('cache', 'build'), roo('list', '--limit', '1'), roo('usage', 'daily')]
  if (withSearch) warm.push(roo('index', '--embedder', 'none', '--index-dir', indexDir))
  for (const args of warm) {
    const r = spawnSync(process.execPath, args, { env, encoding: 'utf8', stdio: ['ignore', 'ignore', 'inherit'] })
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`)
  }
  const warmup = ms(t)
  const core = require(addon)
  const store = await core.TaskStore.open({ tasksDir: tasks, cacheDir })
  const N = store.size
  const some = store.list({ sort: 'createdAt', limit: 1, offset: Math.floor(N / 2), fields: [] }).items[0].taskId

  // Floors.
  const nodeStart = wall(['-e', ''])
  const statWalk = inside(`const fs = require('fs'), path = require('path');
const t = process.hrtime.bigint();
for (const d of fs.readdirSync(${JSON.stringify(tasks)})) { try { fs.statSync(path.join(${JSON.stringify(tasks)}, d)) } catch {} }
console.log(Number(process.hrtime.bigint() - t) / 1e6)`)

  // A fresh process per command, alone, then answered by the daemon.
  const lines = [
    ['list --limit 20', roo('list', '--limit', '20')],
    [`show <id>`, roo('show', some)],
    ['tree --limit 20', roo('tree', '--limit', '20')],
    ['usage daily', roo('usage', 'daily')],
    ...(withSearch ? [['search (lexical)', roo('search', 'cache timeout', '--mode', 'lexical', '-n', '10', '--index-dir', indexDir)]] : []),
  ]
  const commands = lines.map(([name, args]) => [name, wall([...args, '--no-daemon'])])
  t = process.hrtime.bigint()
  const started = spawnSync(process.execPath, [cli, 'daemon', 'start', '--idle-minutes', '30'], { env, encoding: 'utf8' })
  if (started.status !== 0) throw new Error(`daemon start exited ${started.status}: ${started.stderr}`)
  const daemonStart = ms(t)
  // One round each first: a handle the daemon had not opened yet (usage's over several stores).
  for (const [, args] of lines) wall(args, 1)
  const answered = lines.map(([name, args]) => [name, wall(args)])

  // The warm open, in a fresh process.
  const open = inside(`const c = require(${JSON.stringify(addon)});
const t = process.hrtime.bigint();
c.TaskStore.open({ tasksDir: ${JSON.stringify(tasks)}, cacheDir: ${JSON.stringify(cacheDir)} }).then(() => console.log(Number(process.hrtime.bigint() - t) / 1e6))`)

  // A page of the tree in this (resident) handle: the newest 20 conversations and their trees.
  const pageTimes = []
  for (let i = 0; i < ROUNDS + 2; i++) {
    const s = process.hrtime.bigint()
    const page = store.list({ topOnly: true, sort: 'createdAt', limit: 20, offset: (i % 3) * 20, fields: ['createdAtMs', 'metadata'] })
    if (store.trees(page.items.map((x) => x.taskId)).length !== page.items.length) throw new Error('a tree missing')
    pageTimes.push(ms(s))
  }
  const treePage = mid(pageTimes.slice(2))

  // The whole forest: the first tree() of a fresh process, and V8 parsing the same text alone.
  const firstTree = inside(`const c = require(${JSON.stringify(addon)});
c.TaskStore.open({ tasksDir: ${JSON.stringify(tasks)}, cacheDir: ${JSON.stringify(cacheDir)} }).then((s) => {
  const t = process.hrtime.bigint(); s.tree(); console.log(Number(process.hrtime.bigint() - t) / 1e6) })`, 3)
  const forest = store.tree()
  const file = path.join(cacheDir, 'bench-tree.json')
  fs.writeFileSync(file, JSON.stringify(forest).replace(/[\u0100-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`), 'latin1')
  const parse = inside(`const text = require('fs').readFileSync(${JSON.stringify(file)}, 'latin1');
const t = process.hrtime.bigint(); JSON.parse(text); console.log(Number(process.hrtime.bigint() - t) / 1e6)`, 3)
  fs.rmSync(file)
  // The same tree in this handle after a task changed in place (the kept text patched).
  const keptTree = mid(
    [0, 1, 2].map(() => {
      const s = process.hrtime.bigint()
      store.tree()
      return ms(s)
    }),
  )

  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ')
  const row = (name, value, note = '') => console.log(`  ${name.padEnd(34)}${value.padStart(10)}   ${note}`)
  const f = (x) => `${x.toFixed(1)} ms`
  console.log(`roo-state at ${N} tasks (${tasks}; ${os.cpus().length} cores, load ${load}; warm-up ${(warmup / 1000).toFixed(1)} s; medians of ${ROUNDS})`)
  if (extraCerts) console.log('  (NODE_EXTRA_CA_CERTS is set here: every process of this bench started without it)')
  row('node -e \'\' (floor)', f(nodeStart))
  for (const [name, v] of commands) row(`roo-state ${name}`, f(v), `${(v / nodeStart).toFixed(2)}x the node start, alone (--no-daemon)`)
  row('roo-state daemon start', f(daemonStart), 'the stores opened and watched, once')
  for (const [name, v] of answered) row(`roo-state ${name}`, f(v), `${(v / nodeStart).toFixed(2)}x the node start, the daemon answering (goals: <= 200 ms, <= 4x)`)
  row('stat walk of the task folders (floor)', f(statWalk), 'readdir + a stat per folder, in a fresh process')
  row('TaskStore.open, warm', f(open), `${(open / statWalk).toFixed(2)}x the stat walk (goal <= 3x), in a fresh process`)
  row('a tree page in a resident handle', f(treePage), '20 newest conversations with their trees (goal <= 10 ms)')
  row('V8 parsing the whole tree (floor)', f(parse), `${forest.length} conversations, in a fresh process`)
  row('tree() whole, first of a process', f(firstTree), `${(firstTree / parse).toFixed(2)}x V8's parse (goal <= 1.5x)`)
  row('tree() whole, kept in a handle', f(keptTree), `${(keptTree / parse).toFixed(2)}x V8's parse`)
} finally {
  spawnSync(process.execPath, [cli, 'daemon', 'stop'], { env })
  fs.rmSync(runtimeDir, { recursive: true, force: true })
  if (!kept) fs.rmSync(cacheDir, { recursive: true, force: true })
}
