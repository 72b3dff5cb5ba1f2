#!/usr/bin/env node
// Pack roo-state-core for npm: the main package and this machine's platform package, as the
// release workflow does for all seven targets.
//
//   node scripts/pack.mjs [--use-built] [--out DIR]
//
// 1. Build the addon in release mode (`--use-built`: take the .node already at the top of the
//    checkout, e.g. the debug build of the test run).
// 2. Copy it into its platform package, npm/<platform>/ (what `napi artifacts` does with the
//    artifacts of a CI build).
// 3. Pack both with `npm pack` into DIR (default dist/). The main package's tarball lists the seven
//    platform packages as optionalDependencies at its own version (what `napi prepublish` adds at
//    publish time; the checkout's package.json keeps none, so `npm install` in a checkout never
//    asks the registry for packages of a version not published yet).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const useBuilt = args.includes('--use-built')
const outArg = args.indexOf('--out')
const out = path.resolve(outArg >= 0 ? args[outArg + 1] : path.join(root, 'dist'))
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))

/** The npm platform suffix of a Rust target triple, as napi names the platform packages. */
export function platformOf(triple) {
  const parts = triple.split('-')
  const cpu = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }[parts[0]] ?? parts[0]
  if (triple.includes('-apple-')) return `darwin-${cpu}`
  if (triple.includes('-windows-')) return `win32-${cpu}-msvc`
  return `linux-${cpu}-${parts[parts.length - 1] === 'musl' ? 'musl' : 'gnu'}`
}

function thisPlatform() {
  const { platform, arch } = process
  if (platform === 'linux') {
    const musl = (() => {
      try {
        return fs.readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
      } catch {
        return false
      }
    })()
    return `linux-${arch}-${musl ? 'musl' : 'gnu'}`
  }
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

function run(cmd, argv, opts = {}) {
  return execFileSync(cmd, argv, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts })
}

const platform = thisPlatform()
const binary = `${pkg.napi.binaryName}.${platform}.node`
if (!useBuilt) run("bash", ["scripts/build-addon.sh", "--profile", "dist"], { stdio: "inherit" })
if (!fs.existsSync(path.join(root, binary))) {
  console.error(`pack: ${binary} is not at the top of the checkout; build it first (npm run build)`)
  process.exit(1)
}
const platformDir = path.join(root, 'npm', platform)
if (!fs.existsSync(path.join(platformDir, 'package.json'))) {
  console.error(`pack: there is no platform package for ${platform} under npm/`)
  process.exit(1)
}
fs.mkdirSync(out, { recursive: true })

// The platform package: the binary beside its package.json.
fs.copyFileSync(path.join(root, binary), path.join(platformDir, binary))
const platformTgz = run('npm', ['pack', '--silent', '--pack-destination', out], { cwd: platformDir }).trim().split('\n').pop()
fs.rmSync(path.join(platformDir, binary))

// The main package, from a staging copy whose package.json lists the platform packages.
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-state-pack-'))
try {
  for (const f of pkg.files) fs.cpSync(path.join(root, f), path.join(stage, f), { recursive: true })
  for (const f of ['README.md', 'LICENSE']) if (fs.existsSync(path.join(root, f))) fs.copyFileSync(path.join(root, f), path.join(stage, f))
  const staged = { ...pkg, optionalDependencies: Object.fromEntries(pkg.napi.targets.map((t) => [`${pkg.name}-${platformOf(t)}`, pkg.version])) }
  delete staged.devDependencies
  delete staged.scripts
  fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(staged, null, 2)}\n`)
  const mainTgz = run('npm', ['pack', '--silent', '--pack-destination', out], { cwd: stage }).trim().split('\n').pop()
  const result = { main: path.join(out, mainTgz), platform: path.join(out, platformTgz), platformName: platform }
  console.log(JSON.stringify(result))
} finally {
  fs.rmSync(stage, { recursive: true, force: true })
}
