import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import path from 'node:path'
import { repoRoot, tempDir } from './helpers'
import fs from 'node:fs'

// The hostile messages of issue 36, sent raw to `roo-state mcp`: every request with a readable id
// is answered (with -32700, -32600 or -32602), tools are refused before initialize, each bad
// message is one line on stderr, and deep nesting is refused before anything walks it.

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const store = path.join(repoRoot, 'fixtures', 'stores', 'history-item-v3.50', 'tasks')

let work: string

beforeAll(() => {
  work = tempDir('roo-state-mcp-raw-')
})

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

interface Session {
  child: ChildProcessWithoutNullStreams
  send: (m: unknown) => void
  sendRaw: (s: string) => void
  answer: (id: unknown) => Promise<any>
  stderr: () => string
  close: () => Promise<void>
}

function session(): Session {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('ROO_STATE_')) env[k] = v
  Object.assign(env, {
    HOME: path.join(work, 'home'),
    ROO_STATE_CACHE_DIR: path.join(work, 'cache'),
    ROO_STATE_CONFIG_DIR: path.join(work, 'config'),
    ROO_STATE_DATA_DIR: path.join(work, 'data'),
    ROO_STATE_MCP_MAX_MESSAGE_BYTES: String(256 * 1024),
  })
  const child = spawn(process.execPath, [cli, 'mcp', '--tasks-dir', store], { env, cwd: work, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  const answers = new Map<string, any>()
  child.stdout.on('data', (d) => {
    out += d.toString()
    let nl
    while ((nl = out.indexOf('\n')) !== -1) {
      const line = out.slice(0, nl)
      out = out.slice(nl + 1)
      const m = JSON.parse(line)
      if ('id' in m) answers.set(JSON.stringify(m.id), m)
    }
  })
  child.stderr.on('data', (d) => (err += d.toString()))
  const sendRaw = (s: string) => child.stdin.write(`${s}\n`)
  return {
    child,
    sendRaw,
    send: (m) => sendRaw(JSON.stringify(m)),
    async answer(id) {
      const key = JSON.stringify(id)
      for (let i = 0; i < 600 && !answers.has(key); i++) await new Promise((r) => setTimeout(r, 50))
      if (!answers.has(key)) throw new Error(`no answer to id ${key}; stderr:\n${err}`)
      return answers.get(key)
    },
    stderr: () => err,
    async close() {
      child.stdin.end()
      await new Promise((r) => child.once('exit', r))
    },
  }
}

const init = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } })
const call = (id: unknown, args: unknown = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_tasks', arguments: args } })

describe('before initialize', () => {
  it('tools are refused until the session is initialized', async () => {
    const s = session()
    try {
      s.send(call(1))
      expect((await s.answer(1)).error.code).toBe(-32600)
      s.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
      expect((await s.answer(2)).error.message).toContain('initialize')
      s.send(init(3))
      expect((await s.answer(3)).result.serverInfo.name).toBe('roo-state')
      s.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      s.send(call(4))
      expect((await s.answer(4)).result.isError).toBeFalsy()
    } finally {
      await s.close()
    }
  })
})

describe('hostile messages', () => {
  it('every request with a readable id is answered, each bad message is one stderr line', async () => {
    const s = session()
    try {
      s.send(init(0))
      await s.answer(0)
      s.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      const before = s.stderr().split('\n').length
      // No "jsonrpc".
      s.send({ id: 10, method: 'tools/call', params: { name: 'list_tasks', arguments: {} } })
      // Params a string, params null.
      s.send({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: 'list_tasks' })
      s.send({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: null })
      // A batch.
      s.sendRaw(JSON.stringify([call(13), call(14)]))
      // A byte-order mark before the message: served.
      s.sendRaw(`\uFEFF${JSON.stringify(call(15))}`)
      // An extra top-level member.
      s.send({ ...call(16), extra: true })
      // Over the size limit, the id in the middle.
      s.sendRaw(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_tasks","arguments":{"workspace":"${'a'.repeat(150_000)}"}},"id":17,"pad":"${'b'.repeat(150_000)}"}`)
      // Not JSON, the id readable.
      s.sendRaw('{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{')
      // Nested 100 000 deep.
      s.sendRaw(`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"list_tasks","arguments":{"workspace":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`)
      // No id: not answered, still one line.
      s.send({ method: 'tools/call' })

      expect((await s.answer(10)).error.code).toBe(-32600)
      expect((await s.answer(11)).error.code).toBe(-32602)
      expect((await s.answer(12)).error.code).toBe(-32602)
      expect((await s.answer(13)).error.code).toBe(-32600)
      expect((await s.answer(14)).error.code).toBe(-32600)
      expect((await s.answer(15)).result.isError).toBeFalsy()
      expect((await s.answer(16)).error.code).toBe(-32600)
      expect((await s.answer(17)).error.code).toBe(-32600)
      expect((await s.answer(18)).error.code).toBe(-32700)
      const deep = await s.answer(19)
      expect(deep.error.code).toBe(-32602)
      expect(deep.error.message).toContain('deeper than')
      // The server still serves.
      s.send(call(20))
      expect((await s.answer(20)).result.isError).toBeFalsy()
      const lines = s.stderr().split('\n').slice(before - 1).filter((l) => l.includes('not valid JSON-RPC') || l.includes('refused a message'))
      // Nine bad messages (the batch counts once), one line each.
      expect(lines.length).toBe(9)
      for (const l of s.stderr().split('\n').filter(Boolean)) expect(l).toContain(' INFO: ')
    } finally {
      await s.close()
    }
  }, 60_000)
})

describe('params that do not fit the protocol', () => {
  it('are answered -32602 with one readable line, and the server goes on serving', async () => {
    const s = session()
    try {
      s.send(init(0))
      await s.answer(0)
      s.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      s.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 42, arguments: {} } })
      s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_tasks', arguments: 'x' } })
      s.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { arguments: {} } })
      for (const [id, where] of [[1, 'params.name'], [2, 'params.arguments'], [3, 'params.name']] as const) {
        const e = (await s.answer(id)).error
        expect(e.code).toBe(-32602)
        expect(e.message).toContain(`invalid params of tools/call: ${where}: `)
        expect(e.message).not.toContain('\n')
        expect(e.message.length).toBeLessThan(300)
      }
      s.send(call(4))
      expect((await s.answer(4)).result.isError).toBeFalsy()
    } finally {
      await s.close()
    }
  }, 60_000)
})

describe('answers cut to the limit', () => {
  it('stay valid JSON whatever they hold: whole elements first, then the longest strings', async () => {
    // @ts-expect-error an untyped JavaScript module of the CLI
    const { fitJson } = await import('../cli/mcp/server.mjs')
    // One match whose title is 2 MB (nothing to halve but the string), and 10 000 large matches.
    const huge = fitJson({ matches: [{ title: 't'.repeat(2_000_000), line: 'x' }], truncated: false }, 300_000)
    const h = JSON.parse(huge)
    expect(huge.length).toBeLessThanOrEqual(300_000)
    expect(h.matches[0].title).toMatch(/characters left out\]$/)
    expect(h._truncated[0].path).toBe('matches[0].title')
    const many = fitJson({ matches: Array.from({ length: 10_000 }, (_, i) => ({ id: i, line: 'y'.repeat(600), before: Array(20).fill('z'.repeat(600)) })) }, 300_000)
    const m = JSON.parse(many)
    expect(many.length).toBeLessThanOrEqual(300_000)
    expect(m._truncated[0]).toEqual({ path: 'matches', kept: m.matches.length, total: 10_000 })
    expect(m.matches[0].before).toHaveLength(20)
  })
})
