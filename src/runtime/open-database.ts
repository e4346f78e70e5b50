import path from 'node:path'
import { invalidInput, MnemoError } from '../core/errors.js'
import { DERIVATION_VERSION } from '../engine/index-event.js'
import type { Store } from '../storage/store.js'

/**
 * A database a command names (`mnemo serve --database`, `mnemo migrate --to/--from`): a PostgreSQL server's database
 * (`postgres://` or `postgresql://` URL) or an SQLite file (a path). `label` is how messages name it: a URL with its
 * password masked (`postgres://mnemo:***@db:5432/team`), a path as given.
 */
export type DatabaseTarget = { dialect: 'postgres'; url: string; label: string } | { dialect: 'sqlite'; path: string; label: string }

/** `url` with the password of its user info masked (`postgres://u:***@host/db`); `?password=` too. */
function maskDatabaseUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@?#]*):[^@/?#]*@/i, '$1:***@').replace(/([?&]password=)[^&#]*/gi, '$1***')
}

/**
 * What `text` names: a `postgres://` or `postgresql://` URL, or (anything without a scheme) an SQLite file path,
 * resolved against `cwd`.
 *
 * @param source - Where it came from, for messages: a flag (`--database`, `--to`, `--from`) or an environment
 *   variable (`MNEMO_DATABASE_URL`).
 * @throws {MnemoError} `INVALID_INPUT` (path: the flag without dashes) — from a flag: empty, or a URL of another scheme
 *   (`mysql://…`, `sqlite://…`), named with its password masked. `CONFIG_INVALID` — the same from a variable.
 */
export function parseDatabaseTarget(text: string, source: string, cwd: string): DatabaseTarget {
  const given = text.trim()
  const bad = (message: string): MnemoError => {
    const hint = 'write postgres://user:password@host:5432/database, or the path of an SQLite file'
    return source.startsWith('--')
      ? invalidInput(source.slice(2), message, hint)
      : new MnemoError('CONFIG_INVALID', message, { details: { keys: [source] }, hint })
  }
  if (given === '') throw bad(`${source} is empty`)
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(given)?.[1]?.toLowerCase()
  if (scheme === 'postgres' || scheme === 'postgresql') return { dialect: 'postgres', url: given, label: maskDatabaseUrl(given) }
  if (scheme !== undefined) {
    throw bad(`${source} ${maskDatabaseUrl(given)}: unknown database scheme ${scheme}:// (mnemo speaks postgres:// and SQLite files)`)
  }
  const file = path.resolve(cwd, given)
  return { dialect: 'sqlite', path: file, label: file }
}

/** What to do about the server errors a first connection meets, by SQLSTATE. */
const OPEN_HINTS: Readonly<Record<string, string>> = {
  '3D000': 'create the database first (createdb, or CREATE DATABASE), or fix its name in the URL',
  '28P01': 'check the user and password in the URL',
  '28000': "the server refuses this user from here: check the user in the URL and the server's pg_hba.conf",
  '42501': 'this user may not create tables in that database: grant it CREATE on the schema, or use its owner',
}

/**
 * Opens the store `target` names, migrating its schema when needed: PostgreSQL through `openPostgresStore` (its driver
 * loaded only now, so nothing else pays for it), an SQLite file through `openSqliteStore`.
 *
 * @param now - The clock the store stamps its own writes with (epoch ms).
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the server cannot be reached, refuses the login, the database does not
 *   exist, or the file cannot be opened: `cannot open the PostgreSQL database postgres://u:***@host/db: <the driver's
 *   reason>`, with a hint for the common causes; `cause` holds the store's error.
 * @throws {MnemoError} `INVALID_INPUT` (path `database`) — a URL the driver cannot read.
 */
export async function openDatabaseStore(target: DatabaseTarget, now: () => number): Promise<Store> {
  if (target.dialect === 'postgres') {
    const { openPostgresStore } = await import('../storage/postgres/pg-store.js')
    try {
      return await openPostgresStore(target.url, { now, derivationVersion: DERIVATION_VERSION })
    } catch (error) {
      if (!MnemoError.is(error, 'STORE_UNAVAILABLE')) throw error
      const cause = error.cause as { message?: unknown; code?: unknown } | undefined
      const reason = typeof cause?.message === 'string' ? cause.message : error.message
      throw new MnemoError('STORE_UNAVAILABLE', `cannot open the PostgreSQL database ${target.label}: ${reason}`, {
        details: error.details,
        hint: OPEN_HINTS[String(cause?.code)] ?? error.hint ?? 'check the URL, and that the server is up and reachable from here',
        cause: error,
      })
    }
  }
  const { openSqliteStore } = await import('../storage/sqlite/sqlite-store.js')
  return openSqliteStore({ path: target.path, derivationVersion: DERIVATION_VERSION }, now)
}
