// First paint of `roo-state serve`'s pages on a large store, in headless Chromium.
//
//   node bench/serve.mjs [tasksDir]
//
// Default store: 50 000 tasks made by roo-corpus into $TMPDIR/roo-serve-50000 (once). Each page is
// loaded 5 times from the live server and 5 times from a static server holding the same bytes (the
// baseline: what the browser alone takes to paint that HTML); the median first contentful paint of
// each and their ratio are printed. The target is a tree page painted within 1 s.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServer } from '../cli/serve/server.mjs'
import { launchChromium } from '../scripts/chromium.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

function tasksDirOf(arg) {
  if (arg) return fs.existsSync(path.join(arg, 'tasks')) ? path.join(arg, 'tasks') : arg
  const dir = path.join(os.tmpdir(), 'roo-serve-50000')
  if (!fs.existsSync(path.join(dir, 'tasks'))) {
    execFileSync('cargo', ['run', '-q', '--release', '-p', 'roo-corpus', '--', '--out', dir, '--tasks', '50000', '--target-mib', '400', '--force'], {
      stdio: 'inherit',
      cwd: path.join(here, '..'),
    })
  }
  return path.join(dir, 'tasks')
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function paint(page, url) {
  await page.goto(url, { waitUntil: 'load' })
  // The paint entry may come after the load event: wait for it (buffered), up to 5 s.
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const nav = performance.getEntriesByType('navigation')[0]
        const done = (fcp) => resolve({ fcp, response: nav.responseEnd, bytes: nav.transferSize })
        new PerformanceObserver((list) => {
          const e = list.getEntriesByName('first-contentful-paint')[0]
          if (e) done(e.startTime)
        }).observe({ type: 'paint', buffered: true })
        setTimeout(() => done(NaN), 5000)
      }),
  )
}

/** A server answering every path with fixed bytes (the page, or the stylesheet). */
function staticServer(pages) {
  const server = http.createServer((req, res) => {
    const body = pages.get(req.url.split('?')[0]) ?? ''
    res.writeHead(body ? 200 : 404, { 'content-type': req.url.endsWith('.css') ? 'text/css' : 'text/html; charset=utf-8' })
    res.end(body)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

async function main() {
  const tasksDir = tasksDirOf(process.argv[2])
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-serve-bench-cache-'))
  let t = performance.now()
  const server = await startServer({ tasksDirs: [tasksDir], cacheDir })
  const openMs = performance.now() - t
  const stores = server.data.stores()
  console.log(`store ${tasksDir}: ${stores[0].tasks} tasks; opened (cache built) in ${(openMs / 1000).toFixed(1)} s`)
  // The open after the cache exists, as a second `roo-state serve` would.
  await server.close()
  t = performance.now()
  const live = await startServer({ tasksDirs: [tasksDir], cacheDir, refreshMs: 60_000 })
  console.log(`reopened from the cache in ${((performance.now() - t) / 1000).toFixed(2)} s`)
  const anyTask = live.data.list(0, { page: 1, pageSize: 1 }).items[0].taskId
  const lastPage = Math.ceil(live.data.list(0, { page: 1, pageSize: 1 }).total / 50)
  const pages = [
    ['tree, page 1', ''],
    ['tree, page 2', '?page=2'],
    [`tree, last page (${lastPage})`, `?page=${lastPage}`],
    ['tree, mode filter', '?mode=code'],
    ['tree, by cost', '?sort=totalCost'],
    ['task', `task/${anyTask}`],
  ]
  const fixed = new Map([[`/${live.token}/app.css`, fs.readFileSync(path.join(here, '..', 'cli', 'serve', 'static', 'app.css'))]])
  for (const [, p] of pages) {
    const res = await fetch(`${live.url}${p}`)
    fixed.set(`/${live.token}/${p.split('?')[0]}`, Buffer.from(await res.arrayBuffer()))
  }
  const baseline = await staticServer(fixed)
  const browser = await launchChromium()
  const page = await browser.context.newPage()
  console.log('page                      live FCP   static FCP   ratio   HTML bytes')
  let treeFcp = NaN
  try {
    for (const [name, p] of pages) {
      const liveRuns = []
      const staticRuns = []
      let bytes = 0
      for (let i = 0; i < 5; i++) {
        const a = await paint(page, `${live.url}${p}`)
        liveRuns.push(a.fcp)
        bytes = a.bytes
        const staticUrl = `http://127.0.0.1:${baseline.address().port}/${live.token}/${p.split('?')[0]}`
        staticRuns.push((await paint(page, staticUrl)).fcp)
      }
      const l = median(liveRuns)
      const s = median(staticRuns)
      if (name === 'tree, page 1') treeFcp = l
      console.log(`${name.padEnd(24)} ${l.toFixed(0).padStart(7)} ms ${s.toFixed(0).padStart(9)} ms ${(l / s).toFixed(2).padStart(7)} ${String(bytes).padStart(11)}`)
    }
  } finally {
    await browser.close()
    await live.close()
    baseline.close()
    fs.rmSync(cacheDir, { recursive: true, force: true })
  }
  console.log(`tree page first paint ${treeFcp.toFixed(0)} ms: ${treeFcp <= 1000 ? 'within' : 'OVER'} the 1 s target`)
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
