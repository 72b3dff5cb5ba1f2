import { describe, it, expect, afterEach, vi } from 'vitest'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import * as realGlob from 'glob'
import { core, tempDir } from '../helpers'

// The detector's search for extension folders: with the glob package's own function, the patterns
// `**/<prefix>*` are answered by one native walk (compatEntriesNamedWithPrefixes); held here to
// what the glob package itself answers on the same folders, through the detector and alone.

const require = createRequire(import.meta.url)
const { RooStorageDetector } = require('../../compat/utils/roo-storage-detector.js')
const { isRealGlob, prefixOf } = require('../../compat/utils/detector-glob.js')
const io = require('../../compat/io.js') as { use(m: Record<string, unknown>): void }
const binding = require('../../index.js')

afterEach(() => {
  vi.restoreAllMocks()
  io.use({ utilsImport: async () => undefined, os, 'fs/promises': fsp, fs, path })
})

/** A globalStorage-like folder: stores, nested names matching the patterns, dot folders, links. */
function storageTree(): string {
  const base = tempDir('roo-glob-')
  const dir = (p: string) => fs.mkdirSync(path.join(base, p), { recursive: true })
  dir('rooveterinaryinc.roo-cline/tasks/t1/checkpoints/roo-inner')
  dir('saoudrizwan.claude-dev-3.1/tasks/t2')
  dir('claude-dev-nightly/tasks')
  dir('zoocodeorganization.zoo-code/tasks/t3')
  dir('kilocode.kilo-code/tasks/cline-named-task')
  dir('.hidden/roo-hidden/tasks')
  dir('Roo-Upper/tasks')
  dir('other/deeper/cline-deep/tasks')
  fs.writeFileSync(path.join(base, 'roo-file.json'), '{}')
  fs.writeFileSync(path.join(base, 'other', 'zoo-code-notes.txt'), 'x')
  fs.symlinkSync(path.join(base, 'other'), path.join(base, 'roo-link-to-other'))
  fs.symlinkSync(path.join(base, 'missing-target'), path.join(base, 'cline-dangling'))
  return base
}

describe('extension-folder search', () => {
  it('one walk gives, for each legacy pattern, the entries the glob package gives', async () => {
    const base = storageTree()
    const patterns: string[] = RooStorageDetector.ROO_EXTENSION_PATTERNS
    const prefixes = patterns.map(prefixOf)
    expect(prefixes.every((p: string | null) => p !== null)).toBe(true)
    const walked: string[][] = await core.compatEntriesNamedWithPrefixes(base, prefixes)
    let total = 0
    for (const [i, pattern] of patterns.entries()) {
      const expected = (await realGlob.glob(pattern, { cwd: base, absolute: true })).sort()
      expect([pattern, [...walked[i]].sort()]).toEqual([pattern, expected])
      total += expected.length
    }
    expect(total).toBeGreaterThan(8)
  })

  it('through the detector: the same locations with the real glob (walked) and with a stand-in (called)', async () => {
    const home = tempDir('roo-glob-home-')
    const storage = path.join(home, '.config', 'Code', 'User', 'globalStorage')
    fs.mkdirSync(path.dirname(storage), { recursive: true })
    fs.renameSync(storageTree(), storage)
    const walk = vi.spyOn(binding, 'compatEntriesNamedWithPrefixes')
    const cache = { get: async () => null, set: vi.fn() }
    const locate = async (glob: unknown) => {
      io.use({
        utilsImport: async (s: string) => (s === 'glob' ? { glob } : s === './cache-manager.js' ? { globalCacheManager: cache } : undefined),
        os: { homedir: () => home },
      })
      return RooStorageDetector.detectStorageLocations()
    }
    expect(isRealGlob(realGlob.glob)).toBe(true)
    const native = await locate(realGlob.glob)
    expect(walk).toHaveBeenCalledTimes(process.platform === 'linux' ? 1 : 0)

    const standIn = vi.fn((pattern: string, options: object) => realGlob.glob(pattern, options))
    expect(isRealGlob(standIn)).toBe(false)
    const called = await locate(standIn)
    expect(standIn).toHaveBeenCalledTimes(RooStorageDetector.ROO_EXTENSION_PATTERNS.length)
    expect(walk).toHaveBeenCalledTimes(process.platform === 'linux' ? 1 : 0)

    expect([...native].sort()).toEqual([...called].sort())
    expect(native.map((p: string) => path.relative(storage, p)).sort()).toEqual(
      [
        'claude-dev-nightly',
        'kilocode.kilo-code/tasks/cline-named-task', // a match at any depth, as glob has it (no tasks/ inside: checked below)
        'other/deeper/cline-deep',
        'roo-link-to-other',
        'rooveterinaryinc.roo-cline',
        'saoudrizwan.claude-dev-3.1',
        'zoocodeorganization.zoo-code',
      ]
        .filter((p) => fs.existsSync(path.join(storage, p, 'tasks')))
        .sort(),
    )
  })

  it('patterns with other special characters, and a glob that throws, keep the legacy path', async () => {
    expect(prefixOf('**/roo*')).toBe('roo')
    for (const p of ['roo*', '**/roo', '**/r?o*', '**/{roo,cline}*', '**/a/b*', '**/.roo*', '**/*']) expect(prefixOf(p)).toBeNull()
    const base = storageTree()
    const home = path.dirname(base)
    const cache = { get: async () => null, set: vi.fn() }
    const failing = vi.fn(async () => {
      throw new Error('glob failed')
    })
    io.use({
      utilsImport: async (s: string) => (s === 'glob' ? { glob: failing } : s === './cache-manager.js' ? { globalCacheManager: cache } : undefined),
      os: { homedir: () => home },
    })
    expect(await RooStorageDetector.findPotentialStorageLocations()).toEqual([])
  })
})
