import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { cliAtTerminal, runCli, type CliRun, repoRoot, isolatedEnv, tempDir } from './helpers'
// @ts-expect-error an untyped JavaScript module of the CLI
import { answeredByDaemon, ask, daemonHint, socketPath } from '../cli/lib/daemon-client.mjs'

// The daemon (`roo-state daemon start`): a resident process that keeps the stores open and
// watched and answers list, show, tree and usage for the command line. What a client prints
// through it is what it prints alone, byte for byte, before and right after the store changes;
// it goes away when stopped, and the command line then answers by itself.

const fixture = path.join(repoRoot, 'fixtures', 'stores', 'history-item-v3.50')
const linux = process.platform === 'linux'

let work: string
let storage: string
let tasks: string
let env: NodeJS.ProcessEnv

function run(args: string[], extra: NodeJS.ProcessEnv = {}): CliRun {
  return runCli(args, { ...env, ...extra })
}

/** `roo-state` at a terminal (null without script(1)). */
function atTerminal(args: string[], extra: NodeJS.ProcessEnv = {}): string | null {
  return cliAtTerminal(args, { ...env, TERM: 'xterm', ...extra })
}

function status(): any {
  const r = run(['daemon', 'status', '--json'])
  return r.code === 0 ? JSON.parse(r.stdout) : null
}

/**
 * The same command line answered by the daemon and by the process alone: equal, and the daemon's.
 * `timing`: a JSON answer's key that says how this run went (what was read again, how long it
 * took), left out of the comparison.
 */
function sameBothWays(args: string[], timing?: string): CliRun {
  const before = status().requests
  const through = run(args)
  expect(status().requests).toBe(before + 1)
  const alone = run([...args, '--no-daemon'])
  if (timing) {
    const [a, b] = [through, alone].map((r) => ({ ...r, stdout: JSON.parse(r.stdout) }))
    expect(a.stdout[timing]).toBeDefined()
    delete a.stdout[timing]
    delete b.stdout[timing]
    expect(a).toEqual(b)
  } else {
    expect(through).toEqual(alone)
  }
  return through
}

beforeAll(() => {
  work = tempDir('roo-state-daemon-')
  storage = path.join(work, 'storage')
  fs.cpSync(fixture, storage, { recursive: true })
  tasks = path.join(storage, 'tasks')
  env = { ...isolatedEnv(work), ROO_STATE_STORAGE: storage, ROO_STATE_RUNTIME_DIR: path.join(work, 'run') }
})

afterAll(() => {
  run(['daemon', 'stop'])
  fs.rmSync(work, { recursive: true, force: true })
})

describe('which command lines a daemon may answer', () => {
  it('the read commands, found past options and their values; nothing else', () => {
    const env = {}
    expect(answeredByDaemon(['list', '--limit', '20'], env)).toBe(true)
    expect(answeredByDaemon(['--tasks-dir', 'show', 'tree'], env)).toBe(true)
    expect(answeredByDaemon(['--cache-dir=/c', '--json', 'usage', 'daily'], env)).toBe(true)
    expect(answeredByDaemon(['--tasks-dir', 'list'], env)).toBe(false)
    expect(answeredByDaemon(['--', 'list'], env)).toBe(false)
    expect(answeredByDaemon(['rebuild'], env)).toBe(false)
    expect(answeredByDaemon(['list', '--help'], env)).toBe(false)
    expect(answeredByDaemon(['list'], { ROO_STATE_NO_DAEMON: '1' })).toBe(false)
  })

  it('a slow run alone at a terminal suggests the daemon; nothing else does', () => {
    const tty = { env: {}, stderrTTY: true }
    expect(daemonHint(['list'], 250, tty)).toContain('roo-state daemon start')
    expect(daemonHint(['list'], 150, tty)).toBeNull()
    expect(daemonHint(['list'], 250, { ...tty, stderrTTY: false })).toBeNull()
    expect(daemonHint(['list'], 250, { ...tty, env: { ROO_STATE_NO_HINTS: '1' } })).toBeNull()
    expect(daemonHint(['list', '--no-daemon'], 250, tty)).toBeNull()
    expect(daemonHint(['rebuild'], 250, tty)).toBeNull()
    expect(daemonHint(['list'], 20, { ...tty, env: { ROO_STATE_HINT_AFTER_MS: '10' } })).not.toBeNull()
  })

  it('says so at a terminal, after the answer, and never into a pipe', () => {
    const always = { ROO_STATE_HINT_AFTER_MS: '0' }
    const shown = atTerminal(['list'], always)
    if (shown === null) return
    expect(shown).toMatch(/\S[\s\S]*hint: that took \d+ ms; while `roo-state daemon start` runs/)
    expect(atTerminal(['list'], { ...always, ROO_STATE_NO_HINTS: '1' })).not.toContain('hint:')
    const piped = run(['list'], always)
    expect(piped.code).toBe(0)
    expect(piped.stderr).toBe('')
  })
})

describe.skipIf(process.platform === 'win32')('daemon', () => {
  it('starts once, keeps the stores open and watched, and says so', () => {
    expect(run(['daemon', 'status']).code).toBe(3)
    const started = run(['daemon', 'start', '--json'])
    expect(started.code, started.stderr).toBe(0)
    const s = JSON.parse(started.stdout)
    expect(s.ready).toBe(true)
    expect(s.handles.map((h: any) => h.stores)).toEqual([[tasks]])
    // The tasks folder and each task folder.
    if (linux) expect(s.handles[0].watch).toMatchObject({ watching: true, folders: s.handles[0].tasks + 1 })
    // A second start finds it running.
    const again = JSON.parse(run(['daemon', 'start', '--json']).stdout)
    expect(again.pid).toBe(s.pid)
    // Its socket is in a folder of this user's alone.
    expect(fs.statSync(path.join(work, 'run')).mode & 0o777).toBe(0o700)
  })

  it('answers list, show, tree and usage as the command line alone does', () => {
    const list = JSON.parse(sameBothWays(['list', '--json']).stdout)
    expect(list.tasks.length).toBeGreaterThan(1)
    sameBothWays(['list', '--limit', '2'])
    sameBothWays(['tree', '--limit', '3'])
    sameBothWays(['tree', '--json'])
    sameBothWays(['show', list.tasks[0].taskId.slice(0, 8)])
    sameBothWays(['usage', 'daily', '--json'], 'sync')
    sameBothWays(['usage', 'tasks', '--limit', '3'])
    // Errors too: the same message and exit code.
    const missing = sameBothWays(['show', 'ffffffff'])
    expect(missing.code).toBe(3)
    const bad = sameBothWays(['list', '--sort', 'nope'])
    expect(bad.code).toBe(2)
  })

  it('runs nothing but what a client sends it: no command that writes', async () => {
    const socket = socketPath(env)
    const listed = await ask(socket, { op: 'run', argv: ['list', '--json'], cwd: repoRoot })
    expect(listed.head.code).toBe(0)
    expect(JSON.parse(listed.body.toString('utf8')).total).toBeGreaterThan(1)
    for (const argv of [['cleanup', '--apply'], ['rebuild', '--apply'], ['list', '--no-cache'], ['mcp']]) {
      expect(await ask(socket, { op: 'run', argv, cwd: repoRoot })).toBeNull()
    }
  })

  it('at a terminal: the same colours and the same pager as alone', () => {
    // A pager that marks each line it shows.
    const pager = { ROO_STATE_PAGER: 'sed s/^/paged:/' }
    const before = status().requests
    const through = atTerminal(['tree', '--limit', '2'], pager)
    if (through === null) return
    expect(status().requests).toBe(before + 1)
    expect(through).toContain('paged:')
    expect(through).toContain('\x1b[')
    expect(through).toBe(atTerminal(['tree', '--limit', '2', '--no-daemon'], pager))
    // NO_COLOR is the client's: no colours through the daemon either.
    expect(atTerminal(['tree', '--limit', '2'], { ...pager, NO_COLOR: '1' })).not.toContain('\x1b[')
  })

  it('sees a change the moment it is made: a task removed, then one added', () => {
    const before = JSON.parse(run(['list', '--json']).stdout)
    const gone = before.tasks[0].taskId
    const kept = path.join(work, 'kept-task')
    fs.cpSync(path.join(tasks, gone), kept, { recursive: true })
    fs.rmSync(path.join(tasks, gone), { recursive: true })
    const after = JSON.parse(sameBothWays(['list', '--json']).stdout)
    expect(after.total).toBe(before.total - 1)
    expect(after.tasks.map((i: any) => i.taskId)).not.toContain(gone)
    fs.cpSync(kept, path.join(tasks, gone), { recursive: true })
    const back = JSON.parse(sameBothWays(['list', '--json']).stdout)
    expect(back.total).toBe(before.total)
  })

  it('stops, and the command line answers alone again', () => {
    const stopped = run(['daemon', 'stop'])
    expect(stopped.stdout).toContain('stopped')
    expect(run(['daemon', 'status']).code).toBe(3)
    const list = run(['list', '--json'])
    expect(list.code).toBe(0)
    expect(JSON.parse(list.stdout).total).toBeGreaterThan(1)
    expect(fs.readdirSync(path.join(work, 'run')).filter((n) => n.endsWith('.sock'))).toEqual([])
  })

  it('will not put its socket in a folder others may enter', () => {
    const open = path.join(work, 'open-run')
    fs.mkdirSync(open, { mode: 0o755 })
    fs.chmodSync(open, 0o755)
    const r = run(['daemon', 'start'], { ROO_STATE_RUNTIME_DIR: open })
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('not this user')
    expect(run(['list', '--json'], { ROO_STATE_RUNTIME_DIR: open }).code).toBe(0)
  })
})
