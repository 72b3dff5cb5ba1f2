#!/usr/bin/env node
// Export bench: a generated store of 10 000 tasks in one workspace (one project), exported as XML,
// and a store holding one conversation of 10 000 tasks, exported with every task's content.
// Every measurement runs in its own Node process so its peak RSS is its own. The baseline, measured
// in the same run on the same store, is a header scan (scanTasks): the least any export must read.
// Ratios of the one-conversation exports are against the scan of that store.
//
//   node bench/export.mjs [--tasks 10000] [--target-mib 400] [--keep]
//
// The store is generated with the roo-corpus CLI (crates/corpus) into $TMPDIR/roo-export-bench-<n>
// and kept between runs with --keep. Build the addon in release mode first (npm run build).

import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '..')
const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : dflt
}

// Child mode: run one measurement and print {ms, maxRssMiB, ...}.
if (args[0] === '--child') {
  const spec = JSON.parse(args[1])
  const core = (await import('node:module')).createRequire(import.meta.url)(path.join(repo, 'index.js'))
  process.env.ROO_STATE_CONFIG_DIR = spec.configDir
  const t0 = process.hrtime.bigint()
  let extra = {}
  if (spec.op === 'scan') {
    const r = await core.scanTasks(spec.tasksDir)
    extra = { tasks: r.skeletons.length }
  } else {
    const r = await core[spec.op](spec.options)
    extra = { tasks: r.tasks, conversations: r.conversations, bytes: r.bytes, messages: r.messages }
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  console.log(JSON.stringify({ ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, ...extra }))
  process.exit(0)
}

const tasks = Number(opt('--tasks', '10000'))
const targetMib = opt('--target-mib', '400')
const store = path.join(os.tmpdir(), `roo-export-bench-${tasks}-${targetMib}`)
const tasksDir = path.join(store, 'tasks')
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-export-bench-out-'))
const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-export-bench-config-'))

if (!fs.existsSync(path.join(store, 'truth.json'))) {
  console.error(`generating ${tasks} tasks (${targetMib} MiB, one workspace) in ${store} …`)
  const targetDir = process.env.CARGO_TARGET_DIR ?? path.join(repo, 'target')
  execFileSync('cargo', ['build', '--release', '-q', '-p', 'roo-corpus'], { cwd: repo, stdio: 'inherit' })
  const bin = path.join(targetDir, 'release', process.platform === 'win32' ? 'roo-corpus.exe' : 'roo-corpus')
  execFileSync(bin, ['--out', store, '--tasks', String(tasks), '--workspaces', '1', '--target-mib', targetMib, '--force'], {
    stdio: 'inherit',
  })
}
const truth = JSON.parse(fs.readFileSync(path.join(store, 'truth.json'), 'utf8'))
const workspace = truth.tasks[0].workspace
const bytesOnDisk = Number(execFileSync('du', ['-sb', tasksDir]).toString().split(/\s/)[0])

function measure(label, op, options, scanDir = tasksDir) {
  const spec = JSON.stringify({ op, options, tasksDir: scanDir, configDir })
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', spec], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`${label} failed: ${r.stderr}`)
  const out = JSON.parse(r.stdout.trim().split('\n').pop())
  return { label, ...out }
}

// The conversation with the most tasks, for the content export.
const children = new Map()
for (const t of truth.tasks) if (t.parent) children.set(t.parent, [...(children.get(t.parent) ?? []), t.task_id])
const size = id => 1 + (children.get(id) ?? []).reduce((n, c) => n + size(c), 0)
const roots = truth.tasks.filter(t => !t.parent).map(t => t.task_id)
const biggest = roots.reduce((a, b) => (size(b) > size(a) ? b : a), roots[0])

// A second store: one conversation of 10 000 tasks (a root, 99 children, 100 grandchildren each),
// written here in the history-item era's shape, to stream 10 000 sequences with their content.
const treeStore = path.join(os.tmpdir(), `roo-export-bench-tree-${tasks}`)
const treeTasks = path.join(treeStore, 'tasks')
const treeRoot = '00000000-0000-7000-8000-000000000000'
if (!fs.existsSync(path.join(treeStore, 'done'))) {
  console.error(`generating one conversation of ${tasks} tasks in ${treeStore} …`)
  fs.rmSync(treeStore, { recursive: true, force: true })
  fs.mkdirSync(treeTasks, { recursive: true })
  const id = n => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`
  const filler = i => `Step ${i}: `.concat('the cache keeps forecasts for thirty minutes; '.repeat(16))
  const t0 = Date.UTC(2026, 0, 1)
  for (let n = 0; n < tasks; n++) {
    const parent = n === 0 ? undefined : n < 100 ? 0 : 1 + ((n - 100) % 99)
    const dir = path.join(treeTasks, id(n))
    fs.mkdirSync(dir)
    const ts = t0 + n * 60_000
    const instruction = `Task ${n}: update the forecast cache (part ${n}).`
    const ui = [{ ts, type: 'say', say: 'text', text: instruction }]
    for (let i = 1; i <= 10; i++) {
      ui.push({ ts: ts + i * 1000, type: 'say', say: 'api_req_started', text: JSON.stringify({ tokensIn: 1000, tokensOut: 100, cost: 0.001 }) })
      ui.push({ ts: ts + i * 1000 + 500, type: 'say', say: 'text', text: filler(i), partial: false })
      ui.push({ ts: ts + i * 1000 + 700, type: 'ask', ask: 'tool', text: JSON.stringify({ tool: 'readFile', path: `src/f${i}.rs` }) })
    }
    ui.push({ ts: ts + 20_000, type: 'say', say: 'completion_result', text: `Done with part ${n}.` })
    fs.writeFileSync(path.join(dir, 'ui_messages.json'), JSON.stringify(ui))
    const item = { id: id(n), number: n + 1, ts: ts + 20_000, task: instruction, workspace: '/home/dev/projets/tree', mode: 'code', status: 'completed' }
    if (parent !== undefined) item.parentTaskId = id(parent)
    fs.writeFileSync(path.join(dir, 'history_item.json'), JSON.stringify(item))
  }
  fs.writeFileSync(path.join(treeStore, 'done'), '')
}

const runs = [
  measure('baseline: scanTasks (headers)', 'scan', {}),
  measure('exportProjectXml → file', 'exportProjectXml', {
    projectPath: workspace,
    tasksDir,
    filePath: 'project.xml',
    outputRoot: outDir,
  }),
  measure('exportProjectXml → string', 'exportProjectXml', { projectPath: workspace, tasksDir }),
  measure(`exportConversationXml includeContent (${size(biggest)} tasks) → file`, 'exportConversationXml', {
    conversationId: biggest,
    tasksDir,
    includeContent: true,
    filePath: 'conversation.xml',
    outputRoot: outDir,
  }),
  measure('exportTaskListCsv → file', 'exportTaskListCsv', { tasksDir, filePath: 'tasks.csv', outputRoot: outDir }),
  measure('exportTaskXml of one root task (parent looked up over the store)', 'exportTaskXml', {
    taskId: biggest,
    tasksDir,
    includeContent: true,
  }),
  measure('baseline: scanTasks (headers), one-conversation store', 'scan', {}, treeTasks),
  measure(`exportConversationXml includeContent, one conversation of ${tasks} tasks → file`, 'exportConversationXml', {
    conversationId: treeRoot,
    tasksDir: treeTasks,
    includeContent: true,
    filePath: 'tree.xml',
    outputRoot: outDir,
  }),
  measure(`exportConversationJson skeletons, one conversation of ${tasks} tasks → file`, 'exportConversationJson', {
    conversationId: treeRoot,
    tasksDir: treeTasks,
    includeContent: true,
    variant: 'skeletons',
    prettyPrint: false,
    filePath: 'tree.json',
    outputRoot: outDir,
  }),
]

console.log(`store: ${truth.tasks.length} tasks, ${(bytesOnDisk / 1048576).toFixed(0)} MiB, 1 workspace (${workspace})`)
console.log('| measurement | ms | × baseline | peak RSS MiB | tasks | output MiB |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const r of runs) {
  const base = r.label.includes('one-conversation') || r.label.includes('one conversation') ? runs.find(x => x.label.includes('one-conversation')) : runs[0]
  console.log(
    `| ${r.label} | ${r.ms.toFixed(0)} | ${(r.ms / base.ms).toFixed(2)} | ${r.maxRssMiB.toFixed(0)} | ${r.tasks ?? ''} | ${
      r.bytes ? (r.bytes / 1048576).toFixed(2) : ''
    } |`,
  )
}
fs.rmSync(outDir, { recursive: true, force: true })
fs.rmSync(configDir, { recursive: true, force: true })
if (!args.includes('--keep')) {
  fs.rmSync(store, { recursive: true, force: true })
  fs.rmSync(treeStore, { recursive: true, force: true })
}
