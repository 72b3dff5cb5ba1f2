// One list of error codes: the binding's `ErrorCode` enum (crates/napi/src/error.rs) is the
// `ErrorCode` union of index.d.ts; the codes the crates raise are in it; the CLI's exit codes and
// hints speak only of those codes and of the few the CLI raises itself (`CLI_CODES`), and every
// code the CLI throws is one of them. A code renamed in one place and not the others fails here.

import { describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { repoRoot } from './helpers'
// @ts-expect-error -- plain ES module without declarations
import { CLI_CODES, EXIT_BY_CODE, HINTS, MCP_HINTS, describeError } from '../cli/lib/errors.mjs'

const read = (rel: string) => fs.readFileSync(path.join(repoRoot, rel), 'utf8')

/** The members of the `ErrorCode` union of index.d.ts. */
function declaredCodes(): string[] {
  const m = /export type ErrorCode = ([^\n]+)/.exec(read('index.d.ts'))
  if (!m) throw new Error('index.d.ts declares no ErrorCode union')
  return [...m[1].matchAll(/'([A-Z_]+)'/g)].map((x) => x[1])
}

/** The string values of the binding's `ErrorCode` enum (its `Variant = "CODE",` lines). */
function bindingCodes(): string[] {
  const src = read('crates/napi/src/error.rs')
  return [...src.matchAll(/^\s+[A-Z][A-Za-z]+ = "([A-Z_]+)",$/gm)].map((x) => x[1])
}

/** Every `"CODE"` a crate's `code()` returns (the `=> "X"` arms of the error types). */
function crateCodes(): string[] {
  const out = new Set<string>()
  for (const crate of fs.readdirSync(path.join(repoRoot, 'crates'))) {
    const src = path.join(repoRoot, 'crates', crate, 'src')
    if (!fs.existsSync(src) || crate === 'napi') continue
    for (const f of fs.readdirSync(src, { recursive: true }) as string[]) {
      if (!f.endsWith('.rs')) continue
      const text = fs.readFileSync(path.join(src, f), 'utf8')
      const fnAt = text.indexOf('pub fn code(&self) -> &\'static str')
      if (fnAt < 0) continue
      const body = text.slice(fnAt, text.indexOf('\n    }\n', fnAt))
      for (const m of body.matchAll(/=> "([A-Z_]+)"/g)) out.add(m[1])
    }
  }
  return [...out].sort()
}

/** The literal codes of `new RooStateError('CODE', …)` in cli/. */
function thrownByCli(): string[] {
  const out = new Set<string>()
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.mjs'))
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/new RooStateError\('([A-Z_]+)'/g)) out.add(m[1])
    }
  }
  walk(path.join(repoRoot, 'cli'))
  return [...out].sort()
}

describe('error codes', () => {
  const declared = declaredCodes()
  const known = new Set([...declared, ...Object.keys(CLI_CODES)])

  it('the declared union is the binding enum', () => {
    expect(declared.length).toBeGreaterThan(20)
    expect([...declared].sort()).toEqual([...bindingCodes()].sort())
  })

  it('every code a crate raises is declared', () => {
    const raised = crateCodes()
    expect(raised).toContain('STORE_BUSY')
    expect(raised.filter((c) => !declared.includes(c))).toEqual([])
  })

  it('the CLI own codes are not the binding codes', () => {
    expect(Object.keys(CLI_CODES).filter((c) => declared.includes(c))).toEqual([])
    for (const [k, v] of Object.entries(CLI_CODES)) expect(v).toBe(k)
  })

  it('exit codes and hints name only known codes', () => {
    const keys = [...Object.keys(EXIT_BY_CODE), ...Object.keys(HINTS), ...Object.keys(MCP_HINTS)]
    expect(keys.length).toBeGreaterThan(30)
    expect(keys.filter((k) => !known.has(k))).toEqual([])
  })

  it('every code the CLI throws is known', () => {
    const thrown = thrownByCli()
    expect(thrown).toContain('NO_STORE')
    expect(thrown.filter((c) => !known.has(c))).toEqual([])
  })

  it('a panic caught in a synchronous call is one INTERNAL line', () => {
    const panic = Object.assign(new Error('index out of bounds\nat page 3'), { code: 'GenericFailure' })
    for (const audience of ['cli', 'mcp']) {
      const d = describeError(panic, audience)
      expect(d.code).toBe('INTERNAL')
      expect(d.message).not.toContain('\n')
      expect(d.message).toContain('index out of bounds at page 3')
    }
  })

  it('finds an unknown code', () => {
    expect(['TASK_NOT_FOUND', 'NO_SUCH_CODE'].filter((k) => !known.has(k))).toEqual(['NO_SUCH_CODE'])
  })
})
