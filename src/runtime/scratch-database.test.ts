import { afterAll, describe, expect, it } from 'vitest'
import { MnemoError } from '../core/errors.js'
import { useScratch } from '../testing/scratch.js'
import { whyNoPostgres, withPostgres } from '../testing/postgres.js'
import { openMnemo } from './open-mnemo.js'
import { openScratchPostgres } from './scratch-database.js'

const { scratch } = useScratch()
const pg = await withPostgres()

describe.skipIf(!pg)(`mnemo on a scratch PostgreSQL store${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  afterAll(() => pg?.drop())

  it('remembers and recalls through the engine on its own database, which drop removes', async () => {
    // The test database's URL serves as the admin URL: its role may create databases.
    const made = await openScratchPostgres(pg!.url, () => 1_700_000_000_000)
    const m = openMnemo({ store: made.store, home: scratch(), env: {}, timeZone: 'UTC', cwd: '/' })
    try {
      expect(made.store.dialect).toBe('postgres')
      await m.engine.remember('we deploy the billing service with blue-green releases', {
        project: { root: '/p/billing', name: 'billing' },
      })
      await m.engine.remember('the docs site builds with Astro', { project: { root: '/p/billing', name: 'billing' } })
      const hits = await m.engine.recall('how do we deploy billing?', { limit: 5 })
      expect(hits[0]?.snippet).toContain('blue-green releases')
      // The fact ledger is part of the store: it answers (no collection is declared yet).
      expect(await made.store.facts.collections({ projectRoot: '/p/billing', user: null })).toEqual([])
    } finally {
      await m.close()
      await made.drop()
    }
    const { probe, withDatabase } = await import('../storage/postgres/pg-admin.js')
    expect((await probe(withDatabase(pg!.url, made.name))).ok).toBe(false)
  })

  it('refuses a URL that is not PostgreSQL, and names a server it cannot create a database on', async () => {
    await expect(openScratchPostgres('mysql://u:secret@h/db', Date.now)).rejects.toSatisfy((e) => MnemoError.is(e, 'INVALID_INPUT'))
    await expect(openScratchPostgres('postgres://nobody:pw@127.0.0.1:1/none', Date.now)).rejects.toSatisfy(
      (e) => MnemoError.is(e, 'STORE_UNAVAILABLE') && (e as Error).message.includes('nobody:***@127.0.0.1:1'),
    )
  })
})
