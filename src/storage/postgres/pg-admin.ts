import pg from 'pg'
import { invalidInput } from '../../core/errors.js'
import { redact } from './pg-db.js'

// Server-level administration over a maintenance connection: probing a server, creating and dropping databases
// (what the test setup and `mnemo migrate --to` need before a store can open its database).

/** What probing a server found: it answered, it refused the login, or nothing answered. */
type ProbeResult = { ok: true } | { ok: false; reason: 'auth' | 'unreachable' | 'other'; message: string }

/** Connects once to `url` and runs `SELECT 1`; never throws. `timeoutMs` bounds the connection attempt (default 3000). */
export async function probe(url: string, timeoutMs = 3000): Promise<ProbeResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return { ok: true }
  } catch (error) {
    const code = (error as { code?: unknown }).code
    const message = error instanceof Error ? error.message : String(error)
    // 28000 invalid_authorization_specification (peer, no pg_hba entry), 28P01 invalid_password.
    if (code === '28000' || code === '28P01') return { ok: false, reason: 'auth', message }
    if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'ETIMEDOUT' || /timeout|ECONNREFUSED|ENOENT/.test(message)) {
      return { ok: false, reason: 'unreachable', message }
    }
    return { ok: false, reason: 'other', message }
  } finally {
    await client.end().catch(() => {})
  }
}

const DATABASE_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * `url` with its database replaced by `database` (the path of a postgres:// URL).
 * @throws {MnemoError} `INVALID_INPUT` (path `database`) — `url` is not a URL.
 */
export function withDatabase(url: string, database: string): string {
  // The path of a libpq URL, in the forms WHATWG URLs refuse too (`postgres://user@/db?host=/var/run/postgresql`).
  const m = /^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?(.*)$/i.exec(url)
  if (!m) throw invalidInput('database', `not a PostgreSQL URL: ${JSON.stringify(redact(url))}`)
  return `${m[1]}/${encodeURIComponent(database)}${m[3] ?? ''}`
}

/**
 * Creates database `name` through the server at `adminUrl` (a role allowed to CREATE DATABASE).
 * @throws {MnemoError} `INVALID_INPUT` (path `database`) — `name` is not lowercase letters, digits and `_` (≤ 63).
 * @throws {Error} the driver's error when the server refuses (it exists, no privilege).
 */
export async function createDatabase(adminUrl: string, name: string): Promise<void> {
  if (!DATABASE_NAME.test(name)) throw invalidInput('database', `not a database name mnemo creates: ${JSON.stringify(name)}`)
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE "${name}"`))
}

/**
 * Drops database `name` (if it exists), ending its open connections first (PostgreSQL 13+ `WITH (FORCE)`).
 * @throws {MnemoError} `INVALID_INPUT` (path `database`) — `name` is not lowercase letters, digits and `_` (≤ 63).
 */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  if (!DATABASE_NAME.test(name)) throw invalidInput('database', `not a database name mnemo creates: ${JSON.stringify(name)}`)
  await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end().catch(() => {})
  }
}
