import { invalidInput, MnemoError } from '../core/errors.js'
import { DERIVATION_VERSION } from '../engine/index-event.js'
import type { Store } from '../storage/store.js'

/** A PostgreSQL store in a database made for one run, and how to drop that database again. */
interface ScratchStore {
  store: Store
  /** The database's name (`mnemo_scratch_<pid>_<n>`). */
  name: string
  /** Closes the store and drops its database (connections still open on it are closed). Idempotent. */
  drop(): Promise<void>
}

let made = 0

/**
 * A fresh PostgreSQL store for a benchmark run (`mnemo bench locomo --database`, scripts/bench): a new database on the
 * server of `adminUrl`, migrated, that `drop` removes. Each LoCoMo conversation is its own store on SQLite (a fresh
 * in-memory database), so it gets a database of its own here too: BM25's document frequencies are per store.
 *
 * @param adminUrl - `postgres://…` of a role allowed to CREATE DATABASE (its own database is not touched).
 * @param now - The store's clock (epoch ms).
 * @throws {MnemoError} `INVALID_INPUT` (path `database`) — not a PostgreSQL URL; `STORE_UNAVAILABLE` — the server
 *   cannot be reached or refuses to create the database (nothing is left behind).
 */
export async function openScratchPostgres(adminUrl: string, now: () => number): Promise<ScratchStore> {
  if (!/^postgres(ql)?:\/\//i.test(adminUrl))
    throw invalidInput(
      'database',
      `not a PostgreSQL URL: ${JSON.stringify(adminUrl.replace(/:[^:@/]*@/, ':***@'))}`,
      'write postgres://user@host/postgres',
    )
  const { createDatabase, dropDatabase, withDatabase } = await import('../storage/postgres/pg-admin.js')
  const { openPostgresStore } = await import('../storage/postgres/pg-store.js')
  const { redact } = await import('../storage/postgres/pg-db.js')
  const name = `mnemo_scratch_${process.pid}_${++made}`
  try {
    await createDatabase(adminUrl, name)
  } catch (cause) {
    if (MnemoError.is(cause)) throw cause
    throw new MnemoError(
      'STORE_UNAVAILABLE',
      `postgres create database failed (${redact(adminUrl)}): ${cause instanceof Error ? cause.message : String(cause)}`,
      { details: { dialect: 'postgres', operation: 'create database' }, cause, hint: 'the URL needs a role allowed to CREATE DATABASE' },
    )
  }
  let store: Store
  try {
    store = await openPostgresStore(withDatabase(adminUrl, name), { now, derivationVersion: DERIVATION_VERSION })
  } catch (error) {
    await dropDatabase(adminUrl, name).catch(() => {})
    throw error
  }
  let dropped = false
  return {
    store,
    name,
    drop: async () => {
      if (dropped) return
      dropped = true
      // The engine that ran on the store closes it too: a second close has nothing left to do.
      await store.close().catch(() => {})
      await dropDatabase(adminUrl, name)
    },
  }
}
