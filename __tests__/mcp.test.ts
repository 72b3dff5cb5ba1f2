import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { core, repoRoot, isolatedEnv, tempDir } from './helpers'
// @ts-expect-error an untyped JavaScript module of the CLI
import { argumentAliases, camelOf } from '../cli/mcp/aliases.mjs'
// @ts-expect-error an untyped JavaScript module of the CLI
import { foreignArguments } from '../cli/mcp/tracker-tools.mjs'

// `roo-state mcp` end to end: the server runs as a child process and the SDK's own Client drives
// it over stdio, as Roo Code, Zoo Code or Claude would.

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const fixtures = path.join(repoRoot, 'fixtures', 'stores')
const storeDir = (name: string) => path.join(fixtures, name, 'tasks')

const V350 = 'history-item-v3.50'
const ROOT = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'
const CHILD = '019cd6ce-5036-7f70-a11e-7f86d559ebe2'
const GRANDCHILD = '019cd6cf-3402-7119-95b7-f7d5c886c374'

const SEED_TOOLS = [
  'build_skeleton_cache',
  'get_task_tree',
  'view_conversation_tree',
  'export_tasks_xml',
  'export_conversation_xml',
  'export_project_xml',
  'configure_xml_export',
  'search_tasks_semantic',
  'index_tasks',
  'diagnose_roo_state',
  'rebuild_roo_state_from_tasks',
  'cleanup_obsolete_checkpoints',
]
const LEGACY_LISTED = ['conversation_browser', 'export_data', 'roosync_search', 'roosync_indexing', 'roosync_storage_management']

let work: string
let env: Record<string, string>
let client: Client
let stderr = ''

function serverEnv(): Record<string, string> {
  return {
    ...isolatedEnv(work),
    // The fixture stores are the stores "found on this machine": a tool's tasksDir may name them.
    ROO_STATE_STORAGE: [
      ...fs
        .readdirSync(fixtures)
        .map((n) => path.join(fixtures, n))
        .filter((d) => fs.existsSync(path.join(d, 'tasks'))),
      // The large store the progress tests make.
      path.join(work, 'big'),
    ].join(path.delimiter),
  }
}

async function connect(args: string[]): Promise<{ client: Client; transport: StdioClientTransport; log: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', ...args], env, cwd: work, stderr: 'pipe' })
  let log = ''
  transport.stderr?.on('data', (d) => {
    log += d.toString()
    stderr += d.toString()
  })
  const c = new Client({ name: 'roo-state-test', version: '1.0.0' })
  await c.connect(transport)
  return { client: c, transport, log: () => log }
}

type Result = Awaited<ReturnType<Client['callTool']>>

function text(r: Result, i = 0): string {
  const content = r.content as Array<{ type: string; text: string }>
  expect(content[i].type).toBe('text')
  return content[i].text
}

async function ok(name: string, args: Record<string, unknown> = {}): Promise<Result> {
  const r = await client.callTool({ name, arguments: args })
  if (r.isError) throw new Error(`${name} failed: ${text(r)}`)
  return r
}

async function okJson(name: string, args: Record<string, unknown> = {}): Promise<any> {
  return JSON.parse(text(await ok(name, args)))
}

async function fails(name: string, args: Record<string, unknown>, code: string): Promise<string> {
  const r = await client.callTool({ name, arguments: args })
  expect(r.isError, `${name} should fail with ${code}`).toBe(true)
  expect((r._meta as { code?: string } | undefined)?.code).toBe(code)
  expect(text(r).startsWith(`${code}: `)).toBe(true)
  return text(r)
}

async function waitFor(cond: () => boolean, what: string, ms = 20_000) {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

beforeAll(async () => {
  work = tempDir('roo-state-mcp-')
  env = serverEnv()
  ;({ client } = await connect(['--tasks-dir', storeDir(V350)]))
})

afterAll(async () => {
  await client?.close()
  fs.rmSync(work, { recursive: true, force: true })
})

describe('tools/list', () => {
  it('lists the seed tools, each with a JSON Schema, and not the legacy names', async () => {
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    for (const n of SEED_TOOLS) expect(names).toContain(n)
    for (const n of LEGACY_LISTED) expect(names).not.toContain(n)
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object')
      expect(typeof t.description).toBe('string')
      expect(t.description!.length).toBeGreaterThan(20)
    }
    const tree = tools.find((t) => t.name === 'get_task_tree')!
    expect(tree.annotations?.readOnlyHint).toBe(true)
    const cleanup = tools.find((t) => t.name === 'cleanup_obsolete_checkpoints')!
    expect(cleanup.annotations?.destructiveHint).toBe(true)
    const search = tools.find((t) => t.name === 'search_tasks_semantic')!
    expect(search.inputSchema.required).toEqual(['query'])
  })

  it('the legacy names stay callable, and --legacy lists them', async () => {
    const r = await client.callTool({ name: 'conversation_browser', arguments: { action: 'tree', conversation_id: ROOT } })
    expect(r.isError).toBeFalsy()
    const other = await connect(['--tasks-dir', storeDir(V350), '--legacy'])
    try {
      const { tools } = await other.client.listTools()
      for (const n of LEGACY_LISTED) expect(tools.map((t) => t.name)).toContain(n)
    } finally {
      await other.client.close()
    }
  })
})

describe('each seed tool on the fixtures', () => {
  it('build_skeleton_cache', async () => {
    const r = await okJson('build_skeleton_cache', { forceRebuild: true })
    expect(r.built).toBe(4)
    expect(r.stores[0].hierarchy.linksBySource).toMatchObject({ historyItem: 2, childIds: 1 })
    const again = await okJson('build_skeleton_cache', {})
    expect(again.reused).toBe(4)
  })

  it('get_task_tree (json, ascii-tree, markdown)', async () => {
    const data = await okJson('get_task_tree', { conversationId: GRANDCHILD.slice(0, 12) })
    expect(data.focus).toBe(GRANDCHILD)
    const root = data.stores[0].roots[0]
    expect(root.taskId).toBe(ROOT)
    expect(root.children.find((c: any) => c.taskId === CHILD).parentEvidence.source).toBe('history_item')
    const ascii = text(await ok('get_task_tree', { outputFormat: 'ascii-tree' }))
    expect(ascii).toContain('link: parent stored in history_item.json')
    expect(ascii).toContain("link: listed in the parent's childIds")
    const md = text(await ok('get_task_tree', { outputFormat: 'markdown', maxDepth: 0 }))
    expect(md).toContain(`\`${ROOT}\``)
    expect(md).not.toContain(CHILD)
    const stack = await okJson('get_task_tree', { tasksDir: storeDir('stack-era-v3.20') })
    expect(stack.stores[0].roots).toHaveLength(2)
  })

  it('view_conversation_tree (chain, single, cluster)', async () => {
    const chain = text(await ok('view_conversation_tree', { taskId: GRANDCHILD }))
    expect(chain).toContain('3 tasks')
    const headings = chain.split('\n').filter((l) => /^## \d\. /.test(l))
    expect(headings).toHaveLength(3)
    expect(headings[2]).toContain('◀')
    expect(chain.indexOf(`\n${ROOT}`)).toBeLessThan(chain.indexOf(`\n${GRANDCHILD}`))
    const single = text(await ok('view_conversation_tree', { taskId: GRANDCHILD, viewMode: 'single', detailLevel: 'full' }))
    expect(single).toContain('1 task')
    expect(single).toContain('readFile')
    const cluster = text(await ok('view_conversation_tree', { taskId: CHILD, viewMode: 'cluster' }))
    expect(cluster).toContain('3 tasks')
    const cut = text(await ok('view_conversation_tree', { taskId: ROOT, detailLevel: 'full', maxOutputLength: 1000 }))
    expect(cut).toContain('answer cut at 1000')
  })

  it('export_tasks_xml, export_conversation_xml, export_project_xml', async () => {
    const task = await ok('export_tasks_xml', { taskId: GRANDCHILD })
    expect(text(task)).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>/)
    expect(text(task)).toContain(`<task taskId="${GRANDCHILD}" parentTaskId="${CHILD}">`)
    expect(JSON.parse(text(task, 1)).format).toBe('xml')
    const conv = text(await ok('export_conversation_xml', { conversationId: ROOT, maxDepth: 2 }))
    expect(conv).toContain(`<conversation conversationId="${ROOT}"`)
    // The seed schemas (default) have no omittedChildren; the extended profile adds it.
    expect(conv).not.toContain('omittedChildren')
    const extended = text(await ok('export_conversation_xml', { conversationId: ROOT, maxDepth: 2, schemaProfile: 'extended' }))
    expect(extended).toContain('omittedChildren="1"')
    const project = text(await ok('export_project_xml', { projectPath: '/home/dev/projets/meteo-cli', prettyPrint: false }))
    expect(project).toContain('<projectExport><summary><projectPath>/home/dev/projets/meteo-cli</projectPath>')
    const written = await okJson('export_tasks_xml', { taskId: ROOT, filePath: 'out/root.xml' })
    expect(written.filePath).toBe(path.join(fs.realpathSync(work), 'out', 'root.xml'))
    expect(fs.readFileSync(written.filePath, 'utf8')).toContain(`taskId="${ROOT}"`)
    const escape = await fails('export_tasks_xml', { taskId: ROOT, filePath: '../escape.xml' }, 'INVALID_PATH')
    expect(escape).toContain('..')
  })

  it('configure_xml_export', async () => {
    const got = await okJson('configure_xml_export', { action: 'get' })
    expect(got.config.defaults.prettyPrint).toBe(true)
    const set = await okJson('configure_xml_export', { action: 'set', config: { defaults: { contentPreviewLength: 50 } } })
    expect(set.config.defaults.contentPreviewLength).toBe(50)
    await fails('configure_xml_export', { action: 'set', config: { defaults: { prettyPrint: 'yes' } } }, 'INVALID_CONFIG')
    await okJson('configure_xml_export', { action: 'reset' })
  })

  it('index_tasks then search_tasks_semantic', async () => {
    expect(await fails('search_tasks_semantic', { query: 'cache' }, 'NOT_INDEXED')).toContain('run index_tasks first')
    const progress: number[] = []
    const indexed = await client.callTool({ name: 'index_tasks', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) })
    expect(indexed.isError).toBeFalsy()
    const report = JSON.parse(text(indexed))
    expect(report.tasksSeen).toBe(4)
    expect(progress.length).toBeGreaterThan(0)
    const found = await okJson('search_tasks_semantic', { query: 'test_cache_expiry fuseau horaire', limit: 2 })
    expect(found.results.length).toBeGreaterThan(0)
    expect(found.results.map((r: any) => r.taskId)).toContain(GRANDCHILD)
    const dated = await okJson('search_tasks_semantic', { query: 'cache', dateRange: { startDate: '2030-01-01' } })
    expect(dated.results).toEqual([])
    // The legacy names: text search is lexical, diagnose is the index status.
    const legacyText = await okJson('roosync_search', { action: 'text', search_query: 'test_cache_expiry', max_results: 3, workspace: '*' })
    expect(legacyText.mode).toBe('lexical')
    expect(legacyText.results[0].taskId).toBe(GRANDCHILD)
    const status = await okJson('roosync_search', { action: 'diagnose' })
    expect(status.exists).toBe(true)
    expect(status.tasks).toBe(4)
    const again = await okJson('roosync_indexing', { action: 'index' })
    expect(again.tasksIndexed).toBe(0)
  })


  it('diagnose_roo_state', async () => {
    const r = await okJson('diagnose_roo_state', { recent: 2 })
    expect(['OK', 'WARNING']).toContain(r.status)
    expect(r.locations[0].recentTasks).toHaveLength(2)
  })

  it('rebuild_roo_state_from_tasks (dry run by default)', async () => {
    const r = await okJson('rebuild_roo_state_from_tasks', {})
    expect(r.dryRun).toBe(true)
    expect(r.tasks).toBe(4)
    expect(r.roots).toBe(1)
  })

  it('cleanup_obsolete_checkpoints (dry run by default)', async () => {
    const r = await okJson('cleanup_obsolete_checkpoints', { olderThanDays: 0, keepLast: 0 })
    expect(r.dryRun).toBe(true)
    expect(r.stores[0].tasksScanned).toBe(4)
  })

  it('the other capabilities: discover, list, details, markdown, json, csv, condense check', async () => {
    const found = await okJson('discover_roo_storage', { extraRoots: [path.join(fixtures, 'v2-wrapper')] })
    expect(found.locations.map((l: any) => l.tasksDir)).toContain(storeDir('v2-wrapper'))
    const list = await okJson('list_tasks', { workspace: 'meteo-cli', limit: 2 })
    expect(list.total).toBe(4)
    expect(list.tasks).toHaveLength(2)
    const details = await okJson('get_task_details', { taskId: CHILD })
    expect(details.parentTaskId).toBe(ROOT)
    expect(text(await ok('export_conversation_markdown', { conversationId: ROOT }))).toContain('**User:**')
    expect(JSON.parse(text(await ok('export_conversation_json', { conversationId: ROOT }))).format).toBe('roo-conversation-light')
    expect(text(await ok('export_task_list_csv', {}))).toMatch(/^taskId,/)
    const condense = await okJson('check_context_condense', { taskId: ROOT, contextWindow: 20000 })
    expect(condense.decision.action).toBe('summarize')
  })
})

describe('legacy names', () => {
  it('conversation_browser tree / view / list / current / rebuild', async () => {
    const tree = await okJson('conversation_browser', { action: 'tree', conversation_id: ROOT, max_depth: 5 })
    expect(tree.stores[0].roots[0].taskId).toBe(ROOT)
    const view = text(await ok('conversation_browser', { action: 'view', task_id: CHILD, view_mode: 'single' }))
    expect(view).toContain(CHILD)
    const list = await okJson('conversation_browser', { action: 'list', limit: 3 })
    expect(list.tasks).toHaveLength(3)
    const current = await okJson('conversation_browser', { action: 'current', workspace: '/home/dev/projets/meteo-cli' })
    expect(current.tasks[0].taskId).toBe(ROOT)
    const rebuilt = await okJson('conversation_browser', { action: 'rebuild' })
    expect(rebuilt.stores).toHaveLength(1)
    await fails('conversation_browser', { action: 'summarize', taskId: ROOT }, 'NOT_AVAILABLE')
  })

  it('export_data, task_export, export_config', async () => {
    expect(text(await ok('export_data', { target: 'task', format: 'xml', taskId: ROOT }))).toContain(`<task taskId="${ROOT}"`)
    expect(text(await ok('export_data', { target: 'conversation', format: 'markdown', conversationId: ROOT }))).toContain('**User:**')
    await fails('export_data', { target: 'project', format: 'markdown', projectPath: '/x' }, 'INVALID_ARGUMENT')
    expect(text(await ok('task_export', { action: 'markdown', conversation_id: ROOT }))).toContain('**Assistant:**')
    expect((await okJson('export_config', { action: 'get' })).config.defaults).toBeDefined()
  })

  it('roosync_storage_management, storage_info, maintenance, roosync_indexing rebuild', async () => {
    const detect = await okJson('roosync_storage_management', { action: 'storage', storageAction: 'detect' })
    expect(Array.isArray(detect.locations)).toBe(true)
    expect(Array.isArray((await okJson('storage_info', { action: 'stats' })).searched)).toBe(true)
    const cache = await okJson('maintenance', { action: 'cache_rebuild', force_rebuild: true })
    expect(cache.built).toBe(4)
    const rebuild = await okJson('roosync_indexing', { action: 'rebuild' })
    expect(rebuild.dryRun).toBe(true)
    expect(rebuild.extensionIndex).toBeTruthy()
    await fails('roosync_indexing', { action: 'reset' }, 'INVALID_ARGUMENT')
  })

  it('view_task_details, get_raw_conversation, the BOM tools, reset_qdrant_collection, export_conversation_csv', async () => {
    const viewed = text(await ok('view_task_details', { task_id: CHILD, action_index: 0 }))
    expect(viewed).toContain(CHILD)
    const raw = await okJson('get_raw_conversation', { taskId: CHILD })
    expect(raw.taskId).toBe(CHILD)
    expect(raw.sequence.length).toBeGreaterThan(0)
    expect(['OK', 'WARNING']).toContain((await okJson('diagnose_conversation_bom', {})).status)
    await fails('repair_conversation_bom', { dry_run: true }, 'NOT_AVAILABLE')
    await fails('reset_qdrant_collection', {}, 'INVALID_ARGUMENT')
    expect(text(await ok('export_conversation_csv', {}))).toMatch(/^taskId,/)
  })
})

describe('argument spellings', () => {
  it('tools list camelCase arguments only, and every declared old spelling names one of them', async () => {
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((t) => [t.name, t]))
    for (const t of tools) {
      if (LEGACY_LISTED.includes(t.name)) continue
      for (const arg of Object.keys(t.inputSchema.properties ?? {})) {
        // The other usage tracker's tools take its own spellings beside ours.
        if ((foreignArguments as Record<string, string[]>)[t.name]?.includes(arg)) continue
        expect(arg, `${t.name}.${arg}`).not.toContain('_')
      }
      expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, t.name).toBe(false)
    }
    for (const [tool, names] of Object.entries(argumentAliases as Record<string, string[]>)) {
      const props = (byName.get(tool)?.inputSchema.properties ?? {}) as Record<string, { properties?: Record<string, unknown> }>
      for (const old of names) {
        const [outer, inner] = old.split('.').map(p => camelOf(p) as string)
        expect(props[outer], `${tool}: ${old}`).toBeDefined()
        if (inner) expect(props[outer].properties?.[inner], `${tool}: ${old}`).toBeDefined()
      }
    }
  })

  it('the old snake_case spellings still work and give the same answers', async () => {
    expect(await okJson('get_task_tree', { conversation_id: CHILD, max_depth: 1, tasks_dir: storeDir(V350) })).toEqual(
      await okJson('get_task_tree', { conversationId: CHILD, maxDepth: 1, tasksDir: storeDir(V350) }),
    )
    expect(text(await ok('view_conversation_tree', { task_id: CHILD, view_mode: 'single', detail_level: 'full' }))).toBe(
      text(await ok('view_conversation_tree', { taskId: CHILD, viewMode: 'single', detailLevel: 'full' })),
    )
    expect((await okJson('get_task_details', { task_id: CHILD, include_sequence: true })).sequence.length).toBeGreaterThan(0)
    expect((await okJson('cleanup_obsolete_checkpoints', { older_than_days: 0, keep_last: 0, dry_run: true })).dryRun).toBe(true)
    const dated = await okJson('search_tasks_semantic', { query: 'cache', date_range: { start_date: '2030-01-01' } })
    expect(dated.results).toEqual([])
    // Both spellings of one argument must agree.
    expect(await okJson('get_task_tree', { conversation_id: ROOT, conversationId: ROOT })).toBeTruthy()
    const both = await fails('get_task_tree', { conversation_id: ROOT, conversationId: CHILD }, 'INVALID_ARGUMENT')
    expect(both).toContain('conversationId')
    // An old spelling of a wrong type is reported under the current name.
    expect(await fails('get_task_tree', { max_depth: 'deep' }, 'INVALID_ARGUMENT')).toContain('maxDepth')
    // A spelling no tool ever had is refused.
    expect(await fails('get_task_tree', { conversationid: ROOT }, 'INVALID_ARGUMENT')).toContain('conversationid is not an argument')
  })
})

describe('workspace comparison', () => {
  it('is the core key (normalizeWorkspace), with a bare folder name matching the last folder', async () => {
    expect(core.normalizeWorkspace('\\\\?\\D:\\Dev\\Shop\\')).toBe('d:/dev/shop')
    expect(core.workspaceMatches('d:/dev/shop', '\\\\?\\D:\\Dev\\Shop\\')).toBe(true)
    expect(core.workspaceMatches('d:/dev/shop', 'file:///d:/dev//shop/')).toBe(true)
    expect(core.workspaceMatches('/home/me/shop', '  /home/me/shop ')).toBe(true)
    expect(core.workspaceMatches('/home/me/shop', 'Shop')).toBe(true)
    expect(core.workspaceMatches('/home/me/shop', 'shop2')).toBe(false)
    expect(core.workspaceMatches('/home/me/shop', '/home/me')).toBe(false)
    // list_tasks filters with it: a doubled separator and a trailing one name the same workspace.
    expect((await okJson('list_tasks', { workspace: '/home/dev//projets/meteo-cli/' })).total).toBe(4)
    expect((await okJson('list_tasks', { workspace: '/home/dev/projets' })).total).toBe(0)
  })
})

describe('errors', () => {
  it('a malformed call is answered with an error and the server goes on serving', async () => {
    const wrongType = await fails('get_task_tree', { maxDepth: 'deep' }, 'INVALID_ARGUMENT')
    expect(wrongType).toContain('maxDepth')
    const missing = await fails('export_tasks_xml', {}, 'INVALID_ARGUMENT')
    expect(missing).toContain('taskId is required')
    const unknownArg = await fails('diagnose_roo_state', { verbose: true }, 'INVALID_ARGUMENT')
    expect(unknownArg).toContain('verbose')
    const badEnum = await fails('view_conversation_tree', { taskId: ROOT, viewMode: 'galaxy' }, 'INVALID_ARGUMENT')
    expect(badEnum).toContain('"chain"')
    await fails('get_task_tree', { conversationId: 'no-such-task' }, 'TASK_NOT_FOUND')
    await fails('get_task_tree', { tasksDir: path.join(work, 'nowhere') }, 'INVALID_PATH')
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool "no_such_tool"/)
    const still = await okJson('get_task_tree', {})
    expect(still.stores[0].tasks).toBe(4)
  })

  it('garbage on stdin is ignored and stdout carries nothing but JSON-RPC', async () => {
    const child = spawn(process.execPath, [cli, 'mcp', '--tasks-dir', storeDir(V350)], { env, cwd: work, stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d.toString()))
    child.stderr.on('data', (d) => (err += d.toString()))
    const send = (m: unknown) => child.stdin.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`)
    send('this is not json {')
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } })
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ')
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_task_tree', arguments: { max_depth: 'deep' } } })
    send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_task_tree', arguments: { outputFormat: 'ascii-tree' } } })
    try {
      await waitFor(() => out.includes('"id":4'), 'the answer to request 4')
    } finally {
      child.stdin.end()
    }
    await new Promise((r) => child.once('exit', r))
    const messages = out.trim().split('\n').map((l) => JSON.parse(l))
    for (const m of messages) expect(m.jsonrpc).toBe('2.0')
    const byId = new Map(messages.map((m) => [m.id, m]))
    expect(byId.get(1).result.serverInfo.name).toBe('roo-state')
    // A cut line whose id can be read is answered with a parse error.
    expect(byId.get(2).error.code).toBe(-32700)
    expect(byId.get(3).result.isError).toBe(true)
    expect(byId.get(4).result.content[0].text).toContain(ROOT)
    // Roo Code reports standard-error lines without INFO as server errors: ours all carry it.
    const ours = err.split('\n').filter((l) => l.startsWith('roo-state'))
    expect(ours.length).toBeGreaterThan(0)
    for (const line of ours) expect(line).toContain(' INFO: ')
    expect(err).toContain('ignored a message that is not valid JSON-RPC')
  })
})

describe('progress and cancellation', () => {
  let big: string
  const N = 1500

  beforeAll(() => {
    // A store big enough that a forced cache build takes a while: copies of fixture tasks.
    big = path.join(work, 'big', 'tasks')
    fs.mkdirSync(big, { recursive: true })
    const sources = ['stack-era-v3.20', 'native-tools-v3.45', 'claude-dev-2024'].flatMap((s) =>
      fs.readdirSync(storeDir(s)).filter((n) => !n.startsWith('_')).map((n) => path.join(storeDir(s), n)),
    )
    for (let i = 0; i < N; i++) fs.cpSync(sources[i % sources.length], path.join(big, crypto.randomUUID()), { recursive: true })
  })

  it('a long call reports progress notifications', async () => {
    const seen: Array<{ progress: number; total?: number }> = []
    const r = await client.callTool({ name: 'build_skeleton_cache', arguments: { tasksDir: big } }, undefined, {
      onprogress: (p) => seen.push(p),
      timeout: 600_000,
    })
    expect(r.isError).toBeFalsy()
    const report = JSON.parse(text(r))
    expect(report.built).toBe(N)
    // Answers stay within 300 000 characters and stay JSON: long lists are shortened and say so.
    expect(text(r).length).toBeLessThanOrEqual(300_000)
    if (report._truncated) expect(report._truncated[0].total).toBeGreaterThan(report._truncated[0].kept)
    expect(seen.length).toBeGreaterThan(0)
    for (const p of seen) expect(p.total).toBe(N)
    for (let i = 1; i < seen.length; i++) expect(seen[i].progress).toBeGreaterThan(seen[i - 1].progress)
    expect(seen[seen.length - 1].progress).toBeLessThanOrEqual(N)
  })

  it('a cancelled call stops in the binding and the server goes on serving', async () => {
    const controller = new AbortController()
    let notified = 0
    const call = client.callTool({ name: 'build_skeleton_cache', arguments: { tasksDir: big, forceRebuild: true } }, undefined, {
      signal: controller.signal,
      timeout: 600_000,
      onprogress: () => {
        notified++
        controller.abort('the test cancels')
      },
    })
    await expect(call).rejects.toThrow()
    expect(notified).toBeGreaterThan(0)
    // The binding rejected with ABORTED (a call that ran to its end would not be logged).
    await waitFor(() => /build_skeleton_cache cancelled \(ABORTED\)/.test(stderr), 'the cancellation in the server log')
    const still = await okJson('get_task_tree', { conversationId: ROOT })
    expect(still.stores[0].roots[0].taskId).toBe(ROOT)
  })
})

describe('a message over the size limit', () => {
  it('an 11 MiB request is answered with an error naming the limit, and the next request is served', async () => {
    const { client: c, log } = await connect(['--tasks-dir', storeDir(V350)])
    try {
      const huge = 'x'.repeat(11 * 1024 * 1024)
      await expect(c.callTool({ name: 'get_task_tree', arguments: { conversationId: huge } })).rejects.toThrow(
        /more than this server's limit of 10485760 bytes/,
      )
      const after = await c.callTool({ name: 'get_task_tree', arguments: {} })
      expect(after.isError).toBeFalsy()
      expect(JSON.parse((after.content as Array<{ text: string }>)[0].text).stores[0].tasks).toBe(4)
      expect(log()).toContain('refused a message of')
    } finally {
      await c.close()
    }
  }, 60_000)
})
