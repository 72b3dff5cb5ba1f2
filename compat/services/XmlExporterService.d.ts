/**
 * `XmlExporterService` of roo-state-core/compat: the legacy service's XML text from legacy skeleton
 * objects (`fixed` mode: the same elements with corrected values). See docs/compat-services.md §2.
 */

export interface XmlExportOptions {
  prettyPrint?: boolean
  includeContent?: boolean
  /** Levels of a conversation, the root being level 1. */
  maxDepth?: number
  /** Accepted, not used (as in the legacy service). */
  compression?: 'none' | 'zip'
}

export interface ProjectExportOptions extends XmlExportOptions {
  startDate?: string
  endDate?: string
}

/** The legacy skeleton fields the exporter reads. */
export interface ExportableSkeleton {
  taskId: string
  parentTaskId?: string
  metadata: {
    title?: string
    createdAt: string
    lastActivity: string
    mode?: string
    messageCount: number
    actionCount: number
    totalSize: number
    workspace?: string
  }
  sequence?: unknown[]
}

/** Compat's own error class; once the caller handed over its modules, errors are its own class. */
export declare class StateManagerError extends Error {
  constructor(message: string, code: string, service: string, details?: unknown, cause?: Error, category?: string)
  readonly code: string
  readonly service: string
  readonly details?: unknown
  readonly cause?: Error
  readonly category: string
  toJSON(): Record<string, unknown>
}

export declare class XmlExporterService {
  generateTaskXml(skeleton: ExportableSkeleton, options?: XmlExportOptions): string
  generateConversationXml(rootSkeleton: ExportableSkeleton, children: ExportableSkeleton[], options?: XmlExportOptions): string
  generateProjectXml(skeletons: ExportableSkeleton[], projectPath: string, options?: ProjectExportOptions): string
  /** Rejects `StateManagerError` PATH_TRAVERSAL_DETECTED or PATH_TOO_LONG (the caller's class once handed over). */
  saveXmlToFile(xmlContent: string, filePath: string): Promise<void>
  validateFilePath(filePath: string): void
}
