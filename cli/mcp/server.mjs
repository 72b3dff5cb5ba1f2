// `roo-state mcp`: the MCP server over stdio, with the official TypeScript SDK.
//
// Nothing but JSON-RPC goes to stdout: console output is sent to stderr before anything else runs,
// and log lines carry "INFO" (Roo Code shows other stderr lines as server errors). Tool inputs are
// zod schemas (./input.mjs), listed as JSON Schema and parsed by zod after the older spellings are
// translated (./aliases.mjs); failures come back as tool errors (isError) carrying a stable code. Long calls report `notifications/progress` when the client sent a progressToken,
// and the request's AbortSignal (fired by `notifications/cancelled`) goes to the binding.
import { createRequire } from 'node:module'
import process from 'node:process'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { LineTransport } from './line-transport.mjs'
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import { serveResources } from './resources.mjs'
import { call, has } from '../lib/binding.mjs'
import { describeError } from '../lib/errors.mjs'
import { internal, tools } from './tools.mjs'
import { currentSpelling, legacy } from './aliases.mjs'
import { inputOf, jsonSchemaOf, outputSchemaOf, parseInput } from './input.mjs'
import { ANSWER_CHARS } from './pages.mjs'

const require = createRequire(import.meta.url)
const pkg = require('../../package.json')

/** Answers longer than this are cut, with a note saying so (tools answer pages within it). */
export const MAX_OUTPUT = ANSWER_CHARS

function log(message) {
  process.stderr.write(`roo-state mcp INFO: ${message}\n`)
}

function cutText(text, max) {
  if (text.length <= max) return text
  const note = `\n\n[… answer cut at ${max} of ${text.length} characters; narrow the request or write to a file (filePath)]`
  return `${text.slice(0, Math.max(0, max - note.length))}${note}`
}

/**
 * JSON of `value` within `max` characters, always valid JSON: the largest arrays are shortened
 * (halved until it fits, whole elements kept), then the longest strings (cut in the middle of
 * nothing: `…` and how many characters were left out end them); each cut is listed under
 * `_truncated` with its path and lengths. What still does not fit is replaced by a note.
 */
export function fitJson(value, max) {
  let text = JSON.stringify(value)
  if (text.length <= max) return text
  const copy = JSON.parse(text)
  const cuts = new Map()
  const noted = () => (Array.isArray(copy) ? { items: copy, _truncated: [...cuts.values()] } : { ...copy, _truncated: [...cuts.values()] })
  /** The largest array (longer than one) or string (of more than 200 characters) under `copy`. */
  const largest = (kind) => {
    let best = null
    const stack = [[copy, '', null, null]]
    while (stack.length) {
      const [node, at, parent, key] = stack.pop()
      if (kind === 'array' && Array.isArray(node) && node.length > 1) {
        const size = JSON.stringify(node).length
        if (!best || size > best.size) best = { node, at, size }
      }
      if (kind === 'string' && typeof node === 'string' && node.length > 200 && (!best || node.length > best.size)) best = { parent, key, at, size: node.length }
      if (Array.isArray(node)) node.forEach((x, i) => stack.push([x, `${at}[${i}]`, node, i]))
      else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) stack.push([v, at ? `${at}.${k}` : k, node, k])
    }
    return best
  }
  for (let round = 0; round < 256 && text.length > max; round++) {
    const arr = largest('array')
    if (arr && arr.size > max / 8) {
      const total = cuts.get(arr.at)?.total ?? arr.node.length
      arr.node.length = Math.floor(arr.node.length / 2)
      cuts.set(arr.at, { path: arr.at || '(root)', kept: arr.node.length, total })
    } else {
      const str = largest('string')
      if (!str) break
      const s = str.parent[str.key]
      const total = cuts.get(str.at)?.total ?? s.length
      const keep = Math.floor(s.length / 2)
      str.parent[str.key] = `${s.slice(0, keep)}… [${total - keep} characters left out]`
      cuts.set(str.at, { path: str.at, kept: keep, total })
    }
    text = JSON.stringify(noted())
  }
  if (text.length <= max) return text
  return JSON.stringify({ _truncated: `the answer (${text.length} characters) could not be brought under ${max} characters; narrow the request or write to a file (filePath)` })
}

/** The requests this server serves, by method, with the SDK's schema of each. */
const REQUESTS = { initialize: InitializeRequestSchema, 'tools/list': ListToolsRequestSchema, 'tools/call': CallToolRequestSchema }

/**
 * Why the params of a request this server serves do not fit its method's schema, in one readable
 * line (`tools/call: params.name: …`), or null. Checked by the transport before the SDK sees the
 * request, so that a call whose `name` is a number is answered -32602 with this line instead of an
 * internal error carrying the whole validation report.
 */
export function paramsProblem(message) {
  const schema = REQUESTS[message?.method]
  if (!schema || !('id' in message)) return null
  const r = schema.safeParse(message)
  if (r.success) return null
  const issue = r.error.issues[0]
  const where = (issue?.path ?? []).map(String).join('.') || 'params'
  const what = String(issue?.message ?? 'does not fit').replace(/\s+/g, ' ').slice(0, 200)
  return `invalid params of ${message.method}: ${where}: ${what}`
}

/** A tool's result as MCP content. */
function toContent(out, max) {
  if (typeof out === 'string') return [{ type: 'text', text: cutText(out, max) }]
  if (out && typeof out === 'object' && Array.isArray(out.blocks)) return out.blocks.map((b) => ({ type: 'text', text: cutText(b, max) }))
  if (out && typeof out === 'object' && typeof out.text === 'string' && Object.keys(out).every((k) => k === 'text' || k === 'maxLength')) {
    return [{ type: 'text', text: cutText(out.text, out.maxLength ?? max) }]
  }
  return [{ type: 'text', text: fitJson(out, max) }]
}

/** A call whose arguments do not fit the tool's input. */
function invalid(name, via, problems) {
  return toolError({ code: 'INVALID_ARGUMENT', message: `Invalid arguments for ${name}${via}: ${problems.join('; ')}.` })
}

function toolError(err) {
  const e = describeError(err, 'mcp')
  const text = `${e.code}: ${e.message}${e.hint ? `\n${e.hint}` : ''}`
  return { isError: true, content: [{ type: 'text', text }], _meta: { code: e.code } }
}

/** Progress of one request as notifications: increasing, at most every 100 ms, and the last one. */
function progressSender(extra, token) {
  if (token === undefined || token === null) return undefined
  let last = -1
  let lastAt = 0
  const send = ({ done, total }) => {
    if (send.finished || extra.signal.aborted || done <= last) return
    const now = Date.now()
    if (done < total && now - lastAt < 100) return
    last = done
    lastAt = now
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: done, total } })
      .catch(() => {})
  }
  // Set when the request is answered: no notification may follow the answer.
  send.finished = false
  return send
}

/**
 * The server, not yet connected.
 * @param {{tasksDirs?: string[], cacheDir?: string, indexDir?: string, listLegacy?: boolean, cwd?: string, allowWrites?: boolean, migrateRoots?: string[]}} opts
 */
export function createServer(opts = {}) {
  const byName = new Map()
  for (const t of tools) byName.set(t.name, { kind: 'tool', tool: t, schema: inputOf(t.input) })
  for (const l of legacy) byName.set(l.name, { kind: 'legacy', alias: l })

  const listed = [
    ...tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: jsonSchemaOf(byName.get(t.name).schema),
      ...(t.output ? { outputSchema: outputSchemaOf(t.output) } : {}),
      annotations: t.annotations,
    })),
    // The legacy names stay callable; listed only when asked (the tool list stays small).
    ...(opts.listLegacy !== true
      ? []
      : legacy.filter((l) => l.listed).map((l) => ({ name: l.name, description: l.description, inputSchema: jsonSchemaOf(l.input) }))),
  ]

  // Tool calls name tasks by id only (never by path), tasks folders only among the server's
  // stores, and apply destructive changes only with the user's --allow-writes.
  const ctxBase = {
    sel: { tasksDirs: opts.tasksDirs, cwd: opts.cwd ?? process.cwd(), cacheDir: opts.cacheDir, idsOnly: true },
    server: { indexDir: opts.indexDir, embedder: undefined, allowWrites: Boolean(opts.allowWrites), migrateRoots: opts.migrateRoots ?? [] },
  }

  const server = new Server(
    { name: 'roo-state', title: 'roo-state (roo-state-core)', version: pkg.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Task history of Roo Code, Zoo Code, Cline and Kilo Code: the task tree with the evidence of each link (get_task_tree), a conversation\'s messages (view_conversation_tree), exports (export_*), search (index_tasks then search_tasks_semantic), and maintenance (diagnose_roo_state, rebuild_roo_state_from_tasks, cleanup_obsolete_checkpoints: dry runs unless dryRun is false and the server was started with --allow-writes). Tasks are named by id; tasksDir must be one of the server\'s stores.',
    },
  )

  server.onerror = (err) => log(`ignored a message that is not valid JSON-RPC: ${String(err?.message ?? err).split('\n')[0].slice(0, 300)}`)

  // Tools are served within an initialized session only.
  const initialized = () => server.getClientVersion() !== undefined
  const notInitialized = () => new McpError(ErrorCode.InvalidRequest, 'the session is not initialized: send initialize first')

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    if (!initialized()) throw notInitialized()
    return { tools: listed }
  })

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (!initialized()) throw notInitialized()
    const name = request.params.name
    const entry = byName.get(name)
    if (!entry) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${name}". Tools: ${listed.map((t) => t.name).join(', ')}.`)
    }
    const started = Date.now()
    const args = request.params.arguments ?? {}
    try {
      let target = entry
      let toolArgs = args
      let via = ''
      if (entry.kind === 'legacy') {
        const parsed = parseInput(entry.alias.input, args)
        if (!parsed.ok) return invalid(name, '', parsed.problems)
        const mapped = entry.alias.map(parsed.value)
        via = ` (as ${mapped.tool})`
        if (internal[mapped.tool]) {
          return { content: toContent(await internal[mapped.tool](mapped.args, { ...ctxBase }), MAX_OUTPUT) }
        }
        target = byName.get(mapped.tool)
        toolArgs = mapped.args
      }
      const parsed = parseInput(target.schema, currentSpelling(target.tool.name, toolArgs))
      if (!parsed.ok) return invalid(name, via, parsed.problems)
      const tool = target.tool
      toolArgs = parsed.value
      const onProgress = progressSender(extra, request.params._meta?.progressToken)
      try {
        const out = await tool.run(toolArgs, { ...ctxBase, io: { signal: extra.signal, onProgress } })
        // A tool with an output schema answers with the structured value (and its JSON as text).
        if (tool.output) return { content: toContent(out, MAX_OUTPUT), structuredContent: out }
        return { content: toContent(out, MAX_OUTPUT) }
      } finally {
        if (onProgress) onProgress.finished = true
      }
    } catch (err) {
      const e = describeError(err, 'mcp')
      if (extra.signal.aborted || e.code === 'ABORTED') log(`${name} cancelled (${e.code}) after ${Date.now() - started} ms`)
      else log(`${name} failed: ${e.code}: ${e.message}`)
      return toolError(err)
    }
  })

  serveResources(server, { ...ctxBase, io: {} }, initialized, notInitialized)
  return server
}

/** Run the server on stdin/stdout until the client goes away. */
export async function runServer(opts = {}) {
  // stdout belongs to the protocol.
  const toStderr = (...args) => process.stderr.write(`${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}\n`)
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
  console.warn = toStderr

  const server = createServer(opts)
  // Our line transport: an oversize message is answered with an error instead of ending the session.
  const transport = new LineTransport({ log, checkParams: paramsProblem })
  let closing = false
  const shutdown = async () => {
    if (closing) return
    closing = true
    try {
      await server.close()
    } catch {
      // already closed
    }
    if (has('closeSearchIndex')) call('closeSearchIndex')
    process.exit(0)
  }
  process.stdin.on('end', shutdown)
  process.stdin.on('close', shutdown)
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
  await server.connect(transport)
  const stores = opts.tasksDirs?.length ? opts.tasksDirs.join(', ') : process.env.ROO_STATE_STORAGE ? `ROO_STATE_STORAGE (${process.env.ROO_STATE_STORAGE})` : 'the stores found on this machine'
  log(`roo-state ${pkg.version} serving ${tools.length} tools over stdio; stores: ${stores}; destructive calls ${opts.allowWrites ? 'applied when asked (--allow-writes)' : 'run dry (no --allow-writes)'}`)
}
