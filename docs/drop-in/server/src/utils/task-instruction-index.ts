export * from 'roo-state-core/compat/utils/task-instruction-index.js'
import { use } from 'roo-state-core/compat/io.js'
import * as subInstructionExtractor from './sub-instruction-extractor.js'
use({ subInstructionExtractor })
