// ESM entry of compat/utils/roo-storage-detector.js: the same class (its statics are shared).
import { createRequire } from 'node:module'
import '../io.mjs'

const require = createRequire(import.meta.url)
export const { RooStorageDetector, RooStorageError, detectSourceFromPath } = require('./roo-storage-detector.js')
