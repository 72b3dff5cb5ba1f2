// ESM entry of compat/utils/hierarchy-reconstruction-engine: the CommonJS module loaded through `require`, so both entries share one class
// object (statics and prototype methods replaced by a test are seen by both).
import { createRequire } from 'node:module'
import '../io.mjs'

const require = createRequire(import.meta.url)
const m = require('./hierarchy-reconstruction-engine.js')

export const { HierarchyReconstructionEngine } = m
