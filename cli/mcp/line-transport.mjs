// The MCP server's stdio transport: newline-delimited JSON-RPC, as the protocol specifies, with a
// bounded line length that does not end the session. A message longer than the limit is skipped
// as it streams in (only its first and last few KiB are kept, to find its id) and answered with a
// JSON-RPC error naming the limit (when its id can be found; a notification gets no answer); the
// next message is served as usual. A line that is not JSON-RPC is reported to `onerror` and
// skipped, as the SDK's own transport does.
import process from 'node:process'
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'

/** Default limit of one incoming message: 10 MiB (ROO_STATE_MCP_MAX_MESSAGE_BYTES overrides it). */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024
const KEEP = 4096

function limitFromEnv() {
  const n = Number(process.env.ROO_STATE_MCP_MAX_MESSAGE_BYTES)
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : DEFAULT_MAX_MESSAGE_BYTES
}

/** The `id` of a JSON-RPC request from the start or the end of its text, when it can be seen. */
export function findId(head, tail) {
  const value = '("(?:[^"\\\\]|\\\\.)*"|-?\\d+)'
  // Clients put `id` last ({"method":…,"params":…,"jsonrpc":"2.0","id":7}) or first.
  const last = new RegExp(`"id"\\s*:\\s*${value}\\s*}\\s*$`).exec(tail)
  const first = new RegExp(`^\\s*{\\s*(?:"jsonrpc"\\s*:\\s*"2\\.0"\\s*,\\s*)?"id"\\s*:\\s*${value}`).exec(head)
  const m = last ?? first
  if (!m) return null
  try {
    return JSON.parse(m[1])
  } catch {
    return null
  }
}

export class LineTransport {
  /**
   * @param {{stdin?: NodeJS.ReadableStream, stdout?: NodeJS.WritableStream, maxMessageBytes?: number, log?: (s: string) => void}} [opts]
   */
  constructor(opts = {}) {
    this._stdin = opts.stdin ?? process.stdin
    this._stdout = opts.stdout ?? process.stdout
    this._max = opts.maxMessageBytes ?? limitFromEnv()
    this._log = opts.log ?? (() => {})
    /** Chunks of the current line, while it is within the limit. */
    this._parts = []
    this._size = 0
    /** While skipping an oversize line: its first and last bytes, and its length so far. */
    this._skip = null
    this._ondata = (chunk) => this._read(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
    this._onerror = (err) => this.onerror?.(err)
  }

  async start() {
    this._stdin.on('data', this._ondata)
    this._stdin.on('error', this._onerror)
  }

  _read(chunk) {
    let at = 0
    while (at < chunk.length) {
      const nl = chunk.indexOf(10, at)
      const piece = chunk.subarray(at, nl === -1 ? chunk.length : nl)
      this._take(piece)
      if (nl === -1) return
      this._endLine()
      at = nl + 1
    }
  }

  _take(piece) {
    if (!piece.length) return
    if (this._skip) {
      this._skip.size += piece.length
      this._skip.tail = Buffer.concat([this._skip.tail, piece]).subarray(-KEEP)
      return
    }
    if (this._size + piece.length > this._max) {
      const whole = Buffer.concat([...this._parts, piece])
      this._skip = { head: whole.subarray(0, KEEP), tail: whole.subarray(-KEEP), size: whole.length }
      this._parts = []
      this._size = 0
      return
    }
    this._parts.push(piece)
    this._size += piece.length
  }

  _endLine() {
    if (this._skip) {
      const { head, tail, size } = this._skip
      this._skip = null
      const id = findId(head.toString('utf8'), tail.toString('utf8'))
      const what = `a message of ${size} bytes, more than this server's limit of ${this._max} bytes (ROO_STATE_MCP_MAX_MESSAGE_BYTES)`
      this._log(`refused ${what}${id === null ? ' (no id found: not answered)' : ''}`)
      if (id !== null) {
        this._reply(id, -32600, `the request is ${size} bytes, more than this server's limit of ${this._max} bytes (ROO_STATE_MCP_MAX_MESSAGE_BYTES); send a smaller request`)
      }
      return
    }
    const line = Buffer.concat(this._parts).toString('utf8').replace(/\r$/, '')
    this._parts = []
    this._size = 0
    if (!line.trim()) return
    let parsed
    try {
      parsed = JSONRPCMessageSchema.parse(JSON.parse(line))
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)))
      return
    }
    this.onmessage?.(parsed)
  }

  _reply(id, code, message) {
    void this.send({ jsonrpc: '2.0', id, error: { code, message } })
  }

  send(message) {
    return new Promise((resolve) => {
      if (this._stdout.write(`${JSON.stringify(message)}\n`)) resolve()
      else this._stdout.once('drain', resolve)
    })
  }

  async close() {
    this._stdin.off('data', this._ondata)
    this._stdin.off('error', this._onerror)
    if (this._stdin.listenerCount('data') === 0) this._stdin.pause?.()
    this._parts = []
    this._skip = null
    this.onclose?.()
  }
}
