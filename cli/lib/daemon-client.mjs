// The command line's side of the daemon (`roo-state daemon start`): where its socket is, which
// runs it may answer, and the one round trip that hands it a command line and prints its answer.
//
// This module is loaded before anything else of the command line, so it loads nothing but Node's
// own modules and argv.mjs (which loads none): a run the daemon answers costs Node's start and
// this round trip. Whatever goes wrong on the way (no daemon, a daemon of another build or
// environment, a socket that is not ours) leaves the run to this process, as if there were no
// daemon.
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import process from 'node:process'
import { fileURLToPath } from 'node:url'
import { commandWordsAt } from './argv.mjs'

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The commands a daemon answers: they read the stores and write nothing into them. */
const ANSWERED = new Set(['list', 'show', 'tree', 'usage'])

/** Options that keep a run in its own process (help, an uncached read, a live redraw). */
const OWN_PROCESS = new Set(['--help', '-h', '--version', '-V', '--no-cache', '--watch', '--no-daemon'])

/**
 * Environment variables that change an answer: the daemon serves only runs whose values are its
 * own (they are part of its socket's name). Colours and the pager are the client's business.
 */
const ANSWER_ENV = /^(ROO_STATE_|ROO_SEARCH_|ROO_MODEL_|QDRANT_|EMBEDDING_|XDG_(CONFIG|CACHE|DATA|STATE)_HOME$|TZ$|HOME$|USERPROFILE$|APPDATA$|LOCALAPPDATA$)/
const CLIENT_ENV = new Set(['ROO_STATE_PAGER', 'ROO_STATE_NO_DAEMON', 'ROO_STATE_NO_HINTS', 'ROO_STATE_HINT_AFTER_MS'])

/** How long a run alone may take before it suggests the daemon (ms). */
const SLOW_MS = 200

/** Whether a daemon may answer this command line. */
export function answeredByDaemon(argv, env = process.env) {
  if (env.ROO_STATE_NO_DAEMON === '1') return false
  if (argv.some((a) => OWN_PROCESS.has(a.replace(/=.*$/, '')))) return false
  const [at] = commandWordsAt(argv, 1)
  return at !== undefined && ANSWERED.has(argv[at])
}

/** A 64-bit FNV-1a hash of `text`, as 16 hexadecimal digits. */
function fnv64(text) {
  let h = 0xcbf29ce484222325n
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= BigInt(byte)
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return h.toString(16).padStart(16, '0')
}

/**
 * What a daemon must share with a run to answer it as the run would answer itself: this build
 * (the package's version, where it is, its native addons) and the environment that changes an
 * answer.
 */
export function daemonKey(env = process.env) {
  let version = ''
  let addons = []
  try {
    version = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')).version
    addons = fs
      .readdirSync(packageRoot)
      .filter((n) => n.endsWith('.node'))
      .sort()
      .map((n) => {
        const st = fs.statSync(path.join(packageRoot, n))
        return [n, st.size, st.mtimeMs]
      })
  } catch {
    // A package that cannot be read is still a build: the key holds what could be.
  }
  const vars = Object.keys(env)
    .filter((k) => ANSWER_ENV.test(k) && !CLIENT_ENV.has(k))
    .sort()
    .map((k) => [k, env[k]])
  return fnv64(JSON.stringify([packageRoot, version, addons, vars]))
}

/**
 * The folder of this user's daemon sockets: ROO_STATE_RUNTIME_DIR, else `roo-state` in
 * XDG_RUNTIME_DIR, else `roo-state-<uid>` in the temporary folder. `null` on Windows, where the
 * daemon does not run yet (it would need a named pipe only its user may open).
 */
export function runtimeDir(env = process.env) {
  if (process.platform === 'win32') return null
  const dir = env.ROO_STATE_RUNTIME_DIR || (env.XDG_RUNTIME_DIR ? path.join(env.XDG_RUNTIME_DIR, 'roo-state') : path.join(os.tmpdir(), `roo-state-${process.getuid?.() ?? 'user'}`))
  return path.resolve(dir)
}

/** Whether `dir` belongs to this user and no one else may enter it (as tmux checks its folder). */
export function ownFolder(dir) {
  try {
    const st = fs.lstatSync(dir)
    return st.isDirectory() && (process.getuid === undefined || st.uid === process.getuid()) && (st.mode & 0o077) === 0
  } catch {
    return false
  }
}

/** The socket of the daemon that may answer runs of this build and environment (none on Windows yet). */
export function socketPath(env = process.env) {
  const dir = runtimeDir(env)
  return dir ? path.join(dir, `${daemonKey(env)}.sock`) : null
}

/**
 * Send one request to the daemon at `socket` and read its answer: a JSON line, then the body.
 * Resolves to `null` when no daemon answers there.
 * @returns {Promise<{head: any, body: Buffer} | null>}
 */
export function ask(socket, request, { timeoutMs = 0 } = {}) {
  return new Promise((resolve) => {
    const conn = net.createConnection(socket)
    const chunks = []
    let settled = false
    const done = (value) => {
      if (settled) return
      settled = true
      conn.destroy()
      resolve(value)
    }
    if (timeoutMs) conn.setTimeout(timeoutMs, () => done(null))
    conn.on('connect', () => conn.end(`${JSON.stringify(request)}\n`))
    conn.on('data', (c) => chunks.push(c))
    conn.on('error', () => done(null))
    conn.on('close', () => {
      const all = Buffer.concat(chunks)
      const nl = all.indexOf(10)
      if (nl < 0) return done(null)
      try {
        done({ head: JSON.parse(all.subarray(0, nl).toString('utf8')), body: all.subarray(nl + 1) })
      } catch {
        done(null)
      }
    })
  })
}

/**
 * Run `argv` through this user's daemon, if one answers for this build and environment: its
 * answer printed (through the pager on a terminal, as the run would), and its exit code. `null`:
 * no daemon took it; the caller runs it itself.
 */
export async function runThroughDaemon(argv, { cwd = process.cwd(), env = process.env } = {}) {
  if (!answeredByDaemon(argv, env)) return null
  // No folder of ours, no daemon: the build's key (package.json, the addons) is not even read.
  const dir = runtimeDir(env)
  if (!dir || !ownFolder(dir)) return null
  const socket = socketPath(env)
  if (!socket) return null
  const answer = await ask(socket, {
    op: 'run',
    argv,
    cwd,
    stdoutTTY: Boolean(process.stdout.isTTY),
    stderrTTY: Boolean(process.stderr.isTTY),
    columns: process.stdout.columns,
    env: { NO_COLOR: env.NO_COLOR, TERM: env.TERM },
  })
  if (!answer || typeof answer.head?.code !== 'number') return null
  if (answer.head.err) process.stderr.write(answer.head.err)
  if (answer.head.page && process.stdout.isTTY) {
    const { writeOut } = await import('./terminal.mjs')
    await writeOut(answer.body.toString('utf8'), { noPager: Boolean(answer.head.noPager) })
  } else if (answer.body.length) {
    process.stdout.write(answer.body)
  }
  return answer.head.code
}

/**
 * What to tell a person at a terminal whose run, answered alone in `ms`, a daemon could have
 * answered: as git says when `status` was slow, once per slow run, on standard error. Nothing
 * for a run that is not at a terminal, that a daemon could not answer, or where the person
 * turned hints or the daemon off. `ROO_STATE_HINT_AFTER_MS` moves the threshold.
 */
export function daemonHint(argv, ms, { env = process.env, stderrTTY = Boolean(process.stderr.isTTY) } = {}) {
  if (!stderrTTY || env.ROO_STATE_NO_HINTS === '1' || runtimeDir(env) === null) return null
  if (!answeredByDaemon(argv, env)) return null
  const after = Number(env.ROO_STATE_HINT_AFTER_MS ?? SLOW_MS)
  if (!(ms >= (Number.isFinite(after) ? after : SLOW_MS))) return null
  return (
    `hint: that took ${Math.round(ms)} ms; while \`roo-state daemon start\` runs, list, show, tree\n` +
    'hint: and usage answer at once from stores kept open. ROO_STATE_NO_HINTS=1 hides this.\n'
  )
}
