import { describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'

// The instruction index's splitter and similarity, now computed in the core
// (`compatSubInstructions`, `compatInstructionSimilarity`), against what the JavaScript answered
// before the move (sub-instructions-cases.json, recorded from it on the same texts and pairs).

const require = createRequire(import.meta.url)
const { TaskInstructionIndex, extractSubInstructions } = require('../../compat/utils/task-instruction-index.js')
const recorded: {
  texts: Record<string, string>
  expected: Record<string, string[]>
  nonStringExpected: Record<string, string[]>
  pairs: Record<string, [unknown, unknown]>
  similarity: Record<string, number>
} = JSON.parse(fs.readFileSync(path.join(__dirname, 'sub-instructions-cases.json'), 'utf8'))

const nonStrings: Record<string, unknown> = { null: null, undefined: undefined, number: 42, object: { a: 1 }, true: true }

describe('the sub-instruction splitter answers as before', () => {
  it('has a recorded answer for every text', () => {
    expect(Object.keys(recorded.expected).sort()).toEqual(Object.keys(recorded.texts).sort())
    expect(Object.keys(recorded.nonStringExpected).sort()).toEqual(Object.keys(nonStrings).sort())
  })

  for (const [name, text] of Object.entries(recorded.texts)) {
    it(name, () => {
      // JSON text on both sides: the order of the pieces counts.
      expect(JSON.stringify(extractSubInstructions(text))).toBe(JSON.stringify(recorded.expected[name]))
    })
  }

  it('gives nothing for a value that is not a string', () => {
    for (const [name, value] of Object.entries(nonStrings)) expect(extractSubInstructions(value)).toEqual(recorded.nonStringExpected[name])
  })

  it('registers each piece under the parent, the first as its truncated instruction', () => {
    const index = new TaskInstructionIndex()
    const text = recorded.texts['all kinds in one parent']
    expect(index.addParentTaskWithSubInstructions('parent', text)).toBe(recorded.expected['all kinds in one parent'].length)
    expect(index.getTruncatedInstruction('parent')).toBe(recorded.expected['all kinds in one parent'][0])
  })
})

describe('calculateSimilarity answers as before', () => {
  for (const [name, [a, b]] of Object.entries(recorded.pairs)) {
    it(name, () => {
      expect(new TaskInstructionIndex().calculateSimilarity(a, b)).toBe(recorded.similarity[name])
    })
  }
})
