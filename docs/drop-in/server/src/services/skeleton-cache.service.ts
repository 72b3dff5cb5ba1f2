export * from 'roo-state-core/compat/services/skeleton-cache.service.js'
import { use } from 'roo-state-core/compat/io.js'
use({ servicesImport: (specifier: string) => import(specifier) })
