// The ui_messages.json texts the hierarchy engine's sub-task extractor is checked on: each record
// kind it reads, in the shapes hosts write and in the broken ones they sometimes leave.

const j = (v) => JSON.stringify(v)
const tool = (t, extra = {}) => ({ type: 'ask', ask: 'tool', ts: 1700000000100, text: j(t), ...extra })
const api = (request, extra = {}) => ({ type: 'say', say: 'api_req_started', ts: 1700000000200, text: j({ request }), ...extra })
const long = 'Implement the parser module, then the writer, then wire both into the command line. '.repeat(4)
const emojiCut = 'x'.repeat(199) + '😀 and the rest of the sentence'

export const cases = {
  'tool ask as JSON text': j([tool({ tool: 'newTask', mode: '💻 Code', content: 'Write the parser for the config files', taskId: 't-1' })]),
  'tool ask as an object, long content': j([{ type: 'ask', ask: 'tool', ts: 5, text: { tool: 'newTask', mode: 'architect', content: long } }]),
  'tool ask in content': j([{ type: 'ask', ask: 'tool', ts: 6, content: j({ tool: 'newTask', content: 'From the content field only' }) }]),
  'tool ask: empty text hides content': j([{ type: 'ask', ask: 'tool', ts: 7, text: '', content: { tool: 'newTask', content: 'never read' } }]),
  'tool ask: number content and mode': j([tool({ tool: 'newTask', mode: 42, content: 12345 })]),
  'tool ask: other tool, falsy content': j([tool({ tool: 'readFile', content: 'x' }), tool({ tool: 'newTask', content: '' })]),
  'tool ask: emoji at the cut': j([tool({ tool: 'newTask', content: emojiCut })]),
  'api request, several calls': j([
    api("[new_task in 💻 Code mode: 'Implement the parser module now please'] Result: ok [new_task in Architect mode: \"Design the storage layer in detail\"] [new_task in x: 'short']"),
  ]),
  'api request across lines, no mode word': j([api("[new_task in orchestrator: 'First line\nsecond line of the instruction'] done", { ts: 0, timestamp: 1700000000999 })]),
  'api request not JSON': j([{ type: 'say', say: 'api_req_started', ts: 8, text: 'not json [new_task in Code mode: \'Implement everything here\']' }]),
  'new_task blocks': j([
    { type: 'say', say: 'text', ts: 9, text: 'Plan:\n<new_task>\n<mode>Code</mode>\n<message>Build the index &amp; the trie</message>\n</new_task> and <NEW_TASK><MODE></MODE><message>Second block message</message></New_Task >' },
  ]),
  'new_task boundary': j([{ type: 'say', say: 'text', ts: 10, text: '<new_taskx><mode>a</mode><message>not a new task block</message></new_taskx> <new_task-x><mode>b</mode><message>a hyphen is a boundary</message></new_task>' }]),
  'new_task without mode, short message': j([{ type: 'say', say: 'text', ts: 11, text: '<new_task><message>no mode tag in this one</message></new_task><new_task><mode>c</mode><message>tiny</message></new_task>' }]),
  'generic blocks': j([
    {
      type: 'say',
      say: 'text',
      ts: 12,
      text: '<delegate to="x"><mode> Debug </mode> then <message>Find the failing test and fix it</message></DELEGATE> <a-b><mode>ask</mode><message>hyphenated tag name</message></a-b> <switch_mode><mode>x</mode><message>unclosed block here</message>',
    },
  ]),
  'generic block named new_task is skipped': j([{ type: 'say', say: 'text', ts: 13, text: '<New_Task><mode>code</mode><message>counted once, as a new_task block</message></new_task>' }]),
  'task blocks': j([{ type: 'say', say: 'text', ts: 14, text: '<task>Refactor the loader module</task> <TASK> tiny </TASK> <task>  Second task body here  </Task> <task></task>' }]),
  'delegation sentences': j([
    { type: 'say', say: 'text', ts: 15, text: 'Je délègue cette partie au mode Code pour la suite.' },
    { role: 'assistant', content: 'je te passe la main en mod architect maintenant' },
    { type: 'ask', ask: 'followup', ts: 16, text: 'Je confie ceci au mode debug' },
    { type: 'say', say: 'text', ts: 17, text: 'JE TRANSFÈRE le travail\nau mode code' },
  ]),
  'timestamps': j([
    { type: 'say', say: 'text', ts: 0, timestamp: '2024-01-01T00:00:00Z', text: '<task>timestamp from the second field</task>' },
    { type: 'say', say: 'text', ts: '1700000000000', text: '<task>a string ts is kept as it is</task>' },
    { type: 'say', say: 'text', text: '<task>no time at all in this record</task>' },
  ]),
  'joined across records': j([
    { type: 'say', say: 'text', ts: 18, text: 'start <new_task><mode>Code</mode>' },
    { type: 'say', say: 'text', ts: 19, content: '<message>spans two records</message></new_task> <task>' },
    { type: 'say', say: 'text', ts: 20, text: 42 },
    { type: 'say', say: 'text', ts: 21, text: 'joined task body</task>' },
  ]),
  'messages wrapper': j({ messages: [{ type: 'say', say: 'text', ts: 22, text: '<task>inside a messages wrapper</task>' }] }),
  'object without messages': j({ items: [] }),
  'primitive records': j([1, 'text', true, [], { type: 'say', say: 'text', ts: 23, text: '<task>after primitives</task>' }]),
  'empty array': '[]',
  'null record': j([{ type: 'say', say: 'text', ts: 24, text: '<task>before the null</task>' }, null]),
  'not JSON': '[{"type":"say"',
  'BOM prefixed': '\ufeff' + j([{ type: 'say', say: 'text', ts: 25, text: '<task>behind a BOM</task>' }]),
}
