import type Database from 'better-sqlite3'
import { MnemoError } from '../../core/errors.js'

/**
 * One open SQLite connection with what every store module shares: prepared
 * statements cached by their SQL, the error wrapping of `guard`, the clock,
 * and a count of this connection's writes (PRAGMA data_version counts only
 * other connections' commits, so caches key on both).
 */
export class SqliteDb {
  private readonly stmts = new Map<string, Database.Statement>()
  /** `PRAGMA data_version`, for `otherCommits` (apart from `stmts`: `stmt` counts a statement not starting with SELECT as a write). */
  private dataVersionStmt: Database.Statement | undefined
  /** Entity names per scope, keyed by the data version they were read at (see `entityNames`). */
  readonly namesCache = new Map<string, { version: string; names: string[] }>()
  /** Document counts per scope, keyed like `namesCache` (see `countDocs`). */
  readonly countCache = new Map<string, { version: string; count: number }>()
  /** Keys of the documents in a scope (current memories only), keyed like `namesCache` (see `matchCount`). */
  readonly scopeDocsCache = new Map<string, { version: string; keys: Set<number> }>()
  /** Rows of the full-text index matching a phrase, keyed by the phrase (see `zeroIdfSplit`). */
  readonly phraseCountCache = new Map<string, { version: string; count: number }>()
  /** Whether any row of the full-text index holds a phrase, keyed by the phrase (see `matchedOnly`). */
  readonly matchedPhraseCache = new Map<string, { version: string; matched: boolean }>()
  /** Whether a phrase is common among the oldest observations, which no write changes (see `zeroIdfSplit`). */
  readonly commonPhraseCache = new Map<string, boolean>()
  /** Whether any document has a user, keyed like `namesCache` (see `whoMatters` in sqlite-search.ts). */
  usersCache: { version: string; any: boolean } | undefined
  /** Writes on this connection. */
  writes = 0
  /**
   * Entity ids by project id NUL type NUL name, as committed by this connection's appends, valid while PRAGMA
   * data_version (other connections' commits) is `version`; emptied (`forgetEntityIds`) by whatever deletes entities
   * on this connection (a rebuild, a project dropped with its last event). See `mention` in sqlite-write.ts.
   */
  entityIds: { version: number; ids: Map<string, number> } = { version: -1, ids: new Map() }

  constructor(
    readonly db: Database.Database,
    readonly path: string,
    readonly now: () => number,
  ) {}

  /**
   * What the caches above key on: this connection's writes and the commits of others (PRAGMA data_version), as
   * `"<writes>:<data_version>"`. Equal readings mean nothing was written between them.
   */
  dataVersion(): string {
    return `${this.writes}:${this.otherCommits()}`
  }

  /** `PRAGMA data_version`: a number that changes when another connection commits (never for this one's own writes). */
  otherCommits(): number {
    // Prepared once: `db.pragma()` prepares its statement on every call (5 against 2.3 µs; ~8 calls a recall).
    this.dataVersionStmt ??= this.db.prepare('PRAGMA data_version').pluck()
    return this.dataVersionStmt.get() as number
  }

  /** Empties `entityIds`: entities were deleted, so an id it holds may name none, or another entity later. */
  forgetEntityIds(): void {
    this.entityIds = { version: -1, ids: new Map() }
  }

  /** The prepared statement for `sql`, prepared once per connection. */
  stmt(sql: string): Database.Statement {
    if (!/^\s*SELECT/i.test(sql)) this.writes++
    let s = this.stmts.get(sql)
    if (!s) {
      s = this.db.prepare(sql)
      this.stmts.set(sql, s)
    } else if (s.reader) {
      // One cached statement per text: a caller's .pluck() must not turn another caller's rows into bare values.
      s.pluck(false)
    }
    return s
  }

  /**
   * Runs `fn` with the busy timeout at 0, then puts the connection's timeout back: a write that meets another
   * connection's lock throws SQLITE_BUSY at once. For work that may be left for later (a spool drain, usage counts).
   */
  withoutLockWait<T>(fn: () => T): T {
    const before = this.db.pragma('busy_timeout', { simple: true }) as number
    if (before === 0) return fn()
    this.db.pragma('busy_timeout = 0')
    try {
      return fn()
    } finally {
      this.db.pragma(`busy_timeout = ${before}`)
    }
  }

  /** Runs `fn`; a driver error becomes `STORE_UNAVAILABLE` naming `operation` (see `wrap`). */
  guard<T>(operation: string, fn: () => T): T {
    try {
      return fn()
    } catch (cause) {
      throw wrap(cause, operation, this.path)
    }
  }
}

/**
 * A driver error as `STORE_UNAVAILABLE` (a MnemoError passes through), with a hint when another process holds the lock
 * or the store is read-only. SQLITE_CORRUPT / SQLITE_NOTADB (damaged pages) say the database is damaged, name the
 * file, and hint at `mnemo doctor` and restoring an export, so damage is never silent.
 */
export function wrap(cause: unknown, operation: string, path?: string): MnemoError {
  if (MnemoError.is(cause)) return cause
  const message = cause instanceof Error ? cause.message : String(cause)
  const init = { details: { dialect: 'sqlite' as const, operation }, cause }
  const code = (cause as { code?: unknown }).code
  if (typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code)) {
    const file = path && path !== ':memory:' ? path : 'the database'
    return new MnemoError('STORE_UNAVAILABLE', `the database ${file} is damaged (sqlite ${operation}: ${message})`, {
      ...init,
      hint: `mnemo doctor shows the damage; move ${file} aside (mnemo then starts an empty store) and restore your last export with mnemo import <export file>`,
    })
  }
  return new MnemoError(
    'STORE_UNAVAILABLE',
    `sqlite ${operation} failed${path && path !== ':memory:' ? ` (${path})` : ''}: ${message}`,
    /locked|busy/i.test(message)
      ? { ...init, hint: 'another mnemo process holds the database; retry, or raise busyTimeoutMs' }
      : /readonly database/i.test(message)
        ? {
            ...init,
            hint: 'the data directory (MNEMO_HOME) or its database is not writable by this user: commands that only read still work',
          }
        : init,
  )
}

/** True when `error` (a driver error, or one wrapped by `wrap`) means another connection holds the lock. */
export function isLockError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown; cause?: { code?: unknown } }).cause?.code ?? (error as { code?: unknown }).code
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || /database is locked|database table is locked/i.test(message)
}
