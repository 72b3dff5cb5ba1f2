// The lists docs/cli.md writes out for people follow the registry the CLI reads
// (cli/lib/registry.generated.mjs): a usage group or cost mode added in Rust and not in the
// documentation of `roo-state usage` fails here.

import { describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { repoRoot } from './helpers'
// @ts-expect-error -- generated plain ES module without declarations
import { COST_MODES, USAGE_GROUPS } from '../cli/lib/registry.generated.mjs'

/** The `a|b|c` alternatives written in the first cell of the docs/cli.md row of `command`. */
export function alternatives(markdown: string, command: string, after = ''): string[] {
  const row = markdown.split('\n').find((l) => l.startsWith(`| \`${command} `))
  if (!row) return []
  const cell = row.split(/(?<!\\)\|/)[1] ?? ''
  const at = cell.indexOf(after)
  const m = /\[?([a-z]+(?:\\\|[a-z]+)+)\]?/.exec(at < 0 ? '' : cell.slice(at + after.length))
  return m ? m[1].split('\\|') : []
}

describe('docs/cli.md', () => {
  const md = fs.readFileSync(path.join(repoRoot, 'docs', 'cli.md'), 'utf8')

  it('the usage line names every usage group, in the registry order', () => {
    expect(alternatives(md, 'usage')).toEqual([...USAGE_GROUPS])
  })

  it('the usage line names every cost mode', () => {
    expect([...alternatives(md, 'usage', '--cost ')].sort()).toEqual([...COST_MODES].sort())
  })

  it('reads the alternatives of a row', () => {
    const text = '| `usage [a\\|b\\|c] [--cost x\\|y]` | f | g |\n'
    expect(alternatives(text, 'usage')).toEqual(['a', 'b', 'c'])
    expect(alternatives(text, 'usage', '--cost ')).toEqual(['x', 'y'])
    expect(alternatives(text, 'nothing')).toEqual([])
  })
})
