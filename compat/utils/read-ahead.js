'use strict'
/**
 * Read-ahead for callers that walk a tasks folder one task at a time, as the legacy server's
 * build_skeleton_cache handler does (`readdir`, then `analyzeConversation` for each folder in turn,
 * awaiting each). Each call waits for one task, so the second core idles and every task pays its
 * full read and parse in turn. Here, the first call for a folder lists its parent once (in the order
 * Node's `readdir` gives, the order such a walk follows) and, from then on, each call starts the
 * native analysis (legacy or fixed mode) of the next few folders of that listing on the binding's
 * blocking threads (not the libuv pool, which the caller's own file requests use), so they are read
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

/** The walk of one tasks folder by one kind of analysis: its listing and the analyses started ahead. */
class Walk {
  constructor(dir, names, analyse) {
    this.dir = dir
    this.names = names
    this.analyse = analyse
    this.position = new Map(names.map((name, i) => [name, i]))
    /** name → { at: index in the listing, result: Promise } */
    this.started = new Map()
  }

  /** The analysis of `name`: the one started ahead, else one started now. */
  take(name) {
    const ahead = this.started.get(name)
    this.started.delete(name)
    return ahead ? ahead.result : this.analyse(name, path.join(this.dir, name))
  }

  /** Starts the next `count` folders after index `i`, and drops those the caller went past. */
  advance(i, count) {
    for (const [name, job] of this.started) if (job.at <= i) this.started.delete(name)
    for (let k = i + 1; k <= i + count && k < this.names.length; k++) {
      const name = this.names[k]
      if (!this.started.has(name)) this.started.set(name, { at: k, result: this.analyse(name, path.join(this.dir, name)) })
    }
  }
}

/** A native analysis whose failure is carried in the result, never left unhandled. */
const settled = (native) => (taskId, taskPath) =>
  native(taskId, taskPath).then(
    (value) => ({ value }),
    (error) => ({ error }),
  )

/**
 * A read-ahead over one native analysis: `(taskId, taskPath)` → its value, or `undefined` when it
 * does not serve the call (off, an id that is not the folder's name, a folder not listed).
 */
function readAhead(native) {
  const analyse = settled(native)
  let current = null
  /** The walk of `dir`, listed anew when the caller starts over or asks for a folder it lacks. */
  const walkOf = (dir, name) => {
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
    current = new Walk(dir, names, analyse)
    return current.position.has(name) ? current : null
  }
  return async (taskId, taskPath) => {
    const count = windowSize()
    if (count === 0) return undefined
    const name = path.basename(taskPath)
    if (String(taskId) !== name) return undefined
    const walk = walkOf(path.dirname(taskPath), name)
    if (!walk) return undefined
    const i = walk.position.get(name)
    const result = walk.take(name)
    walk.advance(i, count)
    const { value, error } = await result
    if (error) throw error
    return value
  }
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

const legacyAhead = readAhead((taskId, taskPath) => binding.compatAnalyzeLegacyFolder(taskId, taskPath))
const fixedAhead = readAhead((taskId, taskPath) => binding.compatAnalyzeFixedFolder(taskId, taskPath))

/**
 * Legacy mode: `{ analysis, dirStats }` of `taskPath` (`analysis` null where the legacy builder
 * skips the task), or `undefined` when the read-ahead does not serve this call.
 */
async function legacyFolder(taskId, taskPath) {
  const folder = await legacyAhead(taskId, taskPath)
  return folder === undefined ? undefined : { analysis: folder.analysis, dirStats: dirStats(folder) }
}

/**
 * Fixed mode: `{ skeleton, parentTaskId }` of `taskPath` (the engine's skeleton with its sequence,
 * `null` where the detector answers `null`; the parent in the legacy priority), or `undefined`
 * when the read-ahead does not serve this call.
 */
function fixedFolder(taskId, taskPath) {
  return fixedAhead(taskId, taskPath)
}

module.exports = { legacyFolder, fixedFolder }
