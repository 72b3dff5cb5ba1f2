// The attacker's groups of the fault injection (scripts/fault-injection.mjs): task folders and
// files linked out of their store, figures and price files not to be believed, grep bounds and
// skipped files, malformed arguments, writer locks, and the decoy folder outside the stores.
import { spawn, spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { CLI, badEnd, cli, endDetail, env, filesUnder, fixtureTasks, json, makeStore, mcpSession, projectManifest, record, work } from './harness.mjs'
// ------------------------------------------------------------------------------------------------
// 6. links out of the stores, and the decoy they point at

/** What no answer may show: it stands only in the decoy folder, outside every store. */
const CANARY = 'zanzibarcanary7f3e'
export const decoy = path.join(work, 'decoy')
const DAY = 86_400_000

/** A UI record: the task's first words, then `rest` (objects of the record). */
function uiRecord(ts, first, rest = []) {
  return JSON.stringify([{ ts, type: 'say', say: 'text', text: first }, ...rest.map((r, i) => ({ ts: ts + 1000 * (i + 1), type: 'say', ...r }))])
}

/** A task folder `id` of `tasks` with `ui` as its UI record and a one-message API history. */
function writeTask(tasks, id, ui, { ts = Date.parse('2025-06-10T10:00:00Z'), checkpoints = true } = {}) {
  const t = path.join(tasks, id)
  fs.mkdirSync(t, { recursive: true })
  fs.writeFileSync(path.join(t, 'ui_messages.json'), ui)
  fs.writeFileSync(path.join(t, 'api_conversation_history.json'), JSON.stringify([{ role: 'user', content: [{ type: 'text', text: '<task>a task</task>' }], ts }]))
  if (checkpoints) {
    fs.mkdirSync(path.join(t, 'checkpoints', 'objects'), { recursive: true })
    fs.writeFileSync(path.join(t, 'checkpoints', 'objects', 'pack'), crypto.randomBytes(512))
  }
  const old = new Date(Date.now() - 90 * DAY)
  for (const f of fs.readdirSync(t)) fs.utimesSync(path.join(t, f), old, old)
  return t
}

/** The decoy: a task folder and a UI record holding the canary, a note; outside every store. */
export function makeDecoy() {
  const ts = Date.parse('2025-06-10T10:00:00Z')
  const ui = uiRecord(ts, `Please fix ${CANARY} in the app`, [
    { say: 'api_req_started', text: JSON.stringify({ tokensIn: 10, tokensOut: 5, cost: 0.01 }) },
    { say: 'text', text: `${CANARY} is fixed` },
  ])
  writeTask(decoy, 't1', ui)
  fs.writeFileSync(path.join(decoy, 'secret-ui.json'), ui)
  fs.writeFileSync(path.join(decoy, 'notes.txt'), `${CANARY} precious`)
}

/** The text of an MCP answer (its content blocks, or its error). */
function answerText(a) {
  if (!a) return ''
  if (a.error) return JSON.stringify(a.error)
  return (a.result?.content ?? []).map((c) => c.text ?? '').join('\n')
}

async function mcpOpen(args) {
  const s = mcpSession(args)
  s.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'faults', version: '0' } } })
  await s.answer(0)
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  let next = 1
  s.tool = async (name, args, ms = 60_000) => {
    const id = next++
    s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
    return s.answer(id, ms)
  }
  return s
}

/** `roo-state serve` on `tasks`: its base URL, and how to stop it. */
async function serveOn(args) {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { env, cwd: work, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  for (let t = 0; t < 1200 && !/http:\/\/\S+\//.test(out) && child.exitCode === null; t++) await new Promise((r) => setTimeout(r, 50))
  const url = /(http:\/\/\S+\/)/.exec(out)?.[1] ?? null
  return {
    url,
    err: () => err,
    stop: () => new Promise((r) => {
      if (child.exitCode !== null) return r()
      child.once('exit', r)
      child.kill('SIGTERM')
    }),
  }
}

const OUTSIDE = /outside (its|the) store/i

export async function linksGroup() {
  const dir = path.join(work, 'links')
  const base = makeStore(dir, 8)
  const tasks = base.tasks
  const cache = path.join(dir, 'roo-cache')
  // A task folder that is a link out of the store, and a task whose UI record is one.
  const idL = crypto.randomUUID()
  fs.symlinkSync(path.join(decoy, 't1'), path.join(tasks, idL))
  const idF = base.ids[1]
  fs.rmSync(path.join(tasks, idF, 'ui_messages.json'), { force: true })
  fs.symlinkSync(path.join(decoy, 'secret-ui.json'), path.join(tasks, idF, 'ui_messages.json'))
  const before = projectManifest(decoy)
  const common = ['--tasks-dir', tasks, '--cache-dir', cache]
  /** A read: nothing of the decoy shown; `said`: the refusal must be said too. */
  const read = (name, r, { said = false } = {}) => {
    const text = `${r.out}\n${r.err}`
    const bad = badEnd(r)
    if (bad) record('links', name, bad, endDetail(r))
    else if (text.includes(CANARY)) record('links', name, 'lost', 'content from outside the store shown')
    else if (said && !OUTSIDE.test(text)) record('links', name, 'silent', 'no word of the link out of the store')
    else record('links', name, 'survived')
  }
  /** A write: the decoy untouched and the store still there. */
  const wrote = (name, r) => {
    const bad = r && badEnd(r)
    if (bad) record('links', name, bad, endDetail(r))
    else if (projectManifest(decoy) !== before) record('links', name, 'lost', 'a file outside the store changed')
    else if (!fs.existsSync(tasks)) record('links', name, 'lost', 'the store was moved away')
    else record('links', name, 'survived')
  }
  read('tree --json', await cli(['tree', ...common, '--json']), { said: true })
  read('show of a task folder linked out', await cli(['show', idL, ...common, '--json']), { said: true })
  read('show of a task whose UI record is linked out', await cli(['show', idF, ...common, '--json']), { said: true })
  for (const [kind, id] of [['md', idL], ['md', idF], ['xml', idF], ['json', idF]]) {
    read(`export ${kind} of ${id === idL ? 'a folder' : 'a file'} linked out`, await cli(['export', kind, id, ...common]))
  }
  read('export csv', await cli(['export', 'csv', ...common]))
  read('grep --json', await cli(['grep', CANARY, ...common, '--json']), { said: true })
  read('grep --no-cache', await cli(['grep', CANARY, ...common, '--no-cache']), { said: true })
  read('usage tasks --json', await cli(['usage', 'tasks', ...common, '--json']))
  const index = path.join(dir, 'index')
  const indexed = await cli(['index', ...common, '--embedder', 'none', '--index-dir', index, '--json'])
  read('index --json', indexed)
  // The answer echoes the query: only its results may not hold the canary.
  const searched = await cli(['search', CANARY, ...common, '--index-dir', index, '--json'])
  read('search', { ...searched, out: JSON.stringify(json(searched)?.results ?? searched.out) })
  wrote('cleanup --apply', await cli(['cleanup', ...common, '--apply', '--older-than', '0', '--keep-last', '0', '--json']))
  wrote('rebuild --apply --extension-index', await cli(['rebuild', ...common, '--apply', '--extension-index', '--json']))
  // The MCP server, writes allowed.
  const s = await mcpOpen(['--tasks-dir', tasks, '--cache-dir', cache, '--allow-writes'])
  const viaMcp = async (name, tool, args, opts) => {
    const a = await s.tool(tool, args)
    read(`mcp ${name}`, { code: 0, out: a ? answerText(a) : '', err: '', hung: !a }, opts)
  }
  await viaMcp('get_task_details of a folder linked out', 'get_task_details', { taskId: idL, includeSequence: true }, { said: true })
  await viaMcp('get_task_details of a file linked out', 'get_task_details', { taskId: idF, includeSequence: true }, { said: true })
  await viaMcp('export_conversation_markdown', 'export_conversation_markdown', { conversationId: idF })
  await viaMcp('grep_tasks', 'grep_tasks', { pattern: CANARY }, { said: true })
  await viaMcp('list_tasks', 'list_tasks', {})
  await viaMcp('view_conversation_tree', 'view_conversation_tree', { taskId: idF, detailLevel: 'full' })
  await s.tool('cleanup_obsolete_checkpoints', { olderThanDays: 0, keepLast: 0, dryRun: false })
  wrote('mcp cleanup_obsolete_checkpoints (--allow-writes)', null)
  // The web view.
  const served = await serveOn([...common])
  if (!served.url) record('links', 'serve', 'crashed', served.err().split('\n')[0])
  else {
    for (const [name, p] of [['/', ''], ['/task of a folder linked out', `task/${idL}`], ['/task of a file linked out', `task/${idF}`], ['/api/task of a folder linked out', `api/task/${idL}`], ['/api/task of a file linked out', `api/task/${idF}`]]) {
      const res = await fetch(`${served.url}${p}`).catch((e) => ({ status: 0, text: async () => String(e) }))
      const body = await res.text()
      read(`serve ${name}`, { code: 0, out: body, err: '' })
    }
  }
  await served.stop()
  // Last: a migration that is served moves the store away.
  const moved = await s.tool('migrate_tasks_dir', { from: tasks, to: path.join(decoy, 'moved'), dryRun: false })
  if (moved && !moved.result?.isError) record('links', 'mcp migrate_tasks_dir into a folder outside (--allow-writes)', 'lost', 'the migration was served')
  else wrote('mcp migrate_tasks_dir into a folder outside (--allow-writes)', null)
  await s.close()
}

// ------------------------------------------------------------------------------------------------
// 7. numbers not to be believed, price files not to be read whole

/** A prices file with one entry for claude-sonnet-4. */
function priceFile(p, entry) {
  fs.writeFileSync(p, JSON.stringify({ models: [{ match: ['claude-sonnet-4'], cacheWritesPrice: 3.75, cacheReadsPrice: 0.3, outputPrice: 15, inputPrice: 3, ...entry }] }))
  return p
}

export async function numbersGroup() {
  const dir = path.join(work, 'numbers')
  const ts = Date.parse('2025-06-10T10:00:00Z')
  // One request of 0.5 USD, one negative, one past any sum.
  const hostile = path.join(dir, 'hostile', 'tasks')
  const id = crypto.randomUUID()
  writeTask(hostile, id, uiRecord(ts, 'Numbers', [
    { say: 'api_req_started', text: JSON.stringify({ tokensIn: 100, tokensOut: 10, cacheWrites: 0, cacheReads: 0, cost: 0.5 }) },
    { say: 'api_req_started', text: JSON.stringify({ tokensIn: -1000, tokensOut: -10, cacheWrites: 0, cacheReads: 0, cost: -5.99 }) },
    { say: 'api_req_started', text: JSON.stringify({ tokensIn: 1e308, tokensOut: 1e308, cacheWrites: 0, cacheReads: 0, cost: 1e308 }) },
  ]))
  const h = ['--tasks-dir', hostile, '--cache-dir', path.join(dir, 'cache-h')]
  const usage = await cli(['usage', 'tasks', ...h, '--json'])
  const u = json(usage)
  const figures = (t) => t && t.cost === 0.5 && t.tokensIn === 100 && t.tokensOut === 10
  if (badEnd(usage)) record('numbers', 'usage --json over refused records', badEnd(usage), endDetail(usage))
  else if (!figures(u?.totals)) record('numbers', 'usage --json over refused records', 'lost', `totals: cost ${u?.totals?.cost}, tokens in ${u?.totals?.tokensIn}`)
  else if (!/2 records? refused|refused.*2/i.test(JSON.stringify(u))) record('numbers', 'usage --json over refused records', 'silent', 'no word of the records refused')
  else record('numbers', 'usage --json over refused records', 'survived')
  // The sums a daily report keeps for the next run (usage.blocks), a figure changed on disk: not
  // taken, the report summed again from the records.
  const daily = await cli(['usage', 'daily', ...h, '--json'])
  const [blocks] = filesUnder(path.join(dir, 'cache-h')).filter((f) => path.basename(f) === 'usage.blocks')
  if (badEnd(daily) || !blocks) record('numbers', 'usage over kept sums changed on disk', badEnd(daily) || 'lost', blocks ? endDetail(daily) : 'no usage.blocks was kept')
  else {
    fs.writeFileSync(blocks, fs.readFileSync(blocks, 'utf8').replace(/"sums":\[(\d+),/, (_, n) => `"sums":[${Number(n) + 7},`))
    const again = await cli(['usage', 'daily', ...h, '--json'])
    const a = json(again)
    if (badEnd(again)) record('numbers', 'usage over kept sums changed on disk', badEnd(again), endDetail(again))
    else if (a?.totals?.requests !== json(daily)?.totals?.requests || a?.sync?.blocksKept !== 0) record('numbers', 'usage over kept sums changed on disk', 'lost', `requests ${a?.totals?.requests}, blocks kept ${a?.sync?.blocksKept}`)
    else record('numbers', 'usage over kept sums changed on disk', 'survived')
  }
  const csv = await cli(['usage', 'tasks', ...h, '--csv'])
  const totalLine = csv.out.trim().split('\n').at(-1) ?? ''
  if (badEnd(csv)) record('numbers', 'usage --csv over refused records', badEnd(csv), endDetail(csv))
  else if (/Infinity|NaN|,-\d/.test(csv.out) || totalLine.split(',')[9] !== '0.5') record('numbers', 'usage --csv over refused records', 'lost', `total line: ${totalLine.slice(0, 120)}`)
  else record('numbers', 'usage --csv over refused records', 'survived')
  const exported = await cli(['export', 'csv', ...h])
  const row = exported.out.trim().split('\n').at(-1)?.split(',') ?? []
  if (badEnd(exported)) record('numbers', 'export csv over refused records', badEnd(exported), endDetail(exported))
  else if (/Infinity|NaN|-5\.99|e\+?308|\d{22}/.test(exported.out) || row.slice(15, 18).join(',') !== '100,10,0.5') {
    record('numbers', 'export csv over refused records', 'lost', `tokens in, out and cost: ${row.slice(15, 18).join(', ').slice(0, 120)}`)
  } else record('numbers', 'export csv over refused records', 'survived')
  // The task's own totals (show, tree, list) follow the same rule, and say what they left out.
  const shown = await cli(['show', id, ...h, '--json'])
  const task = json(shown)?.skeleton
  const totals = task?.apiTotals
  if (badEnd(shown)) record('numbers', 'show --json over refused records', badEnd(shown), endDetail(shown))
  else if (!totals || totals.totalCost !== 0.5 || totals.tokensIn !== 100 || totals.tokensOut !== 10) {
    record('numbers', 'show --json over refused records', 'lost', `apiTotals: ${JSON.stringify(totals)?.slice(0, 120)}`)
  } else if ((task.diagnostics ?? []).filter((d) => /left out of the totals/.test(d.message)).length !== 2) {
    record('numbers', 'show --json over refused records', 'silent', 'no word of the requests left out')
  } else record('numbers', 'show --json over refused records', 'survived')

  // Price tables: one request of a million input tokens on claude-sonnet-4 (3 USD by the bundled table).
  const priced = path.join(dir, 'priced', 'tasks')
  writeTask(priced, crypto.randomUUID(), uiRecord(ts, 'Priced', [
    { say: 'api_req_started', text: JSON.stringify({ request: '<environment_details>\n# Current Mode\n<slug>code</slug>\n<model>claude-sonnet-4-20250514</model>\n</environment_details>', tokensIn: 1_000_000, tokensOut: 0, cacheWrites: 0, cacheReads: 0 }) },
  ]))
  const p = ['usage', 'models', '--tasks-dir', priced, '--cache-dir', path.join(dir, 'cache-p'), '--cost', 'calculate', '--json']
  const tables = {
    'a price entry dated 2099': priceFile(path.join(dir, 'future.json'), { from: '2099-01-01', inputPrice: 4000 }),
    'negative prices': priceFile(path.join(dir, 'negative.json'), { from: '2025-01-01', inputPrice: -3 }),
  }
  for (const [name, file] of Object.entries(tables)) {
    const r = await cli([...p, '--prices', file])
    const cost = json(r)?.totals?.cost
    if (badEnd(r)) record('numbers', `usage --prices with ${name}`, badEnd(r), endDetail(r))
    else if (r.code !== 0 || Math.abs((cost ?? NaN) - 3) > 1e-9) record('numbers', `usage --prices with ${name}`, 'lost', `cost ${cost} (3 by the bundled table), exit ${r.code}`)
    else if (!/refused/i.test(r.out)) record('numbers', `usage --prices with ${name}`, 'silent', 'the entry was dropped without a word')
    else record('numbers', `usage --prices with ${name}`, 'survived')
  }
  const fifo = path.join(dir, 'prices.fifo')
  spawnSync('mkfifo', [fifo])
  const sparse = path.join(dir, 'sparse.json')
  const fd = fs.openSync(sparse, 'w')
  fs.ftruncateSync(fd, 3 * 2 ** 30)
  fs.closeSync(fd)
  for (const [name, file] of [['/dev/zero', '/dev/zero'], ['a FIFO', fifo], ['a 3 GiB sparse file', sparse]]) {
    const r = await cli([...p, '--prices', file], { timeoutMs: 30_000, maxMiB: 400 })
    const bad = badEnd(r)
    if (bad) record('numbers', `usage --prices ${name}`, bad, endDetail(r))
    else if (r.code === 0) record('numbers', `usage --prices ${name}`, 'lost', 'the file was taken as a price table')
    else record('numbers', `usage --prices ${name}`, 'survived', `exit ${r.code}, ${r.peakMiB} MiB`)
  }
}

// ------------------------------------------------------------------------------------------------
// 8. grep: bounded memory and answers, every file it skips said

/**
 * A task with one message of `bytes` of `unit`s, written without holding it: its second message,
 * or with `first` its first (its task text, and so its title).
 */
function bigMessageTask(tasks, id, unit, bytes, ts, { first = false } = {}) {
  const t = path.join(tasks, id)
  fs.mkdirSync(t, { recursive: true })
  const fd = fs.openSync(path.join(t, 'ui_messages.json'), 'w')
  const opening = first ? '' : `{"ts":${ts - 1000},"type":"say","say":"text","text":"a task"},`
  fs.writeSync(fd, `[${opening}{"ts":${ts},"type":"say","say":"text","text":"`)
  // Whole units only: a block never cuts an escape in two.
  const block = Buffer.from(unit.repeat(Math.floor((1 << 20) / unit.length)))
  for (let n = 0; n < bytes; n += block.length) fs.writeSync(fd, block)
  fs.writeSync(fd, `"},{"ts":${ts + 1000},"type":"say","say":"text","text":"done"}]`)
  fs.closeSync(fd)
}

export async function grepGroup() {
  const dir = path.join(work, 'grep')
  const ts = Date.parse('2025-06-10T10:00:00Z')
  const MB = 100
  // One line of 100 MB ("abab…"), and 100 000 lines of 600 bytes, each a message of a task.
  const oneLine = path.join(dir, 'one-line', 'tasks')
  bigMessageTask(oneLine, crypto.randomUUID(), 'ab', MB << 20, ts)
  const manyLines = path.join(dir, 'many-lines', 'tasks')
  bigMessageTask(manyLines, crypto.randomUUID(), `${'x'.repeat(598)}\\n`, 60 << 20, ts)
  const bound = 150 + 4 * MB
  const greps = [
    ['-E -C 20 -m 100000 . over one 100 MB line', ['-E', '-C', '20', '-m', '100000', '.'], oneLine],
    ["-E '(a|a)*b' over one 100 MB line", ['-E', '-m', '100000', '(a|a)*b'], oneLine],
    ['-C 20 -m 100000 over 100 000 long lines', ['-C', '20', '-m', '100000', 'x'], manyLines],
  ]
  for (const [name, args, tasks] of greps) {
    const r = await cli(['grep', ...args, '--tasks-dir', tasks, '--cache-dir', path.join(dir, 'roo-cache'), '--json', '--no-cache'], { maxMiB: bound, timeoutMs: 180_000 })
    const g = json(r)
    if (badEnd(r)) record('grep', name, badEnd(r), endDetail(r))
    else if (!g) record('grep', name, 'lost', `the answer is not JSON (${r.out.length} characters)`)
    else if (r.out.length > 64 << 20) record('grep', name, 'lost', `an answer of ${r.out.length >> 20} MiB`)
    else if (g.truncated && !g.notes?.length) record('grep', name, 'silent', 'cut without a note')
    else record('grep', name, 'survived', `${g.matches.length} matches, ${r.out.length >> 10} KiB, ${r.peakMiB} MiB`)
  }
  const mcpLine = path.join(dir, 'mcp-line', 'tasks')
  bigMessageTask(mcpLine, crypto.randomUUID(), 'ab', 20 << 20, ts, { first: true })
  const s = await mcpOpen(['--tasks-dir', mcpLine, '--cache-dir', path.join(dir, 'roo-cache')])
  const a = await s.tool('grep_tasks', { pattern: '.', regex: true, context: 20, maxMatches: 10000 }, 180_000)
  let parsed = null
  try {
    parsed = JSON.parse(answerText(a))
  } catch {
    // not JSON
  }
  const mcpName = 'mcp grep_tasks over a task of one 20 MB line'
  if (!a) record('grep', mcpName, s.alive() ? 'hung' : 'crashed')
  else if (!parsed) record('grep', mcpName, 'lost', `the answer is not valid JSON (${answerText(a).length} characters)`)
  else record('grep', mcpName, 'survived', `${parsed.matches?.length} matches, ${answerText(a).length} characters`)
  await s.close()

  // Files a grep cannot read: each must be counted.
  const small = makeStore(path.join(dir, 'capped'), 6)
  const capped = ['grep', 'zzzz', '--tasks-dir', small.tasks, '--cache-dir', path.join(dir, 'cache-capped')]
  const skippedSaid = (r) => {
    const g = json(r)
    return g ? (g.filesSkipped ?? 0) > 0 : /skipped|not read|refused/i.test(r.out)
  }
  for (const [name, args] of [['ROO_STATE_MAX_FILE_BYTES=1000 grep --json', [...capped, '--json']], ['ROO_STATE_MAX_FILE_BYTES=1000 grep', capped]]) {
    const r = await cli(args, { extraEnv: { ROO_STATE_MAX_FILE_BYTES: '1000' } })
    if (badEnd(r)) record('grep', name, badEnd(r), endDetail(r))
    else if (!skippedSaid(r)) record('grep', name, 'silent', r.out.trim().split('\n').at(-1))
    else record('grep', name, 'survived')
  }
  const odd = makeStore(path.join(dir, 'odd'), 6)
  const files = {
    'a FIFO': (f) => spawnSync('mkfifo', [f]),
    '1 GB of NULs': (f) => {
      const fd = fs.openSync(f, 'w')
      fs.ftruncateSync(fd, 1e9)
      fs.closeSync(fd)
    },
    'arrays 100 000 deep': (f) => fs.writeFileSync(f, `${'['.repeat(100_000)}${']'.repeat(100_000)}`),
  }
  let i = 0
  for (const [name, make] of Object.entries(files)) {
    const f = path.join(odd.tasks, odd.ids[i++], 'ui_messages.json')
    fs.rmSync(f, { force: true })
    make(f)
    const r = await cli(['grep', 'zzzz', '--tasks-dir', odd.tasks, '--cache-dir', path.join(dir, `cache-odd-${i}`), '--json'], { timeoutMs: 60_000, maxMiB: 1600 })
    const g = json(r)
    if (badEnd(r)) record('grep', `a task whose UI record is ${name}`, badEnd(r), endDetail(r))
    else if (!g || (g.filesSkipped ?? 0) < 1) record('grep', `a task whose UI record is ${name}`, 'silent', `"${g ? `${g.matches.length} matches in ${g.tasksMatched} of ${g.tasksSearched} tasks` : r.out.slice(0, 80)}" and no file said skipped`)
    else record('grep', `a task whose UI record is ${name}`, 'survived')
    fs.rmSync(f, { force: true })
    fs.copyFileSync(path.join(fixtureTasks[0], 'ui_messages.json'), f)
  }
}

// ------------------------------------------------------------------------------------------------
// 9. arguments: reversed date ranges, malformed MCP calls

export async function argumentsGroup() {
  const dir = path.join(work, 'arguments')
  const base = makeStore(dir, 4)
  const common = ['--tasks-dir', base.tasks, '--cache-dir', path.join(dir, 'roo-cache')]
  const reversed = ['--since', '2026-01-01', '--until', '2020-01-01']
  const index = path.join(dir, 'index')
  await cli(['index', ...common, '--embedder', 'none', '--index-dir', index])
  const commands = {
    usage: ['usage', ...common, ...reversed, '--json'],
    grep: ['grep', 'cache', ...common, ...reversed, '--json'],
    search: ['search', 'cache', ...common, '--index-dir', index, ...reversed, '--json'],
    'export xml --project': ['export', 'xml', '--project', work, ...common, ...reversed],
  }
  for (const [name, args] of Object.entries(commands)) {
    const r = await cli(args)
    if (badEnd(r)) record('arguments', `${name} with --since after --until`, badEnd(r), endDetail(r))
    else if (r.code !== 2) record('arguments', `${name} with --since after --until`, 'silent', `exit ${r.code}`)
    else record('arguments', `${name} with --since after --until`, 'survived')
  }
  const s = await mcpOpen([...common, '--index-dir', index])
  const range = { startDate: '2026-01-01', endDate: '2020-01-01' }
  const tools = {
    usage_report: { since: '2026-01-01', until: '2020-01-01' },
    grep_tasks: { pattern: 'cache', dateRange: range },
    search_tasks_semantic: { query: 'cache', dateRange: range },
    export_project_xml: { projectPath: work, startDate: '2026-01-01', endDate: '2020-01-01' },
  }
  for (const [tool, args] of Object.entries(tools)) {
    const a = await s.tool(tool, args)
    const code = a?.result?._meta?.code
    if (!a) record('arguments', `mcp ${tool} with a reversed range`, s.alive() ? 'hung' : 'crashed')
    else if (code !== 'INVALID_ARGUMENT') record('arguments', `mcp ${tool} with a reversed range`, 'silent', `answered ${code ?? 'without an error'}`)
    else record('arguments', `mcp ${tool} with a reversed range`, 'survived')
  }
  const malformed = {
    'tools/call whose name is a number': { name: 42, arguments: {} },
    'tools/call whose arguments are a string': { name: 'list_tasks', arguments: 'x' },
    'tools/call without a name': { arguments: {} },
  }
  let id = 500
  for (const [name, params] of Object.entries(malformed)) {
    s.send({ jsonrpc: '2.0', id, method: 'tools/call', params })
    const a = await s.answer(id++)
    const e = a?.error
    if (!a) record('arguments', name, s.alive() ? 'hung' : 'crashed')
    else if (!e || e.code !== -32602) record('arguments', name, 'silent', `answered ${e ? e.code : 'a result'}`)
    else if (/\n/.test(e.message) || e.message.length > 300) record('arguments', name, 'silent', `an unreadable message of ${e.message.length} characters`)
    else record('arguments', name, 'survived', e.message)
  }
  await s.close()
}

// ------------------------------------------------------------------------------------------------
// 10. writer locks: per user, private, never left behind

export async function locksGroup() {
  const dir = path.join(work, 'locks')
  const base = makeStore(dir, 4)
  const shared = path.join(env.TMPDIR, 'roo-state-core-writers')
  const run = [
    ['cleanup', '--tasks-dir', base.tasks, '--cache-dir', path.join(dir, 'roo-cache'), '--apply', '--older-than', '0', '--keep-last', '0', '--json'],
    ['rebuild', '--tasks-dir', base.tasks, '--cache-dir', path.join(dir, 'roo-cache'), '--apply', '--json'],
  ]
  for (const [label, where] of [['XDG_RUNTIME_DIR set', env.XDG_RUNTIME_DIR], ['XDG_RUNTIME_DIR unset', env.XDG_CACHE_HOME]]) {
    const extraEnv = label.endsWith('unset') ? { XDG_RUNTIME_DIR: '' } : {}
    // A lock a killed writer left in the per-user folder.
    const folder = path.join(where, 'roo-state-core', 'writers')
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 })
    const stale = path.join(folder, 'stale-0000.lock')
    fs.writeFileSync(stale, '{"pid":999999}')
    const ends = []
    for (const args of run) ends.push(await cli(args, { extraEnv }))
    const bad = ends.map(badEnd).find(Boolean)
    const left = (d) => (fs.existsSync(d) ? fs.readdirSync(d) : [])
    const mode = fs.existsSync(folder) ? fs.statSync(folder).mode & 0o777 : null
    const name = `two writers, ${label}`
    if (bad) record('locks', name, bad, ends.map(endDetail).join('; '))
    else if (ends.some((r) => r.code !== 0)) record('locks', name, 'crashed', ends.map((r) => `exit ${r.code}: ${r.err.split('\n')[0]}`).join('; '))
    else if (left(shared).length) record('locks', name, 'lost', `${left(shared).length} lock(s) left in the shared ${shared}`)
    else if (left(folder).length) record('locks', name, 'lost', `${left(folder).join(', ')} left in ${folder}`)
    else if (mode !== 0o700) record('locks', name, 'lost', `the lock folder's mode is ${mode?.toString(8)}`)
    else record('locks', name, 'survived')
    fs.rmSync(shared, { recursive: true, force: true })
  }
}

/** The last case: the decoy outside the stores, hashed before any group ran, is as it was. */
export function decoyCase(before) {
  const after = projectManifest(decoy)
  if (after === before) record('decoy', `no file outside the stores touched (sha256 of ${before.split('\n').length} files)`, 'survived')
  else {
    const a = new Set(after.split('\n'))
    const changed = before.split('\n').filter((l) => !a.has(l)).map((l) => l.split(' ')[0])
    const b = new Set(before.split('\n'))
    const added = after.split('\n').filter((l) => !b.has(l)).map((l) => l.split(' ')[0])
    record('decoy', 'no file outside the stores touched', 'lost', `changed or gone: ${changed.slice(0, 5).join(', ') || 'none'}; new: ${added.slice(0, 5).join(', ') || 'none'}`)
  }
}

