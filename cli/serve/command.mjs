// The `roo-state serve` command: options, start, the URL printed, --open.
import { spawn } from 'node:child_process'
import path from 'node:path'
import process from 'node:process'
import { usageError } from '../lib/errors.mjs'

function openInBrowser(url) {
  const [cmd, args] =
    process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]]
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true })
    child.on('error', () => process.stderr.write(`roo-state serve: could not open a browser (${cmd}); open the URL yourself.\n`))
    child.unref()
  } catch {
    process.stderr.write('roo-state serve: could not open a browser; open the URL yourself.\n')
  }
}

/** @type {import('../lib/main.mjs').Command} */
export const serveCommand = {
  summary: 'a local, read-only web view: task trees, conversations and search (127.0.0.1 only, with a token)',
  options: {
    port: { type: 'string', arg: 'N', help: 'port to listen on (default: any free port)' },
    open: { type: 'boolean', help: 'open the view in the default browser' },
    index: { type: 'boolean', help: 'bring the search index up to date before serving' },
    'index-dir': { type: 'string', arg: 'DIR', help: 'search index folder (default $ROO_STATE_DATA_DIR/search or the platform data folder)' },
    embedder: { type: 'string', arg: 'KIND', help: 'with --index: auto, none, static, local or http' },
    'no-cache': { type: 'boolean', help: 'read the task folders directly instead of through the skeleton cache' },
  },
  examples: [
    'roo-state serve --open',
    'roo-state serve --tasks-dir ~/backup/roo/tasks --port 8080 --index --embedder none',
  ],
  maxArgs: 0,
  json: false,
  async run(ctx) {
    const port = ctx.opts.port === undefined ? 0 : Number(ctx.opts.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port takes a port number (0 to 65535), not "${ctx.opts.port}".`)
    const kinds = ['auto', 'none', 'static', 'local', 'http']
    if (ctx.opts.embedder !== undefined && !kinds.includes(ctx.opts.embedder)) throw usageError(`--embedder takes ${kinds.join(', ')}; not "${ctx.opts.embedder}".`)
    const { startServer } = await import('./server.mjs')
    const p = ctx.progress('reading tasks')
    const server = await startServer({
      tasksDirs: ctx.sel.tasksDirs,
      cwd: ctx.cwd,
      cacheDir: ctx.sel.cacheDir,
      noCache: Boolean(ctx.opts['no-cache']),
      port,
      indexDir: ctx.opts['index-dir'] ? path.resolve(ctx.cwd, ctx.opts['index-dir']) : undefined,
      embedder: ctx.opts.embedder ? { kind: ctx.opts.embedder } : undefined,
      log: (line) => process.stderr.write(`${line}\n`),
    }).finally(p.done)
    if (ctx.opts.index) {
      const ip = ctx.progress('indexing')
      try {
        const r = await server.data.index(ip.io.onProgress).finally(ip.done)
        process.stderr.write(`roo-state serve: index up to date (${r.tasksSeen} tasks, ${r.chunksTotal} chunks)\n`)
      } catch (err) {
        process.stderr.write(`roo-state serve: indexing failed (${err?.code ?? 'FAILED'}: ${err?.message ?? err}); search will say so.\n`)
      }
    }
    const tasks = server.data.stores().reduce((n, s) => n + s.tasks, 0)
    process.stdout.write(`roo-state serve: ${tasks} tasks in ${server.data.stores().length} store(s), read-only, at\n  ${server.url}\n(the token in the URL is needed; Ctrl-C stops)\n`)
    if (ctx.opts.open) openInBrowser(server.url)
    const stop = () => {
      server.close().then(() => process.exit(0))
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    return { data: null, text: () => '', keepAlive: true }
  },
}
