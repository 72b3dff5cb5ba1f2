'use strict'
/**
 * `roo-state-core/compat`: every compat module in one import. Each module is also reachable on its
 * own path (`roo-state-core/compat/utils/roo-storage-detector.js`, …), which is what a server that
 * replaces its own files by one-line re-exports imports, so its tests keep mocking by path.
 * docs/compat.md lists every export and its contract.
 */
const modules = [
  require('./mode.js'),
  require('./utils/task-instruction-index.js'),
  require('./utils/roo-storage-detector.js'),
  require('./utils/ui-messages-deserializer.js'),
  require('./utils/message-to-skeleton-transformer.js'),
  require('./utils/message-extraction-coordinator.js'),
  require('./utils/hierarchy-reconstruction-engine.js'),
  require('./services/skeleton-cache.service.js'),
  require('./services/XmlExporterService.js'),
  require('./services/ExportConfigManager.js'),
  require('./services/trace-summary/JsonCsvExporter.js'),
]

for (const mod of modules) {
  for (const [name, value] of Object.entries(mod)) {
    if (name in module.exports) continue
    module.exports[name] = value
  }
}

/** The extension's context, condensation, cost and token functions (`roo-state-core/compat/extension`). */
module.exports.extension = require('./extension/index.js')
