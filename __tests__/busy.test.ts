import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { repoRoot, tempDir } from './helpers'

// The loser of a race for the search index gets the busy exit (6), not a failure (1).

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const store = path.join(repoRoot, 'fixtures', 'stores', 'history-item-v3.50', 'tasks')

let work: string
let env: Record<string, string>

beforeAll(() => {
  work = tempDir('roo-state-busy-')
  env = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('ROO_STATE_')) env[k] = v
  Object.assign(env, { HOME: path.join(work, 'home'), ROO_STATE_CACHE_DIR: path.join(work, 'cache'), ROO_STATE_CONFIG_DIR: path.join(work, 'config') })
})

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

describe('an index held open by `roo-state mcp`', () => {
  it('makes the command line\'s index and search exit 6 with INDEX_BUSY', async () => {
    const index = path.join(work, 'index')
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', '--tasks-dir', store, '--index-dir', index], env, cwd: work, stderr: 'pipe' })
    const client = new Client({ name: 'busy-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const indexed = await client.callTool({ name: 'index_tasks', arguments: {} })
      expect(indexed.isError).toBeFalsy()
      for (const args of [['index', '--embedder', 'none'], ['search', 'cache']]) {
        const r = spawnSync(process.execPath, [cli, ...args, '--tasks-dir', store, '--index-dir', index, '--json'], { env, cwd: work, encoding: 'utf8' })
        expect(r.status, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(6)
        expect(JSON.parse(r.stdout).error.code).toBe('INDEX_BUSY')
      }
    } finally {
      await client.close()
    }
    // Once the server is gone, the index is free.
    const r = spawnSync(process.execPath, [cli, 'search', 'cache', '--tasks-dir', store, '--index-dir', index, '--json'], { env, cwd: work, encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
  }, 60_000)
})
