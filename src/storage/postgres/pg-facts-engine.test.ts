import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../core/clock.js'
import { MnemoError } from '../../core/errors.js'
import { answerValueText } from '../../core/facts/fact-answer.js'
import { MnemoEngine } from '../../engine/mnemo.js'
import { FACT_PARTS } from '../../testing/fact-dialects.js'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { T0 } from '../../testing/test-mnemo.js'
import { openSqliteStore } from '../sqlite/sqlite-store.js'
import type { Store } from '../store.js'
import { PgDb } from './pg-db.js'
import { openPostgresStoreWith } from './pg-store.js'

const TRIPS = fileURLToPath(new URL('../../../fixtures/facts/trips.jsonl', import.meta.url))

async function thrown(fn: () => unknown): Promise<MnemoError> {
  try {
    await fn()
  } catch (error) {
    if (MnemoError.is(error)) return error
    throw error
  }
  throw new Error('expected a MnemoError')
}

const pg = await withPostgres()

describe.skipIf(!pg)(`the engine's fact ledger on PostgreSQL, beside SQLite${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  const clock = createManualClock(T0)
  let stores: Store[] = []
  let engines: MnemoEngine[] = []

  beforeAll(async () => {
    stores = [
      openSqliteStore({ path: ':memory:' }, () => clock.now()),
      await openPostgresStoreWith(pg!.url, FACT_PARTS, { now: () => clock.now() }),
    ]
    engines = stores.map((store) => new MnemoEngine({ store, clock, cwd: '/work/demo-app', contextBudgetTokens: 2000, timeZone: 'UTC' }))
    for (const engine of engines) await engine.facts.importFile(TRIPS, 'trips')
  })
  afterAll(async () => {
    for (const s of stores) await s.close()
    await pg?.drop()
  })

  it('refuses a value of the wrong type naming record and field, storing nothing, as on SQLite', async () => {
    const errors = []
    for (const engine of engines) {
      const e = await thrown(() =>
        engine.facts.add('trips', [
          { id: 12, date: '2025-04-01', duration_days: 3 },
          { id: 13, date: '2025-04-02', duration_days: 'long' },
        ]),
      )
      errors.push({ code: e.code, message: e.message, details: e.details })
      expect(answerValueText(await engine.facts.query('from trips count'))).toBe('10')
    }
    expect(errors[1]).toEqual(errors[0])
    expect(errors[1]).toEqual({
      code: 'INVALID_INPUT',
      message: 'trips record 2.duration_days must be integer (got "long")',
      details: { path: 'trips record 2.duration_days' },
    })
  })

  it('answers and lists the schema (activity collections included) alike', async () => {
    const queries = [
      'from trips where country = "Japan" count',
      'from trips group by purpose share >= 25%',
      'from trips argmax duration_days return destination ties earliest date',
      'from trips compare sum cost_usd over date 2023 vs 2024',
    ]
    const [a, b] = await Promise.all(
      engines.map(async (engine) => ({
        answers: await Promise.all(queries.map((q) => engine.facts.query(q))),
        schema: await engine.facts.schema(),
      })),
    )
    expect(b).toEqual(a)
    expect(b!.answers[0]!.text).toBe('5 (over 5 records from 2023-02-10 to 2024-10-30)')
  })

  it('refuses an unknown collection or field alike, and gives every connection back (the spec is read in the query)', async () => {
    const errors = []
    for (const engine of engines) {
      const seen = []
      // More failures than the pool has connections: each must be released, or the last query would wait forever.
      for (let i = 0; i < 12; i++) {
        const e = await thrown(() => engine.facts.query(i % 2 === 0 ? 'from nowhere count' : 'from trips sum altitude'))
        seen.push({ code: e.code, message: e.message })
      }
      errors.push(seen)
      expect(answerValueText(await engine.facts.query('from trips count'))).toBe('10')
    }
    expect(errors[1]).toEqual(errors[0])
    expect(errors[0]![0]).toEqual({ code: 'NOT_FOUND', message: 'no collection nowhere in this project (collections: trips)' })
    expect(errors[0]![1]!.message).toMatch(/^query: trips has no field altitude/)
  })

  it('answers calendar periods alike, on date and datetime fields in a time zone with summer time', async () => {
    const at = createManualClock(Date.parse('2026-03-29T20:00:00Z'))
    const answers = []
    for (const store of stores) {
      const engine = new MnemoEngine({ store, clock: at, cwd: '/work/periods', contextBudgetTokens: 2000, timeZone: 'Europe/Berlin' })
      await engine.facts.add(
        'runs',
        ['2026-03-22T22:30:00Z', '2026-03-22T23:30:00Z', '2026-03-29T21:30:00Z', '2026-03-29T22:30:00Z'].map((when, i) => ({
          id: i + 1,
          when,
          day: when.slice(0, 10),
        })),
      )
      const row = []
      for (const q of [
        'from runs where when in this week count',
        'from runs where when in previous week count',
        'from runs where day in past 7 days count',
        'from runs compare count over day previous week vs this week',
      ])
        row.push(answerValueText(await engine.facts.query(q)))
      answers.push(row)
    }
    expect(answers[0]).toEqual(['2', '1', '2', 'same'])
    expect(answers[1]).toEqual(answers[0])
  })

  it('stops a query past its time limit with INVALID_INPUT naming the query', async () => {
    // 60,000 records written straight into the fact tables (the log is not what this test is about).
    const raw = PgDb.open(pg!.url)
    try {
      await raw.query(
        'test bulk',
        `INSERT INTO fact_records (id, project_root, user_id, collection, data, status, recorded_at, version, provenance, event_seq)
         SELECT 'bulk' || i, '/work/demo-app', NULL, 'readings', jsonb_build_object('n', i % 97, 'label', md5(i::text)), 'done', $1, 1, '{"source":"import"}', 0
         FROM generate_series(1, 60000) i`,
        [T0],
      )
      await raw.query(
        'test bulk',
        `INSERT INTO fact_schema (project_root, user_id, collection, event_seq, spec) VALUES ('/work/demo-app', NULL, 'readings', 0, $1)`,
        [
          JSON.stringify({
            name: 'readings',
            fields: [
              { name: 'n', type: 'integer' },
              { name: 'label', type: 'string' },
            ],
            identity: [],
          }),
        ],
      )
    } finally {
      await raw.close()
    }
    const e = await thrown(() => engines[1]!.facts.query('from readings group by label', { limits: { timeoutMs: 1 } }))
    expect(e.code).toBe('INVALID_INPUT')
    expect(e.details).toEqual({ path: 'query' })
    expect(e.message).toBe('query: stopped at its time limit before it finished')
    expect(answerValueText(await engines[1]!.facts.query('from readings where n = 3 count'))).toBe('619')
  })
})
