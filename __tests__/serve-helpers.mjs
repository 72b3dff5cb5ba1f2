// The stores the `roo-state serve` suites serve: a copy of a bundled fixture store, one task whose
// texts are hostile HTML, and a secret beside the store that no URL may reach.
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, '..')
export const fixtureStore = (name) => path.join(repoRoot, 'fixtures', 'stores', name, 'tasks')

export const HOSTILE_ID = '019d0000-0000-7000-8000-00000000beef'
export const SECRET = 'TOP-SECRET-4d1c9e'
export const HOSTILE_TITLE = '<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = \'img\'"> Evil & "quoted"'
export const HOSTILE_REPLY = 'Done: <svg onload="window.__pwned = \'svg\'"></svg><a href="javascript:window.__pwned=1">click</a> <iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>'

/** A task folder with hostile texts (a UI record: the task's text, an answer, a tool call). */
export function writeHostileTask(tasksDir, id = HOSTILE_ID, t0 = Date.UTC(2026, 2, 12, 9, 0, 0)) {
  const dir = path.join(tasksDir, id)
  fs.mkdirSync(dir, { recursive: true })
  const ui = [
    { ts: t0, type: 'say', say: 'text', text: HOSTILE_TITLE },
    { ts: t0 + 1000, type: 'say', say: 'api_req_started', text: JSON.stringify({ tokensIn: 10, tokensOut: 5, cost: 0.001 }) },
    { ts: t0 + 2000, type: 'ask', ask: 'tool', text: JSON.stringify({ tool: 'readFile', path: '<img src=x onerror=alert(1)>.txt' }) },
    { ts: t0 + 3000, type: 'say', say: 'text', text: HOSTILE_REPLY },
  ]
  fs.writeFileSync(path.join(dir, 'ui_messages.json'), JSON.stringify(ui))
  return dir
}

/** A scratch root: `<root>/tasks` (a copy of a fixture store plus the hostile task), a cache dir,
 *  and secrets outside the tasks folder (a file, and a folder laid out like a task). */
export function makeServeRoot(fixture = 'history-item-v3.50') {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-serve-'))
  const tasksDir = path.join(root, 'store', 'tasks')
  fs.cpSync(fixtureStore(fixture), tasksDir, { recursive: true })
  writeHostileTask(tasksDir)
  fs.writeFileSync(path.join(root, 'secret.txt'), SECRET)
  fs.writeFileSync(path.join(root, 'store', 'secret.txt'), SECRET)
  const outside = path.join(root, 'store', 'outside-task')
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, 'ui_messages.json'), JSON.stringify([{ ts: 1, type: 'say', say: 'text', text: SECRET }]))
  return { root, tasksDir, cacheDir: path.join(root, 'cache'), indexDir: path.join(root, 'index') }
}

/** Every file under `dir` with its size and modification time (to show nothing was written). */
export function snapshot(dir) {
  const out = []
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else {
        const st = fs.statSync(p)
        out.push(`${path.relative(dir, p)} ${st.size} ${st.mtimeMs}`)
      }
    }
  }
  walk(dir)
  return out.sort()
}

/** A raw request: the path is sent exactly as given (no normalisation by a client library). */
export function request(port, rawPath, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: rawPath, headers }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end()
  })
}
