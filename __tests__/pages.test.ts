import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { cliAtTerminal, runCli, type CliRun, repoRoot, isolatedEnv, tempDir } from './helpers'
// @ts-expect-error an untyped JavaScript module of the CLI
import { usd } from '../cli/lib/format.mjs'

// What the command line does for a person: pages (tree, list) with their footers, the pager and
// colours at a terminal only, ids shown by their shortest unique prefix, one number format and day
// ranges in usage, help that names what was mistyped, grep's exit codes, one workspace rule that
// says when it matched nothing, and diagnose naming every damaged task the cache knows.

const fixtures = path.join(repoRoot, 'fixtures', 'stores')
const storeDir = (name: string) => path.join(fixtures, name, 'tasks')
const V350 = 'history-item-v3.50'
// Two tasks created in the same minute: their ids share `019cd6ce-`.
const ROOT = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'
const CHILD = '019cd6ce-5036-7f70-a11e-7f86d559ebe2'
const ALL = fs
  .readdirSync(fixtures)
  .filter((n) => fs.existsSync(storeDir(n)))
  .flatMap((n) => ['--tasks-dir', storeDir(n)])

let work: string
let env: NodeJS.ProcessEnv

function run(args: string[], extra: NodeJS.ProcessEnv = {}): CliRun {
  return runCli(args, { ...env, ...extra })
}

function json<T = any>(args: string[], code = 0): T {
  const r = run([...args, '--json'])
  if (r.code !== code) throw new Error(`roo-state ${args.join(' ')} exited ${r.code} (wanted ${code}):\n${r.stderr}\n${r.stdout}`)
  return JSON.parse(r.stdout) as T
}

/** `roo-state` at a terminal (null without script(1)). */
function atTerminal(args: string[], extra: NodeJS.ProcessEnv = {}): string | null {
  return cliAtTerminal(args, { ...env, TERM: 'xterm', COLUMNS: '120', ...extra })
}

beforeAll(() => {
  work = tempDir('roo-state-pages-')
  env = isolatedEnv(work)
})

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

describe('pages', () => {
  it('tree: the newest conversations of every store first, a page at a time, then how to see more', () => {
    const all = json(['tree', ...ALL, '--all'])
    const order = all.page.items.map((i: any) => i.taskId)
    const created = new Map<string, string>()
    for (const s of all.stores) for (const r of s.roots) created.set(r.taskId, r.createdAt)
    const dates = order.map((id: string) => created.get(id))
    expect(dates).toEqual([...dates].sort().reverse())
    expect(all.page.total).toBe(order.length)
    // Pages of 3: the same conversations in the same order, each once.
    const seen: string[] = []
    for (let offset = 0; offset < order.length; offset += 3) {
      const page = json(['tree', ...ALL, '--limit', '3', '--offset', String(offset)])
      expect(page.page.shown).toBe(Math.min(3, order.length - offset))
      seen.push(...page.page.items.map((i: any) => i.taskId))
    }
    expect(seen).toEqual(order)
    const text = run(['tree', ...ALL, '--limit', '3'])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain(`3 of ${order.length} conversations, newest first; dates UTC. The next 3: --offset 3; every one: --all.`)
  })

  it('tree <id> shows that conversation alone, without the store-wide counts', () => {
    const r = run(['tree', CHILD.slice(0, 12), '--tasks-dir', storeDir(V350)])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('◀')
    expect(r.stdout).not.toContain('tasks ·')
    expect(r.stdout).not.toContain('links:')
  })

  it('list: sorted, limited and filtered by the one workspace rule, saying when it matched nothing', () => {
    const byCost = json(['list', ...ALL, '--sort', 'totalCost', '--limit', '5'])
    expect(byCost.tasks).toHaveLength(5)
    const costs = byCost.tasks.map((t: any) => t.totalCost)
    expect(costs).toEqual([...costs].sort((a: number, b: number) => b - a))
    // A folder name is a workspace for every command.
    const meteo = json(['list', ...ALL, '--workspace', 'meteo-cli', '--all'])
    expect(meteo.total).toBeGreaterThan(0)
    for (const t of meteo.tasks) expect(t.workspace.endsWith('meteo-cli')).toBe(true)
    const tree = json(['tree', ...ALL, '--workspace', 'meteo-cli', '--all'])
    expect(tree.page.total).toBeGreaterThan(0)
    for (const cmd of ['list', 'tree']) {
      const none = run([cmd, ...ALL, '--workspace', 'no-such-folder'])
      expect(none.code).toBe(0)
      expect(none.stdout).toContain('No ')
      expect(none.stdout).toContain('of workspace "no-such-folder"')
      expect(none.stdout).toContain('meteo-cli')
    }
  })
})

describe('ids a person is shown', () => {
  it('two UUIDv7 ids of one minute are shown distinct, by their shortest unique prefix', () => {
    const r = run(['list', '--tasks-dir', storeDir(V350), '--all', '--sort', 'createdAt', '--order', 'asc'])
    expect(r.code, r.stderr).toBe(0)
    const ids = r.stdout
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/)[0])
      .filter((x) => x.startsWith('019'))
    expect(ids).toContain('019cd6ce-1')
    expect(ids).toContain('019cd6ce-5')
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id.length).toBeGreaterThanOrEqual(8)
    // The tree shows the same, and each prefix names its task.
    const tree = run(['tree', '--tasks-dir', storeDir(V350)])
    expect(tree.stdout).toContain('019cd6ce-1 · ')
    expect(tree.stdout).toContain('019cd6ce-5 · ')
    expect(json(['show', '019cd6ce-5', '--tasks-dir', storeDir(V350)]).skeleton.taskId).toBe(CHILD)
    expect(json(['show', '019cd6ce-1', '--tasks-dir', storeDir(V350)]).skeleton.taskId).toBe(ROOT)
  })
})

describe('the terminal', () => {
  it('the pager runs at a terminal only, and not with --no-pager', () => {
    const pager = { PAGER: 'sed s/^/paged:/' }
    const piped = run(['tree', '--tasks-dir', storeDir(V350)], pager)
    expect(piped.code).toBe(0)
    expect(piped.stdout).not.toContain('paged:')
    const tty = atTerminal(['tree', '--tasks-dir', storeDir(V350)], { ...pager, NO_COLOR: '1' })
    if (tty === null) return console.warn('[pages] the terminal checks skipped: script(1) is not installed')
    expect(tty).toContain('paged:')
    expect(atTerminal(['tree', '--tasks-dir', storeDir(V350), '--no-pager'], { ...pager, NO_COLOR: '1' })).not.toContain('paged:')
    // JSON is for scripts: never paged.
    expect(atTerminal(['tree', '--tasks-dir', storeDir(V350), '--json'], pager)).not.toContain('paged:')
  })

  it('colours at a terminal only, and never with NO_COLOR', () => {
    const esc = '\x1b['
    expect(run(['list', '--tasks-dir', storeDir(V350)]).stdout).not.toContain(esc)
    const tty = atTerminal(['list', '--tasks-dir', storeDir(V350), '--no-pager'])
    if (tty === null) return
    expect(tty).toContain(esc)
    expect(atTerminal(['list', '--tasks-dir', storeDir(V350), '--no-pager'], { NO_COLOR: '1' })).not.toContain(esc)
    expect(atTerminal(['tree', '--tasks-dir', storeDir(V350), '--no-pager'], { NO_COLOR: '1' })).not.toContain(esc)
  })
})

describe('usage', () => {
  it('one number format: separators, two decimals of cost, exact CSV decimals', () => {
    const r = run(['usage', 'monthly', ...ALL, '--tz', 'UTC'])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.split('\n')
    const head = lines.findIndex((l) => l.startsWith('Month'))
    const total = lines.find((l) => l.startsWith('Total'))!
    const costAt = lines[head].indexOf('Cost (USD)') + 'Cost (USD)'.length
    for (const l of [...lines.slice(head + 2).filter((x) => /^\d{4}-\d{2}/.test(x)), total]) {
      const cost = l.slice(0, costAt).trim().split(/\s+/).pop()!
      expect(cost).toMatch(/^\d{1,3}(,\d{3})*\.\d{2}$/)
    }
    expect(total).toMatch(/\d,\d{3},\d{3}/)
    const csv = run(['usage', 'tasks', ...ALL, '--csv', '--cost', 'calculate']).stdout.trim().split('\n')
    const numbers = csv.slice(1).flatMap((l) => l.split(',')).filter((c) => /^-?[\d.e+-]+$/.test(c))
    expect(numbers.length).toBeGreaterThan(100)
    for (const n of numbers) {
      expect(n).toMatch(/^-?\d+(\.\d+)?$/)
      // No float noise: at most 15 significant digits.
      expect(n.replace(/^-|\./g, '').replace(/^0+/, '').length).toBeLessThanOrEqual(15)
    }
  })

  it('a cost too large for toFixed is still written out with separators and cents', () => {
    expect(usd(1234.567)).toBe('1,234.57')
    expect(usd(-0.004)).toBe('0.00')
    expect(usd(2e21)).toBe('2,000,000,000,000,000,000,000.00')
    expect(usd(-1e308)).toMatch(/^-\d{1,3}(,\d{3}){102}\.00$/)
  })

  it('tasks: an id column with each task\'s shortest unique prefix, and --limit keeps the totals', () => {
    const all = json(['usage', 'tasks', ...ALL])
    const r = run(['usage', 'tasks', ...ALL, '--limit', '3'])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.split('\n')
    expect(lines.find((l) => l.startsWith('Id '))).toBeDefined()
    const first = all.rows[0].key as string
    expect(lines.some((l) => l.startsWith(first.slice(0, 8)))).toBe(true)
    expect(r.stdout).toContain(`${all.rows.length - 3} more rows not shown`)
    const limited = json(['usage', 'tasks', ...ALL, '--limit', '3'])
    expect(limited.rows).toHaveLength(3)
    expect(limited.rowsLeftOut).toBe(all.rows.length - 3)
    expect(limited.totals).toEqual(all.totals)
  })

  it('models and modes rows show the file operations of their requests', () => {
    const r = run(['usage', 'models', ...ALL])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('Files r/w/e')
    const models = json(['usage', 'models', ...ALL])
    const reads = models.rows.reduce((n: number, x: any) => n + x.files.reads, 0)
    expect(reads).toBe(models.totals.files.reads)
    expect(reads).toBeGreaterThan(0)
  })

  it('days: compact and relative forms, and a reversed range is an error', () => {
    const compact = json(['usage', 'daily', ...ALL, '--tz', 'UTC', '--since', '20260301', '--until', '20260331'])
    expect(compact.since).toBe('2026-03-01')
    expect(compact.rows.every((x: any) => x.key >= '2026-03-01' && x.key <= '2026-03-31')).toBe(true)
    const week = json(['usage', 'daily', ...ALL, '--tz', 'UTC', '--since', '7d'])
    const today = new Date().toISOString().slice(0, 10)
    const sevenDaysAgo = new Date(Date.parse(`${today}T00:00:00Z`) - 7 * 86_400_000).toISOString().slice(0, 10)
    expect(week.since).toBe(sevenDaysAgo)
    for (const cmd of [['usage', 'daily'], ['list'], ['tree']]) {
      const r = run([...cmd, ...ALL, '--since', '2026-03-01', '--until', '2026-01-01'])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('The range is reversed: --since 2026-03-01 is after --until 2026-01-01')
    }
    const bad = run(['usage', 'daily', ...ALL, '--since', 'last tuesday'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--since takes a day')
  })
})

describe('help and mistakes', () => {
  it('the command list is aligned on the longest usage that fits', () => {
    const r = run(['--help'])
    const lines = r.stdout.split('\n')
    const from = lines.indexOf('Commands:') + 1
    const to = lines.indexOf('', from)
    const starts = new Set<number>()
    for (const l of lines.slice(from, to)) {
      // `  usage  summary`, or a summary alone under a usage too long for the column.
      const m = /^ {2}\S+(?: \S+)* {2,}/.exec(l) ?? /^ {3,}/.exec(l)
      if (m) starts.add(m[0].length)
    }
    expect(starts.size).toBe(1)
    expect([...starts][0]).toBeLessThan(40)
  })

  it('a mistyped command or option is named, with what was meant', () => {
    const cmd = run(['tre'])
    expect(cmd.code).toBe(2)
    expect(cmd.stderr).toContain('Unknown command "tre". Did you mean `roo-state tree`?')
    const opt = run(['list', '--limt', '3'])
    expect(opt.code).toBe(2)
    expect(opt.stderr).toContain('list has no option --limt (did you mean --limit?)')
    const global = run(['--jsn'])
    expect(global.code).toBe(2)
    expect(global.stderr).toContain('--jsn is not an option of roo-state (did you mean --json?)')
  })

  it('grep exits 1 when nothing matched, as grep and ripgrep do', () => {
    const hit = run(['grep', 'meteo', '--tasks-dir', storeDir(V350)])
    expect(hit.code, hit.stderr).toBe(0)
    const miss = run(['grep', 'no line holds this 8f2c1', '--tasks-dir', storeDir(V350)])
    expect(miss.code).toBe(1)
    expect(miss.stdout).toContain('0 matches')
  })
})

describe('diagnose', () => {
  it('names every task the cache knows to be damaged, not only the recent ones', () => {
    const dir = storeDir('damaged')
    run(['cache', 'build', '--tasks-dir', dir])
    const r = json(['diagnose', '--tasks-dir', dir, '--recent', '1'])
    const [l] = r.locations
    expect(l.recentTasks).toHaveLength(1)
    const scan = json(['scan', dir])
    const flagged = new Set<string>()
    for (const s of scan.stores[0].skeletons) if (s.diagnostics.some((d: any) => d.severity !== 'info')) flagged.add(s.taskId)
    for (const d of scan.stores[0].diagnostics) flagged.add(path.basename(d.file))
    expect(l.damagedTasks.map((t: any) => t.taskId).sort()).toEqual([...flagged].sort())
    expect(l.damagedTasks.length).toBeGreaterThan(1)
    const text = run(['diagnose', '--tasks-dir', dir]).stdout
    expect(text).toContain(`damaged tasks (every task, as our cache last read them): ${l.damagedTasks.length}`)
  })
})
