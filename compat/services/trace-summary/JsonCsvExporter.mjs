// ESM entry of compat/services/trace-summary/JsonCsvExporter: the CommonJS module loaded through
// `require`, so both entries share one class object.
import { createRequire } from 'node:module'
import '../../io.mjs'

const require = createRequire(import.meta.url)
const m = require('./JsonCsvExporter.js')

export const { JsonCsvExporter } = m
