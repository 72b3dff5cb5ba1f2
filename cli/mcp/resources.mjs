// The MCP resources of the server: read-only texts named by URI (today the usage summaries other
// usage trackers' servers offer, ./tracker-tools.mjs), listed and read within an initialized
// session.
import { ErrorCode, ListResourcesRequestSchema, McpError, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { describeError } from '../lib/errors.mjs'
import { trackerResources } from './tracker-tools.mjs'

export const resources = [...trackerResources]

/**
 * Serve `resources` on `server`.
 * @param {import('@modelcontextprotocol/sdk/server/index.js').Server} server
 * @param {any} ctx the tools' context (stores, cache)
 * @param {() => boolean} initialized
 * @param {() => Error} notInitialized
 */
export function serveResources(server, ctx, initialized, notInitialized) {
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    if (!initialized()) throw notInitialized()
    return { resources: resources.map(({ uri, name, description }) => ({ uri, name, description, mimeType: 'text/plain' })) }
  })
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    if (!initialized()) throw notInitialized()
    const { uri } = request.params
    const r = resources.find((x) => x.uri === uri)
    if (!r) throw new McpError(ErrorCode.InvalidParams, `No resource ${JSON.stringify(uri)}. Resources: ${resources.map((x) => x.uri).join(', ')}.`)
    try {
      const text = await r.read({ ...ctx, io: { signal: extra.signal } })
      return { contents: [{ uri, mimeType: 'text/plain', text }] }
    } catch (err) {
      const e = describeError(err, 'mcp')
      throw new McpError(ErrorCode.InternalError, `${e.code}: ${e.message}`)
    }
  })
}
