/**
 * A scripted model server for the agent suite, on 127.0.0.1 only. One server
 * speaks the four wire protocols the agents use, each on its own path:
 * Anthropic Messages (`POST /v1/messages`, Claude Code), OpenAI Responses
 * (`POST /v1/responses`, Codex CLI), OpenAI Chat Completions (`POST
 * /v1/chat/completions`, OpenCode) and the Gemini API (`POST
 * /v1beta/models/<m>:streamGenerateContent|generateContent|countTokens`,
 * Gemini CLI). Every request is kept (path, body, the brain's reading of it
 * and its reply) so a test can assert what reached the model.
 *
 * The brain ({@link decide}) is the same for every protocol: after a tool
 * result it answers in text quoting the result; a prompt holding
 * {@link RECALL_CUE} makes it call mnemo's `memory_recall` tool (under the
 * agent's own name for it) with the session-1 word; any other prompt makes
 * it call the agent's shell tool to write that word into `notes.txt`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** The prompt cue that makes the brain call mnemo's recall tool. */
export const RECALL_CUE = 'RECALLTEST'

/** What the brain read from one model request, API-neutral. */
export interface BrainInput {
  toolNames: string[]
  lastIsToolResult: boolean
  toolResultText: string
  userText: string
}

export type BrainReply = { kind: 'tool'; name: string; input: Record<string, unknown> } | { kind: 'text'; text: string }

/** One request the server received. */
export interface ModelRequest {
  api: 'anthropic' | 'responses' | 'chat' | 'gemini' | 'other'
  path: string
  /** The raw body text (what the agent sent the model, whole). */
  raw: string
  body: unknown
  brain?: BrainInput
  reply?: BrainReply
}

/** The shell command session 1 runs; its output is the word in capitals, which the command itself does not hold. */
export const shellCommandFor = (word: string): string => `echo ${word} > notes.txt && tr a-z A-Z < notes.txt`

/** What the brain remembers across the requests of one server: whether it called recall, how often it waited for it. */
export interface BrainState {
  recalled: boolean
  waits: number
}

/** Most shell `sleep 1` calls the brain makes while waiting for an agent to offer mnemo's tools (Codex starts MCP servers beside the first request). */
const MAX_WAITS = 5

/** The scripted decision for one request (see the module comment). */
export function decide(x: BrainInput, word: string, state: BrainState = { recalled: false, waits: 0 }): BrainReply {
  const wantsRecall = x.userText.includes(RECALL_CUE) && !state.recalled
  const recall = x.toolNames.find((n) => /memory_recall$/.test(n))
  if (wantsRecall && recall !== undefined) {
    state.recalled = true
    return { kind: 'tool', name: recall, input: { query: word } }
  }
  if (wantsRecall && state.waits < MAX_WAITS) {
    state.waits++
    return shellCall(x.toolNames, 'sleep 1') ?? { kind: 'text', text: 'No tool to wait with.' }
  }
  if (x.lastIsToolResult)
    return { kind: 'text', text: `Final answer: done. The tool said: ${x.toolResultText.slice(0, 300).replace(/\s+/g, ' ')}` }
  return shellCall(x.toolNames, shellCommandFor(word)) ?? { kind: 'text', text: `No shell tool was offered (${x.toolNames.join(', ')}).` }
}

/** A call of the agent's shell tool (whatever it is named and however it takes its command), or undefined when none is offered. */
function shellCall(toolNames: readonly string[], cmd: string): BrainReply | undefined {
  // Tried in this order: the first name offered wins, with the input its tool takes.
  const described = { command: cmd, description: 'Write the word into notes.txt' }
  const shells: [RegExp, Record<string, unknown>][] = [
    [/^Bash$/, described],
    [/^run_shell_command$/, described],
    [/^bash$/, described],
    [/^shell_command$/, { command: cmd }],
    [/^exec_command$/, { cmd }],
    [/^shell$/, { command: ['bash', '-lc', cmd] }],
  ]
  for (const [re, input] of shells) {
    const name = toolNames.find((n) => re.test(n))
    if (name) return { kind: 'tool', name, input }
  }
  return undefined
}

type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')
function textOf(c: unknown): string {
  if (typeof c === 'string') return c
  if (Array.isArray(c)) return c.map((p) => (isObj(p) ? str(p.text) || textOf(p.content) || str(p.output) : '')).join('\n')
  return c == null ? '' : JSON.stringify(c)
}

function anthropicBrain(body: Json): BrainInput {
  const msgs = arr(body.messages).filter(isObj)
  const last = msgs[msgs.length - 1]
  const blocks =
    last === undefined ? [] : Array.isArray(last.content) ? last.content.filter(isObj) : [{ type: 'text', text: str(last.content) }]
  const result = blocks.find((b) => b.type === 'tool_result')
  const firstUser = msgs.find((m) => m.role === 'user')
  const texts =
    firstUser === undefined
      ? []
      : Array.isArray(firstUser.content)
        ? firstUser.content
            .filter(isObj)
            .filter((b) => b.type === 'text')
            .map((b) => str(b.text))
        : [str(firstUser.content)]
  return {
    toolNames: arr(body.tools)
      .filter(isObj)
      .map((t) => str(t.name)),
    lastIsToolResult: result !== undefined,
    toolResultText: result === undefined ? '' : textOf(result.content),
    userText: texts.filter((t) => !t.startsWith('<system-reminder>')).join('\n'),
  }
}

function responsesBrain(body: Json): BrainInput {
  const input = Array.isArray(body.input) ? body.input.filter(isObj) : [{ type: 'message', role: 'user', content: str(body.input) }]
  const last = input[input.length - 1] ?? {}
  const isOut = /_call_output$/.test(str(last.type))
  const users = input.filter((i) => (i.type === 'message' || i.type === undefined) && i.role === 'user').map((i) => textOf(i.content))
  const userText = users.filter((t) => !/^<(environment_context|user_instructions|INSTRUCTIONS)|^# AGENTS\.md/.test(t.trim())).pop() ?? ''
  // Codex groups MCP tools in {type:"namespace", name:"mcp__mnemo", tools:[…]}: offered to the brain as mcp__mnemo__<tool>.
  const toolNames = arr(body.tools)
    .filter(isObj)
    .flatMap((t) =>
      t.type === 'namespace'
        ? arr(t.tools)
            .filter(isObj)
            .map((i) => `${str(t.name)}__${str(i.name)}`)
        : [str(t.name) || str(t.type)],
    )
  return { toolNames, lastIsToolResult: isOut, toolResultText: isOut ? textOf(last.output) : '', userText }
}

function chatBrain(body: Json): BrainInput {
  const msgs = arr(body.messages).filter(isObj)
  const last = msgs[msgs.length - 1] ?? {}
  const users = msgs.filter((m) => m.role === 'user').map((m) => textOf(m.content))
  return {
    toolNames: arr(body.tools)
      .filter(isObj)
      .map((t) => (isObj(t.function) ? str(t.function.name) : str(t.name))),
    lastIsToolResult: last.role === 'tool',
    toolResultText: last.role === 'tool' ? textOf(last.content) : '',
    userText: users[users.length - 1] ?? '',
  }
}

function geminiBrain(body: Json): BrainInput {
  const contents = arr(body.contents).filter(isObj)
  const last = contents[contents.length - 1] ?? {}
  const fr = arr(last.parts)
    .filter(isObj)
    .find((p) => isObj(p.functionResponse))
  const userTexts = contents
    .filter((c) => c.role === 'user')
    .map((c) =>
      arr(c.parts)
        .filter(isObj)
        .map((p) => str(p.text))
        .join('\n'),
    )
    .filter((t) => t !== '')
  const toolNames = arr(body.tools)
    .filter(isObj)
    .flatMap((t) =>
      arr(t.functionDeclarations)
        .filter(isObj)
        .map((f) => str(f.name)),
    )
  return {
    toolNames,
    lastIsToolResult: fr !== undefined,
    toolResultText: fr !== undefined && isObj(fr.functionResponse) ? JSON.stringify(fr.functionResponse.response) : '',
    userText: userTexts[userTexts.length - 1] ?? '',
  }
}

function sse(res: ServerResponse, events: Array<[string | undefined, unknown]>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (const [type, data] of events)
    res.write(`${type === undefined ? '' : `event: ${type}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)
  res.end()
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

/** A running fake model server; `close()` stops it. */
export interface FakeModel {
  url: string
  port: number
  requests: ModelRequest[]
  /** Requests the brain answered (model calls, not token counts or probes), in order. */
  modelCalls(): ModelRequest[]
  close(): Promise<void>
}

/**
 * Starts the server on 127.0.0.1 with an ephemeral port. `word` is what the
 * shell tool writes and what the recall tool is asked for.
 */
export async function startFakeModel(word: string): Promise<FakeModel> {
  const requests: ModelRequest[] = []
  const state: BrainState = { recalled: false, waits: 0 }
  let n = 0
  const handle = (req: IncomingMessage, res: ServerResponse, raw: string): void => {
    let body: unknown
    try {
      body = raw === '' ? undefined : JSON.parse(raw)
    } catch {
      body = undefined
    }
    const b: Json = isObj(body) ? body : {}
    const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/\/+$/, '')
    const rec: ModelRequest = { api: 'other', path, raw, body }
    requests.push(rec)
    const id = ++n
    const usage = { input_tokens: Math.ceil(raw.length / 4), output_tokens: 20 }
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      json(res, 200, { input_tokens: usage.input_tokens })
      return
    }
    if (req.method === 'POST' && path === '/v1/messages') {
      rec.api = 'anthropic'
      rec.brain = anthropicBrain(b)
      const d = decide(rec.brain, word, state)
      rec.reply = d
      const content =
        d.kind === 'tool' ? [{ type: 'tool_use', id: `toolu_fake_${id}`, name: d.name, input: d.input }] : [{ type: 'text', text: d.text }]
      const stop = d.kind === 'tool' ? 'tool_use' : 'end_turn'
      const u = { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
      const message = {
        id: `msg_fake_${id}`,
        type: 'message',
        role: 'assistant',
        model: str(b.model) || 'claude-fake',
        stop_sequence: null,
      }
      if (b.stream !== true) {
        json(res, 200, { ...message, content, stop_reason: stop, usage: u })
        return
      }
      const first = content[0]!
      sse(res, [
        [
          'message_start',
          { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...u, output_tokens: 1 } } },
        ],
        [
          'content_block_start',
          {
            type: 'content_block_start',
            index: 0,
            content_block: d.kind === 'tool' ? { ...first, input: {} } : { type: 'text', text: '' },
          },
        ],
        [
          'content_block_delta',
          {
            type: 'content_block_delta',
            index: 0,
            delta:
              d.kind === 'tool'
                ? { type: 'input_json_delta', partial_json: JSON.stringify(d.input) }
                : { type: 'text_delta', text: d.text },
          },
        ],
        ['content_block_stop', { type: 'content_block_stop', index: 0 }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } }],
        ['message_stop', { type: 'message_stop' }],
      ])
      return
    }
    if (req.method === 'POST' && path.endsWith('/responses')) {
      rec.api = 'responses'
      rec.brain = responsesBrain(b)
      const d = decide(rec.brain, word, state)
      rec.reply = d
      let item: Json
      if (d.kind === 'tool') {
        const ns = arr(b.tools)
          .filter(isObj)
          .find((t) => t.type === 'namespace' && d.name.startsWith(`${str(t.name)}__`))
        const name = ns === undefined ? { name: d.name } : { namespace: str(ns.name), name: d.name.slice(str(ns.name).length + 2) }
        item = { type: 'function_call', id: `fc_${id}`, call_id: `call_fake_${id}`, ...name, arguments: JSON.stringify(d.input) }
      } else
        item = {
          type: 'message',
          id: `msg_${id}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: d.text, annotations: [] }],
        }
      const rid = `resp_fake_${id}`
      const u = {
        input_tokens: usage.input_tokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 20,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input_tokens + 20,
      }
      const ev: Array<[string, unknown]> = [
        [
          'response.created',
          { type: 'response.created', response: { id: rid, object: 'response', status: 'in_progress', model: b.model } },
        ],
        [
          'response.output_item.added',
          { type: 'response.output_item.added', output_index: 0, item: item.type === 'message' ? { ...item, content: [] } : item },
        ],
      ]
      if (d.kind === 'text')
        ev.push([
          'response.output_text.delta',
          { type: 'response.output_text.delta', output_index: 0, content_index: 0, item_id: item.id, delta: d.text },
        ])
      ev.push(['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }])
      ev.push([
        'response.completed',
        {
          type: 'response.completed',
          response: { id: rid, object: 'response', status: 'completed', model: b.model, output: [item], usage: u },
        },
      ])
      sse(res, ev)
      return
    }
    if (req.method === 'POST' && path.endsWith('/chat/completions')) {
      rec.api = 'chat'
      rec.brain = chatBrain(b)
      const d = decide(rec.brain, word, state)
      rec.reply = d
      const created = Math.floor(Date.now() / 1000)
      const model = str(b.model) || 'fake-model'
      const base = { id: `chatcmpl_fake_${id}`, created, model }
      const toolCalls =
        d.kind === 'tool'
          ? [{ index: 0, id: `call_fake_${id}`, type: 'function', function: { name: d.name, arguments: JSON.stringify(d.input) } }]
          : undefined
      const finish = d.kind === 'tool' ? 'tool_calls' : 'stop'
      const u = { prompt_tokens: usage.input_tokens, completion_tokens: 20, total_tokens: usage.input_tokens + 20 }
      if (b.stream !== true) {
        json(res, 200, {
          ...base,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: d.kind === 'text' ? d.text : null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
              finish_reason: finish,
            },
          ],
          usage: u,
        })
        return
      }
      const chunk = (delta: Json, fin: string | null = null): [undefined, unknown] => [
        undefined,
        { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: fin }] },
      ]
      const ev: Array<[string | undefined, unknown]> = [
        chunk({ role: 'assistant', content: '' }),
        toolCalls ? chunk({ tool_calls: toolCalls }) : chunk({ content: d.kind === 'text' ? d.text : '' }),
        chunk({}, finish),
      ]
      ev.push([undefined, { ...base, object: 'chat.completion.chunk', choices: [], usage: u }], [undefined, '[DONE]'])
      sse(res, ev)
      return
    }
    if (req.method === 'GET' && path.endsWith('/models')) {
      json(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'fake' }], models: [] })
      return
    }
    const g = /\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(path)
    if (req.method === 'POST' && g !== null) {
      if (g[2] === 'countTokens') {
        json(res, 200, { totalTokens: usage.input_tokens })
        return
      }
      rec.api = 'gemini'
      rec.brain = geminiBrain(b)
      const gc = isObj(b.generationConfig) ? b.generationConfig : {}
      // Gemini CLI's router and next-speaker checks ask for JSON; they get a fixed JSON answer, not the brain's.
      const d =
        gc.responseMimeType === 'application/json'
          ? { kind: 'text' as const, text: JSON.stringify({ reasoning: 'fake model', next_speaker: 'user' }) }
          : decide(rec.brain, word, state)
      if (gc.responseMimeType !== 'application/json') rec.reply = d
      else rec.api = 'other'
      const parts = d.kind === 'tool' ? [{ functionCall: { name: d.name, args: d.input } }] : [{ text: d.text }]
      const resp = {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: usage.input_tokens, candidatesTokenCount: 20, totalTokenCount: usage.input_tokens + 20 },
        modelVersion: g[1],
        responseId: `fake_${id}`,
      }
      if (g[2] === 'generateContent') {
        json(res, 200, resp)
        return
      }
      sse(res, [[undefined, resp]])
      return
    }
    json(res, 404, { error: { message: `fake model: no ${req.method ?? ''} ${path}`, type: 'not_found' } })
  }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    modelCalls: () => requests.filter((r) => r.reply !== undefined),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
