import { describe, it, expect, beforeAll, afterAll, afterEach, vi } from 'vitest'
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { repoRoot, tempDir } from '../helpers'

// compat/services: XmlExporterService (the legacy XML text), ExportConfigManager,
// SkeletonCacheService and JsonCsvExporter, row by row of docs/compat-services.md §2–5, with the
// caller's modules handed over as its replacement files do (docs/drop-in.md).

const require = createRequire(import.meta.url)
const io = require('../../compat/io.js')
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

// The caller's modules as its replacement files hand them over (docs/drop-in.md): one importer
// that answers the specifiers the legacy services imported, relative to its src/services/.
function wire(modules: Record<string, object>) {
  const importer = vi.fn(async (specifier: string) => {
    if (specifier in modules) return modules[specifier]
    throw new Error(`Cannot find module '${specifier}'`)
  })
  io.use({ servicesImport: importer })
  return importer
}

// The caller's own error classes (its src/types/errors.ts), distinct from compat's.
class TheirStateManagerError extends Error {
  constructor(
    message: string,
    public code: string,
    public service: string,
    public details?: unknown,
    public cause?: Error,
  ) {
    super(message)
    this.name = 'StateManagerError'
  }
}
class TheirExportConfigManagerError extends TheirStateManagerError {
  constructor(message: string, code: string, details?: unknown, cause?: Error) {
    super(message, code, 'ExportConfigManager', details, cause)
    this.name = 'ExportConfigManagerError'
  }
}
const theirErrors = { StateManagerError: TheirStateManagerError, ExportConfigManagerError: TheirExportConfigManagerError }

afterEach(() => {
  io.use({ servicesImport: false, fs, 'fs/promises': fsp })
})

function wellFormed(xml: string): void {
  const dir = tempDir('roo-compat-xml-')
  const file = path.join(dir, 'doc.xml')
  fs.writeFileSync(file, xml)
  try {
    execFileSync('xmllint', ['--noout', file], { stdio: 'pipe' })
  } catch (e) {
    const err = e as { code?: string; stderr?: Buffer }
    if (err.code === 'ENOENT') throw new Error('xmllint is missing: apt-get install -y libxml2-utils')
    throw new Error(`xmllint rejects the export: ${err.stderr?.toString() ?? e}`)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

function skel(taskId: string, extra: Skel = {}, meta: Skel = {}): Skel {
  return {
    taskId,
    metadata: {
      title: `Task ${taskId}`,
      createdAt: '2025-05-01T10:00:00.000Z',
      lastActivity: '2025-05-01T11:00:00.000Z',
      mode: 'code',
      messageCount: 2,
      actionCount: 1,
      totalSize: 100,
      ...meta,
    },
    sequence: [],
    ...extra,
  }
}

const count = (xml: string, re: RegExp) => (xml.match(re) ?? []).length

describe('XmlExporterService', () => {
  const x = new XmlExporterService()
  // A skeleton that reaches every branch of the legacy writer: escaped title, empty date,
  // a preview cut at 100 characters, action attributes (a 0 count is left out), parameters,
  // an action without parameters, a message with empty content.
  const full: Skel = {
    taskId: 't1',
    parentTaskId: 'p0',
    metadata: {
      title: 'Fix <parser> & "tests" &amp; more',
      createdAt: '2025-05-01T10:00:00.000Z',
      lastActivity: '',
      mode: 'code',
      messageCount: 2,
      actionCount: 1,
      totalSize: 1234,
    },
    sequence: [
      { role: 'user', content: `${'x'.repeat(95)} <&> tail`, timestamp: '2025-05-01T10:00:00.000Z', isTruncated: true },
      {
        type: 'tool',
        name: 'write_to_file',
        parameters: { path: 'a "b".ts' },
        status: 'success',
        timestamp: '2025-05-01T10:01:00.000Z',
        file_path: 'src/a.ts',
        line_count: 3,
        content_size: 0,
      },
      { type: 'command', name: 'ls', parameters: {}, status: 'failure', timestamp: '2025-05-01T10:02:00.000Z' },
      { role: 'assistant', content: '', timestamp: '2025-05-01T10:03:00.000Z', isTruncated: false },
    ],
  }
  const preview = `${'x'.repeat(95)} &lt;&amp;&gt; ...`
  const params = '{"path":"a \\"b\\".ts"}'

  it('generateTaskXml: the legacy text, pretty (two-space indent, empty elements closed) and compact', () => {
    expect(x.generateTaskXml(full)).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<task taskId="t1" parentTaskId="p0">',
        '  <metadata>',
        '    <title>Fix &lt;parser&gt; &amp; "tests" &amp; more</title>',
        '    <lastActivity/>',
        '    <createdAt>2025-05-01T10:00:00.000Z</createdAt>',
        '    <mode>code</mode>',
        '    <messageCount>2</messageCount>',
        '    <actionCount>1</actionCount>',
        '    <totalSize>1234</totalSize>',
        '  </metadata>',
        '  <sequence>',
        `    <message role="user" timestamp="2025-05-01T10:00:00.000Z" isTruncated="true">${preview}</message>`,
        '    <action type="tool" name="write_to_file" status="success" timestamp="2025-05-01T10:01:00.000Z" filePath="src/a.ts" lineCount="3">',
        `      <parameters>${params}</parameters>`,
        '    </action>',
        '    <action type="command" name="ls" status="failure" timestamp="2025-05-01T10:02:00.000Z"/>',
        '    <message role="assistant" timestamp="2025-05-01T10:03:00.000Z"/>',
        '  </sequence>',
        '</task>',
      ].join('\n'),
    )
    expect(x.generateTaskXml(full, { prettyPrint: false })).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><task taskId="t1" parentTaskId="p0"><metadata>' +
        '<title>Fix &lt;parser&gt; &amp; "tests" &amp; more</title><lastActivity></lastActivity>' +
        '<createdAt>2025-05-01T10:00:00.000Z</createdAt><mode>code</mode><messageCount>2</messageCount>' +
        '<actionCount>1</actionCount><totalSize>1234</totalSize></metadata><sequence>' +
        `<message role="user" timestamp="2025-05-01T10:00:00.000Z" isTruncated="true">${preview}</message>` +
        '<action type="tool" name="write_to_file" status="success" timestamp="2025-05-01T10:01:00.000Z" filePath="src/a.ts" lineCount="3">' +
        `<parameters>${params}</parameters></action>` +
        '<action type="command" name="ls" status="failure" timestamp="2025-05-01T10:02:00.000Z"/>' +
        '<message role="assistant" timestamp="2025-05-01T10:03:00.000Z"></message></sequence></task>',
    )
    const whole = x.generateTaskXml(full, { includeContent: true })
    expect(whole).toContain(`>${'x'.repeat(95)} &lt;&amp;&gt; tail</message>`)
    const { sequence: _s, ...bare } = full
    expect(x.generateTaskXml(bare)).toContain('\n  <sequence/>\n')
  })

  it('legacy mode keeps the legacy errors and entity-shaped text; fixed mode writes well-formed XML', () => {
    const s = skel('t3', { sequence: [{ role: 'user', content: 'a &nbsp; b \u0001 c', timestamp: 't', isTruncated: false }] })
    expect(x.generateTaskXml(s)).toContain('>a &nbsp; b \u0001 c</message>')
    const noCount = skel('t4')
    delete noCount.metadata.messageCount
    expect(() => x.generateTaskXml(noCount)).toThrow(TypeError)
    process.env.ROO_STATE_COMPAT_MODE = 'fixed'
    const fixed = x.generateTaskXml(s)
    expect(fixed).toContain('>a &amp;nbsp; b  c</message>')
    wellFormed(fixed)
    expect(x.generateTaskXml(noCount)).toContain('<messageCount>0</messageCount>')
  })

  it('generateConversationXml: <rootTask> holds the root, children nested by parentTaskId, maxDepth levels from the root', () => {
    const root = skel('r')
    const kids = [skel('c1', { parentTaskId: 'r' }), skel('c2', { parentTaskId: 'r' }), skel('g1', { parentTaskId: 'c1' }), skel('o', { parentTaskId: 'x' })]
    const xml = x.generateConversationXml(root, kids)
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<conversation conversationId="r" exportTimestamp="[^"]+">\n {2}<rootTask>\n {4}<task taskId="r">\n/)
    expect(count(xml, /<task /g)).toBe(4)
    expect(count(xml, /<children>/g)).toBe(2)
    expect(xml).toContain('\n            <task taskId="g1" parentTaskId="c1">\n')
    expect(count(x.generateConversationXml(root, kids, { maxDepth: 2 }), /<task /g)).toBe(3)
    expect(count(x.generateConversationXml(root, kids, { maxDepth: 1 }), /<task /g)).toBe(1)
    wellFormed(xml)
  })

  it('generateProjectXml: summary, date filters on lastActivity, taskCount (legacy: root + direct children; fixed: the tree)', () => {
    const all = [
      skel('r1', {}, { title: 'Root "one"', totalSize: 300 }),
      skel('k1', { parentTaskId: 'r1' }, { totalSize: 200 }),
      skel('g1', { parentTaskId: 'k1' }, { totalSize: 100 }),
      skel('old', {}, { lastActivity: '2024-01-02T00:00:00.000Z', totalSize: 50 }),
    ]
    const xml = x.generateProjectXml(all, '/home/me/project')
    expect(xml).toContain('<projectPath>/home/me/project</projectPath>')
    expect(xml).toContain('<conversationCount>2</conversationCount>')
    expect(xml).toContain('<totalTasks>4</totalTasks>')
    expect(xml).toContain('<totalSize>650</totalSize>')
    expect(xml).toContain('<dateRange start="2024-01-02T00:00:00.000Z" end="2025-05-01T11:00:00.000Z"/>')
    expect(xml).toContain('<conversation rootTaskId="r1" title="Root &quot;one&quot;" taskCount="2" lastActivity="2025-05-01T11:00:00.000Z"/>')
    const recent = x.generateProjectXml(all, '/p', { startDate: '2025-01-01T00:00:00Z' })
    expect(recent).not.toContain('rootTaskId="old"')
    expect(recent).toContain('rootTaskId="r1"')
    const before = x.generateProjectXml(all, '/p', { endDate: '2024-12-31T00:00:00Z' })
    expect(before).toContain('rootTaskId="old"')
    expect(before).not.toContain('rootTaskId="r1"')
    const broken = [...all, skel('bad', {}, { lastActivity: 'not a date' })]
    expect(() => x.generateProjectXml(broken, '/p')).toThrow(RangeError)
    process.env.ROO_STATE_COMPAT_MODE = 'fixed'
    expect(x.generateProjectXml(all, '/p')).toContain('rootTaskId="r1" title="Root &quot;one&quot;" taskCount="3"')
    expect(x.generateProjectXml(broken, '/p')).toContain('<dateRange start="2024-01-02T00:00:00.000Z" end="2025-05-01T11:00:00.000Z"/>')
  })

  describe('saveXmlToFile', () => {
    it.each(['../escape.xml', '/etc/x.xml', '\\etc\\x.xml', 'C:\\out\\x.xml', 'a|b.xml', 'q?.xml', 'a"b.xml', 's*.xml'])(
      'rejects %s with PATH_TRAVERSAL_DETECTED',
      async (p) => {
        await expect(x.saveXmlToFile('<a/>', p)).rejects.toMatchObject({
          name: 'StateManagerError',
          code: 'PATH_TRAVERSAL_DETECTED',
          service: 'XmlExporterService',
          message: `Unsafe file path: ${p}`,
        })
      },
    )

    it('rejects a path over 260 characters with PATH_TOO_LONG', async () => {
      const p = `${'d/'.repeat(130)}x.xml`
      await expect(x.saveXmlToFile('<a/>', p)).rejects.toMatchObject({ code: 'PATH_TOO_LONG', details: { length: p.length, maxLength: 260 } })
    })

    it("errors are the caller's StateManagerError once its modules are handed over", async () => {
      const importer = wire({ '../types/errors.js': theirErrors })
      const svc = new XmlExporterService()
      const err = await svc.saveXmlToFile('<a/>', '../x.xml').catch((e: unknown) => e)
      expect(err).toBeInstanceOf(TheirStateManagerError)
      expect(err).toMatchObject({ code: 'PATH_TRAVERSAL_DETECTED', details: { filePath: '../x.xml', method: 'validateFilePath' } })
      expect(() => svc.validateFilePath('a<b')).toThrow(TheirStateManagerError)
      expect(importer).toHaveBeenCalledWith('../types/errors.js')
    })

    it('creates the parent folder and writes UTF-8 through the fs/promises module compat is handed', async () => {
      const mkdir = vi.fn(async () => undefined)
      const writeFile = vi.fn(async () => undefined)
      io.use({ 'fs/promises': { mkdir, writeFile } })
      await x.saveXmlToFile('<a>é</a>', 'out/deep/t.xml')
      expect(mkdir).toHaveBeenCalledWith('out/deep', { recursive: true })
      expect(writeFile).toHaveBeenCalledWith('out/deep/t.xml', '<a>é</a>', 'utf-8')
    })
  })
})

describe('ExportConfigManager', () => {
  let root = ''
  beforeAll(() => {
    root = tempDir('roo-compat-config-')
    fs.mkdirSync(path.join(root, 'storage', 'tasks'), { recursive: true })
  })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
  // The legacy file: beside the first storage location the detector reports.
  const file = () => path.join(root, 'xml_export_config.json')
  const detector = (locations: () => Promise<string[]>) =>
    wire({ '../utils/roo-storage-detector.js': { RooStorageDetector: { detectStorageLocations: vi.fn(locations) } }, '../types/errors.js': theirErrors })

  it('getConfig: a missing file gives the defaults and writes them beside the storage folder', async () => {
    quiet()
    detector(async () => [path.join(root, 'storage')])
    fs.rmSync(file(), { force: true })
    const m = new ExportConfigManager()
    const c = await m.getConfig()
    expect(c).toEqual({ defaults: { prettyPrint: true, includeContent: false, compression: 'none' }, templates: {}, filters: {} })
    expect(await m.getConfig()).toBe(c)
    expect(JSON.parse(fs.readFileSync(file(), 'utf8'))).toEqual(c)
    expect(await m.getConfigFilePath()).toBe(file())
  })

  it('getConfig: a BOM-prefixed file is read and merged; a corrupt one is replaced by the defaults', async () => {
    quiet()
    detector(async () => [path.join(root, 'storage')])
    fs.writeFileSync(file(), '\uFEFF' + JSON.stringify({ defaults: { prettyPrint: false }, templates: { t: { format: 'xml', fields: ['a'] } } }))
    const c = await new ExportConfigManager().getConfig()
    expect(c.defaults).toEqual({ prettyPrint: false, includeContent: false, compression: 'none' })
    expect(c.templates).toEqual({ t: { format: 'xml', fields: ['a'] } })
    fs.writeFileSync(file(), '{ not json')
    const d = await new ExportConfigManager().getConfig()
    expect(d.defaults.prettyPrint).toBe(true)
    expect(JSON.parse(fs.readFileSync(file(), 'utf8')).defaults.prettyPrint).toBe(true)
  })

  it("reads and writes through fs/promises' default export as compat is handed it", async () => {
    quiet()
    detector(async () => ['/mock/home/.vscode/tasks'])
    const access = vi.fn(async () => undefined)
    const readFile = vi.fn(async () => JSON.stringify({ defaults: { compression: 'zip' } }))
    const writeFile = vi.fn(async () => undefined)
    const mkdir = vi.fn(async () => undefined)
    io.use({ 'fs/promises': { default: { access, readFile, writeFile, mkdir } } })
    const m = new ExportConfigManager()
    expect((await m.getConfig()).defaults.compression).toBe('zip')
    expect(readFile).toHaveBeenCalledWith('/mock/home/.vscode/xml_export_config.json', 'utf-8')
    await m.addTemplate('brief', { format: 'xml', fields: ['taskId'] })
    expect(mkdir).toHaveBeenCalledWith('/mock/home/.vscode', { recursive: true })
    expect(JSON.parse(writeFile.mock.calls[0][1] as string).templates.brief).toEqual({ format: 'xml', fields: ['taskId'] })
  })

  it('updateConfig merges section by section; templates and filters add and remove', async () => {
    quiet()
    detector(async () => [path.join(root, 'storage')])
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

  it("a failed write rejects the caller's ExportConfigManagerError CONFIG_SAVE_FAILED (cause only for an Error)", async () => {
    quiet()
    detector(async () => [path.join(root, 'storage')])
    const m = new ExportConfigManager()
    await m.getConfig()
    const disk = new Error('disk full')
    vi.spyOn(fsp, 'writeFile').mockRejectedValueOnce(disk).mockRejectedValueOnce('plain failure')
    const first = await m.updateConfig({ defaults: { prettyPrint: false } }).catch((e: unknown) => e)
    expect(first).toBeInstanceOf(TheirExportConfigManagerError)
    expect(first).toMatchObject({ code: 'CONFIG_SAVE_FAILED', details: { configPath: file() }, cause: disk })
    const second = await m.resetConfig().catch((e: unknown) => e)
    expect(second).toMatchObject({ code: 'CONFIG_SAVE_FAILED', message: 'Impossible de sauvegarder la configuration: plain failure', cause: undefined })
  })

  it('no storage: getConfig gives a defaults copy, getConfigFilePath rejects NO_STORAGE_DETECTED; a failing detector is logged', async () => {
    quiet()
    detector(async () => [])
    const m = new ExportConfigManager()
    expect((await m.getConfig()).defaults.compression).toBe('none')
    await expect(m.getConfigFilePath()).rejects.toMatchObject({ name: 'ExportConfigManagerError', code: 'NO_STORAGE_DETECTED' })
    detector(async () => {
      throw new Error('detector crashed')
    })
    vi.mocked(console.error).mockClear()
    await expect(new ExportConfigManager().getConfigFilePath()).rejects.toBeInstanceOf(TheirExportConfigManagerError)
    expect(console.error).toHaveBeenCalledWith("Erreur lors de l'initialisation du chemin de configuration:", expect.any(Error))
  })

  it('validateConfig: the legacy checks, false when a getter throws', () => {
    const m = new ExportConfigManager()
    expect(m.validateConfig({ defaults: { prettyPrint: true, includeContent: false, compression: 'zip' }, templates: {}, filters: {} })).toBe(true)
    expect(m.validateConfig({ defaults: { prettyPrint: true, includeContent: false, compression: 'gzip' }, templates: {}, filters: {} })).toBe(false)
    expect(m.validateConfig({ defaults: { prettyPrint: true, includeContent: false, compression: 'none' }, templates: {} })).toBe(false)
    const throwing = Object.defineProperty({}, 'defaults', {
      get() {
        throw new Error('boom')
      },
    })
    expect(m.validateConfig(throwing)).toBe(false)
  })

  it('legacy mode shares the default sections (the legacy quirk); fixed mode copies them', async () => {
    quiet()
    detector(async () => [path.join(root, 'storage')])
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
  const skeletons = () => path.join(storage, 'tasks', '.skeletons')
  beforeAll(() => {
    storage = tempDir('roo-compat-storage-')
    cacheDir = tempDir('roo-compat-cache-')
    process.env.ROO_STATE_CACHE_DIR = cacheDir
    const tasks = path.join(storage, 'tasks')
    fs.mkdirSync(skeletons(), { recursive: true })
    for (const id of ['a', 'b', 'fresh']) fs.mkdirSync(path.join(tasks, id))
    fs.writeFileSync(path.join(tasks, 'notes.txt'), 'not a task')
    fs.writeFileSync(path.join(skeletons(), 'a.json'), '\uFEFF' + JSON.stringify({ taskId: 'a', metadata: { dataSource: 'x' } }))
    fs.writeFileSync(path.join(skeletons(), 'b.json'), JSON.stringify({ taskId: 'b', metadata: { dataSource: 'claude' } }))
    fs.writeFileSync(path.join(skeletons(), 'no-id.json'), JSON.stringify({ metadata: {} }))
    fs.writeFileSync(path.join(skeletons(), 'broken.json'), '{')
  })
  afterAll(() => {
    delete process.env.ROO_STATE_CACHE_DIR
    SkeletonCacheService.reset()
    fs.rmSync(storage, { recursive: true, force: true })
    fs.rmSync(cacheDir, { recursive: true, force: true })
  })

  // The caller's storage detector (and any other module of its src/services/), handed over.
  const withDetector = (locations: string[], more: Record<string, object> = {}) => {
    const analyzeConversation = vi.fn(async (id: string) => ({ taskId: id, metadata: { dataSource: 'roo' }, sequence: [] }))
    const detectStorageLocations = vi.fn(async () => locations)
    wire({ '../utils/roo-storage-detector.js': { RooStorageDetector: { detectStorageLocations, analyzeConversation } }, ...more })
    return analyzeConversation
  }

  it('getInstance is a singleton; reset drops it and the configuration', () => {
    SkeletonCacheService.configure({ enableClaudeTier: true })
    SkeletonCacheService.configure({ enableArchiveTier: true })
    expect(SkeletonCacheService.config).toEqual({ enableClaudeTier: true, enableArchiveTier: true })
    const a = SkeletonCacheService.getInstance()
    expect(SkeletonCacheService.getInstance()).toBe(a)
    SkeletonCacheService.reset()
    expect(SkeletonCacheService.getInstance()).not.toBe(a)
    expect(SkeletonCacheService.config).toEqual({})
  })

  it('legacy mode: the storage .skeletons files (BOM stripped, no taskId skipped, broken logged), missing tasks built into .skeletons', async () => {
    quiet()
    SkeletonCacheService.reset()
    const analyze = withDetector([storage])
    const svc = SkeletonCacheService.getInstance()
    const cache = await svc.getCache()
    expect([...cache.keys()].sort()).toEqual(['a', 'b', 'fresh'])
    expect(analyze).toHaveBeenCalledTimes(1)
    expect(analyze).toHaveBeenCalledWith('fresh', path.join(storage, 'tasks', 'fresh'))
    expect(JSON.parse(fs.readFileSync(path.join(skeletons(), 'fresh.json'), 'utf8')).taskId).toBe('fresh')
    const stats = await svc.getCacheTierStats()
    expect(stats).toMatchObject({ tier1_roo: 2, tier2_claude: 1, tier3_archives: 0, total: 3, stale: false })
    expect(await svc.has('a')).toBe(true)
    expect(await svc.getSkeleton('zzz')).toBeUndefined()
    expect(await svc.awaitFreshnessWithBudget(10)).toBe(true)
    await svc.forceRefresh()
    expect(analyze).toHaveBeenCalledTimes(1)
    fs.rmSync(path.join(skeletons(), 'fresh.json'))
  })

  it('reads through the fs module compat is handed: its promises functions only (a missing mkdir stops the build)', async () => {
    quiet()
    SkeletonCacheService.reset()
    const analyze = withDetector(['/mock/storage'])
    const readdir = vi.fn(async () => ['t1.json', 'readme.txt', 't2.json'])
    const readFile = vi.fn(async (p: string) => JSON.stringify({ taskId: path.basename(p, '.json') }))
    const stat = vi.fn(async () => ({ isDirectory: () => true }))
    io.use({ fs: { promises: { readdir, readFile, stat } } })
    const svc = SkeletonCacheService.getInstance()
    expect((await svc.getAllSkeletons()).map((s: Skel) => s.taskId)).toEqual(['t1', 't2'])
    expect(readdir).toHaveBeenCalledTimes(1)
    expect(readdir).toHaveBeenCalledWith(path.join('/mock/storage', 'tasks', '.skeletons'))
    expect(readFile).toHaveBeenCalledTimes(2)
    expect(analyze).not.toHaveBeenCalled()
    await svc.getCache()
    expect(readdir).toHaveBeenCalledTimes(1)
  })

  it('the Claude and archive tiers come from the caller, local tasks win collisions', async () => {
    quiet()
    SkeletonCacheService.reset()
    const claude = {
      detectStorageLocations: vi.fn(async () => [{ projectPath: '/p/alpha' }, { projectPath: '/p/empty' }, { projectPath: '/p/a' }]),
      analyzeConversation: vi.fn(async (id: string) => ({ taskId: id, metadata: {}, sequence: id === 'claude-empty' ? [] : [{ role: 'user' }] })),
    }
    const archiver = {
      listArchivedTaskFiles: vi.fn(async () => [
        { taskId: 'a', filePath: '/arch/m1/a.json.gz' },
        { taskId: 'arch-1', filePath: '/arch/m1/arch-1.json.gz' },
        { taskId: 'ghost', filePath: '/arch/m2/ghost.json.gz' },
      ]),
      readArchivedTaskFromPath: vi.fn(async (p: string) => (p.includes('ghost') ? null : { taskId: 'arch-1', machineId: 'm1' })),
    }
    const archiveToSkeleton = vi.fn((a: Skel) => ({ taskId: a.taskId, metadata: { machineId: a.machineId }, sequence: [] }))
    withDetector([storage], {
      '../utils/claude-storage-detector.js': { ClaudeStorageDetector: claude },
      './task-archiver/index.js': { TaskArchiver: archiver },
      './archive-skeleton-builder.js': { archiveToSkeleton },
    })
    SkeletonCacheService.configure({ enableClaudeTier: true, enableArchiveTier: true })
    const cache = await SkeletonCacheService.getInstance().getCache()
    expect(claude.analyzeConversation).toHaveBeenCalledWith('claude-alpha', '/p/alpha')
    expect(cache.get('claude-alpha').metadata).toEqual({ source: 'claude-code', dataSource: 'claude' })
    expect(cache.has('claude-empty')).toBe(false)
    expect(archiver.readArchivedTaskFromPath).toHaveBeenCalledTimes(2)
    expect(cache.get('arch-1').metadata).toEqual({ machineId: 'm1', dataSource: 'gdrive-archive' })
    expect(cache.get('a').metadata.dataSource).toBe('x')
    expect(await SkeletonCacheService.getInstance().getCacheTierStats()).toMatchObject({ tier1_roo: 2, tier2_claude: 3, tier3_archives: 1, total: 6 })
    fs.rmSync(path.join(skeletons(), 'fresh.json'), { force: true })
  })

  it('without the caller the tiers are skipped with a warning and the store still loads', async () => {
    quiet()
    SkeletonCacheService.reset()
    withDetector([storage])
    SkeletonCacheService.configure({ enableClaudeTier: true, enableArchiveTier: true })
    const cache = await SkeletonCacheService.getInstance().getCache()
    expect([...cache.keys()].sort()).toEqual(['a', 'b', 'fresh'])
    expect(console.warn).toHaveBeenCalledWith('[SkeletonCacheService] Tier 2 (Claude): chargement non-bloquant a echoue:', expect.any(Error))
    fs.rmSync(path.join(skeletons(), 'fresh.json'), { force: true })
  })

  it('fixed mode on an unobserved disk: the project skeleton cache of the store, nothing written into the store', async () => {
    quiet()
    process.env.ROO_STATE_COMPAT_MODE = 'fixed'
    SkeletonCacheService.reset()
    const store = path.join(repoRoot, 'fixtures', 'stores', STORE)
    const before = listAll(store)
    const analyze = withDetector([store])
    const all = await SkeletonCacheService.getInstance().getAllSkeletons()
    const dirs = fs.readdirSync(path.join(store, 'tasks'), { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith('.') && !d.name.startsWith('_'))
    expect(all.length).toBeGreaterThan(0)
    expect(all.length).toBeLessThanOrEqual(dirs.length)
    expect(all.every((s: Skel) => dirs.some((d) => d.name === s.taskId))).toBe(true)
    expect(analyze).not.toHaveBeenCalled()
    expect(listAll(store)).toEqual(before)
    expect(fs.readdirSync(cacheDir).length).toBeGreaterThan(0)
  })

  it('no storage: warned, cache left as it was, stats say never refreshed, nothing to save', async () => {
    quiet()
    SkeletonCacheService.reset()
    withDetector([])
    const svc = SkeletonCacheService.getInstance()
    expect(await svc.getAllSkeletons()).toEqual([])
    expect(await svc.getCacheTierStats()).toMatchObject({ total: 0, cacheAgeMs: null, stale: true })
    expect(await svc.awaitFreshnessWithBudget(5)).toBe(false)
    expect(await svc.saveSkeleton('z', { taskId: 'z' })).toBe(false)
  })

  it('addOrUpdate writes <storage>/tasks/.skeletons/<id>.json and hands the skeleton to the caller dual-write', async () => {
    quiet()
    SkeletonCacheService.reset()
    const dualWriteConversationToStore = vi.fn(async () => {
      throw new Error('store down')
    })
    withDetector([storage], { './unified-store/dual-write.js': { dualWriteConversationToStore } })
    const svc = SkeletonCacheService.getInstance()
    expect(await svc.saveSkeleton('nothing')).toBe(false)
    const z = { taskId: 'z', metadata: {} }
    await svc.addOrUpdate('z', z)
    expect(JSON.parse(fs.readFileSync(path.join(skeletons(), 'z.json'), 'utf8'))).toEqual(z)
    await vi.waitFor(() => expect(dualWriteConversationToStore).toHaveBeenCalledWith('z', z))
    expect(await svc.saveAllToDisk()).toEqual({ saved: 1, errors: 0 })
    fs.rmSync(path.join(skeletons(), 'z.json'))
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
