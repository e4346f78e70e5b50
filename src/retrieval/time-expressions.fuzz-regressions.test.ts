import { describe, expect, it } from 'vitest'
import { resolveRelativeTimes, zonedMidnight } from './time-expressions.js'

// Counterexamples found by `node scripts/fuzz.mjs` (target time), kept as unit tests: zones that
// skipped a whole calendar day (Samoa dropped 30 Dec 2011, Kiribati's Phoenix Islands 31 Dec 1994).
const iso = (ms: number): string => new Date(ms).toISOString()

describe('resolveRelativeTimes: fuzz regressions', () => {
  it('"3 days ago" on 1 Jan 2012 in Pacific/Apia is 29 Dec 2011, which lasted until 31 Dec began', () => {
    // Reference 2011-12-31T10:00Z is 2012-01-01 00:00 in Apia (UTC+14 since the skip; UTC-10 before).
    const ranges = resolveRelativeTimes(' 3 days ago', 1325325600000, 'Pacific/Apia')
    // Before the fix: from = to = 2011-12-29T10:00Z, an empty range.
    expect(ranges.map((r) => [r.text, iso(r.from), iso(r.to), r.granularity])).toEqual([
      ['3 days ago', '2011-12-29T10:00:00.000Z', '2011-12-30T10:00:00.000Z', 'day'],
    ])
  })

  it('"this friday" on 1 Jan 1995 in Pacific/Enderbury is 30 Dec 1994, up to the start of 1 Jan (31 Dec was skipped)', () => {
    const ranges = resolveRelativeTimes('this friday', 788871600000, 'Pacific/Enderbury')
    expect(ranges.map((r) => [iso(r.from), iso(r.to)])).toEqual([['1994-12-30T11:00:00.000Z', '1994-12-31T11:00:00.000Z']])
  })

  it('"yesterday" on 31 Dec 2011 in Apia names a day that never happened: no range, rather than an empty one', () => {
    expect(resolveRelativeTimes('yesterday', 1325239200000, 'Pacific/Apia')).toEqual([])
  })

  it('midnight of a skipped day is the start of the next day that exists; other days are unchanged', () => {
    expect(iso(zonedMidnight({ y: 2011, m: 12, d: 30 }, 'Pacific/Apia'))).toBe('2011-12-30T10:00:00.000Z')
    expect(iso(zonedMidnight({ y: 2011, m: 12, d: 31 }, 'Pacific/Apia'))).toBe('2011-12-30T10:00:00.000Z')
    expect(iso(zonedMidnight({ y: 2011, m: 12, d: 29 }, 'Pacific/Apia'))).toBe('2011-12-29T10:00:00.000Z')
    // A DST gap at midnight (Havana, 12 Mar 2023: 00:00 → 01:00): the day starts at 01:00 local.
    expect(iso(zonedMidnight({ y: 2023, m: 3, d: 12 }, 'America/Havana'))).toBe('2023-03-12T05:00:00.000Z')
    expect(iso(zonedMidnight({ y: 2023, m: 3, d: 26 }, 'Europe/Berlin'))).toBe('2023-03-25T23:00:00.000Z')
  })
})
