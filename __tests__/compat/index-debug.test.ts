import { afterEach, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'

// TaskInstructionIndex.searchExactPrefix under ROO_DEBUG_INSTRUCTIONS=1 logs the native lookup
// step by step (`searchExactPrefixTrace`). index-debug-cases.json holds the lines and answers the
// JavaScript walk it replaced gave on the same index and queries. That walk did not lowercase the
// query as the native trie does, so on a case marked `beforeFix` it answered otherwise than the
// same call without the debug flag; there the answer must now be the one without the flag.

const require = createRequire(import.meta.url)
const { TaskInstructionIndex } = require('../../compat/utils/task-instruction-index.js')
const recorded: {
  keys: Array<[string, string]>
  cases: Record<string, { query: string; K: number; lines: string[]; result: unknown[]; beforeFix?: boolean }>
} = JSON.parse(fs.readFileSync(path.join(__dirname, 'index-debug-cases.json'), 'utf8'))

function index() {
  const idx = new TaskInstructionIndex()
  for (const [parent, key] of recorded.keys) idx.addInstruction(parent, key)
  return idx
}

function logged(run: () => unknown): { lines: string[]; result: unknown } {
  const lines: string[] = []
  const log = console.log
  process.env.ROO_DEBUG_INSTRUCTIONS = '1'
  console.log = (...args: unknown[]) => lines.push(args.join(' '))
  try {
    return { result: run(), lines }
  } finally {
    console.log = log
    delete process.env.ROO_DEBUG_INSTRUCTIONS
  }
}

afterEach(() => {
  delete process.env.ROO_DEBUG_INSTRUCTIONS
})

describe('the debug lookup logs as before and answers as the lookup does', () => {
  for (const [name, c] of Object.entries(recorded.cases)) {
    it(name, () => {
      const idx = index()
      const { lines, result } = logged(() => idx.searchExactPrefix(c.query, c.K))
      expect(result).toEqual(idx.searchExactPrefix(c.query, c.K))
      if (c.beforeFix) {
        expect(result).not.toEqual(c.result)
        expect(lines[0]).toBe(c.lines[0])
      } else {
        expect(lines).toEqual(c.lines)
        expect(result).toEqual(c.result)
      }
    })
  }

  it('has a case the old walk answered otherwise', () => {
    expect(Object.values(recorded.cases).some((c) => c.beforeFix)).toBe(true)
  })
})
