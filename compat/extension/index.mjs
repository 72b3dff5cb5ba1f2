// ESM entry of roo-state-core/compat/extension: the CommonJS module loaded through `require`, so both
// entries share one set of function objects (also under bundlers and test runners that would
// otherwise load index.js a second time). The list must name every export of index.js; the
// test "the ESM entry exports the same functions as the CommonJS one" checks it.
//
// The entry also hands its own `import()` to host.js, which uses it to load the caller's modules
// when no Vitest mocker offers its runner: evaluated by a module runner, this import runs there.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const ext = require('./index.js')
require('./host.js').useEntryImport((specifier) => import(specifier))

export const {
  TOKEN_BUFFER_PERCENTAGE,
  estimateTokenCount,
  truncateConversation,
  willManageContext,
  manageContext,
  MIN_CONDENSE_THRESHOLD,
  MAX_CONDENSE_THRESHOLD,
  N_MESSAGES_TO_KEEP,
  toolUseToText,
  toolResultToText,
  convertToolBlocksToText,
  transformMessagesForCondensing,
  injectSyntheticToolResults,
  extractCommandBlocks,
  summarizeConversation,
  getMessagesSinceLastSummary,
  getEffectiveApiHistory,
  cleanupAfterTruncation,
  calculateApiCostAnthropic,
  calculateApiCostOpenAI,
  parseApiPrice,
  getApiMetrics,
  consolidateTokenUsage,
  hasTokenUsageChanged,
  hasToolUsageChanged,
  combineCommandSequences,
  combineApiRequests,
  COMMAND_OUTPUT_STRING,
  CONTEXT_MANAGEMENT_EVENTS,
  isContextManagementEvent,
  countTokens,
  tiktoken,
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS,
  DEFAULT_HYBRID_REASONING_MODEL_THINKING_TOKENS,
  getModelMaxOutputTokens,
  mergeConsecutiveApiMessages,
  TaskHistoryStore,
  DeltaRejectedError,
  assertValidTransition,
  extensionRelease,
  setExtensionRelease,
} = ext
