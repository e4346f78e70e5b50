/**
 * The LLM port and its adapters: structured output from a chat model,
 * validated by a zod schema.
 *
 * - {@link createOpenAiCompatibleLlm}: any OpenAI-compatible `/chat/completions`
 *   endpoint (OpenAI, Ollama `http://localhost:11434/v1`, vLLM, LM Studio,
 *   OpenRouter), with `response_format: json_schema`, falling back to
 *   `json_object` plus the schema in the prompt for servers that refuse it.
 * - {@link createAnthropicLlm}: Anthropic's Messages API, structured output by
 *   forcing a single tool whose `input_schema` is the schema.
 * - {@link createTokenBudget}: a per-UTC-day token budget that wraps any Llm.
 *
 * Every request has its own timeout and is retried with exponential backoff
 * and jitter on network errors, timeouts, 408, 429 (honouring `Retry-After`)
 * and 5xx. An answer that does not validate is asked for again once, with
 * the validation error; then the call fails. All failures are
 * `MnemoError('PROVIDER_FAILED')`.
 */
import { z } from 'zod'
import { MnemoError } from '../core/errors.js'
import { estimateTokens } from '../core/text.js'
import { errorText, parseRetryAfter, snippet, vendorMessage } from './http-errors.js'

// ---------------------------------------------------------------------------
// The port
// ---------------------------------------------------------------------------

/** Tokens one call consumed (over all its HTTP attempts). */
export interface LlmUsage {
  inputTokens: number
  outputTokens: number
}

/** One structured-output request. */
export interface LlmRequest<T> {
  /** Instructions: the task, the rules, what the output means. */
  system: string
  /** The material to work on. */
  user: string
  /** The answer's shape; the answer is parsed with it, and its JSON Schema (`z.toJSONSchema`) is sent to the model. */
  schema: z.ZodType<T>
  /** Name of the schema / tool as the model sees it (`[A-Za-z0-9_-]`, at most 64; other characters become `_`). */
  schemaName: string
  /** Most output tokens per answer. */
  maxTokens: number
}

/** A validated answer and what it cost. */
export interface LlmResult<T> {
  value: T
  /** Tokens as reported by the server; estimated (4 characters a token) when it reports none. */
  usage: LlmUsage
}

/** A chat model that answers with a value of a given schema. */
export interface Llm {
  /** `openai` (or the name given to an OpenAI-compatible instance), `anthropic`. */
  readonly provider: string
  readonly model: string
  /**
   * Asks for a value of `request.schema`.
   *
   * @throws {MnemoError} `PROVIDER_FAILED` with `details: { provider, status? }` — on HTTP or network
   *   failure after retries, or when the answer still does not validate after one corrective retry.
   *   Tokens spent before the failure can be read with {@link usageOfError}.
   */
  complete<T>(request: LlmRequest<T>): Promise<LlmResult<T>>
}

const USAGE = Symbol.for('mnemo.llmUsage')

/** Tokens a failed {@link Llm.complete} call spent before failing (e.g. on answers that did not validate); undefined when none are known. */
export function usageOfError(error: unknown): LlmUsage | undefined {
  if (typeof error !== 'object' || error === null || !(USAGE in error)) return undefined
  return (error as { [USAGE]: LlmUsage })[USAGE]
}

function attachUsage(error: unknown, usage: LlmUsage): void {
  if (typeof error !== 'object' || error === null || usage.inputTokens + usage.outputTokens === 0) return
  if (USAGE in error) return
  Object.defineProperty(error, USAGE, { value: { ...usage }, enumerable: false })
}

// ---------------------------------------------------------------------------
// Shared HTTP machinery
// ---------------------------------------------------------------------------

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

interface HttpClient {
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

function badOption(provider: string, message: string): MnemoError<'PROVIDER_FAILED'> {
  return new MnemoError('PROVIDER_FAILED', `${provider} llm: ${message}`, { details: { provider } })
}

function createHttpClient(init: {
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

// ---------------------------------------------------------------------------
// Schema on the wire, validation and the corrective retry
// ---------------------------------------------------------------------------

type JsonObject = Record<string, unknown>

/** The schema as sent: JSON Schema of an object (a non-object root is wrapped as `{ value: … }`). */
interface WireSchema {
  name: string
  /** Full JSON Schema (without `$schema`). */
  json: JsonObject
  wrapped: boolean
}

function wireSchema(schema: z.ZodType, schemaName: string): WireSchema {
  const name = schemaName.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'answer'
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { unrepresentable: 'any' }) as JsonObject
  if (json.type === 'object') return { name, json, wrapped: false }
  return { name, json: { type: 'object', properties: { value: json }, required: ['value'], additionalProperties: false }, wrapped: true }
}

/**
 * The JSON Schema for OpenAI's strict mode: string length limits (not in its
 * supported subset) move into the description, so the server accepts the
 * schema; zod still enforces them on the answer. `strict` is false when some
 * object has an optional property (strict mode requires all of them).
 */
function strictVariant(json: JsonObject): { schema: JsonObject; strict: boolean } {
  let strict = true
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit)
    if (typeof node !== 'object' || node === null) return node
    const out: JsonObject = {}
    for (const [key, value] of Object.entries(node as JsonObject)) {
      out[key] =
        key === 'properties' && typeof value === 'object' && value !== null
          ? Object.fromEntries(Object.entries(value as JsonObject).map(([k, v]) => [k, visit(v)]))
          : visit(value)
    }
    const min = out.minLength
    const max = out.maxLength
    if (typeof min === 'number' || typeof max === 'number') {
      delete out.minLength
      delete out.maxLength
      const limit =
        typeof min === 'number' && typeof max === 'number'
          ? `${min}–${max} characters`
          : typeof max === 'number'
            ? `at most ${max} characters`
            : `at least ${min} characters`
      out.description = typeof out.description === 'string' ? `${out.description} (${limit})` : limit
    }
    if (out.type === 'object' && typeof out.properties === 'object' && out.properties !== null) {
      const required = Array.isArray(out.required) ? (out.required as string[]) : []
      if (Object.keys(out.properties).some((k) => !required.includes(k))) strict = false
      out.additionalProperties = false
    }
    return out
  }
  const schema = visit(json) as JsonObject
  return { schema, strict }
}

type Candidate = { json: unknown } | { error: string }

/** Reads JSON from a model's text answer: tolerates code fences, a leading `<think>` block and prose around one object. */
function parseJsonText(text: string): Candidate {
  let t = text.trim().replace(/^<think>[\s\S]*?<\/think>\s*/i, '')
  const fence = /^```[a-zA-Z]*\s*\n?([\s\S]*?)\n?\s*```$/.exec(t)
  if (fence) t = (fence[1] ?? '').trim()
  if (t === '') return { error: 'the answer was empty' }
  try {
    return { json: JSON.parse(t) as unknown }
  } catch (error) {
    const start = t.indexOf('{')
    const end = t.lastIndexOf('}')
    if (start >= 0 && end > start) {
      try {
        return { json: JSON.parse(t.slice(start, end + 1)) as unknown }
      } catch {
        // fall through: report the first error
      }
    }
    return { error: `the answer is not valid JSON (${error instanceof Error ? error.message : String(error)})` }
  }
}

function describeIssues(issues: readonly z.core.$ZodIssue[], wrapped: boolean): string {
  const lines = issues.slice(0, 8).map((issue) => {
    const path = (wrapped ? ['value', ...issue.path] : issue.path).map(String).join('.')
    return `${path === '' ? '(root)' : path}: ${issue.message}`
  })
  if (issues.length > 8) lines.push(`…and ${issues.length - 8} more`)
  return lines.join('; ')
}

/** One model turn as a provider adapter reports it. */
interface Turn {
  candidate: Candidate
  usage: LlmUsage
  status: number
  /** The answer stopped at the output-token limit. */
  truncated: boolean
}

/**
 * Runs the ask → validate → (once) correct → validate loop. `ask` sends the
 * conversation, with `correction` appended to it after the previous answer
 * when given.
 */
async function completeValidated<T>(
  http: HttpClient,
  wire: WireSchema,
  schema: z.ZodType<T>,
  ask: (correction: string | undefined) => Promise<Turn>,
): Promise<LlmResult<T>> {
  const usage: LlmUsage = { inputTokens: 0, outputTokens: 0 }
  let correction: string | undefined
  try {
    for (let round = 0; ; round++) {
      const turn = await ask(correction)
      usage.inputTokens += turn.usage.inputTokens
      usage.outputTokens += turn.usage.outputTokens
      let problem: string
      if ('json' in turn.candidate) {
        const raw = wire.wrapped ? (turn.candidate.json as { value?: unknown } | null)?.value : turn.candidate.json
        const parsed = schema.safeParse(raw)
        if (parsed.success) return { value: parsed.data, usage }
        problem = `the answer does not match the schema: ${describeIssues(parsed.error.issues, wire.wrapped)}`
      } else {
        problem = turn.candidate.error
      }
      if (turn.truncated) problem = `${problem}; the answer was cut at the output-token limit, so answer more briefly`
      if (round >= 1) {
        throw http.fail(
          `returned HTTP ${turn.status}, but ${problem.slice(0, 600)} (after one corrective retry; schema ${wire.name})`,
          turn.status,
          new Error(problem),
        )
      }
      correction = `Your previous answer was rejected: ${problem.slice(0, 2000)}\nAnswer again with only the JSON value for the ${wire.name} schema, fixing these problems.`
    }
  } catch (error) {
    attachUsage(error, usage)
    throw error
  }
}

// ---------------------------------------------------------------------------
// OpenAI-compatible chat completions
// ---------------------------------------------------------------------------

/** Options of {@link createOpenAiCompatibleLlm}. */
export interface OpenAiCompatibleLlmOptions extends LlmHttpOptions {
  /** API root without `/chat/completions` (`https://api.openai.com/v1`, Ollama `http://localhost:11434/v1`, `https://openrouter.ai/api/v1`). */
  baseUrl: string
  /** Sent as `Authorization: Bearer <apiKey>`; no header when absent or empty (local servers). */
  apiKey?: string
  /** Model name as the endpoint knows it (`gpt-4o-mini`, `qwen2.5:7b`). */
  model: string
  /** Name in error details and messages (default `openai`). */
  provider?: string
  /** Request field for the output limit: `max_tokens` (default; Ollama, vLLM, LM Studio) or `max_completion_tokens` (OpenAI's reasoning models). */
  maxTokensParam?: 'max_tokens' | 'max_completion_tokens'
}

const chatCompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.union([z.string(), z.null(), z.array(z.object({ type: z.string(), text: z.string().optional() }))]).optional(),
          refusal: z.string().nullable().optional(),
        }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).nullable().optional(),
})

type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string }

/**
 * An {@link Llm} on an OpenAI-compatible `POST ${baseUrl}/chat/completions`.
 *
 * Sends `{ model, messages: [system, user], max_tokens, response_format: { type: 'json_schema', json_schema: { name, schema, strict } } }`
 * where `schema` is `z.toJSONSchema(request.schema)` adapted to strict mode
 * (string length limits moved into descriptions; `strict: false` when the
 * schema has optional properties). When the server answers 400 or 422 to
 * that, the same call is re-sent with `response_format: { type: 'json_object' }`
 * and the schema in the system prompt; once that works, the instance keeps
 * using `json_object` (servers without structured outputs). The answer's
 * content is parsed as JSON (code fences and a `<think>` block tolerated)
 * and validated; an invalid answer is followed by the model's answer and
 * the validation error, and asked once more.
 *
 * @throws {MnemoError} `PROVIDER_FAILED` from this function for invalid options.
 */
export function createOpenAiCompatibleLlm(options: OpenAiCompatibleLlmOptions): Llm {
  const provider = options.provider ?? 'openai'
  const model = options.model
  if (model.trim() === '') throw badOption(provider, 'model must not be empty')
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (options.apiKey !== undefined && options.apiKey !== '') headers.authorization = `Bearer ${options.apiKey}`
  const http = createHttpClient({
    provider,
    url: `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`,
    headers,
    secret: options.apiKey,
    options,
  })
  const maxTokensParam = options.maxTokensParam ?? 'max_tokens'
  /** Learnt per instance: the server refused `json_schema` and accepted `json_object`. */
  let mode: 'json_schema' | 'json_object' = 'json_schema'

  function body(wire: WireSchema, callMode: typeof mode, system: string, messages: readonly ChatMessage[], maxTokens: number): JsonObject {
    let responseFormat: JsonObject
    let systemText = system
    if (callMode === 'json_schema') {
      const { schema, strict } = strictVariant(wire.json)
      responseFormat = { type: 'json_schema', json_schema: { name: wire.name, schema, strict } }
    } else {
      responseFormat = { type: 'json_object' }
      systemText = `${system}\n\nAnswer with one JSON object and nothing else (no prose, no code fences). It must match this JSON Schema (named ${wire.name}):\n${JSON.stringify(wire.json)}`
    }
    return {
      model,
      messages: [{ role: 'system', content: systemText }, ...messages],
      [maxTokensParam]: maxTokens,
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      response_format: responseFormat,
    }
  }

  return {
    provider,
    model,
    async complete<T>(request: LlmRequest<T>): Promise<LlmResult<T>> {
      const wire = wireSchema(request.schema, request.schemaName)
      const messages: ChatMessage[] = [{ role: 'user', content: request.user }]
      let callMode = mode
      let lastAnswer: string | undefined

      const send = async (): Promise<{ status: number; json: unknown; text: string }> => {
        try {
          return await http.post(body(wire, callMode, request.system, messages, request.maxTokens))
        } catch (error) {
          const status = MnemoError.is(error, 'PROVIDER_FAILED') ? error.details.status : undefined
          if (callMode !== 'json_schema' || (status !== 400 && status !== 422)) throw error
          callMode = 'json_object'
          const answered = await http.post(body(wire, callMode, request.system, messages, request.maxTokens))
          mode = 'json_object'
          return answered
        }
      }

      return completeValidated(http, wire, request.schema, async (correction) => {
        if (correction !== undefined) {
          messages.push({ role: 'assistant', content: lastAnswer ?? '' }, { role: 'user', content: correction })
        }
        const { status, json, text } = await send()
        const parsed = chatCompletionSchema.safeParse(json)
        if (!parsed.success) {
          throw http.fail(
            `returned HTTP ${status} with an unexpected shape (${describeIssues(parsed.error.issues, false)}): ${snippet(text)}`,
            status,
            parsed.error,
          )
        }
        const choice = parsed.data.choices[0]!
        const refusal = choice.message.refusal
        if (typeof refusal === 'string' && refusal.trim() !== '') {
          throw http.fail(`returned HTTP ${status} with a refusal: ${snippet(refusal)}`, status, new Error(refusal))
        }
        const content = choice.message.content
        const answer = typeof content === 'string' ? content : Array.isArray(content) ? content.map((part) => part.text ?? '').join('') : ''
        lastAnswer = answer
        const reported = parsed.data.usage
        const usage: LlmUsage = {
          inputTokens: reported?.prompt_tokens ?? estimateTokens([request.system, ...messages.map((m) => m.content)].join('\n')),
          outputTokens: reported?.completion_tokens ?? estimateTokens(answer),
        }
        return { candidate: parseJsonText(answer), usage, status, truncated: choice.finish_reason === 'length' }
      })
    },
  }
}

// ---------------------------------------------------------------------------
// Anthropic Messages API
// ---------------------------------------------------------------------------

/** Options of {@link createAnthropicLlm}. */
export interface AnthropicLlmOptions extends LlmHttpOptions {
  /** Sent as `x-api-key`. */
  apiKey: string
  /** `claude-…` model id. */
  model: string
  /** API root without `/v1/messages` (default `https://api.anthropic.com`). */
  baseUrl?: string
}

const ANTHROPIC_VERSION = '2023-06-01'

const messagesResponseSchema = z.object({
  content: z.array(
    z.object({
      type: z.string(),
      id: z.string().optional(),
      name: z.string().optional(),
      input: z.unknown().optional(),
      text: z.string().optional(),
    }),
  ),
  stop_reason: z.string().nullable().optional(),
  usage: z.object({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).nullable().optional(),
})

/**
 * An {@link Llm} on Anthropic's `POST ${baseUrl}/v1/messages` (headers
 * `x-api-key`, `anthropic-version: 2023-06-01`). Structured output comes from
 * one tool named `schemaName` whose `input_schema` is the JSON Schema, forced
 * with `tool_choice: { type: 'tool', name }`; the answer is that `tool_use`
 * block's `input`. An invalid answer is returned to the model as an error
 * `tool_result`, and asked once more.
 *
 * @throws {MnemoError} `PROVIDER_FAILED` from this function for invalid options.
 */
export function createAnthropicLlm(options: AnthropicLlmOptions): Llm {
  const provider = 'anthropic'
  const model = options.model
  if (model.trim() === '') throw badOption(provider, 'model must not be empty')
  if (options.apiKey.trim() === '') throw badOption(provider, 'apiKey must not be empty')
  const http = createHttpClient({
    provider,
    url: `${(options.baseUrl ?? 'https://api.anthropic.com').replace(/\/+$/, '')}/v1/messages`,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-api-key': options.apiKey,
      'anthropic-version': ANTHROPIC_VERSION,
    },
    secret: options.apiKey,
    options,
  })

  return {
    provider,
    model,
    async complete<T>(request: LlmRequest<T>): Promise<LlmResult<T>> {
      const wire = wireSchema(request.schema, request.schemaName)
      const messages: { role: 'user' | 'assistant'; content: unknown }[] = [{ role: 'user', content: request.user }]
      let lastContent: unknown[] = []

      return completeValidated(http, wire, request.schema, async (correction) => {
        if (correction !== undefined) {
          const toolUses = lastContent.filter(
            (b): b is { type: 'tool_use'; id: string } => isBlock(b) && b.type === 'tool_use' && typeof b.id === 'string',
          )
          if (lastContent.length > 0) messages.push({ role: 'assistant', content: lastContent })
          else messages.push({ role: 'assistant', content: '(no answer)' })
          messages.push({
            role: 'user',
            content:
              toolUses.length > 0
                ? toolUses.map((b) => ({ type: 'tool_result', tool_use_id: b.id, is_error: true, content: correction }))
                : correction,
          })
        }
        const { status, json, text } = await http.post({
          model,
          max_tokens: request.maxTokens,
          system: request.system,
          messages,
          tools: [
            { name: wire.name, description: `Record the answer: a ${wire.name} value matching the input schema.`, input_schema: wire.json },
          ],
          tool_choice: { type: 'tool', name: wire.name },
          ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
        })
        const parsed = messagesResponseSchema.safeParse(json)
        if (!parsed.success) {
          throw http.fail(
            `returned HTTP ${status} with an unexpected shape (${describeIssues(parsed.error.issues, false)}): ${snippet(text)}`,
            status,
            parsed.error,
          )
        }
        lastContent = Array.isArray((json as { content?: unknown }).content) ? (json as { content: unknown[] }).content : []
        const blocks = parsed.data.content
        const reported = parsed.data.usage
        const answerText = blocks.map((b) => (b.type === 'tool_use' ? JSON.stringify(b.input ?? null) : (b.text ?? ''))).join('\n')
        const usage: LlmUsage = {
          inputTokens: reported?.input_tokens ?? estimateTokens([request.system, request.user].join('\n')),
          outputTokens: reported?.output_tokens ?? estimateTokens(answerText),
        }
        const tool = blocks.find((b) => b.type === 'tool_use' && b.name === wire.name)
        const said = blocks
          .filter((b) => b.type === 'text')
          .map((b) => b.text ?? '')
          .join(' ')
        const candidate: Candidate = tool
          ? { json: tool.input }
          : { error: `the answer did not call the ${wire.name} tool${said ? ` (it said: ${snippet(said)})` : ''}` }
        return { candidate, usage, status, truncated: parsed.data.stop_reason === 'max_tokens' }
      })
    },
  }
}

function isBlock(value: unknown): value is { type: string; id?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
}

// ---------------------------------------------------------------------------
// Daily token budget
// ---------------------------------------------------------------------------

/** What a budget remembers: the UTC day (`YYYY-MM-DD`) and the tokens used on it. */
export interface TokenBudgetState {
  day: string
  used: number
}

/** Options of {@link createTokenBudget}. */
export interface TokenBudgetOptions {
  /** Tokens (input + output) allowed per UTC day; 0 refuses every call. */
  perDay: number
  /** Epoch ms now (default `Date.now`). */
  now?: () => number
  /** Where the state lives between processes: `load` once, before the first call; `save` after every recorded call. */
  persist?: {
    load(): TokenBudgetState | undefined | Promise<TokenBudgetState | undefined>
    save(state: TokenBudgetState): void | Promise<void>
  }
}

export interface TokenBudget {
  readonly perDay: number
  /** An Llm that refuses to call `llm` once today's budget is spent, and records each call's usage (also of failed calls, when known). */
  wrap(llm: Llm): Llm
  /** Today's state (after loading a persisted one). */
  state(): Promise<TokenBudgetState>
  /** Tokens left today, at least 0. */
  remaining(): Promise<number>
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/**
 * A per-UTC-day token budget shared by every Llm it wraps. A call is refused
 * (before any request) once the day's recorded usage reaches `perDay`; a call
 * that starts under the budget may take it over by its own usage, and calls
 * running at the same time may each do so. Usage resets at 00:00 UTC.
 *
 * @throws {MnemoError} `PROVIDER_FAILED` (from `complete`) with message
 *   `daily token budget of <perDay> exhausted` and the wrapped provider in `details`.
 */
export function createTokenBudget(options: TokenBudgetOptions): TokenBudget {
  const { perDay, persist } = options
  const now = options.now ?? Date.now
  if (!(perDay >= 0) || !Number.isFinite(perDay)) throw badOption('token-budget', `perDay must be a non-negative number, got ${perDay}`)
  let current: TokenBudgetState | undefined
  let loading: Promise<void> | undefined

  async function today(): Promise<TokenBudgetState> {
    if (current === undefined) {
      loading ??= (async () => {
        const loaded = persist ? await persist.load() : undefined
        const valid =
          loaded !== undefined &&
          loaded !== null &&
          typeof loaded.day === 'string' &&
          typeof loaded.used === 'number' &&
          Number.isFinite(loaded.used)
        current ??= valid ? { day: loaded.day, used: Math.max(0, loaded.used) } : { day: utcDay(now()), used: 0 }
      })()
      try {
        await loading
      } catch (error) {
        loading = undefined
        throw error
      }
    }
    const day = utcDay(now())
    if (current!.day !== day) current = { day, used: 0 }
    return current!
  }

  async function record(usage: LlmUsage | undefined): Promise<void> {
    if (usage === undefined) return
    const tokens = Math.max(0, usage.inputTokens) + Math.max(0, usage.outputTokens)
    if (tokens === 0) return
    const state = await today()
    state.used += tokens
    if (persist) await persist.save({ ...state })
  }

  return {
    perDay,
    wrap(llm) {
      return {
        provider: llm.provider,
        model: llm.model,
        async complete<T>(request: LlmRequest<T>): Promise<LlmResult<T>> {
          const state = await today()
          if (state.used >= perDay) {
            throw new MnemoError('PROVIDER_FAILED', `daily token budget of ${perDay} exhausted`, {
              details: { provider: llm.provider },
              hint: `${state.used} tokens used on ${state.day} (UTC); the budget resets at 00:00 UTC`,
            })
          }
          let result: LlmResult<T>
          try {
            result = await llm.complete(request)
          } catch (error) {
            await record(usageOfError(error))
            throw error
          }
          await record(result.usage)
          return result
        },
      }
    },
    state: async () => ({ ...(await today()) }),
    remaining: async () => Math.max(0, perDay - (await today()).used),
  }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** `Retry-After-Ms`, or `Retry-After` as delta-seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
function retryAfterOf(headers: Headers): number | undefined {
  const ms = headers.get('retry-after-ms')?.trim()
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms))
  return parseRetryAfter(headers.get('retry-after'))
}
