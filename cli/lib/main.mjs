// Command line of `roo-state`: finds the command, parses its options, runs it, prints text or JSON,
// and exits with a code that says what happened (errors.mjs EXIT).
import path from 'node:path'
import process from 'node:process'
import { parseArgs } from 'node:util'
import { commandWordsAt } from './argv.mjs'
import { core, has } from './binding.mjs'
import { commands, groups } from './commands.mjs'
import { EXIT, describeError, exitCodeFor, usageError } from './errors.mjs'
import { bytes } from './format.mjs'
import { wantsColor, writeOut } from './terminal.mjs'

/**
 * @typedef {{type: 'string'|'boolean', short?: string, multiple?: boolean, arg?: string, help: string}} Option
 */

/**
 * @typedef {object} Command
 * @property {string} summary
 * @property {string} [args]
 * @property {Record<string, Option>} [options]
 * @property {string[]} examples
 * @property {number} [minArgs]
 * @property {number} [maxArgs]
 * @property {boolean} [json] false: --json does not apply
 * @property {boolean} [pager] a long text answer goes through the pager on a terminal
 * @property {(ctx: object) => Promise<{data: unknown, text: () => string, raw?: boolean, exitCode?: number, keepAlive?: boolean}>} run
 */

/** @type {Record<string, Option>} */
const GLOBAL = {
  'tasks-dir': { type: 'string', multiple: true, arg: 'DIR', help: 'work on this tasks folder (or the storage folder holding it); repeatable. Default: every store found on this machine, or ROO_STATE_STORAGE' },
  'cache-dir': { type: 'string', arg: 'DIR', help: 'our skeleton cache (default ROO_STATE_CACHE_DIR, else the platform cache folder)' },
  json: { type: 'boolean', help: 'print the result as JSON on standard output (for scripts)' },
  quiet: { type: 'boolean', short: 'q', help: 'no progress bar' },
  'no-pager': { type: 'boolean', help: 'print long answers straight to the terminal, not through the pager (less -FRX, or PAGER)' },
  'no-daemon': { type: 'boolean', help: 'answer in this process even when the daemon (roo-state daemon start) runs' },
  help: { type: 'boolean', short: 'h', help: 'show help (also: roo-state help <command>)' },
}

const ORDER = ['discover', 'scan', 'cache build', 'tree', 'list', 'show', 'export', 'export config', 'index', 'search', 'grep', 'models fetch', 'models status', 'diagnose', 'rebuild', 'cleanup', 'migrate', 'condense check', 'usage', 'daemon start', 'daemon status', 'daemon stop', 'daemon run', 'mcp', 'serve', 'demo']

function optionUsage(name, spec) {
  const short = spec.short ? `-${spec.short}, ` : ''
  return `${short}--${name}${spec.type === 'string' ? ` ${spec.arg ?? 'VALUE'}` : ''}`
}

function optionLines(options) {
  const entries = Object.entries(options)
  const left = entries.map(([n, s]) => optionUsage(n, s))
  const w = Math.max(...left.map((l) => l.length))
  return entries.map(([, s], i) => `  ${left[i].padEnd(w)}  ${s.help}`).join('\n')
}

/** The most a command's usage may take of a help line before its summary goes on the next line. */
const USAGE_ROOM = 34

/**
 * The command list of the general help: each command's usage and summary, the summaries aligned
 * after the longest usage that fits in USAGE_ROOM; a longer usage has its summary on the next line.
 */
function commandLines() {
  const usage = ORDER.map((n) => `${n} ${commands[n].args ?? ''}`.trim())
  const w = Math.max(...usage.filter((u) => u.length <= USAGE_ROOM).map((u) => u.length))
  return ORDER.map((n, i) =>
    usage[i].length <= w ? `  ${usage[i].padEnd(w)}  ${commands[n].summary}` : `  ${usage[i]}\n  ${' '.repeat(w)}  ${commands[n].summary}`,
  )
}

export function generalHelp() {
  const lines = commandLines()
  return `roo-state — the task history of Roo Code, Zoo Code, Cline and Kilo Code, from the command line and over MCP

Usage: roo-state <command> [arguments] [options]

Commands:
${lines.join('\n')}

Options of every command:
${optionLines(GLOBAL)}

Examples:
  roo-state demo                                        # a tree and a search on the bundled fixtures
  roo-state discover                                    # where the stores are
  roo-state tree                                        # the newest conversations, with how each link was found
  roo-state list --sort totalCost -n 10                 # the ten most expensive tasks
  roo-state show 019cd6ce                               # one task (an id prefix is enough)
  roo-state export md 019cd6ce -o conversation.md
  roo-state search "why does the cache test fail" --index
  roo-state models fetch                                # the local model, for search by meaning
  roo-state cleanup --older-than 60                     # dry run: what would be freed
  roo-state condense check 019cd6ce --context-window 200000
  roo-state tree --tasks-dir ~/backup/roo/tasks --json | jq '.stores[0].roots[0]'

Environment:
  ROO_STATE_STORAGE     storage folders to use instead of searching (path list)
  ROO_STATE_CACHE_DIR   skeleton cache folder      ROO_STATE_DATA_DIR    search index root
  ROO_STATE_CONFIG_DIR  export configuration       QDRANT_URL, EMBEDDING_*  optional search services
  ROO_SEARCH_MODEL_DIR  local model folder         ROO_MODEL_INDEX_URL   package index for models fetch

Exit codes: 0 ok; 1 failed; 2 bad usage or argument; 3 not found or refused (task, store, path, index);
4 not available in this build; 5 diagnose found the store unhealthy; 6 busy (another process
holds the cache or index); 130 interrupted.

roo-state <command> --help shows the options and examples of a command.`
}

export function commandHelp(name) {
  const c = commands[name]
  const opts = c.options && Object.keys(c.options).length ? `\nOptions:\n${optionLines(c.options)}\n` : ''
  return `roo-state ${name}${c.args ? ` ${c.args}` : ''} [options]

${c.summary[0].toUpperCase()}${c.summary.slice(1)}.
${opts}
Options of every command:
${optionLines(GLOBAL)}

Examples:
${c.examples.map((e) => `  ${e}`).join('\n')}`
}

/** The options of every command, as typed (`--json`, `-q`, …). */
function globalFlags() {
  return Object.entries(GLOBAL).flatMap(([n, spec]) => [`--${n}`, ...(spec.short ? [`-${spec.short}`] : [])])
}

/** Whether `arg` is an option of every command (or --version). */
function isGlobalFlag(arg) {
  const flag = arg.replace(/=.*$/, '')
  return globalFlags().includes(flag) || flag === '--version' || flag === '-V'
}

/** The word of `words` closest to `typed` (at most a third of its letters off), if any. */
export function closest(typed, words) {
  const dist = (a, b) => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j)
    for (let i = 1; i <= a.length; i++) {
      let prev = row[0]
      row[0] = i
      for (let j = 1; j <= b.length; j++) {
        const cur = row[j]
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
        prev = cur
      }
    }
    return row[b.length]
  }
  let best = null
  for (const w of words) {
    const d = dist(typed.toLowerCase(), w.toLowerCase())
    if (d <= Math.max(1, Math.floor(typed.length / 3)) && (!best || d < best.d)) best = { w, d }
  }
  return best?.w ?? null
}

/** The command name and where its words are in argv. */
function findCommand(argv) {
  const words = commandWordsAt(argv)
  if (!words.length) return null
  const first = argv[words[0]]
  const second = words.length > 1 ? argv[words[1]] : undefined
  if (second !== undefined && commands[`${first} ${second}`]) {
    return { name: `${first} ${second}`, at: words }
  }
  if (groups[first]) {
    throw usageError(`${first} needs a subcommand: ${groups[first].map((g) => `${first} ${g}`).join(', ')}.`)
  }
  return { name: first, at: [words[0]] }
}

function makeProgress(enabled, signal, io) {
  return (label, { bytes: inBytes = false } = {}) => {
    if (!enabled) return { io: { signal }, done: () => {} }
    let last = 0
    let shown = false
    const onProgress = ({ done, total }) => {
      const now = Date.now()
      if (done < total && now - last < 80) return
      last = now
      shown = true
      const width = 28
      const frac = total > 0 ? Math.min(1, done / total) : 0
      const full = Math.round(frac * width)
      const count = inBytes ? `${bytes(done)} / ${total > 0 ? bytes(total) : '?'}` : `${done}/${total}`
      io.err(`\r${label} ${'█'.repeat(full)}${'░'.repeat(width - full)} ${count}\x1b[K`)
    }
    return {
      io: { signal, onProgress },
      done: () => {
        if (shown) io.err('\r\x1b[2K')
      },
    }
  }
}

function printError(err, json, command, io) {
  const e = describeError(err, 'cli', command)
  io.err(`roo-state: ${e.code}: ${e.message}\n`)
  if (e.hint) io.err(`  ${e.hint}\n`)
  if (json) io.out(`${JSON.stringify({ error: e }, null, 2)}\n`)
  return exitCodeFor(e.code)
}

/**
 * Where a run's output goes and what its reader is: this process's own streams, or (the daemon)
 * another process's, described by it.
 * @typedef {object} Io
 * @property {(s: string) => void} out standard output
 * @property {(s: string) => void} err standard error
 * @property {(text: string, opts: {noPager: boolean}) => Promise<void>} page a long answer, through the pager on a terminal
 * @property {boolean} stdoutTTY
 * @property {boolean} stderrTTY
 * @property {number | undefined} columns
 * @property {Record<string, string | undefined>} env what decides colours (NO_COLOR, TERM)
 * @property {boolean} [signals] Ctrl-C stops the command (this process's own run only)
 * @property {AbortSignal} [signal] stops the command (the daemon: its client went away)
 */

/** @returns {Io} */
export function processIo() {
  return {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    page: (text, opts) => writeOut(text, opts),
    stdoutTTY: Boolean(process.stdout.isTTY),
    stderrTTY: Boolean(process.stderr.isTTY),
    columns: process.stdout.columns,
    env: process.env,
    signals: true,
  }
}

/** Run the command line; resolves to the exit code (null: keep running, as the MCP server does). */
export async function main(argv, { cwd = process.cwd(), io = processIo() } = {}) {
  const json = argv.includes('--json')
  let found
  try {
    if (argv.includes('--version') || argv.includes('-V')) {
      io.out(`${has('version') ? core().version() : 'unknown'}\n`)
      return EXIT.OK
    }
    found = findCommand(argv)
    if (!found && !argv.includes('--help') && !argv.includes('-h')) {
      // Options alone: one that is not an option of every command is named.
      const unknown = argv.find((a) => a.startsWith('-') && a !== '-' && !isGlobalFlag(a))
      if (unknown) {
        const near = closest(unknown.replace(/=.*$/, ''), globalFlags())
        throw usageError(`${unknown} is not an option of roo-state${near ? ` (did you mean ${near}?)` : ''}; options come after a command: roo-state <command> [options]. \`roo-state --help\` lists the commands.`)
      }
    }
    if (!found || found.name === 'help') {
      const words = argv.filter((a) => !a.startsWith('-')).slice(1)
      const topic = [words.slice(0, 2).join(' '), words[0]].find((t) => t && commands[t])
      io.out(`${topic ? commandHelp(topic) : generalHelp()}\n`)
      return found || argv.includes('--help') || argv.includes('-h') ? EXIT.OK : EXIT.USAGE
    }
    const command = commands[found.name]
    if (!command) {
      const near = closest(found.name, [...ORDER, 'help'])
      throw usageError(`Unknown command "${found.name}".${near ? ` Did you mean \`roo-state ${near}\`?` : ''} \`roo-state --help\` lists the commands.`)
    }
    if (argv.includes('--help') || argv.includes('-h')) {
      io.out(`${commandHelp(found.name)}\n`)
      return EXIT.OK
    }
    const rest = argv.filter((_, i) => !found.at.includes(i))
    /** @type {import('node:util').ParseArgsConfig['options']} */
    const options = {}
    for (const [n, s] of Object.entries({ ...GLOBAL, ...(command.options ?? {}) })) {
      options[n] = { type: s.type, ...(s.short ? { short: s.short } : {}), ...(s.multiple ? { multiple: true } : {}) }
    }
    let parsed
    try {
      parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true })
    } catch (err) {
      const m = /'(-[^']*)'/.exec(err.message)
      const near = m && closest(m[1], Object.entries({ ...GLOBAL, ...(command.options ?? {}) }).map(([n]) => `--${n}`))
      throw usageError(
        err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && m
          ? `${found.name} has no option ${m[1]}${near ? ` (did you mean ${near}?)` : ''}; see roo-state ${found.name} --help.`
          : `${err.message.split('. ')[0]}; see roo-state ${found.name} --help.`,
      )
    }
    const args = parsed.positionals
    if (args.length < (command.minArgs ?? 0)) throw usageError(`${found.name} needs ${command.args}; see roo-state ${found.name} --help.`)
    if (command.maxArgs !== undefined && args.length > command.maxArgs) {
      throw usageError(`${found.name} takes ${command.args ?? 'no argument'}, got: ${args.map((a) => JSON.stringify(a)).join(' ')}.`)
    }
    const isMcp = found.name === 'mcp'
    const controller = new AbortController()
    let onSigint
    if (io.signal) io.signal.addEventListener('abort', () => controller.abort(), { once: true })
    if (!isMcp && io.signals) {
      let count = 0
      onSigint = () => {
        count++
        if (count > 1) process.exit(EXIT.ABORTED)
        process.stderr.write('\nroo-state: stopping… (Ctrl-C again to quit at once)\n')
        controller.abort()
      }
      process.on('SIGINT', onSigint)
    }
    const values = parsed.values
    const ctx = {
      name: found.name,
      args,
      opts: values,
      json: Boolean(values.json),
      color: !values.json && wantsColor({ isTTY: io.stdoutTTY }, io.env),
      tty: io.stdoutTTY,
      cwd,
      sel: {
        tasksDirs: values['tasks-dir'],
        cwd,
        cacheDir: values['cache-dir'] ? path.resolve(cwd, String(values['cache-dir'])) : undefined,
      },
      io: { signal: controller.signal },
      progress: makeProgress(io.stderrTTY && !values.quiet && !isMcp, controller.signal, io),
      width: io.stdoutTTY && io.columns ? Math.max(60, io.columns) : 100,
    }
    let result
    try {
      result = await command.run(ctx)
    } finally {
      if (onSigint) process.off('SIGINT', onSigint)
    }
    if (result.keepAlive) return null
    if (ctx.json && command.json !== false) {
      io.out(`${JSON.stringify(result.data, null, 2)}\n`)
    } else {
      const text = result.text()
      // Long answers through the pager, at a terminal only.
      if (text) await io.page(text.endsWith('\n') ? text : `${text}\n`, { noPager: !command.pager || Boolean(values['no-pager']) })
    }
    return result.exitCode ?? EXIT.OK
  } catch (err) {
    return printError(err, json, found?.name, io)
  }
}
