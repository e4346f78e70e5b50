import { describe, expect, it } from 'vitest'
import { rangeWords, resolveRelativeTimes, zonedMidnight } from './time-expressions.js'

// Monday 8 May 2023, 13:56 UTC (a LoCoMo session date).
const REF = Date.parse('2023-05-08T13:56:00Z')
const words = (text: string, tz = 'UTC') =>
  resolveRelativeTimes(text, REF, tz).map((r) => `${r.text} → ${rangeWords(r, tz)} (${r.granularity})`)

describe('resolveRelativeTimes', () => {
  it('anchors day phrases to the day they were written', () => {
    expect(words('I went to a support group yesterday')).toEqual(['yesterday → 7 May 2023 (day)'])
    expect(words('today and last night')).toEqual(['today → 8 May 2023 (day)', 'last night → 7 May 2023 (day)'])
    expect(words('3 days ago, and two days ago')).toEqual(['3 days ago → 5 May 2023 (day)', 'two days ago → 6 May 2023 (day)'])
    expect(words('last Friday')).toEqual(['last Friday → 5 May 2023 (day)'])
    expect(words('last Monday')).toEqual(['last Monday → 1 May 2023 (day)'])
  })
  it('reads weeks as calendar weeks from Monday, and weekends as Saturday–Sunday', () => {
    const [lastWeek] = resolveRelativeTimes('last week', REF, 'UTC')
    expect([lastWeek!.from, lastWeek!.to]).toEqual([Date.parse('2023-05-01T00:00:00Z'), Date.parse('2023-05-08T00:00:00Z')])
    const [weekend] = resolveRelativeTimes('this past weekend', REF, 'UTC')
    expect([weekend!.from, weekend!.to]).toEqual([Date.parse('2023-05-06T00:00:00Z'), Date.parse('2023-05-08T00:00:00Z')])
  })
  it('reads months and years', () => {
    expect(words('last May, in April, last month, last year, in 2021, 2 years ago')).toEqual([
      'last May → May 2022 (month)',
      'in April → April 2023 (month)',
      'last month → April 2023 (month)',
      'last year → 2022 (year)',
      'in 2021 → 2021 (year)',
      '2 years ago → 2021 (year)',
    ])
  })
  it('computes day boundaries in the given time zone', () => {
    // 8 May 2023 01:00 UTC is still 7 May in New York; "yesterday" there is 6 May.
    const early = Date.parse('2023-05-08T01:00:00Z')
    const [r] = resolveRelativeTimes('yesterday', early, 'America/New_York')
    expect(r!.from).toBe(zonedMidnight({ y: 2023, m: 5, d: 6 }, 'America/New_York'))
    expect(r!.from).toBe(Date.parse('2023-05-06T04:00:00Z'))
  })
  it('finds nothing in text without time words', () => {
    expect(resolveRelativeTimes('we use jose for JWT validation', REF, 'UTC')).toEqual([])
  })
})
