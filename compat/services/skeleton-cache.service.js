'use strict'
// SkeletonCacheService of the compat layer: the legacy singleton's methods, results, files and
// tiers (docs/compat-services.md §4): a Map of skeletons, 30 minutes of validity, one shared
// reload, skeleton files in `<first storage>/tasks/.skeletons/<taskId>.json`, the Claude tier and
// the archive tier on request, tier statistics.
//
// Files go through `fs.promises` (looked up at call time, so mocks see every read and write). The
// storage detector, the Claude detector, the task archiver, the archive converter and the
// dual-write helper are the caller's modules when its replacement file handed them over
// (compat/services/caller-services.js); without them, compat's own detector and no extra tiers.
//
// `fixed` mode, when nothing replaced the file functions (io.readsAreNative()): the skeletons of
// the store come from the project's incremental skeleton cache (only changed tasks are re-read,
// the values are the core's, nothing is written into the store); the tiers are added as in
// `legacy`. Otherwise both modes read and write as the legacy service did.

const io = require('../io.js')
const os = require('os')
const { currentMode } = require('./compat-mode.js')
const { serviceModule, pick, storageDetector } = require('./caller-services.js')

const SKELETON_CACHE_DIR_NAME = '.skeletons'
const CACHE_VALIDITY_MS = 30 * 60 * 1000
const ARCHIVE_CONCURRENCY = 20

const fs = () => io.mod('fs').promises
const path = () => io.mod('path')

// Whether nothing replaced the file functions (a runner's factory mock may throw on a function it
// does not define: then something did).
function nativeReads() {
  try {
    return io.readsAreNative()
  } catch {
    return false
  }
}

function binding() {
  return require('../../index.js')
}

// Our cache directory (the project's incremental skeleton cache), as the binding defines it.
function ourCacheDir() {
  if (process.env.ROO_STATE_CACHE_DIR) return process.env.ROO_STATE_CACHE_DIR
  const home = os.homedir()
  const p = require('path')
  if (process.platform === 'win32') {
    return p.join(process.env.LOCALAPPDATA || p.join(home, 'AppData', 'Local'), 'roo-state-core')
  }
  if (process.platform === 'darwin') return p.join(home, 'Library', 'Caches', 'roo-state-core')
  const xdg = process.env.XDG_CACHE_HOME
  return p.join(xdg && p.isAbsolute(xdg) ? xdg : p.join(home, '.cache'), 'roo-state-core')
}

class SkeletonCacheService {
  constructor() {
    this.cache = new Map()
    this.lastRefreshTime = 0
    this.loadPromise = null
    this.CACHE_VALIDITY_MS = CACHE_VALIDITY_MS
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
    this.dualWriteToStore(taskId, skeleton).catch(() => undefined)
  }

  // The caller's best-effort copy to its own store (nothing when it handed over no such helper).
  async dualWriteToStore(taskId, skeleton) {
    const write = pick(await serviceModule('./unified-store/dual-write.js'), 'dualWriteConversationToStore')
    if (typeof write === 'function') await write(taskId, skeleton)
  }

  async saveSkeleton(taskId, skeleton) {
    const toSave = skeleton || this.cache.get(taskId)
    if (!toSave) return false
    try {
      const dir = await this.getSkeletonDir()
      if (!dir) return false
      await fs().mkdir(dir, { recursive: true })
      const file = path().join(dir, `${taskId}.json`)
      const json = JSON.stringify(toSave, null, 2)
      for (let attempt = 1; attempt <= 3; attempt++) {
        try {
          await fs().writeFile(file, json)
          const back = await fs().readFile(file, 'utf-8')
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

  async loadSkeletonsFromDisk() {
    try {
      const locations = await (await storageDetector()).detectStorageLocations()
      if (locations.length === 0) {
        console.warn('[SkeletonCacheService] Aucun storage Roo détecté')
        return
      }
      const tasksDir = path().join(locations[0], 'tasks')
      const skeletonDir = path().join(tasksDir, SKELETON_CACHE_DIR_NAME)
      if (!(await this.directoryExists(tasksDir))) {
        console.warn(`[SkeletonCacheService] Répertoire tasks introuvable: ${tasksDir}`)
        return
      }
      if (currentMode() === 'fixed' && nativeReads()) {
        await this.loadFromCore(tasksDir)
      } else {
        this.cache.clear()
        await this.readSkeletonFiles(skeletonDir)
        await this.buildMissingSkeletons(tasksDir, skeletonDir)
      }
      if (SkeletonCacheService.config.enableClaudeTier) await this.loadClaudeSessionsFromDisk()
      if (SkeletonCacheService.config.enableArchiveTier) await this.loadArchivedSkeletonsFromGDrive()
    } catch (error) {
      console.error('[SkeletonCacheService] Erreur lors du chargement des skeletons:', error)
    }
  }

  async readSkeletonFiles(skeletonDir) {
    if (!(await this.directoryExists(skeletonDir))) {
      console.log('[SkeletonCacheService] Répertoire de squelettes inexistant, sera créé automatiquement')
      return
    }
    const files = (await fs().readdir(skeletonDir)).filter((f) => f.endsWith('.json'))
    console.log(`[SkeletonCacheService] Chargement de ${files.length} skeletons existants...`)
    let loaded = 0
    for (const file of files) {
      try {
        let text = await fs().readFile(path().join(skeletonDir, file), 'utf-8')
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
        const skeleton = JSON.parse(text)
        if (skeleton.taskId) {
          this.cache.set(skeleton.taskId, skeleton)
          loaded++
        }
      } catch (err) {
        console.error(`[SkeletonCacheService] Erreur lors du chargement de ${file}:`, err)
      }
    }
    console.log(`[SkeletonCacheService] ${loaded}/${files.length} skeletons chargés avec succès`)
  }

  async getSkeletonDir() {
    try {
      const locations = await (await storageDetector()).detectStorageLocations()
      if (locations.length === 0) return null
      return path().join(locations[0], 'tasks', SKELETON_CACHE_DIR_NAME)
    } catch {
      return null
    }
  }

  async directoryExists(dir) {
    try {
      return (await fs().stat(dir)).isDirectory()
    } catch {
      return false
    }
  }

  // Task folders without a skeleton file: analysed with the storage detector, the file written.
  async buildMissingSkeletons(tasksDir, skeletonDir) {
    try {
      await fs().mkdir(skeletonDir, { recursive: true })
      const entries = await fs().readdir(tasksDir, { withFileTypes: true })
      let built = 0
      let skipped = 0
      for (const entry of entries) {
        if (!entry.isDirectory() || entry.name === SKELETON_CACHE_DIR_NAME) continue
        const id = entry.name
        const file = path().join(skeletonDir, `${id}.json`)
        try {
          await fs().access(file)
          skipped++
          continue
        } catch {
          // no skeleton file yet: build it
        }
        try {
          const detector = await storageDetector()
          const skeleton = await detector.analyzeConversation(id, path().join(tasksDir, id))
          if (skeleton && skeleton.taskId) {
            await fs().writeFile(file, JSON.stringify(skeleton, null, 2))
            this.cache.set(skeleton.taskId, skeleton)
            built++
            console.log(`[SkeletonCacheService] Built missing skeleton for ${id}`)
          }
        } catch (error) {
          console.error(`[SkeletonCacheService] Failed to build skeleton for ${id}:`, error)
        }
      }
      if (built > 0) console.log(`[SkeletonCacheService] Built ${built} missing skeletons (${skipped} already existed)`)
    } catch (error) {
      console.error('[SkeletonCacheService] Error building missing skeletons:', error)
    }
  }

  // Tier 2: one skeleton per Claude Code project (`claude-<folder name>`), a Roo task of the same
  // id wins; skeletons without sequence are skipped.
  async loadClaudeSessionsFromDisk() {
    try {
      const detector = pick(await serviceModule('../utils/claude-storage-detector.js'), 'ClaudeStorageDetector')
      if (!detector) throw new Error('no Claude storage detector was handed over (servicesImport)')
      const locations = await detector.detectStorageLocations()
      if (locations.length === 0) {
        console.log('[SkeletonCacheService] Tier 2 (Claude): aucun repertoire de projets trouve')
        return
      }
      let loaded = 0
      for (const location of locations) {
        try {
          const taskId = `claude-${path().basename(location.projectPath)}`
          if (this.cache.has(taskId)) continue
          const skeleton = await detector.analyzeConversation(taskId, location.projectPath)
          if (skeleton && (skeleton.sequence ?? []).length > 0) {
            if (!skeleton.metadata) skeleton.metadata = {}
            skeleton.metadata.source = 'claude-code'
            skeleton.metadata.dataSource = 'claude'
            this.cache.set(taskId, skeleton)
            loaded++
          }
        } catch (error) {
          console.warn(`[SkeletonCacheService] Tier 2 (Claude): echec ${location.projectPath}:`, error)
        }
      }
      console.log(`[SkeletonCacheService] Tier 2 (Claude): ${loaded} sessions chargees depuis ${locations.length} projets`)
    } catch (error) {
      console.warn('[SkeletonCacheService] Tier 2 (Claude): chargement non-bloquant a echoue:', error)
    }
  }

  // Tier 3: archived tasks of every machine, read 20 at a time; a task already cached wins.
  async loadArchivedSkeletonsFromGDrive() {
    try {
      const archiver = pick(await serviceModule('./task-archiver/index.js'), 'TaskArchiver')
      const toSkeleton = pick(await serviceModule('./archive-skeleton-builder.js'), 'archiveToSkeleton')
      if (!archiver || !toSkeleton) throw new Error('no task archiver was handed over (servicesImport)')
      const files = await archiver.listArchivedTaskFiles()
      if (files.length === 0) {
        console.log('[SkeletonCacheService] Tier 3 (archives): aucune archive trouvee')
        return
      }
      const queue = files.filter((f) => !this.cache.has(f.taskId)).map((f) => ({ taskId: f.taskId, filePath: f.filePath }))
      const collisions = files.length - queue.length
      let loaded = 0
      let failed = 0
      const one = async (item) => {
        try {
          const archive = await archiver.readArchivedTaskFromPath(item.filePath)
          if (!archive) {
            failed++
            return
          }
          const skeleton = toSkeleton(archive)
          if (!skeleton.metadata) skeleton.metadata = {}
          skeleton.metadata.dataSource = 'gdrive-archive'
          if (!this.cache.has(skeleton.taskId)) {
            this.cache.set(skeleton.taskId, skeleton)
            loaded++
          }
        } catch (error) {
          failed++
          if (failed <= 3) console.warn(`[SkeletonCacheService] Tier 3 (archives): echec lecture ${item.taskId}:`, error)
        }
      }
      for (let i = 0; i < queue.length; i += ARCHIVE_CONCURRENCY) {
        await Promise.all(queue.slice(i, i + ARCHIVE_CONCURRENCY).map(one))
      }
      console.log(
        `[SkeletonCacheService] Tier 3 (archives): ${loaded} chargees, ` +
          `${collisions} collisions ignorees (local prioritaire), ${failed} echecs sur ${files.length} total`,
      )
    } catch (error) {
      console.warn('[SkeletonCacheService] Tier 3 (archives): chargement non-bloquant a echoue:', error)
    }
  }

  // `fixed` mode on an unobserved disk: the project's incremental skeleton cache of the store.
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
