/**
 * `XmlExporterService` of roo-state-core/compat: XML text from legacy skeleton objects, written by
 * the core's XML writers (valid against schemas/*.xsd). See docs/compat-services.md §2.
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

export declare class StateManagerError extends Error {
  constructor(message: string, code: string, service: string, details?: unknown, cause?: Error)
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
  /** Rejects `StateManagerError` PATH_TRAVERSAL_DETECTED or PATH_TOO_LONG. */
  saveXmlToFile(xmlContent: string, filePath: string): Promise<void>
  validateFilePath(filePath: string): void
}
