/**
 * A per-UTC-day token budget that wraps any {@link Llm}: calls are refused
 * once the day's recorded usage is spent.
 */
import { MnemoError } from '../core/errors.js'
import { type Llm, type LlmRequest, type LlmResult, type LlmUsage, usageOfError } from './llm.js'
import { badOption } from './llm-http.js'

/** What a budget remembers: the UTC day (`YYYY-MM-DD`) and the tokens used on it. */
export interface TokenBudgetState {
  day: string
  used: number
}

/** Options of {@link createTokenBudget}. */
interface TokenBudgetOptions {
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

/** A daily token budget: see {@link createTokenBudget}. */
interface TokenBudget {
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
