// `roo-state serve`: a read-only web view of the task stores, served from this process.
//
// Bound to a loopback address only; every request must carry the random token of the URL printed
// at start (`/<token>/…`), else 403. Only GET and HEAD. A URL never names a file: task ids are
// looked up in the task store handles (which hold the folders), the stylesheet is the one file of
// this folder the server knows by name. Pages are HTML rendered here (views.mjs) from the same
// data the JSON endpoints return (data.mjs).
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { RooStateError } from '../lib/errors.mjs'
import { HttpError, ServeData } from './data.mjs'
import * as views from './views.mjs'
import { usageOptions, usagePage, usageQuery } from './usage-view.mjs'
import { HOST_SOURCES } from '../lib/registry.generated.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const STYLESHEET = fs.readFileSync(path.join(here, 'static', 'app.css'))

/** Whether `host` is a literal loopback address (127.0.0.0/8 or ::1): the only ones served on. */
export function isLoopback(host) {
  if (typeof host !== 'string') return false
  if (net.isIPv4(host)) return host.split('.')[0] === '127'
  if (net.isIPv6(host)) return host === '::1' || /^(0{0,4}:){7}0{0,3}1$/.test(host)
  return false
}

const SECURITY_HEADERS = {
  // Nothing runs on these pages: no script at all, styles from our one stylesheet.
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
}

/**
 * The path of a request, split into segments after the token, or an HttpError: anything that is
 * not plain (encoded slashes or backslashes, NUL, control characters, `.`/`..` segments, a
 * malformed escape) is refused before routing.
 */
export function parsePath(rawUrl) {
  const q = rawUrl.indexOf('?')
  const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q)
  const query = new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1))
  if (!rawPath.startsWith('/') || rawPath.startsWith('//')) throw new HttpError(400, 'bad path')
  if (/%(2f|5c|00)|\\|[\u0000-\u001f\u007f]/i.test(rawPath)) throw new HttpError(400, 'bad path')
  const segments = []
  for (const raw of rawPath.slice(1).split('/')) {
    let s
    try {
      s = decodeURIComponent(raw)
    } catch {
      throw new HttpError(400, 'bad escape')
    }
    if (s === '.' || s === '..' || /[\u0000-\u001f\u007f/\\]/.test(s)) throw new HttpError(400, 'bad path')
    segments.push(s)
  }
  for (const [k, v] of query) {
    if (k.includes('\u0000') || v.includes('\u0000')) throw new HttpError(400, 'bad query')
  }
  return { segments, query }
}

function sameToken(given, token) {
  const a = Buffer.from(String(given))
  const b = Buffer.from(token)
  return a.length === b.length && crypto.timingSafeEqual(a, b)
}

/**
 * Start the server.
 * @param {{tasksDirs: string[], cwd?: string, cacheDir?: string, noCache?: boolean, host?: string, port?: number,
 *   indexDir?: string, embedder?: object, store?: object, refreshMs?: number, token?: string,
 *   log?: (line: string) => void}} opts
 * @returns {Promise<{url: string, port: number, token: string, data: ServeData, close: () => Promise<void>}>}
 */
export async function startServer(opts) {
  const host = opts.host ?? '127.0.0.1'
  if (!isLoopback(host)) {
    throw new RooStateError('INVALID_ARGUMENT', `roo-state serve binds a loopback address only (127.0.0.1 or ::1), not "${host}".`)
  }
  const port = opts.port ?? 0
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RooStateError('INVALID_ARGUMENT', `Port ${port} is not a port number.`)
  const token = opts.token ?? crypto.randomBytes(24).toString('base64url')
  const data = await ServeData.open(opts)
  const server = http.createServer((req, res) => {
    handle(req, res, { data, token, port: /** @type {import('node:net').AddressInfo | null} */ (server.address())?.port }).catch((err) => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error')
      opts.log?.(`roo-state serve: ${err?.stack ?? err}`)
    })
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host, port, exclusive: true }, () => resolve(undefined))
  })
  const bound = server.address()
  if (!bound || typeof bound === 'string' || !isLoopback(bound.address)) {
    server.close()
    throw new RooStateError('INVALID_ARGUMENT', 'The server did not bind a loopback address; stopped.')
  }
  const shown = net.isIPv6(bound.address) ? `[${bound.address}]` : bound.address
  return {
    url: `http://${shown}:${bound.port}/${token}/`,
    port: bound.port,
    token,
    data,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}

function send(res, status, type, body, extra = {}) {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...SECURITY_HEADERS, ...extra })
  res.end(res.req.method === 'HEAD' ? undefined : body)
}

function sendJson(res, status, value) {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value))
}

/** Host header of a loopback request to our port (a page reached through another name is refused). */
function hostAllowed(req, port) {
  const h = req.headers.host
  if (!h) return false
  const m = /^(\[[0-9a-f:]+\]|[^:]+):(\d+)$/i.exec(h)
  if (!m || Number(m[2]) !== port) return false
  const name = m[1].replace(/^\[|\]$/g, '')
  return name === 'localhost' || isLoopback(name)
}

async function handle(req, res, ctx) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return send(res, 405, 'text/plain; charset=utf-8', 'read-only: GET only', { allow: 'GET, HEAD' })
  }
  if (!hostAllowed(req, ctx.port)) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden')
  let parsed
  try {
    parsed = parsePath(req.url ?? '/')
  } catch (err) {
    // Before the token is checked nothing is said but the status.
    return send(res, err.status ?? 400, 'text/plain; charset=utf-8', 'bad request')
  }
  const [given, ...rest] = parsed.segments
  if (!given || !sameToken(given, ctx.token)) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden: the URL needs the token roo-state serve printed')
  const base = `/${ctx.token}/`
  const isApi = rest[0] === 'api'
  try {
    if (isApi) return sendJson(res, 200, await api(ctx.data, rest.slice(1), parsed.query))
    if (rest.length === 1 && rest[0] === 'app.css') return send(res, 200, 'text/css; charset=utf-8', STYLESHEET)
    const html = await page(ctx.data, rest, parsed.query, base)
    return send(res, 200, 'text/html; charset=utf-8', html)
  } catch (err) {
    const status = err instanceof HttpError ? err.status : statusOf(err)
    if (status === 500) throw err
    const message = err?.message ?? String(err)
    if (isApi) return sendJson(res, status, { error: { code: err?.code ?? `HTTP_${status}`, message } })
    return send(res, status, 'text/html; charset=utf-8', views.errorPage(base, status, message))
  }
}

function statusOf(err) {
  if (err?.code === 'TASK_NOT_FOUND') return 404
  if (err?.code === 'INVALID_ARGUMENT' || err?.code === 'TASK_AMBIGUOUS' || err?.code === 'AMBIGUOUS_TASK_ID') return 400
  return 500
}

function only(rest, n) {
  if (rest.length !== n) throw new HttpError(404, 'There is no such page.')
}

/** The JSON endpoints: the binding's results as they are. */
async function api(data, rest, query) {
  await data.fresh()
  switch (rest[0]) {
    case 'stores':
      only(rest, 1)
      return data.stores()
    case 'list':
      only(rest, 1)
      return data.list(data.storeAt(query.get('store')), treeQuery(query))
    case 'tree':
      only(rest, 2)
      return data.subtree(rest[1])
    case 'task':
      only(rest, 2)
      return (await data.task(rest[1])).skeleton
    case 'search':
      only(rest, 1)
      return data.search(searchQuery(query))
    case 'usage':
      only(rest, 1)
      return usageOrBadRequest(() => data.usage(data.storeAt(query.get('store')), usageOptions(usageQuery(query))))
    default:
      throw new HttpError(404, 'There is no such endpoint.')
  }
}

async function page(data, rest, query, base) {
  await data.fresh()
  if (rest.length === 0 || (rest.length === 1 && rest[0] === '')) {
    const store = data.storeOrAll(query.get('store'))
    const q = treeQuery(query)
    const shown = store === null ? data.treePageAll(q) : data.treePage(store, q)
    return views.treePage(base, { stores: data.stores(), store, query: q, ...shown })
  }
  if (rest[0] === 'task') {
    only(rest, 2)
    const t = await data.task(rest[1])
    return views.taskPage(base, { ...t, at: query.get('at') ?? undefined })
  }
  if (rest[0] === 'search') {
    only(rest, 1)
    const q = searchQuery(query)
    let result = null
    let error = null
    if (q.query) {
      try {
        result = await data.search(q)
      } catch (err) {
        error = { code: err?.code ?? 'FAILED', message: err?.message ?? String(err) }
      }
    }
    return views.searchPage(base, { query: q, result, error })
  }
  if (rest[0] === 'usage') {
    only(rest, 1)
    const store = data.storeAt(query.get('store'))
    const q = usageQuery(query)
    let report = null
    let error = null
    try {
      report = await usageOrBadRequest(() => data.usage(store, usageOptions(q)))
    } catch (err) {
      if (!(err instanceof HttpError)) throw err
      error = { code: 'INVALID_ARGUMENT', message: err.message }
    }
    return usagePage(base, { stores: data.stores(), store, query: q, report, error })
  }
  throw new HttpError(404, 'There is no such page.')
}

/** A report, its options' errors (a time zone the core does not know) as 400. */
async function usageOrBadRequest(f) {
  try {
    return await f()
  } catch (err) {
    if (err?.code === 'INVALID_ARGUMENT') throw new HttpError(400, err.message)
    throw err
  }
}

const PAGE_SIZE = 50

function whole(v, name, max) {
  if (v === null || v === '') return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0 || n > max) throw new HttpError(400, `${name} must be a whole number up to ${max}.`)
  return n
}

/** A date of a form (YYYY-MM-DD, or an ISO time) as ms; `end`: the end of that day. */
function day(v, name, end) {
  if (!v) return undefined
  const ms = Date.parse(v)
  if (!Number.isFinite(ms)) throw new HttpError(400, `${name} must be a date (YYYY-MM-DD).`)
  return end && /^\d{4}-\d{2}-\d{2}$/.test(v) ? ms + 86_400_000 : ms
}

const HOSTS = HOST_SOURCES
const SORTS = ['lastActivity', 'createdAt', 'title', 'messageCount', 'actionCount', 'totalSize', 'totalCost']

function treeQuery(query) {
  const text = (k) => {
    const v = query.get(k)?.trim()
    return v ? v.slice(0, 1000) : undefined
  }
  const host = text('host')
  if (host && !HOSTS.includes(host)) throw new HttpError(400, `host must be one of ${HOSTS.join(', ')}.`)
  const sort = text('sort')
  if (sort && !SORTS.includes(sort)) throw new HttpError(400, `sort must be one of ${SORTS.join(', ')}.`)
  const page = whole(query.get('page'), 'page', 1_000_000) ?? 1
  return {
    workspace: text('workspace'),
    host,
    mode: text('mode'),
    since: day(text('since'), 'since', false),
    until: day(text('until'), 'until', true),
    sinceText: text('since'),
    untilText: text('until'),
    sort,
    page: Math.max(1, page),
    pageSize: whole(query.get('size'), 'size', 500) || PAGE_SIZE,
  }
}

const MODES = ['semantic', 'lexical', 'hybrid']

function searchQuery(query) {
  const mode = query.get('mode') || undefined
  if (mode && !MODES.includes(mode)) throw new HttpError(400, `mode must be one of ${MODES.join(', ')}.`)
  return {
    query: (query.get('q') ?? '').trim().slice(0, 2000),
    mode,
    workspace: query.get('workspace')?.trim() || undefined,
    limit: whole(query.get('limit'), 'limit', 100) || 20,
  }
}
