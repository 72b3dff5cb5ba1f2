'use strict'
// ExportConfigManager of the compat layer: the legacy manager's methods, results, error codes and
// file (docs/compat-services.md §3). The file is `xml_export_config.json` in the parent folder of
// the first storage location the storage detector reports, as the legacy manager had it; it is
// read and written through `fs/promises` (the module's default export, looked up at call time, so
// mocks see it). The detector and the error classes are the caller's when its replacement file
// handed over its modules (compat/services/caller-services.js), else compat's.
// Modes: `legacy` hands out shallow copies of the defaults, so adding a template or filter to a
// defaults-derived configuration also changes the module's defaults, as the legacy manager did;
// `fixed` copies them deeply.

const io = require('../io.js')
const { currentMode } = require('./compat-mode.js')
const { errorClasses, storageDetector } = require('./caller-services.js')
const { ExportConfigManagerError, ExportConfigManagerErrorCode } = require('./errors.js')

const CONFIG_FILE_NAME = 'xml_export_config.json'

const DEFAULT_CONFIG = {
  defaults: { prettyPrint: true, includeContent: false, compression: 'none' },
  templates: {},
  filters: {},
}

function defaultsCopy() {
  if (currentMode() === 'legacy') return { ...DEFAULT_CONFIG }
  return JSON.parse(JSON.stringify(DEFAULT_CONFIG))
}

const fsp = () => io.defaultOf('fs/promises')
const path = () => io.mod('path')

class ExportConfigManager {
  constructor() {
    this.configCache = null
    this.configPath = null
    this.initializeConfigPath()
  }

  async initializeConfigPath() {
    try {
      const locations = await (await storageDetector()).detectStorageLocations()
      if (locations.length > 0) {
        this.configPath = path().join(path().dirname(locations[0]), ExportConfigManager.CONFIG_FILE_NAME)
      }
    } catch (error) {
      console.error("Erreur lors de l'initialisation du chemin de configuration:", error)
    }
  }

  async getConfigPath() {
    if (!this.configPath) await this.initializeConfigPath()
    if (!this.configPath) {
      const { ExportConfigManagerError: Err } = await errorClasses()
      throw new Err(
        "Impossible de déterminer l'emplacement du fichier de configuration. Aucun stockage Roo détecté.",
        ExportConfigManagerErrorCode.NO_STORAGE_DETECTED,
      )
    }
    return this.configPath
  }

  async getConfig() {
    if (this.configCache) return this.configCache
    try {
      const file = await this.getConfigPath()
      try {
        await fsp().access(file)
        const text = await fsp().readFile(file, 'utf-8')
        const clean = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
        this.configCache = this.mergeWithDefaults(JSON.parse(clean))
        return this.configCache
      } catch {
        console.warn('Fichier de configuration non trouvé ou corrompu, utilisation de la configuration par défaut')
        this.configCache = defaultsCopy()
        await this.saveConfig(this.configCache)
        return this.configCache
      }
    } catch (error) {
      console.error('Erreur lors du chargement de la configuration:', error)
      return defaultsCopy()
    }
  }

  async updateConfig(partial) {
    const current = await this.getConfig()
    const updated = {
      defaults: { ...current.defaults, ...partial.defaults },
      templates: { ...current.templates, ...partial.templates },
      filters: { ...current.filters, ...partial.filters },
    }
    await this.saveConfig(updated)
    this.configCache = updated
  }

  async resetConfig() {
    const fresh = defaultsCopy()
    await this.saveConfig(fresh)
    this.configCache = fresh
  }

  async saveConfig(config) {
    let file
    try {
      file = await this.getConfigPath()
      await fsp().mkdir(path().dirname(file), { recursive: true })
      await fsp().writeFile(file, JSON.stringify(config, null, 2), 'utf-8')
    } catch (error) {
      const { ExportConfigManagerError: Err } = await errorClasses()
      throw new Err(
        `Impossible de sauvegarder la configuration: ${error instanceof Error ? error.message : String(error)}`,
        ExportConfigManagerErrorCode.CONFIG_SAVE_FAILED,
        { configPath: file || 'unknown' },
        error instanceof Error ? error : undefined,
      )
    }
  }

  mergeWithDefaults(config) {
    return {
      defaults: { ...DEFAULT_CONFIG.defaults, ...config.defaults },
      templates: { ...DEFAULT_CONFIG.templates, ...config.templates },
      filters: { ...DEFAULT_CONFIG.filters, ...config.filters },
    }
  }

  validateConfig(config) {
    try {
      if (typeof config !== 'object' || config === null) return false
      if (!config.defaults || typeof config.defaults !== 'object') return false
      const d = config.defaults
      if (typeof d.prettyPrint !== 'boolean' || typeof d.includeContent !== 'boolean') return false
      if (!['none', 'zip'].includes(d.compression)) return false
      if (!config.templates || typeof config.templates !== 'object') return false
      return !!config.filters && typeof config.filters === 'object'
    } catch {
      return false
    }
  }

  async getConfigFilePath() {
    return this.configPath || (await this.getConfigPath())
  }

  invalidateCache() {
    this.configCache = null
  }

  async addTemplate(name, template) {
    const config = await this.getConfig()
    config.templates[name] = template
    await this.saveConfig(config)
    this.configCache = config
  }

  async removeTemplate(name) {
    const config = await this.getConfig()
    if (!config.templates[name]) return false
    delete config.templates[name]
    await this.saveConfig(config)
    this.configCache = config
    return true
  }

  async addFilter(name, filter) {
    const config = await this.getConfig()
    config.filters[name] = filter
    await this.saveConfig(config)
    this.configCache = config
  }

  async removeFilter(name) {
    const config = await this.getConfig()
    if (!config.filters[name]) return false
    delete config.filters[name]
    await this.saveConfig(config)
    this.configCache = config
    return true
  }
}

ExportConfigManager.CONFIG_FILE_NAME = CONFIG_FILE_NAME
ExportConfigManager.DEFAULT_CONFIG = DEFAULT_CONFIG

module.exports = { ExportConfigManager, ExportConfigManagerError, ExportConfigManagerErrorCode }
