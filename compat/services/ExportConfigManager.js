'use strict'
// ExportConfigManager of the compat layer: the legacy manager's methods, results and error codes
// over the XML export configuration file of this project (`xml_export_config.json` in our config
// directory: `$ROO_STATE_CONFIG_DIR`, else the platform's config dir + `roo-state-core`; the same
// file `configureXmlExport` and the CLI use). The legacy manager kept that file beside the
// extension's task store; this one never writes into the extension's folders.
// The file is read and written through `fs/promises`, looked up at call time (mocks see it).
// Modes: `legacy` hands out shallow copies of the defaults, so adding a template or filter to a
// defaults-derived configuration also changes the module's defaults, as the legacy manager did;
// `fixed` copies them deeply.

const path = require('path')
const fsp = require('fs/promises')
const { StateManagerError } = require('./XmlExporterService.js')
const { currentMode } = require('./compat-mode.js')

const CONFIG_FILE_NAME = 'xml_export_config.json'

const ExportConfigManagerErrorCode = {
  CONFIG_PATH_NOT_FOUND: 'CONFIG_PATH_NOT_FOUND',
  CONFIG_LOAD_FAILED: 'CONFIG_LOAD_FAILED',
  CONFIG_SAVE_FAILED: 'CONFIG_SAVE_FAILED',
  NO_STORAGE_DETECTED: 'NO_STORAGE_DETECTED',
}

class ExportConfigManagerError extends StateManagerError {
  constructor(message, code, details, cause) {
    super(message, code, 'ExportConfigManager', details, cause)
    this.name = 'ExportConfigManagerError'
  }
}

const DEFAULT_CONFIG = {
  defaults: { prettyPrint: true, includeContent: false, compression: 'none' },
  templates: {},
  filters: {},
}

function defaultsCopy() {
  if (currentMode() === 'legacy') return { ...DEFAULT_CONFIG }
  return JSON.parse(JSON.stringify(DEFAULT_CONFIG))
}

// Where the file is: what the native configuration reports (one definition of the directory).
async function nativeConfigPath() {
  const { configureXmlExport } = require('../../index.js')
  const r = await configureXmlExport({ action: 'get' })
  return r.path
}

class ExportConfigManager {
  constructor() {
    this.configCache = null
    this.configPath = null
    this.initializeConfigPath().catch(() => undefined)
  }

  async initializeConfigPath() {
    try {
      this.configPath = await ExportConfigManager.resolveConfigPath()
    } catch (error) {
      console.error("Erreur lors de l'initialisation du chemin de configuration:", error)
    }
  }

  // The directory of our configuration (overridable by tests through ROO_STATE_CONFIG_DIR).
  static async resolveConfigPath() {
    const dir = process.env.ROO_STATE_CONFIG_DIR
    if (dir) return path.join(dir, CONFIG_FILE_NAME)
    return nativeConfigPath()
  }

  async getConfigPath() {
    if (!this.configPath) await this.initializeConfigPath()
    if (!this.configPath) {
      throw new ExportConfigManagerError(
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
        await fsp.access(file)
        const text = await fsp.readFile(file, 'utf-8')
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
    const p = partial || {}
    const updated = {
      defaults: { ...current.defaults, ...p.defaults },
      templates: { ...current.templates, ...p.templates },
      filters: { ...current.filters, ...p.filters },
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
      await fsp.mkdir(path.dirname(file), { recursive: true })
      await fsp.writeFile(file, JSON.stringify(config, null, 2), 'utf-8')
    } catch (error) {
      throw new ExportConfigManagerError(
        `Impossible de sauvegarder la configuration: ${error instanceof Error ? error.message : String(error)}`,
        ExportConfigManagerErrorCode.CONFIG_SAVE_FAILED,
        { configPath: file || 'unknown' },
        error instanceof Error ? error : undefined,
      )
    }
  }

  mergeWithDefaults(config) {
    const c = config || {}
    return {
      defaults: { ...DEFAULT_CONFIG.defaults, ...c.defaults },
      templates: { ...DEFAULT_CONFIG.templates, ...c.templates },
      filters: { ...DEFAULT_CONFIG.filters, ...c.filters },
    }
  }

  validateConfig(config) {
    if (typeof config !== 'object' || config === null) return false
    const d = config.defaults
    if (!d || typeof d !== 'object') return false
    if (typeof d.prettyPrint !== 'boolean' || typeof d.includeContent !== 'boolean') return false
    if (!['none', 'zip'].includes(d.compression)) return false
    return !!config.templates && typeof config.templates === 'object' && !!config.filters && typeof config.filters === 'object'
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
