// ESM entry of compat/utils/task-instruction-index.js: the same class and the same shared index.
import { createRequire } from 'node:module'
import '../io.mjs'

const require = createRequire(import.meta.url)
export const { TaskInstructionIndex, computeInstructionPrefix, globalTaskInstructionIndex, extractSubInstructions } =
  require('./task-instruction-index.js')
