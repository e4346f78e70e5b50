import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { MnemoError } from '../core/errors.js'
import { type AnthropicLlmOptions, createAnthropicLlm } from './anthropic-llm.js'
import { usageOfError } from './llm.js'
import { createTokenBudget, type TokenBudgetState } from './llm-budget.js'
import { createOpenAiCompatibleLlm, type OpenAiCompatibleLlmOptions } from './openai-llm.js'
import type { ParsedJson } from '../testing/json.js'

/** One request as the fake endpoint saw it. */
interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: ParsedJson
}

type Handler = (seen: Seen, res: ServerResponse, count: number) => void

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})

/** A chat endpoint on 127.0.0.1 whose answers each test scripts. */
async function fakeEndpoint(handler: Handler): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const request: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: raw === '' ? {} : JSON.parse(raw) }
      seen.push(request)
      handler(request, res, seen.length)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push(server)
  const { port } = server.address() as AddressInfo
  return { origin: `http://127.0.0.1:${port}`, seen }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

/** An OpenAI chat completion whose message content is `content`. */
function chatAnswer(
  res: ServerResponse,
  content: string,
  usage: { prompt_tokens: number; completion_tokens: number } | null = { prompt_tokens: 30, completion_tokens: 20 },
  finish = 'stop',
): void {
  sendJson(res, 200, {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }],
    ...(usage === null ? {} : { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
  })
}

/** An Anthropic message whose only block is a tool_use of `name` with `input`. */
function toolAnswer(res: ServerResponse, name: string, input: unknown, id = 'toolu_01'): void {
  sendJson(res, 200, {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'tool_use', id, name, input }],
    stop_reason: 'tool_use',
    usage: { input_tokens: 40, output_tokens: 15 },
  })
}

const Note = z.object({
  title: z.string().min(1).max(40).describe('a short title'),
  tags: z.array(z.string()).max(5),
  score: z.number().min(0).max(1),
})
const GOOD = { title: 'Use zod', tags: ['config'], score: 0.9 }
const request = { system: 'Extract a note.', user: 'We chose zod for config.', schema: Note, schemaName: 'note', maxTokens: 300 }

/** Options with a recorded, instant sleep and a fixed jitter. */
function openAi(origin: string, extra: Partial<OpenAiCompatibleLlmOptions> = {}) {
  const sleeps: number[] = []
  const options: OpenAiCompatibleLlmOptions = {
    baseUrl: `${origin}/v1`,
    model: 'test-chat',
    sleep: async (ms) => {
      sleeps.push(ms)
    },
    random: () => 0,
    ...extra,
  }
  return { llm: createOpenAiCompatibleLlm(options), sleeps }
}

function anthropic(origin: string, extra: Partial<AnthropicLlmOptions> = {}) {
  const sleeps: number[] = []
  const options: AnthropicLlmOptions = {
    baseUrl: origin,
    apiKey: 'sk-ant-test-key',
    model: 'claude-test',
    sleep: async (ms) => {
      sleeps.push(ms)
    },
    random: () => 0,
    ...extra,
  }
  return { llm: createAnthropicLlm(options), sleeps }
}

async function failure(promise: Promise<unknown>): Promise<MnemoError<'PROVIDER_FAILED'>> {
  try {
    await promise
  } catch (error) {
    if (MnemoError.is(error, 'PROVIDER_FAILED')) return error
    throw error
  }
  throw new Error('expected PROVIDER_FAILED, but the call succeeded')
}

describe('createOpenAiCompatibleLlm', () => {
  it('sends a strict json_schema request and returns the validated answer with usage', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res) => chatAnswer(res, JSON.stringify(GOOD)))
    const { llm } = openAi(origin, { apiKey: 'sk-test-123' })
    const result = await llm.complete(request)

    expect(result).toEqual({ value: GOOD, usage: { inputTokens: 30, outputTokens: 20 } })
    expect(seen).toHaveLength(1)
    const s = seen[0]!
    expect(s).toMatchObject({ method: 'POST', url: '/v1/chat/completions' })
    expect(s.headers.authorization).toBe('Bearer sk-test-123')
    expect(s.headers['content-type']).toBe('application/json')
    expect(s.body).toMatchObject({
      model: 'test-chat',
      max_tokens: 300,
      messages: [
        { role: 'system', content: 'Extract a note.' },
        { role: 'user', content: 'We chose zod for config.' },
      ],
    })
    expect(s.body).not.toHaveProperty('temperature')
    const format = s.body.response_format
    expect(format.type).toBe('json_schema')
    expect(format.json_schema).toMatchObject({ name: 'note', strict: true })
    const schema = format.json_schema.schema
    expect(schema).not.toHaveProperty('$schema')
    expect(schema).toMatchObject({ type: 'object', required: ['title', 'tags', 'score'], additionalProperties: false })
    // String length limits are outside strict mode's subset: moved into the description.
    expect(schema.properties.title).toEqual({ type: 'string', description: 'a short title (1–40 characters)' })
    expect(schema.properties.score).toMatchObject({ minimum: 0, maximum: 1 })
    expect(schema.properties.tags).toMatchObject({ type: 'array', maxItems: 5 })
  })

  it('sends no Authorization header without a key, and max_completion_tokens and temperature when asked', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res) => chatAnswer(res, JSON.stringify(GOOD)))
    await openAi(origin, { maxTokensParam: 'max_completion_tokens', temperature: 0 }).llm.complete(request)
    expect(seen[0]!.headers.authorization).toBeUndefined()
    expect(seen[0]!.body).toMatchObject({ max_completion_tokens: 300, temperature: 0 })
    expect(seen[0]!.body).not.toHaveProperty('max_tokens')
  })

  it('asks again once, with its answer and the parse error, after invalid JSON', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res, n) =>
      chatAnswer(res, n === 1 ? '{"title": "Use zod", tags: oops' : JSON.stringify(GOOD)),
    )
    const { llm, sleeps } = openAi(origin)
    const result = await llm.complete(request)

    expect(result.value).toEqual(GOOD)
    expect(result.usage).toEqual({ inputTokens: 60, outputTokens: 40 })
    expect(seen).toHaveLength(2)
    expect(sleeps).toEqual([])
    const messages = seen[1]!.body.messages as { role: string; content: string }[]
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user'])
    expect(messages[2]!.content).toBe('{"title": "Use zod", tags: oops')
    expect(messages[3]!.content).toContain('not valid JSON')
    expect(messages[3]!.content).toContain('note')
  })

  it('asks again with the validation error, then fails with PROVIDER_FAILED and the usage spent', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res) => chatAnswer(res, JSON.stringify({ title: '', tags: [], score: 3 })))
    const { llm } = openAi(origin)
    const error = await failure(llm.complete(request))

    expect(seen).toHaveLength(2)
    const correction = (seen[1]!.body.messages as { content: string }[])[3]!.content
    expect(correction).toContain('title:')
    expect(correction).toContain('score:')
    expect(error.details).toEqual({ provider: 'openai', status: 200 })
    expect(error.message).toContain('/v1/chat/completions')
    expect(error.message).toContain('does not match the schema')
    expect(usageOfError(error)).toEqual({ inputTokens: 60, outputTokens: 40 })
  })

  it('reads JSON inside a code fence or after a think block, and estimates usage the server does not report', async () => {
    const { origin } = await fakeEndpoint((_s, res, n) =>
      chatAnswer(res, n === 1 ? `\`\`\`json\n${JSON.stringify(GOOD)}\n\`\`\`` : `<think>hmm</think>\n${JSON.stringify(GOOD)}`, null),
    )
    const { llm } = openAi(origin)
    const first = await llm.complete(request)
    expect(first.value).toEqual(GOOD)
    expect(first.usage.inputTokens).toBeGreaterThan(0)
    expect(first.usage.outputTokens).toBeGreaterThan(0)
    expect((await llm.complete(request)).value).toEqual(GOOD)
  })

  it('wraps a schema whose root is not an object, and unwraps the answer', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res) => chatAnswer(res, JSON.stringify({ value: ['a', 'b'] })))
    const { llm } = openAi(origin)
    const result = await llm.complete({ ...request, schema: z.array(z.string()), schemaName: 'tag list!' })
    expect(result.value).toEqual(['a', 'b'])
    expect(seen[0]!.body.response_format.json_schema).toMatchObject({
      name: 'tag_list_',
      schema: { type: 'object', required: ['value'], properties: { value: { type: 'array', items: { type: 'string' } } } },
    })
  })

  it('retries a 429 after its Retry-After delay, then succeeds', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res, n) => {
      if (n === 1) sendJson(res, 429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '2' })
      else chatAnswer(res, JSON.stringify(GOOD))
    })
    const { llm, sleeps } = openAi(origin)
    const result = await llm.complete(request)
    expect(result.value).toEqual(GOOD)
    expect(seen).toHaveLength(2)
    expect(sleeps).toEqual([2000])
  })

  it('gives up on 500 after maxRetries with PROVIDER_FAILED naming provider, path, status and body, never the key', async () => {
    const key = 'sk-secret-abcdef'
    const { origin, seen } = await fakeEndpoint((s, res) =>
      sendJson(res, 500, `upstream exploded for ${String(s.headers.authorization)} ${'x'.repeat(400)}`),
    )
    const { llm, sleeps } = openAi(origin, { apiKey: key, maxRetries: 2, retryBaseMs: 100 })
    const error = await failure(llm.complete(request))

    expect(seen).toHaveLength(3)
    expect(sleeps).toEqual([50, 100]) // exponential, jitter factor 0.5 with random() = 0
    expect(error.details).toEqual({ provider: 'openai', status: 500 })
    expect(error.message).toContain('openai')
    expect(error.message).toContain('POST /v1/chat/completions')
    expect(error.message).toContain('HTTP 500')
    expect(error.message).toContain('upstream exploded')
    expect(error.message).not.toContain(key)
    expect(String((error.cause as Error).message)).not.toContain(key)
    expect(error.message.length).toBeLessThan(360)
  })

  it('does not retry a 401', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res) => sendJson(res, 401, { error: { message: 'Incorrect API key provided' } }))
    const { llm, sleeps } = openAi(origin, { apiKey: 'sk-wrong-key' })
    const error = await failure(llm.complete(request))
    expect(seen).toHaveLength(1)
    expect(sleeps).toEqual([])
    expect(error.details).toEqual({ provider: 'openai', status: 401 })
    expect((error.cause as Error).message).toBe('Incorrect API key provided')
  })

  it('falls back to json_object with the schema in the prompt when json_schema gets a 400, and remembers it', async () => {
    const { origin, seen } = await fakeEndpoint((s, res) => {
      if (s.body.response_format?.type === 'json_schema')
        sendJson(res, 400, { error: { message: "response_format 'json_schema' is not supported" } })
      else chatAnswer(res, JSON.stringify(GOOD))
    })
    const { llm, sleeps } = openAi(origin, { provider: 'ollama' })
    expect((await llm.complete(request)).value).toEqual(GOOD)
    expect(seen.map((s) => s.body.response_format.type)).toEqual(['json_schema', 'json_object'])
    expect(sleeps).toEqual([])
    const system = (seen[1]!.body.messages as { role: string; content: string }[])[0]!.content
    expect(system).toContain('Extract a note.')
    expect(system).toContain('"additionalProperties":false')
    expect(system).toContain('"title"')

    // The same instance goes straight to json_object; a new one tries json_schema again.
    await llm.complete(request)
    expect(seen.map((s) => s.body.response_format.type)).toEqual(['json_schema', 'json_object', 'json_object'])
    await openAi(origin).llm.complete(request)
    expect(seen.map((s) => s.body.response_format.type).slice(3)).toEqual(['json_schema', 'json_object'])
  })

  it('does not remember json_object when the fallback fails too (the 400 was about something else)', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res) => sendJson(res, 400, { error: { message: 'context length exceeded' } }))
    const { llm } = openAi(origin, { provider: 'ollama' })
    const error = await failure(llm.complete(request))
    expect(error.details).toEqual({ provider: 'ollama', status: 400 })
    expect(error.message).toContain('context length exceeded')
    await failure(llm.complete(request))
    expect(seen.map((s) => s.body.response_format.type)).toEqual(['json_schema', 'json_object', 'json_schema', 'json_object'])
  })

  it('times out a server that never answers, retrying, then PROVIDER_FAILED', async () => {
    const { origin, seen } = await fakeEndpoint(() => {
      // never respond
    })
    const { llm, sleeps } = openAi(origin, { timeoutMs: 400, maxRetries: 1 })
    const started = Date.now()
    const error = await failure(llm.complete(request))
    expect(Date.now() - started).toBeLessThan(5000)
    expect(seen).toHaveLength(2)
    expect(sleeps).toHaveLength(1)
    expect(error.message).toContain('timed out after 400 ms')
    expect(error.details).toEqual({ provider: 'openai' })
  })

  it('fails at once on a refusal or an unexpected response shape', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res, n) => {
      if (n === 1) sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' } }] })
      else sendJson(res, 200, { object: 'list' })
    })
    const { llm } = openAi(origin)
    expect((await failure(llm.complete(request))).message).toContain('refusal: I cannot help with that.')
    expect((await failure(llm.complete(request))).message).toContain('unexpected shape')
    expect(seen).toHaveLength(2)
  })

  it('tells the model its answer was cut when it hit the token limit', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res, n) =>
      chatAnswer(res, n === 1 ? '{"title": "Use z' : JSON.stringify(GOOD), undefined, n === 1 ? 'length' : 'stop'),
    )
    const { llm } = openAi(origin)
    expect((await llm.complete(request)).value).toEqual(GOOD)
    expect((seen[1]!.body.messages as { content: string }[])[3]!.content).toContain('output-token limit')
  })

  it('rejects bad options up front', () => {
    expect(() => createOpenAiCompatibleLlm({ baseUrl: 'not a url', model: 'm' })).toThrow(/baseUrl/)
    expect(() => createOpenAiCompatibleLlm({ baseUrl: 'file:///tmp', model: 'm' })).toThrow(/baseUrl/)
    expect(() => createOpenAiCompatibleLlm({ baseUrl: 'http://x/v1', model: ' ' })).toThrow(/model/)
    expect(() => createOpenAiCompatibleLlm({ baseUrl: 'http://x/v1', model: 'm', timeoutMs: 0 })).toThrow(/timeoutMs/)
    expect(() => createOpenAiCompatibleLlm({ baseUrl: 'http://x/v1', model: 'm', maxRetries: -1 })).toThrow(/maxRetries/)
    expect(() => createAnthropicLlm({ apiKey: '', model: 'm' })).toThrow(/apiKey/)
  })
})

describe('createAnthropicLlm', () => {
  it('forces one tool whose input_schema is the schema, and returns its input', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res) => toolAnswer(res, 'note', GOOD))
    const { llm } = anthropic(origin)
    const result = await llm.complete(request)

    expect(result).toEqual({ value: GOOD, usage: { inputTokens: 40, outputTokens: 15 } })
    expect(llm.provider).toBe('anthropic')
    const s = seen[0]!
    expect(s).toMatchObject({ method: 'POST', url: '/v1/messages' })
    expect(s.headers['x-api-key']).toBe('sk-ant-test-key')
    expect(s.headers['anthropic-version']).toBe('2023-06-01')
    expect(s.headers['content-type']).toBe('application/json')
    expect(s.headers.authorization).toBeUndefined()
    expect(s.body).toMatchObject({
      model: 'claude-test',
      max_tokens: 300,
      system: 'Extract a note.',
      messages: [{ role: 'user', content: 'We chose zod for config.' }],
      tool_choice: { type: 'tool', name: 'note' },
    })
    expect(s.body.tools).toHaveLength(1)
    expect(s.body.tools[0]).toMatchObject({ name: 'note', input_schema: { type: 'object', required: ['title', 'tags', 'score'] } })
    // Anthropic gets the full schema, length limits included.
    expect(s.body.tools[0].input_schema.properties.title).toMatchObject({ minLength: 1, maxLength: 40 })
    expect(s.body.tools[0].input_schema).not.toHaveProperty('$schema')
  })

  it('returns an invalid tool input as an error tool_result and asks once more', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res, n) =>
      toolAnswer(res, 'note', n === 1 ? { title: 'x', tags: 'config', score: 0.5 } : GOOD, `toolu_0${n}`),
    )
    const { llm } = anthropic(origin)
    const result = await llm.complete(request)
    expect(result.value).toEqual(GOOD)
    expect(result.usage).toEqual({ inputTokens: 80, outputTokens: 30 })
    const messages = seen[1]!.body.messages
    expect(messages).toHaveLength(3)
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_01', name: 'note', input: { title: 'x', tags: 'config', score: 0.5 } }],
    })
    expect(messages[2].role).toBe('user')
    expect(messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_01', is_error: true, content: expect.stringContaining('tags:') },
    ])
  })

  it('asks again when the model answers with text instead of the tool', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res, n) => {
      if (n === 1)
        sendJson(res, 200, {
          content: [{ type: 'text', text: 'Sure! Here is the note.' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 10, output_tokens: 5 },
        })
      else toolAnswer(res, 'note', GOOD)
    })
    const { llm } = anthropic(origin)
    expect((await llm.complete(request)).value).toEqual(GOOD)
    const messages = seen[1]!.body.messages
    expect(messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Sure! Here is the note.' }] })
    expect(messages[2]).toEqual({ role: 'user', content: expect.stringContaining('did not call the note tool') })
  })

  it('retries a 529 overload, honouring retry-after, and keeps the key out of errors', async () => {
    const { origin, seen } = await fakeEndpoint((s, res, n) => {
      if (n === 1) sendJson(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { 'retry-after': '1' })
      else if (n === 2) toolAnswer(res, 'note', GOOD)
      else
        sendJson(res, 403, {
          type: 'error',
          error: { type: 'permission_error', message: `key ${String(s.headers['x-api-key'])} may not use this model` },
        })
    })
    const { llm, sleeps } = anthropic(origin)
    expect((await llm.complete(request)).value).toEqual(GOOD)
    expect(sleeps).toEqual([1000])
    const error = await failure(llm.complete(request))
    expect(seen).toHaveLength(3)
    expect(error.details).toEqual({ provider: 'anthropic', status: 403 })
    expect(error.message).toContain('POST /v1/messages')
    expect(error.message).not.toContain('sk-ant-test-key')
    expect((error.cause as Error).message).not.toContain('sk-ant-test-key')
  })
})

describe('createTokenBudget', () => {
  const DAY = 86_400_000
  const NOON = Date.parse('2025-06-14T12:00:00Z')

  it('lets calls through until the day is spent, then refuses before any request', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res) => chatAnswer(res, JSON.stringify(GOOD))) // 50 tokens a call
    let now = NOON
    const budget = createTokenBudget({ perDay: 100, now: () => now })
    const llm = budget.wrap(openAi(origin).llm)
    expect(llm.provider).toBe('openai')

    await llm.complete(request)
    await llm.complete(request)
    const error = await failure(llm.complete(request))
    expect(seen).toHaveLength(2)
    expect(error.message).toBe('daily token budget of 100 exhausted')
    expect(error.details).toEqual({ provider: 'openai' })
    expect(error.hint).toContain('2025-06-14')
    expect(await budget.state()).toEqual({ day: '2025-06-14', used: 100 })
    expect(await budget.remaining()).toBe(0)

    // A new UTC day, a new budget.
    now += DAY
    await llm.complete(request)
    expect(seen).toHaveLength(3)
    expect(await budget.state()).toEqual({ day: '2025-06-15', used: 50 })
  })

  it('loads and saves its state through persist, and counts the tokens of failed calls', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res, n) => chatAnswer(res, n <= 2 ? 'no json here' : JSON.stringify(GOOD)))
    const saved: TokenBudgetState[] = []
    const budget = createTokenBudget({
      perDay: 1000,
      now: () => NOON,
      persist: { load: async () => ({ day: '2025-06-14', used: 850 }), save: (s) => void saved.push(s) },
    })
    const llm = budget.wrap(openAi(origin).llm)
    await failure(llm.complete(request)) // two invalid answers: 100 tokens
    expect(saved).toEqual([{ day: '2025-06-14', used: 950 }])
    await llm.complete(request)
    expect(saved.at(-1)).toEqual({ day: '2025-06-14', used: 1000 })
    await failure(llm.complete(request))
    expect(seen).toHaveLength(3)
  })

  it('ignores a saved state of an earlier day, and a budget of 0 refuses everything', async () => {
    const { origin, seen } = await fakeEndpoint((_s, res) => chatAnswer(res, JSON.stringify(GOOD)))
    const budget = createTokenBudget({
      perDay: 60,
      now: () => NOON,
      persist: { load: () => ({ day: '2025-06-13', used: 5000 }), save: () => {} },
    })
    await budget.wrap(openAi(origin).llm).complete(request)
    expect(await budget.state()).toEqual({ day: '2025-06-14', used: 50 })
    const error = await failure(createTokenBudget({ perDay: 0 }).wrap(openAi(origin).llm).complete(request))
    expect(error.message).toBe('daily token budget of 0 exhausted')
    expect(seen).toHaveLength(1)
    expect(() => createTokenBudget({ perDay: -1 })).toThrow(/perDay/)
  })
})
