'use strict'
// SkeletonCacheService of the compat layer: the legacy singleton's methods and results (a Map of
// skeletons, 30 minutes of validity, one shared reload, tier statistics).
//
// Where skeletons come from:
//   - `legacy` mode: `<first storage>/tasks/.skeletons/*.json` read through `fs.promises` (BOM
//     stripped, files without `taskId` skipped, unreadable ones logged), then every task folder
//     without such a file analysed with `RooStorageDetector.analyzeConversation`;
//   - `fixed` mode: the project's skeleton cache (`buildSkeletonCache` then `loadSkeletons` on the
//     first storage's `tasks/`): only changed tasks are re-read, and the values are the core's.
// Where skeletons are written (`saveSkeleton`, `saveAllToDisk`, `addOrUpdate`, and the skeletons
// analysed for missing files): our cache directory (`$ROO_STATE_CACHE_DIR`, else the platform's
// cache dir + `roo-state-core`), under `compat-skeletons/<taskId>.json`, never the extension's
// folders. A caller that wants the legacy location (`<storage>/tasks/.skeletons/<id>.json`) opts in
// with `SkeletonCacheService.configure({ writeToStorage: true })`.

const path = require('path')
const os = require('os')
const fs = require('fs')
const { currentMode } = require('./compat-mode.js')

const SKELETON_CACHE_DIR_NAME = '.skeletons'
const CACHE_VALIDITY_MS = 30 * 60 * 1000

// The storage detector, looked up at each call through the class (tests replace it).
function detector() {
  return SkeletonCacheService.storageDetector()
}

function binding() {
  return require('../../index.js')
}

// Our cache directory, as the binding defines it.
function ourCacheDir() {
  if (process.env.ROO_STATE_CACHE_DIR) return process.env.ROO_STATE_CACHE_DIR
  const home = os.homedir()
  if (process.platform === 'win32') {
    return path.join(process.env.LOCALAPPDATA || path.join(home, 'AppData', 'Local'), 'roo-state-core')
  }
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Caches', 'roo-state-core')
  const xdg = process.env.XDG_CACHE_HOME
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.cache'), 'roo-state-core')
}

class SkeletonCacheService {
  constructor() {
    this.cache = new Map()
    this.lastRefreshTime = 0
    this.loadPromise = null
    this.CACHE_VALIDITY_MS = CACHE_VALIDITY_MS
  }

  static storageDetector() {
    return require('../utils/roo-storage-detector.js').RooStorageDetector
  }

  static configure(config) {
    SkeletonCacheService.config = { ...SkeletonCacheService.config, ...config }
  }

  static getInstance() {
    if (!SkeletonCacheService.instance) SkeletonCacheService.instance = new SkeletonCacheService()
    return SkeletonCacheService.instance
  }

  static reset() {
    SkeletonCacheService.instance = null
    SkeletonCacheService.config = {}
  }

  async getCache() {
    await this.ensureFreshCache()
    return this.cache
  }

  async getSkeleton(taskId) {
    await this.ensureFreshCache()
    return this.cache.get(taskId)
  }

  async has(taskId) {
    await this.ensureFreshCache()
    return this.cache.has(taskId)
  }

  async getAllSkeletons() {
    await this.ensureFreshCache()
    return Array.from(this.cache.values())
  }

  async addOrUpdate(taskId, skeleton) {
    this.cache.set(taskId, skeleton)
    await this.saveSkeleton(taskId, skeleton)
  }

  // The directory skeleton files are written to (see the header).
  async getSkeletonDir() {
    if (SkeletonCacheService.config.writeToStorage) {
      try {
        const locations = await detector().detectStorageLocations()
        if (locations.length === 0) return null
        return path.join(locations[0], 'tasks', SKELETON_CACHE_DIR_NAME)
      } catch {
        return null
      }
    }
    return path.join(ourCacheDir(), 'compat-skeletons')
  }

  async saveSkeleton(taskId, skeleton) {
    const toSave = skeleton || this.cache.get(taskId)
    if (!toSave) return false
    try {
      const dir = await this.getSkeletonDir()
      if (!dir) return false
      await fs.promises.mkdir(dir, { recursive: true })
      const file = path.join(dir, `${taskId}.json`)
      const json = JSON.stringify(toSave, null, 2)
      for (let attempt = 1; attempt <= 3; attempt++) {
        try {
          await fs.promises.writeFile(file, json)
          const back = await fs.promises.readFile(file, 'utf-8')
          if (back.length === json.length) return true
          console.warn(`[SkeletonCacheService] Write verification failed for ${taskId}, attempt ${attempt}`)
        } catch (err) {
          if (attempt === 3) throw err
          await new Promise((r) => setTimeout(r, Math.pow(2, attempt) * 100))
        }
      }
      return false
    } catch (error) {
      console.error(`[SkeletonCacheService] Failed to save skeleton ${taskId}:`, error)
      return false
    }
  }

  async saveAllToDisk() {
    let saved = 0
    let errors = 0
    for (const [taskId, skeleton] of this.cache.entries()) {
      if (await this.saveSkeleton(taskId, skeleton)) saved++
      else errors++
    }
    console.log(`[SkeletonCacheService] saveAllToDisk: ${saved} saved, ${errors} errors`)
    return { saved, errors }
  }

  getCacheSize() {
    return this.cache.size
  }

  async forceRefresh() {
    console.log('[SkeletonCacheService] Force refresh demandé...')
    await this.loadSkeletonsFromDisk()
    this.lastRefreshTime = Date.now()
  }

  async ensureFreshCache() {
    const now = Date.now()
    const age = now - this.lastRefreshTime
    if (age > this.CACHE_VALIDITY_MS || this.cache.size === 0) {
      if (this.loadPromise) {
        await this.loadPromise
        return
      }
      console.log(`[SkeletonCacheService] Cache obsolète (âge: ${Math.round(age / 1000)}s), rafraîchissement...`)
      this.loadPromise = this.loadSkeletonsFromDisk().finally(() => {
        this.loadPromise = null
      })
      await this.loadPromise
      if (this.cache.size > 0) this.lastRefreshTime = now
    }
  }

  async warmCache() {
    await this.ensureFreshCache()
  }

  async awaitFreshnessWithBudget(timeoutMs) {
    try {
      if (Date.now() - this.lastRefreshTime <= this.CACHE_VALIDITY_MS && this.cache.size > 0) return true
      await Promise.race([this.ensureFreshCache(), new Promise((r) => setTimeout(r, timeoutMs))])
      return Date.now() - this.lastRefreshTime <= this.CACHE_VALIDITY_MS && this.cache.size > 0
    } catch {
      return false
    }
  }

  async directoryExists(dir) {
    try {
      return (await fs.promises.stat(dir)).isDirectory()
    } catch {
      return false
    }
  }

  async loadSkeletonsFromDisk() {
    try {
      const locations = await detector().detectStorageLocations()
      if (locations.length === 0) {
        console.warn('[SkeletonCacheService] Aucun storage Roo détecté')
        return
      }
      const tasksDir = path.join(locations[0], 'tasks')
      if (!(await this.directoryExists(tasksDir))) {
        console.warn(`[SkeletonCacheService] Répertoire tasks introuvable: ${tasksDir}`)
        return
      }
      if (currentMode() === 'fixed') {
        await this.loadFromCore(tasksDir)
        return
      }
      this.cache.clear()
      await this.readSkeletonFiles(path.join(tasksDir, SKELETON_CACHE_DIR_NAME))
      const own = await this.getSkeletonDir()
      if (own && own !== path.join(tasksDir, SKELETON_CACHE_DIR_NAME)) await this.readSkeletonFiles(own)
      await this.buildMissingSkeletons(tasksDir)
    } catch (error) {
      console.error('[SkeletonCacheService] Erreur lors du chargement des skeletons:', error)
    }
  }

  async readSkeletonFiles(dir) {
    if (!(await this.directoryExists(dir))) return 0
    const files = (await fs.promises.readdir(dir)).filter((f) => f.endsWith('.json'))
    let loaded = 0
    for (const file of files) {
      try {
        let text = await fs.promises.readFile(path.join(dir, file), 'utf-8')
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
        const skeleton = JSON.parse(text)
        if (skeleton && skeleton.taskId) {
          this.cache.set(skeleton.taskId, skeleton)
          loaded++
        }
      } catch (err) {
        console.error(`[SkeletonCacheService] Erreur lors du chargement de ${file}:`, err)
      }
    }
    console.log(`[SkeletonCacheService] ${loaded}/${files.length} skeletons chargés avec succès`)
    return loaded
  }

  // Task folders with no skeleton yet: analysed; written to the skeleton directory (ours unless
  // the caller opted in to the storage's own `.skeletons`).
  async buildMissingSkeletons(tasksDir) {
    try {
      const entries = await fs.promises.readdir(tasksDir, { withFileTypes: true })
      const dir = await this.getSkeletonDir()
      let built = 0
      for (const e of entries) {
        if (!e.isDirectory() || e.name === SKELETON_CACHE_DIR_NAME || this.cache.has(e.name)) continue
        try {
          const skeleton = await detector().analyzeConversation(e.name, path.join(tasksDir, e.name))
          if (skeleton && skeleton.taskId) {
            this.cache.set(skeleton.taskId, skeleton)
            if (dir) {
              await fs.promises.mkdir(dir, { recursive: true })
              await fs.promises.writeFile(path.join(dir, `${e.name}.json`), JSON.stringify(skeleton, null, 2))
            }
            built++
          }
        } catch (error) {
          console.error(`[SkeletonCacheService] Failed to build skeleton for ${e.name}:`, error)
        }
      }
      if (built > 0) console.log(`[SkeletonCacheService] Built ${built} missing skeletons`)
    } catch (error) {
      console.error('[SkeletonCacheService] Error building missing skeletons:', error)
    }
  }

  async loadFromCore(tasksDir) {
    const core = binding()
    const cacheDir = ourCacheDir()
    await core.buildSkeletonCache({ tasksDir, cacheDir })
    const loaded = await core.loadSkeletons({ tasksDir, cacheDir })
    this.cache.clear()
    for (const s of loaded.skeletons) this.cache.set(s.taskId, s)
  }

  async getCacheTierStats() {
    const cacheAgeMs = this.lastRefreshTime === 0 ? null : Date.now() - this.lastRefreshTime
    const stale = cacheAgeMs === null ? true : cacheAgeMs > this.CACHE_VALIDITY_MS
    let tier1 = 0
    let tier2 = 0
    let tier3 = 0
    for (const s of this.cache.values()) {
      const source = s && s.metadata && s.metadata.dataSource
      if (source === 'claude') tier2++
      else if (source === 'gdrive-archive') tier3++
      else tier1++
    }
    return {
      tier1_roo: tier1,
      tier2_claude: tier2,
      tier3_archives: tier3,
      total: this.cache.size,
      config: {
        enableClaudeTier: !!SkeletonCacheService.config.enableClaudeTier,
        enableArchiveTier: !!SkeletonCacheService.config.enableArchiveTier,
      },
      cacheAgeMs,
      stale,
    }
  }
}

SkeletonCacheService.instance = null
SkeletonCacheService.config = {}

module.exports = { SkeletonCacheService, ourCacheDir }
