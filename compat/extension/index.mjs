// ESM entry of roo-state-core/compat/extension: the CommonJS module loaded through `require`, so both
// entries share one set of function objects (also under bundlers and test runners that would
// otherwise load index.js a second time). The list must name every export of index.js; the
// test "the ESM entry exports the same functions as the CommonJS one" checks it.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const ext = require('./index.js')

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
} = ext
