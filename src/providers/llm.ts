/**
 * The LLM port: structured output from a chat model, validated by a zod
 * schema. Adapters: {@link createOpenAiCompatibleLlm} (openai-llm.ts, any
 * OpenAI-compatible `/chat/completions` endpoint) and
 * {@link createAnthropicLlm} (anthropic-llm.ts); {@link createTokenBudget}
 * (llm-budget.ts) caps the tokens of any of them per UTC day.
 *
 * Every adapter sends through one transport (llm-http.ts: per-attempt
 * timeout, retries with exponential backoff and jitter on network errors,
 * timeouts, 408, 429 honouring `Retry-After`, and 5xx) and one validation
 * loop (llm-structured.ts: an answer that does not validate is asked for
 * again once, with the validation error; then the call fails). All failures
 * are `MnemoError('PROVIDER_FAILED')`.
 */
import type { z } from 'zod'

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

/** Marks `error` with the tokens its call spent, for {@link usageOfError}; the first mark stays. No-op for non-objects and zero usage. */
export function attachUsage(error: unknown, usage: LlmUsage): void {
  if (typeof error !== 'object' || error === null || usage.inputTokens + usage.outputTokens === 0) return
  if (USAGE in error) return
  Object.defineProperty(error, USAGE, { value: { ...usage }, enumerable: false })
}
