// `roo-state serve` over HTTP: the token, loopback only, read-only, hostile paths and texts, the
// JSON endpoints in the binding's shapes, filters and refresh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { spawn, spawnSync } from 'node:child_process'
import { isLoopback, parsePath, startServer } from '../cli/serve/server.mjs'
import { taskPage } from '../cli/serve/views.mjs'
import { HOSTILE_ID, HOSTILE_TITLE, SECRET, makeServeRoot, request, snapshot, writeHostileTask } from './serve-helpers.mjs'

const core = createRequire(import.meta.url)('../index.js')
const PARENT = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'

let env
let server
let before
let T

beforeAll(async () => {
  env = makeServeRoot()
  before = snapshot(path.dirname(env.tasksDir))
  server = await startServer({ tasksDirs: [env.tasksDir], cacheDir: env.cacheDir, refreshMs: 0 })
  T = `/${server.token}`
})

afterAll(async () => {
  await server?.close()
  if (env) fs.rmSync(env.root, { recursive: true, force: true })
})

describe('roo-state serve: access', () => {
  it('answers 403 without the token, with a wrong one, or with it in the query', async () => {
    const wrong = `/${'x'.repeat(server.token.length)}`
    for (const p of ['/', '/api/stores', `/task/${PARENT}`, '/app.css', `${wrong}/`, `${wrong}/api/stores`, `/?token=${server.token}`, `/${server.token.slice(1)}/`]) {
      const r = await request(server.port, p)
      expect(r.status, p).toBe(403)
      expect(r.body).not.toContain('meteo')
    }
    const ok = await request(server.port, `${T}/`)
    expect(ok.status).toBe(200)
    expect(ok.body).toContain('Ajoute un cache des prévisions')
  })

  it('refuses a request addressed to another host name (DNS rebinding)', async () => {
    const r = await request(server.port, `${T}/`, { headers: { host: `evil.example:${server.port}` } })
    expect(r.status).toBe(403)
  })

  it('prints a URL on 127.0.0.1 and refuses to bind anything but loopback', async () => {
    expect(server.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${server.port}/[A-Za-z0-9_-]{32}/$`))
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'localhost', 'example.com', '', '127.0.0.1.nip.io']) {
      await expect(startServer({ tasksDirs: [env.tasksDir], cacheDir: env.cacheDir, host }), host).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
    expect([isLoopback('127.0.0.1'), isLoopback('127.1.2.3'), isLoopback('::1')]).toEqual([true, true, true])
  })

  it('is read-only: other methods get 405 and the store is unchanged after every test', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await request(server.port, `${T}/`, { method })
      expect(r.status, method).toBe(405)
    }
  })

  it('sends a policy that runs no script and no framing', async () => {
    const r = await request(server.port, `${T}/`)
    expect(r.headers['content-security-policy']).toContain("default-src 'none'")
    expect(r.headers['content-security-policy']).not.toContain('script-src')
    expect(r.headers['x-content-type-options']).toBe('nosniff')
  })
})

describe('roo-state serve: hostile input', () => {
  // Twenty paths that try to leave the store or confuse the router; each is 400 or 404 and no
  // answer carries the secret files beside the store.
  const hostile = [
    '/../../secret.txt',
    '/task/..%2f..%2fsecret.txt',
    '/task/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/task/..',
    '/task/%2e%2e',
    '/task/..%5c..%5csecret.txt',
    '/task/%00',
    '/task/abc%00def',
    '/task/..%252f..%252fsecret.txt',
    '/api/task/..%2Foutside-task',
    '/api/tree/%2e%2e',
    '/task/%c0%ae%c0%ae/secret.txt',
    '/task/secret.txt',
    '/task/outside-task',
    '/app.css/..%2f..%2fsecret.txt',
    `/task/${PARENT}/../../secret.txt`,
    '/task/%2Fetc%2Fpasswd',
    '/task/C:%5Cwindows%5Cwin.ini',
    '/static/../../secret.txt',
    '/task/.%2e/outside-task',
  ]

  it.each(hostile)('%s gives 400 or 404 and nothing from outside the store', async (p) => {
    const r = await request(server.port, `${T}${p}`)
    expect([400, 404], `${p}: ${r.status}`).toContain(r.status)
    expect(r.body).not.toContain(SECRET)
  })

  it('parses paths strictly', () => {
    expect(parsePath('/a/b?x=1').segments).toEqual(['a', 'b'])
    for (const bad of ['/a/%2e%2e', '/a/..', '/a%2fb', '/a%5cb', '/a\\b', '/a%00', '/%E0%A4%A', '//host/x', 'x']) {
      expect(() => parsePath(bad), bad).toThrow()
    }
  })

  it('gives 404 for unknown ids, an id prefix and unknown pages', async () => {
    for (const p of ['/task/019cd6ce-0000-0000-0000-000000000000', '/task/019cd6ce', '/api/task/nope', '/api/tree/nope', '/nope', '/api/nope', '/task']) {
      const r = await request(server.port, `${T}${p}`)
      expect(r.status, p).toBe(404)
    }
  })

  it('keeps hostile task texts as text in every page and endpoint', async () => {
    const pages = [`${T}/`, `${T}/task/${HOSTILE_ID}`, `${T}/task/${encodeURIComponent(HOSTILE_ID)}`]
    for (const p of pages) {
      const r = await request(server.port, p)
      expect(r.status, p).toBe(200)
      expect(r.body, p).not.toMatch(/<(script|img|svg|iframe)\b|\son(error|load)="|href="javascript:/i)
      expect(r.body).toContain('&lt;script&gt;window.__pwned = &quot;script&quot;&lt;/script&gt;')
    }
    const task = await request(server.port, `${T}/task/${HOSTILE_ID}`)
    expect(task.body).toContain('&lt;svg onload=&quot;window.__pwned = &#39;svg&#39;&quot;&gt;')
    const json = JSON.parse((await request(server.port, `${T}/api/task/${HOSTILE_ID}`)).body)
    expect(json.metadata.title).toBe(HOSTILE_TITLE)
    // The usage page draws its own SVG; a conversation's hostile title there stays text.
    const usage = await request(server.port, `${T}/usage?group=conversations`)
    expect(usage.body).toContain('&lt;script&gt;window.__pwned = &quot;script&quot;&lt;/script&gt;')
    expect(usage.body).not.toMatch(/<(script|img|iframe)\b|\son(error|load)="|href="javascript:/i)
    // A hostile query and filter are echoed as text too.
    const q = encodeURIComponent('"><script>alert(1)</script>')
    for (const p of [`${T}/search?q=${q}`, `${T}/?workspace=${q}`, `${T}/?mode=${q}`, `${T}/usage?tz=${q}`]) {
      const r = await request(server.port, p)
      expect(r.body, p).not.toMatch(/<script/i)
    }
  })

  it('answers 400 to a bad filter value', async () => {
    for (const p of ['/?host=evil', '/?sort=__proto__', '/?page=-1', '/?since=notadate', '/?store=7', '/search?q=x&mode=evil', '/usage?group=hourly', '/usage?stack=evil', '/usage?host=evil', '/usage?conversation=../x', '/usage?since=2026-1-1', '/usage?cost=free', '/api/usage?tz=Mars/Olympus', '/api/usage?store=3']) {
      const r = await request(server.port, `${T}${p}`)
      expect([400, 404], p).toContain(r.status)
    }
  })
})

describe('roo-state serve: data', () => {
  let handle
  beforeAll(async () => {
    handle = await core.TaskStore.open({ tasksDir: env.tasksDir, noCache: true })
  })

  it('serves the binding\'s results as they are', async () => {
    const get = async (p) => JSON.parse((await request(server.port, `${T}${p}`)).body)
    expect(await get('/api/list')).toEqual(handle.list({ rootsOnly: true, offset: 0, limit: 50 }))
    expect(await get(`/api/tree/${PARENT}`)).toEqual(handle.tree({ rootId: PARENT }))
    // The tree page's one pass over the forest gives each conversation as tree({ rootId }) does.
    expect(handle.trees([HOSTILE_ID, 'nope', PARENT])).toEqual([...handle.tree({ rootId: HOSTILE_ID }), ...handle.tree({ rootId: PARENT })])
    expect(handle.trees([PARENT], 0)).toEqual(handle.tree({ rootId: PARENT, maxDepth: 0 }))
    expect(await get(`/api/task/${PARENT}`)).toEqual(
      await core.analyzeConversation(PARENT, path.join(env.tasksDir, PARENT), { includeSequence: true, maxContentLength: 20_000 }),
    )
    const stores = await get('/api/stores')
    expect(stores).toHaveLength(1)
    expect(stores[0]).toMatchObject({ index: 0, tasksDir: env.tasksDir, tasks: handle.size })
    const { sync, ...usage } = await get('/api/usage?group=models&tz=Europe/Paris&cost=calculate')
    const { sync: _, ...expected } = await handle.usageReport({ group: 'models', timeZone: 'Europe/Paris', costMode: 'calculate' })
    expect(usage).toEqual(expected)
    expect(sync.kept + sync.read).toBe(handle.size)
  })

  it('charts the usage of a store: the calendar, names or conversations, the table and its totals', async () => {
    const money = (n) => `$${n.toFixed(n < 1 ? 4 : 2)}`
    const days = (a, b) => Math.round((Date.parse(b) - Date.parse(a)) / 86_400_000) + 1
    for (const group of ['daily', 'monthly', 'yearly', 'models', 'modes', 'tasks', 'conversations']) {
      const report = await handle.usageReport({ group })
      expect(report.rows.length, group).toBeGreaterThan(0)
      const page = await request(server.port, `${T}/usage?group=${group}`)
      expect(page.status, group).toBe(200)
      expect(page.body).toContain(`<span id="usage-cost">${money(report.totals.cost)}</span>`)
      expect(page.body).toContain(`<span id="usage-requests">${report.totals.requests.toLocaleString('en-US')}</span>`)
      expect((page.body.match(/<tr data-key="/g) ?? []).length, group).toBe(report.rows.length)
      const slots = (page.body.match(/<g class="period( empty)?" data-key=/g) ?? []).length
      if (group === 'daily') {
        // Every calendar day from the first to the last with usage has its slot, empty or not.
        const keys = report.rows.map((r) => r.key)
        expect(slots).toBe(2 * days(keys[0], keys[keys.length - 1]))
        expect((page.body.match(/<g class="period" data-key=/g) ?? []).length).toBe(2 * keys.length)
      } else if (group === 'models' || group === 'modes' || group === 'tasks') {
        expect((page.body.match(/<rect class="bar"/g) ?? []).length, group).toBe(Math.min(report.rows.length, 25))
      }
    }
    // A conversation's cost by subtask and by mode, its rows linked to its tasks.
    const convs = await handle.usageReport({ group: 'conversations' })
    const conv = convs.rows.find((r) => r.conversation.tasks.length > 1)
    const page = await request(server.port, `${T}/usage?group=conversations&conversation=${conv.key}`)
    expect(page.body).toContain('id="conversation-chart"')
    expect((page.body.match(/<title>[^<]*% of the conversation/g) ?? []).length).toBe(conv.conversation.tasks.length)
    for (const t of conv.conversation.tasks) expect(page.body).toContain(`<title>${t.taskId} (`)
    const tasks = await request(server.port, `${T}/usage?group=tasks`)
    expect(tasks.body).toContain(`href="${T}/task/${conv.key}"`)
    // A range with no request, and a time zone the core does not know: said on the page.
    const empty = await request(server.port, `${T}/usage?since=1999-01-01&until=1999-01-31`)
    expect(empty.body).toContain('No request in this range.')
    const zone = await request(server.port, `${T}/usage?tz=Mars/Olympus`)
    expect(zone.status).toBe(200)
    expect(zone.body).toMatch(/id="usage-error">INVALID_ARGUMENT: unknown time zone/)
  })

  it('shows the conversations with counts, subtasks and link evidence', async () => {
    const r = await request(server.port, `${T}/`)
    // The fixture's orchestrator conversation (4 tasks) and the hostile task (1).
    expect(r.body).toMatch(/<span id="conversations">2<\/span> conversations match \(of 5 tasks/)
    expect(r.body).toContain('<span id="shown-tasks">5</span> tasks')
    expect(r.body).toContain('2 subtasks')
    expect(r.body).toContain('title="parent stored in history_item.json"')
  })

  it('filters by mode, host, workspace and date', async () => {
    const conversations = async (p) => Number(/<span id="conversations">(\d+)<\/span>/.exec((await request(server.port, `${T}${p}`)).body)?.[1])
    expect(await conversations('/?mode=orchestrator')).toBe(1)
    expect(await conversations('/?mode=ORCHESTRATOR')).toBe(1)
    expect(await conversations('/?mode=architect')).toBe(0)
    expect(await conversations('/?workspace=meteo-cli')).toBe(1)
    expect(await conversations('/?host=cline')).toBe(0)
    expect(await conversations('/?host=roo')).toBe(2)
    expect(await conversations('/?since=2026-03-12')).toBe(1)
    expect(await conversations('/?until=2026-03-11')).toBe(1)
    expect(await conversations('/?since=2030-01-01')).toBe(0)
  })

  it('pages the conversations', async () => {
    const one = await request(server.port, `${T}/?size=1`)
    expect(one.body).toContain('page 1 of 2')
    expect(one.body).toMatch(/href="[^"]*page=2[^"]*" *>|rel="next"/)
    const two = await request(server.port, `${T}/?size=1&page=2`)
    expect(two.body).toContain('page 2 of 2')
  })

  it('shows one task with its figures, subtasks and folded tool calls', async () => {
    const r = await request(server.port, `${T}/task/${PARENT}`)
    expect(r.body).toContain('<dd id="cost">$0.1426</dd>')
    expect(r.body).toContain('48,199 in · 932 out')
    expect(r.body).toContain('<span id="subtask-count">2</span>')
    expect(r.body).toContain('<details class="tools"><summary>')
    const child = await request(server.port, `${T}/task/019cd6ce-5036-7f70-a11e-7f86d559ebe2`)
    expect(child.body).toContain(`href="${T}/task/${PARENT}"`)
  })

  it('sees a task added while it runs (the handle is refreshed)', async () => {
    const id = '019d0000-0000-7000-8000-00000000cafe'
    writeHostileTask(env.tasksDir, id, Date.UTC(2026, 2, 13))
    try {
      const r = await request(server.port, `${T}/task/${id}`)
      expect(r.status).toBe(200)
      const list = await request(server.port, `${T}/`)
      expect(list.body).toContain('<span id="conversations">3</span>')
    } finally {
      fs.rmSync(path.join(env.tasksDir, id), { recursive: true, force: true })
    }
    const gone = await request(server.port, `${T}/task/${id}`)
    expect(gone.status).toBe(404)
  })

  it('wrote nothing into the store', () => {
    expect(snapshot(path.dirname(env.tasksDir))).toEqual(before)
  })
})

describe('roo-state serve: several stores', () => {
  const fixtures = path.join(path.dirname(createRequire(import.meta.url).resolve('../package.json')), 'fixtures', 'stores')
  const dirs = ['roo-code-3.52', 'kilo-code-v4', 'cline-v3.4x'].map((d) => path.join(fixtures, d, 'tasks'))
  let many
  let M
  const ids = (body) => new Set([...body.matchAll(/<code class="id">([^<]+)<\/code>/g)].map((m) => m[1]))
  const conversations = (body) => Number(/id="conversations">([\d,\u202f ]+)</.exec(body)?.[1].replace(/\D/g, ''))

  beforeAll(async () => {
    many = await startServer({ tasksDirs: dirs, cacheDir: path.join(env.root, 'cache-many'), refreshMs: 0 })
    M = `/${many.token}`
  })
  afterAll(async () => {
    await many?.close()
  })

  it('opens on every store together, says so and what it sorts by', async () => {
    const r = await request(many.port, `${M}/`)
    expect(r.status).toBe(200)
    expect(r.body).toMatch(/id="all-stores"[^>]*aria-current="true"/)
    expect(r.body).toContain(`in these ${dirs.length} stores`)
    expect(r.body).toContain('id="sorted-by">sorted by last activity, most recent first<')
    const byCreation = await request(many.port, `${M}/?sort=createdAt`)
    expect(byCreation.body).toContain('sorted by creation, newest first')
  })

  it('shows every store\'s conversations, each once, a page at a time', async () => {
    const all = await request(many.port, `${M}/?size=500`)
    const each = await Promise.all(dirs.map((_, i) => request(many.port, `${M}/?store=${i}&size=500`)))
    const union = new Set(each.flatMap((r) => [...ids(r.body)]))
    expect(union.size).toBeGreaterThan(3)
    expect(ids(all.body)).toEqual(union)
    const total = conversations(all.body)
    expect(total).toBe(each.reduce((n, r) => n + conversations(r.body), 0))
    // Page by page (one conversation each): every conversation once.
    const seen = []
    for (let page = 1; page <= total; page++) {
      const r = await request(many.port, `${M}/?size=1&page=${page}`)
      expect(r.body).toContain(`page ${page} of ${total}`)
      const top = /<ul class="tree"><li[^>]*>(?:<details><summary>)?<span class="row"><a class="title" href="[^"]*task\/([^"]+)"/.exec(r.body)
      expect(top, `page ${page}`).not.toBeNull()
      seen.push(top[1])
    }
    expect(new Set(seen).size).toBe(total)
  })
})

describe('roo-state serve: a long task page', () => {
  /** A task of `n` turns: the person asks, the model answers, a tool result comes back. */
  function longTask(n) {
    const sequence = []
    for (let i = 0; i < n; i++) {
      const ts = new Date(Date.UTC(2026, 10, 1, 10, i)).toISOString()
      sequence.push({ role: 'user', content: `question ${i}: why does step ${i} fail?`, timestamp: ts, isTruncated: false })
      sequence.push({ role: 'assistant', content: `answer ${i}`, timestamp: ts, isTruncated: false })
      sequence.push({ role: 'user', content: `[read_file for 'src/f${i}.ts'] Result:\n${'line\n'.repeat(200)}`, timestamp: ts, isTruncated: false })
    }
    const skeleton = {
      taskId: 't-long', metadata: { title: 'long', createdAt: sequence[0].timestamp, lastActivity: sequence.at(-1).timestamp, source: 'roo' },
      apiTotals: { totalCost: 0, tokensIn: 0, tokensOut: 0, cacheWrites: 0, cacheReads: 0, requests: 0 }, sequence, diagnostics: [], isCompleted: false,
    }
    return taskPage('/x/', { store: 0, tasksDir: '/t', header: {}, skeleton, ancestors: [], children: [] }).toString()
  }

  it('folds every tool result under its first line', () => {
    const page = longTask(3)
    expect(page.match(/<details class="result"><summary>\[read_file for &#39;src\/f\d\.ts&#39;\] Result: <span class="n">202 lines<\/span><\/summary>/g)).toHaveLength(3)
    expect(page).toContain('<div class="text">answer 1</div>')
    expect(page).not.toContain('id="toc"')
  })

  it('lists the person\'s turns of a long conversation, each a link to its message', () => {
    const page = longTask(10)
    const toc = /<nav class="toc" id="toc">([\s\S]*?)<\/nav>/.exec(page)?.[1] ?? ''
    const links = [...toc.matchAll(/href="#(m\d+)"/g)].map((m) => m[1])
    expect(links).toHaveLength(10)
    for (const id of links) expect(page).toContain(`id="${id}"`)
    expect(toc).toContain('question 9: why does step 9 fail?')
    expect(toc).not.toContain('Result:')
  })
})

describe('roo-state serve: the command', () => {
  const cli = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'cli', 'roo-state.mjs')

  it('refuses a bad port', () => {
    const r = spawnSync(process.execPath, [cli, 'serve', '--port', '99999', '--tasks-dir', env.tasksDir], { encoding: 'utf8' })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('--port takes a port number')
  })

  it('prints a loopback URL with its token and serves it until stopped', async () => {
    const child = spawn(process.execPath, [cli, 'serve', '--tasks-dir', env.tasksDir, '--cache-dir', env.cacheDir], { stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      let out = ''
      const url = await new Promise((resolve, reject) => {
        child.stdout.on('data', (c) => {
          out += c
          const m = /http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\//.exec(out)
          if (m) resolve(m[0])
        })
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)))
      })
      expect(out).toContain('5 tasks in 1 store(s), read-only')
      const u = new URL(url)
      const ok = await request(Number(u.port), `${u.pathname}api/stores`)
      expect(JSON.parse(ok.body)[0].tasks).toBe(5)
      expect((await request(Number(u.port), '/api/stores')).status).toBe(403)
    } finally {
      child.kill('SIGTERM')
    }
  })
})
