/**
 * The transport every LLM adapter sends through: one JSON POST with a
 * per-attempt timeout, retried with exponential backoff and jitter on network
 * errors, timeouts, 408, 429 (honouring `Retry-After`) and 5xx, and every
 * failure as `MnemoError('PROVIDER_FAILED')` with the API key kept out of
 * its message.
 */
import { MnemoError } from '../core/errors.js'
import { errorText, parseRetryAfter, snippet, vendorMessage } from './http-errors.js'

/** Options every HTTP adapter shares. */
export interface LlmHttpOptions {
  /** Time limit of one HTTP attempt, from sending to the end of the response body, in milliseconds (default 30 000). */
  timeoutMs?: number
  /** Retries after the first attempt of a request, on network errors, timeouts, 408, 429 and 5xx (default 3, so at most 4 attempts). */
  maxRetries?: number
  /** First backoff delay in milliseconds (default 500); retry n waits about `retryBaseMs * 2^n`, with jitter. */
  retryBaseMs?: number
  /** Cap on one backoff delay, and on a server's `Retry-After`, in milliseconds (default 30 000). */
  retryMaxMs?: number
  /** Sampling temperature; sent only when set (some reasoning models refuse any value). */
  temperature?: number
  /** The fetch implementation (default the global `fetch`). */
  fetch?: typeof fetch
  /** Waits between retries (default a real timer); tests inject a recorder. */
  sleep?: (ms: number) => Promise<void>
  /** Source of jitter in [0, 1) (default `Math.random`). */
  random?: () => number
}

/** A JSON POST endpoint with retries (see {@link createHttpClient}). */
export interface HttpClient {
  /** URL path, for messages. */
  path: string
  /** POSTs `body` as JSON, with retries; the parsed 2xx response. */
  post(body: unknown): Promise<{ status: number; json: unknown; text: string }>
  fail(message: string, status: number | undefined, cause: unknown): MnemoError<'PROVIDER_FAILED'>
}

interface AttemptFailure {
  error: MnemoError<'PROVIDER_FAILED'>
  retryable: boolean
  retryAfterMs?: number
}

/** The error for an invalid adapter option: `PROVIDER_FAILED`, message `<provider> llm: <message>`. */
export function badOption(provider: string, message: string): MnemoError<'PROVIDER_FAILED'> {
  return new MnemoError('PROVIDER_FAILED', `${provider} llm: ${message}`, { details: { provider } })
}

/**
 * The client for POSTs to `init.url`: checks the options (an http(s) URL,
 * positive `timeoutMs`, non-negative integer `maxRetries`, non-negative
 * delays), then sends each body with up to `maxRetries` retries.
 * @throws {MnemoError} `PROVIDER_FAILED` for an invalid option (from this function), and from `post` for a
 *   failed request: `details.status` the last HTTP status, `cause` the network or vendor error.
 */
export function createHttpClient(init: {
  provider: string
  url: string
  headers: Record<string, string>
  /** Text never to show in a message (the API key). */
  secret: string | undefined
  options: LlmHttpOptions
}): HttpClient {
  const { provider, url, options } = init
  const timeoutMs = options.timeoutMs ?? 30_000
  const maxRetries = options.maxRetries ?? 3
  const retryBaseMs = options.retryBaseMs ?? 500
  const retryMaxMs = options.retryMaxMs ?? 30_000
  const doFetch = options.fetch ?? globalThis.fetch
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const random = options.random ?? Math.random

  let path: string
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)')
    path = parsed.pathname
  } catch {
    throw badOption(provider, `baseUrl must be an http(s) URL, got ${JSON.stringify(url)}`)
  }
  if (!(timeoutMs > 0)) throw badOption(provider, `timeoutMs must be positive, got ${timeoutMs}`)
  if (!Number.isInteger(maxRetries) || maxRetries < 0)
    throw badOption(provider, `maxRetries must be a non-negative integer, got ${maxRetries}`)
  if (!(retryBaseMs >= 0) || !(retryMaxMs >= 0)) throw badOption(provider, 'retryBaseMs and retryMaxMs must be non-negative')

  const redact = (text: string): string => (init.secret && init.secret.length >= 4 ? text.split(init.secret).join('[redacted]') : text)

  const fail = (message: string, status: number | undefined, cause: unknown): MnemoError<'PROVIDER_FAILED'> =>
    new MnemoError('PROVIDER_FAILED', redact(`${provider} llm: POST ${path} ${message}`), {
      details: status === undefined ? { provider } : { provider, status },
      cause,
    })

  async function attempt(body: string): Promise<{ ok: { status: number; json: unknown; text: string } } | { failed: AttemptFailure }> {
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, timeoutMs)
    let response: Response | undefined
    let text: string
    try {
      response = await doFetch(url, { method: 'POST', headers: init.headers, body, signal: controller.signal })
      text = await response.text()
    } catch (error) {
      const message = timedOut
        ? `timed out after ${timeoutMs} ms${response === undefined ? '' : ` (HTTP ${response.status}, body unfinished)`}`
        : `failed: ${redact(errorText(error))}`
      return { failed: { error: fail(message, response?.status, error), retryable: true } }
    } finally {
      clearTimeout(timer)
    }
    const status = response.status
    if (status < 200 || status > 299) {
      const failure: AttemptFailure = {
        error: fail(
          `returned HTTP ${status}: ${snippet(redact(text))}`,
          status,
          new Error(redact(vendorMessage(text) ?? `HTTP ${status}`)),
        ),
        retryable: status === 408 || status === 429 || status >= 500,
      }
      const retryAfterMs = retryAfterOf(response.headers)
      if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs
      return { failed: failure }
    }
    try {
      return { ok: { status, json: JSON.parse(text) as unknown, text } }
    } catch (error) {
      return {
        failed: {
          error: fail(`returned HTTP ${status} with a body that is not JSON: ${snippet(redact(text))}`, status, error),
          retryable: false,
        },
      }
    }
  }

  return {
    path,
    fail,
    async post(payload) {
      const body = JSON.stringify(payload)
      for (let retry = 0; ; retry++) {
        const result = await attempt(body)
        if ('ok' in result) return result.ok
        const { error, retryable, retryAfterMs } = result.failed
        if (!retryable || retry >= maxRetries) throw error
        const backoff = Math.min(retryMaxMs, retryBaseMs * 2 ** retry) * (0.5 + random() / 2)
        await sleep(retryAfterMs === undefined ? backoff : Math.min(retryMaxMs, retryAfterMs))
      }
    },
  }
}

/** `Retry-After-Ms`, or `Retry-After` as delta-seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
function retryAfterOf(headers: Headers): number | undefined {
  const ms = headers.get('retry-after-ms')?.trim()
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms))
  return parseRetryAfter(headers.get('retry-after'))
}
