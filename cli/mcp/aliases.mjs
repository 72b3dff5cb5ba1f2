// Older spellings the server still accepts, kept apart from the tools themselves (./tools.mjs):
//
// - `argumentAliases`: the snake_case argument names the tools had before they all took
//   camelCase ones; a call may use either spelling, the listed schemas show only camelCase.
// - `legacy`: the legacy server's tool names (specs: legacy-server.md §10). `listed` ones were in
//   its tools/list and are listed here too; the others were hidden, callable names and stay so.
//   Each takes the legacy arguments and translates them to one call of a tool.
import { z } from 'zod'
import { RooStateError } from '../lib/errors.mjs'
import { looseInputOf } from './input.mjs'

/**
 * Old argument names per tool. A dotted name is an argument inside an object argument
 * (`date_range.start_date` is `dateRange.startDate`).
 * @type {Record<string, string[]>}
 */
export const argumentAliases = {
  build_skeleton_cache: ['force_rebuild', 'workspace_filter', 'tasks_dir'],
  get_task_tree: ['conversation_id', 'max_depth', 'output_format', 'tasks_dir'],
  view_conversation_tree: ['task_id', 'view_mode', 'detail_level', 'max_output_length', 'tasks_dir'],
  search_tasks_semantic: ['date_range', 'date_range.start_date', 'date_range.end_date'],
  index_tasks: ['tasks_dir'],
  diagnose_roo_state: ['tasks_dir'],
  rebuild_roo_state_from_tasks: ['tasks_dir', 'regenerate_extension_index', 'dry_run'],
  cleanup_obsolete_checkpoints: ['tasks_dir', 'older_than_days', 'keep_last', 'completed_only', 'include_other', 'dry_run'],
  discover_roo_storage: ['extra_roots', 'measure_size'],
  list_tasks: ['sort_by', 'sort_order', 'tasks_dir'],
  get_task_details: ['task_id', 'include_sequence', 'tasks_dir'],
  check_context_condense: ['task_id', 'context_window', 'max_tokens', 'auto_condense', 'input_price', 'output_price', 'summary_tokens', 'tasks_dir'],
  migrate_tasks_dir: ['dry_run', 'force_copy'],
}

/** `snake_case` → `snakeCase`. */
export const camelOf = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase())

function renameIn(obj, from, to, where) {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj) || !(from in obj)) return
  if (to in obj && obj[to] !== obj[from]) {
    throw new RooStateError('INVALID_ARGUMENT', `${where}${from} and ${where}${to} are the same argument with different values; give ${to} alone.`)
  }
  obj[to] = obj[from]
  delete obj[from]
}

/**
 * The arguments of a call to `tool` with the old spellings replaced by the current ones (a copy;
 * nested objects named by an alias are copied too). Both spellings with different values are
 * refused.
 * @param {string} tool
 * @param {Record<string, unknown>} args
 */
export function currentSpelling(tool, args) {
  const names = argumentAliases[tool]
  if (!names || !args || typeof args !== 'object') return args
  const out = { ...args }
  for (const name of names) {
    const parts = name.split('.')
    /** @type {Record<string, any> | undefined} */
    let holder = out
    let where = ''
    for (const p of parts.slice(0, -1)) {
      const key = camelOf(p)
      if (!holder[key] || typeof holder[key] !== 'object' || Array.isArray(holder[key])) {
        holder = undefined
        break
      }
      holder[key] = { ...holder[key] }
      holder = holder[key]
      where += `${key}.`
    }
    const last = parts[parts.length - 1]
    renameIn(holder, last, camelOf(last), where)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// The legacy tool names.

const wsArg = (w) => (w === '*' || w === 'all' || w === '' ? undefined : w)
const strip = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
const unsupported = (what, instead) => {
  throw new RooStateError('NOT_AVAILABLE', `${what} is not part of roo-state.${instead ? ` ${instead}` : ''}`)
}
const str = z.string().optional()
const int = (min) => (min === undefined ? z.int() : z.int().min(min)).optional()
const bool = z.boolean().optional()
const oneOf = (values) => z.enum(values).optional()

const currentTask = (a) => ({
  tool: 'list_tasks',
  args: strip({ workspace: a.workspace ?? process.env.WORKSPACE_PATH ?? process.cwd(), limit: 1, sortBy: 'lastActivity', sortOrder: 'desc' }),
})
const listConversations = (a) => ({
  tool: 'list_tasks',
  args: strip({
    workspace: wsArg(a.workspace),
    limit: a.limit ?? a.per_page,
    sortBy: ['lastActivity', 'messageCount', 'totalSize'].includes(a.sortBy) ? a.sortBy : undefined,
    sortOrder: a.sortOrder,
    offset: a.page && (a.per_page ?? a.limit) ? (a.page - 1) * (a.per_page ?? a.limit) : undefined,
  }),
})
const treeArgs = (a) => ({
  tool: 'get_task_tree',
  args: strip({
    conversationId: a.conversation_id ?? a.task_id ?? a.current_task_id,
    maxDepth: typeof a.max_depth === 'number' && a.max_depth > 0 ? a.max_depth : undefined,
    outputFormat: a.output_format === 'hierarchical' ? 'ascii-tree' : a.output_format,
  }),
})
const viewArgs = (a) => ({
  tool: 'view_conversation_tree',
  args: strip({ taskId: a.task_id ?? a.taskId, viewMode: a.view_mode, detailLevel: a.detail_level, truncate: a.truncate, maxOutputLength: a.max_output_length }),
})
const cacheRebuild = (a) => ({ tool: 'build_skeleton_cache', args: strip({ forceRebuild: a.force_rebuild, workspaceFilter: a.workspace_filter ?? wsArg(a.workspace) }) })
const storage = (action) => ({ tool: 'discover_roo_storage', args: { measureSize: action === 'stats' } })
const rebuildIndex = (a) => ({ tool: 'rebuild_roo_state_from_tasks', args: strip({ regenerateExtensionIndex: true, dryRun: a.dry_run ?? true }) })
const details = (taskId, more = {}) => ({ tool: 'get_task_details', args: strip({ taskId, ...more }) })
const resetIndex = (a) => {
  if (a.confirm !== true) throw new RooStateError('INVALID_ARGUMENT', 'reset drops the whole search index: call it again with confirm: true.')
  return { tool: 'index_tasks', args: { rebuild: true } }
}
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
    // A nested date_range keeps its old spellings here; the call goes through currentSpelling.
    dateRange: a.start_date || a.end_date ? strip({ startDate: a.start_date, endDate: a.end_date }) : a.date_range,
  }),
})
const exportData = (a) => {
  const { target, format } = a
  const id = a.conversationId ?? a.conversation_id ?? a.taskId ?? a.task_id
  const taskId = a.taskId ?? a.task_id ?? id
  const conv = { conversationId: id, filePath: a.filePath, maxDepth: a.maxDepth }
  switch (`${target}/${format}`) {
    case 'task/xml':
      return { tool: 'export_tasks_xml', args: strip({ taskId, filePath: a.filePath, includeContent: a.includeContent, prettyPrint: a.prettyPrint }) }
    case 'task/debug':
      return details(taskId)
    case 'conversation/xml':
      return { tool: 'export_conversation_xml', args: strip({ ...conv, includeContent: a.includeContent, prettyPrint: a.prettyPrint }) }
    case 'conversation/json':
      return { tool: 'export_conversation_json', args: strip({ ...conv, prettyPrint: a.prettyPrint, variant: a.jsonVariant === 'full' ? 'skeletons' : a.jsonVariant }) }
    case 'conversation/markdown':
      return { tool: 'export_conversation_markdown', args: strip({ ...conv, includeContent: a.includeContent }) }
    case 'conversation/csv':
    case 'project/csv':
      return { tool: 'export_task_list_csv', args: strip({ projectPath: a.projectPath, startDate: a.startDate, endDate: a.endDate, filePath: a.filePath }) }
    case 'project/xml':
      return { tool: 'export_project_xml', args: strip({ projectPath: a.projectPath, filePath: a.filePath, startDate: a.startDate, endDate: a.endDate, prettyPrint: a.prettyPrint }) }
    default:
      throw new RooStateError('INVALID_ARGUMENT', `There is no ${format} export of a ${target}. Valid: task xml|debug; conversation xml|json|markdown|csv; project xml|csv.`)
  }
}

/**
 * @typedef {object} LegacyName
 * @property {string} name
 * @property {boolean} listed
 * @property {string} [description]
 * @property {import('zod').ZodType} input what the legacy callers send (other fields are ignored)
 * @property {(a: any) => {tool: string, args: object}} map
 */

/** @type {LegacyName[]} */
export const legacy = [
  {
    name: 'conversation_browser',
    listed: true,
    description: 'Legacy name (roo-state-manager): browse tasks. action list | current | tree | view | rebuild; the same as list_tasks, get_task_tree, view_conversation_tree and build_skeleton_cache.',
    input: looseInputOf({
      action: z.enum(['list', 'current', 'tree', 'view', 'rebuild', 'summarize']),
      conversation_id: str,
      task_id: str,
      max_depth: int(0),
      output_format: str,
      view_mode: oneOf(['single', 'chain', 'cluster']),
      detail_level: oneOf(['skeleton', 'summary', 'full']),
      workspace: str,
      limit: int(1),
      force_rebuild: bool,
    }),
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
    input: looseInputOf({
      target: z.enum(['task', 'conversation', 'project']),
      format: z.enum(['xml', 'json', 'csv', 'markdown', 'debug']),
      taskId: str,
      conversationId: str,
      projectPath: str,
      filePath: str,
      includeContent: bool,
      prettyPrint: bool,
      maxDepth: int(1),
      startDate: str,
      endDate: str,
      jsonVariant: oneOf(['light', 'full']),
    }),
    map: exportData,
  },
  {
    name: 'roosync_search',
    listed: true,
    description: 'Legacy name (roo-state-manager): search. action semantic | text | diagnose; the same as search_tasks_semantic.',
    input: looseInputOf({
      action: z.enum(['semantic', 'text', 'diagnose']),
      search_query: str,
      max_results: int(),
      workspace: str,
      start_date: str,
      end_date: str,
    }),
    map(a) {
      if (a.action === 'diagnose') return { tool: '_index_status', args: {} }
      return searchArgs(a, a.action === 'text' ? 'lexical' : undefined)
    },
  },
  {
    name: 'roosync_indexing',
    listed: true,
    description: 'Legacy name (roo-state-manager): index management. action index | reset (confirm) | status | diagnose | rebuild (the extension\'s task index, dry run by default).',
    input: looseInputOf({ action: z.string(), task_id: str, confirm: bool, dry_run: bool }),
    map(a) {
      switch (a.action) {
        case 'index':
          return { tool: 'index_tasks', args: {} }
        case 'reset':
          return resetIndex(a)
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
    input: looseInputOf({
      action: z.enum(['storage', 'maintenance']),
      storageAction: oneOf(['detect', 'stats']),
      maintenanceAction: oneOf(['cache_rebuild', 'diagnose_bom', 'repair_bom']),
      force_rebuild: bool,
      workspace_filter: str,
    }),
    map(a) {
      if (a.action === 'storage') return storage(a.storageAction ?? 'detect')
      return maintenance(a.maintenanceAction, a)
    },
  },
  { name: 'storage_info', listed: false, input: looseInputOf({ action: oneOf(['detect', 'stats']) }), map: (a) => storage(a.action ?? 'detect') },
  { name: 'detect_roo_storage', listed: false, input: looseInputOf({}), map: () => storage('detect') },
  { name: 'get_storage_stats', listed: false, input: looseInputOf({}), map: () => storage('stats') },
  { name: 'maintenance', listed: false, input: looseInputOf({ action: z.string() }), map: (a) => maintenance(a.action, a) },
  {
    name: 'task_export',
    listed: false,
    input: looseInputOf({ action: z.enum(['markdown', 'debug']) }),
    map: (a) =>
      a.action === 'debug'
        ? details(a.task_id ?? a.taskId)
        : { tool: 'export_conversation_markdown', args: strip({ conversationId: a.conversation_id ?? a.task_id, filePath: a.filePath }) },
  },
  { name: 'export_config', listed: false, input: looseInputOf({ action: z.string(), config: z.looseObject({}).optional() }), map: (a) => ({ tool: 'configure_xml_export', args: strip({ action: a.action, config: a.config }) }) },
  { name: 'index_task_semantic', listed: false, input: looseInputOf({ task_id: str }), map: () => ({ tool: 'index_tasks', args: {} }) },
  { name: 'rebuild_task_index', listed: false, input: looseInputOf({ dry_run: bool }), map: rebuildIndex },
  { name: 'debug_analyze_conversation', listed: false, input: looseInputOf({ taskId: z.string() }), map: (a) => details(a.taskId) },
  {
    name: 'view_task_details',
    listed: false,
    input: looseInputOf({ task_id: z.string(), action_index: int(0), truncate: int(0) }),
    // The whole task with every tool call and its parameters; action_index is not needed to reach one.
    map: (a) => ({ tool: 'view_conversation_tree', args: strip({ taskId: a.task_id, viewMode: 'single', detailLevel: 'full', truncate: a.truncate }) }),
  },
  {
    name: 'get_raw_conversation',
    listed: false,
    input: looseInputOf({ taskId: z.string() }),
    // The typed reading of the task's files (every message and tool call), not their bytes.
    map: (a) => details(a.taskId, { includeSequence: true }),
  },
  { name: 'reset_qdrant_collection', listed: false, input: looseInputOf({ confirm: bool }), map: resetIndex },
  { name: 'diagnose_conversation_bom', listed: false, input: looseInputOf({}), map: () => maintenance('diagnose_bom', {}) },
  { name: 'repair_conversation_bom', listed: false, input: looseInputOf({ dry_run: bool }), map: () => maintenance('repair_bom', {}) },
  { name: 'export_conversation_csv', listed: false, input: looseInputOf({ filePath: str }), map: (a) => exportData({ ...a, target: 'conversation', format: 'csv' }) },
  { name: 'search_tasks_by_content', listed: false, input: looseInputOf({ search_query: z.string() }), map: (a) => searchArgs(a) },
  { name: 'list_conversations', listed: false, input: looseInputOf({ limit: int(1) }), map: listConversations },
  { name: 'get_current_task', listed: false, input: looseInputOf({ workspace: str }), map: currentTask },
]
