// A store of N tasks for the benches: the fixture tasks of five eras copied under new ids
// (t000000, t000001, …) into a fresh temporary folder. Copies keep the stored parent links of
// their fixture, which name the fixtures' ids: those tasks count as orphans, and copies of one
// parent issue the same instructions, so the hierarchy pass meets many ambiguous children.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const ERAS = ['history-item-v3.50', 'native-tools-v3.45', 'stack-era-v3.20', 'v2-wrapper', 'claude-dev-2024']

export function copyStore(root, n, prefix) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const tasks = path.join(work, 'store', 'tasks')
  const cacheDir = path.join(work, 'cache')
  fs.mkdirSync(tasks, { recursive: true })
  const sources = []
  for (const s of ERAS) {
    const dir = path.join(root, 'fixtures', 'stores', s, 'tasks')
    for (const t of fs.readdirSync(dir)) if (fs.statSync(path.join(dir, t)).isDirectory()) sources.push(path.join(dir, t))
  }
  const ids = []
  for (let i = 0; i < n; i++) {
    const id = `t${String(i).padStart(6, '0')}`
    fs.cpSync(sources[i % sources.length], path.join(tasks, id), { recursive: true })
    ids.push(id)
  }
  return { work, tasks, cacheDir, ids }
}

/**
 * An existing tasks folder (a generated store, e.g. roo-corpus --tasks 50000) for the benches:
 * left as it is but for the modification times a one-change round touches; the cache goes to a
 * fresh temporary folder.
 */
export function generatedStore(tasks, prefix) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const ids = fs.readdirSync(tasks, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name)
  return { work, tasks, cacheDir: path.join(work, 'cache'), ids }
}

/** A folder given as a bench's first argument, else null. */
export function givenFolder(arg) {
  return arg && fs.existsSync(arg) && fs.statSync(arg).isDirectory() ? path.resolve(arg) : null
}

/** Milliseconds since `t` (a process.hrtime.bigint()). */
export const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6

/** The median time of `runs` calls of `fn(round)`, in milliseconds. */
export async function median(runs, fn) {
  const t = []
  for (let i = 0; i < runs; i++) {
    const s = process.hrtime.bigint()
    await fn(i)
    t.push(ms(s))
  }
  t.sort((a, b) => a - b)
  return t[Math.floor(t.length / 2)]
}

/**
 * Change one task of the store (round `round` picks a different one each time): its record file
 * is written again, then the handle is refreshed, which must see that one change.
 */
export async function changeOneTask(store, tasks, ids, round) {
  const dir = path.join(tasks, ids[(round * 37) % ids.length])
  const name = ['ui_messages.json', 'claude_messages.json', 'api_conversation_history.json'].find((n) => fs.existsSync(path.join(dir, n)))
  const f = path.join(dir, name)
  // As Roo, Zoo and Kilo Code write: a temporary file beside it, renamed over it.
  const tmp = path.join(dir, `.${name}.bench.tmp`)
  fs.copyFileSync(f, tmp)
  fs.renameSync(tmp, f)
  const r = await store.refresh()
  if (r.changed !== 1) throw new Error(`expected one change, got ${r.changed}`)
}

/**
 * Add a task to the store as a host starts one: a copy of task `from` under a new id, then a
 * refresh that must see one task added. Returns the new folder; `removeTask` takes it away.
 */
export async function addOneTask(store, tasks, from, round) {
  const dir = path.join(tasks, `bench-added-${process.pid}-${round}`)
  fs.cpSync(path.join(tasks, from), dir, { recursive: true })
  const r = await store.refresh()
  if (r.added !== 1) throw new Error(`expected one task added, got ${r.added}`)
  return dir
}

/** Remove a task `addOneTask` added, and refresh. */
export async function removeTask(store, dir) {
  fs.rmSync(dir, { recursive: true, force: true })
  const r = await store.refresh()
  if (r.removed !== 1) throw new Error(`expected one task removed, got ${r.removed}`)
}
