import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { repoRoot, isolatedEnv, tempDir } from './helpers'

// An agent drives `roo-state mcp`: every argument is untrusted. These are the attacks of issue 36,
// each run against a server whose only store is a copy of a fixture store: folders outside the
// stores are never read, moved or written; an export never replaces a file it did not write; a
// task id is never a path; destructive calls run dry without the user's --allow-writes.

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const fixture = path.join(repoRoot, 'fixtures', 'stores', 'history-item-v3.50', 'tasks')
const ROOT = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'

let work: string
let store: string
let project: string
let secret: string
const clients: Client[] = []

/** Every file under `dir` with the SHA-256 of its bytes (and every folder), sorted. */
function manifest(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      const rel = path.relative(dir, p)
      if (e.isDirectory()) {
        out.push(`${rel}/`)
        walk(p)
      } else {
        out.push(`${rel} ${crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`)
      }
    }
  }
  walk(dir)
  return out.sort()
}

function env(): Record<string, string> {
  return isolatedEnv(work)
}

async function connect(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', '--tasks-dir', store, ...args], env: env(), cwd: path.join(work, 'out'), stderr: 'pipe' })
  const c = new Client({ name: 'roo-state-attacker', version: '1.0.0' })
  await c.connect(transport)
  clients.push(c)
  return c
}

type Result = Awaited<ReturnType<Client['callTool']>>

function text(r: Result): string {
  return (r.content as Array<{ type: string; text: string }>)[0].text
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  return c.callTool({ name, arguments: args })
}

async function refused(c: Client, name: string, args: Record<string, unknown>, code: string): Promise<string> {
  const r = await call(c, name, args)
  expect(r.isError, `${name} ${JSON.stringify(args)} should be refused`).toBe(true)
  expect((r._meta as { code?: string } | undefined)?.code).toBe(code)
  return text(r)
}

let reader: Client
let writer: Client

beforeAll(async () => {
  work = tempDir('roo-state-confine-')
  store = path.join(work, 'storage', 'tasks')
  fs.cpSync(fixture, store, { recursive: true })
  fs.mkdirSync(path.join(work, 'out'), { recursive: true })
  // A project beside the store: source files, a folder that looks like a task, checkpoints.
  project = path.join(work, 'project')
  for (const [rel, body] of Object.entries({
    'src/main.rs': 'fn main() {}\n',
    'README.md': '# project\n',
    'notes/ui_messages.json': '[]',
    'notes/todo.txt': 'keep me',
    'build/checkpoints/data.bin': 'not a checkpoint of ours',
  })) {
    fs.mkdirSync(path.dirname(path.join(project, rel)), { recursive: true })
    fs.writeFileSync(path.join(project, rel), body)
  }
  // A task outside the stores.
  secret = path.join(work, 'secret')
  fs.cpSync(path.join(fixture, ROOT), path.join(secret, ROOT), { recursive: true })
  reader = await connect([])
  writer = await connect(['--allow-writes'])
})

afterAll(async () => {
  for (const c of clients) await c.close()
  fs.rmSync(work, { recursive: true, force: true })
})

describe('folders outside the stores', () => {
  it('cleanup, migrate and rebuild refuse a project folder and leave every file of it as it was', async () => {
    const before = manifest(project)
    for (const c of [reader, writer]) {
      await refused(c, 'cleanup_obsolete_checkpoints', { tasksDir: project, includeOther: false, olderThanDays: 0, keepLast: 0, dryRun: false }, 'INVALID_PATH')
      await refused(c, 'cleanup_obsolete_checkpoints', { tasksDir: project, includeOther: true, olderThanDays: 0, keepLast: 0, dryRun: false }, 'INVALID_ARGUMENT')
      await refused(c, 'migrate_tasks_dir', { from: project, to: path.join(work, 'moved'), dryRun: false }, 'INVALID_PATH')
      await refused(c, 'rebuild_roo_state_from_tasks', { tasksDir: project, regenerateExtensionIndex: true, dryRun: false }, 'INVALID_PATH')
      await refused(c, 'rebuild_roo_state_from_tasks', { source: project, regenerateExtensionIndex: true, dryRun: false }, 'INVALID_PATH')
      // Reads too: a folder outside the stores is not listed, diagnosed, indexed or cached.
      await refused(c, 'list_tasks', { tasksDir: project }, 'INVALID_PATH')
      await refused(c, 'diagnose_roo_state', { tasksDir: secret }, 'INVALID_PATH')
      await refused(c, 'build_skeleton_cache', { tasksDir: project }, 'INVALID_PATH')
      await refused(c, 'index_tasks', { tasksDir: project }, 'INVALID_PATH')
    }
    expect(manifest(project)).toEqual(before)
    expect(fs.existsSync(path.join(work, 'moved'))).toBe(false)
    expect(fs.existsSync(path.join(project, '_index.json'))).toBe(false)
  })

  it('the server\'s own store is accepted by its path, its storage folder or a way round', async () => {
    const direct = JSON.parse(text(await call(reader, 'list_tasks', { tasksDir: store })))
    expect(direct.total).toBe(4)
    const storage = JSON.parse(text(await call(reader, 'list_tasks', { tasksDir: path.dirname(store) })))
    expect(storage.total).toBe(4)
    const roundabout = JSON.parse(text(await call(reader, 'list_tasks', { tasksDir: path.join(project, '..', 'storage', 'tasks') })))
    expect(roundabout.total).toBe(4)
  })

  it('a task id is never a path', async () => {
    for (const taskId of [`../secret/${ROOT}`, `../../secret/${ROOT}`, path.join(secret, ROOT), `..\\secret\\${ROOT}`, '..']) {
      const why = await refused(reader, 'get_task_details', { taskId }, 'INVALID_ARGUMENT')
      expect(why).toContain('not a task id')
      await refused(reader, 'export_tasks_xml', { taskId }, 'INVALID_ARGUMENT')
      await refused(reader, 'view_conversation_tree', { taskId }, 'INVALID_ARGUMENT')
    }
    // The same id inside the store is found.
    const details = JSON.parse(text(await call(reader, 'get_task_details', { taskId: ROOT })))
    expect(details.taskId).toBe(ROOT)
  })
})

describe('destructive calls', () => {
  it('run dry without --allow-writes, and say so', async () => {
    fs.mkdirSync(path.join(store, ROOT, 'checkpoints'), { recursive: true })
    fs.writeFileSync(path.join(store, ROOT, 'checkpoints', 'HEAD'), 'ref: x')
    const before = manifest(store)
    const r = JSON.parse(text(await call(reader, 'cleanup_obsolete_checkpoints', { olderThanDays: 0, keepLast: 0, dryRun: false })))
    expect(r.dryRun).toBe(true)
    expect(r.notApplied).toContain('--allow-writes')
    const rebuilt = JSON.parse(text(await call(reader, 'rebuild_roo_state_from_tasks', { regenerateExtensionIndex: true, dryRun: false })))
    expect(rebuilt.dryRun).toBe(true)
    expect(rebuilt.notApplied).toContain('--allow-writes')
    expect(manifest(store)).toEqual(before)
  })

  it('apply with --allow-writes, in the store only', async () => {
    const r = JSON.parse(text(await call(writer, 'cleanup_obsolete_checkpoints', { olderThanDays: 0, keepLast: 0, dryRun: false })))
    expect(r.dryRun).toBe(false)
    expect(r.notApplied).toBeUndefined()
    expect(fs.existsSync(path.join(store, ROOT, 'checkpoints'))).toBe(false)
    expect(fs.existsSync(path.join(store, ROOT, 'ui_messages.json'))).toBe(true)
  })
})

describe('exports', () => {
  it('the output root and overwrite are the user\'s; a call replaces only a file it wrote', async () => {
    const outside = path.join(work, 'elsewhere')
    fs.mkdirSync(outside, { recursive: true })
    const victim = path.join(outside, 'existing.txt')
    fs.writeFileSync(victim, 'precious')
    const why = await refused(reader, 'configure_xml_export', { action: 'set', config: { defaults: { outputRoot: outside, overwrite: true } } }, 'INVALID_ARGUMENT')
    expect(why).toContain('defaults.outputRoot and defaults.overwrite')
    await refused(reader, 'configure_xml_export', { action: 'set', config: { defaults: { overwrite: true } } }, 'INVALID_ARGUMENT')
    const config = JSON.parse(text(await call(reader, 'configure_xml_export', { action: 'get' })))
    expect(config.config.defaults.outputRoot ?? null).toBe(null)
    expect(config.config.defaults.overwrite).toBe(false)
    await refused(reader, 'export_tasks_xml', { taskId: ROOT, filePath: victim }, 'INVALID_PATH')
    await refused(reader, 'export_tasks_xml', { taskId: ROOT, filePath: '../elsewhere/existing.txt' }, 'INVALID_PATH')
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious')

    // A file already in the output root is not replaced, even when the user's configuration says
    // overwrite (the user may; a call may not).
    const mine = path.join(work, 'out', 'existing.txt')
    fs.writeFileSync(mine, 'the user\'s')
    fs.mkdirSync(path.join(work, 'config'), { recursive: true })
    fs.writeFileSync(path.join(work, 'config', 'xml_export_config.json'), JSON.stringify({ defaults: { overwrite: true } }))
    await refused(reader, 'export_tasks_xml', { taskId: ROOT, filePath: 'existing.txt' }, 'INVALID_PATH')
    expect(fs.readFileSync(mine, 'utf8')).toBe('the user\'s')

    // A file the server wrote is written again.
    const first = JSON.parse(text(await call(reader, 'export_tasks_xml', { taskId: ROOT, filePath: 'task.xml' })))
    expect(fs.readFileSync(first.filePath, 'utf8')).toContain(ROOT)
    const again = await call(reader, 'export_tasks_xml', { taskId: ROOT, filePath: 'task.xml', includeContent: true })
    expect(again.isError).toBeFalsy()

    // reset from a call keeps the user's settings.
    const reset = JSON.parse(text(await call(reader, 'configure_xml_export', { action: 'reset' })))
    expect(reset.config.defaults.overwrite).toBe(true)
  })
})
