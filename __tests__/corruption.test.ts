import { describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { core, tempDir } from './helpers'

const good = [
  { ts: 1760000000000, type: 'say', say: 'text', text: 'Fix the login form validation' },
  { ts: 1760000001000, type: 'say', say: 'api_req_started', text: '{"apiProtocol":"anthropic","tokensIn":10,"tokensOut":5,"cost":0.01}' },
  { ts: 1760000002000, type: 'ask', ask: 'tool', text: '{"tool":"readFile","path":"src/login.ts"}' },
  { ts: 1760000003000, type: 'say', say: 'text', text: 'The validation is missing a trim.' },
  { ts: 1760000004000, type: 'say', say: 'completion_result', text: 'Done: added the trim.' },
]
const goodText = JSON.stringify(good)

/** kind → files to write into the task directory, and the file a diagnostic must name. */
const damage: Record<string, { files: Record<string, Buffer | 'dir'>; names?: string; recovered?: number }> = {
  'utf8-bom': { files: { 'ui_messages.json': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(goodText)]) }, names: 'ui_messages.json', recovered: 5 },
  utf16: { files: { 'ui_messages.json': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(goodText, 'utf16le')]) }, names: 'ui_messages.json', recovered: 5 },
  'lone-surrogate': { files: { 'ui_messages.json': Buffer.from(goodText.replace('missing a trim', 'missing \\ud83d a trim')) }, names: 'ui_messages.json', recovered: 5 },
  'null-entry': { files: { 'ui_messages.json': Buffer.from(JSON.stringify([null, ...good, null])) }, names: 'ui_messages.json', recovered: 5 },
  truncated: { files: { 'ui_messages.json': Buffer.from(goodText.slice(0, goodText.indexOf('"completion_result"') + 5)) }, names: 'ui_messages.json', recovered: 4 },
  jsonl: { files: { 'ui_messages.json': Buffer.from(good.map(m => JSON.stringify(m)).join('\n')) }, names: 'ui_messages.json', recovered: 5 },
  'empty-api': { files: { 'ui_messages.json': Buffer.from(goodText), 'api_conversation_history.json': Buffer.alloc(0) }, names: 'api_conversation_history.json', recovered: 5 },
  'invalid-utf8': { files: { 'ui_messages.json': Buffer.concat([Buffer.from(goodText.slice(0, 60)), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(goodText.slice(60))]) }, names: 'ui_messages.json', recovered: 5 },
  'file-is-directory': { files: { 'ui_messages.json': 'dir', 'api_conversation_history.json': Buffer.from('[]') }, names: 'ui_messages.json', recovered: 0 },
  'bad-history-item': { files: { 'ui_messages.json': Buffer.from(goodText), 'history_item.json': Buffer.from('{"id": "x", "ts": ') }, names: 'history_item.json', recovered: 5 },
  'older-era-claude-messages': { files: { 'claude_messages.json': Buffer.from(goodText) }, recovered: 5 },
  'not-json': { files: { 'ui_messages.json': Buffer.from('this is not json at all') }, names: 'ui_messages.json', recovered: 0 },
}

function buildStore(): string {
  const root = tempDir()
  const tasks = path.join(root, 'tasks')
  fs.mkdirSync(tasks)
  for (const [kind, spec] of Object.entries(damage)) {
    const dir = path.join(tasks, kind)
    fs.mkdirSync(dir)
    for (const [name, content] of Object.entries(spec.files)) {
      if (content === 'dir') fs.mkdirSync(path.join(dir, name))
      else fs.writeFileSync(path.join(dir, name), content)
    }
  }
  fs.mkdirSync(path.join(tasks, 'no-files'))
  fs.writeFileSync(path.join(tasks, 'stray-file.txt'), 'not a task')
  fs.writeFileSync(path.join(tasks, '_index.json'), '{"version":1,"entries":[]}')
  return tasks
}

describe('corruption suite: bad input is normal input', () => {
  it('every task yields a skeleton or a diagnostic naming file and problem; the scan resolves', async () => {
    const tasks = buildStore()
    const r = await core.scanTasks(tasks, { includeSequence: true })
    const byId = new Map(r.skeletons.map(s => [s.taskId, s]))
    for (const [kind, spec] of Object.entries(damage)) {
      const s = byId.get(kind)
      expect(s, kind).toBeDefined()
      expect(s!.files.uiMessages, kind).toBe(spec.recovered)
      if (spec.names) {
        const named = s!.diagnostics.filter(d => d.file.endsWith(spec.names!))
        expect(named.length, `${kind} names ${spec.names}`).toBeGreaterThan(0)
        for (const d of named) expect(d.message.length).toBeGreaterThan(5)
      }
    }
    expect(byId.has('no-files')).toBe(false)
    const noFiles = r.diagnostics.find(d => d.file.endsWith('no-files'))
    expect(noFiles?.code).toBe('no_task_files')
    expect(r.diagnostics.some(d => d.file.endsWith('stray-file.txt'))).toBe(true)
    expect(r.total).toBe(Object.keys(damage).length + 1)
  })

  it('recovered messages keep their meaning', async () => {
    const tasks = buildStore()
    const r = await core.scanTasks(tasks)
    for (const s of r.skeletons) {
      if (damage[s.taskId].recovered! >= 4) {
        if (s.taskId === 'invalid-utf8') expect(s.instruction).toMatch(/^Fix t\uFFFD+he login form validation$/)
        else expect(s.instruction, s.taskId).toBe('Fix the login form validation')
        expect(s.metadata.createdAt, s.taskId).toBe(new Date(1760000000000).toISOString())
      }
    }
    const trunc = r.skeletons.find(s => s.taskId === 'truncated')!
    expect(trunc.diagnostics.map(d => d.code)).toContain('truncated')
    expect(r.skeletons.find(s => s.taskId === 'utf8-bom')!.isCompleted).toBe(true)
  })

  it('readers report codes for each kind', async () => {
    const tasks = buildStore()
    const codes = async (kind: string) =>
      (await core.readUiMessages(path.join(tasks, kind, 'ui_messages.json'))).diagnostics.map(d => d.code)
    expect(await codes('utf8-bom')).toContain('utf8_bom')
    expect(await codes('utf16')).toContain('utf16')
    expect(await codes('lone-surrogate')).toContain('lone_surrogate')
    expect(await codes('null-entry')).toContain('null_entry')
    expect(await codes('jsonl')).toContain('jsonl')
    expect(await codes('invalid-utf8')).toContain('invalid_utf8')
    expect(await codes('file-is-directory')).toContain('unreadable')
    expect(await codes('not-json')).toContain('invalid_json')
  })
})
