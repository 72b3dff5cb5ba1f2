/* Export types. */

/** What an export produced. */
export interface ExportResult {
  format: 'xml' | 'markdown' | 'json' | 'csv'
  /** The export itself, when no `filePath` was given. */
  content?: string
  /** The absolute path written, when `filePath` was given. */
  filePath?: string
  /** Size of the export in bytes (UTF-8). */
  bytes: number
  tasks: number
  conversations: number
  messages: number
  actions: number
  /** Messages and parameters cut (marked `isTruncated="true"` in XML). */
  truncated: number
  /** Problems that did not stop the export (an unreadable configuration file, …). */
  warnings: string[]
}

/** Settings applied when an export call does not give them. */
export interface ExportDefaults {
  prettyPrint: boolean
  includeContent: boolean
  /** Only 'none' is supported. */
  compression: 'none'
  /** With includeContent false, message content is cut to this many UTF-16 units (default 100). */
  contentPreviewLength: number
  /** With includeContent true, longer content is cut (default 100 000; 0 = never). */
  maxContentLength: number
  /** Levels of a conversation export, the root being level 1 (null = all). */
  maxDepth: number | null
  /** Replace existing files (default false). */
  overwrite: boolean
  /** Absolute directory exports are written into (null = the current directory). */
  outputRoot: string | null
}

export interface ExportTemplate {
  format: string
  fields: string[]
}

/** A named filter for exportProjectXml / exportTaskListCsv (`filter: name`). */
export interface ExportFilter {
  /** ISO 8601 date or date-time, or now-15m / now-12h / now-7d / now-2w. */
  startDate?: string
  endDate?: string
  /** Keep conversations whose root task ran in this mode. */
  mode?: string
}

/** xml_export_config.json */
export interface ExportConfig {
  defaults: ExportDefaults
  templates: Record<string, ExportTemplate>
  filters: Record<string, ExportFilter>
}

/** A change for configureXmlExport 'set': objects merge key by key, null removes a key (its default applies). */
export interface PartialExportConfig {
  defaults?: { [K in keyof ExportDefaults]?: ExportDefaults[K] | null }
  templates?: Record<string, Partial<ExportTemplate> | null>
  filters?: Record<string, ExportFilter | null>
}

export interface ConfigureXmlExportResult {
  action: 'get' | 'set' | 'reset'
  config: ExportConfig
  /** The configuration file. */
  path: string
  /** 'file', or 'defaults' when there is no valid file yet. */
  from: 'file' | 'defaults'
  message: string
  warnings: string[]
}
