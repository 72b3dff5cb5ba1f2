import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import fs from 'node:fs'
import os from 'node:os'
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
