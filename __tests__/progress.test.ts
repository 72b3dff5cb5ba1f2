import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { core, repoRoot, tempDir } from './helpers'

// Progress reports reach the callback before the call's promise settles, even when the JavaScript
// thread is busy while the work ends (then the completion and the reports wait in different
// queues, and the completion's would otherwise be served first).

const tasksDir = path.join(repoRoot, 'fixtures', 'stores', 'native-tools-v3.45', 'tasks')

/** Keeps the JavaScript thread busy for `ms`, as a caller doing other work would. */
function busy(ms: number) {
  const until = Date.now() + ms
  while (Date.now() < until) {
    // spin
  }
}

type Seen = Array<{ done: number; total: number }>

function completed(seen: Seen): boolean {
  return seen.length > 0 && Math.max(...seen.map((p) => p.done)) === seen[0].total
}

describe('progress before the promise settles', () => {
  it('scanTasks', async () => {
    for (let round = 0; round < 3; round++) {
      const seen: Seen = []
      const done = core.scanTasks(tasksDir, { onProgress: (p) => seen.push(p) })
      busy(300)
      await done
      expect(completed(seen), `round ${round}: ${JSON.stringify(seen)}`).toBe(true)
    }
  })

  it('TaskStore.open, from the folders and through a cache', async () => {
    for (const options of [{ noCache: true }, { cacheDir: tempDir('roo-progress-') }]) {
      const seen: Seen = []
      const opening = core.TaskStore.open({ tasksDir, ...options, onProgress: (p) => seen.push(p) })
      busy(300)
      const store = await opening
      expect(completed(seen), JSON.stringify(seen)).toBe(true)
      expect(store.size).toBeGreaterThan(0)
    }
  })

  it('buildSkeletonCache', async () => {
    const seen: Seen = []
    const building = core.buildSkeletonCache({ tasksDir, cacheDir: tempDir('roo-progress-'), onProgress: (p) => seen.push(p) })
    busy(300)
    await building
    expect(completed(seen), JSON.stringify(seen)).toBe(true)
  })
})
