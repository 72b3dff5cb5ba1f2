/**
 * compat/extension inside a caller's tree after the one-line swap: `extension-host/` holds the
 * caller's condense and context-management modules (each `export * from` the ESM entry) and the
 * collaborators the extension keeps beside them (`./foldedFileContext`,
 * `../../api/transform/image-cleaning`, the `@roo-code/telemetry` package). Vitest evaluates the
 * entry, so its module graph names the caller's modules; the spies and mocks below are placed the
 * way the extension's own specs place them, and compat/extension must call them.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { ApiHandler, ApiMessage, ContentBlockParam, SummarizeResponse } from '../../compat/extension/index.js'
import * as condense from './extension-host/core/condense/index'
import * as contextManagement from './extension-host/core/context-management/index'
import { maybeRemoveImageBlocks } from './extension-host/api/transform/image-cleaning'
import { generateFoldedFileContext } from './extension-host/core/condense/foldedFileContext'
import { contextOptions, makeHandler, SYSTEM_PROMPT, turns, user } from './extension-fixtures'

vi.mock('./extension-host/api/transform/image-cleaning', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./extension-host/api/transform/image-cleaning')>()
  return { maybeRemoveImageBlocks: vi.fn(actual.maybeRemoveImageBlocks) }
})
vi.mock('./extension-host/core/condense/foldedFileContext', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./extension-host/core/condense/foldedFileContext')>()
  return { generateFoldedFileContext: vi.fn(actual.generateFoldedFileContext) }
})

// The caller's telemetry package, loaded as the caller's condense module resolves it.
const telemetry = (await import('./extension-host/node_modules/@roo-code/telemetry/index.js' as string)) as {
  condensed: Array<[string, boolean, boolean]>
}

const summarize = condense.summarizeConversation as (o: object) => Promise<SummarizeResponse>
const manage = contextManagement.manageContext as typeof import('../../compat/extension/index.js').manageContext

afterEach(() => {
  vi.restoreAllMocks()
  vi.mocked(maybeRemoveImageBlocks).mockClear()
  vi.mocked(generateFoldedFileContext).mockClear()
  telemetry.condensed.length = 0
})

/** Over the 100 % threshold of a 100 000-token window with `maxTokens` 30 000. */
const overLimit = (messages: ApiMessage[], apiHandler: ApiHandler) =>
  contextOptions(70001, apiHandler, { messages, contextWindow: 100000, maxTokens: 30000, autoCondenseContext: true, autoCondenseContextPercent: 100 })

describe('manageContext through the caller’s condense module', () => {
  it('summarises with a spy put on the caller’s summarizeConversation, given the extension’s options', async () => {
    const response: SummarizeResponse = {
      messages: [user('first'), user('the summary', undefined, { isSummary: true })],
      summary: 'the summary',
      cost: 0.05,
      newContextTokens: 100,
    }
    const spy = vi.spyOn(condense, 'summarizeConversation').mockResolvedValue(response)
    const m = makeHandler({ count: 0 })
    const messages = [...turns(4), user('')]
    const r = await manage(overLimit(messages, m.handler))
    expect(spy).toHaveBeenCalledTimes(1)
    const arg = spy.mock.calls[0][0] as unknown as Record<string, unknown>
    expect(Object.keys(arg).sort()).toEqual(
      ['apiHandler', 'customCondensingPrompt', 'cwd', 'environmentDetails', 'filesReadByRoo', 'isAutomaticTrigger', 'messages', 'metadata', 'rooIgnoreController', 'systemPrompt', 'taskId'].sort(),
    )
    expect(arg.messages).toBe(messages)
    expect(arg.apiHandler).toBe(m.handler)
    expect([arg.systemPrompt, arg.isAutomaticTrigger]).toEqual([SYSTEM_PROMPT, true])
    expect(r).toEqual({ ...response, prevContextTokens: 70001 })
    expect(r.messages).toBe(response.messages)
    expect(m.calls).toHaveLength(0)
  })

  it('falls back to truncation when the spy reports an error and the context is over the limit', async () => {
    vi.spyOn(condense, 'summarizeConversation').mockResolvedValue({ messages: [], summary: '', cost: 0.01, error: 'no summary', errorDetails: 'details' })
    const messages = [...turns(4), user('')]
    const r = await manage(overLimit(messages, makeHandler({ count: 0 }).handler))
    expect(r.messagesRemoved).toBe(2)
    expect(r.truncationId).toEqual(expect.any(String))
    expect(r.messages).toHaveLength(6)
    expect([r.summary, r.cost, r.error, r.errorDetails, r.prevContextTokens]).toEqual(['', 0.01, 'no summary', 'details', 70001])
    expect(r.messages[0]).toBe(messages[0])
  })

  it('does not ask for a summary under the threshold, and reports an invalid profile threshold', async () => {
    const spy = vi.spyOn(condense, 'summarizeConversation')
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const messages = turns(5)
    const r = await manage(
      contextOptions(1000, makeHandler({ count: 0 }).handler, { messages, profileThresholds: { p: 3 }, currentProfileId: 'p' }),
    )
    expect(spy).not.toHaveBeenCalled()
    expect(r.messages).toBe(messages)
    expect([r.summary, r.cost, r.prevContextTokens]).toEqual(['', 0, 1000])
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('Invalid profile threshold 3'))
  })
})

describe('summarizeConversation with the caller’s collaborators', () => {
  it('reports each condensation to the caller’s telemetry, automatic or not, with or without a custom prompt', async () => {
    await summarize({ messages: turns(5), apiHandler: makeHandler({ count: 10 }).handler, systemPrompt: SYSTEM_PROMPT, taskId: 't-1', customCondensingPrompt: ' mine ' })
    await manage(overLimit([...turns(4), user('')], makeHandler({ count: 0 }).handler))
    await summarize({ messages: turns(1), apiHandler: makeHandler().handler, systemPrompt: SYSTEM_PROMPT, taskId: 't-3', customCondensingPrompt: '  ' })
    expect(telemetry.condensed).toEqual([
      ['t-1', false, true],
      ['task-1', true, false],
      ['t-3', false, false],
    ])
  })

  it('hands the request to the caller’s image rule, whose result is what the handler receives', async () => {
    const requests: Array<Array<{ role: string; content: string | ContentBlockParam[] }>> = []
    const handler: ApiHandler = {
      async *createMessage(_system, messages) {
        requests.push(messages)
        yield { type: 'text', text: 'summary' }
      },
      getModel: () => ({ id: 'no-images', info: { contextWindow: 100000, supportsImages: false } }),
      countTokens: async () => 10,
    }
    const messages = turns(5)
    messages[2] = user([{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }], 3)
    const r = await summarize({ messages, apiHandler: handler, systemPrompt: SYSTEM_PROMPT, taskId: 't' })
    expect(r.error).toBeUndefined()
    expect(maybeRemoveImageBlocks).toHaveBeenCalledTimes(1)
    const [given, handed] = vi.mocked(maybeRemoveImageBlocks).mock.calls[0]
    expect(handed).toBe(handler)
    expect(given[given.length - 1].role).toBe('user')
    expect(String(given[given.length - 1].content)).toContain('Your task is to create a detailed summary of the conversation')
    // the stored messages themselves, before tool blocks become text, then the instructions
    expect(given).toHaveLength(6)
    expect(given.slice(0, 5)).toEqual(messages)
    expect((given[2].content as ContentBlockParam[])[1].type).toBe('image')
    expect(requests[0]).toHaveLength(6)
    expect(requests[0][2]).toEqual({ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'text', text: '(an image was left out)' }] })
    expect(requests[0][5]).toEqual({ role: 'user', content: given[5].content })
  })

  it('gives the caller’s image rule tool blocks as stored, with synthetic results for orphans; the handler gets text', async () => {
    const m = makeHandler({ count: 10 })
    const messages = turns(4)
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'call-1', name: 'read_file', input: { path: 'a.ts' } }], ts: 5 })
    await summarize({ messages, apiHandler: m.handler, systemPrompt: SYSTEM_PROMPT, taskId: 't' })
    const [given] = vi.mocked(maybeRemoveImageBlocks).mock.calls[0]
    expect(given.map((x) => (Array.isArray(x.content) ? x.content.map((b) => b.type).join() : 'text'))).toEqual([
      'text', 'text', 'text', 'text', 'tool_use', 'tool_result', 'text',
    ])
    expect(m.calls[0].messages).toHaveLength(7)
    const sent = m.calls[0].messages.flatMap((x) => (Array.isArray(x.content) ? x.content.map((b) => b.type) : ['text']))
    expect(sent.every((t) => t === 'text')).toBe(true)
  })

  it('adds the caller’s folded file sections, one block each, after the summary', async () => {
    vi.mocked(generateFoldedFileContext).mockResolvedValueOnce({
      content: '',
      sections: ['<system-reminder>\n## File Context: a.ts\n</system-reminder>', '  ', '<system-reminder>\n## File Context: b.ts\n</system-reminder>'],
      filesProcessed: 2,
      filesSkipped: 0,
      characterCount: 0,
    })
    const files = ['a.ts', 'b.ts']
    const r = await summarize({ messages: turns(5), apiHandler: makeHandler({ count: 10 }).handler, systemPrompt: SYSTEM_PROMPT, taskId: 't', filesReadByRoo: files, cwd: '/repo' })
    expect(generateFoldedFileContext).toHaveBeenCalledWith(files, { cwd: '/repo', rooIgnoreController: undefined })
    const blocks = r.messages[r.messages.length - 1].content as ContentBlockParam[]
    expect(blocks.map((b) => String(b.text).split('\n')[0])).toEqual(['## Conversation Summary', '<system-reminder>', '<system-reminder>'])
    expect(blocks[1].text).toContain('## File Context: a.ts')
    expect(blocks[2].text).toContain('## File Context: b.ts')
  })

  it('folds nothing for no files or no folder, and goes on without sections when folding fails', async () => {
    const handler = makeHandler({ count: 10 }).handler
    await summarize({ messages: turns(5), apiHandler: handler, systemPrompt: SYSTEM_PROMPT, taskId: 't', filesReadByRoo: [], cwd: '/repo' })
    await summarize({ messages: turns(5), apiHandler: handler, systemPrompt: SYSTEM_PROMPT, taskId: 't', filesReadByRoo: ['a.ts'] })
    expect(generateFoldedFileContext).not.toHaveBeenCalled()
    vi.mocked(generateFoldedFileContext).mockRejectedValueOnce(new Error('no parser'))
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const r = await summarize({ messages: turns(5), apiHandler: handler, systemPrompt: SYSTEM_PROMPT, taskId: 't', filesReadByRoo: ['a.ts'], cwd: '/repo' })
    expect(r.error).toBeUndefined()
    expect(r.messages[r.messages.length - 1].content).toHaveLength(1)
    expect(error).toHaveBeenCalledWith('[summarizeConversation] Failed to generate folded file context:', expect.any(Error))
  })

  it('asks for the folded sections only once a summary came back, as the extension does', async () => {
    const failing: ApiHandler = {
      async *createMessage() {
        yield { type: 'text', text: '' }
      },
      getModel: () => ({ id: 'm', info: { contextWindow: 100000, supportsImages: true } }),
      countTokens: async () => 10,
    }
    const empty = await summarize({ messages: turns(5), apiHandler: failing, systemPrompt: SYSTEM_PROMPT, taskId: 't', filesReadByRoo: ['a.ts'], cwd: '/repo' })
    const few = await summarize({ messages: turns(1), apiHandler: makeHandler().handler, systemPrompt: SYSTEM_PROMPT, taskId: 't', filesReadByRoo: ['a.ts'], cwd: '/repo' })
    expect([empty.error, few.error]).toEqual([expect.any(String), expect.any(String)])
    expect(generateFoldedFileContext).not.toHaveBeenCalled()
  })

  it('uses the caller’s real folding module when no test replaces it', async () => {
    vi.mocked(generateFoldedFileContext).mockClear()
    const r = await summarize({ messages: turns(5), apiHandler: makeHandler({ count: 10 }).handler, systemPrompt: SYSTEM_PROMPT, taskId: 't', filesReadByRoo: ['src/x.ts'], cwd: '/repo' })
    const blocks = r.messages[r.messages.length - 1].content as ContentBlockParam[]
    expect(blocks[1].text).toContain('(outline of /repo/src/x.ts)')
  })
})

describe('the module graphs and importers of each Vitest', () => {
  it('finds the caller’s module among the importers of the entry in vite-node’s module cache', () => {
    const host = createRequire(import.meta.url)('../../compat/extension/host.js') as {
      callerModule(modulePath: string): { file: string; exports: object } | null
    }
    const entry = fileURLToPath(new URL('../../compat/extension/index.mjs', import.meta.url))
    const caller = '/repo/src/core/condense/index.ts'
    const exports = { summarizeConversation: () => 'theirs' }
    const moduleCache = new Map<string, { importers?: Set<string>; exports?: object }>([
      [entry, { importers: new Set(['/repo/src/core/context-management/index.ts', caller]), exports: {} }],
      ['/repo/src/core/context-management/index.ts', { exports: {} }],
      [caller, { exports }],
    ])
    const g = globalThis as { __vitest_worker__?: unknown }
    const worker = g.__vitest_worker__
    let found: ReturnType<typeof host.callerModule>
    try {
      g.__vitest_worker__ = { moduleCache }
      found = host.callerModule('core/condense/index')
    } finally {
      g.__vitest_worker__ = worker
    }
    expect(found).toEqual({ file: caller, exports })
    expect(found?.exports).toBe(exports)
  })

  it('imports a collaborator through vite-node’s executor, where its mocks apply', async () => {
    const host = createRequire(import.meta.url)('../../compat/extension/host.js') as {
      importBeside(caller: { file: string }, specifier: string): Promise<object | null>
    }
    const requested: unknown[][] = []
    const mocked = { maybeRemoveImageBlocks: () => [] }
    const executor = {
      resolveUrl: async (id: string) => [id, `${id}.ts`],
      dependencyRequest: async (...args: unknown[]) => (requested.push(args), mocked),
    }
    const g = globalThis as { __vitest_mocker__?: unknown }
    const mocker = g.__vitest_mocker__
    let got: object | null
    try {
      g.__vitest_mocker__ = { executor }
      got = await host.importBeside({ file: '/repo/src/core/condense/index.ts' }, '../../api/transform/image-cleaning')
    } finally {
      g.__vitest_mocker__ = mocker
    }
    expect(got).toBe(mocked)
    expect(requested).toEqual([['/repo/src/api/transform/image-cleaning', '/repo/src/api/transform/image-cleaning.ts', []]])
  })

  it('without a mocker, imports through the ESM entry’s own import()', async () => {
    const host = createRequire(import.meta.url)('../../compat/extension/host.js') as {
      importBeside(caller: { file: string }, specifier: string): Promise<{ generateFoldedFileContext?: unknown } | null>
    }
    const caller = { file: fileURLToPath(new URL('./extension-host/core/condense/index.ts', import.meta.url)) }
    const g = globalThis as { __vitest_mocker__?: unknown }
    const mocker = g.__vitest_mocker__
    let got: { generateFoldedFileContext?: unknown } | null
    try {
      g.__vitest_mocker__ = undefined
      got = await host.importBeside(caller, './foldedFileContext')
    } finally {
      g.__vitest_mocker__ = mocker
    }
    expect(typeof got?.generateFoldedFileContext).toBe('function')
  })
})
