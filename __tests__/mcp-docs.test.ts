// Every tool the MCP server lists has its row in docs/cli.md (a tool added without its line in
// the table fails here), and every tool row of that page is a tool the server has.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { repoRoot, tempDir } from './helpers'

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const store = path.join(repoRoot, 'fixtures', 'stores', 'roo-code-3.52', 'tasks')
let client: Client
let work: string

beforeAll(async () => {
  work = tempDir('mcp-docs')
  const env = { ...(process.env as Record<string, string>), ROO_STATE_CACHE_DIR: path.join(work, 'cache'), HOME: work }
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', '--tasks-dir', store, '--index-dir', path.join(work, 'index')], env, cwd: work, stderr: 'pipe' })
  client = new Client({ name: 'roo-state-docs-test', version: '1.0.0' })
  await client.connect(transport)
}, 60_000)

afterAll(async () => {
  await client?.close()
})

/** The tool names of the MCP tables of docs/cli.md: the first cell of each row, in backquotes. */
export function documentedTools(markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf('## The MCP server'))
  return [...section.matchAll(/^\| `([a-z][a-z0-9_]*)` \|/gm)].map((m) => m[1])
}

describe('the MCP tools in docs/cli.md', () => {
  it('every listed tool has its row, and every row is a tool', async () => {
    const { tools } = await client.listTools()
    const listed = tools.map((t) => t.name).sort()
    expect(listed.length).toBeGreaterThan(10)
    const documented = documentedTools(fs.readFileSync(path.join(repoRoot, 'docs', 'cli.md'), 'utf8'))
    expect(listed.filter((n) => !documented.includes(n))).toEqual([])
    // A documented row that names no tool: a removed or renamed one. Each must be callable.
    for (const name of documented.filter((n) => !listed.includes(n))) {
      const r = await client.callTool({ name, arguments: {} })
      const body = JSON.stringify(r.content)
      expect(body, name).not.toMatch(/unknown tool|not found: tool|Tool .* not found/i)
    }
  })

  it('reads the rows of a table', () => {
    const md = 'intro\n| `not_mcp` | x |\n## The MCP server\n| Tool | Arguments |\n|---|---|\n| `get_task_tree` | `x?` |\n| `Not a tool` | y |\n'
    expect(documentedTools(md)).toEqual(['get_task_tree'])
  })
})
