import { afterEach, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'

// The tool calls JsonCsvExporter reads from a message's text, now read in the core
// (`compatTraceToolCalls`), against what the exporter's JavaScript answered before the move
// (tool-calls-cases.json, recorded from it), in both modes.

const require = createRequire(import.meta.url)
const { JsonCsvExporter } = require('../../compat/services/trace-summary/JsonCsvExporter.js')
const mode = require('../../compat/mode.js')
const recorded: { texts: Record<string, string>; expected: Record<string, Record<string, unknown[]>> } = JSON.parse(
  fs.readFileSync(path.join(__dirname, 'tool-calls-cases.json'), 'utf8'),
)

afterEach(() => {
  mode.setMode(null)
})

describe('JsonCsvExporter tool calls answer as before', () => {
  for (const m of ['legacy', 'fixed'] as const) {
    for (const [name, text] of Object.entries(recorded.texts)) {
      it(`${m}: ${name}`, () => {
        mode.setMode(m)
        const calls = new JsonCsvExporter({}).extractToolCallsFromMessage(text)
        // JSON text on both sides: key order and a cut surrogate count too.
        expect(JSON.stringify(calls)).toBe(JSON.stringify(recorded.expected[m][name]))
      })
    }
  }

  it('finds no call in an empty message', () => {
    expect(new JsonCsvExporter({}).extractToolCallsFromMessage('')).toEqual([])
    expect(new JsonCsvExporter({}).extractToolCallsFromMessage(undefined)).toEqual([])
  })
})
