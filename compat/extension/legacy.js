'use strict'
/**
 * Values the extension computes with JavaScript's own arithmetic and spreading on malformed records,
 * which `legacy` mode reproduces (compat/mode.js; docs/compat-extension.md lists each difference
 * from `fixed`, where the native rules apply).
 */

/** The parsed record of a request message, `undefined` when its text is empty or not JSON. */
function record(text) {
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isSay(m, say) {
  return Boolean(m) && m.type === 'say' && m.say === say
}

/**
 * `contextTokens` of `getApiMetrics` as the extension computes it: from the newest request record
 * or condense event, going back while the value is falsy, with `(tokensIn || 0) + (tokensOut || 0)`
 * in JavaScript (string counts concatenate, `true` counts 1).
 */
function contextTokens(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    let value = 0
    if (isSay(m, 'api_req_started') && m.text) {
      const r = record(m.text)
      // unparsable, or `null` (which the extension cannot destructure): the record is skipped
      if (r === undefined || r === null) continue
      value = (r.tokensIn || 0) + (r.tokensOut || 0)
    } else if (isSay(m, 'condense_context')) {
      value = (m.contextCondense && m.contextCondense.newContextTokens) ?? 0
    }
    if (value) return value
  }
  return 0
}

/** Whether a request record's text is JSON that object spread turns into keys (a string or an array). */
function spreadsAsKeys(m) {
  if (!isSay(m, 'api_req_started') && !isSay(m, 'api_req_finished')) return false
  const r = record(m.text)
  return (typeof r === 'string' || Array.isArray(r)) && r.length > 0
}

/**
 * `combineApiRequests` as the extension computes it when a record's JSON is a string or an array:
 * each finished record merges into the newest open started one as `{...started, ...finished}`,
 * so a string's characters and an array's items become numbered keys. `null` when no record is of
 * that kind (the native rule gives the extension's values then).
 */
function combineApiRequestsSpreading(messages) {
  if (!messages.some(spreadsAsKeys)) return null
  const out = []
  const open = []
  for (const m of messages) {
    if (isSay(m, 'api_req_started')) {
      out.push(m)
      open.push(out.length - 1)
    } else if (isSay(m, 'api_req_finished')) {
      const i = open.pop()
      if (i !== undefined) out[i] = { ...out[i], text: JSON.stringify({ ...record(out[i].text), ...record(m.text) }) }
    } else {
      out.push(m)
    }
  }
  return out
}

/**
 * Whether `willManageContext`'s options are what the native rule reads as the extension does:
 * numbers where it does arithmetic, a boolean switch, a profile map and id when condensing.
 */
function wellFormedWillManage(o) {
  if (!o || typeof o !== 'object') return false
  const number = (v) => typeof v === 'number'
  if (!number(o.totalTokens) || !number(o.lastMessageTokens) || !number(o.contextWindow)) return false
  if (o.maxTokens !== undefined && o.maxTokens !== null && !number(o.maxTokens)) return false
  if (typeof o.autoCondenseContext !== 'boolean') return false
  if (o.useAvailableInputForContextPercent !== undefined && typeof o.useAvailableInputForContextPercent !== 'boolean') return false
  if (!o.autoCondenseContext) return true
  return number(o.autoCondenseContextPercent) && Boolean(o.profileThresholds) && typeof o.profileThresholds === 'object' && typeof o.currentProfileId === 'string'
}

/**
 * `willManageContext` as the extension computes it, for options the native rule reads otherwise:
 * JavaScript arithmetic (a missing count makes `NaN` and so `false`), a missing switch is off, and a
 * missing profile map throws the extension's `TypeError`. `limits` are the module's constants;
 * `positiveReserve`: the rule of 3.66+, where only a `maxTokens` above zero is reserved.
 */
function willManageContext(o, limits, positiveReserve) {
  const { totalTokens, contextWindow, maxTokens, autoCondenseContext, autoCondenseContextPercent, profileThresholds, currentProfileId, lastMessageTokens } = o
  const prevContextTokens = totalTokens + lastMessageTokens
  const stated = positiveReserve ? maxTokens && maxTokens > 0 && maxTokens : maxTokens
  const allowedTokens = contextWindow * (1 - limits.TOKEN_BUFFER_PERCENTAGE) - (stated || limits.ANTHROPIC_DEFAULT_MAX_TOKENS)
  if (!autoCondenseContext) return prevContextTokens > allowedTokens
  let threshold = autoCondenseContextPercent
  const profile = profileThresholds[currentProfileId]
  if (profile !== undefined && profile !== -1 && profile >= limits.MIN_CONDENSE_THRESHOLD && profile <= limits.MAX_CONDENSE_THRESHOLD) {
    threshold = profile
  }
  let percent = (100 * prevContextTokens) / contextWindow
  if (o.useAvailableInputForContextPercent) {
    const available = contextWindow - (maxTokens && maxTokens > 0 ? maxTokens : 0)
    percent = available > 0 ? (100 * prevContextTokens) / available : 100
  }
  return percent >= threshold || prevContextTokens > allowedTokens
}

module.exports = { contextTokens, combineApiRequestsSpreading, wellFormedWillManage, willManageContext }
