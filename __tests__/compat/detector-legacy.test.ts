/**
 * The legacy statics of `RooStorageDetector` and `MessageToSkeletonTransformer` as a swapped server
 * sees them (docs/compat.md §2–§3): the caller's own modules reached through the importer its
 * replacement file hands over (`use({ utilsImport })`), the statics the legacy class had (private
 * ones included) with their legacy results, the composition of `analyzeWithOldSystem` through
 * replaceable statics giving what the native builder gives, and file reads through a module mock
 * that throws on a missing `default` export.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { tempDir, haveShared, legacyTasks, realTasks } from '../helpers'
import type * as DetectorModule from '../../compat/utils/roo-storage-detector.js'
import type * as TransformerModule from '../../compat/utils/message-to-skeleton-transformer.js'
import type * as Mode from '../../compat/mode.js'

const require = createRequire(import.meta.url)
const { RooStorageDetector } = require('../../compat/utils/roo-storage-detector.js') as typeof DetectorModule
const { MessageToSkeletonTransformer } = require('../../compat/utils/message-to-skeleton-transformer.js') as typeof TransformerModule
const { setMode } = require('../../compat/mode.js') as typeof Mode
const io = require('../../compat/io.js') as { use(m: Record<string, unknown>): void }

const sharedPresent = haveShared('compat detector: legacy composition over the shared tasks', realTasks)

type Modules = Record<string, Record<string, unknown>>
/** Hands the detector an importer serving `modules` by specifier (what a replacement file's line does). */
function wire(modules: Modules) {
  const importer = vi.fn(async (specifier: string) => modules[specifier])
  io.use({ utilsImport: importer })
  return importer
}

const D = RooStorageDetector as unknown as Record<string, (...args: never[]) => Promise<unknown>> & typeof RooStorageDetector
const pathsOf = (dir: string) => ({
  metadataPath: path.join(dir, 'task_metadata.json'),
  apiHistoryPath: path.join(dir, 'api_conversation_history.json'),
  uiMessagesPath: path.join(dir, 'ui_messages.json'),
  historyItemPath: path.join(dir, 'history_item.json'),
})

function writeTask(dir: string, files: Record<string, string>): string {
  fs.mkdirSync(dir, { recursive: true })
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content)
  return dir
}

const UI = JSON.stringify([
  { ts: 1700000000000, type: 'say', say: 'text', text: 'Organise the release of version two of the parser, with its notes and its tests' },
  { ts: 1700000001000, type: 'ask', ask: 'tool', text: JSON.stringify({ tool: 'newTask', mode: 'code', content: 'Implement the streaming reader for the history files and its tests' }) },
])
const API = JSON.stringify([
  { role: 'user', ts: 1700000000500, content: [{ type: 'text', text: '<task>Organise the release</task>\n# Current Workspace Directory (/home/me/parser) Files' }] },
  { role: 'assistant', ts: 1700000002000, content: 'Done: attempt_completion' },
])

beforeEach(() => {
  vi.spyOn(console, 'log').mockImplementation(() => {})
  vi.spyOn(console, 'warn').mockImplementation(() => {})
  vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterEach(() => {
  vi.restoreAllMocks()
  io.use({ utilsImport: async () => undefined, os, 'fs/promises': fsp, fs, path })
  setMode(null)
})

describe("the caller's modules reach the detector through its importer", () => {
  it('cache manager, then glob over the common VS Code folders', async () => {
    const get = vi.fn(async () => ['/cached/store'])
    wire({ './cache-manager.js': { globalCacheManager: { get, set: vi.fn() } } })
    expect(await RooStorageDetector.detectStorageLocations()).toEqual(['/cached/store'])
    expect(get).toHaveBeenCalledWith('storage_locations')

    const home = tempDir()
    const store = path.join(home, '.vscode', 'extensions', 'roo-ext')
    fs.mkdirSync(path.join(store, 'tasks'), { recursive: true })
    const set = vi.fn()
    const glob = vi.fn(async (pattern: string) => (pattern === '**/roo*' ? [store, path.join(home, 'missing')] : []))
    wire({ './cache-manager.js': { globalCacheManager: { get: async () => null, set } }, glob: { glob } })
    io.use({ os: { homedir: () => home } })
    expect(await RooStorageDetector.detectStorageLocations()).toEqual([store])
    expect(glob).toHaveBeenCalledWith('**/roo*', { cwd: path.join(home, '.vscode', 'extensions'), absolute: true })
    expect(set).toHaveBeenCalledWith('storage_locations', [store])
  })

  it('workspace detector: detectWorkspaceForTask, the store-name fallback, getWorkspaceBreakdown', async () => {
    const root = tempDir()
    const store = path.join(root, 'my-store')
    writeTask(path.join(store, 'tasks', 'a'), { 'ui_messages.json': '[]' })
    writeTask(path.join(store, 'tasks', 'b'), { 'ui_messages.json': '[1,2]' })
    const detect = vi.fn(async (p: string) => ({ workspace: p.endsWith('a') ? '/ws/one' : null, source: 'metadata', confidence: 1 }))
    const made: unknown[] = []
    class WorkspaceDetector {
      detect = detect
      constructor(options: unknown) {
        made.push(options)
      }
    }
    wire({
      './workspace-detector.js': { WorkspaceDetector },
      './cache-manager.js': { globalCacheManager: { get: async () => [store], set: vi.fn() } },
    })
    expect(await RooStorageDetector.detectWorkspaceForTask(path.join(store, 'tasks', 'a'))).toBe('/ws/one')
    expect(await RooStorageDetector.detectWorkspaceForTask(path.join(store, 'tasks', 'b'))).toBe('my-store')
    expect(made[0]).toEqual({ enableCache: true, validateExistence: false, normalizePaths: true })
    const breakdown = await RooStorageDetector.getWorkspaceBreakdown()
    expect(Object.keys(breakdown).sort()).toEqual(['/ws/one', 'my-store'])
    expect(breakdown['/ws/one']).toMatchObject({ count: 1, totalSize: 2 })
    expect(breakdown['my-store']).toMatchObject({ count: 1, totalSize: 5 })
    const failing = { detect: async () => Promise.reject(new Error('boom')) }
    expect(await RooStorageDetector.detectWorkspaceForTaskWithDetector('/t', failing, '')).toBe('UNKNOWN')
    expect(await RooStorageDetector.detectWorkspaceForTaskWithDetector('/t', failing, 'fallback')).toBe('fallback')
  })

  it('parsing config dispatches analyzeConversation to the transformer; the comparator picks between both', async () => {
    const dir = writeTask(path.join(tempDir(), 'task-new'), { 'ui_messages.json': UI })
    const transform = vi.fn(async () => ({ skeleton: { taskId: 'from-transformer' }, metadata: {} }))
    const set = vi.fn()
    const modules: Modules = {
      './parsing-config.js': { getParsingConfig: () => ({ useNewParsing: true }), isComparisonMode: () => false, shouldUseNewParsing: () => true },
      './message-to-skeleton-transformer.js': { MessageToSkeletonTransformer: class { transform = transform } },
      './workspace-detector.js': { WorkspaceDetector: class { detect = async () => ({ workspace: '/ws', source: 's', confidence: 1 }) } },
      './cache-manager.js': { globalCacheManager: { get: async () => null, set } },
    }
    wire(modules)
    expect(await RooStorageDetector.analyzeConversation('task-new', dir)).toEqual({ taskId: 'from-transformer' })
    expect(transform).toHaveBeenCalledWith(expect.any(Array), 'task-new', '/ws')
    expect(set).toHaveBeenCalledWith('conversation-skeleton:task-new', { taskId: 'from-transformer' })

    const compareWithImprovements = vi.fn(() => ({ similarityScore: 10, improvements: [], isValidUpgrade: false, validationReason: 'low' }))
    modules['./parsing-config.js'] = { getParsingConfig: () => ({ useNewParsing: false }), isComparisonMode: () => true, shouldUseNewParsing: () => true }
    wire(modules)
    modules['./skeleton-comparator.js'] = { SkeletonComparator: class { compareWithImprovements = compareWithImprovements; formatReport = () => 'report' } }
    const s = (await RooStorageDetector.analyzeConversation('task-new', dir)) as { taskId: string; metadata: { title?: string } }
    expect(compareWithImprovements).toHaveBeenCalledTimes(1)
    expect(s.taskId).toBe('task-new')
  })

  it('instruction index and coordinator: the rebuild from .skeleton files, the extraction, the exact-prefix linking', async () => {
    const root = tempDir()
    writeTask(path.join(root, 'tasks', 'p'), { '.skeleton': JSON.stringify({ taskId: 'p', childTaskInstructionPrefixes: ['do the child work'] }) })
    writeTask(path.join(root, 'tasks', 'q'), { '.skeleton': '{not json' })
    const rebuildFromSkeletons = vi.fn()
    const extractFromMessages = vi.fn(() => ({ instructions: [{ timestamp: 1, mode: 'code', message: 'wired' }], errors: [] }))
    wire({
      './cache-manager.js': { globalCacheManager: { get: async () => [root], set: vi.fn() } },
      './task-instruction-index.js': { globalTaskInstructionIndex: { rebuildFromSkeletons }, computeInstructionPrefix: (s: string) => s },
      './message-extraction-coordinator.js': { messageExtractionCoordinator: { extractFromMessages } },
    })
    await D.rebuildIndexFromExistingSkeletons()
    expect(rebuildFromSkeletons).toHaveBeenCalledWith(new Map([['p', ['do the child work']]]))
    expect(await RooStorageDetector.extractNewTaskInstructions([{ type: 'say' }])).toEqual([{ timestamp: 1, mode: 'code', message: 'wired' }])
    expect(extractFromMessages).toHaveBeenCalledWith([{ type: 'say' }], { enableDebug: false })
  })

  it('hierarchy engine first, the legacy rebuild when it throws; getAllConversationsInWorkspace passes maxTasks < 1000', async () => {
    const reconstructHierarchy = vi.fn(async () => [{ taskId: 'a' }, { taskId: 'b', parentTaskId: 'a' }])
    wire({ './hierarchy-reconstruction-engine.js': { HierarchyReconstructionEngine: { reconstructHierarchy } } })
    expect(await RooStorageDetector.buildHierarchicalSkeletons('/ws', true, true)).toHaveLength(2)
    expect(reconstructHierarchy).toHaveBeenCalledWith('/ws', true)
    reconstructHierarchy.mockRejectedValueOnce(new Error('engine down'))
    const legacy = vi.spyOn(RooStorageDetector, 'buildHierarchicalSkeletonsLegacy').mockResolvedValue([])
    await RooStorageDetector.buildHierarchicalSkeletons('/ws')
    expect(legacy).toHaveBeenCalledWith('/ws', true)
    const build = vi.spyOn(RooStorageDetector, 'buildHierarchicalSkeletons').mockResolvedValue([])
    await RooStorageDetector.getAllConversationsInWorkspace('/ws', 5000)
    expect(build).toHaveBeenCalledWith('/ws', false)
  })
})

describe('the legacy composition of analyzeWithOldSystem', () => {
  it('calls the replaceable statics and the caller’s instruction key', async () => {
    const dir = writeTask(path.join(tempDir(), 'composed'), {
      'task_metadata.json': '\ufeff{"title":"Composed","mode":"code","files_in_context":[{"roo_read_date":1600000000000}]}',
      'api_conversation_history.json': API,
      'ui_messages.json': UI,
      'history_item.json': '{"parentTaskId":"from-history"}',
    })
    const addInstruction = vi.fn()
    wire({ './task-instruction-index.js': { globalTaskInstructionIndex: { addInstruction }, computeInstructionPrefix: (s: string) => `KEY:${s}` } })
    const sequence = vi.spyOn(RooStorageDetector, 'buildSequenceFromFiles')
    const main = vi.spyOn(RooStorageDetector, 'extractMainInstructionFromUI').mockResolvedValue('the main one')
    const s = (await D.analyzeWithOldSystem('composed', dir, true, pathsOf(dir))) as DetectorModule.ConversationSkeleton
    expect(sequence).toHaveBeenCalledWith(pathsOf(dir).apiHistoryPath, pathsOf(dir).uiMessagesPath, API, UI)
    expect(main).toHaveBeenCalledTimes(1)
    expect(s.truncatedInstruction).toBe('KEY:the main one')
    expect(s.childTaskInstructionPrefixes).toEqual(['KEY:Implement the streaming reader for the history files and its tests'])
    expect(addInstruction).toHaveBeenCalledWith('composed', 'KEY:Implement the streaming reader for the history files and its tests')
    expect(s.parentTaskId).toBe('from-history')
    expect(s.metadata).toMatchObject({ title: 'Composed', workspace: '/home/me/parser', createdAt: new Date(1600000000000).toISOString(), lastActivity: new Date(1700000002000).toISOString() })
    // Records without `timestamp` all sort at the epoch, UI records after API ones: the last
    // assistant message is the UI `say`, not the API's completion.
    expect(s.isCompleted).toBe(false)
  })

  it('gives what the native legacy builder gives, task for task', async () => {
    const dir = writeTask(path.join(tempDir(), 'same'), { 'task_metadata.json': '{"title":"T"}', 'api_conversation_history.json': API, 'ui_messages.json': UI })
    const dirs = [dir]
    if (sharedPresent) {
      for (const root of [realTasks, legacyTasks, path.join(legacyTasks, 'controlled-hierarchy')]) {
        for (const name of fs.readdirSync(root)) if (fs.statSync(path.join(root, name)).isDirectory()) dirs.push(path.join(root, name))
      }
    }
    setMode('legacy')
    for (const d of dirs) {
      const id = path.basename(d)
      const native = await RooStorageDetector.analyzeConversation(id, d)
      const composed = await D.analyzeWithOldSystem(id, d, true, pathsOf(d))
      expect(JSON.parse(JSON.stringify(composed)), d).toEqual(JSON.parse(JSON.stringify(native)))
    }
  })

  it('reads through a module mock that throws on its missing default export', async () => {
    const dir = writeTask(path.join(tempDir(), 'mocked'), { 'task_metadata.json': '{"title":"Through the mock"}', 'ui_messages.json': UI })
    const readFile = vi.fn((p: string, enc?: BufferEncoding) => fsp.readFile(p, enc))
    const mocked = new Proxy(
      { readFile, stat: fsp.stat, readdir: fsp.readdir, access: fsp.access },
      {
        get(target, key) {
          if (key === 'default') throw new Error('[vitest] No "default" export is defined on the mock')
          return target[key as keyof typeof target]
        },
      },
    )
    io.use({ 'fs/promises': mocked })
    const s = await RooStorageDetector.analyzeConversation('mocked', dir)
    expect(s?.metadata.title).toBe('Through the mock')
    expect(readFile).toHaveBeenCalledWith(pathsOf(dir).metadataPath, 'utf-8')
  })
})

describe('legacy statics', () => {
  it('buildSequenceFromFiles: messages cut 200…200, UI records as assistant messages, actions, suspicious content, JSON Lines, time order', async () => {
    const long = 'x'.repeat(300) + 'y'.repeat(300)
    const api = JSON.stringify([{ role: 'user', content: long, timestamp: '2024-01-02T00:00:00.000Z' }])
    const ui = [
      JSON.stringify({ type: 'tool', tool: 'read', timestamp: '2024-01-04T00:00:00.000Z' }),
      JSON.stringify({ role: 'system', type: 'tool', tool: 'write', toolInput: { path: 'a.ts', content: 'l1\nl2' }, timestamp: '2024-01-01T00:00:00.000Z' }),
      JSON.stringify({ type: 'say', text: '{"taskId":"x"}', timestamp: '2024-01-03T00:00:00.000Z' }),
      'not json',
    ].join('\n')
    const seq = await RooStorageDetector.buildSequenceFromFiles('/a', '/u', api, ui)
    expect(seq).toEqual([
      { type: 'tool', name: 'write', status: 'in_progress', parameters: { path: 'a.ts', content: 'l1\nl2' }, timestamp: '2024-01-01T00:00:00.000Z', file_path: 'a.ts', line_count: 2, content_size: 5 },
      { role: 'user', content: `${'x'.repeat(200)}...${'y'.repeat(200)}`, isTruncated: true, timestamp: '2024-01-02T00:00:00.000Z' },
      { role: 'assistant', content: '[Contenu suspect ignoré pour éviter une boucle]', isTruncated: false, timestamp: '2024-01-03T00:00:00.000Z' },
      { role: 'assistant', content: '', isTruncated: false, timestamp: '2024-01-04T00:00:00.000Z' },
    ])
  })

  it('processBatch, calculateTreeDepth, extractTaskIdFromText, extractParentFrom*', async () => {
    const progress = vi.fn()
    const out = await RooStorageDetector.processBatch([1, 2, 3, 4, 5], async (n: number) => (n === 2 ? Promise.reject(new Error('x')) : n === 3 ? null : n * 10), 2, progress)
    expect(out).toEqual([10, 40, 50])
    expect(progress.mock.calls).toEqual([[2, 5], [4, 5], [5, 5]])
    expect(RooStorageDetector.calculateTreeDepth([{ taskId: 'a' }, { taskId: 'b', parentTaskId: 'a' }, { taskId: 'c', parentTaskId: 'b' }, { taskId: 'd', parentTaskId: 'gone' }])).toBe(2)
    expect(() => RooStorageDetector.calculateTreeDepth([{ taskId: 'a', parentTaskId: 'b' }, { taskId: 'b', parentTaskId: 'a' }])).toThrow(RangeError)
    const id = '0a1b2c3d-1111-4abc-8def-123456789abc'
    expect(RooStorageDetector.extractTaskIdFromText(`tâche parent ${id}`)).toBe(id)
    expect(RooStorageDetector.extractTaskIdFromText('no id')).toBeUndefined()
    const dir = writeTask(tempDir(), {
      'api.json': JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'text', text: `from ${id}` }] }] }),
      'ui.json': JSON.stringify([{ type: 'user', content: `child of ${id}` }]),
    })
    expect(await RooStorageDetector.extractParentFromApiHistory(path.join(dir, 'api.json'))).toBe(id)
    expect(await RooStorageDetector.extractParentFromUiMessages(path.join(dir, 'ui.json'))).toBe(id)
    expect(await RooStorageDetector.extractParentFromUiMessages(path.join(dir, 'missing.json'))).toBeUndefined()
  })

  it('scanConversations and scanConversationsMetadata give summaries with the workspace; an unreadable folder rejects TASKS_READ_ERROR', async () => {
    const root = tempDir()
    writeTask(path.join(root, 'one'), { 'task_metadata.json': '{"title":"One","workspace":"/ws/1"}', 'ui_messages.json': '[]' })
    writeTask(path.join(root, 'two'), { 'task_metadata.json': '{"title":"Two"}', 'api_conversation_history.json': API })
    fs.writeFileSync(path.join(root, 'stray.txt'), 'x')
    const all = await RooStorageDetector.scanConversations(root)
    expect(all.map((s) => s.taskId).sort()).toEqual(['one', 'two'])
    expect(all.find((s) => s.taskId === 'one')?.metadata).toEqual({ title: 'One', prompt: { task: '' }, workspace: '/ws/1' })
    const page = await RooStorageDetector.scanConversationsMetadata(root, { limit: 1, offset: 0, sortBy: 'messageCount', sortOrder: 'desc' })
    expect(page.map((s) => s.taskId)).toEqual(['two'])
    expect(page[0]).toMatchObject({ prompt: 'Two', messageCount: 2, path: path.join(root, 'two') })
    await expect(RooStorageDetector.scanConversations(path.join(root, 'missing'))).rejects.toMatchObject({ code: 'TASKS_READ_ERROR' })
  })
})

describe('MessageToSkeletonTransformer with the caller’s collaborators', () => {
  const msgs = [
    { ts: 1000, type: 'say', say: 'text', text: 'Env\n# Current Workspace Directory (/home/me/app) Files\n' },
    { ts: 2000, type: 'say', say: 'api_req_started', text: '{}' },
  ]

  it('uses the caller’s deserializer, instruction key and error class', async () => {
    class CallerError extends Error {}
    const deserializer = {
      extractToolCalls: () => [{ tool: 'attempt_completion' }],
      extractNewTasks: () => [{ message: '  Raw Sub Task  ' }],
      extractApiRequests: () => [{ request: '<task>BUILD It</task>' }],
    }
    wire({
      './ui-messages-deserializer.js': { UIMessagesDeserializer: class { constructor() { return deserializer } } },
      './task-instruction-index.js': { computeInstructionPrefix: (s: string) => s.toLowerCase() },
      '../types/errors.js': { GenericError: CallerError },
    })
    const { skeleton } = await new MessageToSkeletonTransformer().transform(msgs as never, 't')
    expect(skeleton.truncatedInstruction).toBe('build it')
    expect(skeleton.childTaskInstructionPrefixes).toEqual(['  raw sub task  '])
    expect(skeleton.isCompleted).toBe(true)
    expect(skeleton.metadata.workspace).toBe('/home/me/app')
    const raw = await new MessageToSkeletonTransformer({ normalizePrefixes: false }).transform(msgs as never, 't')
    expect(raw.skeleton.truncatedInstruction).toBe('BUILD It')
    expect(raw.skeleton.childTaskInstructionPrefixes).toEqual(['Raw Sub Task'])
    await expect(new MessageToSkeletonTransformer({ strictValidation: true }).transform(msgs as never, '')).rejects.toBeInstanceOf(CallerError)
  })

  it('takes the workspace from the environment-details heading only', async () => {
    const bare = [{ ts: 1, type: 'say', say: 'text', text: 'Current Workspace Directory (/home/me/app)' }]
    expect((await new MessageToSkeletonTransformer().transform(bare as never, 't')).skeleton.metadata.workspace).toBeUndefined()
    expect((await new MessageToSkeletonTransformer().transform(msgs as never, 't')).skeleton.metadata.workspace).toBe('/home/me/app')
  })
})
