/**
 * An {@link Embedder} for any OpenAI-compatible `/embeddings` endpoint:
 * OpenAI itself, Ollama (`http://localhost:11434/v1`), vLLM, LM Studio and
 * the like. Inputs are sent in batches; each request has its own timeout and
 * is retried with exponential backoff on network errors, 429 and 5xx.
 */
import { z } from 'zod'
import { MnemoError } from '../core/errors.js'
import { normalizeInPlace, type Embedder } from './embedder.js'
import { errorText, parseRetryAfter, snippet, vendorMessage } from './http-errors.js'

/** Options of {@link createOpenAiEmbedder}. */
export interface OpenAiEmbedderOptions {
  /** API root without the `/embeddings` suffix (default `https://api.openai.com/v1`; Ollama: `http://localhost:11434/v1`). */
  baseUrl?: string
  /** Sent as `Authorization: Bearer <apiKey>`; no header at all when absent or empty (local servers). */
  apiKey?: string
  /** Model name as the endpoint knows it (`text-embedding-3-small`, `nomic-embed-text`). */
  model: string
  /** Requested vector length, for models that can shorten their output (`text-embedding-3-*`); sent only when set, and then enforced on the response. */
  dimensions?: number
  /** Prepended to every query text (default none; `search_query: ` for nomic-embed-text). */
  queryPrefix?: string
  /** Prepended to every stored text (default none; `search_document: ` for nomic-embed-text). */
  documentPrefix?: string
  /** Most inputs per request (default 64). */
  batchSize?: number
  /** Time limit of one request, from sending to the end of the response body, in milliseconds (default 15 000). */
  timeoutMs?: number
  /** Retries after the first attempt of a request, on network errors, timeouts, 429 and 5xx (default 3, so at most 4 attempts). */
  maxRetries?: number
  /** First backoff delay in milliseconds (default 500); attempt n waits about `retryBaseMs * 2^n`, with jitter. */
  retryBaseMs?: number
  /** Cap on one backoff delay, and on a server's `Retry-After`, in milliseconds (default 20 000). */
  retryMaxMs?: number
  /** The fetch implementation (default the global `fetch`). */
  fetch?: typeof fetch
  /** Waits between retries (default a real timer); tests inject a recorder. */
  sleep?: (ms: number) => Promise<void>
  /** Source of jitter in [0, 1) (default `Math.random`). */
  random?: () => number
}

const PROVIDER = 'openai'

const responseSchema = z.object({
  data: z.array(
    z.object({
      embedding: z.array(z.number()),
      index: z.number().int().nonnegative(),
    }),
  ),
})

/** Why one attempt failed, and whether another may succeed. */
interface AttemptFailure {
  error: MnemoError<'PROVIDER_FAILED'>
  retryable: boolean
  /** Delay the server asked for (`Retry-After`), in milliseconds. */
  retryAfterMs?: number
}

/**
 * Creates an embedder that POSTs to `${baseUrl}/embeddings` with
 * `{ model, input: string[], dimensions?, encoding_format: 'float' }`.
 *
 * - `embed(texts, kind)` prepends `queryPrefix` or `documentPrefix`, splits the texts of `batchSize`, sends them one after
 *   another, and returns one L2-normalised `Float32Array` per text, in input
 *   order (items are placed by the response's `index`, not its order).
 * - `spaceId` is `openai:<model>:<dimension>`; when `dimensions` is not set
 *   the dimension is learnt from the first response, and until then the id
 *   ends in `?`. Every later response must have that same dimension.
 * - Retries: network errors, timeouts, 429 and 5xx are retried up to
 *   `maxRetries` times, waiting `min(retryMaxMs, retryBaseMs * 2^n)` scaled
 *   by a jitter in [0.5, 1), or the server's `Retry-After` (capped at
 *   `retryMaxMs`) when it sends one. Other 4xx, and a 2xx whose body is
 *   malformed, fail at once.
 * - `close` aborts requests in flight; `embed` fails after it.
 *
 * @throws {MnemoError} `PROVIDER_FAILED` with `details: { provider: 'openai', status? }` —
 *   `status` is the last HTTP status when there was one; the message names the
 *   URL path, the status and the first 200 characters of the response body;
 *   `cause` holds the underlying error (network error, vendor error text, or
 *   the validation error for a malformed response). Invalid options throw
 *   `PROVIDER_FAILED` from this function itself.
 */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const baseUrl = (options.baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '')
  const url = `${baseUrl}/embeddings`
  const model = options.model
  const requestedDimensions = options.dimensions
  const batchSize = options.batchSize ?? 64
  const timeoutMs = options.timeoutMs ?? 15_000
  const maxRetries = options.maxRetries ?? 3
  const retryBaseMs = options.retryBaseMs ?? 500
  const retryMaxMs = options.retryMaxMs ?? 20_000
  const doFetch = options.fetch ?? globalThis.fetch
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const random = options.random ?? Math.random

  const badOption = (message: string): MnemoError<'PROVIDER_FAILED'> =>
    new MnemoError('PROVIDER_FAILED', `openai embedder: ${message}`, { details: { provider: PROVIDER } })
  let path: string
  try {
    const parsedUrl = new URL(url)
    if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') throw new Error('not http(s)')
    path = parsedUrl.pathname
  } catch {
    throw badOption(`baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`)
  }
  if (model.trim() === '') throw badOption('model must not be empty')
  if (!Number.isInteger(batchSize) || batchSize < 1) throw badOption(`batchSize must be a positive integer, got ${batchSize}`)
  if (!(timeoutMs > 0)) throw badOption(`timeoutMs must be positive, got ${timeoutMs}`)
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw badOption(`maxRetries must be a non-negative integer, got ${maxRetries}`)
  if (requestedDimensions !== undefined && (!Number.isInteger(requestedDimensions) || requestedDimensions < 1)) {
    throw badOption(`dimensions must be a positive integer, got ${requestedDimensions}`)
  }

  let dimension: number | undefined = requestedDimensions
  const inFlight = new Set<AbortController>()
  let closed = false

  const fail = (message: string, status: number | undefined, cause: unknown): MnemoError<'PROVIDER_FAILED'> =>
    new MnemoError('PROVIDER_FAILED', `openai embedder: POST ${path} ${message}`, {
      details: status === undefined ? { provider: PROVIDER } : { provider: PROVIDER, status },
      cause,
    })

  /** One HTTP attempt for one batch: the parsed vectors, or why it failed. */
  async function attempt(batch: readonly string[]): Promise<{ ok: Float32Array[] } | { failed: AttemptFailure }> {
    const controller = new AbortController()
    inFlight.add(controller)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, timeoutMs)
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
    if (options.apiKey !== undefined && options.apiKey !== '') headers.authorization = `Bearer ${options.apiKey}`
    const body = JSON.stringify({
      model,
      input: batch,
      ...(requestedDimensions === undefined ? {} : { dimensions: requestedDimensions }),
      encoding_format: 'float',
    })
    let response: Response | undefined
    let text: string
    try {
      response = await doFetch(url, { method: 'POST', headers, body, signal: controller.signal })
      text = await response.text()
    } catch (error) {
      const message = timedOut
        ? `timed out after ${timeoutMs} ms${response === undefined ? '' : ` (HTTP ${response.status}, body unfinished)`}`
        : closed
          ? 'aborted: the embedder was closed'
          : `failed: ${errorText(error)}`
      return { failed: { error: fail(message, response?.status, error), retryable: !closed } }
    } finally {
      clearTimeout(timer)
      inFlight.delete(controller)
    }
    const status = response.status

    if (status < 200 || status > 299) {
      const retryable = status === 429 || status >= 500
      const failure: AttemptFailure = {
        error: fail(`returned HTTP ${status}: ${snippet(text)}`, status, new Error(vendorMessage(text) ?? `HTTP ${status}`)),
        retryable,
      }
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'))
      if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs
      return { failed: failure }
    }

    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return {
        failed: { error: fail(`returned HTTP ${status} with a body that is not JSON: ${snippet(text)}`, status, error), retryable: false },
      }
    }
    const parsed = responseSchema.safeParse(json)
    if (!parsed.success) {
      return {
        failed: {
          error: fail(
            `returned HTTP ${status} with an unexpected shape (${describeIssue(parsed.error.issues[0])}): ${snippet(text)}`,
            status,
            parsed.error,
          ),
          retryable: false,
        },
      }
    }
    const items = parsed.data.data
    const problem = checkItems(items, batch.length, dimension)
    if (problem !== undefined) {
      return { failed: { error: fail(`returned HTTP ${status} with ${problem}`, status, new Error(problem)), retryable: false } }
    }
    const vectors: Float32Array[] = new Array<Float32Array>(batch.length)
    for (const item of items) vectors[item.index] = normalizeInPlace(Float32Array.from(item.embedding))
    return { ok: vectors }
  }

  async function embedBatch(batch: readonly string[]): Promise<Float32Array[]> {
    for (let retry = 0; ; retry++) {
      const result = await attempt(batch)
      if ('ok' in result) {
        dimension ??= result.ok[0]?.length
        return result.ok
      }
      const { error, retryable, retryAfterMs } = result.failed
      if (!retryable || retry >= maxRetries || closed) throw error
      const backoff = Math.min(retryMaxMs, retryBaseMs * 2 ** retry) * (0.5 + random() / 2)
      await sleep(retryAfterMs === undefined ? backoff : Math.min(retryMaxMs, retryAfterMs))
      if (closed) throw error
    }
  }

  return {
    provider: PROVIDER,
    model,
    get spaceId() {
      return `${PROVIDER}:${model}:${dimension ?? '?'}`
    },
    dimension: () => dimension,
    async embed(texts, kind) {
      if (closed) throw new MnemoError('PROVIDER_FAILED', 'openai embedder: embed() after close()', { details: { provider: PROVIDER } })
      const prefix = (kind === 'query' ? options.queryPrefix : options.documentPrefix) ?? ''
      const out: Float32Array[] = []
      for (let start = 0; start < texts.length; start += batchSize) {
        out.push(...(await embedBatch(texts.slice(start, start + batchSize).map((t) => prefix + t))))
      }
      return out
    },
    async close() {
      closed = true
      for (const controller of inFlight) controller.abort()
      inFlight.clear()
    },
  }
}

/**
 * Checks the response items against the batch: one item per input, each
 * index used once and in range, every vector non-empty and of one length
 * (the known `dimension` when there is one). Returns a description of the
 * first problem, or undefined.
 */
function checkItems(
  items: readonly { embedding: number[]; index: number }[],
  expected: number,
  dimension: number | undefined,
): string | undefined {
  if (items.length !== expected) return `${items.length} embeddings for ${expected} inputs`
  const seen = new Set<number>()
  let width = dimension
  for (const item of items) {
    if (item.index >= expected) return `index ${item.index} out of range for ${expected} inputs`
    if (seen.has(item.index)) return `index ${item.index} twice`
    seen.add(item.index)
    if (item.embedding.length === 0) return `an empty embedding at index ${item.index}`
    width ??= item.embedding.length
    if (item.embedding.length !== width)
      return `an embedding of dimension ${item.embedding.length} at index ${item.index}, expected ${width}`
  }
  return undefined
}

function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (issue === undefined) return 'invalid'
  return `${issue.path.length === 0 ? 'body' : issue.path.join('.')}: ${issue.message}`
}
