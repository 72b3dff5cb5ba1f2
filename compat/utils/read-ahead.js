'use strict'
/**
 * Read-ahead for callers that walk a tasks folder one task at a time, as the legacy server's
 * build_skeleton_cache handler does (`readdir`, then `analyzeConversation` for each folder in turn,
 * awaiting each). Each call waits for one task, so the second core idles and every task pays its
 * full read and parse in turn. Here, the first call for a folder lists its parent once (in the order
 * Node's `readdir` gives, the order such a walk follows) and, from then on, each call starts the
 * native legacy analysis of the next few folders of that listing on the libuv pool, so they are read
 * and analysed while the caller converts, writes and awaits the current one.
 *
 * Used only when compat may read natively (nothing replaced Node's file functions) and only for a
 * task whose folder name is its id. A folder the listing does not hold (made after it) is left to the
 * caller's own path; analyses started for folders the caller then skips are dropped once it has gone
 * past them. A task is read at most a few tasks ahead of its call, milliseconds apart: the same
 * window in which the legacy analysis reads its four files one after another.
 */
const path = require('path')
const fs = require('fs')
const binding = require('../../index.js')

/** Tasks analysed ahead of the current one (ROO_STATE_COMPAT_READ_AHEAD, 0 turns it off). */
function windowSize() {
  const n = Number(process.env.ROO_STATE_COMPAT_READ_AHEAD ?? 2)
  return Number.isInteger(n) && n >= 0 ? Math.min(n, 16) : 2
}

/** The walk of one tasks folder: its listing and the analyses started ahead of the caller. */
class Walk {
  constructor(dir, names) {
    this.dir = dir
    this.names = names
    this.position = new Map(names.map((name, i) => [name, i]))
    /** name → { at: index in the listing, result: Promise } */
    this.started = new Map()
  }

  /** The analysis of `name`: the one started ahead, else one started now. */
  take(name) {
    const ahead = this.started.get(name)
    this.started.delete(name)
    return ahead ? ahead.result : analyse(name, path.join(this.dir, name))
  }

  /** Starts the next `count` folders after index `i`, and drops those the caller went past. */
  advance(i, count) {
    for (const [name, job] of this.started) if (job.at <= i) this.started.delete(name)
    for (let k = i + 1; k <= i + count && k < this.names.length; k++) {
      const name = this.names[k]
      if (!this.started.has(name)) this.started.set(name, { at: k, result: analyse(name, path.join(this.dir, name)) })
    }
  }
}

/** The native analysis of one folder; a failure is carried in the result, never left unhandled. */
function analyse(taskId, taskPath) {
  return binding.compatAnalyzeLegacyFolder(taskId, taskPath).then(
    (folder) => ({ folder }),
    (error) => ({ error }),
  )
}

/** The folder's dates as the legacy analysis reads them off `fs.stat(taskPath)` (whose dates
 *  round the fractional milliseconds). */
function dirStats(folder) {
  if (folder.dirMtimeMs === null || folder.dirMtimeMs === undefined) return null
  const mtime = new Date(Math.round(folder.dirMtimeMs))
  const birthtime =
    folder.dirBirthtimeMs === null || folder.dirBirthtimeMs === undefined ? mtime : new Date(Math.round(folder.dirBirthtimeMs))
  return { mtime, birthtime }
}

let current = null

/** The walk of `dir`, listed anew when the caller starts over or asks for a folder it lacks. */
function walkOf(dir, name) {
  if (current && current.dir === dir) {
    const i = current.position.get(name)
    if (i !== undefined && i > 0) return current
  }
  let names
  try {
    names = fs.readdirSync(dir)
  } catch {
    return null
  }
  current = new Walk(dir, names)
  return current.position.has(name) ? current : null
}

/**
 * The legacy analysis of `taskPath` and its folder's dates (`{ analysis, dirStats }`, `analysis`
 * null where the legacy builder skips the task), or `undefined` when the read-ahead does not
 * serve this call (off, an id that is not the folder's name, a folder not in the listing).
 */
async function legacyFolder(taskId, taskPath) {
  const count = windowSize()
  if (count === 0) return undefined
  const dir = path.dirname(taskPath)
  const name = path.basename(taskPath)
  if (String(taskId) !== name) return undefined
  const walk = walkOf(dir, name)
  if (!walk) return undefined
  const i = walk.position.get(name)
  const result = walk.take(name)
  walk.advance(i, count)
  const { folder, error } = await result
  if (error) throw error
  return { analysis: folder.analysis, dirStats: dirStats(folder) }
}

module.exports = { legacyFolder }
