// The values the binding returns, checked against the types `index.d.ts` declares for them.
//
// Most public types are generated from the Rust structs the values are serialised from
// (types/90-generated.d.ts), the rest written by hand (types/*.d.ts); a check like this one keeps
// both in step with what the binding really returns (serde's attributes included). Real outputs of the main
// calls, on every fixture store, are written as object literals into a TypeScript file, each
// assigned to the declared return type of its call, and the TypeScript compiler checks the file
// under --strict: a field the type lacks (excess property), a field the type requires and the
// value lacks, or a value of another type is an error. A deliberately wrong value must fail the
// same check, so the check itself is known to work.

import { describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { core, repoRoot, tempDir } from './helpers'

const stores = path.join(repoRoot, 'fixtures', 'stores')

/** Fixture stores with a `tasks` folder (one per format era and host). */
function fixtureStores(): string[] {
  return fs
    .readdirSync(stores, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(stores, e.name, 'tasks')))
    .map((e) => path.join(stores, e.name, 'tasks'))
}

interface Sample {
  /** The declared type, as a TypeScript type expression over `core` (the binding's types). */
  type: string
  value: unknown
}

/** Real outputs of the main calls on every fixture store. */
async function samples(): Promise<Sample[]> {
  const out: Sample[] = []
  const add = (type: string, value: unknown) => out.push({ type, value })
  add('Awaited<ReturnType<typeof core.discoverStorage>>', await core.discoverStorage({ extraRoots: fixtureStores() }))
  let areas = false
  for (const tasksDir of fixtureStores()) {
    const index = path.join(tasksDir, '_index.json')
    if (fs.existsSync(index)) add('Awaited<ReturnType<typeof core.readHistoryIndex>>', await core.readHistoryIndex(index))
    const scan = await core.scanTasks(tasksDir, { hierarchy: {} })
    add('Awaited<ReturnType<typeof core.scanTasks>>', scan)
    add('Awaited<ReturnType<typeof core.scanTasks>>', await core.scanTasks(tasksDir, { includeSequence: true }))
    add('Awaited<ReturnType<typeof core.reconstructHierarchy>>', await core.reconstructHierarchy(scan.skeletons))
    add('ReturnType<typeof core.getTaskTree>', core.getTaskTree(scan.skeletons))
    const withFiles = scan.skeletons.find((s) => s.files.uiMessages > 0 && s.files.apiMessages > 0)
    if (!areas && withFiles) {
      await areaSamples(add, tasksDir, withFiles.taskId)
      areas = true
    }
    for (const s of scan.skeletons.slice(0, 3)) {
      const dir = path.join(tasksDir, s.taskId)
      add('Awaited<ReturnType<typeof core.analyzeConversation>>', await core.analyzeConversation(s.taskId, dir, { includeSequence: true }))
      add('Awaited<ReturnType<typeof core.readUiMessages>>', await core.readUiMessages(path.join(dir, 'ui_messages.json')))
      add('Awaited<ReturnType<typeof core.readApiHistory>>', await core.readApiHistory(path.join(dir, 'api_conversation_history.json')))
      add('Awaited<ReturnType<typeof core.readHistoryItem>>', await core.readHistoryItem(path.join(dir, 'history_item.json')))
      add('Awaited<ReturnType<typeof core.readTaskMetadata>>', await core.readTaskMetadata(path.join(dir, 'task_metadata.json')))
      add('Awaited<ReturnType<typeof core.extractNewTasks>>', await core.extractNewTasks(dir))
      // compat's native readings (roo-legacy's types, generated too).
      add('Awaited<ReturnType<typeof core.compatAnalyzeLegacyFolder>>', await core.compatAnalyzeLegacyFolder(s.taskId, dir))
      add('Awaited<ReturnType<typeof core.compatAnalyzeFixedFolder>>', await core.compatAnalyzeFixedFolder(s.taskId, dir))
      const ui = (await core.readUiMessages(path.join(dir, 'ui_messages.json'))).value
      // The engine's reading of the records (a null record throws there, as in the legacy code).
      add('ReturnType<typeof core.compatEngineCandidates>', core.compatEngineCandidates(JSON.stringify(ui.filter((m) => m !== null))))
      const texts = ui.map((m) => (typeof m?.text === 'string' ? m.text : '')).join('\n')
      add('ReturnType<typeof core.compatTraceToolCalls>', core.compatTraceToolCalls(texts, true))
    }
    const cacheDir = tempDir('roo-state-types-')
    try {
      const store = await core.TaskStore.open({ tasksDir, cacheDir })
      add('ReturnType<core.TaskStore["list"]>', store.list({ limit: 5 }))
      add('ReturnType<core.TaskStore["tree"]>', store.tree())
      add('ReturnType<core.TaskStore["stores"]>', store.stores())
      add('ReturnType<core.TaskStore["metrics"]>', store.metrics())
      add('ReturnType<core.TaskStore["diagnostics"]>', store.diagnostics())
      add('Awaited<ReturnType<core.TaskStore["refresh"]>>', await store.refresh())
      add('Awaited<ReturnType<core.TaskStore["usageReport"]>>', await store.usageReport({ group: 'conversations', breakdown: true }))
      add('Awaited<ReturnType<core.TaskStore["usageReport"]>>', await store.usageReport({ group: 'daily', costMode: 'calculate' }))
      add('Awaited<ReturnType<typeof core.grepTasks>>', await core.grepTasks({ tasksDirs: [tasksDir], pattern: 'e', context: 1, maxMatches: 20 }))
      add('Awaited<ReturnType<typeof core.diagnoseRooState>>', await core.diagnoseRooState({ tasksDir, cacheDir }))
      add('Awaited<ReturnType<typeof core.buildSkeletonCache>>', await core.buildSkeletonCache({ tasksDir, cacheDir }))
      add('Awaited<ReturnType<typeof core.loadSkeletons>>', await core.loadSkeletons({ tasksDir, cacheDir }))
      // Dry runs: the fixture stores are not written.
      add('Awaited<ReturnType<typeof core.rebuildRooStateFromTasks>>', await core.rebuildRooStateFromTasks({ tasksDir, cacheDir, dryRun: true }))
      add('Awaited<ReturnType<typeof core.cleanupObsoleteCheckpoints>>', await core.cleanupObsoleteCheckpoints({ tasksDir, dryRun: true }))
      add('Awaited<ReturnType<typeof core.migrateTasksDir>>', await core.migrateTasksDir(tasksDir, path.join(cacheDir, 'moved'), { dryRun: true }))
      if (scan.skeletons.length > 0) add('Awaited<ReturnType<typeof core.findTask>>', await core.findTask([tasksDir], scan.skeletons[0].taskId))
    } finally {
      fs.rmSync(cacheDir, { recursive: true, force: true })
    }
  }
  expect(areas).toBe(true)
  return out
}

/** The condense, export and search calls, on one task of a fixture store. */
async function areaSamples(add: (type: string, value: unknown) => void, tasksDir: string, taskId: string): Promise<void> {
  const dir = path.join(tasksDir, taskId)
  const ui = (await core.readUiMessages(path.join(dir, 'ui_messages.json'))).value
  const api = (await core.readApiHistory(path.join(dir, 'api_conversation_history.json'))).value?.messages ?? []
  add('ReturnType<typeof core.getApiMetrics>', core.getApiMetrics(ui))
  add('ReturnType<typeof core.consolidateTokenUsage>', core.consolidateTokenUsage(ui))
  add('ReturnType<typeof core.calculateApiCostAnthropic>', core.calculateApiCostAnthropic({ inputPrice: 3, outputPrice: 15 }, 1000, 200))
  add('ReturnType<typeof core.truncateConversation>', core.truncateConversation(api, 0.5, taskId))
  add('ReturnType<typeof core.getEffectiveThreshold>', core.getEffectiveThreshold(75, { a: 50, b: 200 }, 'b'))
  const context = { messages: api, totalTokens: 100_000, contextWindow: 120_000, maxTokens: null, autoCondenseContext: false, autoCondenseContextPercent: 50, systemPrompt: 's', taskId, profileThresholds: {}, currentProfileId: 'default' }
  add('ReturnType<typeof core.decideContext>', core.decideContext(context))
  add('Awaited<ReturnType<typeof core.manageContext>>', await core.manageContext(context))
  add('Awaited<ReturnType<typeof core.exportTaskXml>>', await core.exportTaskXml({ taskId, tasksDir }))
  add('Awaited<ReturnType<typeof core.exportConversationMarkdown>>', await core.exportConversationMarkdown({ conversationId: taskId, tasksDir }))
  const scratch = tempDir('roo-state-types-')
  const configDir = process.env.ROO_STATE_CONFIG_DIR
  try {
    process.env.ROO_STATE_CONFIG_DIR = scratch
    add('Awaited<ReturnType<typeof core.configureXmlExport>>', await core.configureXmlExport({ action: 'set', config: { filters: { recent: { startDate: 'now-7d' } } } }))
    const search = { indexDir: scratch, store: { kind: 'memory' as const, path: path.join(scratch, 'vectors.json') } }
    add('Awaited<ReturnType<typeof core.indexTasks>>', await core.indexTasks({ ...search, tasksDir, embedder: { kind: 'none' } }))
    add('Awaited<ReturnType<typeof core.searchTasksSemantic>>', await core.searchTasksSemantic({ ...search, query: 'file', mode: 'lexical', embedder: { kind: 'none' } }))
    add('Awaited<ReturnType<typeof core.searchIndexStatus>>', await core.searchIndexStatus(search))
    add('ReturnType<typeof core.modelStatus>', core.modelStatus(scratch))
  } finally {
    if (configDir === undefined) delete process.env.ROO_STATE_CONFIG_DIR
    else process.env.ROO_STATE_CONFIG_DIR = configDir
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/** A value as a TypeScript literal: JSON, with a BigInt as a bigint literal (`12n`). */
function literal(value: unknown): string {
  const mark = '\u0000bigint:'
  const text = JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${mark}${v}` : v))
  return text.replace(/"\\u0000bigint:(-?\d+)"/g, '$1n')
}

/** The paths of the BigInts in a value (a JSON number must reach JavaScript as a number). */
function bigints(value: unknown, at = ''): string[] {
  if (typeof value === 'bigint') return [at]
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([k, v]) => bigints(v, `${at}.${k}`))
}

/** The diagnostics of the TypeScript compiler on a file of `samples`, as text. */
function typeErrors(list: Sample[], dir: string): string[] {
  const file = path.join(dir, 'outputs.ts')
  const lines = [`import type * as core from ${JSON.stringify(path.join(repoRoot, 'index'))}`]
  list.forEach((s, i) => lines.push(`export const value${i}: ${s.type} = ${literal(s.value)}`))
  fs.writeFileSync(file, lines.join('\n') + '\n')
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
  })
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined
    const sample = where ? list[where.line - 1] : undefined
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
    return `${sample ? sample.type : d.file?.fileName ?? ''}: ${message.slice(0, 600)}`
  })
}

describe('the values the binding returns have their declared types', () => {
  it('holds for the main calls on every fixture store', async () => {
    const list = await samples()
    expect(list.length).toBeGreaterThan(50)
    // Numbers above 2^32 (Cline's millisecond dates in task_metadata.json) included.
    expect(list.flatMap((s) => bigints(s.value).map((p) => `${s.type}${p}`))).toEqual([])
    const dir = tempDir('roo-state-types-')
    try {
      expect(typeErrors(list, dir)).toEqual([])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('gives integers above 2^32 as numbers, in skeletons built value by value too', async () => {
    const root = tempDir('roo-state-types-')
    try {
      const task = path.join(root, 'tasks', '5b1c2d3e-0000-4000-8000-000000000001')
      fs.mkdirSync(task, { recursive: true })
      const big = 5_000_000_000
      fs.writeFileSync(
        path.join(task, 'api_conversation_history.json'),
        JSON.stringify([
          { role: 'user', content: [{ type: 'text', text: '<task>read the file</task>' }], ts: 1730000000000 },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'a.txt', offset: big } }], ts: 1730000001000 },
        ]),
      )
      const scan = await core.scanTasks(path.join(root, 'tasks'), { includeSequence: true })
      const action = (scan.skeletons[0].sequence ?? []).find((item) => 'parameters' in item) as { parameters: { offset: unknown } } | undefined
      expect(action?.parameters.offset).toBe(big)
      const read = await core.readApiHistory(path.join(task, 'api_conversation_history.json'))
      expect(bigints(read)).toEqual([])
      expect(bigints(scan)).toEqual([])
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })

  it('gives every number as the number JSON.parse gives for the same text', async () => {
    const dir = tempDir('roo-state-types-')
    try {
      // Extra fields of task_metadata.json are kept as they are read: each number goes through
      // the conversion of 32-bit, 64-bit and floating-point values.
      const numbers: Record<string, string> = {
        int31: '2147483647',
        above31: '2147483648',
        above32: '4294967296',
        above53: '9007199254740994',
        u64Max: '18446744073709551615',
        minusOne: '-1',
        belowI32: '-2147483649',
        belowI64: '-9223372036854775809',
        beyondU64: '123456789012345678901234567890',
        half: '1.5',
        tiny: '5e-324',
        huge: '1.7976931348623157e308',
        negativeZero: '-0.0',
      }
      const text = `{"files_in_context":[],${Object.entries(numbers).map(([k, v]) => `"${k}":${v}`).join(',')},"list":[4294967296,-1,0.1]}`
      const file = path.join(dir, 'task_metadata.json')
      fs.writeFileSync(file, text)
      const read = (await core.readTaskMetadata(file)).value as Record<string, unknown> | null
      const want = JSON.parse(text) as Record<string, unknown>
      for (const key of [...Object.keys(numbers), 'list']) {
        const got = read?.[key]
        for (const n of [got].flat()) expect(typeof n, key).toBe('number')
        expect(got, key).toStrictEqual(want[key])
        if (typeof got === 'number') expect(Object.is(got, want[key]), key).toBe(true)
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('fails on a value that does not match', async () => {
    const scan = await core.scanTasks(fixtureStores()[0])
    const skeleton = { ...scan.skeletons[0], fieldNotInTheType: 1 }
    const withoutTaskId: Record<string, unknown> = { ...scan.skeletons[0] }
    delete withoutTaskId.taskId
    const dir = tempDir('roo-state-types-')
    try {
      const errors = typeErrors(
        [
          { type: 'core.ConversationSkeleton', value: skeleton },
          { type: 'core.ConversationSkeleton', value: withoutTaskId },
          { type: 'core.ConversationSkeleton', value: { ...scan.skeletons[0], isCompleted: 'yes' } },
        ],
        dir,
      )
      expect(errors).toHaveLength(3)
      expect(errors[0]).toMatch(/fieldNotInTheType/)
      expect(errors[1]).toMatch(/taskId/)
      expect(errors[2]).toMatch(/isCompleted|string/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
