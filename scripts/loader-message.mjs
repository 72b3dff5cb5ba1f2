#!/usr/bin/env node
// After `napi build`: give the generated loader (index.js) one clear message for a machine where no
// native binary loads: which platform this is, and the two ways out (install the platform package,
// or build from source). The loader's own reasons stay attached as `error.cause`.
//
//   node scripts/loader-message.mjs [index.js]
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const file = path.resolve(process.argv[2] ?? path.join(root, 'index.js'))
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
const MARK = '/* roo-state-core: missing binding message */'

let text = fs.readFileSync(file, 'utf8')
if (text.includes(MARK)) process.exit(0)

// The generated loader ends its search with `if (!nativeBinding) { if (loadErrors.length > 0) { … } throw … }`.
const start = text.indexOf('if (!nativeBinding) {\n  if (loadErrors.length > 0) {')
if (start === -1) {
  console.error(`loader-message: the load-failure block was not found in ${file}; the napi loader changed shape`)
  process.exit(1)
}
const end = text.indexOf('\n}\n', start)
if (end === -1) {
  console.error(`loader-message: the end of the load-failure block was not found in ${file}`)
  process.exit(1)
}

const replacement = `${MARK}
if (!nativeBinding) {
  const __platform = (() => {
    const p = process.platform
    const a = process.arch
    if (p === 'linux') return \`linux-\${a}-\${isMusl() ? 'musl' : 'gnu'}\`
    if (p === 'win32') return \`win32-\${a}-msvc\`
    return \`\${p}-\${a}\`
  })()
  const __supported = ${JSON.stringify(pkg.napi.targets.map(targetName))}
  const __known = __supported.includes(__platform)
  const error = new Error(
    \`roo-state-core: no native binary loads on this machine (\${__platform}).\\n\` +
      (__known
        ? \`  Either install its platform package: npm install ${pkg.name}-\${__platform}@${pkg.version} \` +
          \`(npm leaves optional packages out with --omit=optional, or when the lock file was made on another platform; \` +
          \`npm install --include=optional brings them back),\\n\`
        : \`  No prebuilt package exists for this platform (prebuilt: \${__supported.join(', ')});\\n\`) +
      \`  or build it from source: run \\\`npm run build\\\` in \${__dirname} with Rust installed (https://rustup.rs).\`,
  )
  error.code = 'BINDING_NOT_FOUND'
  if (loadErrors.length > 0) error.cause = createLoadErrorChain(loadErrors)
  throw error
}`

/** The npm platform suffix of a Rust target triple, as napi names the platform packages. */
function targetName(triple) {
  const parts = triple.split('-')
  const cpu = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }[parts[0]] ?? parts[0]
  if (triple.includes('-apple-')) return `darwin-${cpu}`
  if (triple.includes('-windows-')) return `win32-${cpu}-msvc`
  return `linux-${cpu}-${parts[parts.length - 1] === 'musl' ? 'musl' : 'gnu'}`
}

text = text.slice(0, start) + replacement + text.slice(end + 2)
fs.writeFileSync(file, text)
