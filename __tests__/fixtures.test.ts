import { describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { core, readJson, repoRoot } from './helpers'

interface Expected {
  taskId: string
  title: string | null
  instruction: string | null
  mode: string | null
  workspace: string | null
  createdAt: number | null
  lastActivity: number | null
  storedParent: string | null
  parentTaskId: string | null
  childInstructions: string[]
  toolCalls: number
  tokensIn: number
  tokensOut: number
  cacheWrites: number
  cacheReads: number
  totalCost: number
  isCompleted: boolean
  damage: string | null
  recoverableMessages: number
}

const storesDir = path.join(repoRoot, 'fixtures', 'stores')
const stores = fs.readdirSync(storesDir).filter(d => fs.existsSync(path.join(storesDir, d, 'expected')))

describe('the project fixtures, one store per format era, against their expected facts', () => {
  it('has a store for every era', () => {
    expect(stores.sort()).toEqual(
      [
        'claude-dev-2024',
        'cline-v3.4x',
        'condense-era-v3.3x',
        'damaged',
        'history-item-v3.50',
        'kilo-code-v4',
        'native-tools-v3.45',
        'roo-code-3.52',
        'stack-era-v3.20',
        'v2-wrapper',
        'zoo-code-2026',
        'zoo-code-3.80',
      ].sort(),
    )
  })

  for (const store of stores) {
    describe(store, () => {
      const expectedDir = path.join(storesDir, store, 'expected')
      const expected = fs.readdirSync(expectedDir).map(f => readJson<Expected>(path.join(expectedDir, f)))
      it('every task gets a skeleton, or a diagnostic when it has no files', async () => {
        const r = await core.scanTasks(path.join(storesDir, store, 'tasks'))
        const ids = new Set(r.skeletons.map(s => s.taskId))
        for (const e of expected) {
          if (e.damage === 'no-files') {
            expect(ids.has(e.taskId)).toBe(false)
            expect(r.diagnostics.some(d => d.file.endsWith(e.taskId) && d.code === 'no_task_files')).toBe(true)
          } else {
            expect(ids.has(e.taskId), e.taskId).toBe(true)
          }
        }
      })
      for (const e of expected.filter(x => x.damage !== 'no-files')) {
        it(`${e.taskId}${e.damage ? ` (${e.damage})` : ''}`, async () => {
          const s = await core.analyzeConversation(e.taskId, path.join(storesDir, store, 'tasks', e.taskId), {
            includeSequence: false,
          })
          expect(s.instruction ?? null, 'instruction').toBe(e.instruction)
          expect(s.metadata.title ?? null, 'title').toBe(e.title)
          expect(s.metadata.mode ?? null, 'mode').toBe(e.mode)
          expect(s.metadata.workspace ?? null, 'workspace').toBe(e.workspace)
          expect(s.createdAtMs ?? null, 'createdAt').toBe(e.createdAt)
          expect(s.lastActivityMs ?? null, 'lastActivity').toBe(e.lastActivity)
          expect(s.parentTaskId ?? null, 'stored parent').toBe(e.storedParent)
          expect(s.childTasks.map(c => c.message), 'children').toEqual(e.childInstructions)
          expect(s.apiTotals.tokensIn, 'tokensIn').toBe(e.tokensIn)
          expect(s.apiTotals.tokensOut, 'tokensOut').toBe(e.tokensOut)
          expect(s.apiTotals.cacheWrites, 'cacheWrites').toBe(e.cacheWrites)
          expect(s.apiTotals.cacheReads, 'cacheReads').toBe(e.cacheReads)
          expect(s.apiTotals.totalCost, 'totalCost').toBe(e.totalCost)
          expect(s.isCompleted, 'isCompleted').toBe(e.isCompleted)
          expect(s.files.uiMessages, 'recovered UI messages').toBe(e.recoverableMessages)
          if (e.damage) expect(s.diagnostics.length, 'a damaged task says what is wrong').toBeGreaterThan(0)
        })
      }
    })
  }
})
