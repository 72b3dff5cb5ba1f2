// ESM entry of compat/mode.js (the same functions and the same setting).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
export const { getMode, setMode } = require('./mode.js')
