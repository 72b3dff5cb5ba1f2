// The MCP tools: name, JSON Schema of the input, and a thin adapter to one operation of
// ../lib/ops.mjs. The legacy server's names that overlap are aliases that translate their
// arguments and call the same tools (`legacy` below).
import * as ops from '../lib/ops.mjs'
import * as render from '../lib/render.mjs'
import { RooStateError } from '../lib/errors.mjs'

const tasksDirProp = {
  type: 'string',
  description: 'A tasks/ folder, or the storage folder holding it. Default: the server\'s --tasks-dir, ROO_STATE_STORAGE, or every store found on this machine.',
}
const tasksDirCamel = tasksDirProp

const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false }
const writesCache = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }

/** `sel` of one call: its tasks folder argument, else the server's selection. */
function selOf(ctx, dir) {
  return dir ? { ...ctx.sel, tasksDirs: [dir] } : ctx.sel
}

/** An export's answer: the document itself (and its figures), or what was written. */
function exportAnswer(r) {
  if (r.content !== undefined) {
    const { content, ...meta } = r
    return { blocks: [content, JSON.stringify(meta, null, 2)] }
  }
  return r
}

function dateRangeOf(r) {
  if (!r) return {}
  return { since: r.start_date, until: r.end_date }
}

/**
 * @typedef {object} Tool
 * @property {string} name
 * @property {string} title
 * @property {string} description
 * @property {object} inputSchema
 * @property {object} [annotations]
 * @property {(args: any, ctx: {sel: any, io: any, server: any}) => Promise<unknown>} run
 */

/** @type {Tool[]} */
export const tools = [
  {
    name: 'build_skeleton_cache',
    title: 'Build the skeleton cache',
    description:
      'Build or refresh the skeleton cache of the task stores: only tasks whose files changed are read again, deleted tasks are dropped, and every task is linked to its parent (stored links first, then new_task messages). Returns what was built, reused and removed per store. Reports progress.',
    inputSchema: {
      type: 'object',
      properties: {
        force_rebuild: { type: 'boolean', description: 'Read every task again (default false).' },
        workspace_filter: { type: 'string', description: 'Only changed tasks of this workspace are read again (new tasks always are).' },
        tasks_dir: tasksDirProp,
      },
      additionalProperties: false,
    },
    annotations: writesCache,
    run: (a, ctx) => ops.buildCache(selOf(ctx, a.tasks_dir), { force: a.force_rebuild, workspace: a.workspace_filter }, ctx.io),
  },
  {
    name: 'get_task_tree',
    title: 'Task tree',
    description:
      'The tree of tasks and subtasks: title, id, creation date, mode, and how each parent link was established (history_item.json, the parent\'s childIds, task_metadata.json, or inferred from the parent\'s new_task message, with its confidence). With conversation_id, the conversation holding that task (an id prefix is enough); without, every conversation.',
    inputSchema: {
      type: 'object',
      properties: {
        conversation_id: { type: 'string', minLength: 1, description: 'Any task of the conversation (full id or a unique prefix).' },
        max_depth: { type: 'integer', minimum: 0, description: 'Levels below the root (0 = the root alone; default: all).' },
        workspace: { type: 'string', description: 'Only tasks of this workspace.' },
        output_format: { type: 'string', enum: ['json', 'ascii-tree', 'markdown'], description: 'Default json.' },
        tasks_dir: tasksDirProp,
      },
      additionalProperties: false,
    },
    annotations: readOnly,
    async run(a, ctx) {
      const data = await ops.taskTree(selOf(ctx, a.tasks_dir), { taskId: a.conversation_id, maxDepth: a.max_depth, workspace: a.workspace }, ctx.io)
      if (a.output_format === 'ascii-tree') return render.renderTree(data, { width: 120 })
      if (a.output_format === 'markdown') return render.renderTreeMarkdown(data)
      return data
    },
  },
  {
    name: 'view_conversation_tree',
    title: 'View a conversation',
    description:
      'Read a task\'s messages and tool calls as text, with the tasks around it: single (the task), chain (its ancestors down to it, default) or cluster (its parent and all the parent\'s subtasks).',
    inputSchema: {
      type: 'object',
      properties: {
        task_id: { type: 'string', minLength: 1, description: 'The task (full id or a unique prefix).' },
        view_mode: { type: 'string', enum: ['single', 'chain', 'cluster'], description: 'Default chain.' },
        detail_level: { type: 'string', enum: ['skeleton', 'summary', 'full'], description: 'skeleton: first line of each message (default); summary: messages up to 1000 characters; full: everything, with tool parameters.' },
        truncate: { type: 'integer', minimum: 0, description: 'Keep this many lines at the start and at the end of each message (0 = all).' },
        max_output_length: { type: 'integer', minimum: 1000, description: 'Cut the answer at this many characters (default 300000).' },
        tasks_dir: tasksDirProp,
      },
      required: ['task_id'],
      additionalProperties: false,
    },
    annotations: readOnly,
    async run(a, ctx) {
      const view = await ops.conversationView(selOf(ctx, a.tasks_dir), { taskId: a.task_id, viewMode: a.view_mode, detailLevel: a.detail_level }, ctx.io)
      return { text: render.renderConversation(view, { truncate: a.truncate }), maxLength: a.max_output_length }
    },
  },
  {
    name: 'export_tasks_xml',
    title: 'Export a task as XML',
    description: 'One task as XML (task.xsd): metadata, then its messages and tool calls in order. Returns the XML, or writes it to filePath (inside the output root).',
    inputSchema: {
      type: 'object',
      properties: {
        taskId: { type: 'string', minLength: 1, description: 'The task (full id or a unique prefix).' },
        filePath: { type: 'string', minLength: 1, description: 'Write here (relative to the output root) instead of returning the XML.' },
        includeContent: { type: 'boolean', description: 'Whole messages instead of 100-character previews (default from the export configuration: false).' },
        prettyPrint: { type: 'boolean', description: 'Indent the XML (default true).' },
        schemaProfile: { type: 'string', enum: ['seed', 'extended'], description: 'seed (default): what the design document\'s schemas accept; extended: also workspace, omittedChildren, a project conversation\'s createdAt/totalSize/mode (schemas/extended).' },
        tasksDir: tasksDirCamel,
      },
      required: ['taskId'],
      additionalProperties: false,
    },
    annotations: readOnly,
    run: async (a, ctx) =>
      exportAnswer(await ops.runExport(selOf(ctx, a.tasksDir), { target: 'task', format: 'xml', id: a.taskId, filePath: a.filePath, includeContent: a.includeContent, prettyPrint: a.prettyPrint, schemaProfile: a.schemaProfile }, ctx.io)),
  },
  {
    name: 'export_conversation_xml',
    title: 'Export a conversation as XML',
    description: 'A task and all its subtasks, nested, as XML (conversation.xsd). Returns the XML, or writes it to filePath.',
    inputSchema: {
      type: 'object',
      properties: {
        conversationId: { type: 'string', minLength: 1, description: 'The root task of the conversation.' },
        filePath: { type: 'string', minLength: 1, description: 'Write here (relative to the output root) instead of returning the XML.' },
        maxDepth: { type: 'integer', minimum: 1, description: 'Levels of tasks, the root being 1 (default: all).' },
        includeContent: { type: 'boolean', description: 'Whole messages instead of previews.' },
        prettyPrint: { type: 'boolean', description: 'Indent the XML (default true).' },
        schemaProfile: { type: 'string', enum: ['seed', 'extended'], description: 'seed (default): what the design document\'s schemas accept; extended: also workspace, omittedChildren, a project conversation\'s createdAt/totalSize/mode (schemas/extended).' },
        tasksDir: tasksDirCamel,
      },
      required: ['conversationId'],
      additionalProperties: false,
    },
    annotations: readOnly,
    run: async (a, ctx) =>
      exportAnswer(
        await ops.runExport(selOf(ctx, a.tasksDir), { target: 'conversation', format: 'xml', id: a.conversationId, filePath: a.filePath, maxDepth: a.maxDepth, includeContent: a.includeContent, prettyPrint: a.prettyPrint, schemaProfile: a.schemaProfile }, ctx.io),
      ),
  },
  {
    name: 'export_project_xml',
    title: 'Export a project as XML',
    description: 'A workspace\'s summary and one entry per conversation (project.xsd), most recent first, optionally between two dates.',
    inputSchema: {
      type: 'object',
      properties: {
        projectPath: { type: 'string', minLength: 1, description: 'The workspace folder (compared after normalising separators, case and a trailing slash).' },
        filePath: { type: 'string', minLength: 1, description: 'Write here instead of returning the XML.' },
        startDate: { type: 'string', description: 'ISO 8601 date or date-time, or now-7d / now-12h.' },
        endDate: { type: 'string', description: 'ISO 8601; a bare date covers the whole day.' },
        filter: { type: 'string', description: 'A named filter of the export configuration.' },
        prettyPrint: { type: 'boolean', description: 'Indent the XML (default true).' },
        schemaProfile: { type: 'string', enum: ['seed', 'extended'], description: 'seed (default): what the design document\'s schemas accept; extended: also workspace, omittedChildren, a project conversation\'s createdAt/totalSize/mode (schemas/extended).' },
        tasksDir: tasksDirCamel,
      },
      required: ['projectPath'],
      additionalProperties: false,
    },
    annotations: readOnly,
    run: async (a, ctx) =>
      exportAnswer(
        await ops.runExport(selOf(ctx, a.tasksDir), { target: 'project', format: 'xml', projectPath: a.projectPath, filePath: a.filePath, startDate: a.startDate, endDate: a.endDate, filter: a.filter, prettyPrint: a.prettyPrint, schemaProfile: a.schemaProfile }, ctx.io),
      ),
  },
  {
    name: 'configure_xml_export',
    title: 'Export configuration',
    description: 'Read (get), change (set: merged key by key, null removes a key, validated before it is written) or reset the export configuration (xml_export_config.json).',
    inputSchema: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['get', 'set', 'reset'] },
        config: {
          type: 'object',
          description: 'For set: a partial configuration, e.g. {"defaults": {"includeContent": true}}.',
          properties: {
            defaults: { type: 'object' },
            templates: { type: 'object' },
            filters: { type: 'object' },
          },
          additionalProperties: false,
        },
      },
      required: ['action'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    run: async (a) => {
      if (a.action === 'set' && !a.config) throw new RooStateError('INVALID_ARGUMENT', 'config is required for action "set".')
      return ops.configureExport({ action: a.action, config: a.config })
    },
  },
  {
    name: 'search_tasks_semantic',
    title: 'Search past tasks',
    description:
      'Find past tasks by what was said in them: by meaning (with an embedding model), by words and identifiers (BM25), or both. Results are grouped by task, best first, with the matching snippets and their dates. Needs the index (index_tasks).',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'What to look for, in natural language or exact identifiers.' },
        date_range: {
          type: 'object',
          properties: {
            start_date: { type: 'string', description: 'ISO 8601 date or date-time (inclusive).' },
            end_date: { type: 'string', description: 'ISO 8601; a bare date covers the whole day.' },
          },
          additionalProperties: false,
        },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Tasks to return (default 10).' },
        workspace: { type: 'string', description: 'A workspace path, or just its folder name.' },
        mode: { type: 'string', enum: ['semantic', 'lexical', 'hybrid'], description: 'Default: hybrid when the index has a model, else lexical.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    annotations: readOnly,
    run: (a, ctx) =>
      ops.search(ctx.sel, { query: a.query, ...dateRangeOf(a.date_range), limit: a.limit, workspace: a.workspace, mode: a.mode, indexDir: ctx.server.indexDir, embedder: ctx.server.embedder }, ctx.io),
  },
  {
    name: 'index_tasks',
    title: 'Index tasks for search',
    description: 'Build or bring up to date the search index: only tasks whose files changed are read and embedded again; tasks gone from disk are removed. Reports progress; cancelling keeps what was written.',
    inputSchema: {
      type: 'object',
      properties: {
        tasks_dir: tasksDirProp,
        rebuild: { type: 'boolean', description: 'Drop the index and start again.' },
      },
      additionalProperties: false,
    },
    annotations: writesCache,
    run: (a, ctx) => ops.index(selOf(ctx, a.tasks_dir), { rebuild: a.rebuild, indexDir: ctx.server.indexDir, embedder: ctx.server.embedder }, ctx.io),
  },
  {
    name: 'diagnose_roo_state',
    title: 'Health report',
    description:
      'Health of each task store: files of the recent tasks, sizes split into conversations, checkpoints and other, the editor\'s state.vscdb (read-only), our cache, and an overall OK, WARNING or ERROR with the reasons.',
    inputSchema: {
      type: 'object',
      properties: {
        tasks_dir: tasksDirProp,
        recent: { type: 'integer', minimum: 1, maximum: 1000, description: 'How many recent tasks to check (default 10).' },
      },
      additionalProperties: false,
    },
    annotations: readOnly,
    run: (a, ctx) => ops.diagnose(selOf(ctx, a.tasks_dir), { recent: a.recent }),
  },
  {
    name: 'rebuild_roo_state_from_tasks',
    title: 'Rebuild state from the task folders',
    description:
      'Scan the task folders (or a backup given as source), rebuild our cache, and report tasks, workspaces, roots and orphans. With regenerate_extension_index, also write the extension\'s tasks/_index.json and missing history_item.json files so it lists the tasks again after a state.vscdb loss (every replaced file is backed up). A dry run unless dry_run is false.',
    inputSchema: {
      type: 'object',
      properties: {
        source: { type: 'string', minLength: 1, description: 'A tasks folder to read instead of the store\'s own (e.g. a backup put back).' },
        tasks_dir: tasksDirProp,
        regenerate_extension_index: { type: 'boolean', description: 'Also write the extension\'s task index (default false).' },
        dry_run: { type: 'boolean', description: 'Report only (default true).' },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (a, ctx) =>
      ops.rebuild(selOf(ctx, a.tasks_dir), { source: a.source, regenerateExtensionIndex: a.regenerate_extension_index, apply: a.dry_run === false }, ctx.io),
  },
  {
    name: 'cleanup_obsolete_checkpoints',
    title: 'Clean up obsolete checkpoints',
    description:
      'Free the disk space of obsolete checkpoints (the checkpoints/ shadow repositories) of tasks inactive for a while; conversation files are never touched. A dry run (what would be freed) unless dry_run is false.',
    inputSchema: {
      type: 'object',
      properties: {
        tasks_dir: tasksDirProp,
        older_than_days: { type: 'integer', minimum: 0, description: 'Only tasks inactive for longer (default 30; 0 = any age).' },
        keep_last: { type: 'integer', minimum: 0, description: 'Never touch the N most recent tasks (default 10).' },
        completed_only: { type: 'boolean', description: 'Only tasks that finished.' },
        include_other: { type: 'boolean', description: 'Also files that are neither conversation nor checkpoint data (default false).' },
        dry_run: { type: 'boolean', description: 'Report only (default true).' },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (a, ctx) =>
      ops.cleanup(selOf(ctx, a.tasks_dir), {
        olderThanDays: a.older_than_days,
        keepLast: a.keep_last,
        completedOnly: a.completed_only,
        includeOther: a.include_other,
        apply: a.dry_run === false,
      }, ctx.io),
  },
  // Beyond the seed contracts: the CLI's other capabilities.
  {
    name: 'discover_roo_storage',
    title: 'Find task stores',
    description: 'The task stores of Roo Code, Zoo Code, Cline and Kilo Code on this machine (every editor build, server installs, custom storage paths), with task counts and sizes.',
    inputSchema: {
      type: 'object',
      properties: {
        extra_roots: { type: 'array', items: { type: 'string' }, description: 'More folders to look at.' },
        measure_size: { type: 'boolean', description: 'Measure each store (walks every file; default true).' },
      },
      additionalProperties: false,
    },
    annotations: readOnly,
    run: (a) => ops.discover({ extraRoots: a.extra_roots, measureSize: a.measure_size }),
  },
  {
    name: 'list_tasks',
    title: 'List tasks',
    description: 'Task summaries (title, workspace, mode, dates, counts, cost, parent), most recent activity first, optionally for one workspace.',
    inputSchema: {
      type: 'object',
      properties: {
        workspace: { type: 'string', description: 'A workspace path, or just its folder name.' },
        sort_by: { type: 'string', enum: ['lastActivity', 'createdAt', 'messageCount', 'totalSize', 'totalCost'] },
        sort_order: { type: 'string', enum: ['asc', 'desc'] },
        limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'Default 50.' },
        offset: { type: 'integer', minimum: 0 },
        tasks_dir: tasksDirProp,
      },
      additionalProperties: false,
    },
    annotations: readOnly,
    run: (a, ctx) => ops.listTasks(selOf(ctx, a.tasks_dir), { workspace: a.workspace, sortBy: a.sort_by, sortOrder: a.sort_order, limit: a.limit, offset: a.offset }, ctx.io),
  },
  {
    name: 'get_task_details',
    title: 'Task details',
    description: 'One task\'s skeleton: dates, mode, workspace, counts, tokens and cost, parent and link evidence, the subtasks it created, the problems found reading its files, and optionally its message sequence.',
    inputSchema: {
      type: 'object',
      properties: {
        task_id: { type: 'string', minLength: 1 },
        include_sequence: { type: 'boolean', description: 'Include the messages and tool calls (default false).' },
        tasks_dir: tasksDirProp,
      },
      required: ['task_id'],
      additionalProperties: false,
    },
    annotations: readOnly,
    run: async (a, ctx) => (await ops.showTask(selOf(ctx, a.tasks_dir), a.task_id, { sequence: Boolean(a.include_sequence) }, ctx.io)).skeleton,
  },
  {
    name: 'export_conversation_markdown',
    title: 'Export a conversation as Markdown',
    description: 'A task and its subtasks as Markdown, laid out like the extension\'s own task export.',
    inputSchema: {
      type: 'object',
      properties: {
        conversationId: { type: 'string', minLength: 1 },
        filePath: { type: 'string', minLength: 1 },
        maxDepth: { type: 'integer', minimum: 1 },
        includeContent: { type: 'boolean' },
        tasksDir: tasksDirCamel,
      },
      required: ['conversationId'],
      additionalProperties: false,
    },
    annotations: readOnly,
    run: async (a, ctx) =>
      exportAnswer(await ops.runExport(selOf(ctx, a.tasksDir), { target: 'conversation', format: 'md', id: a.conversationId, filePath: a.filePath, maxDepth: a.maxDepth, includeContent: a.includeContent }, ctx.io)),
  },
  {
    name: 'export_conversation_json',
    title: 'Export a conversation as JSON',
    description: 'A task and its subtasks as JSON: light (the tree with each task\'s summary, default) or skeletons (every task\'s full skeleton).',
    inputSchema: {
      type: 'object',
      properties: {
        conversationId: { type: 'string', minLength: 1 },
        variant: { type: 'string', enum: ['light', 'skeletons'] },
        filePath: { type: 'string', minLength: 1 },
        maxDepth: { type: 'integer', minimum: 1 },
        prettyPrint: { type: 'boolean' },
        tasksDir: tasksDirCamel,
      },
      required: ['conversationId'],
      additionalProperties: false,
    },
    annotations: readOnly,
    run: async (a, ctx) =>
      exportAnswer(
        await ops.runExport(selOf(ctx, a.tasksDir), { target: 'conversation', format: 'json', id: a.conversationId, variant: a.variant, filePath: a.filePath, maxDepth: a.maxDepth, prettyPrint: a.prettyPrint }, ctx.io),
      ),
  },
  {
    name: 'export_task_list_csv',
    title: 'Export the task list as CSV',
    description: 'One row per task (ids, parent, title, workspace, mode, dates, counts, tokens, cost), optionally for one project and between two dates.',
    inputSchema: {
      type: 'object',
      properties: {
        projectPath: { type: 'string' },
        startDate: { type: 'string' },
        endDate: { type: 'string' },
        filter: { type: 'string' },
        filePath: { type: 'string', minLength: 1 },
        tasksDir: tasksDirCamel,
      },
      additionalProperties: false,
    },
    annotations: readOnly,
    run: async (a, ctx) =>
      exportAnswer(await ops.runExport(selOf(ctx, a.tasksDir), { target: 'project', format: 'csv', projectPath: a.projectPath, startDate: a.startDate, endDate: a.endDate, filter: a.filter, filePath: a.filePath }, ctx.io)),
  },
  {
    name: 'check_context_condense',
    title: 'Context condensing check',
    description:
      'What the extension would decide for a task\'s context at a given context window (nothing, summarise or truncate), with every number used, the truncation that would follow, and the size (and price, given prices) of the summarising request.',
    inputSchema: {
      type: 'object',
      properties: {
        task_id: { type: 'string', minLength: 1 },
        context_window: { type: 'integer', minimum: 1, description: 'The model\'s context window in tokens.' },
        max_tokens: { type: 'integer', minimum: 1, description: 'The model\'s max output tokens (default: the extension\'s 8192 rule).' },
        threshold: { type: 'integer', minimum: 1, maximum: 100, description: 'Auto-condense threshold in percent (default 100).' },
        auto_condense: { type: 'boolean', description: 'Default true.' },
        era: { type: 'string', description: 'Rules of this release (default: guessed from the records).' },
        input_price: { type: 'number', minimum: 0, description: 'USD per million input tokens.' },
        output_price: { type: 'number', minimum: 0, description: 'USD per million output tokens.' },
        summary_tokens: { type: 'integer', minimum: 0, description: 'Expected summary length, priced as output.' },
        tasks_dir: tasksDirProp,
      },
      required: ['task_id', 'context_window'],
      additionalProperties: false,
    },
    annotations: readOnly,
    run: (a, ctx) =>
      ops.condenseCheck(selOf(ctx, a.tasks_dir), {
        taskId: a.task_id,
        contextWindow: a.context_window,
        maxTokens: a.max_tokens,
        threshold: a.threshold,
        autoCondense: a.auto_condense,
        era: a.era,
        inputPrice: a.input_price,
        outputPrice: a.output_price,
        summaryTokens: a.summary_tokens,
      }, ctx.io),
  },
  {
    name: 'migrate_tasks_dir',
    title: 'Move a tasks folder',
    description: 'Move a tasks folder: rename on the same device, else copy, verify (size and hash), swap and remove. Resumable after any interruption. A dry run unless dry_run is false.',
    inputSchema: {
      type: 'object',
      properties: {
        from: { type: 'string', minLength: 1 },
        to: { type: 'string', minLength: 1, description: 'A new or empty folder.' },
        dry_run: { type: 'boolean', description: 'Report only (default true).' },
        force_copy: { type: 'boolean' },
      },
      required: ['from', 'to'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (a, ctx) => ops.migrate(a.from, a.to, { apply: a.dry_run === false, forceCopy: a.force_copy }, ctx.sel.cwd),
  },
]

// ---------------------------------------------------------------------------------------------
// The legacy server's names (specs: legacy-server.md §10). `listed` ones were in its tools/list
// and are listed here too; the others were hidden, callable names and stay so. Each translates
// its arguments to one of the tools above.

const wsArg = (w) => (w === '*' || w === 'all' || w === '' ? undefined : w)
const strip = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
const loose = (properties, required = []) => ({ type: 'object', properties, required, additionalProperties: true })
const unsupported = (what, instead) => {
  throw new RooStateError('NOT_AVAILABLE', `${what} is not part of roo-state.${instead ? ` ${instead}` : ''}`)
}

const currentTask = (a) => ({
  tool: 'list_tasks',
  args: strip({ workspace: a.workspace ?? process.env.WORKSPACE_PATH ?? process.cwd(), limit: 1, sort_by: 'lastActivity', sort_order: 'desc' }),
})
const listConversations = (a) => ({
  tool: 'list_tasks',
  args: strip({
    workspace: wsArg(a.workspace),
    limit: a.limit ?? a.per_page,
    sort_by: ['lastActivity', 'messageCount', 'totalSize'].includes(a.sortBy) ? a.sortBy : undefined,
    sort_order: a.sortOrder,
    offset: a.page && (a.per_page ?? a.limit) ? (a.page - 1) * (a.per_page ?? a.limit) : undefined,
  }),
})
const treeArgs = (a) => ({
  tool: 'get_task_tree',
  args: strip({
    conversation_id: a.conversation_id ?? a.task_id ?? a.current_task_id,
    max_depth: typeof a.max_depth === 'number' && a.max_depth > 0 ? a.max_depth : undefined,
    output_format: a.output_format === 'hierarchical' ? 'ascii-tree' : a.output_format,
  }),
})
const viewArgs = (a) => ({
  tool: 'view_conversation_tree',
  args: strip({ task_id: a.task_id ?? a.taskId, view_mode: a.view_mode, detail_level: a.detail_level, truncate: a.truncate, max_output_length: a.max_output_length }),
})
const cacheRebuild = (a) => ({ tool: 'build_skeleton_cache', args: strip({ force_rebuild: a.force_rebuild, workspace_filter: a.workspace_filter ?? wsArg(a.workspace) }) })
const storage = (action) => ({ tool: 'discover_roo_storage', args: { measure_size: action === 'stats' } })
const rebuildIndex = (a) => ({ tool: 'rebuild_roo_state_from_tasks', args: strip({ regenerate_extension_index: true, dry_run: a.dry_run ?? true }) })
const maintenance = (action, a) => {
  switch (action) {
    case 'cache_rebuild':
      return cacheRebuild(a)
    case 'diagnose_bom':
      return { tool: 'diagnose_roo_state', args: {} }
    case 'repair_bom':
      return unsupported('Repairing byte-order marks', 'Nothing needs it: every reader of roo-state reads files with a BOM, UTF-16 and other damage as they are.')
    case 'rebuild_index':
      return rebuildIndex(a)
    default:
      throw new RooStateError('INVALID_ARGUMENT', `maintenance action must be cache_rebuild, diagnose_bom, repair_bom or rebuild_index, got ${JSON.stringify(action)}.`)
  }
}
const searchArgs = (a, mode) => ({
  tool: 'search_tasks_semantic',
  args: strip({
    query: a.search_query ?? a.query,
    limit: typeof a.max_results === 'number' ? Math.min(100, Math.max(1, a.max_results)) : a.limit,
    workspace: wsArg(a.workspace),
    mode,
    date_range: a.start_date || a.end_date ? strip({ start_date: a.start_date, end_date: a.end_date }) : a.date_range,
  }),
})
const exportData = (a) => {
  const target = a.target
  const format = a.format
  const id = a.conversationId ?? a.conversation_id ?? a.taskId ?? a.task_id
  const key = `${target}/${format}`
  switch (key) {
    case 'task/xml':
      return { tool: 'export_tasks_xml', args: strip({ taskId: a.taskId ?? a.task_id ?? id, filePath: a.filePath, includeContent: a.includeContent, prettyPrint: a.prettyPrint }) }
    case 'task/debug':
      return { tool: 'get_task_details', args: strip({ task_id: a.taskId ?? a.task_id ?? id }) }
    case 'conversation/xml':
      return { tool: 'export_conversation_xml', args: strip({ conversationId: id, filePath: a.filePath, maxDepth: a.maxDepth, includeContent: a.includeContent, prettyPrint: a.prettyPrint }) }
    case 'conversation/json':
      return { tool: 'export_conversation_json', args: strip({ conversationId: id, filePath: a.filePath, maxDepth: a.maxDepth, prettyPrint: a.prettyPrint, variant: a.jsonVariant === 'full' ? 'skeletons' : a.jsonVariant }) }
    case 'conversation/markdown':
      return { tool: 'export_conversation_markdown', args: strip({ conversationId: id, filePath: a.filePath, maxDepth: a.maxDepth, includeContent: a.includeContent }) }
    case 'conversation/csv':
    case 'project/csv':
      return { tool: 'export_task_list_csv', args: strip({ projectPath: a.projectPath, startDate: a.startDate, endDate: a.endDate, filePath: a.filePath }) }
    case 'project/xml':
      return { tool: 'export_project_xml', args: strip({ projectPath: a.projectPath, filePath: a.filePath, startDate: a.startDate, endDate: a.endDate, prettyPrint: a.prettyPrint }) }
    default:
      throw new RooStateError(
        'INVALID_ARGUMENT',
        `There is no ${format} export of a ${target}. Valid: task xml|debug; conversation xml|json|markdown|csv; project xml|csv.`,
      )
  }
}

/** @type {Array<{name: string, listed: boolean, description?: string, inputSchema: object, map: (a: any) => {tool: string, args: object}}>} */
export const legacy = [
  {
    name: 'conversation_browser',
    listed: true,
    description: 'Legacy name (roo-state-manager): browse tasks. action list | current | tree | view | rebuild; the same as list_tasks, get_task_tree, view_conversation_tree and build_skeleton_cache.',
    inputSchema: loose(
      {
        action: { type: 'string', enum: ['list', 'current', 'tree', 'view', 'rebuild', 'summarize'] },
        conversation_id: { type: 'string' },
        task_id: { type: 'string' },
        max_depth: { type: 'integer', minimum: 0 },
        output_format: { type: 'string' },
        view_mode: { type: 'string', enum: ['single', 'chain', 'cluster'] },
        detail_level: { type: 'string', enum: ['skeleton', 'summary', 'full'] },
        workspace: { type: 'string' },
        limit: { type: 'integer', minimum: 1 },
        force_rebuild: { type: 'boolean' },
      },
      ['action'],
    ),
    map(a) {
      switch (a.action) {
        case 'list':
          return listConversations(a)
        case 'current':
          return currentTask(a)
        case 'tree':
          return treeArgs(a)
        case 'view':
          return viewArgs(a)
        case 'rebuild':
          return cacheRebuild(a)
        default:
          return unsupported('Generated summaries (action "summarize")', 'Use export_data with format markdown, or view_conversation_tree.')
      }
    },
  },
  {
    name: 'export_data',
    listed: true,
    description: 'Legacy name (roo-state-manager): exports. target task (xml, debug) | conversation (xml, json, markdown, csv) | project (xml, csv).',
    inputSchema: loose(
      {
        target: { type: 'string', enum: ['task', 'conversation', 'project'] },
        format: { type: 'string', enum: ['xml', 'json', 'csv', 'markdown', 'debug'] },
        taskId: { type: 'string' },
        conversationId: { type: 'string' },
        projectPath: { type: 'string' },
        filePath: { type: 'string' },
        includeContent: { type: 'boolean' },
        prettyPrint: { type: 'boolean' },
        maxDepth: { type: 'integer', minimum: 1 },
        startDate: { type: 'string' },
        endDate: { type: 'string' },
        jsonVariant: { type: 'string', enum: ['light', 'full'] },
      },
      ['target', 'format'],
    ),
    map: exportData,
  },
  {
    name: 'roosync_search',
    listed: true,
    description: 'Legacy name (roo-state-manager): search. action semantic | text | diagnose; the same as search_tasks_semantic.',
    inputSchema: loose(
      {
        action: { type: 'string', enum: ['semantic', 'text', 'diagnose'] },
        search_query: { type: 'string' },
        max_results: { type: 'integer' },
        workspace: { type: 'string' },
        start_date: { type: 'string' },
        end_date: { type: 'string' },
      },
      ['action'],
    ),
    map(a) {
      if (a.action === 'diagnose') return { tool: '_index_status', args: {} }
      return searchArgs(a, a.action === 'text' ? 'lexical' : undefined)
    },
  },
  {
    name: 'roosync_indexing',
    listed: true,
    description: 'Legacy name (roo-state-manager): index management. action index | reset (confirm) | status | diagnose | rebuild (the extension\'s task index, dry run by default).',
    inputSchema: loose(
      {
        action: { type: 'string' },
        task_id: { type: 'string' },
        confirm: { type: 'boolean' },
        dry_run: { type: 'boolean' },
      },
      ['action'],
    ),
    map(a) {
      switch (a.action) {
        case 'index':
          return { tool: 'index_tasks', args: {} }
        case 'reset':
          if (a.confirm !== true) throw new RooStateError('INVALID_ARGUMENT', 'reset drops the whole search index: call it again with confirm: true.')
          return { tool: 'index_tasks', args: { rebuild: true } }
        case 'status':
        case 'diagnose':
          return { tool: '_index_status', args: {} }
        case 'rebuild':
          return rebuildIndex(a)
        default:
          return unsupported(`roosync_indexing action ${JSON.stringify(a.action)}`, 'Supported: index, reset, status, diagnose, rebuild.')
      }
    },
  },
  {
    name: 'roosync_storage_management',
    listed: true,
    description: 'Legacy name (roo-state-manager): storage. action storage (storageAction detect | stats) | maintenance (maintenanceAction cache_rebuild | diagnose_bom).',
    inputSchema: loose(
      {
        action: { type: 'string', enum: ['storage', 'maintenance'] },
        storageAction: { type: 'string', enum: ['detect', 'stats'] },
        maintenanceAction: { type: 'string', enum: ['cache_rebuild', 'diagnose_bom', 'repair_bom'] },
        force_rebuild: { type: 'boolean' },
        workspace_filter: { type: 'string' },
      },
      ['action'],
    ),
    map(a) {
      if (a.action === 'storage') return storage(a.storageAction ?? 'detect')
      return maintenance(a.maintenanceAction, a)
    },
  },
  { name: 'storage_info', listed: false, inputSchema: loose({ action: { type: 'string', enum: ['detect', 'stats'] } }), map: (a) => storage(a.action ?? 'detect') },
  { name: 'detect_roo_storage', listed: false, inputSchema: loose({}), map: () => storage('detect') },
  { name: 'get_storage_stats', listed: false, inputSchema: loose({}), map: () => storage('stats') },
  { name: 'maintenance', listed: false, inputSchema: loose({ action: { type: 'string' } }, ['action']), map: (a) => maintenance(a.action, a) },
  {
    name: 'task_export',
    listed: false,
    inputSchema: loose({ action: { type: 'string', enum: ['markdown', 'debug'] } }, ['action']),
    map: (a) =>
      a.action === 'debug'
        ? { tool: 'get_task_details', args: strip({ task_id: a.task_id ?? a.taskId }) }
        : { tool: 'export_conversation_markdown', args: strip({ conversationId: a.conversation_id ?? a.task_id, filePath: a.filePath }) },
  },
  { name: 'export_config', listed: false, inputSchema: loose({ action: { type: 'string' }, config: { type: 'object' } }, ['action']), map: (a) => ({ tool: 'configure_xml_export', args: strip({ action: a.action, config: a.config }) }) },
  { name: 'index_task_semantic', listed: false, inputSchema: loose({ task_id: { type: 'string' } }), map: () => ({ tool: 'index_tasks', args: {} }) },
  { name: 'rebuild_task_index', listed: false, inputSchema: loose({ dry_run: { type: 'boolean' } }), map: rebuildIndex },
  { name: 'debug_analyze_conversation', listed: false, inputSchema: loose({ taskId: { type: 'string' } }, ['taskId']), map: (a) => ({ tool: 'get_task_details', args: { task_id: a.taskId } }) },
  {
    name: 'view_task_details',
    listed: false,
    inputSchema: loose({ task_id: { type: 'string' }, action_index: { type: 'integer', minimum: 0 }, truncate: { type: 'integer', minimum: 0 } }, ['task_id']),
    // The whole task with every tool call and its parameters; action_index is not needed to reach one.
    map: (a) => ({ tool: 'view_conversation_tree', args: strip({ task_id: a.task_id, view_mode: 'single', detail_level: 'full', truncate: a.truncate }) }),
  },
  {
    name: 'get_raw_conversation',
    listed: false,
    inputSchema: loose({ taskId: { type: 'string' } }, ['taskId']),
    // The typed reading of the task's files (every message and tool call), not their bytes.
    map: (a) => ({ tool: 'get_task_details', args: { task_id: a.taskId, include_sequence: true } }),
  },
  {
    name: 'reset_qdrant_collection',
    listed: false,
    inputSchema: loose({ confirm: { type: 'boolean' } }),
    map: (a) => {
      if (a.confirm !== true) throw new RooStateError('INVALID_ARGUMENT', 'reset drops the whole search index: call it again with confirm: true.')
      return { tool: 'index_tasks', args: { rebuild: true } }
    },
  },
  { name: 'diagnose_conversation_bom', listed: false, inputSchema: loose({}), map: () => maintenance('diagnose_bom', {}) },
  { name: 'repair_conversation_bom', listed: false, inputSchema: loose({ dry_run: { type: 'boolean' } }), map: () => maintenance('repair_bom', {}) },
  { name: 'export_conversation_csv', listed: false, inputSchema: loose({ filePath: { type: 'string' } }), map: (a) => exportData({ ...a, target: 'conversation', format: 'csv' }) },
  { name: 'search_tasks_by_content', listed: false, inputSchema: loose({ search_query: { type: 'string' } }, ['search_query']), map: (a) => searchArgs(a) },
  { name: 'list_conversations', listed: false, inputSchema: loose({ limit: { type: 'integer', minimum: 1 } }), map: listConversations },
  { name: 'get_current_task', listed: false, inputSchema: loose({ workspace: { type: 'string' } }), map: currentTask },
]

/** Internal target of the legacy search/indexing diagnostics (not listed, not callable by name). */
export const internal = {
  _index_status: (_a, ctx) => ops.indexStatus({ indexDir: ctx.server.indexDir }),
}
