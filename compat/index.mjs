// ESM entry of roo-state-core/compat: the CommonJS module loaded through `require`, so both entries
// hand out the same objects. The list must name every export of index.js (checked by a test).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const compat = require('./index.js')

export const {
  getMode,
  setMode,
  TaskInstructionIndex,
  computeInstructionPrefix,
  globalTaskInstructionIndex,
  extractSubInstructions,
  RooStorageDetector,
  RooStorageError,
  detectSourceFromPath,
  UIMessagesDeserializer,
  MessageToSkeletonTransformer,
  GenericError,
  MessageExtractionCoordinator,
  messageExtractionCoordinator,
  createInstruction,
  cleanMode,
  extractTimestamp,
  PATTERN_NAMES,
  HierarchyReconstructionEngine,
  SkeletonCacheService,
  ourCacheDir,
  XmlExporterService,
  StateManagerError,
  ExportConfigManager,
  ExportConfigManagerError,
  ExportConfigManagerErrorCode,
  JsonCsvExporter,
  extension,
} = compat
