// The daemon: one resident process per user, build and environment that keeps the stores' handles
// open and watched (TaskStore.watch), and answers `list`, `show`, `tree` and `usage` for the
// command line over a local socket. A fresh `roo-state list` then costs Node's start and one
// round trip instead of an open of every store (a stat of each task folder: some 100-300 ms at
// 50 000 tasks). What a client receives is byte for byte what it would have printed itself: the
// daemon runs the same command line (main.mjs) with the client's folder, terminal and colours.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import process from 'node:process'
import { fileURLToPath } from 'node:url'
import { answeredByDaemon, ask, ownFolder, runtimeDir, socketPath } from './daemon-client.mjs'
import { RooStateError, usageError } from './errors.mjs'
import { handlesKept, resolveStores, storeHandle, watchKeptHandles } from './stores.mjs'

const cliPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'roo-state.mjs')

/** The daemon's socket, its folder made (this user's alone) when `make`. */
function ourSocket({ make = false } = {}) {
  const socket = socketPath()
  if (!socket) throw new RooStateError('NOT_AVAILABLE', 'The daemon runs on Linux and macOS (a Unix socket in a folder of the user\'s alone); not on Windows yet.')
  const dir = path.dirname(socket)
  if (make) fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  if (fs.existsSync(dir) && !ownFolder(dir)) {
    throw new RooStateError('INVALID_PATH', `${dir} is not this user's alone (owner and mode 700): the daemon will not put its socket there.`, {
      hint: 'Set ROO_STATE_RUNTIME_DIR to a folder of yours, or fix the folder: chmod 700.',
    })
  }
  return socket
}

/** The running daemon's status, or null. */
async function statusOf(socket, timeoutMs = 2000) {
  const answer = await ask(socket, { op: 'status' }, { timeoutMs })
  return answer?.head?.status ?? null
}

/**
 * Serve until stopped or idle: the stores of `sel` (those a bare command line works on, unless
 * named) opened and watched first, then each request run in turn (one handle refresh at a time).
 */
async function serve({ idleMinutes, sel }) {
  const socket = ourSocket({ make: true })
  if (await statusOf(socket)) throw new RooStateError('DAEMON_RUNNING', `A daemon already answers at ${socket}.`, { hint: '`roo-state daemon status` says what it keeps open; `roo-state daemon stop` stops it.' })
  fs.rmSync(socket, { force: true })
  watchKeptHandles(true)
  const { main } = await import('./main.mjs')
  const started = Date.now()
  const state = { requests: 0, ready: false, stores: /** @type {string[]} */ ([]), error: /** @type {string | null} */ (null) }
  let queue = Promise.resolve()
  let idle
  // Half-open: a client ends its side once its request is sent, and reads the answer after.
  const server = net.createServer({ allowHalfOpen: true }, (conn) => {
    const chunks = []
    conn.on('data', (c) => chunks.push(c))
    conn.on('error', () => {})
    conn.on('end', () => {
      let req
      try {
        req = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        return conn.end()
      }
      resetIdle()
      // A status or a stop at once; runs in turn. A run that fails in a way the command line
      // does not report ends the connection without an answer: the client then runs it itself.
      if (req?.op !== 'run') return control(req, conn)
      queue = queue.then(() => run(req, conn)).catch(() => conn.end())
    })
  })
  const stop = () => {
    server.close()
    fs.rmSync(socket, { force: true })
    process.exit(0)
  }
  const resetIdle = () => {
    clearTimeout(idle)
    if (idleMinutes > 0) idle = setTimeout(stop, idleMinutes * 60_000).unref()
  }
  function control(req, conn) {
    if (req?.op === 'status') {
      const status = { pid: process.pid, since: new Date(started).toISOString(), socket, ...state, handles: handlesKept().map(describeHandle) }
      return conn.end(`${JSON.stringify({ status })}\n`)
    }
    if (req?.op === 'stop') return conn.end(`${JSON.stringify({ stopped: true })}\n`, stop)
    conn.end()
  }
  async function run(req, conn) {
    // Only what a client would send: a run that writes nothing (the client checks it too).
    if (!Array.isArray(req.argv) || !answeredByDaemon(req.argv.map(String), {})) return conn.end()
    state.requests++
    const gone = new AbortController()
    conn.on('close', () => gone.abort())
    const out = []
    const err = []
    // Whether the answer goes through the client's pager (when at a terminal), as it would alone.
    const paged = { page: false, noPager: true }
    const io = {
      out: (s) => out.push(s),
      err: (s) => err.push(s),
      page: async (text, { noPager }) => {
        Object.assign(paged, { page: true, noPager })
        out.push(text)
      },
      stdoutTTY: Boolean(req.stdoutTTY),
      // No progress bar: the answer comes whole.
      stderrTTY: false,
      columns: typeof req.columns === 'number' ? req.columns : undefined,
      env: { NO_COLOR: req.env?.NO_COLOR, TERM: req.env?.TERM },
      signal: gone.signal,
    }
    const code = await main(req.argv.map(String), { cwd: String(req.cwd ?? process.cwd()), io })
    const head = { code: code ?? 0, err: err.join(''), ...paged }
    conn.end(`${JSON.stringify(head)}\n${out.join('')}`)
  }
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(socket, () => resolve(undefined))
  })
  fs.chmodSync(socket, 0o600)
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  resetIdle()
  queue = queue.then(async () => {
    try {
      state.stores = await resolveStores(sel)
      for (const dir of state.stores) await storeHandle(dir, { cacheDir: sel.cacheDir })
    } catch (e) {
      state.error = `${e?.code ?? 'FAILED'}: ${e?.message ?? e}`
    }
    state.ready = true
  })
}

/** What a status says of one kept handle. */
function describeHandle(h) {
  return { stores: h.stores().map((s) => s.tasksDir), tasks: h.size, watch: h.watchStatus() }
}

function renderStatus(s) {
  if (!s) return 'no daemon runs for this build and environment (roo-state daemon start)'
  const lines = [`running, pid ${s.pid}, since ${s.since}, ${s.requests} request${s.requests === 1 ? '' : 's'} answered${s.ready ? '' : ' (still opening the stores)'}`, `  socket ${s.socket}`]
  if (s.error) lines.push(`  the stores could not be opened: ${s.error}`)
  for (const h of s.handles) {
    const w = h.watch.watching ? `watched (${h.watch.folders} folders)` : `not watched${h.watch.reason ? `: ${h.watch.reason}` : ''}; each answer stats the folders`
    lines.push(`  ${h.stores.join(', ')}: ${h.tasks} tasks, ${w}`)
  }
  return lines.join('\n')
}

function idleOption(ctx) {
  const v = ctx.opts['idle-minutes'] ?? '180'
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0) throw usageError(`--idle-minutes takes a whole number of minutes (0: never), not "${v}".`)
  return n
}

/** @type {import('./main.mjs').Option} */
const idleMinutes = { type: 'string', arg: 'N', help: 'stop after N minutes without a request (default 180; 0: never)' }

/** The `daemon` commands. */
export const daemonCommands = {
  'daemon start': {
    summary: 'start the resident process that answers list, show, tree and usage at once',
    options: { 'idle-minutes': idleMinutes },
    examples: ['roo-state daemon start', 'roo-state daemon start --idle-minutes 0   # until stopped', 'roo-state daemon start --tasks-dir ~/backup/roo/tasks   # that store opened first'],
    maxArgs: 0,
    async run(ctx) {
      const socket = ourSocket({ make: true })
      let status = await statusOf(socket)
      if (!status) {
        const log = path.join(runtimeDir() ?? path.dirname(socket), `${path.basename(socket, '.sock')}.log`)
        const fd = fs.openSync(log, 'a', 0o600)
        // The stores named here opened first (a command line that names them is then answered at once).
        const named = [...(ctx.sel.tasksDirs ?? []).flatMap((d) => ['--tasks-dir', path.resolve(ctx.cwd, d)]), ...(ctx.sel.cacheDir ? ['--cache-dir', ctx.sel.cacheDir] : [])]
        const child = spawn(process.execPath, [cliPath, 'daemon', 'run', '--idle-minutes', String(idleOption(ctx)), ...named], {
          cwd: ctx.cwd,
          detached: true,
          stdio: ['ignore', fd, fd],
        })
        child.unref()
        fs.closeSync(fd)
        // Ready: its stores opened and watched, so the next command is answered at once.
        const deadline = Date.now() + 600_000
        while (!status?.ready) {
          if (Date.now() > deadline || child.exitCode !== null) {
            throw new RooStateError('FAILED', `The daemon did not start; its log: ${log}`)
          }
          await new Promise((r) => setTimeout(r, 50))
          status = await statusOf(socket)
        }
      }
      return { data: status, text: () => renderStatus(status) }
    },
  },
  'daemon stop': {
    summary: 'stop the daemon of this build and environment',
    examples: ['roo-state daemon stop'],
    maxArgs: 0,
    async run() {
      const answer = await ask(ourSocket(), { op: 'stop' }, { timeoutMs: 5000 })
      const data = { stopped: Boolean(answer?.head?.stopped) }
      return { data, text: () => (data.stopped ? 'stopped' : 'no daemon was running') }
    },
  },
  'daemon status': {
    summary: 'whether the daemon runs, what it keeps open and whether its folders are watched',
    examples: ['roo-state daemon status', 'roo-state daemon status --json'],
    maxArgs: 0,
    async run() {
      const status = await statusOf(ourSocket())
      return { data: status, text: () => renderStatus(status), exitCode: status ? 0 : 3 }
    },
  },
  'daemon run': {
    summary: 'run the daemon in this process (for a service manager; `daemon start` detaches it)',
    options: { 'idle-minutes': idleMinutes },
    examples: ['roo-state daemon run --idle-minutes 0'],
    maxArgs: 0,
    json: false,
    async run(ctx) {
      await serve({ idleMinutes: idleOption(ctx), sel: ctx.sel })
      return { data: null, text: () => '', keepAlive: true }
    },
  },
}
