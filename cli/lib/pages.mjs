// Pages of tasks and of conversations over every chosen store, for people (`roo-state list`,
// `roo-state tree`) and agents (the MCP tools' pages and cursors) alike. Each store's handle
// filters and sorts its own tasks (TaskStore.list: the core's order, ties by task id); the pages
// of several stores are merged by the same order (listOrder), a task two stores hold counted
// once, from its newer copy. A cursor holds how far into each store's order the pages have gone,
// so paging visits every task of every store once.
import { RooStateError } from './errors.mjs'
import { noteAbandoned, placeCopies, sharedTasks, shownElsewhere } from './copies.mjs'
import { inListOrder, resolveStores, storeSkeletons } from './stores.mjs'

/** What a page reads of each task to merge and show it (no instruction, no child call). */
const KEY_FIELDS = ['createdAtMs', 'lastActivityMs', 'metadata', 'apiTotals', 'parentTaskId', 'isCompleted']

/** A cursor's text: the stores' positions, opaque to the caller. */
export function encodeCursor(positions) {
  return Buffer.from(JSON.stringify({ v: 1, at: positions }), 'utf8').toString('base64url')
}

/** The stores' positions a cursor holds; INVALID_ARGUMENT for a text that is not one. */
export function decodeCursor(text) {
  try {
    const c = JSON.parse(Buffer.from(String(text), 'base64url').toString('utf8'))
    if (c?.v === 1 && c.at && typeof c.at === 'object' && Object.values(c.at).every((n) => Number.isInteger(n) && n >= 0)) return c.at
  } catch {
    // not JSON: said below
  }
  throw new RooStateError('INVALID_ARGUMENT', 'The cursor is not one this server gave (pass the nextCursor of the previous answer unchanged, or none for the first page).')
}

/** Every chosen store with its handle (a store read without one cannot be paged). */
async function loadStores(sel, opts, io) {
  const dirs = await resolveStores(sel)
  const loaded = []
  for (const tasksDir of dirs) {
    loaded.push(await storeSkeletons(tasksDir, { cacheDir: sel.cacheDir, noCache: opts.noCache, onProgress: io.onProgress, signal: io.signal }))
  }
  if (loaded.some((l) => !l.handle)) throw new RooStateError('NOT_AVAILABLE', 'This build of roo-state-core has no TaskStore handle: pages need one.')
  return loaded
}

/**
 * One page over the stores of `loaded`: each store's tasks matching `query` in its order, merged,
 * those shown from another store's copy left out, `limit` of them (all when undefined) from the
 * positions `at` (a store's position: how many of its tasks in that order the earlier pages went
 * past). Returns the page's items (`{ s, store, lifted? }` in order), each store's position after
 * it, and each store's number of matching tasks.
 */
function mergedPage(loaded, shared, query, at, limit, liftFrom) {
  const want = limit ?? Number.MAX_SAFE_INTEGER
  const candidates = []
  const totals = []
  // How far into each store's order the candidates were read (copies shown elsewhere included).
  const scanned = []
  loaded.forEach((l, k) => {
    const start = at[l.tasksDir] ?? 0
    let offset = start
    let visible = 0
    let total = 0
    // Enough of this store's order to hold `want` tasks it shows itself.
    for (;;) {
      const chunk = limit === undefined ? undefined : Math.max(want - visible, 16)
      const page = l.handle.list({ ...query, offset, limit: chunk, fields: KEY_FIELDS })
      total = page.total
      page.items.forEach((s, i) => {
        const elsewhere = shared.get(s.taskId)?.tasksDir
        const pos = offset + i
        if (elsewhere && elsewhere !== l.tasksDir) {
          // Its subtasks only this store holds come up in its place (a tree's lifted nodes).
          for (const n of liftFrom?.(l, s) ?? []) candidates.push({ s, store: k, pos, lifted: n })
          return
        }
        visible++
        candidates.push({ s, store: k, pos })
      })
      offset += page.items.length
      if (visible >= want || offset >= total || page.items.length === 0) break
    }
    totals.push(total)
    scanned.push(offset)
  })
  const ordered = candidates.length > 1 ? inOrder(candidates, query) : candidates
  const items = ordered.slice(0, want)
  // A store's position: past everything it read when the page took all its candidates (the
  // copies shown elsewhere after them included, so that a last page ends), else past its last
  // task taken (the copies before it were stepped over).
  const next = {}
  loaded.forEach((l, k) => {
    const taken = items.filter((c) => c.store === k)
    const offered = candidates.filter((c) => c.store === k).length
    if (taken.length === offered) next[l.tasksDir] = scanned[k]
    else next[l.tasksDir] = taken.length ? Math.max(...taken.map((c) => c.pos)) + 1 : at[l.tasksDir] ?? 0
  })
  const more = ordered.length > items.length || loaded.some((l, k) => next[l.tasksDir] < totals[k])
  // After this page: each store's tasks past its position (a copy shown elsewhere among them
  // counted too).
  const after = loaded.reduce((n, l, k) => n + Math.max(0, totals[k] - next[l.tasksDir]), 0)
  return { items, next, totals, more, after }
}

/** Candidates in the order of task lists (the core's rule), each store's kept in its own order. */
function inOrder(candidates, query) {
  return inListOrder(candidates, (c) => c.s, query.sort, query.order)
}

/** The handle query of a page's filters. */
function queryOf(opts, extra) {
  return {
    workspace: opts.workspace,
    host: opts.host,
    mode: opts.mode,
    since: opts.since,
    until: opts.until,
    ...extra,
  }
}

/** The positions a page starts from: a cursor's, else `offset` into the merged order. */
function startOf(opts) {
  return opts.cursor ? decodeCursor(opts.cursor) : {}
}

/**
 * A page of conversations (the top tasks of each store's forest, newest first) with their trees,
 * over every chosen store. `opts`: filters (`workspace`, `host`, `since`/`until` in ms on the last
 * activity), `maxDepth`, `limit` (none: every conversation), `offset` (into the merged order) or
 * `cursor` (from a page before).
 */
export async function conversationsPage(sel, opts = {}, io = {}) {
  return conversationsPageOf(await loadStores(sel, opts, io), opts)
}

/**
 * [`conversationsPage`] over stores already open (`{tasksDir, handle, source, metrics,
 * diagnostics}` each, as the web view holds them); `opts.sort` and `opts.order` (the core's keys)
 * choose another order than the newest created first. `shared`: the stores' shared tasks when the
 * caller keeps them (`sharedTasks`), else worked out here.
 */
export function conversationsPageOf(loaded, opts = {}, shared = sharedTasks(loaded)) {
  const query = queryOf(opts, { topOnly: true, sort: opts.sort ?? 'createdAt', order: opts.sort ? opts.order : opts.order ?? 'desc' })
  const skip = opts.cursor ? 0 : opts.offset ?? 0
  const limit = opts.limit === undefined ? undefined : opts.limit + skip
  const lift = (l, s) => placeCopies(l.handle.trees([s.taskId], opts.maxDepth), shared, l.tasksDir)
  const merged = mergedPage(loaded, shared, query, startOf(opts), limit, lift)
  const items = merged.items.slice(skip)
  const stores = loaded.map((l, k) => {
    const mine = items.filter((c) => c.store === k)
    const trees = l.handle.trees(mine.filter((c) => !c.lifted).map((c) => c.s.taskId), opts.maxDepth)
    const placed = placeCopies(trees, shared, l.tasksDir)
    const byId = new Map(placed.map((n) => [n.taskId, n]))
    const roots = mine.map((c) => c.lifted ?? byId.get(c.s.taskId)).filter(Boolean)
    // Subtasks of these conversations whose parent is shown from another store: after them.
    for (const n of placed) if (n.parentShownIn && !roots.includes(n)) roots.push(n)
    const store = {
      tasksDir: l.tasksDir,
      source: l.source,
      tasks: l.handle.size,
      conversations: merged.totals[k] - shownElsewhereMatching(l, shared, query),
      metrics: l.metrics,
      roots: noteAbandoned(roots, l.metrics),
      diagnostics: l.diagnostics,
    }
    const elsewhere = shownElsewhere(shared, l.tasksDir)
    if (elsewhere) store.shownElsewhere = elsewhere
    return store
  })
  return withLoaded(loaded, {
    stores,
    page: pageFacts(opts, items, merged, matching(loaded, shared, query, merged.totals), (c) => ({ taskId: (c.lifted ?? c.s).taskId, tasksDir: loaded[c.store].tasksDir })),
  })
}

/**
 * How many of a store's tasks matching `query` are shown from another store's copy (none but
 * where a store's tasks were imported by another host): one list of the store's ids then.
 */
function shownElsewhereMatching(l, shared, query) {
  const elsewhere = [...shared.values()].filter((s) => s.tasksDir !== l.tasksDir && s.alsoIn.some((a) => a.tasksDir === l.tasksDir))
  if (!elsewhere.length) return 0
  const ids = new Set(l.handle.list({ ...query, fields: [] }).items.map((x) => x.taskId))
  return elsewhere.filter((s) => ids.has(s.taskId)).length
}

/** The tasks matching `query` in every store, each task two stores hold counted once. */
function matching(loaded, shared, query, totals) {
  return totals.reduce((a, b) => a + b, 0) - loaded.reduce((n, l) => n + shownElsewhereMatching(l, shared, query), 0)
}

/** What a page says of itself: where it starts, how many it shows of how many, and how to go on. */
function pageFacts(opts, items, merged, total, ref) {
  const offset = opts.cursor ? undefined : opts.offset ?? 0
  return {
    ...(offset === undefined ? {} : { offset }),
    limit: opts.limit ?? null,
    shown: items.length,
    total,
    leftOut: merged.after,
    items: items.map(ref),
    nextCursor: merged.more && opts.limit !== undefined ? encodeCursor(merged.next) : null,
  }
}

/**
 * A page of tasks of every chosen store, in the order asked (`sort`, `order`: the core's keys),
 * filtered (`workspace`, `host`, `mode`, `since`/`until` in ms, `topOnly`), `limit` of them from
 * `offset` or `cursor`. Rows are what a list shows of a task.
 */
export async function tasksPage(sel, opts = {}, io = {}) {
  const loaded = await loadStores(sel, opts, io)
  const shared = sharedTasks(loaded)
  const query = queryOf(opts, { topOnly: Boolean(opts.topOnly), sort: opts.sort ?? 'lastActivity', order: opts.order })
  const skip = opts.cursor ? 0 : opts.offset ?? 0
  const limit = opts.limit === undefined ? undefined : opts.limit + skip
  const merged = mergedPage(loaded, shared, query, startOf(opts), limit)
  const items = merged.items.slice(skip)
  const rows = items.map((c) => taskRow(c.s, loaded[c.store].tasksDir, shared))
  return withLoaded(loaded, {
    total: matching(loaded, shared, query, merged.totals),
    ...(opts.cursor ? {} : { offset: skip }),
    tasks: rows,
    leftOut: merged.after,
    nextCursor: merged.more && opts.limit !== undefined ? encodeCursor(merged.next) : null,
    stores: loaded.map((l) => l.tasksDir),
  })
}

/** `result` with the stores it was read from, kept out of its JSON (`loaded`). */
function withLoaded(loaded, result) {
  Object.defineProperty(result, 'loaded', { value: loaded, enumerable: false })
  return result
}

/** What a list shows of a task. */
export function taskRow(s, tasksDir, shared) {
  const row = {
    taskId: s.taskId,
    title: s.metadata.title,
    workspace: s.metadata.workspace,
    mode: s.metadata.mode,
    host: s.metadata.source,
    createdAt: s.metadata.createdAt,
    lastActivity: s.metadata.lastActivity,
    messageCount: s.metadata.messageCount,
    actionCount: s.metadata.actionCount,
    totalSize: s.metadata.totalSize,
    totalCost: s.apiTotals.totalCost,
    isCompleted: s.isCompleted,
    parentTaskId: s.parentTaskId,
    tasksDir,
  }
  const also = shared?.get(s.taskId)
  if (also && also.tasksDir === tasksDir) row.alsoIn = also.alsoIn
  return row
}

/**
 * The shortest prefix (at least 8 characters) that names each of `ids` alone among every task of
 * the loaded stores, as `findTask` takes a prefix: the longest any store needs. An id of a build
 * without `shortIds` is shown whole.
 * @returns {Map<string, string>}
 */
export function shortIdsAmong(handles, ids) {
  const list = [...new Set(ids.filter(Boolean))]
  const out = new Map(list.map((id) => [id, '']))
  for (const h of handles) {
    if (typeof h?.shortIds !== 'function') return new Map(list.map((id) => [id, id]))
    h.shortIds(list).forEach((p, i) => {
      if (p.length > out.get(list[i]).length) out.set(list[i], p)
    })
  }
  return out
}

/** The workspaces of the loaded stores, most tasks first (what a filter that matched nothing can name). */
export function workspacesOf(loaded, most = 8) {
  const counts = new Map()
  for (const l of loaded) {
    for (const s of l.handle.list({ fields: ['metadata'] }).items) {
      const w = s.metadata.workspace
      if (w) counts.set(w, (counts.get(w) ?? 0) + 1)
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, most).map(([w]) => w)
}
