import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { repoRoot, tempDir } from './helpers'

// A task folder whose name is not UTF-8 (bytes a Latin-1 system wrote): listed with U+FFFD in its
// id, named by a diagnostic, and opened by its own bytes by show and export alike.

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const source = path.join(repoRoot, 'fixtures', 'stores', 'history-item-v3.50', 'tasks', '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6')

let work: string
let tasks: string
const env: Record<string, string> = {}

beforeAll(() => {
  work = tempDir('roo-state-names-')
  tasks = path.join(work, 'tasks')
  fs.mkdirSync(tasks)
  // "019b-café" with é as the single Latin-1 byte 0xE9.
  const raw = Buffer.concat([Buffer.from(tasks + path.sep), Buffer.from('019b-caf'), Buffer.from([0xe9])])
  fs.mkdirSync(raw)
  for (const f of fs.readdirSync(source)) {
    if (!fs.statSync(path.join(source, f)).isFile()) continue
    const to = Buffer.concat([raw, Buffer.from(path.sep + f)])
    fs.writeFileSync(to, fs.readFileSync(path.join(source, f)))
  }
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('ROO_STATE_')) env[k] = v
  Object.assign(env, { HOME: path.join(work, 'home'), ROO_STATE_CACHE_DIR: path.join(work, 'roo-cache'), ROO_STATE_CONFIG_DIR: path.join(work, 'config') })
})

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

function run(args: string[]) {
  return spawnSync(process.execPath, [cli, ...args, '--tasks-dir', tasks, '--json'], { env, cwd: work, encoding: 'utf8' })
}

describe('a folder name that is not UTF-8', () => {
  it('is listed, shown and exported by its bytes', () => {
    const tree = run(['tree'])
    expect(tree.status, tree.stderr).toBe(0)
    const store = JSON.parse(tree.stdout).stores[0]
    expect(store.tasks).toBe(1)
    const id = store.roots[0].taskId
    expect(id).toBe('019b-caf\uFFFD')
    const show = run(['show', '019b'])
    expect(show.status, show.stderr).toBe(0)
    expect(JSON.parse(show.stdout).skeleton.metadata.messageCount).toBeGreaterThan(0)
    const exported = run(['export', 'xml', '019b'])
    expect(exported.status, exported.stderr).toBe(0)
    expect(exported.stdout).toContain('019b-caf')
  })
})
