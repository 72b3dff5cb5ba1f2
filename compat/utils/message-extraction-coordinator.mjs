// ESM entry of compat/utils/message-extraction-coordinator.js (the same objects).
import { createRequire } from 'node:module'
import '../io.mjs'

const require = createRequire(import.meta.url)
export const { MessageExtractionCoordinator, messageExtractionCoordinator, createInstruction, cleanMode, extractTimestamp, PATTERN_NAMES } = require('./message-extraction-coordinator.js')
