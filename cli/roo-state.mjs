#!/usr/bin/env node
// roo-state: command line over the roo-state-core binding.
import { createRequire } from 'node:module'
import path from 'node:path'
import process from 'node:process'

const core = createRequire(import.meta.url)('../index.js')

const HELP = `roo-state — read AI-agent task history (Roo Code, Zoo Code, Cline, Kilo Code)

Usage:
  roo-state scan <tasksDir> [--json] [--sequence]   skeleton of every task in a tasks/ folder
  roo-state show <taskDir> [--json]                  one task's skeleton
  roo-state --version

Examples:
  roo-state scan fixtures/stores/history-item-v3.50/tasks
  roo-state scan ~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks --json > skeletons.json

Exit codes: 0 ok, 1 failure, 2 bad usage.`

function fail(message, code = 1) {
  process.stderr.write(`roo-state: ${message}\n`)
  process.exit(code)
}

function short(text, n) {
  if (!text) return ''
  const one = text.replace(/\s+/g, ' ')
  return one.length > n ? `${one.slice(0, n - 1)}…` : one
}

async function scan(dir, flags) {
  const progress = process.stderr.isTTY && !flags.json
  const result = await core.scanTasks(path.resolve(dir), {
    includeSequence: flags.sequence,
    onProgress: progress ? ({ done, total }) => process.stderr.write(`\rscanning ${done}/${total}`) : undefined,
  })
  if (progress) process.stderr.write('\n')
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
    return
  }
  const rows = result.skeletons
    .slice()
    .sort((a, b) => (a.createdAtMs ?? 0) - (b.createdAtMs ?? 0))
    .map(s => ({
      id: s.taskId.slice(0, 8),
      created: s.metadata.createdAt.slice(0, 16).replace('T', ' '),
      mode: s.metadata.mode ?? '',
      msgs: s.metadata.messageCount,
      tools: s.metadata.actionCount,
      children: s.childTasks.length,
      parent: s.parentTaskId ? s.parentTaskId.slice(0, 8) : '',
      problems: s.diagnostics.filter(d => d.severity !== 'info').length,
      title: short(s.metadata.title, 50),
    }))
  console.table(rows)
  process.stdout.write(`${result.skeletons.length} task(s) of ${result.total}`)
  if (result.diagnostics.length) process.stdout.write(`; ${result.diagnostics.length} without a skeleton or about the folder:`)
  process.stdout.write('\n')
  for (const d of result.diagnostics) process.stdout.write(`  ${d.severity}: ${d.file}: ${d.message}\n`)
}

async function show(dir, flags) {
  const abs = path.resolve(dir)
  const s = await core.analyzeConversation(path.basename(abs), abs, { includeSequence: flags.json })
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(s, null, 2)}\n`)
    return
  }
  const m = s.metadata
  process.stdout.write(`${s.taskId}  ${m.title ?? ''}\n`)
  process.stdout.write(`  created ${m.createdAt}  last ${m.lastActivity}  mode ${m.mode ?? '-'}  workspace ${m.workspace ?? '-'}\n`)
  process.stdout.write(`  ${m.messageCount} messages, ${m.actionCount} tool calls, ${s.apiTotals.requests} requests, $${s.apiTotals.totalCost.toFixed(4)}\n`)
  if (s.parentTaskId) process.stdout.write(`  parent ${s.parentTaskId}\n`)
  for (const c of s.childTasks) {
    process.stdout.write(`  child ${c.ts ? new Date(c.ts).toISOString() : '?'} [${c.mode ?? '?'}] ${short(c.message, 90)}\n`)
  }
  for (const d of s.diagnostics) process.stdout.write(`  ${d.severity}: ${path.basename(d.file)} ${d.path}: ${d.message}\n`)
}

async function main(argv) {
  const flags = { json: argv.includes('--json'), sequence: argv.includes('--sequence') }
  const args = argv.filter(a => !a.startsWith('--'))
  if (argv.includes('--help') || argv.includes('-h') || args.length === 0) {
    process.stdout.write(`${HELP}\n`)
    return argv.includes('--help') || argv.includes('-h') ? 0 : 2
  }
  if (argv.includes('--version')) {
    process.stdout.write(`${core.version()}\n`)
    return 0
  }
  const [command, target] = args
  if (!target) fail(`${command} needs a directory; see roo-state --help`, 2)
  if (command === 'scan') await scan(target, flags)
  else if (command === 'show') await show(target, flags)
  else fail(`unknown command "${command}"; see roo-state --help`, 2)
  return 0
}

main(process.argv.slice(2)).then(
  code => process.exit(code),
  err => fail(err.code ? `${err.code}: ${err.message}` : err.message),
)
