import { AsyncLocalStorage } from 'node:async_hooks'
import { createHash } from 'node:crypto'
import pg, { type PoolClient, type QueryConfig, type QueryResult, type QueryResultRow } from 'pg'
import { invalidInput, MnemoError } from '../../core/errors.js'

/**
 * The advisory lock key (pg_advisory_xact_lock) every write transaction of the store takes first: 'mnemo:wr' as 8
 * ASCII bytes. Writes are serialised as SQLite serialises them (one writer at a time, reads never wait), which keeps the
 * derivation's read-then-write rules (the write guard, supersede by subject, one copy per step, kept ids) exactly
 * SQLite's under concurrent replicas, and makes event sequence numbers commit in order, so a reader tailing the log by
 * `seq` never skips a row committed after a higher one. Advisory locks are per database.
 */
export const WRITE_LOCK = 0x6d6e656d6f3a7772n

/** How long a write inside `withoutLockWait` waits for another writer before it fails (`lock_timeout`; 0 would mean forever). */
const NO_WAIT_LOCK_TIMEOUT = '1ms'

const INT8 = 20
const NUMERIC = 1700

/** Type parsers of the store's pool: `bigint` and `numeric` as JS numbers (epoch ms, sequence numbers and counts are below 2^53). */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value)
    return pg.types.getTypeParser(oid, format as 'text')
  }) as typeof pg.types.getTypeParser,
}

/** Options of `PgDb.open`. */
export interface PgDbOptions {
  /** Epoch ms clock. Default `Date.now`. */
  now?: () => number
  /** Most connections the pool opens. Default 10. */
  maxConnections?: number
  /** Connection timeout in ms (a server that does not answer is `STORE_UNAVAILABLE` after it). Default 10000. */
  connectTimeoutMs?: number
  /**
   * How long a write waits for another writer's lock (a rebuild, a long import) before it fails with
   * `STORE_UNAVAILABLE` "database is locked", in ms: SQLite's busy timeout. Default 30000.
   */
  lockTimeoutMs?: number
}

/**
 * One connection pool to a PostgreSQL database with what every store module shares: queries and transactions whose
 * driver errors become `STORE_UNAVAILABLE` (`guard`), the serialised write transaction (`WRITE_LOCK`), the no-wait
 * mode of `withoutLockWait`, and the clock.
 */
export class PgDb {
  private readonly noWait = new AsyncLocalStorage<true>()

  private constructor(
    readonly pool: pg.Pool,
    /** The database as errors name it: the URL without its password. */
    readonly label: string,
    readonly now: () => number,
    /** See `PgDbOptions.lockTimeoutMs`. */
    readonly lockTimeoutMs: number,
  ) {}

  /**
   * A pool for `url` (`postgres://user:password@host:port/database`, or `postgresql://…`; a socket directory as
   * `?host=/var/run/postgresql`). Opens no connection yet.
   * @throws {MnemoError} `INVALID_INPUT` (path `database`) — `url` is not a postgres:// or postgresql:// URL.
   */
  static open(url: string, options: PgDbOptions = {}): PgDb {
    // libpq's URL forms, including those WHATWG URLs refuse (`postgres://user@/db?host=/var/run/postgresql`).
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase()
    if (scheme !== 'postgres' && scheme !== 'postgresql') {
      throw invalidInput(
        'database',
        `not a PostgreSQL URL${scheme ? ` (scheme ${scheme}:)` : ''}: ${JSON.stringify(redact(url))}`,
        'write postgres://user:password@host:5432/database',
      )
    }
    for (const [name, value] of [
      ['maxConnections', options.maxConnections],
      ['connectTimeoutMs', options.connectTimeoutMs],
      ['lockTimeoutMs', options.lockTimeoutMs],
    ] as const) {
      if (value !== undefined && !(Number.isFinite(value) && value >= 1)) {
        throw invalidInput(name, `${name} must be a number of at least 1, not ${JSON.stringify(value)}`)
      }
    }
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      types: TYPES,
    })
    const db = new PgDb(pool, redact(url), options.now ?? Date.now, Math.floor(options.lockTimeoutMs ?? 30_000))
    // An idle client whose server went away must not crash the process: the next query reports it.
    pool.on('error', () => {})
    return db
  }

  /** Runs one statement on any pooled connection (outside a transaction: reads). */
  async query<R extends QueryResultRow = QueryResultRow>(
    operation: string,
    sql: string,
    params: readonly unknown[] = [],
  ): Promise<QueryResult<R>> {
    try {
      return await this.pool.query<R>(sql, params as unknown[])
    } catch (cause) {
      throw this.wrap(cause, operation)
    }
  }

  /**
   * Runs `fn` with one pooled connection outside a transaction (several reads, each seeing what is committed when it
   * runs); its driver errors become `STORE_UNAVAILABLE` naming `operation`.
   */
  async read<T>(operation: string, fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect(operation)
    try {
      return await fn(preparing(client))
    } catch (cause) {
      throw this.wrap(cause, operation)
    } finally {
      client.release()
    }
  }

  /**
   * Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it rejects (the store is
   * then unchanged). With `writeLock` (the default) the transaction first takes `WRITE_LOCK`. A wait for a lock is
   * bounded by `lockTimeoutMs` (the pool's, unless given), and inside `withoutLockWait` fails at once.
   * @throws {MnemoError} `fn`'s MnemoError as is; any driver error as `STORE_UNAVAILABLE` naming `operation`.
   */
  async transaction<T>(
    operation: string,
    fn: (c: PoolClient) => Promise<T>,
    options: { writeLock?: boolean; lockTimeoutMs?: number } = {},
  ): Promise<T> {
    const client = await this.connect(operation)
    let broken: unknown
    try {
      // One round trip: begin, bound the wait for locks, take the write lock.
      const wait = this.noWait.getStore() ? NO_WAIT_LOCK_TIMEOUT : `${Math.floor(options.lockTimeoutMs ?? this.lockTimeoutMs)}ms`
      await client.query(
        `BEGIN; SET LOCAL lock_timeout = '${wait}'${options.writeLock !== false ? `; SELECT pg_advisory_xact_lock(${WRITE_LOCK})` : ''}`,
      )
      const result = await fn(preparing(client))
      await client.query('COMMIT')
      return result
    } catch (cause) {
      try {
        await client.query('ROLLBACK')
      } catch (rollback) {
        broken = rollback
      }
      throw this.wrap(cause, operation)
    } finally {
      // A connection that could not roll back is gone or confused: drop it rather than hand it to the next caller.
      client.release(broken instanceof Error ? broken : undefined)
    }
  }

  /**
   * A pooled connection. A connection the server ends while it is lent (a restart, a network cut) emits 'error' beside
   * failing its query: the query's rejection reports it, so the event is only kept from crashing the process.
   */
  private async connect(operation: string): Promise<PoolClient> {
    let client: PoolClient
    try {
      client = await this.pool.connect()
    } catch (cause) {
      throw this.wrap(cause, operation)
    }
    if (!LISTENED.has(client)) {
      client.on('error', () => {})
      LISTENED.add(client)
    }
    return client
  }

  /** Runs `fn` with every write transaction it starts failing at once on another writer's lock (see `Store.withoutLockWait`). */
  withoutLockWait<T>(fn: () => Promise<T>): Promise<T> {
    return this.noWait.run(true, fn)
  }

  /** A driver error as `STORE_UNAVAILABLE` naming `operation` and the database, with its cause (a MnemoError passes through). */
  wrap(cause: unknown, operation: string): MnemoError {
    if (MnemoError.is(cause)) return cause
    const message = cause instanceof Error ? cause.message : String(cause)
    const init = { details: { dialect: 'postgres' as const, operation }, cause }
    const code = (cause as { code?: unknown }).code
    if (code === '55P03') {
      return new MnemoError('STORE_UNAVAILABLE', `postgres ${operation} failed (${this.label}): database is locked by another writer`, {
        ...init,
        hint: 'another mnemo process is writing; retry',
      })
    }
    return new MnemoError('STORE_UNAVAILABLE', `postgres ${operation} failed (${this.label}): ${message}`, {
      ...init,
      ...(isConnectionError(cause) ? { hint: 'is the PostgreSQL server running and reachable at that address?' } : {}),
    })
  }

  private closing: Promise<void> | undefined

  /** Closes every connection of the pool (idempotent); later calls fail with `STORE_UNAVAILABLE`. */
  close(): Promise<void> {
    this.closing ??= this.pool.end()
    return this.closing
  }
}

/**
 * A statement with parameters as a named (prepared) statement, named by a hash of its text: each connection parses and
 * plans it once, then binds and executes it (the derivation runs the same few statements for every event). Texts of
 * several statements (`;`) and statements without parameters run as they are.
 */
function statement(sql: string, params: readonly unknown[]): QueryConfig {
  if (params.length === 0 || sql.includes(';')) return { text: sql, values: params as unknown[] }
  let name = STATEMENT_NAMES.get(sql)
  if (name === undefined) {
    name = `mnemo_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`
    STATEMENT_NAMES.set(sql, name)
  }
  return { name, text: sql, values: params as unknown[] }
}
const STATEMENT_NAMES = new Map<string, string>()
/** Connections given an 'error' listener (see `PgDb.connect`). */
const LISTENED = new WeakSet<PoolClient>()

/** `client` whose `query(text, values)` runs named statements (see `statement`); other call forms pass through. */
function preparing(client: PoolClient): PoolClient {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver)
      return (text: unknown, values?: unknown, ...rest: unknown[]) =>
        typeof text === 'string' && Array.isArray(values) && rest.length === 0
          ? query(statement(text, values))
          : query(text, values, ...rest)
    },
  })
}

/** True when `error` means the server could not be reached or the connection was lost (not a statement's failure). */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && (/^(08|57P0)/.test(code) || /^E(CONNREFUSED|CONNRESET|NOTFOUND|HOSTUNREACH|TIMEDOUT|PIPE)$/.test(code))) {
    return true
  }
  const message = error instanceof Error ? error.message : String(error)
  return /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Client was closed|Cannot use a pool after calling end/i.test(
    message,
  )
}

/** A database URL without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/^(\w+:\/\/[^:/@]*):[^@]*@/, '$1:***@')
}
