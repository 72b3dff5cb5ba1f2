export * from 'roo-state-core/compat/utils/message-to-skeleton-transformer.js'
import { use } from 'roo-state-core/compat/io.js'
use({ utilsImport: (specifier: string) => import(specifier) })
