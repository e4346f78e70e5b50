import { afterAll, describe, expect, it } from 'vitest'
import { MnemoError } from '../../core/errors.js'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { withDatabase } from './pg-admin.js'
import { PgDb } from './pg-db.js'
import { migrate, type PgMigration } from './pg-migrations.js'
import { BASE_MIGRATION } from './pg-schema.js'

const pg = await withPostgres()
const url = pg?.url ?? ''

describe('PgDb.open', () => {
  it('refuses what is not a PostgreSQL URL, naming it without its password', () => {
    expect(() => PgDb.open('mysql://u:secret@h/db')).toThrow(/scheme mysql:.*u:\*\*\*@h/)
    expect(() => PgDb.open('not a url')).toThrow(MnemoError)
  })

  it('takes libpq URL forms a WHATWG URL refuses, and puts a database into them', async () => {
    const socket = 'postgres://postgres@/mnemo?host=/var/run/postgresql'
    expect(() => PgDb.open(socket).close()).not.toThrow()
    expect(withDatabase(socket, 'other')).toBe('postgres://postgres@/other?host=/var/run/postgresql')
    expect(withDatabase('postgresql://u:p@h:5432', 'db1')).toBe('postgresql://u:p@h:5432/db1')
    expect(() => withDatabase('mysql://h/db', 'x')).toThrow(/not a PostgreSQL URL/)
  })

  it('reports a server that does not answer as STORE_UNAVAILABLE with its cause', async () => {
    // Port 1 on loopback: nothing listens there.
    const db = PgDb.open('postgres://nobody:pw@127.0.0.1:1/none', { connectTimeoutMs: 2000 })
    const error = await db.query('probe', 'SELECT 1').catch((e: unknown) => e)
    await db.close()
    expect(MnemoError.is(error, 'STORE_UNAVAILABLE')).toBe(true)
    expect((error as MnemoError).message).toMatch(/postgres probe failed \(postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none\)/)
    expect((error as MnemoError).cause).toBeInstanceOf(Error)
  })
})

describe.skipIf(!pg)(`PostgreSQL migrations${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  afterAll(() => pg?.drop())

  const tables = async (db: PgDb): Promise<string[]> =>
    (await db.query<{ t: string }>('t', "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).rows.map((r) => r.t)

  it('applies the base schema once, even when two pools migrate at the same moment', async () => {
    const a = PgDb.open(url)
    const b = PgDb.open(url)
    // A slow second step makes the two runs overlap inside the lock.
    const steps: PgMigration[] = [
      BASE_MIGRATION,
      { id: '0099-test', name: 'slow step', sql: 'SELECT pg_sleep(0.2); CREATE TABLE t99 (x int)' },
    ]
    const [ra, rb] = await Promise.all([migrate(a, steps), migrate(b, steps)])
    expect([...ra, ...rb].sort()).toEqual(['0001-base', '0099-test'])
    expect(await migrate(a, steps)).toEqual([])
    const names = await tables(a)
    for (const t of [
      'events',
      'projects',
      'sessions',
      'observations',
      'memories',
      'search_docs',
      'entities',
      'entity_mentions',
      'tombstones',
      'kept_ids',
      'context_injections',
      'schema_migrations',
    ])
      expect(names).toContain(t)
    const recorded = await a.query<{ id: string }>('t', 'SELECT id FROM schema_migrations ORDER BY id')
    expect(recorded.rows.map((r) => r.id)).toEqual(['0001-base', '0099-test'])
    await a.close()
    await b.close()
  })

  it('rolls a failing step back and keeps the ones before it', async () => {
    const db = PgDb.open(url)
    const steps: PgMigration[] = [
      BASE_MIGRATION,
      { id: '0099-test', name: 'slow step', sql: 'unused: applied by the test before' },
      { id: '0100-ok', name: 'ok', sql: 'CREATE TABLE t100 (x int)' },
      { id: '0101-bad', name: 'bad', sql: 'CREATE TABLE t101 (x int); SELECT * FROM no_such_table' },
    ]
    const error = await migrate(db, steps).catch((e: unknown) => e)
    expect(MnemoError.is(error, 'STORE_UNAVAILABLE')).toBe(true)
    expect((error as Error).message).toMatch(/migrate 0101-bad.*no_such_table/)
    const names = await tables(db)
    expect(names).toContain('t100')
    expect(names).not.toContain('t101')
    await db.close()
  })

  it('refuses a database a newer mnemo migrated (a step this code does not know), naming it', async () => {
    const db = PgDb.open(url)
    const error = await migrate(db, [BASE_MIGRATION]).catch((e: unknown) => e)
    await db.close()
    expect(MnemoError.is(error, 'STORE_UNAVAILABLE')).toBe(true)
    expect((error as Error).message).toMatch(/migrated by a newer mnemo \(schema steps 0099-test, 0100-ok are unknown/)
  })
})
