'use strict'
/**
 * `TaskInstructionIndex`, `computeInstructionPrefix` and `globalTaskInstructionIndex` of
 * roo-state-core/compat. The trie lives in Rust (`NativeInstructionIndex`, the legacy exact-trie
 * semantics: a key matches when it equals the query, or is a prefix of it at which the walk stops);
 * this class keeps the legacy method names, sync/async shapes and edge results.
 * Inventory: docs/compat.md §1.
 */
const binding = require('../../index.js')

const DEFAULT_K = 192

/**
 * The legacy matching key of an instruction: lowercased, tags stripped, whitespace collapsed, cut at
 * `K` UTF-16 units. Falsy input (`''`, `null`, `undefined`, `0`) gives `''`; other values go through
 * `String()`.
 */
function computeInstructionPrefix(raw, K = DEFAULT_K) {
  if (!raw) return ''
  const text = typeof raw === 'string' ? raw : String(raw)
  const k = Number.isFinite(K) && K >= 0 ? Math.floor(K) : DEFAULT_K
  if (process.env.ROO_DEBUG_INSTRUCTIONS === '1') {
    const parent = /<task>([\s\S]*?)<\/task>/i.exec(text)
    if (parent) console.log(`SDDD: Extracted parent instruction: ${parent[1].slice(0, 80)}`)
    const context = /<message>([\s\S]*?)<\/message>/i.exec(text)
    if (context) console.log(`SDDD: Extracted message context: ${context[1].slice(0, 80)}`)
  }
  return binding.computeInstructionPrefix(text, k)
}

/** Sub-instructions of a parent's text: new_task messages, code blocks, list items, task blocks, indented lines. */
function extractSubInstructions(parentText) {
  if (!parentText || typeof parentText !== 'string') return []
  const found = []
  const collect = (re, group, min) => {
    for (const m of parentText.matchAll(re)) {
      const v = (m[group] ?? '').trim()
      if (v.length > min) found.push(v)
    }
  }
  collect(/<new_task[^>]*>\s*<message>(.*?)<\/message>/gs, 1, 10)
  collect(/```(\w+)\s*(.*?)```/gs, 2, 20)
  collect(/^[-*+]\s+(.+)$/gm, 1, 10)
  collect(/^\d+\.\s+(.+)$/gm, 1, 10)
  collect(/<task>(.*?)<\/task>/gs, 1, 10)
  for (const m of parentText.matchAll(/(?:^|\n)(?:\s{2,}| {2})(.+)$/gm)) {
    const v = (m[1] ?? '').trim()
    if (v.length > 10 && !v.startsWith('//')) found.push(v)
  }
  return Array.from(new Set(found)).map((s) => s.trim()).filter((s) => s.length > 10)
}

const STOP_WORDS = new Set(['les', 'des', 'une', 'est', 'sont', 'avec', 'dans', 'pour', 'que', 'qui', 'sur', 'par', 'and', 'the', 'for', 'are', 'that', 'this', 'with'])

function words(text) {
  return Array.from(
    new Set(
      String(text)
        .toLowerCase()
        .replace(/[^\w\s]/g, ' ')
        .split(/\s+/)
        .filter((w) => w.length > 3 && !STOP_WORDS.has(w)),
    ),
  )
}

class TaskInstructionIndex {
  constructor() {
    this.native = new binding.NativeInstructionIndex()
    /** parent id → the first sub-instruction given through addParentTaskWithSubInstructions. */
    this.tempTruncatedInstructions = new Map()
    /** normalised prefix → instructions given with `addInstruction(…, instruction)`. */
    this.instructionsByPrefix = new Map()
  }

  addInstruction(parentTaskId, instructionPrefix, instruction, K = DEFAULT_K) {
    if (!instructionPrefix) return
    const prefix = typeof instructionPrefix === 'string' ? instructionPrefix : String(instructionPrefix)
    this.native.add(String(parentTaskId), prefix)
    if (instruction !== undefined) {
      const key = computeInstructionPrefix(prefix, K)
      const list = this.instructionsByPrefix.get(key) ?? []
      list.push({ mode: 'unknown', message: instruction, timestamp: Date.now() })
      this.instructionsByPrefix.set(key, list)
    }
  }

  addParentTaskWithSubInstructions(parentTaskId, fullText) {
    if (!fullText) return 0
    const subs = extractSubInstructions(fullText)
    if (subs.length === 0) {
      this.addInstruction(parentTaskId, computeInstructionPrefix(fullText, DEFAULT_K), fullText)
      return 1
    }
    this.tempTruncatedInstructions.set(parentTaskId, subs[0])
    for (const sub of subs) this.addInstruction(parentTaskId, sub, sub)
    return subs.length
  }

  searchExactPrefix(childText, K = DEFAULT_K) {
    if (!childText) return []
    return this.native.searchExactPrefix(String(childText), K)
  }

  async getParentsForInstruction(text) {
    const found = this.searchExactPrefix(text, DEFAULT_K)
    console.log(`[TaskInstructionIndex] parents for instruction: ${found.length}`)
    console.log(`[TaskInstructionIndex] ${found.map((m) => m.taskId).join(', ')}`)
    return found
  }

  validateParentChildRelation(childText, parentId) {
    return this.searchExactPrefix(childText, DEFAULT_K).some((m) => m.taskId === parentId)
  }

  calculateSimilarity(a, b) {
    if (a === b) return 1
    const w1 = words(a)
    const w2 = words(b)
    if (w1.length === 0 || w2.length === 0) return 0
    const set2 = new Set(w2)
    const common = w1.filter((w) => set2.has(w))
    const score = common.length / Math.max(w1.length, w2.length) + 0.1 * common.filter((w) => w.length > 4).length
    return Math.min(1, score)
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

  rebuildFromSkeletons(skeletonPrefixes) {
    console.log(`[TaskInstructionIndex] Reconstruction de l'index depuis ${skeletonPrefixes?.size ?? 0} squelettes`)
    this.clear()
    const pairs = []
    for (const [taskId, prefixes] of skeletonPrefixes ?? []) {
      for (const p of prefixes ?? []) if (p) pairs.push([String(taskId), String(p)])
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
      avgDepth: entries.length === 0 ? 0 : parents / entries.length,
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
    return this.native
      .entries()
      .filter((e) => e.parentTaskIds.includes(taskId))
      .map((e) => ({ taskId, prefix: e.prefix }))
  }

  getInstructionsByParent(taskId) {
    return this.native
      .entries()
      .filter((e) => e.parentTaskIds.includes(taskId))
      .map((e) => e.prefix)
  }

  getTruncatedInstruction(taskId) {
    return this.tempTruncatedInstructions.get(taskId)
  }

  clearTempTruncatedInstructions() {
    this.tempTruncatedInstructions.clear()
  }

  clear() {
    this.native.clear()
    this.instructionsByPrefix.clear()
  }

  findPotentialParent() {
    console.warn('[TaskInstructionIndex] findPotentialParent is DEPRECATED: use searchExactPrefix')
    return undefined
  }

  findAllPotentialParents() {
    console.warn('[TaskInstructionIndex] findAllPotentialParents is DEPRECATED: use searchExactPrefix')
    return []
  }

  testSimilarityAlgorithm() {
    const ok =
      this.calculateSimilarity('créer un fichier de configuration', 'créer un fichier de configuration') === 1 &&
      this.calculateSimilarity('analyser le code source du projet', 'rédiger la documentation utilisateur') < 0.5
    console.log(ok ? 'VALIDATION SDDD RÉUSSIE: similarity checks pass' : 'ÉCHEC VALIDATION: similarity checks failed')
  }
}

const globalTaskInstructionIndex = new TaskInstructionIndex()

module.exports = { TaskInstructionIndex, computeInstructionPrefix, globalTaskInstructionIndex, extractSubInstructions }
