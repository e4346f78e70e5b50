import { copyFileSync, mkdtempSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { MnemoError } from '../core/errors.js'
import { toHookAgent } from '../core/types.js'
import path from 'node:path'
import type { LlmConsolidator } from '../lifecycle/llm-consolidator.js'
import { systemClock, type Clock } from '../core/clock.js'
import { defaultDataDir, resolveConfig, type EmbedderConfig, type LlmConfig, type MnemoEnv, type ResolvedConfig } from '../config/config.js'
import type { Embedder } from '../providers/embedder.js'
import type { Redactor } from '../capture/sanitize.js'
import { MnemoEngine } from '../engine/mnemo.js'
import { DERIVATION_VERSION } from '../engine/index-event.js'
import { DEFAULT_RECALL_CONFIG } from '../engine/recall-pipeline.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import { ErrorLog } from './error-log.js'
import { Spool } from './spool.js'
import type { KeepingStore } from './context-cache.js'
import { dataDirError, ensureDataDir } from './data-dir.js'
import type { Store } from '../storage/store.js'
import { openDatabaseStore, type DatabaseTarget } from './open-database.js'

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
  /** Most memory the SQLite store's page cache may hold, KiB (see `openSqliteStore`). Default: SQLite's (16,000 KiB). */
  pageCacheKib?: number
  redact?: Redactor
  env?: MnemoEnv
  /** IANA time zone for day boundaries and indexed dates. Default: the system's. */
  timeZone?: string
  /** A neural embedder (overrides `MNEMO_EMBEDDER`). */
  embedder?: Embedder
  /** Read every user's data, not only `MNEMO_USER`'s and shared data (a person's `--all-users`). Default false. */
  allUsers?: boolean
  /**
   * When the data directory or database cannot be written, open the database
   * read-only instead of failing (for commands that read: their writes then
   * fail, naming the cause). Default false: a hook or a server must not run
   * on a store it cannot write.
   */
  readOnlyFallback?: boolean
  /**
   * The configuration already resolved from `env` by a caller that needed it first (the hook); `env` and `home` are
   * then not read again. Default: resolved here.
   */
  config?: ResolvedConfig
  /** The spool of `config.spoolDir`, when the caller made it already. Default: made here. */
  spool?: Spool
  /** The error log of `config.errorLogPath`, when the caller made it already. Default: made here. */
  errors?: ErrorLog
  /**
   * An open store to run on instead of the SQLite database of `home` (a PostgreSQL store, see
   * runtime/scratch-database.ts, `openMnemoOn`): `dbPath`, `busyTimeoutMs`, `pageCacheKib` and `readOnlyFallback` are then not used,
   * and closing mnemo closes it. Default: the SQLite store of `dbPath`.
   */
  store?: Store
  /** How `database` names `store` (a URL with its password masked). Default: the store's dialect. */
  storeLabel?: string
}

/**
 * The configured LLM consolidator, its provider module loaded on first use,
 * with the daily token budget kept in `budgetFile` across runs.
 */
function createConsolidator(c: LlmConfig, budgetFile: string, clock: Clock): LlmConsolidator {
  let inner: Promise<LlmConsolidator> | undefined
  const load = (): Promise<LlmConsolidator> =>
    (inner ??= (async () => {
      const { createAnthropicLlm } = await import('../providers/anthropic-llm.js')
      const { createOpenAiCompatibleLlm } = await import('../providers/openai-llm.js')
      const { createTokenBudget } = await import('../providers/llm-budget.js')
      const { createLlmConsolidator } = await import('../lifecycle/llm-consolidator.js')
      const llm =
        c.provider === 'anthropic'
          ? createAnthropicLlm({ apiKey: c.apiKey ?? '', model: c.model, ...(c.url ? { baseUrl: c.url } : {}) })
          : createOpenAiCompatibleLlm({
              baseUrl: c.url ?? 'https://api.openai.com/v1',
              model: c.model,
              ...(c.apiKey ? { apiKey: c.apiKey } : {}),
            })
      const budget = createTokenBudget({
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
    extractFacts: async (i) => (await load()).extractFacts(i),
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
        return createOpenAiEmbedder({
          model: c.model,
          ...(c.url ? { baseUrl: c.url } : {}),
          ...(c.apiKey ? { apiKey: c.apiKey } : {}),
          ...(c.dimensions ? { dimensions: c.dimensions } : {}),
        })
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
  /** The database it keeps its data in: the SQLite file's path, or a PostgreSQL URL with its password masked. */
  database: string
  /** True when the store was opened read-only because the data directory could not be written (see `readOnlyFallback`). */
  readOnly: boolean
  /** Why it was opened read-only when that is not a permission: the disk is full or failing (naming MNEMO_HOME). */
  readOnlyReason?: string
  spool: Spool
  errors: ErrorLog
  /**
   * Stores hook events spooled while no process could write, oldest first.
   * Only an unavailable store stops the drain (it is returned in `failed`);
   * an event that cannot be stored for any other reason is moved to
   * `spool/bad/` and logged, so one bad event never blocks the rest. Never waits for
   * another process's write lock: a held lock stops the drain at once (`failed`). A call made while a drain runs
   * (concurrent requests of a server) waits for that drain and gets its result instead of starting a second one.
   */
  drainSpool(): Promise<{ drained: number; remaining: number; failed?: unknown }>
  /** Runs `fn` with no wait for another process's write lock (see `Store.withoutLockWait`). */
  withoutLockWait<T>(fn: () => Promise<T>): Promise<T>
  /** What keeping a context block beside the store needs of it (see `keepContext`): a writable SQLite store's; else undefined. */
  keeping?: KeepingStore
  close(): Promise<void>
}

/**
 * Opens the SQLite store at `dbPath` in the data directory `home`, creating
 * the directory first. A failure that comes from the directory (not a
 * directory, not writable) is reported as such, not as SQLite's "unable to
 * open database file". With `readOnlyFallback`, a store that cannot be
 * written is opened read-only: in place when SQLite can (its WAL files are
 * there), else, when no WAL file exists (so no process is writing and none
 * can start in a directory it cannot write), as a private snapshot copy,
 * deleted on close.
 */
function openStore(
  home: string,
  dbPath: string,
  options: OpenMnemoOptions,
  now: () => number,
): { store: Store; readOnly: boolean; readOnlyReason?: string; cleanup?: () => void } {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000
  const cache = options.pageCacheKib !== undefined ? { pageCacheKib: options.pageCacheKib } : {}
  const inMemory = dbPath === ':memory:'
  let problem: MnemoError<'STORE_UNAVAILABLE'> | undefined
  try {
    if (!inMemory) ensureDataDir(home)
    return {
      store: openSqliteStore({ path: dbPath, busyTimeoutMs, derivationVersion: DERIVATION_VERSION, ...cache }, now),
      readOnly: false,
    }
  } catch (error) {
    problem = inMemory ? undefined : (dataDirError(home, error, dbPath) ?? diskError(home, error))
    if (problem === undefined) throw error
  }
  // Only a store that exists and cannot be written is read instead; "not a directory" has nothing to read.
  const unwritable =
    problem.details.operation === 'open data directory (not writable)' ||
    problem.details.operation === 'open data directory (disk full or failing)'
  if (!options.readOnlyFallback || !isFile(dbPath) || !unwritable) throw problem
  try {
    return {
      store: openSqliteStore({ path: dbPath, busyTimeoutMs, readonly: true, ...cache }, now),
      readOnly: true,
      ...diskReason(problem),
    }
  } catch {
    // SQLite reads a WAL database in place only beside its -shm file, which it cannot create here.
  }
  const snapshot = snapshotOf(dbPath)
  if (snapshot === undefined) {
    throw new MnemoError(
      'STORE_UNAVAILABLE',
      `${problem.message}, and its database cannot be read without it while ${path.basename(dbPath)}-wal exists`,
      {
        details: { dialect: 'sqlite', operation: 'open' },
        hint: problem.hint ?? 'let this user write it, or point MNEMO_HOME at another directory',
        cause: problem.cause,
      },
    )
  }
  try {
    return {
      store: openSqliteStore({ path: snapshot.path, label: dbPath, busyTimeoutMs, readonly: true, ...cache }, now),
      readOnly: true,
      ...diskReason(problem),
      cleanup: snapshot.remove,
    }
  } catch (error) {
    snapshot.remove()
    throw error
  }
}

/**
 * The open failure as the disk's problem when it is one: SQLite's "disk I/O error" (it cannot create or grow the
 * `-shm` file) or "database or disk is full", with the free space of the data directory's file system. Undefined
 * for any other error.
 */
function diskError(home: string, error: unknown): MnemoError<'STORE_UNAVAILABLE'> | undefined {
  const message = error instanceof Error ? error.message : String(error)
  if (!/disk I\/O error|database or disk is full|SQLITE_(?:IOERR|FULL)/i.test(message)) return undefined
  let free: number | undefined
  try {
    const fs = statfsSync(home)
    free = fs.bavail * fs.bsize
  } catch {
    free = undefined
  }
  const why =
    free === 0
      ? 'its disk is full (0 bytes free)'
      : free !== undefined && free < 1024 * 1024
        ? `its disk is almost full (${free} bytes free)`
        : 'its disk fails to write'
  return new MnemoError('STORE_UNAVAILABLE', `MNEMO_HOME ${home} cannot be written: ${why} (${message})`, {
    details: { dialect: 'sqlite', operation: 'open data directory (disk full or failing)' },
    hint: 'free space on that disk (hooks keep their events in the spool meanwhile, and store them once it can be written), or point MNEMO_HOME at another disk',
    cause: error,
  })
}

/** `{ readOnlyReason }` for a disk that is full or failing (a store this user may not write says so without it). */
function diskReason(problem: MnemoError<'STORE_UNAVAILABLE'>): { readOnlyReason?: string } {
  return problem.details.operation === 'open data directory (disk full or failing)' ? { readOnlyReason: problem.message } : {}
}

/** Whether `dbPath-wal` exists with content: an empty one (left by an open that failed on a full disk) holds nothing a copy would miss. */
function walHoldsFrames(dbPath: string): boolean {
  try {
    return statSync(`${dbPath}-wal`).size > 0
  } catch {
    return false
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile()
  } catch {
    return false
  }
}

/**
 * A private copy of the database file `dbPath` in a temporary directory, or
 * undefined when it cannot be taken safely: a `-wal` file beside it (a
 * writer may be mid-transaction, and the copy would miss what the WAL holds)
 * or a file that changed while it was copied.
 */
function snapshotOf(dbPath: string): { path: string; remove: () => void } | undefined {
  if (walHoldsFrames(dbPath)) return undefined
  const before = statSync(dbPath)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mnemo-readonly-'))
  const remove = (): void => rmSync(dir, { recursive: true, force: true })
  const copy = path.join(dir, path.basename(dbPath))
  try {
    copyFileSync(dbPath, copy)
    const after = statSync(dbPath)
    if (walHoldsFrames(dbPath) || after.mtimeMs !== before.mtimeMs || after.size !== before.size) {
      remove()
      return undefined
    }
  } catch (error) {
    remove()
    throw error
  }
  return { path: copy, remove }
}

/**
 * Opens mnemo on the embedded SQLite store: resolves the configuration,
 * creates the data directory (mode 0700) on first use, opens and migrates
 * the database. The composition root: the one place that picks the store.
 *
 * @throws {MnemoError} `CONFIG_INVALID` — bad environment settings.
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the database cannot be opened; when the data directory is the cause
 *   (not a directory, not writable) the message names it.
 *
 * @example
 * import path from 'node:path'
 * import { openMnemo } from 'mnemo'
 * const mnemo = openMnemo({ cwd: '/work/acme-api' }) // data in MNEMO_HOME, else ~/.mnemo; the project is acme-api
 * try {
 *   console.log(path.basename(mnemo.database), mnemo.readOnly) // → mnemo.db false
 *   await mnemo.engine.remember('orders DB is PostgreSQL 14', { kind: 'fact' })
 *   const stats = await mnemo.engine.stats()
 *   console.log(stats.projects, stats.memories) // → 1 1
 * } finally {
 *   await mnemo.close()
 * }
 */
export function openMnemo(options: OpenMnemoOptions = {}): OpenedMnemo {
  const config = options.config ?? resolveConfig(options.env ?? process.env, options.home ? { home: options.home } : {})
  const clock = options.clock ?? systemClock
  const dbPath = options.dbPath ?? config.dbPath
  const { store, readOnly, readOnlyReason, cleanup } = options.store
    ? { store: options.store, readOnly: false, readOnlyReason: undefined, cleanup: undefined }
    : openStore(config.home, dbPath, options, () => clock.now())
  const engine = new MnemoEngine({
    store,
    clock,
    cwd: options.cwd ?? process.cwd(),
    contextBudgetTokens: config.contextBudgetTokens,
    ...(options.redact ? { redact: options.redact } : {}),
    timeZone: options.timeZone ?? config.timeZone,
    recall: {
      ...DEFAULT_RECALL_CONFIG,
      weights: { ...DEFAULT_RECALL_CONFIG.weights, ...config.recallWeights },
      rerank: config.rerank ? DEFAULT_RECALL_CONFIG.rerank : undefined,
    },
    ...(options.embedder ? { embedder: options.embedder } : config.embedder ? { embedder: createEmbedder(config.embedder) } : {}),
    ...(config.llm ? { consolidator: createConsolidator(config.llm, path.join(config.home, 'llm-budget.json'), clock) } : {}),
    ...(config.user !== undefined ? { user: config.user } : {}),
    agentScope: config.agentScope,
    ...(options.allUsers ? { allUsers: true } : {}),
  })
  const spool = options.spool ?? new Spool(config.spoolDir)
  const errors = options.errors ?? new ErrorLog(config.errorLogPath)
  // The drain running now, shared by the calls made meanwhile (see `OpenedMnemo.drainSpool`).
  let draining: Promise<{ drained: number; remaining: number; failed?: unknown }> | undefined
  const drain = () =>
    store.withoutLockWait(() =>
      spool.drain(async (item) => {
        try {
          // A team-mode event (it names the token it was for) only ever goes to the server, with that token.
          if (item.tokenId !== undefined) return 'skip'
          // Stored as the user whose hook spooled it, whichever user's process drains it (they share MNEMO_HOME).
          const owner = item.user === engine.user ? engine : engine.scoped({ user: item.user })
          const agent = toHookAgent(item.agent)
          const { note, sessionKey } = await owner.captureHook(item.event, item.stdin, agent, item.spooledAt)
          // A SessionStart that printed a kept context block: recorded as the hook that builds a block records it.
          if (item.context !== undefined && sessionKey !== undefined) await owner.recordContextShown({ agent, sessionKey }, item.context)
          if (note !== undefined)
            errors.append({
              at: new Date(clock.now()).toISOString(),
              where: `spool drain ${item.event}`,
              code: 'INVALID_INPUT',
              message: note,
            })
          return 'stored'
        } catch (error) {
          if (MnemoError.is(error, 'STORE_UNAVAILABLE')) throw error
          const message = error instanceof Error ? error.message : String(error)
          errors.append({
            at: new Date(clock.now()).toISOString(),
            where: `spool drain ${item.event}`,
            code: MnemoError.is(error) ? error.code : 'INTERNAL',
            message: `${message} (moved to spool/bad)`,
          })
          return 'bad'
        }
      }),
    )
  return {
    engine,
    config,
    database: options.store ? (options.storeLabel ?? store.dialect) : dbPath,
    readOnly,
    ...(readOnlyReason !== undefined ? { readOnlyReason } : {}),
    spool,
    errors,
    // The drain never waits for another process's write lock: that process is storing, and this one's own work (a
    // read, a hook's event) must not stall behind it; what is left stays for the next drain.
    drainSpool: () =>
      (draining ??= (async () => {
        // Events a hook kept for this data directory in the default one while this one could not be written.
        const fallback = defaultDataDir(options.env ?? process.env)
        if (fallback.home !== config.home && !readOnly) spool.adoptFrom(fallback.spoolDir, config.home)
        return drain()
      })().finally(() => {
        draining = undefined
      })),
    withoutLockWait: (fn) => store.withoutLockWait(fn),
    ...(!readOnly && store.otherWrites && store.settle && store.sessionKeys
      ? {
          keeping: {
            otherWrites: () => store.otherWrites!(),
            settle: () => store.settle!(),
            sessionKeys: (projectRoot) => store.sessionKeys!(projectRoot),
          },
        }
      : {}),
    close: async () => {
      try {
        await engine.close()
      } finally {
        cleanup?.()
      }
    },
  }
}

/**
 * `openMnemo` on the database `target` names (a PostgreSQL URL or an SQLite file; see `parseDatabaseTarget`) instead
 * of the data directory's own file; the data directory still holds the spool, the error log and a server's tokens.
 * Only the composition root opens a store: PostgreSQL's driver is loaded here, when asked for.
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the database cannot be reached or opened (named with its password masked).
 * @throws {MnemoError} `CONFIG_INVALID` — bad environment settings.
 */
export async function openMnemoOn(
  target: DatabaseTarget,
  options: Omit<OpenMnemoOptions, 'store' | 'storeLabel' | 'dbPath'> = {},
): Promise<OpenedMnemo> {
  const config = options.config ?? resolveConfig(options.env ?? process.env, options.home ? { home: options.home } : {})
  const clock = options.clock ?? systemClock
  if (target.dialect === 'sqlite') return openMnemo({ ...options, config, dbPath: target.path })
  ensureDataDir(config.home)
  const store = await openDatabaseStore(target, () => clock.now())
  try {
    return openMnemo({ ...options, config, store, storeLabel: target.label })
  } catch (error) {
    await store.close()
    throw error
  }
}
