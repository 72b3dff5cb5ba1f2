import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import fs from 'node:fs'
import os from 'node:os'
import { spawnSync } from 'node:child_process'
import type * as Core from '../index.js'

const require = createRequire(import.meta.url)
export const core: typeof Core = require('../index.js')

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, '..')
/** ../shared beside the checkout (CI clones main with shared/ next to it), or ROO_STATE_SHARED_DIR. */
export const shared = process.env.ROO_STATE_SHARED_DIR || path.resolve(repoRoot, '..', 'shared')
export const legacyTasks = path.join(shared, 'fixtures', 'legacy-tasks')
export const legacyOutputs = path.join(shared, 'fixtures', 'legacy-outputs', 'tasks')
export const realTasks = path.join(legacyTasks, 'real-tasks')

/** CI sets ROO_STATE_REQUIRE_SHARED=1: there the suites that read ../shared must run, not skip. */
export const requireShared = process.env.ROO_STATE_REQUIRE_SHARED === '1'

/**
 * Whether `needed` (a path inside ../shared) exists. ../shared is optional: without it the suite
 * says on stderr that it skips and why, unless ROO_STATE_REQUIRE_SHARED=1, where its absence is an
 * error.
 */
export function haveShared(suite: string, needed: string = shared): boolean {
  if (fs.existsSync(needed)) return true
  const why = `${needed} is absent (../shared beside the checkout holds the legacy fixtures and reference outputs)`
  if (requireShared) throw new Error(`[${suite}] ROO_STATE_REQUIRE_SHARED=1 but ${why}`)
  console.warn(`[${suite}] skipped: ${why}; set ROO_STATE_REQUIRE_SHARED=1 to make this an error`)
  return false
}

export const PARENT = 'ac8aa7b4-319c-4925-a139-4f4adca81921'
export const CHILD = 'bc93a6f7-cd2e-4686-a832-46e3cd14d338'

export function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T
}

export function tempDir(prefix = 'roo-state-core-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

/**
 * The environment of a child process (the CLI, the MCP server) that sees nothing of this machine's
 * own setup: no ROO_STATE_*, QDRANT_* or EMBEDDING_* variable, no OPENAI_API_KEY, PAGER or
 * NO_COLOR, and a home of its own, `<work>/home` (HOME, USERPROFILE, the XDG folders and Windows'
 * app-data folders under it). With `folders` (the default) roo-state's cache, data and config
 * folders are `<work>/cache`, `data` and `config`; without, it finds them from that home, as it
 * would on a newcomer's machine.
 */
export function isolatedEnv(work: string, { folders = true }: { folders?: boolean } = {}): Record<string, string> {
  const home = path.join(work, 'home')
  fs.mkdirSync(home, { recursive: true })
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    const machines = /^(ROO_STATE_|QDRANT_|EMBEDDING_)/.test(k) || ['OPENAI_API_KEY', 'PAGER', 'NO_COLOR'].includes(k)
    if (v !== undefined && !machines) env[k] = v
  }
  Object.assign(env, {
    HOME: home,
    USERPROFILE: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    APPDATA: path.join(home, 'AppData', 'Roaming'),
    LOCALAPPDATA: path.join(home, 'AppData', 'Local'),
  })
  if (folders) {
    Object.assign(env, {
      ROO_STATE_CACHE_DIR: path.join(work, 'cache'),
      ROO_STATE_DATA_DIR: path.join(work, 'data'),
      ROO_STATE_CONFIG_DIR: path.join(work, 'config'),
    })
  }
  return env
}

/** What a run of the command line printed, and how it ended. */
export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
}

const cliPath = path.join(repoRoot, 'cli', 'roo-state.mjs')

/** `roo-state args` in a child process with `env`, from the repository's folder. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): CliRun {
  const r = spawnSync(process.execPath, [cliPath, ...args], { cwd: repoRoot, env, encoding: 'utf8', timeout: 120_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/**
 * `roo-state args` at a terminal: under script(1), which gives it a pseudo-terminal, with `env`;
 * what it printed when it exited 0 (anything else throws), null where there is no script(1).
 */
export function cliAtTerminal(args: string[], env: NodeJS.ProcessEnv): string | null {
  if (spawnSync('script', ['--version'], { encoding: 'utf8' }).status !== 0) return null
  const quoted = [process.execPath, cliPath, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')
  const r = spawnSync('script', ['-qec', quoted, '/dev/null'], { cwd: repoRoot, env, encoding: 'utf8', timeout: 120_000 })
  if (r.status !== 0) throw new Error(`roo-state ${args.join(' ')} at a terminal exited ${r.status}: ${r.stderr}${r.stdout}`)
  return r.stdout
}
