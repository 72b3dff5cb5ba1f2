'use strict'
/**
 * `roo-state-core/compat/extension`: the extension's context-management, condensation, cost,
 * metrics and token-counting functions and its task store, under the names, argument shapes and
 * sync/async contracts of the extension's own modules, served by the native binding. One file per
 * module of the extension (docs/compat-extension.md has the full inventory):
 *   src/core/context-management/index.ts       context-management.js
 *   src/core/condense/index.ts                  condense.js
 *   src/shared/cost.ts                          cost.js
 *   src/shared/getApiMetrics.ts                 api-metrics.js
 *   src/shared/combineCommandSequences.ts       combine-command-sequences.js
 *   src/shared/combineApiRequests.ts            combine-api-requests.js
 *   packages/types/src/context-management.ts   context-events.js
 *   src/utils/countTokens.ts                    count-tokens.js
 *   src/utils/tiktoken.ts                       tiktoken.js
 *   src/shared/api.ts                           api.js
 *   src/core/task/mergeConsecutiveApiMessages.ts  merge-consecutive-api-messages.js
 *   src/core/task-persistence/TaskHistoryStore.ts task-history-store.js
 * and beside them: shared.js (argument checks and result shapes), host.js (the caller's modules
 * under a module runner), legacy.js (the extension's JavaScript values in `legacy` mode) and
 * release.js (the release whose rules apply).
 *
 * What differs from calling the binding directly: results that the extension returns unchanged are
 * the caller's own array and objects again (the extension's `result.messages !== history` test
 * works), binding-only fields (`errorKey`, `thresholdWarning`) are left out of results, an invalid
 * profile threshold is reported with `console.warn` as the extension does, and `getApiMetrics`
 * always carries the two cache keys.
 */

const { extensionRelease, setExtensionRelease } = require('./release.js')

module.exports = {
  ...require('./context-management.js'),
  ...require('./condense.js'),
  ...require('./cost.js'),
  ...require('./api-metrics.js'),
  ...require('./combine-command-sequences.js'),
  ...require('./combine-api-requests.js'),
  ...require('./context-events.js'),
  ...require('./count-tokens.js'),
  ...require('./tiktoken.js'),
  ...require('./api.js'),
  ...require('./merge-consecutive-api-messages.js'),
  ...require('./task-history-store.js'),
  extensionRelease,
  setExtensionRelease,
}
