// The MCP server's stdio transport: newline-delimited JSON-RPC, as the protocol specifies, with a
// bounded line length that does not end the session. A message longer than the limit is skipped
// as it streams in (only its first and last few KiB are kept, to find its id) and answered with a
// JSON-RPC error naming the limit (when its id can be found; a notification gets no answer); the
// next message is served as usual.
//
// Every request that carries an id is answered, whatever else is wrong with it: a line that is
// not JSON (-32700, its id found in the text), a batch (-32600 for each request in it: MCP has
// no batches), a message without `"jsonrpc": "2.0"` or with members JSON-RPC does not define
// (-32600), params that are not an object (-32602), nesting deeper than MAX_DEPTH levels
// (-32602, before anything walks the value), params the server's own check refuses (-32602 with
// its one line: `checkParams`). A byte-order mark before a message is dropped. Each refused
// message is one line on stderr; a message without an id is not answered.
import process from 'node:process'
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'

/** Default limit of one incoming message: 10 MiB (ROO_STATE_MCP_MAX_MESSAGE_BYTES overrides it). */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024
const KEEP = 4096
/** Deepest nesting of arrays and objects a message may hold (tool arguments are a few levels). */
export const MAX_DEPTH = 64
const MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error'])

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

/** The id of a parsed message, when it has one JSON-RPC accepts (a string or a whole number). */
function idOf(value) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null
  const id = value.id
  return typeof id === 'string' || Number.isInteger(id) ? id : null
}

/** Whether `value` nests arrays and objects deeper than `max` levels (walked without recursion). */
export function deeperThan(value, max) {
  const stack = [[value, 1]]
  while (stack.length) {
    const [v, d] = stack.pop()
    if (!v || typeof v !== 'object') continue
    if (d > max) return true
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child && typeof child === 'object') stack.push([child, d + 1])
    }
  }
  return false
}

/** Why a parsed message is not JSON-RPC, and the error code of the answer. */
function whyRefused(value) {
  if (!value || typeof value !== 'object') return { code: -32600, why: 'a message must be a JSON object' }
  if (value.jsonrpc !== '2.0') return { code: -32600, why: 'the message lacks "jsonrpc": "2.0"' }
  const extra = Object.keys(value).filter((k) => !MEMBERS.has(k))
  if (extra.length) return { code: -32600, why: `members JSON-RPC does not define: ${extra.slice(0, 5).join(', ')}` }
  if (typeof value.method === 'string' && 'params' in value && (value.params === null || typeof value.params !== 'object' || Array.isArray(value.params))) {
    return { code: -32602, why: 'params must be an object' }
  }
  return { code: -32600, why: 'not a JSON-RPC request, notification or response' }
}

/**
 * Finds the top-level `"id"` member of a JSON object as its text streams by, without keeping the
 * text: for a message too long to keep, whose id may be anywhere in it.
 */
export class IdScanner {
  constructor() {
    this.depth = 0
    this.inString = false
    this.escaped = false
    /** The top-level key being read, or the one just read. */
    this.key = null
    this.keyText = ''
    /** After `"id":` at the top level: the value's text so far. */
    this.value = null
    this.found = null
  }

  feed(bytes) {
    for (let i = 0; i < bytes.length && this.found === null; i++) this._byte(bytes[i])
  }

  _byte(b) {
    if (this.value !== null) {
      const done = !this.inString && (b === 44 || b === 125) // , }
      if (done) {
        try {
          const v = JSON.parse(this.value)
          if (typeof v === 'string' || Number.isInteger(v)) this.found = v
        } catch {
          // not an id JSON-RPC accepts
        }
        this.value = null
      } else if (this.value.length < 256) {
        this.value += String.fromCharCode(b)
      }
    }
    if (this.inString) {
      if (this.escaped) this.escaped = false
      else if (b === 92) this.escaped = true
      else if (b === 34) {
        this.inString = false
        if (this.key === 'reading') this.key = this.keyText
      } else if (this.key === 'reading' && this.keyText.length < 8) this.keyText += String.fromCharCode(b)
      return
    }
    if (b === 34) {
      this.inString = true
      if (this.depth === 1 && this.key === 'expect') {
        this.key = 'reading'
        this.keyText = ''
      }
    } else if (b === 123 || b === 91) {
      this.depth++
      if (this.depth === 1 && b === 123) this.key = 'expect'
    } else if (b === 125 || b === 93) {
      this.depth--
    } else if (this.depth === 1 && b === 44) {
      this.key = 'expect'
    } else if (this.depth === 1 && b === 58 && this.key === 'id') {
      this.value = ''
      this.key = null
    }
  }
}

export class LineTransport {
  /**
   * @param {{stdin?: NodeJS.ReadableStream, stdout?: NodeJS.WritableStream, maxMessageBytes?: number, log?: (s: string) => void, checkParams?: (message: object) => string | null}} [opts]
   */
  constructor(opts = {}) {
    this._checkParams = opts.checkParams ?? (() => null)
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
    // The Transport interface's callbacks, set by the SDK's server when it connects.
    /** @type {((err: Error) => void) | undefined} */
    this.onerror = undefined
    /** @type {((message: object) => void) | undefined} */
    this.onmessage = undefined
    /** @type {(() => void) | undefined} */
    this.onclose = undefined
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
      this._skip.ids.feed(piece)
      return
    }
    if (this._size + piece.length > this._max) {
      const whole = Buffer.concat([...this._parts, piece])
      const ids = new IdScanner()
      ids.feed(whole)
      this._skip = { head: whole.subarray(0, KEEP), tail: whole.subarray(-KEEP), size: whole.length, ids }
      this._parts = []
      this._size = 0
      return
    }
    this._parts.push(piece)
    this._size += piece.length
  }

  _endLine() {
    if (this._skip) {
      const { head, tail, size, ids } = this._skip
      this._skip = null
      const id = ids.found ?? findId(head.toString('utf8'), tail.toString('utf8'))
      const what = `a message of ${size} bytes, more than this server's limit of ${this._max} bytes (ROO_STATE_MCP_MAX_MESSAGE_BYTES)`
      this._log(`refused ${what}${id === null ? ' (no id found: not answered)' : ''}`)
      if (id !== null) {
        this._reply(id, -32600, `the request is ${size} bytes, more than this server's limit of ${this._max} bytes (ROO_STATE_MCP_MAX_MESSAGE_BYTES); send a smaller request`)
      }
      return
    }
    const line = Buffer.concat(this._parts).toString('utf8').replace(/\r$/, '').replace(/^\uFEFF/, '')
    this._parts = []
    this._size = 0
    if (!line.trim()) return
    let value
    try {
      value = JSON.parse(line)
    } catch (err) {
      const first = String(err?.message ?? err).split('\n')[0].slice(0, 200)
      this._refuse(findId(line.slice(0, KEEP), line.slice(-KEEP)), -32700, `the line is not JSON (${first})`)
      return
    }
    this._dispatch(value)
  }

  _dispatch(value) {
    if (Array.isArray(value)) {
      const ids = value.map(idOf).filter((id) => id !== null)
      const why = 'a batch (an array of messages) is not accepted: send each message on a line of its own'
      this._log(`ignored a message that is not valid JSON-RPC: ${why}${ids.length ? '' : ' (no id: not answered)'}`)
      for (const id of ids) this._reply(id, -32600, why)
      return
    }
    if (deeperThan(value, MAX_DEPTH)) {
      this._refuse(idOf(value), -32602, `the message nests arrays or objects deeper than ${MAX_DEPTH} levels`)
      return
    }
    const parsed = JSONRPCMessageSchema.safeParse(value)
    if (parsed.success) {
      const why = this._checkParams(parsed.data)
      if (why) this._refuse(idOf(value), -32602, why)
      else this.onmessage?.(parsed.data)
      return
    }
    const { code, why } = whyRefused(value)
    // A response of the client's that does not check out is not answered.
    const isResponse = value && typeof value === 'object' && !('method' in value) && ('result' in value || 'error' in value)
    this._refuse(isResponse ? null : idOf(value), code, why)
  }

  /** One stderr line for a refused message, and an answer when it has an id. */
  _refuse(id, code, why) {
    this._log(`ignored a message that is not valid JSON-RPC: ${why}${id === null ? ' (no id: not answered)' : ''}`)
    if (id !== null) this._reply(id, code, why)
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
