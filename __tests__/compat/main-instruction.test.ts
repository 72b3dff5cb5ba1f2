import { describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

// RooStorageDetector.extractMainInstructionFromUI reads the file through the caller's fs and takes
// the main instruction from the core (`compatMainInstructionLegacy`), against what its JavaScript
// answered before (main-instruction-cases.json, recorded from it on the same texts).

const require = createRequire(import.meta.url)
const { RooStorageDetector } = require('../../compat/utils/roo-storage-detector.js')
const recorded: { texts: Record<string, string>; expected: Record<string, string | null> } = JSON.parse(
  fs.readFileSync(path.join(__dirname, 'main-instruction-cases.json'), 'utf8'),
)

describe('extractMainInstructionFromUI answers as before', () => {
  for (const [name, text] of Object.entries(recorded.texts)) {
    it(name, async () => {
      const got = await RooStorageDetector.extractMainInstructionFromUI('/nowhere/ui_messages.json', text)
      expect(got ?? null).toBe(recorded.expected[name])
    })
  }

  it('reads the file when no text is given, its BOM stripped', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-main-'))
    try {
      const file = path.join(dir, 'ui_messages.json')
      fs.writeFileSync(file, recorded.texts['a BOM before the array'])
      expect(await RooStorageDetector.extractMainInstructionFromUI(file)).toBe(recorded.expected['a long first text'])
      expect(await RooStorageDetector.extractMainInstructionFromUI(path.join(dir, 'missing.json'))).toBeUndefined()
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
