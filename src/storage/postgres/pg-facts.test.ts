import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseFactOp } from '../../capture/fact-events.js'
import { MnemoError } from '../../core/errors.js'
import { parseCsv } from '../../core/facts/csv.js'
import { difference, FactDialects, withoutSql } from '../../testing/fact-dialects.js'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { T0 } from '../../testing/test-mnemo.js'
import type { Derivation, StoredEvent } from '../store.js'

const TRIPS = fileURLToPath(new URL('../../../fixtures/facts/trips.jsonl', import.meta.url))
const SLEEP = fileURLToPath(new URL('../../../fixtures/facts/sleep.csv', import.meta.url))

/** Queries over the fixtures covering every verb, clause and tie rule of the language. */
const QUERIES = [
  'from trips count',
  'from trips status any count',
  'from trips status planned list',
  'from trips where country = "Japan" count',
  'from trips where country = "Peru" count',
  'from trips where date in 2024 sum cost_usd',
  'from trips where date in 2022 avg cost_usd',
  'from trips avg cost_usd',
  'from trips avg duration_days',
  'from trips min cost_usd',
  'from trips max destination',
  'from trips min date',
  'from trips distinct country',
  'from trips where purpose = "business" and (country = "Japan" or cost_usd < 800) count',
  'from trips where not country = "Japan" count',
  'from trips where country in ("Japan", "Italy") sum duration_days',
  'from trips where date between 2024-01-01 and 2024-06-30 list destination, cost_usd',
  'from trips where tags has "asia" count',
  'from trips where tags has "work" list',
  'from trips where destination contains "o" count',
  'from trips where destination contains "TOK" list id, destination',
  'from trips where rating is null count',
  'from trips where rating is not null avg rating',
  'from trips where duration_days >= 7 and duration_days <= 14 count',
  'from trips where cost_usd != 2500 count',
  'from trips list',
  'from trips list destination order by cost_usd desc limit 3',
  'from trips list order by destination',
  'from trips list date order by rating desc',
  'from trips argmax duration_days return destination',
  'from trips argmax duration_days return destination ties first',
  'from trips argmax duration_days return destination ties earliest date',
  'from trips argmax duration_days return destination ties latest date',
  'from trips argmin cost_usd',
  'from trips argmin duration_days return country ties all',
  'from trips group by country',
  'from trips group by country top 1',
  'from trips group by country top 2 ties first',
  'from trips group by purpose top 1 ties earliest date',
  'from trips group by purpose top 1 ties latest date',
  'from trips group by country sum cost_usd top 3',
  'from trips group by country avg duration_days all',
  'from trips group by country max cost_usd',
  'from trips group by purpose share >= 25%',
  'from trips group by purpose share > 10%',
  'from trips group by country sum cost_usd share >= 20%',
  'from trips group by tags',
  'from trips group by tags top 1',
  'from trips group by tags share >= 30%',
  'from trips group by year(date)',
  'from trips group by quarter(date) sum cost_usd',
  'from trips group by half(date)',
  'from trips group by month(date) top 2',
  'from trips group by week(date)',
  'from trips group by day(date) top 1 ties first',
  'from trips compare count over date 2023 vs 2024',
  'from trips compare sum cost_usd over date 2024-H1 vs 2024-H2',
  'from trips compare avg duration_days over date first year vs last year',
  'from trips compare max cost_usd over date 2024-Q1 vs 2024-Q3',
  'from trips compare count over date 2024-01 vs 2024-02',
  'from trips compare distinct country over date 2023-01-01..2023-12-31 vs 2024-01-01..2024-12-31',
  'from trips where country = "Japan" compare count over date first quarter vs last quarter',
  `from trips as of ${new Date(T0).toISOString()} max duration_days`,
  `from trips as of ${new Date(T0).toISOString().slice(0, 10)} list destination, duration_days`,
  'from trips as of 2020-01-01 count',
  'from trips where status = "planned" count',
  'from trips where status = "planned" or status = "done" group by status',
  'from sleep where wake_time < 07:00 count',
  'from sleep where weekend = true count',
  'from sleep where weekend != true avg duration_hours',
  'from sleep where bedtime >= 23:00 or bedtime < 03:00 count',
  'from sleep group by weekend',
  'from sleep group by quality share >= 25%',
  'from sleep argmax duration_hours return date ties earliest date',
  'from sleep list bedtime order by bedtime',
  'from sleep sum duration_hours',
  'from sleep avg duration_hours',
  'from trips group by duration_days top 3',
  'from trips group by duration_days sum cost_usd share >= 10%',
  'from trips distinct duration_days',
  'from trips where tags is null count',
  'from trips status any list id, status, destination order by destination limit 4',
  'from trips where id != "x" and status = "done" count',
  'from trips where transportation in ("train") and not (tags has "asia") list destination',
  'from trips where date >= 2024-06-01 argmin cost_usd return destination ties latest date',
  'from trips group by purpose avg cost_usd top 2 ties first',
  'from sleep argmax bedtime return date',
  'from sleep where bedtime between 22:00 and 23:59 list date',
  'from sleep group by month(date) avg duration_hours',
]

const pg = await withPostgres()

describe.skipIf(!pg)(`PostgreSQL fact ledger against SQLite's${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  let d: FactDialects
  let deleted: string
  let retracted: string

  beforeAll(async () => {
    d = await FactDialects.open(pg!.url, T0)
    const trips = readFileSync(TRIPS, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    await d.add('trips', trips, { provenance: { source: 'import', file: 'trips.jsonl' } })
    await d.add(
      'sleep',
      parseCsv(readFileSync(SLEEP, 'utf8'), 'sleep.csv').map((r) => r.record),
      { coerce: true, provenance: { source: 'import', file: 'sleep.csv' } },
    )
    d.tick(60_000)
    // A second mention of trip 4 updates it (a new version); a new field arrives with trip 11; two planned trips.
    await d.add('trips', [{ ...trips[3], duration_days: 15 }])
    await d.add('trips', [
      {
        id: 11,
        date: '2025-03-01',
        destination: 'Oslo',
        country: 'Norway',
        duration_days: 2,
        purpose: 'business',
        cost_usd: 600,
        transportation: 'flight',
        tags: [],
        rating: 4,
      },
      {
        id: 12,
        date: '2025-04-11',
        destination: 'Tokyo',
        country: 'Japan',
        duration_days: 9,
        purpose: 'vacation',
        cost_usd: 3100,
        transportation: 'flight',
        tags: ['asia'],
        rating: 5,
      },
    ])
    await d.add(
      'trips',
      [
        {
          id: 13,
          date: '2025-09-01',
          destination: 'Seoul',
          country: 'Korea',
          duration_days: 5,
          purpose: 'business',
          cost_usd: 1500,
          transportation: 'flight',
          tags: ['asia', 'work'],
        },
      ],
      {
        status: 'planned',
        provenance: { source: 'agent', session: 'ses_x' },
      },
    )
    d.tick(60_000)
    retracted = (await d.pgFacts.byIdentity(d.scope, 'trips', '[2]'))!.id
    await d.write([{ op: 'fact', action: 'retract', collection: 'trips', id: retracted!, at: T0 + 120_000 }])
    d.tick(60_000)
    deleted = (await d.pgFacts.byIdentity(d.scope, 'trips', '[6]'))!.id
    await d.delete(deleted!)
  })
  afterAll(async () => {
    await d?.close()
    await pg?.drop()
  })

  it('answers every query of the language as SQLite does: value, groups, comparison, record ids and coverage', async () => {
    const diffs: string[] = []
    for (const q of QUERIES) {
      const { sqlite, pg: p } = await d.query(q)
      const diff = difference(withoutSql(sqlite), withoutSql(p))
      if (diff !== undefined) diffs.push(`${q}: ${diff}`)
    }
    expect(diffs).toEqual([])
    // The comparison can fail: the answers are not all alike, and not all empty.
    const counts = await Promise.all(['from trips count', 'from sleep count'].map((q) => d.query(q)))
    expect(counts.map((c) => c.pg.value)).toEqual([10, 5])
  })

  it('reads collections, stats, records, history and tombstones as SQLite does', async () => {
    const s = d.sqlite.facts
    const p = d.pgFacts
    const same = async (what: string, a: Promise<unknown>, b: Promise<unknown>): Promise<void> => {
      expect(difference(await a, await b), what).toBeUndefined()
    }
    await same('collections', s.collections(d.scope), p.collections(d.scope))
    const stats = async (f: typeof s) => Object.fromEntries(await f.collectionStats(d.scope, 3))
    await same('collectionStats', stats(s), stats(p))
    const page = { state: 'current', offset: 2, limit: 5 } as const
    await same('list', s.list(d.scope, 'trips', page), p.list(d.scope, 'trips', page))
    // Every state, sorted by a number, a text (bytewise), a date and a field with nulls (rating), both ways.
    for (const state of ['current', 'retracted', 'superseded'] as const)
      for (const sort of [undefined, 'cost_usd', 'destination', 'date', 'rating'])
        for (const dir of ['asc', 'desc'] as const) {
          const o = { state, dir, offset: 0, limit: 100, ...(sort !== undefined ? { sort } : {}) }
          await same(`list ${state} ${sort} ${dir}`, s.list(d.scope, 'trips', o), p.list(d.scope, 'trips', o))
        }
    const byRating = (await p.list(d.scope, 'trips', { state: 'current', sort: 'rating', dir: 'desc', offset: 0, limit: 100 })).records
    // Descending: the highest rating first, records without one last.
    expect(typeof byRating[0]?.values['rating']).toBe('number')
    expect(byRating.at(-1)?.values['rating'] ?? null).toBeNull()
    expect((await p.list(d.scope, 'trips', { state: 'superseded', offset: 0, limit: 100 })).records.map((r) => r.version)).toContain(1)
    expect((await p.list(d.scope, 'trips', { state: 'retracted', offset: 0, limit: 100 })).records.map((r) => r.id)).toEqual([retracted])
    await same('tombstones', s.tombstones(d.scope, 'trips', 0, 10), p.tombstones(d.scope, 'trips', 0, 10))
    expect(await p.tombstones(d.scope, 'trips', 0, 10)).toEqual({ tombstones: [{ id: deleted, deletedAt: T0 + 180_000 }], total: 1 })
    const ids = (await p.list(d.scope, 'trips', { state: 'current', offset: 0, limit: 100 })).records.map((r) => r.id)
    for (const id of [...ids, retracted, deleted]) {
      await same(`get ${id}`, s.get(d.scope, id), p.get(d.scope, id))
      await same(`history ${id}`, s.history(d.scope, id), p.history(d.scope, id))
      await same(`eventSeqs ${id}`, s.eventSeqs(d.scope, id), p.eventSeqs(d.scope, id))
      await same(`tombstone ${id}`, s.tombstone(d.scope, id), p.tombstone(d.scope, id))
    }
    const trip4 = (await p.history(d.scope, (await d.query('from trips where external_id = 4 list')).pg.records[0]!)).map(
      (v) => v.values['duration_days'],
    )
    expect(trip4).toEqual([14, 15])
    expect((await p.get(d.scope, retracted))?.retractedAt).toBe(T0 + 120_000)
    expect(await p.get(d.scope, deleted)).toBeUndefined()
    expect(await p.tombstone(d.scope, deleted)).toEqual({ collection: 'trips', deletedAt: T0 + 180_000 })
    const identity = '[6]'
    await same('tombstoneByIdentity', s.tombstoneByIdentity(d.scope, 'trips', identity), p.tombstoneByIdentity(d.scope, 'trips', identity))
    expect(await p.tombstoneByIdentity(d.scope, 'trips', identity)).toEqual({ id: deleted, deletedAt: T0 + 180_000 })
    // Another user's scope sees none of it.
    expect(await p.collections({ projectRoot: d.scope.projectRoot, user: 'bob' })).toEqual([])
    expect(await p.get({ projectRoot: d.scope.projectRoot, user: 'bob' }, ids[0]!)).toBeUndefined()
  })

  it('refuses a collection above maxRows and a query past its time limit, naming the query', async () => {
    const { spec, query } = await d.resolve('from trips count')
    const refused = await d.pgFacts.query(d.scope, spec, query, { maxRows: 5, timeoutMs: 1000 }).catch((e: unknown) => e)
    const onSqlite = await d.sqlite.facts.query(d.scope, spec, query, { maxRows: 5, timeoutMs: 1000 }).catch((e: unknown) => e)
    expect(MnemoError.is(refused, 'INVALID_INPUT') && refused.details.path).toBe('query')
    // Retracted and planned records count toward the limit, as on SQLite.
    expect((refused as Error).message).toBe('query: trips holds 12 records, above the query limit of 5')
    expect((onSqlite as Error).message).toBe((refused as Error).message)
    // 60,000 records, then a grouping under a 1 ms limit: the server cancels it (statement_timeout).
    await d.pg.query(
      'test bulk',
      `INSERT INTO fact_records (id, project_root, user_id, collection, data, status, recorded_at, version, provenance, event_seq)
       SELECT 'bulk' || i, $1, NULL, 'bulk', jsonb_build_object('n', i % 97, 'label', md5(i::text)), 'done', $2, 1, '{"source":"import"}', 0
       FROM generate_series(1, 60000) i`,
      [d.scope.projectRoot, T0],
    )
    await d.pg.query(
      'test bulk',
      `INSERT INTO fact_schema (project_root, user_id, collection, event_seq, spec) VALUES ($1, NULL, 'bulk', 0, $2)`,
      [
        d.scope.projectRoot,
        JSON.stringify({
          name: 'bulk',
          fields: [
            { name: 'n', type: 'integer' },
            { name: 'label', type: 'string' },
          ],
          identity: [],
        }),
      ],
    )
    const bulk = (await d.pgFacts.collections(d.scope)).find((c) => c.name === 'bulk')!
    const slow = {
      collection: 'bulk',
      verb: { verb: 'group', key: { field: 'label' }, measure: { fn: 'count' }, pick: { all: true } },
    } as const
    const late = await d.pgFacts.query(d.scope, bulk, slow, { maxRows: 100_000, timeoutMs: 1 }).catch((e: unknown) => e)
    expect(MnemoError.is(late, 'INVALID_INPUT') && late.details.path).toBe('query')
    expect((late as Error).message).toBe('query: stopped at its time limit before it finished')
    // The same query within a generous limit answers.
    const ok = await d.pgFacts.query(d.scope, bulk, slow, { maxRows: 100_000, timeoutMs: 60_000 })
    expect(ok.matched).toBe(60_000)
  })

  it("keeps a user's records to that user's scope, as SQLite does", async () => {
    const shared = d.scope
    try {
      d.scope = { projectRoot: shared.projectRoot, user: 'alice' }
      await d.add('trips', [{ id: 1, date: '2025-01-05', destination: 'Nara', country: 'Japan', duration_days: 2 }])
      await d.add('books', [{ title: 'Dune', pages: 612 }])
      const diffs: string[] = []
      for (const q of ['from trips count', 'from trips list', 'from books sum pages', 'from trips group by country']) {
        const { sqlite, pg: p } = await d.query(q)
        const diff = difference(withoutSql(sqlite), withoutSql(p))
        if (diff !== undefined) diffs.push(`${q}: ${diff}`)
      }
      expect(diffs).toEqual([])
      expect((await d.query('from trips count')).pg.value).toBe(1)
      expect((await d.pgFacts.collections(d.scope)).map((c) => c.name)).toEqual(['books', 'trips'])
    } finally {
      d.scope = shared
    }
    // The shared scope sees none of alice's.
    expect((await d.pgFacts.collections(d.scope)).map((c) => c.name)).not.toContain('books')
    expect((await d.query('from trips where destination = "Nara" count')).pg.value).toBe(0)
  })

  it('answers, without failing, over a value of another type than its field (an imported event is checked for shape only)', async () => {
    await d.add('gauges', [
      { day: '2024-03-01', reading: 10 },
      { day: '2024-05-01', reading: 3 },
    ])
    await d.write([
      {
        op: 'fact',
        action: 'assert',
        collection: 'gauges',
        id: 'fct_odd',
        values: { day: 7, reading: 'lots' },
        status: 'done',
        provenance: { source: 'import' },
      },
    ])
    const answers = await Promise.all(
      [
        'from gauges where reading > 5 sum reading',
        'from gauges avg reading',
        'from gauges group by quarter(day)',
        'from gauges list order by reading',
        'from gauges argmax reading',
      ].map(async (q) => (await d.query(q)).pg),
    )
    // The text is no number: sums, filters and extremes pass over it (SQLite's type order would also count 'lots' > 5).
    expect(answers.map((a) => a.value)).toEqual([
      10,
      6.5,
      ['2024-Q1', '2024-Q2'],
      [{ id: 'fct_odd', day: 7, reading: 'lots' }, expect.objectContaining({ reading: 3 }), expect.objectContaining({ reading: 10 })],
      expect.stringMatching(/^fct_/),
    ])
  })

  it('derives the same ledger again on rebuild from the log, on both dialects', async () => {
    const before = await Promise.all(QUERIES.map(async (q) => withoutSql((await d.query(q)).pg)))
    const derive = (e: StoredEvent): Derivation => {
      const op = parseFactOp(e.payload)
      return { observations: [], ...(op ? { facts: [op] } : {}) }
    }
    const a = await d.sqlite.rebuild(derive)
    const b = await d.postgres.rebuild(derive)
    expect(b).toEqual(a)
    const diffs: string[] = []
    for (const [i, q] of QUERIES.entries()) {
      const { sqlite, pg: p } = await d.query(q)
      const diff = difference(withoutSql(sqlite), withoutSql(p)) ?? difference(before[i], withoutSql(p))
      if (diff !== undefined) diffs.push(`${q}: ${diff}`)
    }
    expect(diffs).toEqual([])
  })

  it('keeps values as parameters: a quote in a value is a value, and explain shows the SQL', async () => {
    const { sqlite, pg: p } = await d.query('from trips where destination = "Tokyo\' OR 1=1 --" count')
    expect(p.value).toBe(0)
    expect(sqlite.value).toBe(0)
    expect(p.sql.some((s) => s.sql.includes('fact_records') && s.params.includes("Tokyo' OR 1=1 --"))).toBe(true)
    expect(p.sql.every((s) => !s.sql.includes('Tokyo'))).toBe(true)
  })
})
