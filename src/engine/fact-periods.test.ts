import { describe, expect, it } from 'vitest'
import { createTestEngine } from '../testing/test-mnemo.js'

// Calendar periods in queries, read on the engine's (injected) clock in its time zone.

async function withDates(timeZone: string, dates: string[]) {
  const t = createTestEngine({ timeZone })
  await t.engine.facts.add(
    'trips',
    dates.map((date, i) => ({ id: i + 1, date })),
  )
  return t
}

async function withTimes(timeZone: string, times: string[]) {
  const t = createTestEngine({ timeZone })
  await t.engine.facts.declare({
    name: 'runs',
    fields: [
      { name: 'at', type: 'datetime' },
      { name: 'n', type: 'integer' },
    ],
    identity: ['n'],
    timeField: 'at',
  })
  await t.engine.facts.add(
    'runs',
    times.map((at, n) => ({ at, n })),
  )
  return t
}

const count = async (t: ReturnType<typeof createTestEngine>, q: string): Promise<unknown> => (await t.engine.facts.query(q)).value

describe('calendar periods on the engine clock', () => {
  it('reads "this year" in the user’s time zone across the year change', async () => {
    const t = await withDates('America/New_York', ['2024-12-31', '2025-01-01', '2025-12-31', '2026-01-01'])
    // 2026-01-01T04:30Z is 23:30 on 2025-12-31 in New York: still 2025 there.
    t.clock.set(Date.parse('2026-01-01T04:30:00Z'))
    expect(await count(t, 'from trips where date in this year count')).toBe(2)
    expect(await count(t, 'from trips where date in previous year count')).toBe(1)
    const cmp = await t.engine.facts.query('from trips compare count over date previous year vs this year')
    expect(cmp.comparison).toMatchObject({
      a: { label: 'previous year (2024-01-01..2024-12-31)', value: 1 },
      b: { label: 'this year (2025-01-01..2025-12-31)', value: 2 },
      direction: 'increase',
    })
    // An hour later it is 2026 in New York.
    t.clock.advance(3_600_000)
    expect(await count(t, 'from trips where date in this year count')).toBe(1)
    expect(await count(t, 'from trips where date in previous year count')).toBe(2)
  })

  it('starts the week on Monday at local midnight', async () => {
    const t = await withDates('Europe/Berlin', ['2025-06-08', '2025-06-09', '2025-06-15', '2025-06-16'])
    // 2025-06-08T22:10Z is Monday 2025-06-09 00:10 in Berlin (UTC+2).
    t.clock.set(Date.parse('2025-06-08T22:10:00Z'))
    expect(await count(t, 'from trips where date in this week count')).toBe(2)
    expect(await count(t, 'from trips where date in previous week count')).toBe(1)
    // Ten minutes earlier it was still Sunday there: the week before.
    t.clock.set(Date.parse('2025-06-08T21:59:00Z'))
    expect(await count(t, 'from trips where date in this week count')).toBe(1)
  })

  it('ends a month on its last day, and counts the past N days back from today', async () => {
    const t = await withDates('UTC', ['2024-12-01', '2024-12-31', '2025-01-01', '2025-01-24', '2025-01-25', '2025-01-31'])
    t.clock.set(Date.parse('2025-01-31T12:00:00Z'))
    expect(await count(t, 'from trips where date in previous month count')).toBe(2)
    expect(await count(t, 'from trips where date in this month count')).toBe(4)
    expect(await count(t, 'from trips where date in past 7 days count')).toBe(2)
    expect(await count(t, 'from trips where date in past 31 days count')).toBe(4)
    expect(await count(t, 'from trips where date in past 32 days count')).toBe(5)
    // A month later: February 2025 holds none of them, and says so.
    t.clock.set(Date.parse('2025-02-28T12:00:00Z'))
    const feb = await t.engine.facts.query('from trips where date in this month count')
    expect(feb.value).toBe(0)
    expect(feb.empty).toBe(true)
  })

  it('bounds a datetime field by local midnights, across the start of summer time', async () => {
    // Berlin moves from UTC+1 to UTC+2 on Sunday 2026-03-29: that week starts at 2026-03-22T23:00Z and ends at
    // 2026-03-29T22:00Z (Monday 00:00 CEST).
    const t = await withTimes('Europe/Berlin', [
      '2026-03-22T22:30:00Z', // Sunday 23:30 CET: the week before
      '2026-03-22T23:30:00Z', // Monday 00:30 CET
      '2026-03-29T21:30:00Z', // Sunday 23:30 CEST
      '2026-03-29T22:30:00Z', // Monday 00:30 CEST: the week after
    ])
    t.clock.set(Date.parse('2026-03-29T20:00:00Z'))
    expect(await count(t, 'from runs where at in this week count')).toBe(2)
    expect(await count(t, 'from runs where at in previous week count')).toBe(1)
    const explained = await t.engine.facts.query('from runs where at in this week count', { explain: true })
    const params = JSON.stringify(explained.sql)
    expect(params).toContain('2026-03-22T23:00:00.000Z')
    expect(params).toContain('2026-03-29T22:00:00.000Z')
    // The day summer time starts has 23 hours: it starts at 23:00Z the day before and ends at 22:00Z.
    expect(await count(t, 'from runs where at in this day count')).toBe(1)
    expect(await count(t, 'from runs where at in past 2 days count')).toBe(1)
  })

  it('refuses "last UNIT" outside compare, saying what to write instead', async () => {
    const t = await withDates('UTC', ['2025-06-01'])
    await expect(t.engine.facts.query('from trips where date in last week count')).rejects.toThrow(
      /the last week holding records, for compare; give a period \(.*previous week/,
    )
  })
})
