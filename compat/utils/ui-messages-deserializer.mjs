// ESM entry of compat/utils/ui-messages-deserializer.js (the same objects).
import { createRequire } from 'node:module'
import '../io.mjs'

const require = createRequire(import.meta.url)
export const { UIMessagesDeserializer } = require('./ui-messages-deserializer.js')
