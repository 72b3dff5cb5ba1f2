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
