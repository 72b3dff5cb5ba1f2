import { describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { core, haveShared, legacyOutputs, legacyTasks, readJson } from './helpers'

interface LegacyOutput {
  taskId: string
  fixtureSet: string
  parentTaskIdFromMetadata: string | null
  workspace: string | null
  title: string | null
  mainInstruction: string | null
  childTaskInstructionPrefixes: string[]
  messageCount: number
  actionCount: number
  totalSize: number
  isCompleted: boolean
  sequenceLength: number
}

const sharedPresent = haveShared('legacy: the comparison with the legacy server output', legacyOutputs)
const outputs = sharedPresent
  ? fs
      .readdirSync(legacyOutputs)
      .filter(f => f.endsWith('.json'))
      .map(f => readJson<LegacyOutput>(path.join(legacyOutputs, f)))
  : []

describe.skipIf(!sharedPresent)('legacy compatibility mode against the legacy server output', () => {
  it('covers every task that has a recorded output', () => {
    expect(outputs).toHaveLength(17)
  })

  const rows: Array<Record<string, string | number>> = []
  for (const expected of outputs) {
    it(`${expected.taskId}: prefixes and counts equal`, async () => {
      const dir = path.join(legacyTasks, expected.fixtureSet, expected.taskId)
      const got = await core.analyzeConversationLegacy(dir)
      expect(got).not.toBeNull()
      expect(got!.childTaskInstructionPrefixes).toEqual(expected.childTaskInstructionPrefixes)
      expect(got!.messageCount).toBe(expected.messageCount)
      expect(got!.actionCount).toBe(expected.actionCount)
      expect(got!.sequenceLength).toBe(expected.sequenceLength)
      expect(got!.totalSize).toBe(expected.totalSize)
      expect(got!.workspace).toBe(expected.workspace)
      expect(got!.title).toBe(expected.title)
      expect(got!.isCompleted).toBe(expected.isCompleted)
      expect(got!.parentTaskId).toBe(expected.parentTaskIdFromMetadata)
      expect(got!.truncatedInstruction?.slice(0, 200) ?? null).toBe(expected.mainInstruction)
      const ours = await core.analyzeConversation(expected.taskId, dir, { includeSequence: false })
      rows.push({
        task: expected.taskId.slice(0, 8),
        legacyPrefixes: got!.childTaskInstructionPrefixes.length,
        ourChildren: ours.childTasks.length,
        legacyMessages: got!.messageCount,
        ourMessages: ours.metadata.messageCount,
        ourActions: ours.metadata.actionCount,
      })
    })
  }

  it('the typed reading beside the legacy one: never more messages, and the measured totals', () => {
    console.table(rows)
    expect(rows.length).toBe(outputs.length)
    // Measured on the 17 reference tasks (legacy prefixes are the legacy chain's matches, children
    // the typed extraction's distinct newTask instructions); a change in either reading shows here.
    for (const r of rows) expect(r.ourMessages, String(r.task)).toBeLessThanOrEqual(r.legacyMessages as number)
    const sum = (k: string) => rows.reduce((n, r) => n + (r[k] as number), 0)
    expect({ legacyPrefixes: sum('legacyPrefixes'), ourChildren: sum('ourChildren'), legacyMessages: sum('legacyMessages'), ourMessages: sum('ourMessages') }).toEqual({
      legacyPrefixes: 43,
      ourChildren: 36,
      legacyMessages: 1033,
      ourMessages: 197,
    })
  })

  it('extractNewTaskInstructionsLegacy reproduces the raw chain (10 raw instructions for bc93a6f7)', async () => {
    const raw = await core.extractNewTaskInstructionsLegacy(
      path.join(legacyTasks, 'real-tasks', 'bc93a6f7-cd2e-4686-a832-46e3cd14d338'),
    )
    expect(raw).toHaveLength(10)
    expect(raw.map(i => i.mode)).toEqual([
      'task', 'architect', 'debug', 'debug mode', 'code', 'debug', 'debug mode', 'code', 'code mode', 'architect',
    ])
  })
})

describe('the legacy key function', () => {
  it('computeInstructionPrefix matches the measured legacy examples', () => {
    expect(core.computeInstructionPrefix('Hello   World\n\nfoo')).toBe('hello world foo')
    expect(core.computeInstructionPrefix('&lt;task&gt; a &amp; b &#65;&#x42; \\n done')).toBe('&lt;task&gt; a &amp; b ab done')
    expect(core.computeInstructionPrefix('<task>\nMain  instruction here\n</task> trailing')).toBe('trailing main instruction here')
    expect(core.computeInstructionPrefix('"content": "Bonjour le monde"')).toBe('bonjour le monde')
    expect(core.computeInstructionPrefix('<new_task><mode>code</mode><message>Do X thing please</message></new_task>')).toBe(
      'code do x thing please do x thing please',
    )
    expect(core.computeInstructionPrefix('\uFEFFİstanbul ÉTÉ')).toBe('i̇stanbul été')
    expect(core.computeInstructionPrefix('x'.repeat(300), 10)).toBe('x'.repeat(10))
  })
})
