'use strict'
/**
 * `src/shared/api.ts` (and `@roo-code/types`): a model's output tokens and their defaults.
 */

const core = require('../../index.js')

/** Output tokens reserved when a model states none (`@roo-code/types`). */
const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192

/** `getModelMaxOutputTokens` defaults for reasoning-budget models (src/shared/api.ts). */
const DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS = 16384

const DEFAULT_HYBRID_REASONING_MODEL_THINKING_TOKENS = 8192

/** `getModelMaxOutputTokens({ modelId, model, settings, format })` (src/shared/api.ts): sync. */
function getModelMaxOutputTokens(params) {
  return core.getModelMaxOutputTokens(params)
}

module.exports = {
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS,
  DEFAULT_HYBRID_REASONING_MODEL_THINKING_TOKENS,
  getModelMaxOutputTokens,
}
