import { afterEach, describe, expect, it, vi } from 'vitest'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { cases } from './engine-cases/cases.mjs'

// The hierarchy engine's own sub-task extractor (phase 1), now reading its records in the core
// (`compatEngineCandidates`), against what the JavaScript extractor it replaced answered on the
// same texts (engine-cases/expected.json, recorded from that extractor with the same engine steps
// and clock as below): every entry, its order, its `realTs`, and the errors it threw.

const require = createRequire(import.meta.url)
const io = require('../../compat/io.js')
const { extractSubtaskInstructions } = require('../../compat/utils/hierarchy-engine-instructions.js')
const expected: Record<string, { entries?: unknown[]; realTs?: Array<number | null>; throws?: string }> = JSON.parse(
  fs.readFileSync(path.join(__dirname, 'engine-cases', 'expected.json'), 'utf8'),
)

const engine = { extractModeFromRooMode: (m: string) => `R(${m})`, normalizeEscaping: (s: string) => `N(${s})` }

afterEach(() => {
  vi.restoreAllMocks()
  io.use({ fs, path })
})

describe('the engine extractor answers as before', () => {
  it('has a recorded answer for every case', () => {
    expect(Object.keys(expected).sort()).toEqual(Object.keys(cases).sort())
  })

  for (const [name, text] of Object.entries(cases as Record<string, string>)) {
    it(name, () => {
      vi.spyOn(Date, 'now').mockReturnValue(1234)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-engine-'))
      try {
        fs.writeFileSync(path.join(dir, 'ui_messages.json'), text)
        const want = expected[name]
        const run = () => extractSubtaskInstructions(engine, { metadata: { dataSource: dir } })
        if (want.throws) {
          expect(run).toThrow(want.throws === 'TypeError' ? TypeError : SyntaxError)
          return
        }
        const got = run() as Array<{ realTs?: number }>
        // JSON text on both sides: key order, and a lone surrogate left by a cut, count too.
        expect(JSON.stringify(got)).toBe(JSON.stringify(want.entries))
        expect(got.map((e) => e.realTs ?? null)).toEqual(want.realTs)
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  }

  it('reads the file through the fs compat hands it, and finds nothing without one', () => {
    const missing = extractSubtaskInstructions(engine, { metadata: { dataSource: path.join(os.tmpdir(), 'no-such-task-folder') } })
    expect(missing).toEqual([])
    const records = [{ type: 'say', say: 'text', ts: 1, text: '<task>read through the caller fs</task>' }]
    io.use({ fs: { ...fs, existsSync: () => true, readFileSync: () => JSON.stringify(records) } })
    const found = extractSubtaskInstructions(engine, { metadata: { dataSource: '/nowhere' } })
    expect(found).toEqual([{ timestamp: 1, mode: 'task', message: 'read through the caller fs' }])
  })
})
