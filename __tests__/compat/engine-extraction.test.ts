import { describe, it, expect, afterEach, vi } from 'vitest'
import { createRequire } from 'node:module'

// The contracts of compat's instruction index and extraction coordinator that the legacy server's
// own suites rely on through a re-export: the caller's sub-instruction splitter reached through
// io.use, per-K keys, debug logs, the similarity self-check through the instance, and the
// coordinator's replaceable extractors with the legacy errors.

const require = createRequire(import.meta.url)
const io = require('../../compat/io.js')
const { TaskInstructionIndex, computeInstructionPrefix } = require('../../compat/utils/task-instruction-index.js')
const { MessageExtractionCoordinator } = require('../../compat/utils/message-extraction-coordinator.js')
const { HierarchyReconstructionEngine } = require('../../compat/utils/hierarchy-reconstruction-engine.js')
const nodeFs = require('fs')
const nodePath = require('path')

const logLines = () => vi.mocked(console.log).mock.calls.map((c) => c.map(String).join(' '))

afterEach(() => {
  vi.restoreAllMocks()
  io.use({ subInstructionExtractor: { extractSubInstructions: undefined }, fs: nodeFs, path: nodePath })
  delete process.env.ROO_DEBUG_INSTRUCTIONS
})

describe('TaskInstructionIndex: what the legacy suites observe', () => {
  it('splits a parent text with the splitter handed over through io.use, and keeps its first piece', () => {
    const split = vi.fn(() => ['first delegated piece of work', 'second delegated piece of work'])
    io.use({ subInstructionExtractor: { extractSubInstructions: split } })
    const index = new TaskInstructionIndex()
    expect(index.addParentTaskWithSubInstructions('P1', 'Some text')).toBe(2)
    expect(split).toHaveBeenCalledWith('Some text')
    expect(index.getTruncatedInstruction('P1')).toBe('first delegated piece of work')
    expect(index.getInstructionsByParent('P1')).toEqual(['first delegated piece of work', 'second delegated piece of work'])
  })

  it('the fallback (no piece found) keeps the key of the whole text, re-creating a wiped map', () => {
    io.use({ subInstructionExtractor: { extractSubInstructions: () => [] } })
    const index = new TaskInstructionIndex()
    index.tempTruncatedInstructions = null
    expect(index.addParentTaskWithSubInstructions('P2', 'Fallback TEXT instruction')).toBe(1)
    expect(index.tempTruncatedInstructions).toBeInstanceOf(Map)
    expect(index.getTruncatedInstruction('P2')).toBe(computeInstructionPrefix('Fallback TEXT instruction', 192))
  })

  it('a custom K cuts the key: getInstructionsByParent gives each key once, in the order first added', () => {
    const index = new TaskInstructionIndex()
    index.addInstruction('P3', 'a'.repeat(300), undefined, 50)
    index.addInstruction('P3', 'Second instruction')
    index.addInstruction('P3', 'a'.repeat(300), undefined, 50)
    expect(index.getInstructionsByParent('P3')).toEqual(['a'.repeat(50), 'second instruction'])
    expect(index.searchExactPrefix('a'.repeat(50))).toEqual([{ taskId: 'P3', prefix: 'a'.repeat(50) }])
    expect(index.getInstructionsByParent('nobody')).toEqual([])
  })

  it('ROO_DEBUG_INSTRUCTIONS=1: the search logs each length tried and its outcome, with the same answer', () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    const index = new TaskInstructionIndex()
    index.addInstruction('P4', 'alpha bravo charlie delta echo foxtrot')
    const child = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima'
    const quiet = index.searchExactPrefix(child, 96)
    process.env.ROO_DEBUG_INSTRUCTIONS = '1'
    expect(index.searchExactPrefix(child, 96)).toEqual(quiet)
    expect(quiet).toEqual([{ taskId: 'P4', prefix: 'alpha bravo charlie delta echo foxtrot' }])
    expect(index.searchExactPrefix('nothing of the kind', 64)).toEqual([])
    const lines = logLines()
    expect(lines.some((l) => l.includes('Starting search'))).toBe(true)
    expect(lines.some((l) => l.includes('Trying prefix length 96'))).toBe(true)
    expect(lines.some((l) => l.includes('✅ Found match'))).toBe(true)
    expect(lines.some((l) => l.includes('No match found for any prefix length'))).toBe(true)
  })

  it('the debug search agrees with the native one where only a shorter length hits', () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    const index = new TaskInstructionIndex()
    index.addInstruction('P5', 'build the parser')
    index.addInstruction('P6', 'build the parser of the history files')
    const child = 'build the parser of the history index with care and tests'
    const quiet = index.searchExactPrefix(child)
    process.env.ROO_DEBUG_INSTRUCTIONS = '1'
    expect(index.searchExactPrefix(child)).toEqual(quiet)
  })

  it('testSimilarityAlgorithm asks the instance, so a replaced calculateSimilarity decides the outcome', () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    const index = new TaskInstructionIndex()
    index.testSimilarityAlgorithm()
    expect(logLines().some((l) => l.includes('VALIDATION SDDD RÉUSSIE'))).toBe(true)
    vi.mocked(console.log).mockClear()
    index.calculateSimilarity = () => 0.05
    index.testSimilarityAlgorithm()
    const lines = logLines()
    expect(lines.some((l) => l.includes('ÉCHEC VALIDATION SDDD'))).toBe(true)
    expect(lines.filter((l) => l.includes('❌ NO MATCH'))).toHaveLength(3)
  })

  it('calculateSimilarity: an empty side gives 0, even against itself', () => {
    const index = new TaskInstructionIndex()
    expect(index.calculateSimilarity('', '')).toBe(0)
    expect(index.calculateSimilarity('same words here', 'same words here')).toBe(1)
  })
})

describe('MessageExtractionCoordinator: what the legacy suites observe', () => {
  const apiCall = (content: Record<string, unknown>) => ({ type: 'api_req_started', content: { tool: 'newTask', ...content } })

  it('a newTask call without text is an API Content Extractor error; the walk goes on', () => {
    const c = new MessageExtractionCoordinator()
    const r = c.extractFromMessages([apiCall({ mode: 'code', content: 'Valid message with sufficient length for testing' }), apiCall({})])
    expect(r.instructions).toHaveLength(1)
    expect(r.processedMessages).toBe(2)
    expect(r.errors).toEqual(['API Content Extractor error: GenericError: Invalid content in message'])
  })

  it('matchedPatterns names the extractor once per message that gave instructions', () => {
    const c = new MessageExtractionCoordinator()
    const task = { type: 'say', text: '<task>Write the streaming reader of the history files</task>' }
    expect(c.extractFromMessages([task, task]).matchedPatterns).toEqual(['UI Simple Task Extractor', 'UI Simple Task Extractor'])
  })

  it('an extractor replaced on the instance is called, and its throw recorded and logged under debug', () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const c = new MessageExtractionCoordinator()
    const extractors = (c as unknown as { extractors: Array<{ extract: (m: unknown) => unknown[] }> }).extractors
    extractors[0].extract = () => {
      throw new Error('synthetic')
    }
    const task = { type: 'say', text: '<task>Write the streaming reader of the history files</task>' }
    const r = c.extractFromMessages([apiCall({ mode: 'code', content: 'short text' }), task], { enableDebug: true })
    expect(r.errors).toEqual(['API Content Extractor error: Error: synthetic'])
    // The walk goes on: the next message is found by the extractors of ours after the replaced one.
    expect(r.matchedPatterns).toEqual(['UI Simple Task Extractor'])
    expect(r.processedMessages).toBe(2)
    expect(error.mock.calls.some((call) => String(call[0]).includes('❌ API Content Extractor error'))).toBe(true)
    expect(logLines().some((l) => l.includes('- Error details'))).toBe(true)
  })

  it('debug flag: from the environment at construction, then from each call options', () => {
    process.env.ROO_DEBUG_INSTRUCTIONS = '1'
    const c = new MessageExtractionCoordinator() as unknown as { debugEnabled: boolean; setDebugEnabled(b: boolean): void }
    expect(c.debugEnabled).toBe(true)
    c.setDebugEnabled(false)
    expect(c.debugEnabled).toBe(false)
  })

  it('a throwing iteration is a global extraction error', () => {
    const c = new MessageExtractionCoordinator()
    const bad = new Proxy([], {
      get(target, prop) {
        if (prop === Symbol.iterator) return () => { throw new Error('no walk') }
        return Reflect.get(target, prop)
      },
    })
    expect(c.extractFromMessages(bad).errors).toEqual(['Global extraction error: Error: no walk'])
  })
})

describe('HierarchyReconstructionEngine: files through the fs and path modules handed to compat/io', () => {
  /** An fs holding one ui_messages.json in memory, as a module mock of the caller would. */
  function memoryFs(files: Record<string, string>) {
    return {
      existsSync: vi.fn((p: string) => p in files),
      readFileSync: vi.fn((p: string) => {
        if (!(p in files)) throw new Error(`ENOENT ${p}`)
        return files[p]
      }),
      statSync: vi.fn(() => ({ size: 1000, mtime: new Date('2025-01-01T00:00:00Z') })),
    }
  }
  const slashPath = { join: (...parts: string[]) => parts.join('/') }
  const skeleton = (taskId: string) => ({ taskId, metadata: { createdAt: '2025-01-01T00:00:00Z', workspace: 'w', dataSource: `/mem/${taskId}` } })

  it('phase 1 reads ui_messages.json through the handed fs, tool calls given as objects included', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    const fs = memoryFs({
      '/mem/p1/ui_messages.json': JSON.stringify([
        { type: 'ask', ask: 'tool', ts: 1700000000, text: { tool: 'newTask', mode: 'code', content: 'Build the deployment pipeline for production' } },
        { type: 'say', role: 'assistant', content: [{ type: 'text', text: 'a block' }] },
      ]),
    })
    io.use({ fs, path: slashPath })
    const engine = new HierarchyReconstructionEngine({ debugMode: false })
    const [s] = engine.enhanceSkeletons([skeleton('p1')])
    const r = await engine.executePhase1([s])
    expect(fs.readFileSync).toHaveBeenCalledWith('/mem/p1/ui_messages.json', 'utf-8')
    expect(r.totalInstructionsExtracted).toBe(1)
    expect(s.parsedSubtaskInstructions.instructions[0]).toMatchObject({ mode: 'code', message: 'Build the deployment pipeline for production' })
    expect(s.parsedSubtaskInstructions.sourceFiles.ui_messages).toMatchObject({ exists: true, size: 1000, path: '/mem/p1/ui_messages.json' })
  })

  it('a read error of the handed fs is the task\'s phase-1 error', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const fs = memoryFs({})
    fs.existsSync.mockReturnValue(true)
    io.use({ fs, path: slashPath })
    const engine = new HierarchyReconstructionEngine({ debugMode: false })
    const [s] = engine.enhanceSkeletons([skeleton('p2')])
    const r = await engine.executePhase1([s])
    expect(r.errors).toEqual([{ taskId: 'p2', error: 'Error: ENOENT /mem/p2/ui_messages.json' }])
    expect(s.processingState.phase1Completed).toBe(false)
  })

  it('calculateChecksums hashes the files the handed fs serves', async () => {
    const fs = memoryFs({ '/mem/p3/ui_messages.json': '{"hello":"world"}', '/mem/p3/metadata.json': '{}' })
    io.use({ fs, path: slashPath })
    const sums = await new HierarchyReconstructionEngine({ debugMode: false }).calculateChecksums(skeleton('p3'))
    expect(Object.keys(sums)).toEqual(['ui_messages', 'metadata'])
    expect(sums.ui_messages).toMatch(/^[0-9a-f]{32}$/)
  })
})

describe('fixed mode: the legacy chain with its defects corrected', () => {
  const { setMode } = require('../../compat/mode.js')
  afterEach(() => setMode(null))

  const subtask = 'Write the streaming reader of the history files, one element at a time'
  const messages = [
    // The task's own instruction, as the first request sends it to the model.
    { type: 'say', say: 'api_req_started', ts: 1, text: JSON.stringify({ request: '<task>Plan the reader work and split it in steps</task>' }) },
    { type: 'ask', ask: 'tool', ts: 2, text: JSON.stringify({ tool: 'newTask', mode: 'code', content: subtask }) },
    // The same subtask seen again in the next request, as a tool result.
    { type: 'say', say: 'api_req_started', ts: 3, text: JSON.stringify({ request: `[new_task in 💻 Code mode: '${subtask}'] Result: done` }) },
    { type: 'api_req_started', content: { tool: 'newTask', mode: 'debug', content: 'Trace the request lifecycle end to end' } },
  ]

  it('legacy: the own instruction, the subtask twice (once with mode "code mode")', () => {
    setMode('legacy')
    const r = new MessageExtractionCoordinator().extractFromMessages(messages)
    expect(r.instructions.map((i: { mode: string }) => i.mode)).toEqual(['task', 'code', 'code mode', 'debug'])
  })

  it('fixed: each subtask once, not the own instruction, modes without " mode"; errors and counts as legacy', () => {
    setMode('fixed')
    const c = new MessageExtractionCoordinator()
    const r = c.extractFromMessages([...messages, { type: 'api_req_started', content: { tool: 'newTask' } }])
    expect(r.instructions.map((i: { mode: string; message: string }) => [i.mode, i.message])).toEqual([
      ['code', subtask],
      ['debug', 'Trace the request lifecycle end to end'],
    ])
    expect(r.matchedPatterns).toEqual(['UI Ask/Tool Extractor', 'API Content Extractor'])
    expect(r.processedMessages).toBe(5)
    expect(r.errors).toEqual(['API Content Extractor error: GenericError: Invalid content in message'])
    // The walk one extractor at a time (debug) gives the same.
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    const d = c.extractFromMessages(messages, { enableDebug: true })
    expect(d.instructions).toEqual(r.instructions)
  })

  it('fixed engine: a stored parent outside the given tasks is kept and counted unresolved', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    const engine = new HierarchyReconstructionEngine({ debugMode: false, mode: 'fixed' })
    const [s] = engine.enhanceSkeletons([
      { taskId: 'c1', parentTaskId: 'elsewhere', truncatedInstruction: 'Créer une architecture modulaire', metadata: { createdAt: '2025-01-15T10:15:00Z', workspace: 'w' } },
    ])
    const r = await engine.executePhase2([s])
    expect(r).toMatchObject({ processedCount: 1, resolvedCount: 0, unresolvedCount: 1 })
    expect(s.parentTaskId).toBe('elsewhere')
  })
})
