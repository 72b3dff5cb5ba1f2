// The `roo-state` command as a newcomer meets it: the wrong kind of path, an empty folder, one task's
// folder given as the store, errors that say what to do, help examples that exist, exports written
// like ordinary files, costs as people read them, and the default cache beside a store in `~`.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { core, repoRoot, isolatedEnv, tempDir } from './helpers'

const cli = path.join(repoRoot, 'cli', 'roo-state.mjs')
const fixtures = (name: string) => path.join(repoRoot, 'fixtures', 'stores', name, 'tasks')
let work: string
let home: string
let env: NodeJS.ProcessEnv

function run(args: string[], extra: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: work, env: { ...env, ...extra }, encoding: 'utf8', timeout: 120_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

beforeAll(() => {
  work = tempDir('roo-newcomer-')
  home = path.join(work, 'home')
  env = { ...isolatedEnv(work, { folders: false }), NO_COLOR: '1' }
})
afterAll(() => fs.rmSync(work, { recursive: true, force: true }))

describe('paths a newcomer gives', () => {
  it('a file is named a file, with where to go instead', () => {
    const file = path.join(fixtures('cline-v3.4x'), '1771300000000', 'task_metadata.json')
    const r = run(['tree', '--tasks-dir', file])
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('is a file, not a folder')
    expect(r.stderr).toContain(`--tasks-dir ${fixtures('cline-v3.4x')}`)
    expect(r.stderr).not.toContain('There is no folder')
  })

  it("one task's folder given as the store says to pass its parent", () => {
    const r = run(['tree', '--tasks-dir', path.join(fixtures('cline-v3.4x'), '1771300000000')])
    expect(r.code).toBe(3)
    expect(r.stderr).toContain("is one task's folder, not a store of tasks")
    expect(r.stderr).toContain(`Pass its parent: --tasks-dir ${fixtures('cline-v3.4x')}`)
  })

  it('an empty folder says what a store looks like instead of "0 of 0"', () => {
    const empty = path.join(work, 'empty')
    fs.mkdirSync(empty)
    for (const cmd of ['tree', 'scan']) {
      const r = run([cmd, '--tasks-dir', empty])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain('no task folder here')
      expect(r.stdout).toContain('roo-state discover')
      expect(r.stdout).not.toContain('0 of 0')
    }
  })

  it('scanTasks with an empty path says no folder was given', async () => {
    await expect(core.scanTasks('')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('no tasks folder was given') })
  })
})

describe('errors and help', () => {
  it("a bad argument points at the command's own help, not a generic one", () => {
    const r = run(['show'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/roo-state show --help/)
    expect(r.stderr).not.toContain('roo-state <command> --help')
  })

  it('condense check on a task without API history is a missing-data error, not a bad argument', () => {
    const store = path.join(work, 'ui-only', 'tasks')
    fs.mkdirSync(path.join(store, 't1'), { recursive: true })
    fs.writeFileSync(path.join(store, 't1', 'ui_messages.json'), JSON.stringify([{ ts: 1770000000000, type: 'say', say: 'text', text: 'Hi' }]))
    const r = run(['condense', 'check', 't1', '--tasks-dir', store, '--context-window', '200000'])
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('NO_API_HISTORY')
    expect(r.stderr).toContain('has no readable API history')
  })

  it('no help example points at a path that is not in the package', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { files: string[] }
    const general = run(['--help']).stdout
    const section = general.slice(general.indexOf('Commands:'), general.indexOf('Options of every command:'))
    const commands = section
      .split('\n')
      .slice(1)
      .map(l => l.trim().split(/\s{2,}/)[0])
      .filter(Boolean)
      .map(c => c.split(' ').filter(w => /^[a-z]+$/.test(w)).join(' '))
    expect(commands.length).toBeGreaterThan(10)
    for (const c of commands) {
      const help = run([...c.split(' '), '--help']).stdout
      for (const m of help.matchAll(/(?:^|\s)((?:\.\.\/|fixtures\/)[^\s'"]+)/g)) {
        const top = m[1].split('/')[0]
        expect(pkg.files, `${c}: ${m[1]}`).toContain(top)
      }
    }
  })
})

describe('exports as files', () => {
  it('are created with the umask like any file, refuse to overwrite in CLI words, and round costs', () => {
    const out = path.join(work, 'out')
    fs.mkdirSync(out)
    const file = path.join(out, 'list.csv')
    const args = ['export', 'csv', '--tasks-dir', fixtures('cline-v3.4x'), '-o', file]
    expect(run(args).code).toBe(0)
    const umask = process.umask()
    expect(fs.statSync(file).mode & 0o777).toBe(0o666 & ~umask)
    const again = run(args)
    expect(again.code).not.toBe(0)
    expect(again.stderr).toContain('--overwrite')
    expect(again.stderr).not.toContain('overwrite: true')
    const rows = fs.readFileSync(file, 'utf8').trim().split('\r\n').map(l => l.split(','))
    const col = rows[0].indexOf('totalCost')
    const byId = Object.fromEntries(rows.slice(1).map(r => [r[0], r[col]]))
    // 0.01383 + 0.0170444 + 0.0241 + 0.01329 = 0.0682644, to the micro-dollar.
    expect(byId['1771234567890']).toBe('0.068264')
    // No request recorded: the cost is unknown, not 0.
    expect(byId['1771300000000']).toBe('')
    const show = run(['show', '1771300000000', '--tasks-dir', fixtures('cline-v3.4x')])
    expect(show.stdout).toContain('tokens     unknown')
    expect(show.stdout).not.toContain('$0.0000')
  })
})

describe('the default cache beside a store in the home folder', () => {
  it('is accepted (a customStoragePath of ~), while the folders the extension owns are refused', () => {
    const tasks = path.join(home, 'tasks')
    fs.cpSync(fixtures('stack-era-v3.20'), tasks, { recursive: true })
    const built = run(['cache', 'build', '--tasks-dir', tasks, '--json'])
    expect(built.code, built.stderr).toBe(0)
    const report = JSON.parse(built.stdout) as { built: number; stores: Array<{ cacheFile: string }> }
    expect(report.built).toBe(5)
    expect(report.stores[0].cacheFile.startsWith(path.join(home, '.cache'))).toBe(true)
    const tree = run(['tree', '--tasks-dir', tasks])
    expect(tree.stdout).not.toContain('could not be used')
    const refused = run(['cache', 'build', '--tasks-dir', tasks, '--cache-dir', path.join(home, 'settings', 'c')])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('INVALID_CACHE_DIR')
    expect(refused.stderr).toContain('--cache-dir')
  })
})
