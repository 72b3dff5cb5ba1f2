// Task folders of every host as it writes them today (fixtures/stores/*/host.json: Cline 3.4x with
// and without a UI record, Kilo Code, Zoo Code), laid out under the host's own extension folder:
// the host each task is placed in, its counts, its exports, and the host × era table of
// docs/hosts.md, which this test fills from the fixtures (ROO_STATE_UPDATE_DOCS=1 rewrites it).

import { describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { ConversationSkeleton } from '../index.js'
import { core, readJson, repoRoot, tempDir } from './helpers'

interface Host {
  host: string
  era: string
  extensionId: string
}
interface Expected {
  taskId: string
  title: string | null
  instruction: string | null
  mode: string | null
  createdAt: number | null
  lastActivity: number | null
  actions?: number
  messages?: number
  totalCost: number
  isCompleted: boolean
}

const storesDir = path.join(repoRoot, 'fixtures', 'stores')
const allStores = fs.readdirSync(storesDir).filter(d => fs.existsSync(path.join(storesDir, d, 'expected'))).sort()
const hostStores = allStores.filter(d => fs.existsSync(path.join(storesDir, d, 'host.json')))

/** Copy a store's tasks under `<tmp>/Code/User/globalStorage/<extensionId>/tasks`, as the host keeps them. */
function layOut(store: string, host: Host): string {
  const tasks = path.join(tempDir('roo-hosts-'), 'Code', 'User', 'globalStorage', host.extensionId, 'tasks')
  fs.cpSync(path.join(storesDir, store, 'tasks'), tasks, { recursive: true })
  return tasks
}

function xmllint(xml: string, schema: string): void {
  const file = path.join(tempDir('roo-hosts-xml-'), 'export.xml')
  fs.writeFileSync(file, xml)
  try {
    execFileSync('xmllint', ['--noout', '--schema', path.join(repoRoot, 'schemas', `${schema}.xsd`), file], {
      stdio: 'pipe',
    })
  } catch (e) {
    const err = e as { code?: string; stderr?: Buffer }
    if (err.code === 'ENOENT') throw new Error('xmllint is missing: apt-get install -y libxml2-utils')
    throw new Error(`${schema}.xsd rejects the export: ${err.stderr?.toString() ?? String(e)}`)
  }
}

describe('task folders of every host, under their own extension folder', () => {
  it('has a store for each host of today', () => {
    const hosts = new Set(hostStores.map(s => readJson<Host>(path.join(storesDir, s, 'host.json')).host))
    expect([...hosts].sort()).toEqual([
      'cline',
      'kilo-code',
      'roo',
      'zoo-code',
    ])
  })

  for (const store of hostStores) {
    const host = readJson<Host>(path.join(storesDir, store, 'host.json'))
    describe(`${store} (${host.era})`, () => {
      const expectedDir = path.join(storesDir, store, 'expected')
      const expected = fs.readdirSync(expectedDir).map(f => readJson<Expected>(path.join(expectedDir, f)))

      it('every task is placed in its host, with its counts and no warning about its own kinds', async () => {
        const tasks = layOut(store, host)
        const r = await core.scanTasks(tasks, { includeSequence: true })
        expect(r.diagnostics).toEqual([])
        for (const e of expected) {
          const s = r.skeletons.find(x => x.taskId === e.taskId)
          expect(s, e.taskId).toBeDefined()
          if (!s) continue
          expect(s.metadata.source).toBe(host.host)
          expect(s.metadata.title ?? null).toBe(e.title)
          expect(s.metadata.mode ?? null).toBe(e.mode)
          expect(s.metadata.actionCount, 'tool calls').toBe(e.actions)
          expect(s.metadata.messageCount, 'messages').toBe(e.messages)
          expect(s.isCompleted).toBe(e.isCompleted)
          expect(s.createdAtMs ?? null).toBe(e.createdAt)
          expect(s.lastActivityMs ?? null).toBe(e.lastActivity)
          const unusual = s.diagnostics.filter(d => d.code === 'unknown_value')
          expect(unusual, `${e.taskId}: ${JSON.stringify(unusual)}`).toEqual([])
          const first = s.sequence?.find(i => 'role' in i)
          expect(first && 'role' in first ? [first.role, first.content] : null, 'the task opens the conversation').toEqual([
            'user',
            e.instruction,
          ])
        }
      })

      it('exports carry the task as the user wrote it, and the XML is valid', async () => {
        const tasks = layOut(store, host)
        for (const e of expected) {
          const xml = await core.exportTaskXml({ taskId: e.taskId, tasksDir: tasks, includeContent: true })
          expect(xml.content).toBeDefined()
          xmllint(xml.content ?? '', 'task')
          expect(xml.actions, 'tool calls in the XML').toBe(e.actions)
          const md = await core.exportConversationMarkdown({ conversationId: e.taskId, tasksDir: tasks })
          expect(md.content ?? '').toContain((e.instruction ?? '').split('\n')[0])
        }
      })
    })
  }
})

// ---- the table of docs/hosts.md -------------------------------------------------------------

const iso = (ms: number | undefined) => (ms === undefined ? '–' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'))
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ')
const short = (s: string | undefined, n: number) =>
  s === undefined ? '–' : cell(s.length > n ? `${s.slice(0, n - 1)}…` : s)

function row(store: string, era: string, s: ConversationSkeleton): string {
  const cost = s.apiTotals.requests > 0 ? `$${s.apiTotals.totalCost.toFixed(4)}` : '–'
  return [
    store,
    cell(era),
    s.metadata.source,
    short(s.metadata.title, 40),
    short(s.instruction?.replace(/\s*\n\s*/g, ' ⏎ '), 64),
    String(s.metadata.messageCount),
    String(s.metadata.actionCount),
    `${iso(s.createdAtMs)} → ${iso(s.lastActivityMs)} (${s.metadata.datesFrom})`,
    s.metadata.mode ?? '–',
    cost,
    s.isCompleted ? 'yes' : 'no',
  ].join(' | ')
}

/** The era of the stores written before host.json (fixtures/stores/README.md describes each). */
const eras: Record<string, string> = {
  'claude-dev-2024': 'Claude Dev 2.0 (Oct 2024)',
  damaged: 'damaged files, Roo Code 3.1x–3.5x',
  'history-item-v3.50': 'Roo Code 3.50 (2026)',
  'native-tools-v3.45': 'Roo Code 3.45 (2026)',
  'stack-era-v3.20': 'Roo Code 3.20 (2025)',
  'v2-wrapper': 'Roo Code, versioned API file (2026)',
}

async function table(): Promise<string> {
  const header =
    '| store | era | host | title | first instruction | messages | tool calls | dates (from) | mode | cost | completed |\n' +
    '|---|---|---|---|---|---|---|---|---|---|---|'
  const rows: string[] = []
  for (const store of allStores) {
    const hostFile = path.join(storesDir, store, 'host.json')
    const host = fs.existsSync(hostFile) ? readJson<Host>(hostFile) : undefined
    const tasks = host ? layOut(store, host) : path.join(storesDir, store, 'tasks')
    const r = await core.scanTasks(tasks, { includeSequence: false })
    const skeletons = [...r.skeletons].sort((a, b) => a.taskId.localeCompare(b.taskId))
    for (const s of skeletons) rows.push(`| ${row(store, host?.era ?? eras[store] ?? store, s)} |`)
  }
  return `${header}\n${rows.join('\n')}`
}

describe('docs/hosts.md', () => {
  it('holds the host × era table as the fixtures give it today', async () => {
    const doc = path.join(repoRoot, 'docs', 'hosts.md')
    const text = fs.readFileSync(doc, 'utf8')
    const start = '<!-- table:start (written by __tests__/hosts.test.ts) -->'
    const end = '<!-- table:end -->'
    const a = text.indexOf(start)
    const b = text.indexOf(end)
    expect(a, 'the table markers').toBeGreaterThanOrEqual(0)
    expect(b).toBeGreaterThan(a)
    const fresh = await table()
    const current = text.slice(a + start.length, b).trim()
    if (process.env.ROO_STATE_UPDATE_DOCS === '1' && current !== fresh) {
      fs.writeFileSync(doc, `${text.slice(0, a + start.length)}\n${fresh}\n${text.slice(b)}`)
      return
    }
    expect(current, 'run ROO_STATE_UPDATE_DOCS=1 npx vitest run __tests__/hosts.test.ts to refresh it').toBe(fresh)
  })
})

describe('condense check on a task without a UI record', () => {
  it('counts the context from the API history and says the rules are not the host’s own', () => {
    const tasks = path.join(storesDir, 'cline-v3.4x', 'tasks')
    const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
    const args = ['condense', 'check', '1771300000000', '--tasks-dir', tasks, '--context-window', '200000']
    const r = JSON.parse(execFileSync(process.execPath, [cli, ...args, '--json'], { encoding: 'utf8' })) as {
      host: string
      contextFrom: string
      settings: { totalTokens: number }
      decision: { prevContextTokens: number; action: string }
      notes: string[]
    }
    expect(r.host).toBe('cline')
    expect(r.contextFrom).toBe('counted_from_api_history')
    // The eight messages of the fixture hold a few hundred tokens; a zero would mean "not counted".
    expect(r.settings.totalTokens).toBeGreaterThan(300)
    expect(r.decision.prevContextTokens).toBeGreaterThanOrEqual(r.settings.totalTokens)
    expect(r.decision.action).toBe('none')
    expect(r.notes.some(n => n.includes('Cline manages its context by rules of its own'))).toBe(true)
    const text = execFileSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
    expect(text).toContain('usage so far: not recorded')
    expect(text).not.toContain('$0.0000')
  })
})
