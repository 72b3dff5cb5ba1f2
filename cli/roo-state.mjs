#!/usr/bin/env node
// roo-state: command line and MCP server over the roo-state-core binding.
// `roo-state --help` lists the commands; cli/lib/commands.mjs defines them.
import process from 'node:process'
import { daemonHint, runThroughDaemon } from './lib/daemon-client.mjs'

// A reader that stops early (`roo-state tree | head`) is not an error.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0)
  throw err
})

/**
 * End the process once what was written has left it. A command is over when `main` returns
 * (every write into a task store or a cache is done and its lock released by then), so the
 * handles it opened are not taken apart one allocation at a time first, for nothing: freeing a
 * 50 000-task handle adds some 20-30 ms to every command.
 */
function exitWhenWritten(code) {
  let left = 2
  const done = () => {
    left -= 1
    if (left === 0) process.exit(code)
  }
  process.stdout.write('', done)
  process.stderr.write('', done)
}

/** The daemon's answer when one runs for this build (daemon-client.mjs), else this process's own. */
async function run(argv) {
  const answered = await runThroughDaemon(argv)
  if (answered !== null) return answered
  const { main } = await import('./lib/main.mjs')
  const code = await main(argv)
  const hint = daemonHint(argv, performance.now())
  if (hint) process.stderr.write(hint)
  return code
}

run(process.argv.slice(2)).then(
  (code) => {
    // null: a long-running command (the MCP server, `serve`, a watch) keeps the process alive.
    if (code !== null) exitWhenWritten(code)
  },
  (err) => {
    process.stderr.write(`roo-state: ${err?.stack ?? err}\n`)
    exitWhenWritten(1)
  },
)
