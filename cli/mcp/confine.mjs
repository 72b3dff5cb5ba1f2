// What a tool call may change of the exports. The output root and whether an export replaces an
// existing file are the user's settings (`roo-state export config set`): a tool call may name a
// file under the root, never move the root, and replaces only a file this server wrote itself.
// (Which tasks folders a call may name is the core's rule: confinedStore in ../lib/stores.mjs.)
import fs from 'node:fs'
import path from 'node:path'
import process from 'node:process'
import { RooStateError } from '../lib/errors.mjs'
import * as ops from '../lib/ops.mjs'

/** Export defaults only the user sets. */
export const USER_ONLY_DEFAULTS = Object.freeze(['outputRoot', 'overwrite'])

/**
 * configure_xml_export: get as usual; set refused when it names a user-only default; reset puts
 * every other setting back to its default and keeps the user's own, in one merged write.
 */
export async function configureFromTool(action, config) {
  if (action === 'set') {
    const named = USER_ONLY_DEFAULTS.filter((k) => config?.defaults && Object.hasOwn(config.defaults, k))
    if (named.length) {
      throw new RooStateError(
        'INVALID_ARGUMENT',
        `${named.map((k) => `defaults.${k}`).join(' and ')} can be set by the user only (roo-state export config set): a tool call may not move the output root or let exports replace files. Nothing was changed.`,
      )
    }
  }
  if (action === 'reset') {
    /** @type {{defaults?: Record<string, unknown>}} */
    const current = (await ops.configureExport({ action: 'get' })).config ?? {}
    const defaults = Object.fromEntries(
      Object.keys(current.defaults ?? {})
        .filter((k) => !USER_ONLY_DEFAULTS.includes(k))
        .map((k) => [k, null]),
    )
    const out = await ops.configureExport({ action: 'set', config: { defaults, templates: null, filters: null } })
    return { ...out, action: 'reset', message: `Configuration reset to the defaults, except ${USER_ONLY_DEFAULTS.join(' and ')}, which only the user sets.` }
  }
  return ops.configureExport({ action, config })
}

/** A file path with its folder resolved through links (the form the exports report). */
function settled(p) {
  try {
    return path.join(fs.realpathSync(path.dirname(p)), path.basename(p))
  } catch {
    return path.resolve(p)
  }
}

/**
 * The files this server's exports wrote, and whether a call may replace the file `filePath`
 * names: only one of those (never a file that was there before, whatever the configuration
 * says).
 * @param {{exportsWritten?: Set<string>}} server the server's state
 */
export function exportWrites(server) {
  server.exportsWritten ??= new Set()
  const written = server.exportsWritten
  return {
    async mayOverwrite(filePath) {
      const root = (await ops.configureExport({ action: 'get' })).config?.defaults?.outputRoot || process.cwd()
      return written.has(settled(path.resolve(root, filePath)))
    },
    wrote(filePath) {
      written.add(settled(filePath))
    },
  }
}
