// ESM entry of compat/utils/message-to-skeleton-transformer.js (the same objects).
import { createRequire } from 'node:module'
import '../io.mjs'

const require = createRequire(import.meta.url)
export const { MessageToSkeletonTransformer, GenericError } = require('./message-to-skeleton-transformer.js')
