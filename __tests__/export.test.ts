import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { core, haveShared, repoRoot, realTasks, tempDir, PARENT, CHILD } from './helpers'

const sharedPresent = haveShared('export: the real pair', realTasks)

// Exports through the binding: XML validated with xmllint against schemas/*.xsd, the real pair as
// one nested conversation, a path-traversal suite, the configuration round trip, Markdown, JSON, CSV.

const stores = fs
  .readdirSync(path.join(repoRoot, 'fixtures', 'stores'))
  .map(s => path.join(repoRoot, 'fixtures', 'stores', s, 'tasks'))
  .filter(p => fs.existsSync(p))

const configDir = tempDir('roo-export-config-')
const outRoot = tempDir('roo-export-out-')

beforeAll(() => {
  process.env.ROO_STATE_CONFIG_DIR = configDir
})
afterAll(() => {
  fs.rmSync(configDir, { recursive: true, force: true })
  fs.rmSync(outRoot, { recursive: true, force: true })
})

/** xmllint --schema; fails (never skips) when xmllint is missing: CI installs libxml2-utils. */
function validate(xml: string, schema: 'task' | 'conversation' | 'project', profile: 'seed' | 'extended' = 'seed'): void {
  const dir = tempDir('roo-export-xml-')
  const file = path.join(dir, 'doc.xml')
  fs.writeFileSync(file, xml)
  const xsd = profile === 'seed' ? path.join(repoRoot, 'schemas', `${schema}.xsd`) : path.join(repoRoot, 'schemas', 'extended', `${schema}.xsd`)
  try {
    execFileSync('xmllint', ['--noout', '--schema', xsd, file], {
      stdio: 'pipe',
    })
  } catch (e) {
    const err = e as { code?: string; stderr?: Buffer }
    if (err.code === 'ENOENT') throw new Error('xmllint is missing: apt-get install -y libxml2-utils')
    throw new Error(`${schema}.xsd rejects the export: ${err.stderr?.toString() ?? e}`)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const count = (xml: string, re: RegExp) => (xml.match(re) ?? []).length

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (e) {
    return (e as { code?: string }).code ?? `no code: ${String(e)}`
  }
  return 'resolved'
}

describe('XML', () => {
  it('exports every task of every fixture store, valid and with the skeletons\' counts', async () => {
    let n = 0
    for (const tasksDir of [...stores, ...(sharedPresent ? [realTasks] : [])]) {
      const { skeletons } = await core.scanTasks(tasksDir)
      for (const s of skeletons) {
        const r = await core.exportTaskXml({ taskId: s.taskId, tasksDir })
        validate(r.content!, 'task')
        expect(count(r.content!, /<message /g)).toBe(s.metadata.messageCount)
        expect(count(r.content!, /<action /g)).toBe(s.metadata.actionCount)
        expect(r.messages).toBe(s.metadata.messageCount)
        n++
      }
    }
    expect(n).toBeGreaterThan(20)
  })

  it.skipIf(!sharedPresent)('nests bc93a6f7 under ac8aa7b4 with non-empty sequences', async () => {
    const r = await core.exportConversationXml({ conversationId: PARENT, tasksDir: realTasks, includeContent: true })
    const xml = r.content!
    validate(xml, 'conversation')
    expect(r.tasks).toBe(2)
    const root = xml.indexOf(`<rootTask taskId="${PARENT}">`)
    const children = xml.indexOf('<children>')
    const child = xml.indexOf(`<task taskId="${CHILD}" parentTaskId="${PARENT}">`)
    expect(root).toBeGreaterThan(0)
    expect(children).toBeGreaterThan(root)
    expect(child).toBeGreaterThan(children)
    expect(xml).not.toContain('<sequence/>')
    const parentPart = xml.slice(root, children)
    const childPart = xml.slice(child)
    expect(count(parentPart, /<message /g)).toBeGreaterThan(10)
    expect(count(childPart, /<message /g)).toBeGreaterThan(10)
    expect(count(childPart, /<action /g)).toBeGreaterThan(10)
  })

  it.skipIf(!sharedPresent)('writes what the seed schemas accept by default, and the extended additions on request', async () => {
    const seed = await core.exportTaskXml({ taskId: CHILD, tasksDir: realTasks })
    validate(seed.content!, 'task')
    expect(seed.content).not.toContain('<workspace>')
    const ext = await core.exportTaskXml({ taskId: CHILD, tasksDir: realTasks, schemaProfile: 'extended' })
    validate(ext.content!, 'task', 'extended')
    expect(ext.content).toContain('<workspace>')
    expect(() => validate(ext.content!, 'task')).toThrow(/rejects the export/)
    const ws = (await core.analyzeConversation(CHILD, path.join(realTasks, CHILD), { includeSequence: false })).metadata.workspace!
    const project = await core.exportProjectXml({ projectPath: ws, tasksDir: realTasks, schemaProfile: 'extended' })
    validate(project.content!, 'project', 'extended')
    expect(project.content).toMatch(/<conversation [^>]*createdAt=/)
    const conv = await core.exportConversationXml({ conversationId: PARENT, tasksDir: realTasks, maxDepth: 1, schemaProfile: 'extended' })
    validate(conv.content!, 'conversation', 'extended')
    expect(conv.content).toContain('omittedChildren="1"')
    await expect(core.exportTaskXml({ taskId: CHILD, tasksDir: realTasks, schemaProfile: 'xsd11' as 'seed' })).rejects.toThrow(
      /schemaProfile must be 'seed' or 'extended'/,
    )
  })

  it.skipIf(!sharedPresent)('exports a project summary whose counts add up', async () => {
    const r = await core.exportProjectXml({ projectPath: 'D:\\dev\\roo-extensions\\', tasksDir: realTasks })
    validate(r.content!, 'project')
    expect(r.content).toContain('<conversationCount>1</conversationCount>')
    expect(r.content).toContain('<totalTasks>2</totalTasks>')
    expect(r.content).toContain(`rootTaskId="${PARENT}"`)
    expect(r.content).toContain('taskCount="2"')
  })

  it.skipIf(!sharedPresent)('writes to a file inside the output root, atomically, and refuses to overwrite unless asked', async () => {
    const r = await core.exportConversationXml({
      conversationId: PARENT,
      tasksDir: realTasks,
      filePath: 'exports/real/pair.xml',
      outputRoot: outRoot,
      prettyPrint: false,
    })
    const file = path.join(fs.realpathSync(outRoot), 'exports', 'real', 'pair.xml')
    expect(r.filePath).toBe(file)
    expect(r.content).toBeUndefined()
    const xml = fs.readFileSync(file, 'utf8')
    expect(fs.statSync(file).size).toBe(r.bytes)
    validate(xml, 'conversation')
    expect(xml).not.toMatch(/\n\s+</)
    const again = core.exportConversationXml({ conversationId: PARENT, tasksDir: realTasks, filePath: 'exports/real/pair.xml', outputRoot: outRoot })
    expect(await code(again)).toBe('INVALID_PATH')
    await core.exportConversationXml({
      conversationId: PARENT,
      tasksDir: realTasks,
      filePath: 'exports/real/pair.xml',
      outputRoot: outRoot,
      overwrite: true,
    })
    expect(fs.readFileSync(file, 'utf8')).not.toBe(xml)
    validate(fs.readFileSync(file, 'utf8'), 'conversation')
    expect(fs.readdirSync(path.dirname(file))).toEqual(['pair.xml'])
  })

  it.skipIf(!sharedPresent)('rejects with stable codes', async () => {
    expect(await code(core.exportTaskXml({ taskId: 'nope', tasksDir: realTasks }))).toBe('TASK_NOT_FOUND')
    expect(await code(core.exportConversationXml({ conversationId: 'nope', tasksDir: realTasks }))).toBe('TASK_NOT_FOUND')
    expect(await code(core.exportTaskXml({ taskId: PARENT, tasksDir: '/no/such/dir' }))).toBe('INVALID_PATH')
    expect(await code(core.exportProjectXml({ projectPath: 'x', tasksDir: realTasks, startDate: 'soon' }))).toBe('INVALID_ARGUMENT')
    const saved = process.env.ROO_STATE_STORAGE
    delete process.env.ROO_STATE_STORAGE
    try {
      expect(await code(core.exportTaskXml({ taskId: PARENT }))).toBe('INVALID_PATH')
    } finally {
      if (saved !== undefined) process.env.ROO_STATE_STORAGE = saved
    }
  })
})

describe('path safety', () => {
  it.skipIf(!sharedPresent)('rejects at least 20 hostile paths and writes nothing anywhere', async () => {
    const base = fs.realpathSync(tempDir('roo-export-hostile-'))
    const root = path.join(base, 'root')
    const outside = path.join(base, 'outside')
    fs.mkdirSync(root)
    fs.mkdirSync(outside)
    fs.mkdirSync(path.join(root, 'existing-dir'))
    fs.writeFileSync(path.join(root, 'existing.xml'), 'keep me')
    fs.writeFileSync(path.join(outside, 'target.xml'), 'outside')
    fs.symlinkSync(outside, path.join(root, 'link'))
    fs.symlinkSync(path.join(outside, 'target.xml'), path.join(root, 'filelink.xml'))
    const listing = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
        const p = path.join(dir, e.name)
        const stat = fs.lstatSync(p)
        const line = `${path.relative(base, p)} ${stat.size} ${stat.mtimeMs}`
        return e.isDirectory() && !e.isSymbolicLink() ? [line, ...listing(p)] : [line]
      })
    const before = listing(base)
    const hostile: Array<[string, boolean?]> = [
      ['../escape.xml'],
      ['../../../../../../etc/passwd'],
      ['sub/../../escape.xml'],
      ['..\\escape.xml'],
      ['sub\\..\\..\\escape.xml'],
      ['/etc/passwd', true],
      [path.join(outside, 'abs.xml'), true],
      [`${root}/../outside/dotdot.xml`],
      [path.join(root, 'link', 'through-link.xml')],
      ['link/through-link.xml', true],
      ['filelink.xml', true],
      ['a\0b.xml'],
      ['CON'],
      ['nul.xml'],
      ['sub/COM1.txt'],
      ['LPT9'],
      ['C:escape.xml'],
      ['C:\\Windows\\escape.xml'],
      ['\\\\?\\C:\\escape.xml'],
      ['\\\\server\\share\\escape.xml'],
      ['//server/share/escape.xml'],
      ['file.xml:stream'],
      ['trailing-dot.xml.'],
      ['trailing-space.xml '],
      [''],
      ['.'],
      [root],
      ['existing.xml'],
      ['existing-dir', true],
      [`${'a'.repeat(300)}.xml`],
      ['new\nline.xml'],
      ['file:///etc/passwd'],
      ['wild*.xml'],
    ]
    expect(hostile.length).toBeGreaterThanOrEqual(20)
    for (const [filePath, overwrite] of hostile) {
      const p = core.exportTaskXml({ taskId: CHILD, tasksDir: realTasks, filePath, outputRoot: root, overwrite: overwrite ?? false })
      let err: { code?: string; message?: string } | undefined
      try {
        await p
      } catch (e) {
        err = e as { code?: string; message?: string }
      }
      expect(err?.code, `${JSON.stringify(filePath)} was accepted`).toBe('INVALID_PATH')
      expect(err?.message).toMatch(/refused|outside|not an existing|names no file/)
    }
    expect(listing(base)).toEqual(before)
    expect(fs.readFileSync(path.join(outside, 'target.xml'), 'utf8')).toBe('outside')
    expect(fs.readFileSync(path.join(root, 'existing.xml'), 'utf8')).toBe('keep me')
    // The same names are fine where they are harmless.
    const ok = await core.exportTaskXml({ taskId: CHILD, tasksDir: realTasks, filePath: `${root}/sub/./ok.xml`, outputRoot: root })
    expect(ok.filePath).toBe(path.join(root, 'sub', 'ok.xml'))
    validate(fs.readFileSync(ok.filePath!, 'utf8'), 'task')
    fs.rmSync(base, { recursive: true, force: true })
  })

  it.skipIf(!sharedPresent)('never writes into the task store it reads', async () => {
    const store = tempDir('roo-export-store-')
    fs.cpSync(path.join(realTasks, CHILD), path.join(store, CHILD), { recursive: true })
    const r = core.exportTaskXml({ taskId: CHILD, tasksDir: store, filePath: `${CHILD}/export.xml`, outputRoot: store })
    expect(await code(r)).toBe('INVALID_PATH')
    expect(fs.existsSync(path.join(store, CHILD, 'export.xml'))).toBe(false)
    fs.rmSync(store, { recursive: true, force: true })
  })
})

describe('configuration', () => {
  const file = () => path.join(configDir, 'xml_export_config.json')

  it('gets the defaults, sets a partial config (deep merge), resets', async () => {
    const got = await core.configureXmlExport({ action: 'get' })
    expect(got.from).toBe('defaults')
    expect(got.config.defaults).toMatchObject({ prettyPrint: true, includeContent: false, compression: 'none' })
    const set = await core.configureXmlExport({
      action: 'set',
      config: { defaults: { prettyPrint: false, contentPreviewLength: 20 }, filters: { recent: { startDate: 'now-7d' } } },
    })
    expect(set.config.defaults.prettyPrint).toBe(false)
    expect(set.config.defaults.includeContent).toBe(false)
    expect(set.path).toBe(file())
    const onDisk = JSON.parse(fs.readFileSync(file(), 'utf8'))
    expect(onDisk.defaults.contentPreviewLength).toBe(20)
    const again = await core.configureXmlExport({ action: 'get' })
    expect(again.from).toBe('file')
    expect(again.config).toEqual(set.config)
    const merged = await core.configureXmlExport({ action: 'set', config: { defaults: { includeContent: true, contentPreviewLength: null } } })
    expect(merged.config.defaults).toMatchObject({ prettyPrint: false, includeContent: true, contentPreviewLength: 100 })
    expect(merged.config.filters.recent).toEqual({ startDate: 'now-7d' })
    const reset = await core.configureXmlExport({ action: 'reset' })
    expect(reset.config).toEqual(got.config)
    expect((await core.configureXmlExport({ action: 'get' })).config).toEqual(got.config)
  })

  it('rejects an invalid config with a clear message and leaves the file unchanged', async () => {
    await core.configureXmlExport({ action: 'set', config: { defaults: { prettyPrint: false } } })
    const before = fs.readFileSync(file())
    const cases: Array<[unknown, RegExp]> = [
      [{ defaults: { prettyPrint: 'yes' } }, /config\.defaults\.prettyPrint must be true or false/],
      [{ defaults: { prettyprint: true } }, /config\.defaults\.prettyprint is not a setting/],
      [{ defaults: { compression: 'zip' } }, /compression.*not supported/],
      [{ defaults: { contentPreviewLength: -1 } }, /contentPreviewLength must be a whole number/],
      [{ defaults: { outputRoot: 'relative' } }, /outputRoot must be an absolute directory path/],
      [{ filters: { x: { startDate: 'yesterday' } } }, /config\.filters\.x\.startDate must be an ISO 8601 date/],
      [{ templates: { t: { fields: 'title' } } }, /config\.templates\.t\.fields must be an array/],
      [{ surprise: 1 }, /config\.surprise is not a setting/],
    ]
    for (const [config, message] of cases) {
      let err: { code?: string; message?: string } | undefined
      try {
        await core.configureXmlExport({ action: 'set', config: config as never })
      } catch (e) {
        err = e as { code?: string; message?: string }
      }
      expect(err?.code).toBe('INVALID_CONFIG')
      expect(err?.message).toMatch(message)
      expect(err?.message).toMatch(/not changed/)
      expect(fs.readFileSync(file())).toEqual(before)
    }
    expect(await code(core.configureXmlExport({ action: 'set' }))).toBe('INVALID_CONFIG')
    expect(await code(core.configureXmlExport({ action: 'delete' as never }))).toBe('INVALID_CONFIG')
    await core.configureXmlExport({ action: 'reset' })
  })

  it.skipIf(!sharedPresent)('feeds its defaults to the exports', async () => {
    const root = tempDir('roo-export-configured-root-')
    await core.configureXmlExport({
      action: 'set',
      config: { defaults: { prettyPrint: false, contentPreviewLength: 10, outputRoot: root }, filters: { future: { startDate: '2100-01-01' } } },
    })
    try {
      const r = await core.exportTaskXml({ taskId: CHILD, tasksDir: realTasks })
      validate(r.content!, 'task')
      expect(r.content!).not.toMatch(/\n\s+</)
      const previews = [...r.content!.matchAll(/<message [^>]*isTruncated="true">([^<]*)<\/message>/g)].map(m => m[1])
      expect(previews.length).toBeGreaterThan(0)
      for (const p of previews) expect(p.replace(/&[a-z]+;/g, '&').length).toBeLessThanOrEqual(13 + 1)
      const written = await core.exportTaskXml({ taskId: CHILD, tasksDir: realTasks, filePath: 'x.xml' })
      expect(written.filePath).toBe(path.join(fs.realpathSync(root), 'x.xml'))
      validate(fs.readFileSync(written.filePath!, 'utf8'), 'task')
      const filtered = await core.exportProjectXml({ projectPath: 'd:/dev/roo-extensions', tasksDir: realTasks, filter: 'future' })
      validate(filtered.content!, 'project')
      expect(filtered.conversations).toBe(0)
      expect(await code(core.exportProjectXml({ projectPath: 'd:/dev/roo-extensions', tasksDir: realTasks, filter: 'nope' }))).toBe('INVALID_ARGUMENT')
    } finally {
      await core.configureXmlExport({ action: 'reset' })
      fs.rmSync(root, { recursive: true, force: true })
    }
  })

  it.skipIf(!sharedPresent)('reports a damaged configuration file instead of failing exports', async () => {
    fs.writeFileSync(file(), '{ "defaults": ')
    const got = await core.configureXmlExport({ action: 'get' })
    expect(got.from).toBe('defaults')
    expect(got.warnings[0]).toMatch(/not valid JSON/)
    const r = await core.exportTaskXml({ taskId: CHILD, tasksDir: realTasks })
    validate(r.content!, 'task')
    expect(r.warnings[0]).toMatch(/not valid JSON/)
    expect(await code(core.configureXmlExport({ action: 'set', config: { defaults: { prettyPrint: false } } }))).toBe('INVALID_CONFIG')
    expect(fs.readFileSync(file(), 'utf8')).toBe('{ "defaults": ')
    await core.configureXmlExport({ action: 'reset' })
  })
})

describe.skipIf(!sharedPresent)('Markdown, JSON, CSV', () => {
  it('writes Markdown in the extension\'s export layout', async () => {
    const r = await core.exportConversationMarkdown({ conversationId: PARENT, tasksDir: realTasks })
    const md = r.content!
    expect(md.startsWith('# ')).toBe(true)
    expect(md).toContain('## Subtask: ')
    expect(md).toContain('**User:**')
    expect(md).toContain('**Assistant:**')
    expect(md).toMatch(/\[Tool Use: [a-z_]+\]/)
    expect(md).not.toContain('<environment_details>')
    expect(r.tasks).toBe(2)
    expect(md.indexOf(CHILD)).toBeGreaterThan(md.indexOf(PARENT))
  })

  it('writes JSON: the light tree and the full skeletons', async () => {
    const { skeletons } = await core.scanTasks(realTasks)
    const light = JSON.parse((await core.exportConversationJson({ conversationId: PARENT, tasksDir: realTasks })).content!)
    expect(light.format).toBe('roo-conversation-light')
    expect(light.root.taskId).toBe(PARENT)
    expect(light.root.children.map((c: { taskId: string }) => c.taskId)).toEqual([CHILD])
    expect(light.summary.totalTasks).toBe(2)
    expect(light.summary.totalMessages).toBe(skeletons.reduce((n, s) => n + s.metadata.messageCount, 0))
    const full = JSON.parse(
      (await core.exportConversationJson({ conversationId: PARENT, tasksDir: realTasks, variant: 'skeletons', prettyPrint: false })).content!,
    )
    expect(full.format).toBe('roo-conversation-skeletons')
    expect(full.skeletons.map((s: { taskId: string }) => s.taskId)).toEqual([PARENT, CHILD])
    expect(full.skeletons[1].parentTaskId).toBe(PARENT)
    for (const s of full.skeletons) {
      const h = skeletons.find(x => x.taskId === s.taskId)!
      expect(s.sequence.filter((i: { role?: string }) => i.role).length).toBe(h.metadata.messageCount)
    }
    expect(await code(core.exportConversationJson({ conversationId: PARENT, tasksDir: realTasks, variant: 'huge' as never }))).toBe('INVALID_ARGUMENT')
  })

  it('writes the task list as RFC 4180 CSV', async () => {
    const r = await core.exportTaskListCsv({ tasksDir: realTasks })
    const csv = r.content!
    const rows = parseCsv(csv)
    expect(rows[0][0]).toBe('taskId')
    expect(rows.length).toBe(3)
    const header = rows[0]
    const child = rows.find(row => row[0] === CHILD)!
    expect(child[header.indexOf('parentTaskId')]).toBe(PARENT)
    expect(child[header.indexOf('isCompleted')]).toMatch(/^(true|false)$/)
    expect(child[header.indexOf('messageCount')]).toMatch(/^\d+$/)
    for (const row of rows) expect(row.length).toBe(header.length)
  })
})

/** A strict RFC 4180 reader. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"'
        i++
      } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(cell)
      cell = ''
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell)
      rows.push(row)
      row = []
      cell = ''
      i++
    } else cell += c
  }
  if (cell || row.length) rows.push([...row, cell])
  return rows
}
