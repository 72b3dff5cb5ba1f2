/* Export types. */

/** A change for configureXmlExport 'set': objects merge key by key, null removes a key (its default applies). */
export interface PartialExportConfig {
  defaults?: { [K in keyof ExportDefaults]?: ExportDefaults[K] | null }
  templates?: Record<string, Partial<ExportTemplate> | null>
  filters?: Record<string, ExportFilter | null>
}
