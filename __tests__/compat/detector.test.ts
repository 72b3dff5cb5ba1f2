/**
 * The contract rows of docs/compat.md §1–§2: `computeInstructionPrefix`, `TaskInstructionIndex`
 * (a native class) and `RooStorageDetector` on null/empty input, missing folders, empty files,
 * non-array JSON, BOM, UTF-16, file contents served through spies on `fs/promises`, preloaded
 * content, the parent priority and the registration of prefixes in the shared index.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { createRequire } from 'node:module'
import { core, realTasks, CHILD, tempDir, haveShared } from '../helpers'
import type * as IndexModule from '../../compat/utils/task-instruction-index.js'
import type * as DetectorModule from '../../compat/utils/roo-storage-detector.js'
import type * as Mode from '../../compat/mode.js'

const require = createRequire(import.meta.url)
const { TaskInstructionIndex, computeInstructionPrefix, globalTaskInstructionIndex } =
  require('../../compat/utils/task-instruction-index.js') as typeof IndexModule
const { RooStorageDetector } = require('../../compat/utils/roo-storage-detector.js') as typeof DetectorModule
const { setMode, getMode } = require('../../compat/mode.js') as typeof Mode

const sharedPresent = haveShared('compat detector: the real child task', realTasks)

const NEW_TASK_UI = JSON.stringify([
  { ts: 1700000000000, type: 'say', say: 'text', text: 'Organise the release of version two of the parser' },
  {
    ts: 1700000001000,
    type: 'ask',
    ask: 'tool',
    text: JSON.stringify({ tool: 'newTask', mode: 'code', content: 'Implement the streaming reader for the history files and its tests' }),
  },
])

function writeTask(dir: string, files: Record<string, string | Buffer>): string {
  fs.mkdirSync(dir, { recursive: true })
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content)
  return dir
}

beforeEach(() => {
  vi.spyOn(console, 'log').mockImplementation(() => {})
  vi.spyOn(console, 'warn').mockImplementation(() => {})
  vi.spyOn(console, 'error').mockImplementation(() => {})
  globalTaskInstructionIndex.clear()
})
afterEach(() => {
  vi.restoreAllMocks()
  setMode(null)
})

describe('mode', () => {
  it('is legacy by default, follows ROO_STATE_COMPAT_MODE, and setMode wins', () => {
    const saved = process.env.ROO_STATE_COMPAT_MODE
    delete process.env.ROO_STATE_COMPAT_MODE
    expect(getMode()).toBe('legacy')
    process.env.ROO_STATE_COMPAT_MODE = 'fixed'
    expect(getMode()).toBe('fixed')
    setMode('legacy')
    expect(getMode()).toBe('legacy')
    setMode(null)
    expect(getMode()).toBe('fixed')
    if (saved === undefined) delete process.env.ROO_STATE_COMPAT_MODE
    else process.env.ROO_STATE_COMPAT_MODE = saved
    expect(() => setMode('strict' as never)).toThrow(/INVALID_ARGUMENT/)
  })
})

describe('computeInstructionPrefix', () => {
  it('gives an empty string for falsy input instead of throwing', () => {
    for (const v of [null, undefined, '', 0]) expect(computeInstructionPrefix(v)).toBe('')
  })
  it('takes non-strings through String() and equals the binding on strings', () => {
    expect(computeInstructionPrefix(12345)).toBe('12345')
    const text = '<task>Hello   World</task> and   <b>more</b>'
    expect(computeInstructionPrefix(text)).toBe(core.computeInstructionPrefix(text, 192))
    expect(computeInstructionPrefix('<task>Hello   World</task>')).toBe('hello world')
    expect(computeInstructionPrefix('x'.repeat(300), 50)).toHaveLength(50)
  })
  it('logs the extracted parent instruction when ROO_DEBUG_INSTRUCTIONS=1', () => {
    process.env.ROO_DEBUG_INSTRUCTIONS = '1'
    try {
      computeInstructionPrefix('<task>Build the parser</task>')
    } finally {
      delete process.env.ROO_DEBUG_INSTRUCTIONS
    }
    expect(vi.mocked(console.log).mock.calls.flat().join('\n')).toContain('SDDD: Extracted parent instruction')
  })
})

describe('TaskInstructionIndex (native trie)', () => {
  it('keeps its trie in a native object', () => {
    const index = new TaskInstructionIndex() as unknown as { native: unknown }
    expect(index.native).toBeInstanceOf((core as unknown as { NativeInstructionIndex: new () => unknown }).NativeInstructionIndex)
  })
  it('answers with the legacy exact-trie semantics, not a longest-prefix match', () => {
    const index = new TaskInstructionIndex()
    index.addInstruction('P1', 'abc def ghi')
    index.addInstruction('P2', 'abc def ghi jkl mno')
    expect(index.searchExactPrefix('abc def ghi')).toEqual([{ taskId: 'P1', prefix: 'abc def ghi' }])
    expect(index.searchExactPrefix('abc def ghi jkl mno pqr').map((m) => m.taskId)).toEqual(['P2'])
    expect(index.searchExactPrefix('abc def ghi xyz')).toEqual([])
    expect(index.searchExactPrefix('')).toEqual([])
    expect(index.validateParentChildRelation('abc def ghi', 'P1')).toBe(true)
    expect(index.validateParentChildRelation('abc def ghi', 'P2')).toBe(false)
  })
  it('ignores empty prefixes, collects several parents per key, counts keys, clears', async () => {
    const index = new TaskInstructionIndex()
    index.addInstruction('P1', '')
    expect(await index.getSize()).toBe(0)
    index.addInstruction('P1', 'write the migration guide for the parser')
    index.addInstruction('P2', 'Write the   migration guide for the parser')
    index.addInstruction('P2', 'review the streaming reader for history files')
    expect(index.getStats()).toEqual({ totalNodes: 2, totalInstructions: 2, avgDepth: 1.5 })
    expect(index.searchExactPrefix('write the migration guide for the parser').map((m) => m.taskId)).toEqual(['P1', 'P2'])
    expect(await index.getAllParentTaskIds()).toEqual(['P1', 'P2'])
    expect(index.getInstructionsByParent('P2')).toHaveLength(2)
    expect(await index.searchByTaskId('P1')).toEqual([{ taskId: 'P1', prefix: 'write the migration guide for the parser' }])
    expect(await index.getParentsForInstruction('review the streaming reader for history files')).toEqual([
      { taskId: 'P2', prefix: 'review the streaming reader for history files' },
    ])
    index.clear()
    expect(await index.getSize()).toBe(0)
    expect(index.searchExactPrefix('write the migration guide for the parser')).toEqual([])
  })
  it('rebuilds from skeleton prefixes on top of what it holds and keeps the temporary truncated instructions across clear()', () => {
    const index = new TaskInstructionIndex()
    expect(index.addParentTaskWithSubInstructions('P9', '')).toBe(0)
    const n = index.addParentTaskWithSubInstructions('P9', '- write the first chapter of the guide\n- write the second chapter of the guide')
    expect(n).toBe(2)
    expect(index.getTruncatedInstruction('P9')).toBe('write the first chapter of the guide')
    index.rebuildFromSkeletons(new Map([['T1', ['first prefix of a task', 'second prefix of a task']], ['T2', []]]))
    // The legacy rebuild adds; it does not clear first.
    expect(index.getStats().totalInstructions).toBe(4)
    expect(index.getInstructionsByParent('T1')).toEqual(['first prefix of a task', 'second prefix of a task'])
    index.clear()
    expect(index.getStats().totalInstructions).toBe(0)
    expect(index.getTruncatedInstruction('P9')).toBe('write the first chapter of the guide')
    expect(vi.mocked(console.log).mock.calls.flat().join('\n')).toMatch(/Reconstruction[\s\S]*Index reconstruit/)
  })
  it('keeps the deprecated lookups as warnings with fixed answers', () => {
    const index = new TaskInstructionIndex()
    expect(index.findPotentialParent('x')).toBeUndefined()
    expect(index.findAllPotentialParents('x')).toEqual([])
    expect(vi.mocked(console.warn).mock.calls.flat().join('\n')).toContain('DEPRECATED')
  })
})

describe('RooStorageDetector.analyzeConversation', () => {
  it('resolves null for a missing folder and for a folder without metadata, api or ui file, in both modes', async () => {
    const dir = tempDir()
    writeTask(path.join(dir, 'only-history'), { 'history_item.json': '{"id":"x"}' })
    for (const mode of ['legacy', 'fixed'] as const) {
      setMode(mode)
      expect(await RooStorageDetector.analyzeConversation('nope', path.join(dir, 'nope'))).toBeNull()
      expect(await RooStorageDetector.analyzeConversation('only-history', path.join(dir, 'only-history'))).toBeNull()
    }
  })

  it('empty and non-array files: legacy keeps its quirks, fixed reads no message', async () => {
    const dir = tempDir()
    writeTask(path.join(dir, 'empty'), { 'ui_messages.json': '' })
    writeTask(path.join(dir, 'object'), { 'ui_messages.json': '{"not":"array"}' })
    setMode('legacy')
    const empty = await RooStorageDetector.analyzeConversation('empty', path.join(dir, 'empty'))
    expect(empty?.sequence).toEqual([])
    expect(empty?.metadata.messageCount).toBe(0)
    // The legacy builder reads an object without `messages` as one empty assistant message.
    const object = await RooStorageDetector.analyzeConversation('object', path.join(dir, 'object'))
    expect(object?.sequence).toEqual([{ role: 'assistant', content: '', timestamp: '1970-01-01T00:00:00.000Z', isTruncated: false }])
    setMode('fixed')
    expect((await RooStorageDetector.analyzeConversation('object', path.join(dir, 'object')))?.metadata.messageCount).toBe(0)
    expect(await RooStorageDetector.loadUIMessages(path.join(dir, 'object', 'ui_messages.json'))).toEqual([])
  })

  it('reads parents in the legacy priority: metadata parentTaskId, then parent_task_id, then the history item', async () => {
    const dir = tempDir()
    const ui = '[{"ts":1700000000000,"type":"say","say":"text","text":"hello"}]'
    writeTask(path.join(dir, 'a'), {
      'task_metadata.json': '{"parentTaskId":"from-metadata","parent_task_id":"snake"}',
      'history_item.json': '{"parentTaskId":"from-history"}',
      'ui_messages.json': ui,
    })
    writeTask(path.join(dir, 'b'), { 'task_metadata.json': '{"parent_task_id":"snake"}', 'history_item.json': '{"parentTaskId":"from-history"}', 'ui_messages.json': ui })
    writeTask(path.join(dir, 'c'), { 'task_metadata.json': '{"parentTaskId":""}', 'history_item.json': '{"parentTaskId":"from-history"}', 'ui_messages.json': ui })
    for (const mode of ['legacy', 'fixed'] as const) {
      setMode(mode)
      expect((await RooStorageDetector.analyzeConversation('a', path.join(dir, 'a')))?.parentTaskId).toBe('from-metadata')
      expect((await RooStorageDetector.analyzeConversation('b', path.join(dir, 'b')))?.parentTaskId).toBe('snake')
      expect((await RooStorageDetector.analyzeConversation('c', path.join(dir, 'c')))?.parentTaskId).toBe('from-history')
    }
  })

  it('BOM and UTF-16: legacy strips a BOM but cannot read UTF-16; fixed reads both', async () => {
    const dir = tempDir()
    const ui = '[{"ts":1700000000000,"type":"say","say":"text","text":"hello"}]'
    writeTask(path.join(dir, 'bom'), { 'task_metadata.json': '\ufeff{"title":"Bom title"}', 'ui_messages.json': ui })
    writeTask(path.join(dir, 'utf16'), {
      'task_metadata.json': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"title":"Wide title"}', 'utf16le')]),
      'ui_messages.json': ui,
    })
    setMode('legacy')
    expect((await RooStorageDetector.analyzeConversation('bom', path.join(dir, 'bom')))?.metadata.title).toBe('Bom title')
    const legacyWide = await RooStorageDetector.analyzeConversation('utf16', path.join(dir, 'utf16'))
    expect(legacyWide).not.toBeNull()
    expect(legacyWide?.metadata.title).toBeUndefined()
    setMode('fixed')
    expect((await RooStorageDetector.analyzeConversation('utf16', path.join(dir, 'utf16')))?.metadata.title).toBe('Wide title')
    // Fixed mode dates the messages from their `ts`, legacy from the (absent) `timestamp`.
    const fixed = await RooStorageDetector.analyzeConversation('bom', path.join(dir, 'bom'))
    expect(fixed?.sequence[0]?.timestamp).toBe('2023-11-14T22:13:20.000Z')
  })

  it('registers the prefixes in the shared index only with the production hierarchy', async () => {
    const dir = writeTask(path.join(tempDir(), 'parent-task'), { 'ui_messages.json': NEW_TASK_UI })
    setMode('legacy')
    await RooStorageDetector.analyzeConversation('parent-task', dir, false)
    expect(await globalTaskInstructionIndex.getSize()).toBe(0)
    const s = await RooStorageDetector.analyzeConversation('parent-task', dir, true)
    expect(s?.childTaskInstructionPrefixes).toEqual(['implement the streaming reader for the history files and its tests'])
    expect(globalTaskInstructionIndex.searchExactPrefix('Implement the streaming reader for the history files and its tests')).toEqual([
      { taskId: 'parent-task', prefix: 'implement the streaming reader for the history files and its tests' },
    ])
  })

  it('reads task files through fs/promises: contents served by spies reach the native builder', async () => {
    const root = '/virtual/store/tasks/virtual-task'
    const files: Record<string, string> = {
      [`${root}/ui_messages.json`]: NEW_TASK_UI,
      [`${root}/task_metadata.json`]: '{"title":"Served from memory","parentTaskId":"virtual-parent"}',
    }
    const stat = (p: string) => {
      if (p === root) return { size: 0, isDirectory: () => true, isFile: () => false, mtime: new Date(0), birthtime: new Date(0) }
      if (p in files) return { size: Buffer.byteLength(files[p]), isDirectory: () => false, isFile: () => true, mtime: new Date(0), birthtime: new Date(0) }
      throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' })
    }
    vi.spyOn(fsp, 'stat').mockImplementation((async (p: fs.PathLike) => stat(String(p))) as unknown as typeof fsp.stat)
    vi.spyOn(fsp, 'readFile').mockImplementation((async (p: fs.PathLike, encoding?: unknown) => {
      const key = String(p)
      if (!(key in files)) throw Object.assign(new Error(`ENOENT: ${key}`), { code: 'ENOENT' })
      return encoding ? files[key] : Buffer.from(files[key])
    }) as unknown as typeof fsp.readFile)
    setMode('legacy')
    const s = await RooStorageDetector.analyzeConversation('virtual-task', root)
    expect(s?.metadata.title).toBe('Served from memory')
    expect(s?.parentTaskId).toBe('virtual-parent')
    expect(s?.metadata.messageCount).toBe(2)
    expect(s?.childTaskInstructionPrefixes).toEqual(['implement the streaming reader for the history files and its tests'])
    expect(s?.metadata.totalSize).toBe(Buffer.byteLength(files[`${root}/ui_messages.json`]) + Buffer.byteLength(files[`${root}/task_metadata.json`]))
  })
})

describe('RooStorageDetector extraction entry points', () => {
  it('honours preloaded content without touching the disk, pushes into the given array, never throws', async () => {
    const out: Array<{ message: string }> = []
    await RooStorageDetector.extractFromMessageFile('/no/such/file.json', out as never, 0, false, NEW_TASK_UI)
    expect(out.map((i) => i.message)).toEqual(['Implement the streaming reader for the history files and its tests'])
    await expect(RooStorageDetector.extractFromMessageFile('/no/such/file.json', out as never)).resolves.toBeUndefined()
    await expect(RooStorageDetector.extractFromMessageFile('/no/such/file.json', out as never, 0, false, '')).resolves.toBeUndefined()
    expect(out).toHaveLength(1)
  })

  it('goes through the class at call time and through a coordinator override', async () => {
    const spy = vi.spyOn(RooStorageDetector, 'extractFromMessageFile')
    await RooStorageDetector.extractNewTaskInstructionsFromUI('/no/file', 0, NEW_TASK_UI)
    expect(spy).toHaveBeenCalledWith('/no/file', expect.any(Array), 0, false, NEW_TASK_UI)
    spy.mockRestore()
    const extractFromMessages = vi.fn(() => ({ instructions: [{ timestamp: 1, mode: 'code', message: 'from the override' }] }))
    RooStorageDetector.setCoordinatorOverride({ extractFromMessages })
    try {
      const got = await RooStorageDetector.extractNewTaskInstructionsFromUI('/no/file', 0, NEW_TASK_UI)
      expect(got.map((i) => i.message)).toEqual(['from the override'])
      expect(extractFromMessages).toHaveBeenCalledWith(expect.any(Array), { maxLines: 0, onlyJsonFormat: false, enableDebug: false })
    } finally {
      RooStorageDetector.setCoordinatorOverride(null)
    }
  })

  it.skipIf(!sharedPresent)('finds the 10 raw instructions of the real child task, duplicates and its own included', async () => {
    const got = await RooStorageDetector.extractNewTaskInstructionsFromUI(path.join(realTasks, CHILD, 'ui_messages.json'))
    expect(got).toHaveLength(10)
  })

  it('main instruction: undefined for a missing, empty or non-array file', async () => {
    const dir = tempDir()
    writeTask(dir, { 'a.json': '', 'b.json': '{"x":1}' })
    expect(await RooStorageDetector.extractMainInstructionFromUI(path.join(dir, 'missing.json'))).toBeUndefined()
    expect(await RooStorageDetector.extractMainInstructionFromUI(path.join(dir, 'a.json'))).toBeUndefined()
    expect(await RooStorageDetector.extractMainInstructionFromUI(path.join(dir, 'b.json'))).toBeUndefined()
  })
})

describe('RooStorageDetector storage', () => {
  it('returns any truthy cached location list first, the empty list included', async () => {
    const saved = RooStorageDetector.cacheManager
    try {
      RooStorageDetector.cacheManager = { get: async () => ['/injected/location'], set: async () => {} }
      expect(await RooStorageDetector.detectStorageLocations()).toEqual(['/injected/location'])
      RooStorageDetector.cacheManager = { get: async () => [], set: async () => {} }
      expect(await RooStorageDetector.detectStorageLocations()).toEqual([])
    } finally {
      RooStorageDetector.cacheManager = saved
    }
  })

  it('stats a store one level deep and rejects an unreadable folder', async () => {
    const dir = tempDir()
    writeTask(path.join(dir, 't1'), { 'ui_messages.json': '[]', 'x.json': '12345' })
    writeTask(path.join(dir, 't2'), { 'ui_messages.json': '[1]' })
    expect(await RooStorageDetector.getStatsForPath(dir)).toEqual({ conversationCount: 2, totalSize: 2 + 5 + 3, fileTypes: {} })
    await expect(RooStorageDetector.getStatsForPath(path.join(dir, 'missing'))).rejects.toThrow()
    expect(await RooStorageDetector.validateCustomPath(dir)).toBe(false)
  })

  it('the ESM entry hands out the same class and the same shared index', async () => {
    const esm = await import('../../compat/utils/roo-storage-detector.mjs')
    const esmIndex = await import('../../compat/utils/task-instruction-index.mjs')
    expect(esm.RooStorageDetector).toBe(RooStorageDetector)
    expect(esmIndex.globalTaskInstructionIndex).toBe(globalTaskInstructionIndex)
  })
})

describe('roo-state-core/compat entry points', () => {
  it('the ESM entry names every export of the CommonJS one, as the same objects', async () => {
    const cjs = require('../../compat/index.js') as Record<string, unknown>
    const esm = (await import('../../compat/index.mjs')) as Record<string, unknown>
    expect(Object.keys(esm).sort()).toEqual(Object.keys(cjs).sort())
    for (const name of Object.keys(cjs)) expect(esm[name], name).toBe(cjs[name])
    expect(cjs.RooStorageDetector).toBe(RooStorageDetector)
  })

  it('package.json exports map every compat path for require, import and types', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; import: string; require: string } | string>
      files: string[]
    }
    expect(pkg.files).toContain('compat')
    for (const key of ['./compat', './compat/extension', './compat/*.js', './compat/*']) {
      const entry = pkg.exports[key]
      expect(typeof entry).toBe('object')
      if (typeof entry !== 'object') continue
      for (const target of [entry.types, entry.import, entry.require]) {
        const concrete = target.replace('*', 'utils/roo-storage-detector')
        expect(fs.existsSync(path.join(__dirname, '..', '..', concrete)), concrete).toBe(true)
      }
    }
  })
})
