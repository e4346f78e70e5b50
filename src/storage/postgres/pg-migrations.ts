import type { PoolClient } from 'pg'
import { MnemoError } from '../../core/errors.js'
import type { PgDb } from './pg-db.js'

/**
 * One schema step of the PostgreSQL store. Steps are applied once each, in the order of the list given to `migrate`,
 * each in its own transaction; `schema_migrations` records the ids applied. Never edit a released step: append one.
 * Ids are unique strings (`0001-base`, `0002-search`, …): the base schema (pg-schema.ts), the search step and the
 * facts step are separate entries, so each part of the dialect owns its own.
 */
export interface PgMigration {
  id: string
  /** What it does, recorded beside its id. */
  name: string
  sql: string
}

/** The advisory lock key (pg_advisory_xact_lock) that serialises migrations across processes: 'mnemo:migrate' as 8 ASCII bytes. */
const MIGRATE_LOCK = 0x6d6e656d6f6d6967n

/** How long a replica waits for another one's schema step (one that rebuilds an index over a large store takes minutes): 30 minutes. */
const MIGRATE_LOCK_TIMEOUT_MS = 30 * 60_000

/**
 * Applies the steps of `steps` not yet recorded in `schema_migrations`, in order. Each step runs in a transaction that
 * first takes the migration advisory lock, so two replicas starting at once on one database apply each step once: the
 * second waits for the first's step to commit, then finds it recorded and skips it.
 * @returns The ids applied by this call (empty when the database was up to date).
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the server is unreachable; a step failed (that step is rolled back, the
 *   steps before it stay applied); or the database holds steps this code does not know (a newer mnemo migrated it:
 *   writing to it could store rows the newer version reads wrongly).
 */
export async function migrate(db: PgDb, steps: readonly PgMigration[]): Promise<string[]> {
  const ids = new Set<string>()
  for (const step of steps) {
    if (ids.has(step.id)) throw new Error(`migration id ${step.id} is listed twice`)
    ids.add(step.id)
  }
  await db
    .query(
      'migrate',
      `CREATE TABLE IF NOT EXISTS schema_migrations (id text COLLATE "C" PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`,
    )
    .catch(async (cause: unknown) => {
      // Two first starts at once: CREATE TABLE IF NOT EXISTS can still collide on the catalog; the other one made it.
      if (!(await tableExists(db))) throw cause
    })
  await refuseNewerSchema(db, ids)
  const applied: string[] = []
  for (const step of steps) {
    const done = await db.transaction(
      `migrate ${step.id}`,
      async (c: PoolClient) => {
        await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK.toString()])
        const found = await c.query('SELECT 1 FROM schema_migrations WHERE id = $1', [step.id])
        if (found.rowCount !== 0) return false
        await c.query(step.sql)
        await c.query('INSERT INTO schema_migrations (id, name, applied_at) VALUES ($1, $2, $3)', [step.id, step.name, db.now()])
        return true
      },
      { writeLock: false, lockTimeoutMs: MIGRATE_LOCK_TIMEOUT_MS },
    )
    if (done) applied.push(step.id)
  }
  return applied
}

async function refuseNewerSchema(db: PgDb, known: ReadonlySet<string>): Promise<void> {
  const r = await db.query<{ id: string }>('migrate', 'SELECT id FROM schema_migrations ORDER BY id')
  const unknown = r.rows.map((row) => row.id).filter((id) => !known.has(id))
  if (unknown.length === 0) return
  throw new MnemoError(
    'STORE_UNAVAILABLE',
    `the database ${db.label} was migrated by a newer mnemo (schema steps ${unknown.join(', ')} are unknown to this one)`,
    {
      details: { dialect: 'postgres', operation: 'open' },
      hint: 'upgrade mnemo on this machine (npm install mnemo@latest) to the version the other replicas run',
    },
  )
}

async function tableExists(db: PgDb): Promise<boolean> {
  const r = await db.query<{ t: string | null }>('migrate', `SELECT to_regclass('schema_migrations')::text AS t`)
  return r.rows[0]?.t != null
}
