// The harness of the fault injection (scripts/fault-injection.mjs): the command line it was
// given, the scratch folder and environment every case runs in, the runner of the `roo-state`
// command with its time and memory bounds, the outcomes, stores made from the fixtures, hash
// manifests, and a raw MCP session.
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..')
export const { values: argv } = parseArgs({
  options: {
    kills: { type: 'string', default: '5' },
    seed: { type: 'string', default: '36' },
    tasks: { type: 'string', default: '300' },
    only: { type: 'string' },
    root: { type: 'string' },
  },
})
export const CLI = path.join(argv.root ? path.resolve(argv.root) : root, 'cli', 'roo-state.mjs')
export const N = Number(argv.tasks)
/** Exit codes of ours (errors.mjs EXIT): anything else is a crash. */
export const OUR_EXITS = new Set([0, 1, 2, 3, 4, 5, 6, 130])
export const TASK_FILES = ['ui_messages.json', 'claude_messages.json', 'api_conversation_history.json', 'history_item.json', 'task_metadata.json']

export const work = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-state-faults-'))
// No backtrace unless asked: a panic's backtrace on standard error is a crash of its own here.
export const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ROO_STATE_') && k !== 'RUST_BACKTRACE')),
  TMPDIR: path.join(work, 'tmp'),
  XDG_RUNTIME_DIR: path.join(work, 'run'),
  HOME: path.join(work, 'home'),
  XDG_CONFIG_HOME: path.join(work, 'home', '.config'),
  XDG_CACHE_HOME: path.join(work, 'home', '.cache'),
  ROO_STATE_CONFIG_DIR: path.join(work, 'config'),
  ROO_STATE_DATA_DIR: path.join(work, 'data'),
}
fs.mkdirSync(env.HOME, { recursive: true })
fs.mkdirSync(env.TMPDIR, { recursive: true })
fs.mkdirSync(env.XDG_RUNTIME_DIR, { recursive: true, mode: 0o700 })

export const results = []
export function record(group, name, outcome, detail = '') {
  results.push({ group, name, outcome, detail })
  process.stdout.write(`${outcome.padEnd(8)} ${group} / ${name}${detail ? ` — ${detail}` : ''}\n`)
}

/** The resident size of process `pid` in MiB (0 once it is gone). */
export function rssMiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : 0
  } catch {
    return 0
  }
}

/**
 * Run the CLI; `killAfter` ms: kill -9 then; `maxMiB`: kill -9 once its resident size passes
 * that. Resolves {code, signal, out, err, hung, peakMiB, overMemory}.
 */
export function cli(args, { killAfter, timeoutMs = 120_000, extraEnv = {}, maxMiB } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...env, ...extraEnv }, cwd: work, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let hung = false
    let peakMiB = 0
    let overMemory = false
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const killer = killAfter === undefined ? null : setTimeout(() => child.kill('SIGKILL'), killAfter)
    const limit = setTimeout(() => {
      hung = true
      child.kill('SIGKILL')
    }, timeoutMs)
    const watch = setInterval(() => {
      peakMiB = Math.max(peakMiB, rssMiB(child.pid))
      if (maxMiB !== undefined && peakMiB > maxMiB && !overMemory) {
        overMemory = true
        child.kill('SIGKILL')
      }
    }, 50)
    child.on('exit', (code, signal) => {
      clearTimeout(limit)
      clearInterval(watch)
      if (killer) clearTimeout(killer)
      resolve({ code, signal, out, err, hung, peakMiB: Math.round(peakMiB), overMemory })
    })
  })
}

export function json(r) {
  try {
    return JSON.parse(r.out)
  } catch {
    return null
  }
}

/** The outcome of a command that must end on its own: crashed or hung, else null. */
export function badEnd(r) {
  if (r.hung) return 'hung'
  if (r.overMemory) return 'crashed'
  if (r.signal || !OUR_EXITS.has(r.code)) return 'crashed'
  if (/panicked at|stack backtrace:/.test(r.err)) return 'crashed'
  return null
}

/** Why `r` ended badly, for the case's line. */
export function endDetail(r) {
  if (r.overMemory) return `killed at ${r.peakMiB} MiB resident`
  if (r.hung) return 'no end within the time limit'
  if (/panicked at|stack backtrace:/.test(r.err)) return `a panic on standard error: ${r.err.split('\n').find((l) => /panicked at/.test(l)) ?? 'stack backtrace'}`
  return `exit ${r.code ?? r.signal}`
}

// ------------------------------------------------------------------------------------------------
// Stores

export const fixtureTasks = ['history-item-v3.50', 'native-tools-v3.45', 'stack-era-v3.20', 'v2-wrapper', 'claude-dev-2024'].flatMap((s) => {
  const dir = path.join(root, 'fixtures', 'stores', s, 'tasks')
  return fs.readdirSync(dir).filter((n) => !n.startsWith('_') && !n.startsWith('.')).map((n) => path.join(dir, n))
})

/** A store of `n` tasks copied from the fixtures, each with checkpoint data, some without a history item. */
export function makeStore(dir, n = N) {
  const tasks = path.join(dir, 'tasks')
  fs.mkdirSync(tasks, { recursive: true })
  const ids = []
  for (let i = 0; i < n; i++) {
    const id = crypto.randomUUID()
    const t = path.join(tasks, id)
    fs.cpSync(fixtureTasks[i % fixtureTasks.length], t, { recursive: true })
    fs.mkdirSync(path.join(t, 'checkpoints', 'objects'), { recursive: true })
    fs.writeFileSync(path.join(t, 'checkpoints', 'objects', 'pack'), crypto.randomBytes(2048))
    if (i % 3 === 0) fs.rmSync(path.join(t, 'history_item.json'), { force: true })
    const old = new Date(Date.now() - 90 * 86_400_000)
    for (const f of TASK_FILES) if (fs.existsSync(path.join(t, f))) fs.utimesSync(path.join(t, f), old, old)
    ids.push(id)
  }
  return { tasks, ids }
}

/** Task files under a tasks folder: relative path → SHA-256. */
export function manifest(tasks) {
  const out = new Map()
  for (const id of fs.existsSync(tasks) ? fs.readdirSync(tasks) : []) {
    for (const f of TASK_FILES) {
      const p = path.join(tasks, id, f)
      if (fs.existsSync(p) && fs.statSync(p).isFile()) out.set(`${id}/${f}`, crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex'))
    }
  }
  return out
}

/** Files of `before` missing or altered in `after` (a history item may be rewritten by a rebuild, as valid JSON). */
export function losses(before, afterDir, { historyMayChange = false } = {}) {
  const after = manifest(afterDir)
  const lost = []
  for (const [rel, hash] of before) {
    if (!after.has(rel)) lost.push(`${rel} missing`)
    else if (after.get(rel) !== hash) {
      const ok = historyMayChange && rel.endsWith('history_item.json') && isJsonObject(path.join(afterDir, rel))
      if (!ok) lost.push(`${rel} altered`)
    }
  }
  return lost
}

export function isJsonObject(p) {
  try {
    const v = JSON.parse(fs.readFileSync(p, 'utf8'))
    return v !== null && typeof v === 'object'
  } catch {
    return false
  }
}

export function leftovers(tasks) {
  const found = []
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name))
      else if (/\.tmp-\d+-\d+$/.test(e.name)) found.push(path.join(d, e.name))
    }
  }
  if (fs.existsSync(tasks)) walk(tasks)
  return found
}



export function filesUnder(d) {
  const out = []
  if (!fs.existsSync(d)) return out
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name)
    if (e.isDirectory()) out.push(...filesUnder(p))
    else out.push(p)
  }
  return out.sort()
}

export const cut = (p) => fs.writeFileSync(p, fs.readFileSync(p).subarray(0, Math.floor(fs.statSync(p).size / 2)))
export const zero = (p) => fs.writeFileSync(p, Buffer.alloc(fs.statSync(p).size))


export function mcpSession(args) {
  const child = spawn(process.execPath, [CLI, 'mcp', ...args], { env: { ...env, ROO_STATE_MCP_MAX_MESSAGE_BYTES: String(256 * 1024) }, cwd: work, stdio: ['pipe', 'pipe', 'pipe'] })
  const answers = new Map()
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
    let nl
    while ((nl = out.indexOf('\n')) !== -1) {
      const m = JSON.parse(out.slice(0, nl))
      out = out.slice(nl + 1)
      if ('id' in m) answers.set(JSON.stringify(m.id), m)
    }
  })
  child.stderr.on('data', () => {})
  return {
    raw: (s) => child.stdin.write(`${s}\n`),
    send(m) {
      this.raw(JSON.stringify(m))
    },
    async answer(id, ms = 30_000) {
      for (let t = 0; t < ms / 50 && !answers.has(JSON.stringify(id)); t++) await new Promise((r) => setTimeout(r, 50))
      return answers.get(JSON.stringify(id)) ?? null
    },
    alive: () => child.exitCode === null,
    close: () => new Promise((r) => {
      child.once('exit', r)
      child.stdin.end()
    }),
  }
}

/** Every file under `dir` with its SHA-256 (a link by what it points at, never followed). */
export function projectManifest(dir) {
  const hash = (p) => (fs.lstatSync(p).isSymbolicLink() ? `-> ${fs.readlinkSync(p)}` : crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex'))
  return filesUnder(dir).map((p) => `${path.relative(dir, p)} ${hash(p)}`).join('\n')
}
