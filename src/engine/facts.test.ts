import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { MnemoError } from '../core/errors.js'
import { answerValueText } from '../core/facts/fact-answer.js'
import { createTestEngine, T0 } from '../testing/test-mnemo.js'

const TRIPS = fileURLToPath(new URL('../../fixtures/facts/trips.jsonl', import.meta.url))
const SLEEP = fileURLToPath(new URL('../../fixtures/facts/sleep.csv', import.meta.url))

async function withTrips() {
  const t = createTestEngine()
  await t.engine.facts.importFile(TRIPS, 'trips')
  return t
}

async function value(t: ReturnType<typeof createTestEngine>, q: string): Promise<string> {
  return answerValueText(await t.engine.facts.query(q))
}

async function thrown(fn: () => unknown): Promise<MnemoError> {
  try {
    await fn()
  } catch (error) {
    if (MnemoError.is(error)) return error
    throw error
  }
  throw new Error('expected a MnemoError')
}

describe('typed collections', () => {
  it('infers a collection with field types, identity and time field from imported records', async () => {
    const t = await withTrips()
    const [trips] = await t.engine.facts.schema()
    expect(trips).toMatchObject({
      name: 'trips',
      identity: ['external_id'],
      timeField: 'date',
      records: 10,
      from: '2023-02-10',
      to: '2025-02-02',
    })
    const types = Object.fromEntries(trips!.fields.map((f) => [f.name, f.type === 'list' ? `list:${f.items}` : f.type]))
    expect(types).toEqual({
      external_id: 'integer',
      date: 'date',
      destination: 'string',
      country: 'string',
      duration_days: 'integer',
      purpose: 'string',
      cost_usd: 'money',
      transportation: 'string',
      tags: 'list:string',
    })
    expect(trips!.examples['destination']).toEqual(['Tokyo', 'Paris', 'Osaka'])
  })

  it('reads CSV cells by the inferred types', async () => {
    const t = createTestEngine()
    await t.engine.facts.importFile(SLEEP, 'sleep')
    const [sleep] = await t.engine.facts.schema()
    expect(Object.fromEntries(sleep!.fields.map((f) => [f.name, f.type]))).toEqual({
      date: 'date',
      bedtime: 'time',
      wake_time: 'time',
      duration_hours: 'number',
      quality: 'string',
      weekend: 'boolean',
    })
    expect(await value(t, 'from sleep where wake_time < 07:00 count')).toBe('2')
    expect(await value(t, 'from sleep where weekend = true count')).toBe('1')
    expect(await value(t, 'from sleep where bedtime >= 23:00 or bedtime < 03:00 count')).toBe('4')
  })

  it('updates a record with the same identity instead of duplicating it, keeping its history', async () => {
    const t = await withTrips()
    t.clock.advance(60_000)
    const again = await t.engine.facts.add('trips', {
      id: 4,
      date: '2024-01-15',
      destination: 'Tokyo',
      country: 'Japan',
      duration_days: 15,
      purpose: 'vacation',
      cost_usd: 2500,
      transportation: 'flight',
      tags: ['asia'],
    })
    expect(again.records[0]!.outcome).toBe('updated')
    expect(await value(t, 'from trips count')).toBe('10')
    const shown = await t.engine.facts.show(again.records[0]!.id)
    expect('record' in shown && shown.history.map((v) => v.values['duration_days'])).toEqual([14, 15])
    // As recorded before the change, the old value answers.
    expect(await value(t, `from trips as of ${new Date(T0).toISOString()} max duration_days`)).toBe('14')
    expect(await value(t, 'from trips max duration_days')).toBe('15')
    const same = await t.engine.facts.add('trips', {
      id: 4,
      date: '2024-01-15',
      destination: 'Tokyo',
      country: 'Japan',
      duration_days: 15,
      purpose: 'vacation',
      cost_usd: 2500,
      transportation: 'flight',
      tags: ['asia'],
    })
    expect(same.records[0]!.outcome).toBe('unchanged')
  })

  it('adds fields a later record brings, and refuses a value of the wrong type naming record and field', async () => {
    const t = await withTrips()
    await t.engine.facts.add('trips', {
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
    })
    expect((await t.engine.facts.schema())[0]!.fields.map((f) => f.name)).toContain('rating')
    const e = await thrown(() =>
      t.engine.facts.add('trips', [
        { id: 12, date: '2025-04-01', duration_days: 3 },
        { id: 13, date: '2025-04-02', duration_days: 'long' },
      ]),
    )
    expect(e.code).toBe('INVALID_INPUT')
    expect(e.message).toBe('trips record 2.duration_days must be integer (got "long")')
    expect(e.details).toEqual({ path: 'trips record 2.duration_days' })
    // Nothing of the refused batch is stored.
    expect(await value(t, 'from trips count')).toBe('11')
  })

  it('refuses two records of one write with the same identity and other values (identity clash)', async () => {
    const t = await withTrips()
    const e = await thrown(() =>
      t.engine.facts.add('trips', [
        { id: 20, date: '2025-01-01', duration_days: 1 },
        { id: 20, date: '2025-01-02', duration_days: 2 },
      ]),
    )
    expect(e.code).toBe('CONFLICT')
    expect(e.message).toMatch(/^trips record 2 has the identity \(external_id\) = \[20\] of trips record 1, with other values$/)
    expect(await value(t, 'from trips count')).toBe('10')
  })

  it('refuses an identity clash on update, naming the other record', async () => {
    const t = await withTrips()
    const id = (await t.engine.facts.query('from trips where external_id = 3 list')).records[0]!
    const other = (await t.engine.facts.query('from trips where external_id = 4 list')).records[0]!
    const e = await thrown(() => t.engine.facts.update(id, { external_id: 4 }))
    expect(e.code).toBe('CONFLICT')
    expect(e.details).toEqual({ kind: 'record', id: other })
  })

  it('names the file line of a bad CSV cell', async () => {
    const t = createTestEngine()
    await t.engine.facts.declare({
      name: 'sleep',
      fields: [
        { name: 'date', type: 'date' },
        { name: 'duration_hours', type: 'integer' },
      ],
    })
    const e = await thrown(() => t.engine.facts.importFile(SLEEP, 'sleep'))
    // The fields the declaration lacks are added; a cell the declared type cannot read is refused with its line.
    expect(e.message).toBe('sleep.csv line 2.duration_hours must be integer (got "7.67")')
    expect((await t.engine.facts.schema())[0]!.fields.map((f) => f.name)).toEqual(['date', 'duration_hours'])
  })
})

describe('fact queries', () => {
  it('counts, sums and averages with filters, windows and list membership', async () => {
    const t = await withTrips()
    expect(await value(t, 'from trips where purpose = "business" count')).toBe('4')
    expect(await value(t, 'from trips where purpose = "business" avg duration_days')).toBe('4')
    expect(await value(t, 'from trips where date in 2024 sum cost_usd')).toBe('10050.75')
    expect(await value(t, 'from trips where date between 2024-10-01 and 2024-12-31 count')).toBe('2')
    expect(await value(t, 'from trips where date in 2024-Q4 count')).toBe('2')
    expect(await value(t, 'from trips where date in 2024-H1 count')).toBe('3')
    expect(await value(t, 'from trips where tags has "work" and transportation = "flight" count')).toBe('3')
    expect(await value(t, 'from trips where country in ("Japan", "Italy") and not (purpose = "business") count')).toBe('3')
    expect(await value(t, 'from trips where duration_days >= 14 count')).toBe('2')
    expect(await value(t, 'from trips distinct country')).toBe('6')
  })

  it('answers shares with a threshold, the mode and argmax with its tie rule', async () => {
    const t = await withTrips()
    expect(await value(t, 'from trips group by purpose share >= 40%')).toBe('["business","vacation"]')
    expect(await value(t, 'from trips group by purpose share > 40%')).toBe('[]')
    expect(await value(t, 'from trips group by country top 1')).toBe('["Japan"]')
    expect(await value(t, 'from trips group by country sum cost_usd top 1')).toBe('["Japan"]')
    // Paris and Tokyo (2024) both lasted 14 days.
    expect((await t.engine.facts.query('from trips argmax duration_days return destination')).value).toEqual(['Paris', 'Tokyo'])
    expect(await value(t, 'from trips argmax duration_days return destination ties earliest date')).toBe('Paris')
    expect(await value(t, 'from trips argmax duration_days return destination ties latest date')).toBe('Tokyo')
    expect(await value(t, 'from trips argmin cost_usd return destination')).toBe('Berlin')
    expect(await value(t, 'from trips group by year(date) count')).toBe('["2024","2023","2025"]')
  })

  it('compares two periods', async () => {
    const t = await withTrips()
    const a = await t.engine.facts.query('from trips compare count over date 2023 vs 2024')
    expect(a.value).toBe('increase')
    expect(a.comparison).toMatchObject({ a: { value: 3 }, b: { value: 6 }, delta: 3, ratio: 2 })
    expect(await value(t, 'from trips compare sum cost_usd over date 2024-H1 vs 2024-H2')).toBe('increase')
    expect(await value(t, 'from trips compare count over date first year vs last year')).toBe('decrease')
  })

  it('carries the contributing records and coverage, and says when nothing matched', async () => {
    const t = await withTrips()
    const a = await t.engine.facts.query('from trips where country = "Japan" count')
    expect(a.records).toHaveLength(5)
    expect(a.coverage).toMatchObject({
      matched: 5,
      from: '2023-02-10',
      to: '2024-10-30',
      sources: ['import'],
      statuses: 'done',
      collection: { records: 10, from: '2023-02-10', to: '2025-02-02' },
    })
    const none = await t.engine.facts.query('from trips where country = "Peru" count')
    expect(none.empty).toBe(true)
    expect(none.text).toBe('0: no trips record matches the query (trips holds 10 done records from 2023-02-10 to 2025-02-02)')
    const avg = await t.engine.facts.query('from trips where date in 2022 avg cost_usd')
    expect(avg.value).toBeNull()
    expect(avg.empty).toBe(true)
  })

  it('explains a query with parameterised SQL: values never appear in its text', async () => {
    const t = await withTrips()
    const a = await t.engine.facts.query('from trips where destination = "Tokyo\' OR 1=1 --" count', { explain: true })
    expect(a.value).toBe(0)
    expect(a.sql!.length).toBeGreaterThan(0)
    for (const s of a.sql!) expect(s.sql).not.toContain('Tokyo')
    expect(JSON.stringify(a.sql![1]!.params)).toContain("Tokyo' OR 1=1 --")
  })

  it('counts done records unless a status is asked for', async () => {
    const t = await withTrips()
    await t.engine.facts.add(
      'trips',
      { id: 30, date: '2025-09-01', destination: 'Seoul', country: 'Korea', duration_days: 5 },
      { status: 'planned' },
    )
    expect(await value(t, 'from trips count')).toBe('10')
    expect(await value(t, 'from trips status planned count')).toBe('1')
    expect(await value(t, 'from trips status any count')).toBe('11')
    expect(await value(t, 'from trips where status = "planned" list destination')).toContain('Seoul')
  })

  it('names the problem of a bad query', async () => {
    const t = await withTrips()
    expect((await thrown(() => t.engine.facts.query('from trips where price_eur > 3 count'))).message).toMatch(
      /^query: trips has no field price_eur \(fields: external_id, date/,
    )
    expect(await thrown(() => t.engine.facts.query('from flights count'))).toMatchObject({
      code: 'NOT_FOUND',
      details: { kind: 'collection', id: 'flights' },
    })
    expect((await thrown(() => t.engine.facts.query('from trips where duration_days = "long" count'))).message).toBe(
      'query: duration_days is integer, but "long" is a string',
    )
    expect((await thrown(() => t.engine.facts.query('from trips avg destination'))).message).toBe(
      'query: avg needs integer or number or money (destination is string)',
    )
    expect((await thrown(() => t.engine.facts.query('from trips where count'))).message).toBe(
      'query: expected a comparison after count (=, !=, <, <=, >, >=, between, in, has, contains, is null), found the end of the query',
    )
  })

  it('refuses a query over more records than its row limit, and stops one past its time limit', async () => {
    const t = await withTrips()
    expect((await thrown(() => t.engine.facts.query('from trips count', { limits: { maxRows: 5 } }))).message).toBe(
      'query: trips holds 10 records, above the query limit of 5',
    )
    // The limit is checked every 64th row: enough rows that it is checked.
    await t.engine.facts.add(
      'trips',
      Array.from({ length: 130 }, (_, i) => ({ id: 100 + i, date: '2025-05-01', destination: 'Nowhere' })),
    )
    // Every read of the clock moves it 1 s on: the query passes its 100 ms limit at its first check.
    const now = t.clock.now
    t.clock.now = () => {
      t.clock.advance(1000)
      return now.call(t.clock)
    }
    expect((await thrown(() => t.engine.facts.query('from trips count', { limits: { timeoutMs: 100 } }))).message).toBe(
      'query: stopped at its time limit before it finished',
    )
  })
})

describe('facts in the log', () => {
  it('re-derives every collection and record on rebuild, and carries them through export and import', async () => {
    const t = await withTrips()
    const id = (await t.engine.facts.query('from trips where external_id = 2 list')).records[0]!
    t.clock.advance(1000)
    await t.engine.facts.update(id, { duration_days: 15 })
    const queries = [
      'from trips count',
      'from trips group by purpose share >= 25%',
      'from trips argmax duration_days return destination ties earliest date',
      'from trips compare count over date 2023 vs 2024',
    ]
    const before = queries.map((q) => t.engine.facts.query(q))
    const history = await t.engine.facts.show(id)
    await t.engine.rebuild()
    expect(queries.map((q) => t.engine.facts.query(q))).toEqual(before)
    expect(await t.engine.facts.show(id)).toEqual(history)
    const lines: string[] = []
    await t.engine.exportJsonl((line) => lines.push(line))
    const other = createTestEngine()
    await other.engine.importExport(lines.join('\n'), 'export.jsonl')
    expect(queries.map((q) => other.engine.facts.query(q))).toEqual(before)
    expect(await other.engine.facts.show(id)).toEqual(history)
  })

  it('deletes a record for real: gone from queries, history and the export, remembered only as a deletion', async () => {
    const t = await withTrips()
    const id = (await t.engine.facts.query('from trips where destination = "Lisbon" list')).records[0]!
    await t.engine.facts.delete(id)
    expect(await value(t, 'from trips count')).toBe('9')
    expect(await value(t, 'from trips where destination = "Lisbon" count')).toBe('0')
    expect(await t.engine.facts.show(id)).toEqual({
      deleted: { id, collection: 'trips', deletedAt: T0, text: 'you asked me to forget that on 2025-06-14' },
    })
    const lines: string[] = []
    await t.engine.exportJsonl((line) => lines.push(line))
    expect(lines.join('\n')).not.toContain('Lisbon')
    await t.engine.rebuild()
    expect(await value(t, 'from trips count')).toBe('9')
    expect((await t.engine.facts.schema())[0]!.examples['destination']).not.toContain('Lisbon')
    expect((await t.store.readEvents(0, 1000)).some((e) => JSON.stringify(e.payload).includes('Lisbon'))).toBe(false)
  })

  it("keeps users apart: one user never reads another user's facts", async () => {
    const t = await withTrips()
    const bob = t.engine.scoped({ user: 'bob' })
    expect((await thrown(() => bob.facts.query('from trips count'))).code).toBe('NOT_FOUND')
    await bob.facts.add('trips', { id: 1, date: '2024-01-01', destination: 'Lima' })
    expect(answerValueText(await bob.facts.query('from trips count'))).toBe('1')
    expect(await value(t, 'from trips count')).toBe('10')
    const lisbon = (await t.engine.facts.query('from trips where destination = "Lisbon" list')).records[0]!
    expect((await thrown(() => bob.facts.delete(lisbon))).code).toBe('NOT_FOUND')
  })
})
