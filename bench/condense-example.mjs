#!/usr/bin/env node
// Worked example and small bench for the condensation rules, through the binding.
//
//   node bench/condense-example.mjs [taskDir] [contextWindow ...]
//
// Reads a task's api_conversation_history.json and ui_messages.json, prints its usage and cost
// (recomputed from ui_messages.json), then the decision of manageContext at each context window
// (default: 1 000 000 and 128 000), with the truncation that would follow if summarising failed.
// Last, it times the token estimate of the whole history against JSON.parse of the same bytes.
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import fs from 'node:fs'
import path from 'node:path'

const require = createRequire(import.meta.url)
const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '..')
const core = require(path.join(repo, 'index.js'))

const defaultTask = path.resolve(repo, '..', 'shared', 'fixtures', 'legacy-tasks', 'real-tasks', 'ac8aa7b4-319c-4925-a139-4f4adca81921')
const args = process.argv.slice(2).filter((a, i, all) => a !== '--era' && all[i - 1] !== '--era')
const taskDir = args[0] && !/^\d+$/.test(args[0]) ? args.shift() : defaultTask
const windows = args.length ? args.map(Number) : [1_000_000, 128_000]

const historyText = fs.readFileSync(path.join(taskDir, 'api_conversation_history.json'), 'utf8')
const history = JSON.parse(historyText)
const ui = JSON.parse(fs.readFileSync(path.join(taskDir, 'ui_messages.json'), 'utf8'))

const fmt = (n) => (typeof n === 'number' ? n.toLocaleString('en-US', { maximumFractionDigits: 6 }) : String(n))
console.log(`task ${path.basename(taskDir)}: ${history.length} API messages, ${ui.length} UI messages`)

// Which release's rules to replay with: --era X, or what the records show (eraOfRecords: `request`
// inside api_req_started was written up to v3.28.17, and those releases counted Anthropic-protocol
// context as tokensIn + tokensOut + cache tokens).
const eraFlag = process.argv.indexOf('--era')
const recorded = core.eraOfRecords(ui)
const wrote = recorded !== undefined
const era = eraFlag > 0 ? process.argv[eraFlag + 1] : (recorded ?? '3.52.1')
console.log(`rules of release ${era}${eraFlag > 0 ? '' : wrote ? ' (records carry `request`, written up to v3.28.17)' : ''}`)

const usage = core.getTaskTokenUsage(ui, { era })
console.log(`usage (getTaskTokenUsage): in ${fmt(usage.totalTokensIn)}, out ${fmt(usage.totalTokensOut)}, cache writes ${fmt(usage.totalCacheWrites)}, cache reads ${fmt(usage.totalCacheReads)}`)
console.log(`cost: $${fmt(usage.totalCost)}; context of the last request: ${fmt(usage.contextTokens)} tokens`)

// The last request's cost, recomputed with Claude Sonnet prices (the record says which protocol).
const lastReq = [...ui].reverse().find((m) => m.say === 'api_req_started' && m.text)
if (lastReq) {
  const info = JSON.parse(lastReq.text)
  const sonnet = { inputPrice: 3, outputPrice: 15, cacheWritesPrice: 3.75, cacheReadsPrice: 0.3 }
  const r =
    info.apiProtocol === 'anthropic'
      ? core.calculateApiCostAnthropic(sonnet, info.tokensIn, info.tokensOut, info.cacheWrites, info.cacheReads)
      : core.calculateApiCostOpenAI(sonnet, info.tokensIn, info.tokensOut, info.cacheWrites, info.cacheReads)
  console.log(`last request (${info.apiProtocol}): stored cost $${fmt(info.cost)}, recomputed at 3/15/3.75/0.30 $${fmt(r.totalCost)}`)
}

const summaries = history.filter((m) => m.isSummary).length
console.log(`summaries in the history: ${summaries}; effective history today: ${core.getEffectiveApiHistory(history).length} messages; as sent by 3.20: ${core.getMessagesSinceLastSummary(history, { era: '3.20.0' }).length} messages`)

for (const contextWindow of windows) {
  const d = core.decideContext({
    messages: history,
    totalTokens: usage.contextTokens,
    contextWindow,
    maxTokens: 8192,
    autoCondenseContext: true,
    autoCondenseContextPercent: 100,
    systemPrompt: '',
    taskId: path.basename(taskDir),
    profileThresholds: {},
    currentProfileId: 'default',
    era,
  })
  console.log(`\ncontext window ${fmt(contextWindow)} (maxTokens 8192, threshold ${d.effectiveThreshold.threshold}%):`)
  console.log(`  prevContextTokens ${fmt(d.prevContextTokens)} (${fmt(d.lastMessageTokens)} for the newest message), ${fmt(d.contextPercent)}% of the window, allowed ${fmt(d.allowedTokens)}`)
  console.log(`  decision: ${d.action}${d.truncateOnFailure ? ' (truncation if summarising fails)' : ''}`)
  if (d.truncation) {
    const t = d.truncation
    console.log(`  truncation: ${t.messagesRemoved} messages hidden, ${t.messages.length} stored, about ${fmt(t.newContextTokensAfterTruncation)} tokens visible afterwards`)
  }
}

// Bench: the token estimate of every block of the history vs JSON.parse of the file.
const blocks = history.flatMap((m) => (Array.isArray(m.content) ? m.content : typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : []))
core.countTokensSync(blocks) // builds the encoder
const time = (fn, rounds = 5) => {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < rounds; i++) fn()
  return Number(process.hrtime.bigint() - t0) / 1e6 / rounds
}
let tokens = 0
const tCount = time(() => (tokens = core.countTokensSync(blocks)))
const tParse = time(() => JSON.parse(historyText))
console.log(`\nbench: countTokens of ${blocks.length} blocks (${fmt(historyText.length)} chars) = ${fmt(tokens)} tokens in ${tCount.toFixed(2)} ms; JSON.parse of the same file ${tParse.toFixed(2)} ms; ratio ${(tCount / tParse).toFixed(1)}x`)
