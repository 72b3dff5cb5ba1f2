// The benches' default store: the 5 000-task, ~850 MiB corpus of the roo-corpus generator, made
// once into bench/out/store-5000 (or the store named on the command line).
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
