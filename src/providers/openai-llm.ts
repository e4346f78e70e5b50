/**
 * The {@link Llm} adapter for OpenAI-compatible `/chat/completions`
 * endpoints (OpenAI, Ollama `http://localhost:11434/v1`, vLLM, LM Studio,
 * OpenRouter): `response_format: json_schema`, falling back to `json_object`
 * plus the schema in the prompt for servers that refuse it.
 */
import { z } from 'zod'
import { MnemoError } from '../core/errors.js'
import { estimateTokens } from '../core/text.js'
import { snippet } from './http-errors.js'
import type { Llm, LlmRequest, LlmResult, LlmUsage } from './llm.js'
import { badOption, createHttpClient, type LlmHttpOptions } from './llm-http.js'
import {
  completeValidated,
  describeIssues,
  type JsonObject,
  parseJsonText,
  strictVariant,
  type WireSchema,
  wireSchema,
} from './llm-structured.js'

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
