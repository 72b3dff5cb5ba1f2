// Where the command's words are in a command line: the one rule main.mjs (to find the command) and
// daemon-client.mjs (to know whether the daemon may answer, before anything else is loaded) share.
// Node's own modules only, like daemon-client.mjs.

/** The options of every command that take a value (their value is not a command word). */
const WITH_VALUE = new Set(['--tasks-dir', '--cache-dir'])

/** The positions in `argv` of its first `n` words that are neither options nor their values. */
export function commandWordsAt(argv, n = 2) {
  const at = []
  for (let i = 0; i < argv.length && at.length < n; i++) {
    const a = argv[i]
    if (a === '--') break
    if (WITH_VALUE.has(a)) i++
    else if (!a.startsWith('-')) at.push(i)
  }
  return at
}
