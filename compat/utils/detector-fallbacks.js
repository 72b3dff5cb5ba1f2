'use strict'
/**
 * What `RooStorageDetector` and `MessageToSkeletonTransformer` use when the caller handed over no
 * module of its own (plain `require` users, or an ESM entry loaded without its wiring line,
 * docs/drop-in.md): an in-process cache, the parsing switches read from the environment, a
 * workspace detector reading the task's files, and a comparator that never prefers the new parse.
 */
const io = require('../io.js')

/** A key/value cache with the legacy cache manager's `get`/`set`/`delete`/`clear`. */
function memoryCache() {
  const map = new Map()
  return {
    async get(key) {
      return map.get(key)
    },
    async set(key, value) {
      map.set(key, value)
    },
    async delete(key) {
      return map.delete(key)
    },
    async clear() {
      map.clear()
    },
  }
}

/** The parsing switches of the environment (`USE_NEW_PARSING`, `PARSING_COMPARISON_MODE`, …). */
const parsingConfig = {
  getParsingConfig() {
    const env = process.env
    return {
      useNewParsing: env.USE_NEW_PARSING === 'true',
      comparisonMode: env.PARSING_COMPARISON_MODE === 'true',
      logDifferences: env.LOG_PARSING_DIFFERENCES === 'true',
      similarityThreshold: parseInt(env.PARSING_SIMILARITY_THRESHOLD || '44', 10),
      validateImprovements: true,
      minChildTasksImprovement: parseInt(env.MIN_CHILD_TASKS_IMPROVEMENT || '10', 10),
    }
  },
  isComparisonMode() {
    return parsingConfig.getParsingConfig().comparisonMode
  },
  shouldUseNewParsing() {
    const c = parsingConfig.getParsingConfig()
    return c.useNewParsing || c.comparisonMode
  },
}

/** Comparator without a similarity measure: the comparison never validates the new parse. */
class PlainComparator {
  compareWithImprovements() {
    return { similarityScore: 0, improvements: [], isValidUpgrade: false, validationReason: 'no comparator wired' }
  }

  formatReport() {
    return ''
  }
}

const WORKSPACE_PATTERNS = [
  /# Current Workspace Directory \(([^)]+)\) Files/i,
  /Current Workspace Directory:\s*([^\s\n]+)/i,
  /"workspace":\s*"([^"]+)"/i,
]

/** A workspace-looking path: drive letter, absolute Unix path or `./` `../` relative path. */
function looksLikeWorkspace(p) {
  return typeof p === 'string' && p.length >= 3 && (/^[a-zA-Z]:[/\\]/.test(p) || /^\/[^/]/.test(p) || /^\.{1,2}[/\\]/.test(p))
}

/** The text a say/ask UI message carries, else `''`. */
function sayOrAskText(m) {
  return (m?.type === 'say' || m?.type === 'ask') && typeof m.text === 'string' ? m.text : ''
}

/** The first workspace found in the messages' environment details by `patterns`, else `null`. */
function workspaceInMessages(messages, patterns = WORKSPACE_PATTERNS) {
  for (const m of messages) {
    const text = sayOrAskText(m)
    if (!text) continue
    for (const pattern of patterns) {
      const found = pattern.exec(text)
      const ws = found?.[1]?.trim()
      if (ws && looksLikeWorkspace(ws)) return ws
    }
  }
  return null
}

const stripBom = (s) => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s)

/** Workspace of a task folder: `task_metadata.json`'s `workspace`, else its UI messages' environment details. */
class FileWorkspaceDetector {
  constructor(options = {}) {
    this.options = { enableCache: options.enableCache ?? true, normalizePaths: options.normalizePaths ?? true }
    this.cache = new Map()
  }

  async detect(taskDir) {
    if (this.options.enableCache && this.cache.has(taskDir)) return this.cache.get(taskDir)
    const path = io.mod('path')
    const fsp = io.mod('fs/promises')
    const readJson = async (file) => {
      try {
        return JSON.parse(stripBom(String(await fsp.readFile(path.join(taskDir, file), 'utf8'))))
      } catch {
        return undefined
      }
    }
    let result = { workspace: null, source: 'none', confidence: 0, detectedAt: new Date().toISOString() }
    const meta = await readJson('task_metadata.json')
    if (typeof meta?.workspace === 'string' && meta.workspace.trim()) {
      result = { ...result, workspace: meta.workspace.trim(), source: 'metadata', confidence: 0.95 }
    } else {
      const ui = await readJson('ui_messages.json')
      const ws = Array.isArray(ui) ? workspaceInMessages(ui) : null
      if (ws) result = { ...result, workspace: ws, source: 'environment_details', confidence: 0.85 }
    }
    if (result.workspace && this.options.normalizePaths) {
      let n = result.workspace.replace(/[/\\]/g, path.sep)
      if (n.length > 1 && n.endsWith(path.sep)) n = n.slice(0, -1)
      result.workspace = n
    }
    if (this.options.enableCache) this.cache.set(taskDir, result)
    return result
  }
}

module.exports = {
  memoryCache,
  parsingConfig,
  PlainComparator,
  FileWorkspaceDetector,
  workspaceInMessages,
  looksLikeWorkspace,
  stripBom,
}
