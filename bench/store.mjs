// The benches' stores: by default the 5 000-task, ~850 MiB corpus of the roo-corpus generator, made
// once into bench/out/store-5000 (or the store named on the command line); with `shared`, 5 000
// copies of the real tasks of ../shared/fixtures/legacy-tasks (~850 MiB, most of it three long
// real tasks), made once into bench/out/shared-5000.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))

/** The tasks folder of `store` (default: the generated 5 000-task corpus, made when absent). */
export function benchTasksDir(store) {
  let dir = store
  if (!dir) {
    dir = path.join(here, 'out', 'store-5000')
    if (!fs.existsSync(path.join(dir, 'tasks'))) {
      execFileSync('cargo', ['run', '-q', '--release', '-p', 'roo-corpus', '--', '--out', dir, '--tasks', '5000', '--target-mib', '850', '--force'], {
        stdio: 'inherit',
        cwd: path.join(here, '..'),
      })
    }
  }
  return fs.existsSync(path.join(dir, 'tasks')) ? path.join(dir, 'tasks') : dir
}

/** The tasks folder of `count` copies of the shared fixtures' legacy tasks, under new ids (made
 *  when absent). Copies of a parent issue the same subtask instructions as their original. */
export function sharedCopiesTasksDir(count = 5000) {
  const shared = process.env.ROO_STATE_SHARED_DIR || path.join(here, '..', '..', 'shared')
  const legacy = path.join(shared, 'fixtures', 'legacy-tasks')
  const tasks = path.join(here, 'out', `shared-${count}`, 'tasks')
  if (fs.existsSync(tasks) && fs.readdirSync(tasks).length === count) return tasks
  const sources = []
  for (const group of fs.readdirSync(legacy).sort()) {
    const dir = path.join(legacy, group)
    if (!fs.statSync(dir).isDirectory()) continue
    for (const t of fs.readdirSync(dir).sort()) {
      if (fs.statSync(path.join(dir, t)).isDirectory()) sources.push(path.join(dir, t))
    }
  }
  fs.rmSync(tasks, { recursive: true, force: true })
  fs.mkdirSync(tasks, { recursive: true })
  for (let i = 0; i < count; i++) {
    const n = i.toString(16).padStart(12, '0')
    const id = `${n.slice(4)}-0000-4000-8000-${n}`
    fs.cpSync(sources[i % sources.length], path.join(tasks, id), { recursive: true })
  }
  return tasks
}
