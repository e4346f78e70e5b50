import type { PoolClient } from 'pg'
import type { PgDb } from './pg-db.js'

/**
 * `Store.runExclusive` on PostgreSQL: runs the job `name` unless another session holds its advisory lock (another
 * replica is running it) or `store_meta` records its turn `turn` or a later one. The lock is a session lock
 * (`pg_try_advisory_lock`, key: `hashtextextended('mnemo:job:' || name, 0)`) held by one pooled connection for the
 * whole run, so a replica that dies mid-run releases it with its connection; the turn is recorded when `fn` resolves.
 * `fn` runs its own queries on other connections of the pool.
 *
 * @returns Whether `fn` ran here; rejects as `fn` does, or with `STORE_UNAVAILABLE` when the lock cannot be asked for.
 */
export async function runExclusive(db: PgDb, name: string, fn: () => Promise<void>, turn: number | undefined): Promise<boolean> {
  const key = `job:${name}`
  let client: PoolClient
  try {
    client = await db.pool.connect()
  } catch (cause) {
    throw db.wrap(cause, `run job ${name}`)
  }
  let locked = false
  let broken: Error | undefined
  try {
    try {
      const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [`mnemo:${key}`])
      locked = got.rows[0]?.ok === true
      if (!locked) return false
      if (turn !== undefined) {
        const last = await client.query<{ value: string }>('SELECT value FROM store_meta WHERE key = $1', [key])
        const done = last.rows[0]?.value
        if (done !== undefined && Number(done) >= turn) return false
      }
    } catch (cause) {
      throw db.wrap(cause, `run job ${name}`)
    }
    await fn()
    if (turn !== undefined) {
      try {
        await client.query(`INSERT INTO store_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [
          key,
          String(turn),
        ])
      } catch (cause) {
        throw db.wrap(cause, `record job ${name}`)
      }
    }
    return true
  } finally {
    if (locked) {
      try {
        await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [`mnemo:${key}`])
      } catch (error) {
        // A connection that cannot unlock is dropped, which releases the lock.
        broken = error instanceof Error ? error : new Error(String(error))
      }
    }
    client.release(broken)
  }
}
