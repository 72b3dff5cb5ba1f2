#!/usr/bin/env node
// roo-state: command line and MCP server over the roo-state-core binding.
// `roo-state --help` lists the commands; cli/lib/commands.mjs defines them.
import process from 'node:process'
import { main } from './lib/main.mjs'

// A reader that stops early (`roo-state tree | head`) is not an error.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0)
  throw err
})

main(process.argv.slice(2)).then(
  (code) => {
    // null: a long-running command (the MCP server) keeps the process alive.
    if (code !== null) process.exitCode = code
  },
  (err) => {
    process.stderr.write(`roo-state: ${err?.stack ?? err}\n`)
    process.exitCode = 1
  },
)
