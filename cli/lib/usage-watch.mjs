// `roo-state usage --watch`: the report drawn again in place whenever a task changes. The handle
// is refreshed every two seconds (a refresh stats the task folders and reads the changed ones);
// when a task was added, changed or removed, the report is asked again (it reads again only those
// tasks) and the screen redrawn. Ctrl-C ends it.
import process from 'node:process'
import { resolveStores } from './stores.mjs'

/** How often the task folders are looked at. */
export const WATCH_EVERY_MS = 2000

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}

const clock = (d) => d.toTimeString().slice(0, 8)

/**
 * Draw the report of `options` until the command's signal fires; the last report drawn.
 * @param {any} ctx the command's context (selection, signal)
 * @param {any} options the report's options (and noCache)
 * @param {(report: any) => string} text the report as text
 * @param {(dirs: string[], o: any) => Promise<any>} openHandle the usage handle of the stores (usage.mjs)
 */
export async function watchUsage(ctx, options, text, openHandle) {
  const signal = ctx.io.signal
  const dirs = await resolveStores(ctx.sel)
  const { noCache, ...reportOptions } = options
  const handle = await openHandle(dirs, { cacheDir: ctx.sel.cacheDir, noCache, signal })
  const draw = (report, note) => {
    const footer = `Watching ${dirs.length} store${dirs.length === 1 ? '' : 's'}: redrawn when a task changes (looked at every ${WATCH_EVERY_MS / 1000} s). ${note}. Ctrl-C to quit.`
    process.stdout.write(`\x1b[H\x1b[2J${text(report)}\n\n${footer}\n`)
  }
  let report = await handle.usageReport({ ...reportOptions, signal })
  draw(report, `Drawn at ${clock(new Date())}`)
  while (!signal.aborted) {
    await sleep(WATCH_EVERY_MS, signal)
    try {
      const r = await handle.refresh(signal)
      if (r.added + r.changed + r.removed === 0) continue
      report = await handle.usageReport({ ...reportOptions, signal })
      const what = [r.added && `${r.added} added`, r.changed && `${r.changed} changed`, r.removed && `${r.removed} removed`].filter(Boolean).join(', ')
      draw(report, `Drawn again at ${clock(new Date())} (tasks ${what})`)
    } catch (err) {
      // Ctrl-C during a refresh or a report ends the watch as it would between two.
      if (!signal.aborted) throw err
    }
  }
  return report
}
