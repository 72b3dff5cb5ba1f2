// ESM side of compat/io.js: imports Node's modules through whatever module graph loads this file
// (a test runner's, with its mocks) and hands them to the CommonJS compat modules.
import { createRequire } from 'node:module'
import * as fs from 'fs'
import * as fsp from 'fs/promises'
import * as path from 'path'
import * as os from 'os'

const require = createRequire(import.meta.url)
const io = require('./io.js')
io.use({ fs, 'fs/promises': fsp, path, os })

export const { use } = io
