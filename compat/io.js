'use strict'
/**
 * The outside modules compat reaches through: Node's `fs`, `fs/promises`, `path`, `os`, and the
 * caller's own modules a legacy module used to import (its cache manager, workspace detector, …).
 *
 * Loaded with `require`, compat uses Node's modules. Loaded through its ESM entries inside a test
 * runner that transforms them (Vitest with `roo-state-core` inlined, docs/drop-in.md), `io.mjs`
 * imports the same names through the runner's module graph and hands them over here, so a
 * `vi.mock('fs/promises')` or a spy on the caller's module reaches compat as it reached the legacy
 * module. Compat looks each module up at call time (`io.mod('fs/promises')`), never at load time.
 */

const node = {
  fs: require('fs'),
  'fs/promises': require('fs/promises'),
  path: require('path'),
  os: require('os'),
}

/** The functions Node's modules had when compat was loaded, before any test could replace one. */
const pristine = {
  readFile: node['fs/promises'].readFile,
  readdir: node['fs/promises'].readdir,
  stat: node['fs/promises'].stat,
  access: node['fs/promises'].access,
  readFileSync: node.fs.readFileSync,
  existsSync: node.fs.existsSync,
}

const current = { ...node }

/** Modules handed over by the ESM entry (`io.mjs`) or by a caller's wiring line. */
function use(modules) {
  for (const [name, value] of Object.entries(modules)) {
    if (value !== undefined && value !== null) current[name] = value
  }
}

/** The module compat should call for `name` now (Node's own when nothing was handed over). */
function mod(name) {
  return current[name]
}

/**
 * The module as the legacy code saw it through a default import (`import fs from 'fs/promises'`):
 * a mocked module's `default` when it has one, else the module itself.
 */
function defaultOf(name) {
  const m = current[name]
  let d
  try {
    // A test runner's module mock without a `default` throws on the read of one.
    d = m && typeof m === 'object' ? m.default : undefined
  } catch {
    d = undefined
  }
  return d && typeof d === 'object' ? d : m
}

/**
 * Whether file reads go to the disk unobserved: no module mock and no spy replaced the functions
 * compat would call, so the native engine may read the files itself (faster) with the same result.
 */
function readsAreNative() {
  const fsp = current['fs/promises']
  const fs = current.fs
  const fspd = defaultOf('fs/promises')
  const fsd = defaultOf('fs')
  return (
    fsp.readFile === pristine.readFile &&
    fsp.readdir === pristine.readdir &&
    fsp.stat === pristine.stat &&
    fsp.access === pristine.access &&
    fspd.readFile === pristine.readFile &&
    fspd.readdir === pristine.readdir &&
    fspd.stat === pristine.stat &&
    fs.existsSync === pristine.existsSync &&
    fs.readFileSync === pristine.readFileSync &&
    fsd.existsSync === pristine.existsSync &&
    fsd.readFileSync === pristine.readFileSync &&
    (fs.promises ?? fsd.promises ?? node.fs.promises).readFile === pristine.readFile &&
    node['fs/promises'].readFile === pristine.readFile
  )
}

module.exports = { use, mod, defaultOf, readsAreNative }
