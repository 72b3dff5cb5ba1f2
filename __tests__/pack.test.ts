// Distribution: the release workflow's matrix is package.json's targets; the packed main and
// platform packages install into a fresh folder outside the checkout and work there with no cargo
// on PATH (the library and the `roo-state` command); without a platform package, requiring the
// package fails with one message naming the platform and the two ways out.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'
import { readJson, repoRoot, tempDir } from './helpers'

interface Pkg {
  name: string
  version: string
  files: string[]
  optionalDependencies?: Record<string, string>
  napi: { binaryName: string; targets: string[] }
}
const pkg = readJson<Pkg>(path.join(repoRoot, 'package.json'))

describe('the release workflow', () => {
  it('builds exactly the targets of package.json and publishes with provenance', () => {
    // js-yaml comes with @napi-rs/cli, which reads and writes workflows itself.
    const fromCli = createRequire(createRequire(path.join(repoRoot, 'package.json')).resolve('@napi-rs/cli/package.json'))
    const yaml = fromCli('js-yaml') as { load: (s: string) => unknown }
    const wf = yaml.load(fs.readFileSync(path.join(repoRoot, '.github', 'workflows', 'release.yml'), 'utf8')) as {
      on: { push: { tags: string[] } }
      jobs: {
        build: { strategy: { matrix: { include: Array<{ target: string; host: string; build: string }> } } }
        publish: { needs: string; permissions: Record<string, string>; steps: Array<{ run?: string }> }
      }
    }
    const include = wf.jobs.build.strategy.matrix.include
    expect(include.map(m => m.target).sort()).toEqual([...pkg.napi.targets].sort())
    for (const m of include) expect(m.build).toContain(`--target ${m.target}`)
    expect(wf.on.push.tags).toEqual(['v*'])
    expect(wf.jobs.publish.needs).toBe('build')
    expect(wf.jobs.publish.permissions['id-token']).toBe('write')
    const runs = wf.jobs.publish.steps.map(s => s.run ?? '').join('\n')
    expect(runs).toContain('napi artifacts')
    expect(runs).toContain('napi pre-publish')
    expect(runs).toContain('npm publish --provenance')
  })

  it('has a platform package folder for each target', () => {
    for (const t of pkg.napi.targets) {
      const parts = t.split('-')
      const cpu = ({ x86_64: 'x64', aarch64: 'arm64' } as Record<string, string>)[parts[0]]
      const name = t.includes('-apple-') ? `darwin-${cpu}` : t.includes('-windows-') ? `win32-${cpu}-msvc` : `linux-${cpu}-${parts[3]}`
      const p = readJson<{ name: string; version: string; main: string }>(path.join(repoRoot, 'npm', name, 'package.json'))
      expect(p.name).toBe(`${pkg.name}-${name}`)
      expect(p.version).toBe(pkg.version)
      expect(p.main).toBe(`${pkg.napi.binaryName}.${name}.node`)
    }
  })
})

describe('the packed packages, installed outside the checkout', () => {
  let work: string
  let packed: { main: string; platform: string; platformName: string }
  let app: string
  /** PATH without cargo or rustc: only node's own folder and the system's. */
  let env: NodeJS.ProcessEnv
  beforeAll(() => {
    work = tempDir('roo-pack-')
    const out = execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'pack.mjs'), '--use-built', '--out', path.join(work, 'dist')], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
    packed = JSON.parse(out.trim().split('\n').pop() ?? '{}')
    const dirs = [path.dirname(process.execPath), '/usr/bin', '/bin'].filter(d => fs.existsSync(d))
    env = { ...process.env, PATH: dirs.join(path.delimiter), NO_COLOR: '1' }
    for (const d of dirs) expect(fs.existsSync(path.join(d, 'cargo')), `cargo in ${d}`).toBe(false)
    app = path.join(work, 'app')
    fs.mkdirSync(app)
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }))
    // npm itself runs from this node's folder; its cache (warm from the checkout's install) serves
    // the dependency of the main package.
    const npmCli = path.join(path.dirname(process.execPath), 'npm')
    const npm = fs.existsSync(npmCli) ? npmCli : 'npm'
    execFileSync(npm, ['install', '--prefer-offline', '--omit=optional', '--no-audit', '--no-fund', packed.main, packed.platform], {
      cwd: app,
      env: { ...env, PATH: `${env.PATH}${path.delimiter}${process.env.PATH}` },
      stdio: 'pipe',
    })
  }, 300_000)
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }))

  it('lists every platform package as an optional dependency at its own version', () => {
    const installed = readJson<Pkg>(path.join(app, 'node_modules', pkg.name, 'package.json'))
    expect(installed.version).toBe(pkg.version)
    expect(Object.keys(installed.optionalDependencies ?? {}).length).toBe(pkg.napi.targets.length)
    for (const v of Object.values(installed.optionalDependencies ?? {})) expect(v).toBe(pkg.version)
    expect(fs.existsSync(path.join(app, 'node_modules', `${pkg.name}-${packed.platformName}`))).toBe(true)
    // Nothing of the checkout came along: no .node in the main package, no fixtures.
    const files = fs.readdirSync(path.join(app, 'node_modules', pkg.name))
    expect(files.some(f => f.endsWith('.node'))).toBe(false)
    expect(files).not.toContain('fixtures')
  })

  it('scans the bundled fixtures through the installed package, with no cargo on PATH', () => {
    const tasks = path.join(repoRoot, 'fixtures', 'stores', 'history-item-v3.50', 'tasks')
    const script = `require('${pkg.name}').scanTasks(${JSON.stringify(tasks)}, { hierarchy: {} }).then(r => console.log(JSON.stringify([r.skeletons.length, r.hierarchy.roots])))`
    const r = spawnSync(process.execPath, ['-e', script], { cwd: app, env, encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(JSON.parse(r.stdout)).toEqual([4, 1])
  })

  it('runs the installed roo-state command', () => {
    const bin = path.join(app, 'node_modules', '.bin', 'roo-state')
    const tasks = path.join(repoRoot, 'fixtures', 'stores', 'history-item-v3.50', 'tasks')
    const r = spawnSync(bin, ['tree', '--tasks-dir', tasks, '--no-cache'], { cwd: app, env, encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain('4 tasks · 1 conversation')
  })

  it('without a platform package, require fails with the platform and the two ways out', () => {
    const bare = path.join(work, 'bare', 'node_modules')
    fs.mkdirSync(bare, { recursive: true })
    fs.cpSync(path.join(app, 'node_modules', pkg.name), path.join(bare, pkg.name), { recursive: true })
    const r = spawnSync(process.execPath, ['-e', `try { require('${pkg.name}') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`], {
      cwd: path.dirname(bare),
      env,
      encoding: 'utf8',
    })
    const e = JSON.parse(r.stdout) as { code: string; message: string }
    expect(e.code).toBe('BINDING_NOT_FOUND')
    expect(e.message).toContain(`(${packed.platformName})`)
    expect(e.message).toContain(`npm install ${pkg.name}-${packed.platformName}@${pkg.version}`)
    expect(e.message).toContain('npm run build')
    expect(e.message).not.toContain('npm has a bug')
  })
})
