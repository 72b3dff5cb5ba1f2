/**
 * Types of `roo-state-core/compat`: every compat module in one import. Each module also has its own
 * path (`roo-state-core/compat/utils/roo-storage-detector.js`, …). docs/compat.md lists the contracts.
 */
export { getMode, setMode, type CompatMode } from './mode.js'
export * from './utils/task-instruction-index.js'
export * from './utils/roo-storage-detector.js'
export * from './utils/ui-messages-deserializer.js'
export {
  MessageToSkeletonTransformer,
  GenericError,
  type TransformerOptions,
  type TransformationResult,
} from './utils/message-to-skeleton-transformer.js'
export * from './utils/message-extraction-coordinator.js'
export {
  HierarchyReconstructionEngine,
  type EnhancedConversationSkeleton,
  type ReconstructionConfig,
  type Phase1Result,
  type Phase2Result,
} from './utils/hierarchy-reconstruction-engine.js'
export * from './services/skeleton-cache.service.js'
export * from './services/XmlExporterService.js'
export * from './services/ExportConfigManager.js'
export * from './services/trace-summary/JsonCsvExporter.js'
export * as extension from './extension/index.js'
