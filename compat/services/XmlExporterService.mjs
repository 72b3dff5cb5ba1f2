// ESM entry of compat/services/XmlExporterService: the CommonJS module loaded through `require`, so both entries share one class
// object (statics and prototype methods replaced by a test are seen by both).
import { createRequire } from 'node:module'
import '../io.mjs'

const require = createRequire(import.meta.url)
const m = require('./XmlExporterService.js')

export const { XmlExporterService, StateManagerError } = m
