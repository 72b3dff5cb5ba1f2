// Which task stores a command works on, where a task lives, and the skeletons of a store.
//
// With --tasks-dir (or a `tasksDir` tool argument) those folders are used; otherwise the stores are
// discovered on this machine by the binding, which honours ROO_STATE_STORAGE (a path list that
// replaces the automatic search).
import fs from 'node:fs'
import path from 'node:path'
import { call, core, has } from './binding.mjs'
import { RooStateError } from './errors.mjs'

/** Whether a name in tasks/ can be a task: the core's one rule (`_…` and `.…` are not tasks). */
function isTaskName(name) {
  return core().isTaskName(name)
}

function isDir(p) {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

/**
 * A tasks/ folder from what a person typed: the tasks folder itself, or the storage folder that
 * holds it.
 */
export function normalizeTasksDir(input, cwd = process.cwd()) {
  if (typeof input !== 'string' || input.trim() === '') {
    throw new RooStateError('INVALID_ARGUMENT', 'The tasks folder is empty.')
  }
  const abs = path.resolve(cwd, input)
  if (!isDir(abs)) {
    if (fs.existsSync(abs)) {
      throw new RooStateError('INVALID_PATH', `${abs} is a file, not a folder: --tasks-dir takes a tasks/ folder (or the storage folder that holds it).`, {
        hint: isTaskFile(abs)
          ? `This file belongs to one task; pass the tasks folder above it: --tasks-dir ${path.dirname(path.dirname(abs))}`
          : 'Give the folder that holds the task folders; `roo-state discover` lists the stores found on this machine.',
      })
    }
    throw new RooStateError('INVALID_PATH', `There is no folder at ${abs}.`)
  }
  if (path.basename(abs) !== 'tasks' && isDir(path.join(abs, 'tasks'))) return path.join(abs, 'tasks')
  if (TASK_FILES.some((f) => fs.existsSync(path.join(abs, f)))) {
    throw new RooStateError('INVALID_PATH', `${abs} is one task's folder, not a store of tasks.`, {
      hint: `Pass its parent: --tasks-dir ${path.dirname(abs)} (and the task id ${path.basename(abs)} where a command takes one).`,
    })
  }
  return abs
}

/** The files a task folder holds. */
const TASK_FILES = ['ui_messages.json', 'claude_messages.json', 'api_conversation_history.json', 'history_item.json', 'task_metadata.json']

function isTaskFile(p) {
  return TASK_FILES.includes(path.basename(p))
}

/** Whether a tasks folder holds no task folder at all (names starting with `_` or `.` are not tasks). */
export function isEmptyStore(tasksDir) {
  try {
    return !fs.readdirSync(tasksDir, { withFileTypes: true }).some((e) => isTaskName(e.name) && (e.isDirectory() || e.isSymbolicLink()))
  } catch {
    return false
  }
}

/**
 * The tasks folders to work on.
 * @param {{tasksDirs?: string[], cwd?: string}} sel explicit folders (else discovery)
 * @param {{single?: boolean}} [opts] single: exactly one store is needed
 * @returns {Promise<string[]>}
 */
export async function resolveStores(sel, opts = {}) {
  const explicit = (sel.tasksDirs ?? []).filter((d) => d !== undefined && d !== null)
  let dirs
  if (explicit.length) {
    dirs = [...new Set(explicit.map((d) => normalizeTasksDir(d, sel.cwd)))]
  } else {
    const found = await call('discoverStorage', { measureSize: false })
    dirs = found.locations.map((l) => l.tasksDir)
    if (!dirs.length) {
      const where = found.searched.length ? ` Looked in: ${found.searched.join(', ')}.` : ''
      throw new RooStateError('NO_STORE', `No Roo Code, Zoo Code, Cline or Kilo Code task store was found on this machine.${where}`)
    }
  }
  if (opts.single && dirs.length > 1) {
    throw new RooStateError('AMBIGUOUS_STORE', `Several task stores were found; this needs one:\n  ${dirs.join('\n  ')}`, {
      details: { stores: dirs },
    })
  }
  return dirs
}

/**
 * Where a task lives: a path to a task folder, or an id or unique id prefix looked up in the stores
 * by the core (findTask: TASK_NOT_FOUND, or AMBIGUOUS_TASK_ID with the candidates as details).
 * @returns {Promise<{taskId: string, tasksDir: string, taskDir: string}>}
 */
export async function findTask(sel, idOrPath) {
  if (typeof idOrPath !== 'string' || idOrPath.trim() === '') {
    throw new RooStateError('INVALID_ARGUMENT', 'A task id is needed.')
  }
  const wanted = idOrPath.trim()
  // A path to a task folder (anything with a separator that exists), unless the caller takes
  // ids only (the MCP server: an id is then checked and looked up by the core, never a path).
  if (!sel.idsOnly && /[\\/]/.test(wanted)) {
    const abs = path.resolve(sel.cwd ?? process.cwd(), wanted)
    if (isDir(abs)) return { taskId: path.basename(abs), tasksDir: path.dirname(abs), taskDir: abs }
    throw new RooStateError('TASK_NOT_FOUND', `There is no task folder at ${abs}.`)
  }
  return call('findTask', await resolveStores(sel), wanted)
}

/**
 * The tasks folder `dir` names, if it is one of the stores the user chose outside the call: the
 * folders named at start-up (`sel.tasksDirs`) and the stores discovery finds (which honours
 * ROO_STATE_STORAGE). The core's confinement rule (confineTasksDir) compares them; any other
 * folder is refused with INVALID_PATH before anything reads or writes it.
 * @returns {Promise<string>}
 */
export async function confinedStore(sel, dir) {
  const named = sel.tasksDirs?.length ? await resolveStores(sel) : []
  const found = (await call('discoverStorage', { measureSize: false })).locations.map((l) => l.tasksDir)
  const allowed = [...new Set([...named, ...found])]
  return coded(() => call('confineTasksDir', path.resolve(sel.cwd ?? process.cwd(), dir), allowed))
}

/**
 * The destination `to` (absolute) of a migration of the store `from` that a tool call names, if
 * it may be used: beside the store, or under one of `roots` (the folders the user named when the
 * server was started: `roo-state mcp --migrate-to DIR`), links resolved (confineDestination).
 * Any other place is refused with INVALID_PATH before anything is read or written.
 * @returns {string}
 */
export function confinedDestination(to, from, roots = []) {
  return coded(() => call('confineDestination', to, from, roots))
}

/** `f()`, a synchronous binding call whose error puts its code in front of the message. */
function coded(f) {
  try {
    return f()
  } catch (err) {
    const m = /^([A-Z_]+): ([\s\S]*)$/.exec(err?.message ?? '')
    throw m ? new RooStateError(m[1], m[2]) : err
  }
}

/** Open task store handles of this process: the MCP server keeps them and refreshes them per call. */
const handles = new Map()

/** Whether the handles this process keeps are watched (the daemon: `watchKeptHandles`). */
let watching = false
/** Every handle this process keeps (here and the usage reports'). */
const kept = new Set()

/**
 * Watch the handles this process keeps from now on (TaskStore.watch): a refresh with nothing
 * changed then stats nothing. For a process that lives long and answers often, the daemon.
 */
export function watchKeptHandles(on = true) {
  watching = on
}

/** The handles this process keeps. */
export function handlesKept() {
  return [...kept]
}

/** Keep `handle` for the process: watched (and brought up to date) when the process watches. */
export async function keepHandle(handle, signal) {
  kept.add(handle)
  if (watching && typeof handle.watch === 'function') {
    await handle.watch()
    await handle.refresh(signal)
  }
  return handle
}

/**
 * The native task store handle of one tasks folder (TaskStore): opened once per process (the cache
 * built or refreshed first, with progress, when it is used), then refreshed on each later call, so
 * a long-lived server reads only what changed. `null` when the binding has no TaskStore.
 */
export async function storeHandle(tasksDir, opts = {}) {
  if (!has('TaskStore')) return null
  const { cacheDir, noCache, onProgress, signal } = opts
  const key = JSON.stringify([tasksDir, cacheDir ?? null, Boolean(noCache)])
  const known = handles.get(key)
  if (known) {
    await known.refresh(signal)
    return known
  }
  const TaskStore = core().TaskStore
  // ROO_STATE_EVERY_FILE=1: every file of every task stat'ed on each refresh (for stores written
  // in place by tools other than the host, or synchronised by copying files).
  const everyFile = process.env.ROO_STATE_EVERY_FILE === '1'
  const handle = await TaskStore.open({ tasksDir, cacheDir, noCache: Boolean(noCache), everyFile, onProgress, signal })
  handles.set(key, handle)
  return keepHandle(handle, signal)
}

/** The handle this process already holds for a tasks folder (not refreshed again), if any. */
export function handleOf(tasksDir, sel = {}) {
  for (const noCache of [false, true]) {
    const h = handles.get(JSON.stringify([tasksDir, sel.cacheDir ?? null, noCache]))
    if (h) return h
  }
  return null
}

/**
 * Skeleton headers of one store, linked to their parents, and the handle they came from: through
 * the native TaskStore (from our cache, built or refreshed first, when `noCache` is not set; else
 * from the task folders), or, with an older binding, from a scan with the hierarchy pass. A cache
 * that cannot be used (read-only home, a refused folder, a stuck writer) does not stop a read: the
 * folders are read directly and the reason is kept.
 * @returns {Promise<{tasksDir: string, source: 'cache'|'scan', skeletons: any[], metrics: any, diagnostics: any[], handle: any}>}
 */
export async function storeSkeletons(tasksDir, opts = {}) {
  const { cacheDir, noCache, onProgress, signal, workspace } = opts
  const notes = []
  if (has('TaskStore')) {
    let handle = null
    /** @type {'cache'|'scan'} */
    let source = noCache ? 'scan' : 'cache'
    try {
      handle = await storeHandle(tasksDir, { cacheDir, noCache, onProgress, signal })
    } catch (err) {
      if (noCache || err?.code === 'ABORTED' || (err?.code === 'INVALID_PATH' && !fs.existsSync(tasksDir))) throw err
      notes.push(cacheNote(cacheDir, err))
      handle = await storeHandle(tasksDir, { noCache: true, signal })
      source = 'scan'
    }
    /** @type {{tasksDir: string, source: 'cache'|'scan', skeletons?: any[], metrics: any, diagnostics: any[], handle: any}} */
    const loaded = { tasksDir, source, metrics: handle.metrics(), diagnostics: [...notes, ...handle.diagnostics()], handle }
    // Taken from the handle when a caller reads them: a list asks the handle for its page and
    // never needs every header (a second at 50 000 tasks).
    let skeletons
    Object.defineProperty(loaded, 'skeletons', {
      enumerable: true,
      get: () => (skeletons ??= workspace ? handle.list({ workspace }).items : handle.headers()),
    })
    return /** @type {typeof loaded & {skeletons: any[]}} */ (loaded)
  }
  const scan = await call('scanTasks', tasksDir, {
    onProgress,
    signal,
    hierarchy: workspace ? { workspaceFilter: workspace } : {},
  })
  return {
    tasksDir,
    source: 'scan',
    skeletons: scan.skeletons,
    metrics: scan.hierarchy ?? null,
    diagnostics: [...notes, ...scan.diagnostics],
    handle: null,
  }
}

/**
 * `items` in the order of task lists: the core's rule (`listOrder`, the one `TaskStore.list`
 * sorts by), each item's skeleton header given by `headerOf`.
 */
export function inListOrder(items, headerOf, sort, order) {
  const keys = items.map((item) => {
    const s = headerOf(item)
    return {
      taskId: s.taskId,
      createdAtMs: s.createdAtMs ?? undefined,
      lastActivityMs: s.lastActivityMs ?? undefined,
      title: s.metadata?.title ?? undefined,
      messageCount: s.metadata?.messageCount ?? undefined,
      actionCount: s.metadata?.actionCount ?? undefined,
      totalSize: s.metadata?.totalSize ?? undefined,
      totalCost: s.apiTotals?.totalCost ?? undefined,
    }
  })
  return call('listOrder', keys, sort, order).map((i) => items[i])
}

function cacheNote(cacheDir, err) {
  return {
    file: cacheDir ?? '',
    path: '',
    code: 'cache_unavailable',
    severity: 'warning',
    message: `the skeleton cache could not be used (${err?.code ?? 'FAILED'}: ${err?.message ?? err}); the task folders were read directly`,
  }
}
