import { describe, it, expect, beforeAll, afterAll, afterEach, vi } from 'vitest'
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { repoRoot, tempDir } from '../helpers'

// compat/services: XmlExporterService (XML checked by xmllint against schemas/*.xsd),
// ExportConfigManager and SkeletonCacheService, row by row of docs/compat-services.md §2–4.

const require = createRequire(import.meta.url)
const { XmlExporterService } = require('../../compat/services/XmlExporterService.js')
const { ExportConfigManager } = require('../../compat/services/ExportConfigManager.js')
const { SkeletonCacheService } = require('../../compat/services/skeleton-cache.service.js')

type Skel = Record<string, any>

const quiet = () => {
  for (const k of ['log', 'warn', 'error'] as const) vi.spyOn(console, k).mockImplementation(() => undefined)
}

afterEach(() => {
  vi.restoreAllMocks()
  delete process.env.ROO_STATE_COMPAT_MODE
})

function validate(xml: string, schema: 'task' | 'conversation' | 'project'): void {
  const dir = tempDir('roo-compat-xml-')
  const file = path.join(dir, 'doc.xml')
  fs.writeFileSync(file, xml)
  try {
    execFileSync('xmllint', ['--noout', '--schema', path.join(repoRoot, 'schemas', `${schema}.xsd`), file], { stdio: 'pipe' })
  } catch (e) {
    const err = e as { code?: string; stderr?: Buffer }
    if (err.code === 'ENOENT') throw new Error('xmllint is missing: apt-get install -y libxml2-utils')
    throw new Error(`${schema}.xsd rejects the export: ${err.stderr?.toString() ?? e}`)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

function skel(taskId: string, extra: Skel = {}, meta: Skel = {}): Skel {
  return {
    taskId,
    isCompleted: false,
    childTaskInstructionPrefixes: [],
    metadata: {
      title: `Task ${taskId} <&>`,
      createdAt: '2025-05-01T10:00:00.000Z',
      lastActivity: '2025-05-01T11:00:00.000Z',
      mode: 'code',
      messageCount: 2,
      actionCount: 1,
      totalSize: 1234,
      workspace: '/home/me/project',
      dataSource: `/store/tasks/${taskId}`,
      ...meta,
    },
    sequence: [
      { role: 'user', content: 'Fix the "parser" & add <tests> '.repeat(10), timestamp: '2025-05-01T10:00:00.000Z', isTruncated: false },
      {
        type: 'tool',
        name: 'write_to_file',
        parameters: { path: 'src/a.ts', content: 'line1\nline2' },
        status: 'success',
        timestamp: '2025-05-01T10:01:00.000Z',
        file_path: 'src/a.ts',
      },
      { role: 'assistant', content: 'Done.', timestamp: '2025-05-01T10:02:00.000Z', isTruncated: false },
    ],
    ...extra,
  }
}

const count = (xml: string, re: RegExp) => (xml.match(re) ?? []).length

describe('XmlExporterService', () => {
  const x = new XmlExporterService()

  it('generateTaskXml: a string valid against task.xsd; content previewed unless includeContent', () => {
    const xml = x.generateTaskXml(skel('t1', { parentTaskId: 'p0' }))
    expect(typeof xml).toBe('string')
    validate(xml, 'task')
    expect(xml).toContain('<task taskId="t1" parentTaskId="p0">')
    expect(xml).toContain('<title>Task t1 &lt;&amp;&gt;</title>')
    expect(xml).toContain('<messageCount>2</messageCount>')
    expect(xml).toContain('isTruncated="true"')
    expect(count(xml, /<message /g)).toBe(2)
    expect(count(xml, /<action /g)).toBe(1)
    const full = x.generateTaskXml(skel('t1'), { includeContent: true, prettyPrint: false })
    validate(full, 'task')
    expect(full).not.toContain('isTruncated="true"')
    expect(full).not.toContain('\n  <metadata>')
  })

  it('generateTaskXml: no sequence gives an empty <sequence/>', () => {
    const { sequence: _s, ...bare } = skel('t2')
    const xml = x.generateTaskXml(bare)
    validate(xml, 'task')
    expect(xml).toContain('<sequence/>')
  })

  it('legacy mode: missing numeric metadata throws a TypeError; fixed mode writes 0', () => {
    const s = skel('t3')
    delete s.metadata.messageCount
    expect(() => x.generateTaskXml(s)).toThrow(TypeError)
    process.env.ROO_STATE_COMPAT_MODE = 'fixed'
    const xml = x.generateTaskXml(s)
    validate(xml, 'task')
    expect(xml).toContain('<messageCount>0</messageCount>')
  })

  it('generateConversationXml: children nested by parentTaskId, maxDepth counts levels from the root', () => {
    const root = skel('r')
    const kids = [skel('c1', { parentTaskId: 'r' }), skel('c2', { parentTaskId: 'r' }), skel('g1', { parentTaskId: 'c1' })]
    const xml = x.generateConversationXml(root, kids)
    validate(xml, 'conversation')
    expect(xml).toContain('conversationId="r"')
    expect(count(xml, /<task /g)).toBe(3)
    expect(count(xml, /<children>/g)).toBe(2)
    const shallow = x.generateConversationXml(root, kids, { maxDepth: 2 })
    validate(shallow, 'conversation')
    expect(count(shallow, /<task /g)).toBe(2)
  })

  it('generateProjectXml: one conversation per root, taskCount of the tree, date filter', () => {
    const all = [
      skel('r1'),
      skel('k1', { parentTaskId: 'r1' }),
      skel('r2', {}, { createdAt: '2024-01-01T00:00:00.000Z', lastActivity: '2024-01-02T00:00:00.000Z' }),
      skel('other', {}, { workspace: '/elsewhere' }),
    ]
    const xml = x.generateProjectXml(all, '/home/me/project')
    validate(xml, 'project')
    expect(xml).toContain('<conversationCount>2</conversationCount>')
    expect(xml).toContain('<totalTasks>3</totalTasks>')
    expect(xml).toMatch(/rootTaskId="r1"[^>]*taskCount="2"/)
    const recent = x.generateProjectXml(all, '/home/me/project', { startDate: '2025-01-01T00:00:00.000Z' })
    validate(recent, 'project')
    expect(recent).toContain('<conversationCount>1</conversationCount>')
    expect(() => x.generateProjectXml(all, '/home/me/project', { startDate: 'last tuesday' })).toThrow(
      expect.objectContaining({ name: 'StateManagerError', code: 'XML_GENERATION_FAILED' }),
    )
    const none = x.generateProjectXml([], '/nowhere')
    validate(none, 'project')
    expect(none).toContain('<conversationCount>0</conversationCount>')
  })

  describe('saveXmlToFile', () => {
    let dir = ''
    let cwd = ''
    beforeAll(() => {
      dir = tempDir('roo-compat-save-')
      cwd = process.cwd()
      process.chdir(dir)
    })
    afterAll(() => {
      process.chdir(cwd)
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it.each(['../escape.xml', 'a/../../b.xml', '/etc/x.xml', '\\\\server\\x.xml', 'C:\\out\\x.xml', 'a|b.xml', 'q?.xml'])(
      'rejects %s with PATH_TRAVERSAL_DETECTED',
      async (p) => {
        await expect(x.saveXmlToFile('<a/>', p)).rejects.toMatchObject({
          name: 'StateManagerError',
          code: 'PATH_TRAVERSAL_DETECTED',
          message: `Unsafe file path: ${p}`,
        })
      },
    )

    it('rejects a path over 260 characters with PATH_TOO_LONG', async () => {
      const p = `${'d/'.repeat(130)}x.xml`
      await expect(x.saveXmlToFile('<a/>', p)).rejects.toMatchObject({ code: 'PATH_TOO_LONG', details: { length: p.length, maxLength: 260 } })
    })

    it('creates parent folders and writes UTF-8 through fs/promises', async () => {
      const write = vi.spyOn(fsp, 'writeFile')
      await x.saveXmlToFile('<a>é</a>', 'out/deep/t.xml')
      expect(fs.readFileSync(path.join(dir, 'out', 'deep', 't.xml'), 'utf8')).toBe('<a>é</a>')
      expect(write).toHaveBeenCalledWith('out/deep/t.xml', '<a>é</a>', 'utf-8')
    })
  })
})

describe('ExportConfigManager', () => {
  let dir = ''
  beforeAll(() => {
    dir = tempDir('roo-compat-config-')
    process.env.ROO_STATE_CONFIG_DIR = dir
  })
  afterAll(() => {
    delete process.env.ROO_STATE_CONFIG_DIR
    fs.rmSync(dir, { recursive: true, force: true })
  })
  const file = () => path.join(dir, 'xml_export_config.json')

  it('getConfig: a missing file gives the defaults and writes them in our config dir', async () => {
    quiet()
    fs.rmSync(file(), { force: true })
    const m = new ExportConfigManager()
    const c = await m.getConfig()
    expect(c).toEqual({ defaults: { prettyPrint: true, includeContent: false, compression: 'none' }, templates: {}, filters: {} })
    expect(JSON.parse(fs.readFileSync(file(), 'utf8'))).toEqual(c)
    expect(await m.getConfigFilePath()).toBe(file())
  })

  it('getConfig: a BOM-prefixed file is read; a corrupt one is replaced by the defaults', async () => {
    quiet()
    fs.writeFileSync(file(), '\uFEFF' + JSON.stringify({ defaults: { prettyPrint: false }, templates: { t: { format: 'xml', fields: ['a'] } } }))
    const c = await new ExportConfigManager().getConfig()
    expect(c.defaults).toEqual({ prettyPrint: false, includeContent: false, compression: 'none' })
    expect(c.templates).toEqual({ t: { format: 'xml', fields: ['a'] } })
    fs.writeFileSync(file(), '{ not json')
    const d = await new ExportConfigManager().getConfig()
    expect(d.defaults.prettyPrint).toBe(true)
    expect(JSON.parse(fs.readFileSync(file(), 'utf8')).defaults.prettyPrint).toBe(true)
  })

  it('reads through fs/promises (a spy on readFile reaches the parser)', async () => {
    quiet()
    vi.spyOn(fsp, 'access').mockResolvedValue(undefined)
    vi.spyOn(fsp, 'readFile').mockResolvedValue(JSON.stringify({ defaults: { compression: 'zip' } }) as never)
    const c = await new ExportConfigManager().getConfig()
    expect(c.defaults.compression).toBe('zip')
  })

  it('updateConfig merges section by section; templates and filters add and remove', async () => {
    quiet()
    fs.rmSync(file(), { force: true })
    const m = new ExportConfigManager()
    await m.updateConfig({ defaults: { includeContent: true } })
    expect((await m.getConfig()).defaults).toEqual({ prettyPrint: true, includeContent: true, compression: 'none' })
    await m.addTemplate('brief', { format: 'xml', fields: ['taskId'] })
    await m.addFilter('may', { startDate: '2025-05-01' })
    expect(await m.removeTemplate('nope')).toBe(false)
    expect(await m.removeTemplate('brief')).toBe(true)
    expect(await m.removeFilter('may')).toBe(true)
    m.invalidateCache()
    const back = await m.getConfig()
    expect(back.templates).toEqual({})
    expect(back.filters).toEqual({})
    await m.resetConfig()
    expect(JSON.parse(fs.readFileSync(file(), 'utf8')).defaults.includeContent).toBe(false)
  })

  it('a failed write rejects with CONFIG_SAVE_FAILED', async () => {
    quiet()
    const m = new ExportConfigManager()
    await m.getConfig()
    vi.spyOn(fsp, 'writeFile').mockRejectedValue(new Error('disk full'))
    await expect(m.updateConfig({ defaults: { prettyPrint: false } })).rejects.toMatchObject({
      name: 'ExportConfigManagerError',
      code: 'CONFIG_SAVE_FAILED',
      details: { configPath: file() },
    })
  })

  it('no config directory: getConfig gives a defaults copy, getConfigFilePath rejects NO_STORAGE_DETECTED', async () => {
    quiet()
    const saved = { c: process.env.ROO_STATE_CONFIG_DIR, h: process.env.HOME, x: process.env.XDG_CONFIG_HOME }
    try {
      delete process.env.ROO_STATE_CONFIG_DIR
      process.env.HOME = ''
      process.env.XDG_CONFIG_HOME = ''
      const m = new ExportConfigManager()
      expect((await m.getConfig()).defaults.compression).toBe('none')
      await expect(m.getConfigFilePath()).rejects.toMatchObject({ code: 'NO_STORAGE_DETECTED' })
    } finally {
      process.env.ROO_STATE_CONFIG_DIR = saved.c
      process.env.HOME = saved.h
      if (saved.x === undefined) delete process.env.XDG_CONFIG_HOME
      else process.env.XDG_CONFIG_HOME = saved.x
    }
  })

  it('legacy mode shares the default sections (the legacy quirk); fixed mode copies them', async () => {
    quiet()
    const defaults = ExportConfigManager.DEFAULT_CONFIG
    const snapshot = JSON.stringify(defaults)
    try {
      process.env.ROO_STATE_COMPAT_MODE = 'fixed'
      fs.rmSync(file(), { force: true })
      await new ExportConfigManager().addTemplate('leak', { format: 'xml', fields: [] })
      expect(JSON.stringify(defaults)).toBe(snapshot)
      delete process.env.ROO_STATE_COMPAT_MODE
      fs.rmSync(file(), { force: true })
      await new ExportConfigManager().addTemplate('leak', { format: 'xml', fields: [] })
      expect(defaults.templates).toHaveProperty('leak')
    } finally {
      delete (defaults.templates as Record<string, unknown>).leak
    }
  })
})

const STORE = fs
  .readdirSync(path.join(repoRoot, 'fixtures', 'stores'))
  .filter((d) => fs.existsSync(path.join(repoRoot, 'fixtures', 'stores', d, 'tasks')))
  .sort()[0]

function listAll(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((d) => `${path.relative(dir, path.join(d.parentPath ?? (d as any).path, d.name))}:${d.isFile() ? fs.statSync(path.join(d.parentPath ?? (d as any).path, d.name)).mtimeMs : 'd'}`)
    .sort()
}

describe('SkeletonCacheService', () => {
  let storage = ''
  let cacheDir = ''
  beforeAll(() => {
    storage = tempDir('roo-compat-storage-')
    cacheDir = tempDir('roo-compat-cache-')
    process.env.ROO_STATE_CACHE_DIR = cacheDir
    const tasks = path.join(storage, 'tasks')
    fs.mkdirSync(path.join(tasks, '.skeletons'), { recursive: true })
    for (const id of ['a', 'b', 'fresh']) fs.mkdirSync(path.join(tasks, id))
    fs.writeFileSync(path.join(tasks, '.skeletons', 'a.json'), '\uFEFF' + JSON.stringify({ taskId: 'a', metadata: { dataSource: 'x' } }))
    fs.writeFileSync(path.join(tasks, '.skeletons', 'b.json'), JSON.stringify({ taskId: 'b', metadata: { dataSource: 'claude' } }))
    fs.writeFileSync(path.join(tasks, '.skeletons', '_skeleton_index.json'), JSON.stringify({ version: 1, entries: [] }))
    fs.writeFileSync(path.join(tasks, '.skeletons', 'broken.json'), '{')
  })
  afterAll(() => {
    delete process.env.ROO_STATE_CACHE_DIR
    SkeletonCacheService.reset()
    fs.rmSync(storage, { recursive: true, force: true })
    fs.rmSync(cacheDir, { recursive: true, force: true })
  })

  const fakeDetector = (locations: string[]) => {
    const analyzeConversation = vi.fn(async (id: string) => ({ taskId: id, metadata: { dataSource: 'roo' } }))
    vi.spyOn(SkeletonCacheService, 'storageDetector').mockReturnValue({
      detectStorageLocations: async () => locations,
      analyzeConversation,
    })
    return analyzeConversation
  }

  it('getInstance is a singleton; reset drops it and the configuration', () => {
    SkeletonCacheService.configure({ enableClaudeTier: true })
    const a = SkeletonCacheService.getInstance()
    expect(SkeletonCacheService.getInstance()).toBe(a)
    SkeletonCacheService.reset()
    expect(SkeletonCacheService.getInstance()).not.toBe(a)
    expect(SkeletonCacheService.config).toEqual({})
  })

  it('legacy mode: .skeletons files (BOM stripped, no taskId skipped, broken logged) + missing tasks analysed, written to our cache dir', async () => {
    quiet()
    SkeletonCacheService.reset()
    const analyze = fakeDetector([storage])
    const svc = SkeletonCacheService.getInstance()
    const cache = await svc.getCache()
    expect([...cache.keys()].sort()).toEqual(['a', 'b', 'fresh'])
    expect(analyze).toHaveBeenCalledTimes(1)
    expect(analyze.mock.calls[0][0]).toBe('fresh')
    expect(fs.existsSync(path.join(cacheDir, 'compat-skeletons', 'fresh.json'))).toBe(true)
    expect(fs.existsSync(path.join(storage, 'tasks', '.skeletons', 'fresh.json'))).toBe(false)
    const stats = await svc.getCacheTierStats()
    expect(stats).toMatchObject({ tier1_roo: 2, tier2_claude: 1, tier3_archives: 0, total: 3, stale: false })
    expect(stats.cacheAgeMs).toBeGreaterThanOrEqual(0)
    expect(await svc.has('a')).toBe(true)
    expect(await svc.getSkeleton('zzz')).toBeUndefined()
    expect(await svc.awaitFreshnessWithBudget(10)).toBe(true)
    expect(svc.getCacheSize()).toBe(3)
    fs.rmSync(path.join(cacheDir, 'compat-skeletons', 'fresh.json'))
    await svc.forceRefresh()
    expect(analyze).toHaveBeenCalledTimes(2)
  })

  it('fixed mode: the project skeleton cache of the store, nothing written into the store', async () => {
    quiet()
    process.env.ROO_STATE_COMPAT_MODE = 'fixed'
    SkeletonCacheService.reset()
    const store = path.join(repoRoot, 'fixtures', 'stores', STORE)
    const before = listAll(store)
    const analyze = fakeDetector([store])
    const svc = SkeletonCacheService.getInstance()
    const all = await svc.getAllSkeletons()
    const dirs = fs.readdirSync(path.join(store, 'tasks'), { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith('.') && !d.name.startsWith('_'))
    expect(all.length).toBeGreaterThan(0)
    expect(all.length).toBeLessThanOrEqual(dirs.length)
    expect(all.every((s: Skel) => dirs.some((d) => d.name === s.taskId))).toBe(true)
    expect(analyze).not.toHaveBeenCalled()
    expect(listAll(store)).toEqual(before)
    expect(fs.readdirSync(cacheDir).length).toBeGreaterThan(0)
  })

  it('no storage: warned, cache left as it was, stats say never refreshed', async () => {
    quiet()
    SkeletonCacheService.reset()
    fakeDetector([])
    const svc = SkeletonCacheService.getInstance()
    expect(await svc.getAllSkeletons()).toEqual([])
    expect(await svc.getCacheTierStats()).toMatchObject({ total: 0, cacheAgeMs: null, stale: true })
    expect(await svc.awaitFreshnessWithBudget(5)).toBe(false)
  })

  it('saveSkeleton / saveAllToDisk write only to our cache dir unless the caller opts in', async () => {
    quiet()
    SkeletonCacheService.reset()
    fakeDetector([storage])
    const svc = SkeletonCacheService.getInstance()
    expect(await svc.saveSkeleton('nothing')).toBe(false)
    await svc.addOrUpdate('z', { taskId: 'z', metadata: {} })
    expect(fs.existsSync(path.join(cacheDir, 'compat-skeletons', 'z.json'))).toBe(true)
    expect(await svc.saveAllToDisk()).toEqual({ saved: 1, errors: 0 })
    SkeletonCacheService.configure({ writeToStorage: true })
    expect(await svc.saveSkeleton('z')).toBe(true)
    expect(fs.existsSync(path.join(storage, 'tasks', '.skeletons', 'z.json'))).toBe(true)
    fs.rmSync(path.join(storage, 'tasks', '.skeletons', 'z.json'))
  })
})

describe('JsonCsvExporter', () => {
  const { JsonCsvExporter } = require('../../compat/services/trace-summary/JsonCsvExporter.js')
  const classifier = { isToolResult: (c: string) => c.startsWith('[') }
  const empty = () => ({ totalSections: 0 })
  const helpers = {
    truncateContent: (c: string, n: number) => (n > 0 && c.length > n ? `${c.slice(0, n)}…` : c),
    isContentTruncated: (c: string, n: number) => n > 0 && c.length > n,
    getEmptyStatistics: empty,
    getOriginalContentSize: () => 1000,
    calculateCompressionRatio: (a: number, b: number) => Math.round((a / b) * 100) / 100,
    truncateText: (t: string, n: number) => (t.length > n ? `${t.slice(0, n)}...` : t),
  }
  const conv = () => ({
    taskId: 'j1',
    isCompleted: true,
    metadata: {
      createdAt: '2025-05-01T10:00:00.000Z',
      lastActivity: '2025-05-01T11:00:00.000Z',
      messageCount: 3,
      actionCount: 0,
      totalSize: 200,
      workspace: '/ws, with comma',
    },
    sequence: [
      { role: 'user', content: 'Please, fix "it"', timestamp: 't1', isTruncated: false },
      { role: 'assistant', content: 'ok', timestamp: 't2', isTruncated: false },
      {
        role: 'user',
        content: "[read_file for 'src/a.ts'] Result: file read\n[execute_command] Result: Error: failed",
        timestamp: 't3',
        isTruncated: false,
      },
      { type: 'tool', name: 'x', parameters: {}, status: 'success', timestamp: 't4' },
    ],
  })

  it('JSON light: shape, first user message, statistics with the compression ratio', async () => {
    const r = await new JsonCsvExporter(classifier).generateJsonSummary(conv(), { truncationChars: 0 }, helpers)
    expect(r.success).toBe(true)
    const doc = JSON.parse(r.content)
    expect(doc).toMatchObject({
      format: 'roo-conversation-light',
      version: '1.0',
      summary: { totalConversations: 1, totalMessages: 3, totalSize: 200, dateRange: { earliest: '2025-05-01T10:00:00.000Z' } },
      drillDown: { available: true, endpoint: 'view_task_details', fullDataEndpoint: 'get_raw_conversation' },
    })
    expect(doc.conversations[0]).toMatchObject({ taskId: 'j1', firstUserMessage: 'Please, fix "it"', isCompleted: false, children: [] })
    expect(r.statistics).toMatchObject({ totalSections: 3, userMessages: 1, assistantMessages: 1, toolResults: 1, compressionRatio: helpers.calculateCompressionRatio(1000, r.content.length) })
  })

  it('JSON full: messages with tool calls parsed from the text', async () => {
    const r = await new JsonCsvExporter(classifier).generateJsonSummary(conv(), { jsonVariant: 'full', truncationChars: 5 }, helpers)
    const doc = JSON.parse(r.content)
    expect(doc.format).toBe('roo-conversation-full')
    expect(doc.task.messages).toHaveLength(3)
    expect(doc.task.messages[0]).toMatchObject({ content: 'Pleas…', isTruncated: true })
    expect(doc.task.messages[2].toolCalls).toEqual([
      { toolName: "read_file for 'src/a.ts'", arguments: {}, result: 'file read', success: true },
      { toolName: 'execute_command', arguments: {}, result: 'Error: failed', success: false },
    ])
    process.env.ROO_STATE_COMPAT_MODE = 'fixed'
    const fixed = new JsonCsvExporter(classifier).extractToolCallsFromMessage(conv().sequence[2].content)
    expect(fixed[0]).toEqual({ toolName: 'read_file', arguments: { path: 'src/a.ts' }, result: 'file read', success: true })
  })

  it('CSV: unknown variant is a failure result, not a rejection', async () => {
    const r = await new JsonCsvExporter(classifier).generateCsvSummary(conv(), { csvVariant: 'rows', truncationChars: 0 }, helpers)
    expect(r).toEqual({ success: false, content: '', statistics: empty(), error: 'Unsupported CSV variant: rows. Supported: conversations, messages, tools' })
  })

  it('CSV legacy quirks (falsy cells empty, double quoting) and the fixed values', async () => {
    const x = new JsonCsvExporter(classifier)
    const legacy = (await x.generateCsvSummary(conv(), { truncationChars: 0 }, helpers)).content
    expect(legacy.split('\n')[0]).toBe('taskId,workspace,isCompleted,createdAt,lastActivity,messageCount,actionCount,totalSize,firstUserMessage')
    expect(legacy.split('\n')[1]).toBe('j1,"""/ws, with comma""",,2025-05-01T10:00:00.000Z,2025-05-01T11:00:00.000Z,3,,200,"""Please, fix """"it"""""""')
    const tools = (await x.generateCsvSummary(conv(), { csvVariant: 'tools', truncationChars: 0 }, helpers)).content.split('\n')
    expect(tools).toHaveLength(3)
    expect(tools[2]).toBe('j1,3,execute_command,,t3,,,13,"""/ws, with comma"""')
    process.env.ROO_STATE_COMPAT_MODE = 'fixed'
    const fixed = (await x.generateCsvSummary(conv(), { truncationChars: 0 }, helpers)).content
    expect(fixed.split('\n')[1]).toBe('j1,"/ws, with comma",true,2025-05-01T10:00:00.000Z,2025-05-01T11:00:00.000Z,3,0,200,"Please, fix ""it"""')
    const msgs = (await x.generateCsvSummary(conv(), { csvVariant: 'messages', truncationChars: 0 }, helpers)).content.split('\n')
    expect(msgs[3]).toBe('j1,3,user,t3,84,false,2,"/ws, with comma"')
  })
})

describe('types', () => {
  it('services.typecheck.ts compiles with tsc --strict against the hand-written .d.ts files', () => {
    const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
    const file = path.join(repoRoot, '__tests__', 'compat', 'services.typecheck.ts')
    try {
      execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--lib', 'es2022,dom', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', 'false', file], { stdio: 'pipe' })
    } catch (e) {
      const err = e as { stdout?: Buffer }
      throw new Error(`tsc rejects services.typecheck.ts:\n${err.stdout?.toString() ?? e}`)
    }
  })
})
