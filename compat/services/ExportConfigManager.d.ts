/**
 * `ExportConfigManager` of roo-state-core/compat: the XML export configuration
 * (`xml_export_config.json` beside the first storage location, as the legacy manager kept it).
 * See docs/compat-services.md §3.
 */
import { StateManagerError } from './XmlExporterService.js'

export interface ExportConfig {
  defaults: { prettyPrint: boolean; includeContent: boolean; compression: 'none' | 'zip'; [key: string]: unknown }
  templates: Record<string, { format: string; fields: string[] }>
  filters: Record<string, { startDate?: string; endDate?: string; mode?: string }>
}

export declare const ExportConfigManagerErrorCode: {
  readonly CONFIG_PATH_NOT_FOUND: 'CONFIG_PATH_NOT_FOUND'
  readonly CONFIG_LOAD_FAILED: 'CONFIG_LOAD_FAILED'
  readonly CONFIG_SAVE_FAILED: 'CONFIG_SAVE_FAILED'
  readonly NO_STORAGE_DETECTED: 'NO_STORAGE_DETECTED'
}

export declare class ExportConfigManagerError extends StateManagerError {
  constructor(message: string, code: string, details?: unknown, cause?: Error)
}

export declare class ExportConfigManager {
  static readonly CONFIG_FILE_NAME: string
  static readonly DEFAULT_CONFIG: ExportConfig
  constructor()
  getConfig(): Promise<ExportConfig>
  updateConfig(partial: { defaults?: Partial<ExportConfig['defaults']>; templates?: ExportConfig['templates']; filters?: ExportConfig['filters'] }): Promise<void>
  resetConfig(): Promise<void>
  addTemplate(name: string, template: { format: string; fields: string[] }): Promise<void>
  removeTemplate(name: string): Promise<boolean>
  addFilter(name: string, filter: { startDate?: string; endDate?: string; mode?: string }): Promise<void>
  removeFilter(name: string): Promise<boolean>
  /** Rejects `ExportConfigManagerError` NO_STORAGE_DETECTED when no config directory can be found. */
  getConfigFilePath(): Promise<string | null>
  invalidateCache(): void
  validateConfig(config: unknown): boolean
}
