'use strict'
/**
 * `TaskInstructionIndex`, `computeInstructionPrefix` and `globalTaskInstructionIndex` of
 * roo-state-core/compat. The trie lives in Rust (`NativeInstructionIndex`, the legacy exact-trie
 * semantics: a key matches when it equals the query, or is a prefix of it at which the walk stops);
 * this class keeps the legacy method names, sync/async shapes, edge results and debug logs.
 * The sub-instruction splitter is the caller's `sub-instruction-extractor` module when its
 * replacement file hands it over (`use({ subInstructionExtractor })`, so a test's mock of it is
 * seen), else ours (`extractSubInstructions` below, native like the similarity).
 * Inventory: docs/compat.md §1.
 */
const binding = require('../../index.js')
const io = require('../io.js')

const DEFAULT_K = 192

function debugOn() {
  return process.env.ROO_DEBUG_INSTRUCTIONS === '1'
}

/**
 * The legacy matching key of an instruction: lowercased, tags stripped, whitespace collapsed, cut at
 * `K` UTF-16 units. Falsy input (`''`, `null`, `undefined`, `0`) gives `''`; other values go through
 * `String()`.
 */
function computeInstructionPrefix(raw, K = DEFAULT_K) {
  if (!raw) return ''
  const text = typeof raw === 'string' ? raw : String(raw)
  const k = Number.isFinite(K) && K >= 0 ? Math.floor(K) : DEFAULT_K
  if (debugOn()) logInstructionParts(text)
  return binding.computeInstructionPrefix(text, k)
}

/** The debug lines of `computeInstructionPrefix`: the `<task>` and `<message>` it starts from. */
function logInstructionParts(text) {
  const parent = /<task>([\s\S]*?)<\/task>/i.exec(text)
  if (parent) console.log(`SDDD: Extracted parent instruction: ${parent[1].slice(0, 80)}`)
  const context = /<message>([\s\S]*?)<\/message>/i.exec(text)
  if (context) console.log(`SDDD: Extracted message context: ${context[1].slice(0, 80)}`)
}

/**
 * Sub-instructions of a parent's text: new_task messages, code blocks, list items, task blocks,
 * indented lines (`roo_legacy::sub_instructions`).
 */
function extractSubInstructions(parentText) {
  if (!parentText || typeof parentText !== 'string') return []
  return binding.compatSubInstructions(parentText)
}

/** The splitter in use: the caller's module when handed over, else ours. */
function subInstructionsOf(text) {
  const caller = io.mod('subInstructionExtractor')
  const fn = caller && typeof caller.extractSubInstructions === 'function' ? caller.extractSubInstructions : extractSubInstructions
  return fn(text)
}

/** Four texts of the legacy self-check of the similarity (pairs 1 to 3). */
const SIMILARITY_CASES = [
  ['Cas réel mission', '**mission debug critique : réparation du système hiérarchique...', '**mission corrective finale : validation et documentation...'],
  ['Match évident', '**mission debug critique système réparation', '**mission debug critique réparation système'],
  ['Pas de match', 'bonjour analyse git projet', 'mission powerpoint génération slides'],
]

class TaskInstructionIndex {
  constructor() {
    this.native = new binding.NativeInstructionIndex()
    /** parent id → the instruction kept for phase 2 by addParentTaskWithSubInstructions. */
    this.tempTruncatedInstructions = new Map()
    /**
     * Every `[parentTaskId, prefix, K]` added, in order; the keys of each parent
     * (`getInstructionsByParent`) are computed from it when asked for, so that adding costs one
     * native call.
     */
    this.added = []
    /** How much of `added` `byParent` has taken in. */
    this.byParentUpTo = 0
    /** parent id → its distinct keys in the order they were first added. */
    this.byParent = new Map()
  }

  addInstruction(parentTaskId, instructionPrefix, _instruction, K = DEFAULT_K) {
    if (!instructionPrefix || instructionPrefix.length === 0) return
    const prefix = typeof instructionPrefix === 'string' ? instructionPrefix : String(instructionPrefix)
    // The native index keys at 192 units; another K is cut here first.
    this.native.add(String(parentTaskId), K === DEFAULT_K ? prefix : computeInstructionPrefix(prefix, K))
    this.added.push([parentTaskId, prefix, K])
  }

  addParentTaskWithSubInstructions(parentTaskId, fullText) {
    if (!fullText) return 0
    const subs = subInstructionsOf(fullText)
    let count = 0
    for (const sub of subs) {
      this.addInstruction(parentTaskId, sub, sub)
      count++
    }
    if (subs.length > 0 && subs[0]) {
      if (!this.tempTruncatedInstructions) this.tempTruncatedInstructions = new Map()
      this.tempTruncatedInstructions.set(parentTaskId, subs[0])
      if (debugOn()) {
        console.log(`[SDDD-CORRECTION] truncatedInstruction of ${parentTaskId} set to "${String(subs[0]).substring(0, 80)}..."`)
      }
    }
    if (count === 0) {
      const fallback = computeInstructionPrefix(fullText, DEFAULT_K)
      this.addInstruction(parentTaskId, fallback, fullText)
      count = 1
      if (!this.tempTruncatedInstructions) this.tempTruncatedInstructions = new Map()
      this.tempTruncatedInstructions.set(parentTaskId, fallback)
    }
    return count
  }

  searchExactPrefix(childText, K = DEFAULT_K) {
    if (!childText || childText.length === 0) return []
    if (debugOn()) return this.searchExactPrefixLogged(String(childText), K)
    return this.native.searchExactPrefix(String(childText), K)
  }

  /**
   * `searchExactPrefix` under `ROO_DEBUG_INSTRUCTIONS=1`: the same native lookup, step by step,
   * logging each length tried and the outcome.
   */
  searchExactPrefixLogged(childText, K) {
    const trace = this.native.searchExactPrefixTrace(childText, K)
    // The key computed from the text logs what it starts from, as `computeInstructionPrefix` does.
    if (trace.computed) logInstructionParts(childText)
    console.log(`[EXACT PREFIX SEARCH] SDDD: Starting search with full prefix: "${trace.full}" (K=${K})`)
    for (const step of trace.steps) console.log(`[EXACT PREFIX SEARCH] SDDD: Trying prefix length ${step.length}: "${step.query}"`)
    if (trace.foundLength != null) {
      const key = trace.matches[0].prefix
      console.log(`[EXACT PREFIX SEARCH] SDDD: ✅ Found match with length ${trace.foundLength}: "${key}" → ${trace.matches.length} parent(s)`)
      return trace.matches
    }
    console.log('[EXACT PREFIX SEARCH] SDDD: ❌ No match found for any prefix length')
    return []
  }

  async getParentsForInstruction(text) {
    if (!text || text.length === 0) return []
    console.log(`[TaskInstructionIndex] SDDD: getParentsForInstruction searching for: "${String(text).substring(0, 50)}..."`)
    const found = this.searchExactPrefix(text, DEFAULT_K)
    console.log(`[TaskInstructionIndex] SDDD: getParentsForInstruction found ${found.length} parents`)
    return found
  }

  validateParentChildRelation(childText, parentId) {
    if (!childText || !parentId) return false
    return this.searchExactPrefix(childText, DEFAULT_K).some((m) => m.taskId === parentId)
  }

  /** Word overlap in [0, 1] (`roo_legacy::instruction_similarity`); a method, so a test may replace it. */
  calculateSimilarity(a, b) {
    if (!a || !b) return 0
    if (a === b) return 1
    return binding.compatInstructionSimilarity(String(a), String(b))
  }

  async searchSimilar(text, threshold = 0.2) {
    if (!text) return []
    const query = computeInstructionPrefix(text, DEFAULT_K)
    const out = []
    for (const { prefix, parentTaskIds } of this.native.entries()) {
      const similarity = this.calculateSimilarity(query, prefix)
      if (similarity < threshold) continue
      const matchType = similarity === 1 ? 'exact' : similarity > 0.5 ? 'prefix' : 'fuzzy'
      for (const taskId of parentTaskIds) out.push({ taskId, similarity, prefix, similarityScore: similarity, matchType })
    }
    return out.sort((x, y) => y.similarity - x.similarity)
  }

  /** Adds every prefix of every task (the index is not cleared first, as in the legacy index). */
  rebuildFromSkeletons(skeletonPrefixes) {
    console.log(`[TaskInstructionIndex] Reconstruction de l'index depuis ${skeletonPrefixes?.size ?? 0} squelettes`)
    const pairs = []
    for (const [taskId, prefixes] of skeletonPrefixes ?? []) {
      for (const p of prefixes ?? []) {
        if (!p || p.length === 0) continue
        pairs.push([String(taskId), String(p)])
        this.added.push([taskId, String(p), DEFAULT_K])
      }
    }
    this.native.addMany(pairs)
    console.log(`[TaskInstructionIndex] Index reconstruit: ${this.native.size} préfixes`)
  }

  getStats() {
    const entries = this.native.entries()
    const parents = entries.reduce((n, e) => n + e.parentTaskIds.length, 0)
    return {
      totalNodes: entries.length,
      totalInstructions: entries.length,
      avgDepth: parents > 0 ? parents / entries.length : 0,
    }
  }

  async getSize() {
    return this.native.size
  }

  async getAllParentTaskIds() {
    const ids = new Set()
    for (const e of this.native.entries()) for (const id of e.parentTaskIds) ids.add(id)
    return Array.from(ids)
  }

  async searchByTaskId(taskId) {
    if (!taskId || String(taskId).trim() === '') return []
    const found = this.native
      .entries()
      .filter((e) => e.parentTaskIds.includes(taskId))
      .map((e) => ({ taskId, prefix: e.prefix }))
    console.log(`[TaskInstructionIndex] SDDD: searchByTaskId found ${found.length} results for taskId: ${taskId}`)
    return found
  }

  /** The keys `taskId` was registered under, each once, in the order they were first added for it. */
  getInstructionsByParent(taskId) {
    for (; this.byParentUpTo < this.added.length; this.byParentUpTo++) {
      const [parent, prefix, K] = this.added[this.byParentUpTo]
      const key = computeInstructionPrefix(prefix, K)
      const list = this.byParent.get(parent)
      if (!list) this.byParent.set(parent, [key])
      else if (!list.includes(key)) list.push(key)
    }
    return this.byParent.get(taskId) || []
  }

  getTruncatedInstruction(taskId) {
    return this.tempTruncatedInstructions.get(taskId)
  }

  clearTempTruncatedInstructions() {
    this.tempTruncatedInstructions.clear()
  }

  clear() {
    this.native.clear()
    this.added = []
    this.byParentUpTo = 0
    this.byParent = new Map()
  }

  findPotentialParent() {
    console.warn('[TaskInstructionIndex] findPotentialParent is DEPRECATED: use searchExactPrefix')
    return undefined
  }

  findAllPotentialParents() {
    console.warn('[TaskInstructionIndex] findAllPotentialParents is DEPRECATED: use searchExactPrefix')
    return []
  }

  /**
   * The legacy self-check of `calculateSimilarity` (called through the instance, so a replaced
   * method is the one checked): three pairs, the first two expected above 0.2, the third not.
   */
  testSimilarityAlgorithm() {
    console.log('\n🧪 === SIMILARITY SELF-CHECK ===')
    const scores = SIMILARITY_CASES.map(([label, a, b], i) => {
      const similarity = this.calculateSimilarity(a, b)
      console.log(`\n🎯 TEST ${i + 1} (${label}):`)
      console.log(`   A: "${a.substring(0, 50)}"`)
      console.log(`   B: "${b.substring(0, 50)}"`)
      console.log(`   Similarity: ${similarity.toFixed(3)} (threshold 0.2)`)
      console.log(`   Outcome: ${similarity > 0.2 ? '✅ MATCH' : '❌ NO MATCH'}`)
      return similarity
    })
    console.log('\n🧪 === END OF SELF-CHECK ===\n')
    if (scores[0] > 0.2 && scores[1] > 0.2 && scores[2] <= 0.2) {
      console.log('✅ 🎯 VALIDATION SDDD RÉUSSIE: the similarity behaves as expected')
    } else {
      console.log('❌ 🚨 ÉCHEC VALIDATION SDDD: the similarity needs adjusting')
    }
  }
}

const globalTaskInstructionIndex = new TaskInstructionIndex()

module.exports = { TaskInstructionIndex, computeInstructionPrefix, globalTaskInstructionIndex, extractSubInstructions }
