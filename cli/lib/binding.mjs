// The N-API binding, loaded once, and feature detection: every command and tool names the binding
// function it stands on, and gets NOT_AVAILABLE until the build in hand exports it.
import { createRequire } from 'node:module'
import { RooStateError } from './errors.mjs'

const require = createRequire(import.meta.url)

/** @typedef {typeof import('../../index.js')} Binding */

/** @type {Binding | undefined} */
let loaded
/** @type {Error | undefined} */
let loadError

function load() {
  if (loaded || loadError) return
  try {
    loaded = require('../../index.js')
  } catch (err) {
    loadError = err
  }
}

/**
 * The binding module; throws NOT_AVAILABLE with the loader's reason when it cannot be loaded.
 * @returns {Binding}
 */
export function core() {
  load()
  if (loadError) {
    throw new RooStateError('NOT_AVAILABLE', `The roo-state-core native addon could not be loaded: ${loadError.message}`, {
      hint: 'Build it with `npm run build` (needs Rust), or reinstall the package for this platform.',
    })
  }
  return loaded
}

/**
 * Whether the binding exports a function of this name.
 * @param {string} name
 */
export function has(name) {
  load()
  return !loadError && typeof loaded[name] === 'function'
}

/**
 * The binding function `name`, or a NOT_AVAILABLE error that names it.
 * @template {keyof Binding} K
 * @param {K} name
 * @returns {Binding[K]}
 */
export function fn(name) {
  const c = core()
  const f = c[name]
  if (typeof f !== 'function') {
    throw new RooStateError('NOT_AVAILABLE', `This build of roo-state-core has no ${name}() yet.`)
  }
  return f
}

/**
 * Call binding function `name` with `args`.
 * @template {keyof Binding} K
 * @param {K} name
 * @param {Binding[K] extends (...a: infer A) => unknown ? A : never} args
 * @returns {Binding[K] extends (...a: never[]) => infer R ? R : never}
 */
export function call(name, ...args) {
  const f = /** @type {(...a: unknown[]) => any} */ (fn(name))
  return f(...args)
}
