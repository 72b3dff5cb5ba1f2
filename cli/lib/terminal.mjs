// What the command line does for a person at a terminal, and only there: colours (never with
// NO_COLOR, never into a pipe or a file) and the pager for long answers (`less -FRX`, as git runs
// it: it quits at once when the text fits one screen, keeps colours, and leaves the text on the
// screen).
import { spawn } from 'node:child_process'
import process from 'node:process'

/**
 * Whether colours are wanted on `stream`: a terminal, not `TERM=dumb`, no `NO_COLOR` (https://no-color.org).
 * @param {{isTTY?: boolean}} [stream]
 * @param {Record<string, string | undefined>} [env]
 */
export function wantsColor(stream = process.stdout, env = process.env) {
  return Boolean(stream.isTTY) && env.TERM !== 'dumb' && !env.NO_COLOR
}

const CODES = { bold: [1, 22], dim: [2, 22], yellow: [33, 39], cyan: [36, 39], green: [32, 39], red: [31, 39] }

/**
 * The styles of a text: ANSI codes when `on`, the text as it is otherwise.
 * @param {boolean} on
 * @returns {Record<keyof typeof CODES, (s: string) => string>}
 */
export function styles(on) {
  const out = {}
  for (const [name, [open, close]] of Object.entries(CODES)) out[name] = on ? (s) => `\x1b[${open}m${s}\x1b[${close}m` : (s) => s
  return /** @type {any} */ (out)
}

/**
 * The pager command for standard output: ROO_STATE_PAGER, else PAGER, else `less`; none when
 * standard output is not a terminal, when asked not to, or when the command is empty or `cat`.
 */
export function pagerCommand({ noPager = false, stream = process.stdout, env = process.env } = {}) {
  if (noPager || !stream.isTTY) return null
  const cmd = (env.ROO_STATE_PAGER ?? env.PAGER ?? 'less').trim()
  return cmd === '' || cmd === 'cat' ? null : cmd
}

/**
 * Write `text` to standard output, through the pager when there is one (its options as git sets
 * them: LESS=FRX and LV=-c unless set). Resolves when the pager has quit; a pager that cannot be
 * started leaves the text written directly.
 */
export function writeOut(text, { noPager = false } = {}) {
  const cmd = pagerCommand({ noPager })
  if (!cmd) {
    process.stdout.write(text)
    return Promise.resolve()
  }
  return new Promise((resolve) => {
    const env = { ...process.env, LESS: process.env.LESS ?? 'FRX', LV: process.env.LV ?? '-c' }
    let child
    try {
      child = spawn(cmd, { shell: true, stdio: ['pipe', 'inherit', 'inherit'], env })
    } catch {
      process.stdout.write(text)
      resolve()
      return
    }
    // Ctrl-C belongs to the pager while it runs (as with git).
    const ignore = () => {}
    process.on('SIGINT', ignore)
    let failed = false
    child.on('error', () => {
      failed = true
      process.off('SIGINT', ignore)
      process.stdout.write(text)
      resolve()
    })
    // The reader quit early (`q` in less): not an error.
    child.stdin.on('error', () => {})
    child.on('close', (code) => {
      process.off('SIGINT', ignore)
      if (failed) return
      // The shell found no such command: the text written directly, as when none is set.
      if (code === 127) process.stdout.write(text)
      resolve()
    })
    child.stdin.end(text)
  })
}
