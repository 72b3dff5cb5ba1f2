// `roo-state grep PATTERN` and the operation behind it and the MCP tool `grep_tasks`: every line of
// the tasks' dialogue where a literal or a regular expression stands (grepTasks).
import { call, fn, has } from './binding.mjs'
import { styles } from './terminal.mjs'
import { RooStateError, usageError } from './errors.mjs'
import { resolveStores } from './stores.mjs'
import { HOST_SOURCES } from './registry.generated.mjs'

export const KINDS = ['user', 'assistant', 'toolInput', 'toolResult']

/** Grep the dialogue of the selected stores' tasks (grepTasks). */
export async function grep(sel, opts, io = {}) {
  fn('grepTasks')
  if (typeof opts.pattern !== 'string' || opts.pattern === '') {
    throw new RooStateError('INVALID_ARGUMENT', 'The pattern is empty.')
  }
  const tasksDirs = await resolveStores(sel)
  const dateRange = opts.since || opts.until ? { startDate: opts.since, endDate: opts.until } : undefined
  return call('grepTasks', {
    pattern: opts.pattern,
    regex: Boolean(opts.regex),
    ignoreCase: Boolean(opts.ignoreCase),
    kinds: opts.kinds,
    context: opts.context,
    maxMatches: opts.maxMatches,
    tasksDirs,
    workspace: opts.workspace,
    host: opts.host,
    dateRange,
    task: opts.task,
    noTextStore: Boolean(opts.noTextStore),
    signal: io.signal,
  })
}

/** The text of a grep: matches grouped under their task, context lines marked with `-`. */
export function renderGrep(r, opts = {}) {
  const st = styles(Boolean(opts.color))
  const out = []
  let task
  for (const m of r.matches) {
    if (m.taskId !== task) {
      task = m.taskId
      if (out.length) out.push('')
      out.push(`${st.yellow(opts.short?.get(m.taskId) ?? m.taskId)}${m.title ? ` · ${st.bold(oneLine(m.title, 70))}` : ''}${m.workspace ? ` · ${m.workspace}` : ''}`)
    }
    const at = `${m.timestamp ? m.timestamp.slice(0, 16).replace('T', ' ') : '----------------'} ${m.kind.padEnd(10)} #${m.messageIndex}:${m.lineNumber}`
    for (const b of m.before) out.push(`  ${' '.repeat(at.length)}- ${b}`)
    out.push(`  ${at}: ${m.line.replace(/\n/g, '\n  ' + ' '.repeat(at.length) + '  ')}`)
    for (const a of m.after) out.push(`  ${' '.repeat(at.length)}- ${a}`)
  }
  const more = r.truncated ? ' (more were left out: raise --max)' : ''
  const skipped = r.filesSkipped ? `, ${r.filesSkipped} file${r.filesSkipped === 1 ? '' : 's'} skipped` : ''
  out.push(`${out.length ? '\n' : ''}${r.matches.length} match${r.matches.length === 1 ? '' : 'es'}${more} in ${r.tasksMatched} of ${r.tasksSearched} tasks (${r.filesParsed} files parsed, ${(r.bytesRead / 1048576).toFixed(1)} MiB read${skipped}, ${Math.round(r.elapsedMs)} ms)`)
  // Each file skipped is said (the first few here; --json lists up to 50).
  for (const k of (r.skipped ?? []).slice(0, 5)) out.push(`skipped: ${k.file}: ${k.reason}`)
  if ((r.filesSkipped ?? 0) > 5) out.push(`skipped: … and ${r.filesSkipped - 5} more (--json lists them)`)
  for (const n of r.notes ?? []) out.push(`note: ${n}`)
  if (opts.workspace !== undefined && r.tasksSearched === 0) out.push(`No task of workspace "${opts.workspace}" (a path, or a folder name such as the last part of one).`)
  return out.join('\n')
}

/** The shortest prefix of each id that names its task alone among the stores of `sel`. */
export async function shortIdsIn(sel, ids) {
  const list = [...new Set(ids)]
  if (!list.length || !has('shortTaskIds')) return new Map(list.map((id) => [id, id]))
  const short = call('shortTaskIds', await resolveStores(sel), list)
  return new Map(list.map((id, i) => [id, short[i]]))
}

function oneLine(s, max) {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

function count(ctx, name, max) {
  const v = ctx.opts[name]
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0 || n > max) throw usageError(`--${name} takes a whole number from 0 to ${max}, not "${v}".`)
  return n
}

/**
 * The filters `grep` and `search` share: which tasks, and which messages by date.
 * @type {Record<string, import('./main.mjs').Option>}
 */
export const DIALOGUE_FILTERS = {
  workspace: { type: 'string', arg: 'PATH|NAME', help: 'only this workspace (a path, or just the folder name)' },
  host: { type: 'string', arg: 'HOST', help: `only tasks of this host: ${HOST_SOURCES.join(', ')}` },
  since: { type: 'string', arg: 'DATE', help: 'messages from this date (ISO 8601)' },
  until: { type: 'string', arg: 'DATE', help: 'messages up to this date (a bare date covers the day)' },
  task: { type: 'string', arg: 'ID', help: 'only this task (id or unique prefix) and its subtasks' },
}

/** `roo-state grep`. @type {import('./main.mjs').Command} */
export const grepCommand = {
  args: '<pattern>',
  summary: 'every line of the tasks\' dialogue holding a text or a regular expression',
  options: {
    regex: { type: 'boolean', short: 'E', help: 'the pattern is a regular expression (Rust regex syntax: linear time, no backtracking)' },
    'ignore-case': { type: 'boolean', short: 'i', help: 'ignore case (Unicode case folding)' },
    kind: { type: 'string', arg: 'KINDS', help: `only these texts, comma-separated: ${KINDS.join(', ')} (default all)` },
    context: { type: 'string', short: 'C', arg: 'N', help: 'lines of the same message before and after each match (at most 20)' },
    max: { type: 'string', short: 'm', arg: 'N', help: 'matches shown at most (default 1000)' },
    'no-cache': { type: 'boolean', help: 'read every task from its folder instead of the text store kept in our cache' },
    ...DIALOGUE_FILTERS,
  },
  examples: [
    'roo-state grep "npm ERR! code E404"',
    'roo-state grep -E "ERR_[A-Z_]+" --kind toolResult -C 2',
    'roo-state grep -i "prévisions" --workspace meteo-cli --since 2026-01-01 --json',
  ],
  minArgs: 1,
  pager: true,
  async run(ctx) {
    const kinds = ctx.opts.kind?.split(',').map((k) => k.trim()).filter(Boolean)
    for (const k of kinds ?? []) {
      if (!KINDS.includes(k)) throw usageError(`--kind takes ${KINDS.join(', ')}; not "${k}".`)
    }
    const data = await grep(ctx.sel, {
      pattern: ctx.args.join(' '),
      regex: ctx.opts.regex,
      ignoreCase: ctx.opts['ignore-case'],
      kinds,
      context: count(ctx, 'context', 20),
      maxMatches: count(ctx, 'max', 100000) || undefined,
      workspace: ctx.opts.workspace,
      host: ctx.opts.host,
      since: ctx.opts.since,
      until: ctx.opts.until,
      task: ctx.opts.task,
      noTextStore: ctx.opts['no-cache'],
    }, ctx.io)
    const short = await shortIdsIn(ctx.sel, data.matches.map((m) => m.taskId))
    // As grep and ripgrep: 0 when a line matched, 1 when none did (2 and up: errors).
    return { data, text: () => renderGrep(data, { short, color: ctx.color, workspace: ctx.opts.workspace }), exitCode: data.matches.length ? 0 : 1 }
  },
}
