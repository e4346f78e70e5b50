import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { MnemoError } from '../core/errors.js'
import { toHookAgent } from '../core/types.js'
import path from 'node:path'
import type { LlmConsolidator } from '../lifecycle/llm-consolidator.js'
import { systemClock, type Clock } from '../core/clock.js'
import { resolveConfig, type EmbedderConfig, type LlmConfig, type MnemoEnv, type ResolvedConfig } from '../config/config.js'
import type { Embedder } from '../providers/embedder.js'
import type { Redactor } from '../capture/sanitize.js'
import { MnemoEngine } from '../engine/mnemo.js'
import { DEFAULT_RECALL_CONFIG } from '../engine/recall-pipeline.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import { ErrorLog } from './error-log.js'
import { Spool } from './spool.js'

/** Options of `openMnemo`. All optional. */
export interface OpenMnemoOptions {
  /** Data directory. Default: `MNEMO_HOME`, else `~/.mnemo`. */
  home?: string
  /** Database path override; `:memory:` for a throwaway store (benchmarks, tests). */
  dbPath?: string
  /** Time source. Default: the system clock. */
  clock?: Clock
  /** Working directory standing for "this project" when a call names none. Default `process.cwd()`. */
  cwd?: string
  /** How long a write waits for another process's lock, ms. Default 5000. */
  busyTimeoutMs?: number
  redact?: Redactor
  env?: MnemoEnv
  /** IANA time zone for day boundaries and indexed dates. Default: the system's. */
  timeZone?: string
  /** A neural embedder (overrides `MNEMO_EMBEDDER`). */
  embedder?: Embedder
  /** Read every user's data, not only `MNEMO_USER`'s and shared data (a person's `--all-users`). Default false. */
  allUsers?: boolean
}

/**
 * The configured LLM consolidator, its provider module loaded on first use,
 * with the daily token budget kept in `budgetFile` across runs.
 */
function createConsolidator(c: LlmConfig, budgetFile: string, clock: Clock): LlmConsolidator {
  let inner: Promise<LlmConsolidator> | undefined
  const load = (): Promise<LlmConsolidator> =>
    (inner ??= (async () => {
      const llmModule = await import('../providers/llm.js')
      const { createLlmConsolidator } = await import('../lifecycle/llm-consolidator.js')
      const llm =
        c.provider === 'anthropic'
          ? llmModule.createAnthropicLlm({ apiKey: c.apiKey ?? '', model: c.model, ...(c.url ? { baseUrl: c.url } : {}) })
          : llmModule.createOpenAiCompatibleLlm({ baseUrl: c.url ?? 'https://api.openai.com/v1', model: c.model, ...(c.apiKey ? { apiKey: c.apiKey } : {}) })
      const budget = llmModule.createTokenBudget({
        perDay: c.dailyTokens,
        now: () => clock.now(),
        persist: {
          load: () => {
            try {
              return JSON.parse(readFileSync(budgetFile, 'utf8')) as { day: string; used: number }
            } catch {
              return undefined
            }
          },
          save: (state) => writeFileSync(budgetFile, JSON.stringify(state), { mode: 0o600 }),
        },
      })
      return createLlmConsolidator(budget.wrap(llm))
    })())
  return {
    summarizeSession: async (i) => (await load()).summarizeSession(i),
    extractMemories: async (i) => (await load()).extractMemories(i),
    consolidate: async (i) => (await load()).consolidate(i),
    phraseProcedure: async (i) => (await load()).phraseProcedure(i),
  }
}

/**
 * The configured neural embedder, loaded on first use: provider modules (and
 * zod, transformers.js) stay out of start-up, which hooks pay for on every event.
 */
export function createEmbedder(c: EmbedderConfig): Embedder {
  let inner: Promise<Embedder> | undefined
  let loaded: Embedder | undefined
  const load = async (): Promise<Embedder> => {
    inner ??= (async () => {
      if (c.provider === 'openai') {
        const { createOpenAiEmbedder } = await import('../providers/openai-embedder.js')
        return createOpenAiEmbedder({ model: c.model, ...(c.url ? { baseUrl: c.url } : {}), ...(c.apiKey ? { apiKey: c.apiKey } : {}), ...(c.dimensions ? { dimensions: c.dimensions } : {}) })
      }
      const { createLocalEmbedder } = await import('../providers/local-embedder.js')
      return createLocalEmbedder({ model: c.model, ...(c.url ? { modelPath: c.url } : {}) })
    })()
    loaded = await inner
    return loaded
  }
  return {
    provider: c.provider,
    model: c.model,
    get spaceId() {
      return loaded?.spaceId ?? `${c.provider}:${c.model}:${c.dimensions ?? '?'}`
    },
    dimension: () => loaded?.dimension() ?? c.dimensions,
    embed: async (texts, kind) => (await load()).embed(texts, kind),
    close: async () => {
      if (loaded?.close) await loaded.close()
    },
  }
}

/** An open mnemo: the engine plus the runtime pieces adapters need. Call `close()` when done. */
export interface OpenedMnemo {
  engine: MnemoEngine
  config: ResolvedConfig
  spool: Spool
  errors: ErrorLog
  /**
   * Stores hook events spooled while no process could write, oldest first.
   * Only an unavailable store stops the drain (it is returned in `failed`);
   * an event that cannot be stored for any other reason is moved to
   * `spool/bad/` and logged, so one bad event never blocks the rest.
   */
  drainSpool(): { drained: number; remaining: number; failed?: unknown }
  close(): void
}

/**
 * Opens mnemo on the embedded SQLite store: resolves the configuration,
 * creates the data directory (mode 0700) on first use, opens and migrates
 * the database. The composition root: the one place that picks the store.
 *
 * @throws {MnemoError} `CONFIG_INVALID` — bad environment settings.
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the database cannot be opened.
 */
export function openMnemo(options: OpenMnemoOptions = {}): OpenedMnemo {
  const config = resolveConfig(options.env ?? process.env, options.home ? { home: options.home } : {})
  const clock = options.clock ?? systemClock
  const dbPath = options.dbPath ?? config.dbPath
  if (dbPath !== ':memory:') mkdirSync(config.home, { recursive: true, mode: 0o700 })
  const store = openSqliteStore({ path: dbPath, busyTimeoutMs: options.busyTimeoutMs ?? 5000 }, () => clock.now())
  const engine = new MnemoEngine({
    store,
    clock,
    cwd: options.cwd ?? process.cwd(),
    contextBudgetTokens: config.contextBudgetTokens,
    ...(options.redact ? { redact: options.redact } : {}),
    timeZone: options.timeZone ?? config.timeZone,
    recall: { ...DEFAULT_RECALL_CONFIG, weights: { ...DEFAULT_RECALL_CONFIG.weights, ...config.recallWeights }, rerank: config.rerank ? DEFAULT_RECALL_CONFIG.rerank : undefined },
    ...(options.embedder ? { embedder: options.embedder } : config.embedder ? { embedder: createEmbedder(config.embedder) } : {}),
    ...(config.llm ? { consolidator: createConsolidator(config.llm, path.join(config.home, 'llm-budget.json'), clock) } : {}),
    ...(config.user !== undefined ? { user: config.user } : {}),
    agentScope: config.agentScope,
    ...(options.allUsers ? { allUsers: true } : {}),
  })
  const spool = new Spool(config.spoolDir)
  const errors = new ErrorLog(config.errorLogPath)
  return {
    engine,
    config,
    spool,
    errors,
    drainSpool: () =>
      spool.drain((item) => {
        try {
          // A team-mode event (it names the token it was for) only ever goes to the server, with that token.
          if (item.tokenId !== undefined) return 'skip'
          // Stored as the user whose hook spooled it, whichever user's process drains it (they share MNEMO_HOME).
          const owner = item.user === engine.user ? engine : engine.scoped({ user: item.user })
          const { note } = owner.captureHook(item.event, item.stdin, toHookAgent(item.agent), item.spooledAt)
          if (note !== undefined) errors.append({ at: new Date(clock.now()).toISOString(), where: `spool drain ${item.event}`, code: 'INVALID_INPUT', message: note })
          return 'stored'
        } catch (error) {
          if (MnemoError.is(error, 'STORE_UNAVAILABLE')) throw error
          const message = error instanceof Error ? error.message : String(error)
          errors.append({ at: new Date(clock.now()).toISOString(), where: `spool drain ${item.event}`, code: MnemoError.is(error) ? error.code : 'INTERNAL', message: `${message} (moved to spool/bad)` })
          return 'bad'
        }
      }),
    close: () => engine.close(),
  }
}
