/**
 * The {@link Llm} adapter for Anthropic's Messages API: structured output by
 * forcing a single tool whose `input_schema` is the schema.
 */
import { z } from 'zod'
import { estimateTokens } from '../core/text.js'
import { snippet } from './http-errors.js'
import type { Llm, LlmRequest, LlmResult, LlmUsage } from './llm.js'
import { badOption, createHttpClient, type LlmHttpOptions } from './llm-http.js'
import { type Candidate, completeValidated, describeIssues, wireSchema } from './llm-structured.js'

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
