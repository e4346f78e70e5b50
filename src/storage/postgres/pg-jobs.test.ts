import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { PgDb } from './pg-db.js'
import { runExclusive } from './pg-jobs.js'
import { migrate } from './pg-migrations.js'
import { BASE_MIGRATION } from './pg-schema.js'

// `runExclusive` on PostgreSQL against a real server, with two pools standing for two server replicas: a background
// job runs in one at a time and once per turn, and a replica that dies mid-run (its connection gone) does not keep the
// others from running it.
const db = await withPostgres()

describe.skipIf(!db)(`PostgreSQL runExclusive${db ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  const pools: PgDb[] = []
  const open = async (): Promise<PgDb> => {
    const pool = PgDb.open(db!.url)
    pools.push(pool)
    await migrate(pool, [BASE_MIGRATION])
    return pool
  }
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()))
    await db?.drop()
  })

  it('runs a job in one replica at a time: another skips it while it runs', async () => {
    const [one, two] = [await open(), await open()]
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let entered!: () => void
    const inside = new Promise<void>((resolve) => (entered = resolve))
    const running = runExclusive(
      one,
      'job-a',
      async () => {
        entered()
        await held
      },
      undefined,
    )
    await inside
    expect(await runExclusive(two, 'job-a', async () => {}, undefined)).toBe(false)
    // Another job's name is another lock.
    expect(await runExclusive(two, 'job-b', async () => {}, undefined)).toBe(true)
    release()
    expect(await running).toBe(true)
    expect(await runExclusive(two, 'job-a', async () => {}, undefined)).toBe(true)
  })

  it('runs a turn once across replicas; a failed run leaves its turn to be run again', async () => {
    const [one, two] = [await open(), await open()]
    const ran: string[] = []
    const job = (name: string) => async () => {
      ran.push(name)
    }
    await expect(runExclusive(one, 'turns', () => Promise.reject(new Error('provider down')), 7)).rejects.toThrow('provider down')
    expect(await runExclusive(two, 'turns', job('two@7'), 7)).toBe(true)
    expect(await runExclusive(one, 'turns', job('one@7'), 7)).toBe(false)
    expect(await runExclusive(one, 'turns', job('one@6'), 6)).toBe(false)
    expect(await runExclusive(one, 'turns', job('one@8'), 8)).toBe(true)
    expect(ran).toEqual(['two@7', 'one@8'])
  })

  it('lets the job run once the session holding its lock is gone (a replica killed mid-run)', async () => {
    const pool = await open()
    const other = new pg.Client({ connectionString: db!.url })
    await other.connect()
    const got = await other.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtextextended('mnemo:job:job-c', 0)) AS ok")
    expect(got.rows[0]?.ok).toBe(true)
    expect(await runExclusive(pool, 'job-c', async () => {}, undefined)).toBe(false)
    // The session ends without unlocking, as a killed process's connection does.
    await other.end()
    expect(await runExclusive(pool, 'job-c', async () => {}, undefined)).toBe(true)
  })
})
