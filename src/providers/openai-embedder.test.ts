import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { MnemoError } from '../core/errors.js'
import { createOpenAiEmbedder, type OpenAiEmbedderOptions } from './openai-embedder.js'

/** One request as the fake endpoint saw it. */
interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: { model?: string; input?: string[]; dimensions?: number; encoding_format?: string }
}

type Handler = (seen: Seen, res: ServerResponse, count: number) => void

/** An OpenAI-compatible endpoint on 127.0.0.1 whose answers each test scripts. */
async function fakeEndpoint(handler: Handler): Promise<{ baseUrl: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const request: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: raw === '' ? {} : (JSON.parse(raw) as Seen['body']),
      }
      seen.push(request)
      handler(request, res, seen.length)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push(server)
  const { port } = server.address() as AddressInfo
  return { baseUrl: `http://127.0.0.1:${port}/v1`, seen, server }
}

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})

const DIM = 4

/** A deterministic, not-normalised vector for a text (so the client must normalise it). */
function vectorFor(text: string, dim = DIM): number[] {
  const v = Array.from({ length: dim }, (_, i) => ((text.charCodeAt(i % Math.max(1, text.length)) || 7) % 13) + i + 1)
  v[0] = text.length + 1
  return v
}

function normalised(v: number[]): number[] {
  const n = Math.hypot(...v)
  return v.map((x) => x / n)
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

/** A correct answer for the request, items in reverse order unless `shuffle` is false. */
function answer(seen: Seen, res: ServerResponse, options: { shuffle?: boolean; dim?: number } = {}): void {
  const data = (seen.body.input ?? []).map((text, index) => ({ object: 'embedding', index, embedding: vectorFor(text, options.dim) }))
  if (options.shuffle !== false) data.reverse()
  sendJson(res, 200, { object: 'list', model: seen.body.model, data, usage: { prompt_tokens: 1, total_tokens: 1 } })
}

/** Options with a recorded, instant sleep and a fixed jitter. */
function fastRetries(baseUrl: string, extra: Partial<OpenAiEmbedderOptions> = {}) {
  const sleeps: number[] = []
  const options: OpenAiEmbedderOptions = {
    baseUrl,
    model: 'test-embed',
    sleep: async (ms) => {
      sleeps.push(ms)
    },
    random: () => 0,
    ...extra,
  }
  return { options, sleeps }
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

function norm(v: Float32Array): number {
  return Math.hypot(...v)
}

describe('createOpenAiEmbedder', () => {
  it('batches inputs, restores order from `index`, and returns unit vectors', async () => {
    const { baseUrl, seen } = await fakeEndpoint((s, res) => answer(s, res))
    const embedder = createOpenAiEmbedder({ baseUrl, model: 'test-embed', batchSize: 2 })
    expect(embedder.spaceId).toBe('openai:test-embed:?')
    expect(embedder.dimension()).toBeUndefined()

    const texts = ['alpha', 'beta', 'gamma delta', 'epsilon', 'z']
    const vectors = await embedder.embed(texts, 'document')

    expect(seen.map((s) => s.body.input)).toEqual([['alpha', 'beta'], ['gamma delta', 'epsilon'], ['z']])
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/embeddings', body: { model: 'test-embed', encoding_format: 'float' } })
    expect(seen[0]!.headers['content-type']).toBe('application/json')
    expect(seen[0]!.body).not.toHaveProperty('dimensions')
    expect(vectors).toHaveLength(texts.length)
    texts.forEach((text, i) => {
      const expected = normalised(vectorFor(text))
      expect(Array.from(vectors[i]!)).toEqual(expected.map((x) => expect.closeTo(x, 6)))
      expect(norm(vectors[i]!)).toBeCloseTo(1, 6)
    })
    expect(embedder.dimension()).toBe(DIM)
    expect(embedder.spaceId).toBe(`openai:test-embed:${DIM}`)
  })

  it('sends `dimensions` when set and names it in spaceId from the start', async () => {
    const { baseUrl, seen } = await fakeEndpoint((s, res) => answer(s, res))
    const embedder = createOpenAiEmbedder({ baseUrl, model: 'text-embedding-3-small', dimensions: DIM })
    expect(embedder.spaceId).toBe(`openai:text-embedding-3-small:${DIM}`)
    await embedder.embed(['one'], 'query')
    expect(seen[0]!.body.dimensions).toBe(DIM)
  })

  it('prepends the query or document prefix', async () => {
    const { baseUrl, seen } = await fakeEndpoint((s, res) => answer(s, res))
    const embedder = createOpenAiEmbedder({
      baseUrl,
      model: 'nomic-embed-text',
      queryPrefix: 'search_query: ',
      documentPrefix: 'search_document: ',
    })
    await embedder.embed(['where is auth'], 'query')
    await embedder.embed(['auth lives in src/auth'], 'document')
    await createOpenAiEmbedder({ baseUrl, model: 'm' }).embed(['plain'], 'query')
    expect(seen.map((s) => s.body.input)).toEqual([['search_query: where is auth'], ['search_document: auth lives in src/auth'], ['plain']])
  })

  it('embeds nothing without a request', async () => {
    const { baseUrl, seen } = await fakeEndpoint((s, res) => answer(s, res))
    expect(await createOpenAiEmbedder({ baseUrl, model: 'm' }).embed([], 'query')).toEqual([])
    expect(seen).toHaveLength(0)
  })

  it('sends a Bearer token only when apiKey is set', async () => {
    const { baseUrl, seen } = await fakeEndpoint((s, res) => answer(s, res))
    await createOpenAiEmbedder({ baseUrl, model: 'm', apiKey: 'sk-test-123' }).embed(['a'], 'query')
    await createOpenAiEmbedder({ baseUrl, model: 'm' }).embed(['a'], 'query')
    await createOpenAiEmbedder({ baseUrl, model: 'm', apiKey: '' }).embed(['a'], 'query')
    expect(seen.map((s) => s.headers.authorization)).toEqual(['Bearer sk-test-123', undefined, undefined])
  })

  it('retries a 429 after the Retry-After delay, then succeeds', async () => {
    const { baseUrl, seen } = await fakeEndpoint((s, res, n) => {
      if (n === 1) sendJson(res, 429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '2' })
      else answer(s, res)
    })
    const { options, sleeps } = fastRetries(baseUrl)
    const vectors = await createOpenAiEmbedder(options).embed(['a', 'b'], 'document')
    expect(seen).toHaveLength(2)
    expect(sleeps).toEqual([2000])
    expect(vectors).toHaveLength(2)
  })

  it('caps a long Retry-After at retryMaxMs', async () => {
    const { baseUrl } = await fakeEndpoint((s, res, n) => {
      if (n === 1) sendJson(res, 503, 'busy', { 'retry-after': '3600' })
      else answer(s, res)
    })
    const { options, sleeps } = fastRetries(baseUrl, { retryMaxMs: 5000 })
    await createOpenAiEmbedder(options).embed(['a'], 'document')
    expect(sleeps).toEqual([5000])
  })

  it('gives up on 500 after maxRetries with PROVIDER_FAILED naming path, status and body', async () => {
    const { baseUrl, seen } = await fakeEndpoint((_s, res) => sendJson(res, 500, `upstream exploded ${'x'.repeat(500)}`))
    const { options, sleeps } = fastRetries(baseUrl, { maxRetries: 2, retryBaseMs: 100 })
    const error = await failure(createOpenAiEmbedder(options).embed(['a'], 'document'))
    expect(seen).toHaveLength(3)
    // exponential backoff with jitter factor 0.5 (random() = 0)
    expect(sleeps).toEqual([50, 100])
    expect(error.details).toEqual({ provider: 'openai', status: 500 })
    expect(error.message).toContain('openai')
    expect(error.message).toContain('/v1/embeddings')
    expect(error.message).toContain('500')
    expect(error.message).toContain('upstream exploded')
    expect(error.message.length).toBeLessThan(320)
    expect(error.cause).toBeInstanceOf(Error)
  })

  it('does not retry a 400, and keeps the vendor message as the cause', async () => {
    const { baseUrl, seen } = await fakeEndpoint((_s, res) =>
      sendJson(res, 400, { error: { message: "'$.input' is invalid", type: 'invalid_request_error' } }),
    )
    const { options, sleeps } = fastRetries(baseUrl)
    const error = await failure(createOpenAiEmbedder(options).embed([''], 'document'))
    expect(seen).toHaveLength(1)
    expect(sleeps).toEqual([])
    expect(error.details).toEqual({ provider: 'openai', status: 400 })
    expect((error.cause as Error).message).toBe("'$.input' is invalid")
  })

  it('times out a server that never answers, retrying, then PROVIDER_FAILED', async () => {
    const { baseUrl, seen } = await fakeEndpoint(() => {
      // never respond
    })
    const { options, sleeps } = fastRetries(baseUrl, { timeoutMs: 400, maxRetries: 1 })
    const started = Date.now()
    const error = await failure(createOpenAiEmbedder(options).embed(['a'], 'query'))
    expect(Date.now() - started).toBeLessThan(5000)
    expect(seen).toHaveLength(2)
    expect(sleeps).toHaveLength(1)
    expect(error.message).toContain('timed out after 400 ms')
    expect(error.details).toEqual({ provider: 'openai' })
  })

  it('times out a body that never finishes', async () => {
    const { baseUrl } = await fakeEndpoint((_s, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"data": [')
    })
    const { options } = fastRetries(baseUrl, { timeoutMs: 400, maxRetries: 0 })
    const error = await failure(createOpenAiEmbedder(options).embed(['a'], 'query'))
    expect(error.message).toContain('timed out')
    expect(error.details).toEqual({ provider: 'openai', status: 200 })
  })

  it('retries a refused connection, then PROVIDER_FAILED with the network error as cause', async () => {
    const { baseUrl, server } = await fakeEndpoint((s, res) => answer(s, res))
    servers.splice(servers.indexOf(server), 1)
    await new Promise<void>((resolve) => server.close(() => resolve()))
    const { options, sleeps } = fastRetries(baseUrl, { maxRetries: 2 })
    const error = await failure(createOpenAiEmbedder(options).embed(['a'], 'query'))
    expect(sleeps).toHaveLength(2)
    expect(error.details).toEqual({ provider: 'openai' })
    expect(error.message).toContain('/v1/embeddings failed')
    expect(error.cause).toBeInstanceOf(Error)
  })

  describe('rejects malformed responses without retrying', () => {
    const cases: [name: string, handler: Handler, inMessage?: string][] = [
      ['a body that is not JSON', (_s, res) => sendJson(res, 200, '{"data": [oops'), 'not JSON'],
      ['JSON without `data`', (_s, res) => sendJson(res, 200, { object: 'list' }), 'data:'],
      [
        'an embedding that is not numbers',
        (s, res) => sendJson(res, 200, { data: (s.body.input ?? []).map((_, index) => ({ index, embedding: ['x', 'y'] })) }),
      ],
      [
        'base64 instead of floats',
        (s, res) => sendJson(res, 200, { data: (s.body.input ?? []).map((_, index) => ({ index, embedding: 'AAAA' })) }),
      ],
      ['fewer items than inputs', (s, res) => sendJson(res, 200, { data: [{ index: 0, embedding: vectorFor(s.body.input![0]!) }] })],
      [
        'a repeated index',
        (s, res) => sendJson(res, 200, { data: (s.body.input ?? []).map((t) => ({ index: 0, embedding: vectorFor(t) })) }),
      ],
      [
        'an index out of range',
        (s, res) => sendJson(res, 200, { data: (s.body.input ?? []).map((t, i) => ({ index: i + 5, embedding: vectorFor(t) })) }),
      ],
      [
        'inconsistent dimensions',
        (s, res) =>
          sendJson(res, 200, {
            data: (s.body.input ?? []).map((t, index) => ({ index, embedding: vectorFor(t, index === 1 ? DIM - 1 : DIM) })),
          }),
      ],
      ['an empty embedding', (s, res) => sendJson(res, 200, { data: (s.body.input ?? []).map((_, index) => ({ index, embedding: [] })) })],
    ]
    for (const [name, handler, inMessage] of cases) {
      it(name, async () => {
        const { baseUrl, seen } = await fakeEndpoint(handler)
        const { options, sleeps } = fastRetries(baseUrl)
        const error = await failure(createOpenAiEmbedder(options).embed(['first', 'second'], 'document'))
        expect(error.details).toEqual({ provider: 'openai', status: 200 })
        expect(error.message).toContain('/v1/embeddings')
        if (inMessage !== undefined) expect(error.message).toContain(inMessage)
        expect(seen).toHaveLength(1)
        expect(sleeps).toEqual([])
      })
    }
  })

  it('rejects a dimension other than the requested one', async () => {
    const { baseUrl } = await fakeEndpoint((s, res) => answer(s, res, { dim: DIM }))
    const error = await failure(createOpenAiEmbedder({ baseUrl, model: 'm', dimensions: 8 }).embed(['a'], 'query'))
    expect(error.message).toContain(`dimension ${DIM}`)
    expect(error.message).toContain('expected 8')
  })

  it('rejects a later batch whose dimension changed', async () => {
    const { baseUrl } = await fakeEndpoint((s, res, n) => answer(s, res, { dim: n === 1 ? DIM : DIM + 2 }))
    const embedder = createOpenAiEmbedder({ baseUrl, model: 'm', batchSize: 1 })
    const error = await failure(embedder.embed(['a', 'b'], 'document'))
    expect(error.message).toContain(`expected ${DIM}`)
    expect(embedder.spaceId).toBe(`openai:m:${DIM}`)
  })

  it('fails embed() after close()', async () => {
    const { baseUrl, seen } = await fakeEndpoint((s, res) => answer(s, res))
    const embedder = createOpenAiEmbedder({ baseUrl, model: 'm' })
    await embedder.close?.()
    await failure(embedder.embed(['a'], 'query'))
    expect(seen).toHaveLength(0)
  })

  it('rejects bad options up front', () => {
    expect(() => createOpenAiEmbedder({ model: 'm', baseUrl: 'not a url' })).toThrow(/baseUrl/)
    expect(() => createOpenAiEmbedder({ model: 'm', baseUrl: 'file:///tmp' })).toThrow(/baseUrl/)
    expect(() => createOpenAiEmbedder({ model: ' ' })).toThrow(/model/)
    expect(() => createOpenAiEmbedder({ model: 'm', batchSize: 0 })).toThrow(/batchSize/)
    expect(() => createOpenAiEmbedder({ model: 'm', dimensions: 1.5 })).toThrow(/dimensions/)
    expect(() => createOpenAiEmbedder({ model: 'm', maxRetries: -1 })).toThrow(/maxRetries/)
    expect(() => createOpenAiEmbedder({ model: 'm', timeoutMs: 0 })).toThrow(/timeoutMs/)
  })

  it('defaults to the OpenAI API root', async () => {
    const urls: string[] = []
    const fakeFetch: typeof fetch = async (input) => {
      urls.push(String(input))
      return new Response(JSON.stringify({ data: [{ index: 0, embedding: [3, 4] }] }), { status: 200 })
    }
    const [v] = await createOpenAiEmbedder({ model: 'm', fetch: fakeFetch }).embed(['a'], 'query')
    expect(urls).toEqual(['https://api.openai.com/v1/embeddings'])
    expect(Array.from(v!)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)])
  })
})
