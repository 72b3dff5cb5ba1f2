// What the pages of `roo-state serve` show, as the binding gives it: one task store handle per
// tasks folder (the CLI's, refreshed when a request comes after `refreshMs`), the skeleton of one
// task (analyzeConversation on the folder the handle holds), and the search index.
import { call } from '../lib/binding.mjs'
import { RooStateError } from '../lib/errors.mjs'
import * as ops from '../lib/ops.mjs'
import { resolveStores, storeHandle } from '../lib/stores.mjs'
import { markCopies, noteAbandoned, sharedTasks } from '../lib/copies.mjs'
import { conversationsPageOf } from '../lib/pages.mjs'

/** An error with the HTTP status it is answered with. */
export class HttpError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

/** What a task id in a URL may look like: a folder name of a store, never a path. */
const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/

/** Longest message text shown (UTF-16 units); longer ones are cut in the middle by the core. */
const MAX_CONTENT = 20_000

export class ServeData {
  /** @param {{tasksDirs?: string[], cwd?: string, cacheDir?: string, noCache?: boolean, indexDir?: string, embedder?: object, store?: object, refreshMs?: number}} opts */
  static async open(opts) {
    const dirs = await resolveStores({ tasksDirs: opts.tasksDirs, cwd: opts.cwd })
    const entries = []
    for (const tasksDir of dirs) {
      let handle
      let source = opts.noCache ? 'scan' : 'cache'
      try {
        handle = await storeHandle(tasksDir, { cacheDir: opts.cacheDir, noCache: opts.noCache })
      } catch (err) {
        // A cache that cannot be used does not stop the view: the folders are read directly.
        if (opts.noCache || err?.code === 'ABORTED') throw err
        handle = await storeHandle(tasksDir, { noCache: true })
        source = 'scan'
      }
      if (!handle) throw new RooStateError('NOT_AVAILABLE', 'This build of roo-state-core has no TaskStore; roo-state serve needs it.')
      entries.push({ tasksDir, handle, source })
    }
    return new ServeData(entries, opts)
  }

  constructor(entries, opts) {
    this.entries = entries
    this.opts = opts
    this.refreshMs = opts.refreshMs ?? 2000
    this.refreshedAt = Date.now()
    this.refreshing = null
    /** The tasks several stores hold (see `shared`), until the next refresh. */
    this.copies = null
  }

  /** Bring the handles up to date when the last refresh is older than `refreshMs` (one at a time). */
  async fresh() {
    if (this.refreshing) return this.refreshing
    if (Date.now() - this.refreshedAt < this.refreshMs) return
    this.refreshing = (async () => {
      try {
        for (const e of this.entries) await e.handle.refresh()
        this.copies = null
      } finally {
        this.refreshedAt = Date.now()
        this.refreshing = null
      }
    })()
    return this.refreshing
  }

  /** The stores served: the handle's description of each, with its position and where it was read from. */
  stores() {
    return this.entries.map((e, index) => {
      const [info] = e.handle.stores()
      return { index, ...info, tasks: e.handle.size, source: e.source }
    })
  }

  /** The store a `store` parameter of the tree page names: its position, or `null` (none given) for every store together. */
  storeOrAll(v) {
    return v === null || v === undefined || v === '' ? null : this.storeAt(v)
  }

  /** The store a `store` parameter names (its position; the first by default). */
  storeAt(v) {
    if (v === null || v === undefined || v === '') return 0
    const n = Number(v)
    if (!Number.isInteger(n) || n < 0 || n >= this.entries.length) throw new HttpError(404, 'There is no such store.')
    return n
  }

  /**
   * The tasks several served stores hold (Zoo Code's import of Roo Code's history): each shown
   * from its newer copy, by id (TaskStore.sharedAcross); worked out again after a refresh.
   */
  shared() {
    this.copies ??= sharedTasks(this.entries)
    return this.copies
  }

  /**
   * One page of the store's conversations (top tasks), as `TaskStore.list` gives it; a task
   * shown from a newer copy in another store says where (`shownIn`), one shown here names its
   * other copies (`alsoIn`).
   */
  list(store, q) {
    const page = this.listPage(store, q)
    markCopies(page.items, this.shared(), this.entries[store].tasksDir)
    return page
  }

  listPage(store, q) {
    return this.entries[store].handle.list({
      workspace: q.workspace,
      host: q.host,
      mode: q.mode,
      since: q.since,
      until: q.until,
      rootsOnly: true,
      sort: q.sort,
      offset: (q.page - 1) * q.pageSize,
      limit: q.pageSize,
    })
  }

  /** The tree page: a page of conversations, each with its whole tree (`TaskStore.tree`). */
  treePage(store, q) {
    const { handle, tasksDir } = this.entries[store]
    const page = this.listPage(store, q)
    const ids = page.items.map((s) => s.taskId)
    // One pass over the forest for the whole page (`trees`), else one per conversation.
    const roots = typeof handle.trees === 'function' ? handle.trees(ids) : ids.map((id) => handle.tree({ rootId: id })[0]).filter(Boolean)
    markCopies(noteAbandoned(roots, handle.metrics()), this.shared(), tasksDir)
    return { total: page.total, offset: page.offset, roots, tasks: handle.size }
  }

  /**
   * The tree page over every store together: a page of conversations in one order (the core's
   * rule for merging lists; a task two stores hold shown once, from its newer copy), each with
   * its whole tree.
   */
  treePageAll(q) {
    // The page shows no store diagnostics: not fetched from the handles on each request.
    const loaded = this.entries.map((e) => ({ tasksDir: e.tasksDir, handle: e.handle, source: e.source, metrics: e.handle.metrics(), diagnostics: [] }))
    const offset = (q.page - 1) * q.pageSize
    const filters = { workspace: q.workspace, host: q.host, mode: q.mode, since: q.since, until: q.until }
    const page = conversationsPageOf(loaded, { ...filters, sort: q.sort ?? 'lastActivity', limit: q.pageSize, offset }, this.shared())
    const at = new Map()
    for (const s of page.stores) for (const r of s.roots) at.set(`${s.tasksDir}\n${r.taskId}`, r)
    const roots = []
    for (const it of page.page.items) {
      const key = `${it.tasksDir}\n${it.taskId}`
      if (at.has(key)) roots.push(at.get(key))
      at.delete(key)
    }
    // Subtasks shown in place of a parent another store shows: after the page's conversations.
    roots.push(...at.values())
    return { total: page.page.total, offset, roots, tasks: this.entries.reduce((n, e) => n + e.handle.size, 0) }
  }

  /** Where task `id` is: the store and its header; 404 for an id no store holds. */
  locate(id) {
    if (typeof id !== 'string' || !TASK_ID.test(id)) throw new HttpError(404, 'There is no task with this id.')
    // A task two stores hold: the store showing its newer copy first.
    const shownIn = this.shared().get(id)?.tasksDir
    const order = [...this.entries.keys()].sort((a, b) => Number(this.entries[b].tasksDir === shownIn) - Number(this.entries[a].tasksDir === shownIn))
    for (const i of order) {
      let header = null
      try {
        header = this.entries[i].handle.get(id)
      } catch {
        header = null
      }
      if (header && header.taskId === id) return { store: i, handle: this.entries[i].handle, header }
    }
    throw new HttpError(404, 'There is no task with this id.')
  }

  /** The tree under one task (`TaskStore.tree` with its id). */
  subtree(id) {
    return this.locate(id).handle.tree({ rootId: id })
  }

  /** One task: its header, its skeleton with every message, its ancestors and its subtasks. */
  async task(id) {
    const { store, handle, header } = this.locate(id)
    const taskDir = handle.taskDir(id)
    if (!taskDir) throw new HttpError(404, 'There is no task with this id.')
    const skeleton = await call('analyzeConversation', id, taskDir, { includeSequence: true, maxContentLength: MAX_CONTENT })
    const ancestors = handle
      .ancestors(id)
      .reverse()
      .map((a) => ({ taskId: a, title: handle.get(a)?.metadata.title }))
    const [node] = handle.tree({ rootId: id, maxDepth: 1 })
    const children = markCopies(node?.children ?? [], this.shared(), this.entries[store].tasksDir)
    const alsoIn = this.shared().get(id)?.alsoIn ?? []
    return { store, tasksDir: this.entries[store].tasksDir, header, skeleton, ancestors, children, alsoIn }
  }

  /** The usage report of one store (`TaskStore.usageReport` with `options`; the handle keeps its records between calls). */
  async usage(store, options) {
    const { handle } = this.entries[store]
    if (typeof handle.usageReport !== 'function') throw new RooStateError('NOT_AVAILABLE', 'This build of roo-state-core has no TaskStore.usageReport().')
    return handle.usageReport(options)
  }

  /** Bring the search index up to date (`indexTasks` over the served stores). */
  index(onProgress) {
    return ops.index(
      { tasksDirs: this.entries.map((e) => e.tasksDir) },
      { indexDir: this.opts.indexDir, embedder: this.opts.embedder, store: this.opts.store },
      { onProgress },
    )
  }

  /**
   * A search (`searchTasksSemantic`), its results kept to the tasks of the served stores (an
   * index may hold other stores too; a note says how many were left out).
   */
  async search(q) {
    if (!q.query) throw new HttpError(400, 'The search query is empty.')
    const result = await ops.search(
      { tasksDirs: this.entries.map((e) => e.tasksDir) },
      { query: q.query, mode: q.mode, workspace: q.workspace, limit: q.limit, indexDir: this.opts.indexDir, store: this.opts.store },
    )
    const kept = result.results.filter((r) => {
      try {
        this.locate(r.taskId)
        return true
      } catch {
        return false
      }
    })
    const left = result.results.length - kept.length
    return {
      ...result,
      results: kept,
      notes: left ? [...result.notes, `${left} result(s) from tasks outside the served stores left out`] : result.notes,
    }
  }
}
