export * from 'roo-state-core/compat/utils/roo-storage-detector.js'
import { use } from 'roo-state-core/compat/io.js'
use({ utilsImport: (specifier: string) => import(specifier) })
