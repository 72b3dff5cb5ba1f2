'use strict'
/**
 * `src/core/task-persistence/TaskHistoryStore.ts`: the extension's list of tasks, kept as one
 * `tasks/<id>/history_item.json` per task (docs/compat-extension.md, "TaskHistoryStore").
 *
 * Today's rules (Zoo Code 3.80+):
 * - the list is the task folders whose `history_item.json` parses with an `id` (names starting with
 *   `_` or `.` are not tasks); a file is read again when its modification time changes
 *   (`reconcile()`, on a folder change seen by `fs.watch`, and every five minutes);
 * - every write takes the file's `proper-lockfile` lock, reads the file again and applies only the
 *   fields this window changed (`childIds` united), so another window's change survives; a status
 *   change must follow the state machine (`assertValidTransition`) against the cache and against
 *   the file (else `DeltaRejectedError`, nothing written);
 * - at start, delegations a crash left half done are repaired, through the journal
 *   `tasks/_delegation_repair_intent.json` for the two-record case.
 * Releases before 3.80 (`setExtensionRelease`, release.js) also read `tasks/_index.json` at start
 * and write it after changes, and change statuses freely.
 *
 * The rules of a write (the lock, the merge, the state machine) are the native ones
 * (`updateHistoryItem`, `mergeHistoryItem`, `checkStatusTransition`; roo-store `history_file`),
 * the same our own maintenance writers use. Under a module runner the caller's `safeWriteJson`
 * (`../../utils/safeWriteJson`) and `getStorageBasePath` (`../../utils/storage`) beside the
 * caller's module are used, so a test's doubles are what writes (host.js); in VS Code the
 * extension's `customStoragePath` setting is honoured.
 */

const fs = require('node:fs/promises')
const fsSync = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { isDeepStrictEqual } = require('node:util')
const core = require('../../index.js')
const host = require('./host.js')
const { releaseAtLeast } = require('./release.js')

/** The extension's module this class stands for (host.js finds the caller's copy by it). */
const CALLER_MODULE = 'core/task-persistence/TaskHistoryStore'
const ITEM_FILE = 'history_item.json'
const INDEX_FILE = '_index.json'
const REPAIR_INTENT_FILE = '_delegation_repair_intent.json'
/** How long a lock folder stays fresh (the extension's `LOCK_STALE_MS`). */
const LOCK_STALE_MS = 31_000
const RECONCILE_EVERY_MS = 5 * 60 * 1000
const WATCH_DEBOUNCE_MS = 500
const INDEX_WRITE_DEBOUNCE_MS = 2000
const RECOVERED_SUMMARY = 'Task completed (recovered after interruption)'

class DeltaRejectedError extends Error {
  constructor(taskId, diskStatus, attemptedStatus) {
    super(`Delta rejected for task ${taskId}: disk status ${diskStatus} rejects transition to ${attemptedStatus}`)
    this.name = 'DeltaRejectedError'
    this.taskId = taskId
    this.diskStatus = diskStatus
    this.attemptedStatus = attemptedStatus
  }
}

/** Throws `Invalid task status transition: <from> → <to>` unless the state machine allows it. */
function assertValidTransition(from, to) {
  core.checkStatusTransition(from, to)
}

/** The binding's `DELTA_REJECTED` as the extension's error class; other errors as they are. */
function asExtensionError(err) {
  if (err && err.code === 'DELTA_REJECTED' && err.details) {
    return new DeltaRejectedError(err.details.taskId, err.details.diskStatus, err.details.attemptedStatus)
  }
  return err
}

function stripBom(text) {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/** What a record is once written as JSON (`undefined` fields gone, `NaN` as `null`). */
function asWritten(value) {
  return JSON.parse(JSON.stringify(value))
}

/**
 * The change from `known` (what this window last read) to `incoming`: the fields whose value
 * differs, those set to `undefined` being removals; with no `known`, the whole of `incoming`.
 */
function changeOf(known, incoming) {
  const set = {}
  const unset = []
  for (const [k, v] of Object.entries(incoming)) {
    if (known && isDeepStrictEqual(v, known[k])) continue
    if (v === undefined) unset.push(k)
    else set[k] = v
  }
  return { set: asWritten(set), unset }
}

function isMissing(err) {
  return Boolean(err) && err.code === 'ENOENT'
}

/** A task id that names one folder of `tasks/` (not a path, not `.` or `..`). */
function isSafeTaskId(v) {
  return typeof v === 'string' && v.length > 0 && v !== '.' && v !== '..' && !v.includes('/') && !v.includes('\\')
}

const optionalString = (v) => v === undefined || typeof v === 'string'
const isObject = (v) => Boolean(v) && typeof v === 'object'

/** The journal of a two-record repair, checked field by field before it is acted on. */
function isRepairIntent(v) {
  if (!isObject(v) || !isObject(v.expected) || !isObject(v.target)) return false
  const { parent, child } = v.expected
  return (
    v.version === 1 &&
    typeof v.operationId === 'string' &&
    isSafeTaskId(v.parentTaskId) &&
    isSafeTaskId(v.childTaskId) &&
    v.parentTaskId !== v.childTaskId &&
    isObject(parent) &&
    parent.status === 'delegated' &&
    parent.awaitingChildId === v.childTaskId &&
    optionalString(parent.delegatedToId) &&
    isObject(child) &&
    child.status === 'active' &&
    optionalString(child.parentTaskId) &&
    optionalString(child.rootTaskId) &&
    v.target.childStatus === 'interrupted' &&
    v.target.parentStatus === 'active'
  )
}

/**
 * The `customStoragePath` setting of the extension whose global storage folder is `base`, when
 * running inside VS Code and the setting names a usable folder; else `null`.
 */
async function customStoragePath(base) {
  let vscode
  try {
    vscode = require('vscode')
  } catch {
    return null
  }
  const namespace = path.basename(base).split('.').slice(1).join('.')
  let custom = ''
  try {
    custom = vscode.workspace.getConfiguration(namespace).get('customStoragePath', '') || ''
  } catch {
    return null
  }
  if (!custom) return null
  try {
    await fs.mkdir(custom, { recursive: true })
    await fs.access(custom, fsSync.constants.R_OK | fsSync.constants.W_OK | fsSync.constants.X_OK)
    return custom
  } catch (err) {
    console.error(`Custom storage path is unusable: ${err instanceof Error ? err.message : String(err)}`)
    return null
  }
}

class TaskHistoryStore {
  constructor(globalStoragePath, options) {
    this.globalStoragePath = globalStoragePath
    this.onWrite = options && typeof options.onWrite === 'function' ? options.onWrite : undefined
    /** @type {Map<string, object>} the records, by task id */
    this.cache = new Map()
    /** @type {Map<string, number>} the modification time each cached record was read at */
    this.taskFileMtimes = new Map()
    this.writeLock = Promise.resolve()
    this.disposed = false
    /** Releases before 3.80: the `_index.json` store, statuses unchecked. */
    this.indexed = !releaseAtLeast(3, 80)
    this._watcher = null
    this._watchTimer = null
    this._reconcileTimer = null
    this._indexTimer = null
    this.initialized = new Promise((resolve) => {
      this._resolveInitialized = resolve
    })
  }

  // ------------------------------------------------------------------ life cycle

  async initialize() {
    try {
      await fs.mkdir(await this._tasksDir(), { recursive: true })
      if (this.indexed) await this._loadIndex()
      await this.reconcile({ forceRefresh: true })
      if (!this.indexed) {
        // Tasks active on disk before any repair: only they can be children a crash orphaned.
        const activeAtStart = this._activeIds()
        try {
          await this.replayDelegationRepairIntent()
        } catch (err) {
          console.error('[TaskHistoryStore] Failed to replay delegation repair intent:', err)
        }
        await this._withLock(() => this._repairDelegations(activeAtStart))
      }
      this._watch()
      this._scheduleReconcile()
    } finally {
      this._resolveInitialized()
    }
  }

  dispose() {
    this.disposed = true
    for (const t of [this._watchTimer, this._reconcileTimer]) if (t) clearTimeout(t)
    this._watchTimer = null
    this._reconcileTimer = null
    if (this._watcher) {
      this._watcher.close()
      this._watcher = null
    }
    if (this.indexed) this.flushIndex().catch((err) => console.error('[TaskHistoryStore] index flush on dispose failed:', err))
  }

  // ------------------------------------------------------------------ reads

  get(taskId) {
    return this.cache.get(taskId)
  }

  /** Newest first. */
  getAll() {
    return Array.from(this.cache.values()).sort((a, b) => b.ts - a.ts)
  }

  getByWorkspace(workspace) {
    return this.getAll().filter((item) => item.workspace === workspace)
  }

  // ------------------------------------------------------------------ writes

  upsert(item) {
    return this._withLock(() => this.upsertCore(item))
  }

  /**
   * The write behind `upsert` (the store lock held): the status change checked against the cache
   * (and, when the cache refuses it, against the file, which another window may have moved on),
   * then only the changed fields written. `skipTransitionCheck` is for repairs.
   */
  async upsertCore(item, options = {}) {
    const known = this.cache.get(item.id)
    const checked = !options.skipTransitionCheck && !this.indexed
    if (checked && known && item.status !== undefined && item.status !== (known.status ?? 'active')) {
      try {
        assertValidTransition(known.status, item.status)
      } catch (refused) {
        const onDisk = await this.readTaskFile(item.id)
        if (!onDisk) throw refused
        assertValidTransition(onDisk.status, item.status)
      }
    }
    const merged = known ? { ...known, ...item } : item
    let written
    try {
      written = await this.writeTaskFile(merged, this._change(known, item))
    } catch (err) {
      if (err instanceof DeltaRejectedError) {
        const onDisk = await this.readTaskFile(item.id)
        if (onDisk) this.cache.set(item.id, onDisk)
      }
      throw err
    }
    this.cache.set(written.id, written)
    this._indexChanged()
    const all = this.getAll()
    if (this.onWrite) await this.onWrite(all)
    return all
  }

  delete(taskId) {
    return this.deleteMany([taskId])
  }

  deleteMany(taskIds) {
    return this._withLock(async () => {
      for (const id of taskIds) {
        this.cache.delete(id)
        this.taskFileMtimes.delete(id)
        try {
          await fs.unlink(await this._itemPath(id))
        } catch {
          // already gone
        }
      }
      this._indexChanged()
      if (this.onWrite) await this.onWrite(this.getAll())
    })
  }

  /** Read `updater(current)` and write it in one turn of the store lock (no other write between). */
  atomicReadAndUpdate(taskId, updater) {
    return this._withLock(async () => {
      const current = this.cache.get(taskId)
      if (!current) throw new Error(`[TaskHistoryStore] atomicReadAndUpdate: task ${taskId} not found in cache`)
      const updated = updater(structuredClone(current))
      if (updated.id !== taskId) {
        throw new Error(`[TaskHistoryStore] atomicReadAndUpdate: updater changed task id from ${taskId} to ${updated.id}`)
      }
      return this.upsertCore(updated)
    })
  }

  /**
   * Two related records updated in one turn of the store lock: both updaters run first (on copies),
   * both status changes are checked, then the two files are written in order. Each file is locked
   * on its own: a failure after the first write leaves the first written (and cached).
   */
  atomicUpdatePair(firstId, secondId, firstUpdater, secondUpdater) {
    return this._withLock(async () => {
      const first = this.cache.get(firstId)
      if (!first) throw new Error(`[TaskHistoryStore] atomicUpdatePair: ${firstId} not found`)
      const second = this.cache.get(secondId)
      if (!second) throw new Error(`[TaskHistoryStore] atomicUpdatePair: ${secondId} not found`)
      const nextFirst = firstUpdater(structuredClone(first))
      const nextSecond = secondUpdater(structuredClone(second))
      for (const [which, id, next] of [['first', firstId, nextFirst], ['second', secondId, nextSecond]]) {
        if (next.id !== id) throw new Error(`[TaskHistoryStore] atomicUpdatePair: ${which} updater changed id from ${id} to ${next.id}`)
      }
      if (!this.indexed) {
        for (const [before, next] of [[first, nextFirst], [second, nextSecond]]) {
          if (next.status !== undefined && next.status !== (before.status ?? 'active')) assertValidTransition(before.status, next.status)
        }
      }
      const writtenFirst = await this.writeTaskFile({ ...first, ...nextFirst }, this._change(first, nextFirst))
      this.cache.set(firstId, writtenFirst)
      const writtenSecond = await this.writeTaskFile({ ...second, ...nextSecond }, this._change(second, nextSecond))
      this.cache.set(secondId, writtenSecond)
      this._indexChanged()
      const all = this.getAll()
      if (this.onWrite) await this.onWrite(all)
      return all
    })
  }

  // ------------------------------------------------------------------ reading the folders again

  /**
   * The cache made to match the task folders: records whose file changed (or all, with
   * `forceRefresh`) read again, records whose file is gone dropped. A file missing while its lock
   * is fresh is being replaced by another writer and keeps its record.
   */
  reconcile(options = {}) {
    return this._withLock(async () => {
      const tasksDir = await this._tasksDir()
      let names
      try {
        names = await fs.readdir(tasksDir)
      } catch {
        return
      }
      const live = new Set()
      let changed = false
      for (const id of names) {
        if (id.startsWith('_') || id.startsWith('.')) continue
        const file = path.join(tasksDir, id, ITEM_FILE)
        let stat
        try {
          stat = await fs.stat(file)
        } catch {
          if (this.indexed ? await this._isFolder(path.join(tasksDir, id)) : await this._lockIsFresh(file)) live.add(id)
          continue
        }
        live.add(id)
        if (!options.forceRefresh && this.cache.has(id) && this.taskFileMtimes.get(id) === stat.mtimeMs) continue
        const item = await this.readTaskFile(id)
        if (!item || item.id !== id) continue
        this.taskFileMtimes.set(id, stat.mtimeMs)
        if (!isDeepStrictEqual(this.cache.get(id), item)) {
          this.cache.set(id, item)
          changed = true
        }
      }
      for (const id of Array.from(this.cache.keys())) {
        if (live.has(id)) continue
        this.cache.delete(id)
        this.taskFileMtimes.delete(id)
        changed = true
      }
      if (changed) this._indexChanged()
    })
  }

  /** One record read again from its file (dropped when the file is gone), after pending writes. */
  invalidate(taskId) {
    return this._withLock(async () => {
      try {
        const item = await this.readTaskFile(taskId)
        if (item) this.cache.set(taskId, item)
        else this.cache.delete(taskId)
      } catch {
        this.cache.delete(taskId)
      }
      this.taskFileMtimes.delete(taskId)
    })
  }

  /** Every record dropped, after pending writes; `reconcile()` reads them again. */
  invalidateAll() {
    return this._withLock(async () => {
      this.cache.clear()
    })
  }

  /**
   * The list the extension kept in its global state before per-task files: each entry whose task
   * folder exists and has no `history_item.json` yet is written as one (never over an existing
   * file), then delegations are repaired as at start.
   */
  migrateFromGlobalState(taskHistoryEntries) {
    if (!taskHistoryEntries || taskHistoryEntries.length === 0) return Promise.resolve()
    return this._withLock(async () => {
      const tasksDir = await this._tasksDir()
      for (const item of taskHistoryEntries) {
        if (!item || !item.id) continue
        const dir = path.join(tasksDir, item.id)
        if (!(await this._isFolder(dir))) continue
        try {
          await fs.access(path.join(dir, ITEM_FILE))
          continue
        } catch {
          // no file yet: written below
        }
        await this.writeTaskFile(item)
        this.cache.set(item.id, item)
      }
      this._indexChanged()
      if (!this.indexed) await this._repairDelegations(this._activeIds())
    })
  }

  /** Releases before 3.80: write `tasks/_index.json` now. */
  async flushIndex() {
    if (this._indexTimer) {
      clearTimeout(this._indexTimer)
      this._indexTimer = null
    }
    if (!this.indexed) return
    await this._writeJson(path.join(await this._tasksDir(), INDEX_FILE), { version: 1, updatedAt: Date.now(), entries: this.getAll() })
  }

  // ------------------------------------------------------------------ delegation repairs

  /**
   * Delegations a crash left half done, repaired until nothing changes: a delegated parent waiting
   * on no child, on a missing child or on a completed one goes back to `active` (taking the
   * child's summary when it completed); waiting on a child that was active at start (no session
   * can be running it now), the child becomes `interrupted` and the parent `active`, through the
   * journal. A parent waiting on an interrupted or delegated child is left: the child can resume.
   */
  async _repairDelegations(activeAtStart) {
    let repaired
    do {
      repaired = 0
      const snapshot = new Map(this.cache)
      for (const item of snapshot.values()) {
        if (item.status !== 'delegated') continue
        const childId = item.awaitingChildId
        const child = childId ? snapshot.get(childId) : undefined
        const release = { ...item, status: 'active', awaitingChildId: undefined, delegatedToId: undefined }
        try {
          if (!childId) {
            await this.upsertCore(release, { skipTransitionCheck: true })
            console.warn(`[TaskHistoryStore] Reconciled invalid delegation: task ${item.id} → active (no awaitingChildId)`)
          } else if (!child) {
            await this.upsertCore(release, { skipTransitionCheck: true })
            console.warn(`[TaskHistoryStore] Reconciled orphaned delegation: task ${item.id} → active (child ${childId} not found)`)
          } else if ((child.status ?? 'active') === 'active' && activeAtStart.has(child.id)) {
            await this._repairPair(item, child)
            console.warn(`[TaskHistoryStore] Reconciled orphaned active child: child ${child.id} → interrupted, task ${item.id} → active`)
          } else if (child.status === 'completed') {
            const completion = { completedByChildId: child.id, completionResultSummary: child.completionResultSummary ?? RECOVERED_SUMMARY }
            await this.upsertCore({ ...release, ...completion }, { skipTransitionCheck: true })
            console.warn(`[TaskHistoryStore] Reconciled interrupted handoff: task ${item.id} → active (child ${childId} already completed)`)
          } else {
            continue
          }
          repaired++
        } catch (err) {
          console.error(`[TaskHistoryStore] Failed to reconcile delegation for task ${item.id}:`, err)
        }
      }
    } while (repaired > 0)
  }

  _activeIds() {
    return new Set(Array.from(this.cache.values()).filter((i) => (i.status ?? 'active') === 'active').map((i) => i.id))
  }

  /** The two-record repair: the journal written first, then the child, then the parent. */
  async _repairPair(parent, child) {
    const intent = {
      version: 1,
      operationId: crypto.randomUUID(),
      parentTaskId: parent.id,
      childTaskId: child.id,
      expected: {
        parent: { status: 'delegated', awaitingChildId: child.id, delegatedToId: parent.delegatedToId },
        child: { status: 'active', parentTaskId: child.parentTaskId, rootTaskId: child.rootTaskId },
      },
      target: { childStatus: 'interrupted', parentStatus: 'active' },
    }
    await this._writeJson(await this._intentPath(), intent)
    await this._finishPair(intent, child, parent, true, true)
  }

  /** Writes the sides of a journaled repair still to do, then removes the journal. */
  async _finishPair(intent, child, parent, childToDo, parentToDo) {
    const nextChild = childToDo ? { ...child, status: intent.target.childStatus } : child
    const nextParent = parentToDo
      ? { ...parent, status: intent.target.parentStatus, awaitingChildId: undefined, delegatedToId: undefined }
      : parent
    if (childToDo) await this.writeTaskFile(nextChild)
    if (parentToDo) await this.writeTaskFile(nextParent)
    this.cache.set(nextChild.id, nextChild)
    this.cache.set(nextParent.id, nextParent)
    // The journal stays until the write-through has seen the result.
    if (this.onWrite) await this.onWrite(this.getAll())
    try {
      await fs.unlink(await this._intentPath())
    } catch (err) {
      console.warn('[TaskHistoryStore] Failed to remove completed delegation repair intent:', err)
    }
  }

  /**
   * Finish a two-record repair a crash interrupted. Each side either reached its target or is still
   * as the journal found it; anything else (a side changed since, a record gone, a damaged journal)
   * sets the journal aside as `<name>.quarantine-<time>-<random>` and changes nothing.
   */
  replayDelegationRepairIntent() {
    return this._withLock(async () => {
      const intent = await this._readIntent()
      if (!intent) return
      const child = this.cache.get(intent.childTaskId)
      const parent = this.cache.get(intent.parentTaskId)
      if (!child || !parent) {
        await this._quarantineIntent(intent, `missing ${!child ? 'child' : 'parent'} task record`)
        return
      }
      const { expected, target } = intent
      const childDone = child.status === target.childStatus
      const parentDone = parent.status === target.parentStatus && parent.awaitingChildId === undefined && parent.delegatedToId === undefined
      const childAsFound =
        (child.status ?? 'active') === expected.child.status &&
        child.parentTaskId === expected.child.parentTaskId &&
        child.rootTaskId === expected.child.rootTaskId
      const parentAsFound =
        parent.status === expected.parent.status &&
        parent.awaitingChildId === expected.parent.awaitingChildId &&
        parent.delegatedToId === expected.parent.delegatedToId
      if ((!childDone && !childAsFound) || (!parentDone && !parentAsFound)) {
        await this._quarantineIntent(intent, 'task state no longer matches its guards')
        return
      }
      await this._finishPair(intent, child, parent, !childDone, !parentDone)
    })
  }

  async _readIntent() {
    let parsed
    try {
      parsed = JSON.parse(stripBom(await fs.readFile(await this._intentPath(), 'utf8')))
    } catch (err) {
      if (isMissing(err)) return null
      await this._quarantineIntent(null, 'malformed JSON')
      return null
    }
    if (!isRepairIntent(parsed)) {
      await this._quarantineIntent(null, 'malformed intent')
      return null
    }
    return parsed
  }

  async _quarantineIntent(intent, reason) {
    const file = await this._intentPath()
    try {
      await fs.rename(file, `${file}.quarantine-${Date.now()}-${Math.random().toString(36).slice(2)}`)
    } catch (err) {
      console.warn('[TaskHistoryStore] Failed to quarantine delegation repair intent:', err)
    }
    const what = intent ? `stale delegation repair intent ${intent.operationId}` : 'malformed delegation repair intent'
    console.warn(`[TaskHistoryStore] Ignored ${what}: ${reason}`)
  }

  // ------------------------------------------------------------------ files

  /**
   * Write a record's file and return what it holds now: with a `change`, the change merged into
   * the file's record under its lock (the state machine checked against it: `DeltaRejectedError`
   * and nothing written when refused); without one, `item` whole (repairs, migration).
   */
  async writeTaskFile(item, change) {
    const file = await this._itemPath(item.id)
    const callerWrite = await this._callerSafeWriteJson()
    try {
      if (callerWrite) {
        let written = item
        const merge = change ? { merge: (onDisk) => (written = core.mergeHistoryItem(onDisk, asWritten(item), change)) } : undefined
        await callerWrite(file, item, merge)
        return written
      }
      return await core.updateHistoryItem(file, asWritten(item), change || null)
    } catch (err) {
      throw asExtensionError(err)
    }
  }

  /** The record of `taskId`'s file, `null` when there is none or it is not a record with an id. */
  async readTaskFile(taskId) {
    try {
      const item = JSON.parse(stripBom(await fs.readFile(await this._itemPath(taskId), 'utf8')))
      return item && typeof item === 'object' && item.id ? item : null
    } catch {
      return null
    }
  }

  /** The change a write makes, its status checked by today's rules only. */
  _change(known, incoming) {
    const change = changeOf(known, incoming)
    return this.indexed ? { ...change, checkStatus: false } : change
  }

  async _writeJson(file, value) {
    const callerWrite = await this._callerSafeWriteJson()
    if (callerWrite) await callerWrite(file, value)
    else await core.updateHistoryItem(file, asWritten(value), null)
  }

  async _loadIndex() {
    try {
      const doc = JSON.parse(stripBom(await fs.readFile(path.join(await this._tasksDir(), INDEX_FILE), 'utf8')))
      if (doc && doc.version === 1 && Array.isArray(doc.entries)) {
        for (const entry of doc.entries) if (entry && entry.id) this.cache.set(entry.id, entry)
      }
    } catch {
      // no index, or an unreadable one: reconcile() reads the task folders
    }
  }

  _indexChanged() {
    if (!this.indexed || this.disposed) return
    if (this._indexTimer) clearTimeout(this._indexTimer)
    this._indexTimer = setTimeout(() => {
      this._indexTimer = null
      this.flushIndex().catch((err) => console.error('[TaskHistoryStore] index write failed:', err))
    }, INDEX_WRITE_DEBOUNCE_MS)
    if (typeof this._indexTimer.unref === 'function') this._indexTimer.unref()
  }

  async _lockIsFresh(file) {
    try {
      const stat = await fs.stat(`${file}.lock`)
      return Date.now() - stat.mtimeMs < LOCK_STALE_MS
    } catch {
      return false
    }
  }

  async _isFolder(dir) {
    try {
      return (await fs.stat(dir)).isDirectory()
    } catch {
      return false
    }
  }

  // ------------------------------------------------------------------ following other windows

  _watch() {
    if (this.disposed) return
    this._tasksDir()
      .then((dir) => {
        if (this.disposed) return
        try {
          this._watcher = fsSync.watch(dir, { recursive: false }, () => {
            if (this.disposed) return
            if (this._watchTimer) clearTimeout(this._watchTimer)
            this._watchTimer = setTimeout(() => {
              this._watchTimer = null
              this.reconcile().catch((err) => console.error('[TaskHistoryStore] Reconciliation after fs.watch failed:', err))
            }, WATCH_DEBOUNCE_MS)
          })
          // fs.watch is unreliable on some platforms: the periodic reconciliation covers it.
          this._watcher.on('error', (err) => console.error('[TaskHistoryStore] fs.watch error:', err))
          if (typeof this._watcher.unref === 'function') this._watcher.unref()
        } catch (err) {
          console.error('[TaskHistoryStore] Failed to start fs.watch:', err)
        }
      })
      .catch((err) => console.error('[TaskHistoryStore] Failed to get tasks dir for watcher:', err))
  }

  _scheduleReconcile() {
    if (this.disposed) return
    this._reconcileTimer = setTimeout(async () => {
      if (this.disposed) return
      try {
        await this.reconcile()
      } catch (err) {
        console.error('[TaskHistoryStore] Periodic reconciliation failed:', err)
      }
      this._scheduleReconcile()
    }, RECONCILE_EVERY_MS)
    if (typeof this._reconcileTimer.unref === 'function') this._reconcileTimer.unref()
  }

  // ------------------------------------------------------------------ plumbing

  /** One operation at a time in this window, in call order; a failure does not block the next. */
  _withLock(fn) {
    const run = this.writeLock.then(fn, fn)
    this.writeLock = run.then(
      () => undefined,
      () => undefined,
    )
    return run
  }

  /** The caller's collaborator module `specifier` (under a module runner), or `null`. */
  async _callerModule(specifier) {
    const caller = host.callerModule(CALLER_MODULE)
    return caller ? host.importBeside(caller, specifier) : null
  }

  async _callerSafeWriteJson() {
    const m = await this._callerModule('../../utils/safeWriteJson')
    return m && typeof m.safeWriteJson === 'function' ? m.safeWriteJson : null
  }

  /** The storage base: the caller's `getStorageBasePath`, the `customStoragePath` setting, or the folder given. */
  async _basePath() {
    const storage = await this._callerModule('../../utils/storage')
    if (storage && typeof storage.getStorageBasePath === 'function') return storage.getStorageBasePath(this.globalStoragePath)
    return (await customStoragePath(this.globalStoragePath)) ?? this.globalStoragePath
  }

  async _tasksDir() {
    return path.join(await this._basePath(), 'tasks')
  }

  async _itemPath(taskId) {
    return path.join(await this._tasksDir(), taskId, ITEM_FILE)
  }

  async _intentPath() {
    return path.join(await this._tasksDir(), REPAIR_INTENT_FILE)
  }
}

module.exports = { TaskHistoryStore, DeltaRejectedError, assertValidTransition }
