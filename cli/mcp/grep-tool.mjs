// The MCP tool `grep_tasks`: every line of the tasks' dialogue where a literal or a regular
// expression stands. Arguments are untrusted: the store must be one of the server's
// (confinedStore), the pattern is bounded (the core refuses a pattern over 4096 bytes or one whose
// compiled form is too large; its regular expressions run in linear time), and so are the context
// and the number of matches.
import { z } from 'zod'
import { KINDS, grep } from '../lib/grep.mjs'
import { confinedStore } from '../lib/stores.mjs'
import { HOST_SOURCES } from '../lib/registry.generated.mjs'
import { ANSWER_CHARS, fitCount, offsetCursor, offsetOf, pageNote } from './pages.mjs'

/** @type {import('./tools.mjs').Tool} */
export const grepTool = {
  name: 'grep_tasks',
  title: 'Grep past tasks',
  description:
    'Every line of the tasks\' dialogue holding an exact text (or a regular expression): what the user wrote, what the assistant wrote, tool inputs and tool results (each optional), with the task, the message time and kind, and context lines. A match never spans two messages. Reads the task files; needs no index. Regular expressions use Rust regex syntax (no look-around or back-references; linear time).',
  input: {
    pattern: z.string().min(1).max(4096).describe('The text to find (exact, case-sensitive unless ignoreCase), or a regular expression when regex is true.'),
    regex: z.boolean().describe('The pattern is a regular expression (default false).').optional(),
    ignoreCase: z.boolean().describe('Ignore case (default false).').optional(),
    kinds: z.array(z.enum(KINDS)).min(1).max(4).describe('Only these texts (default all).').optional(),
    context: z.int().min(0).max(20).describe('Lines of the same message before and after each match (default 0).').optional(),
    maxMatches: z.int().min(1).max(10000).describe('Matches per page at most (default 200; fewer when they do not fit an answer).').optional(),
    workspace: z.string().describe('A workspace path, or just its folder name.').optional(),
    host: z.enum(HOST_SOURCES).describe('Only tasks of this host.').optional(),
    dateRange: z
      .strictObject({
        startDate: z.string().describe('ISO 8601 date or date-time (inclusive).').optional(),
        endDate: z.string().describe('ISO 8601; a bare date covers the whole day.').optional(),
      })
      .optional(),
    taskId: z.string().min(1).describe('Only this task (full id or a unique prefix) and its subtasks.').optional(),
    tasksDir: z
      .string()
      .describe('One of the server\'s task stores (its tasks/ folder, or the storage folder holding it); any other folder is refused. Default: all of them.')
      .optional(),
    cursor: z.string().min(1).describe('The nextCursor of the previous page (the other arguments unchanged).').optional(),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  async run(a, ctx) {
    const sel = a.tasksDir ? { ...ctx.sel, tasksDirs: [await confinedStore(ctx.sel, a.tasksDir)] } : ctx.sel
    // A page of the matches, in the order grep finds them: those before the cursor are found
    // again and left out.
    const from = offsetOf(a.cursor)
    const limit = a.maxMatches ?? 200
    const r = await grep(
      sel,
      {
        pattern: a.pattern,
        regex: a.regex,
        ignoreCase: a.ignoreCase,
        kinds: a.kinds,
        context: a.context,
        maxMatches: from + limit,
        workspace: a.workspace,
        host: a.host,
        since: a.dateRange?.startDate,
        until: a.dateRange?.endDate,
        task: a.taskId,
      },
      ctx.io,
    )
    const matches = r.matches.slice(from)
    const make = (k) => ({
      ...r,
      matches: matches.slice(0, k),
      page: pageNote({
        shown: k,
        total: from + matches.length,
        leftOut: matches.length - k,
        nextCursor: k < matches.length || r.truncated ? offsetCursor(from + k) : null,
        unit: r.truncated ? 'matches at least (grep stopped at the page\'s end)' : 'matches',
      }),
    })
    return fitCount(matches.length, make, ANSWER_CHARS, Math.min(1, matches.length)).value
  },
}
