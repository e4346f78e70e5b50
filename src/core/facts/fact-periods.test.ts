import { describe, expect, it } from 'vitest'
import { calendarRange } from './fact-periods.js'
import { parseFactQuery } from './fact-query.js'

const range = (text: string, today: string) => {
  const q = parseFactQuery(`from trips where date in ${text} count`)
  const w = q.where as { op: 'within'; period: Parameters<typeof calendarRange>[0] }
  return calendarRange(w.period, today)
}

describe('calendar periods', () => {
  it('parses this / previous UNIT and past N days', () => {
    expect(parseFactQuery('from t where d in this week count').where).toEqual({
      field: 'd',
      op: 'within',
      period: { calendar: 'this', unit: 'week' },
    })
    expect(parseFactQuery('from t where d in previous month count').where).toMatchObject({
      period: { calendar: 'previous', unit: 'month' },
    })
    expect(parseFactQuery('from t where d in past 7 days count').where).toMatchObject({ period: { past: 7, unit: 'day' } })
    expect(parseFactQuery('from t compare count over d previous year vs this year').verb).toMatchObject({
      a: { calendar: 'previous', unit: 'year' },
      b: { calendar: 'this', unit: 'year' },
    })
    expect(() => parseFactQuery('from t where d in past 0 days count')).toThrow(/a number of days \(1–3660\) after "past"/)
    expect(() => parseFactQuery('from t where d in past 7 weeks count')).toThrow(/"days" after "past N"/)
    expect(() => parseFactQuery('from t where d in this fortnight count')).toThrow(/a unit \(day, week, month, quarter, half, year\)/)
  })

  it('weeks run Monday to Sunday (ISO), whatever day today is', () => {
    // 2025-06-09 is a Monday, 2025-06-15 a Sunday.
    expect(range('this week', '2025-06-09')).toEqual({ from: '2025-06-09', to: '2025-06-15', label: 'this week (2025-06-09..2025-06-15)' })
    expect(range('this week', '2025-06-15')).toMatchObject({ from: '2025-06-09', to: '2025-06-15' })
    expect(range('previous week', '2025-06-09')).toMatchObject({ from: '2025-06-02', to: '2025-06-08' })
    // Across a year change: the week of 2026-01-01 (a Thursday) starts on 2025-12-29.
    expect(range('this week', '2026-01-01')).toMatchObject({ from: '2025-12-29', to: '2026-01-04' })
    expect(range('previous week', '2026-01-01')).toMatchObject({ from: '2025-12-22', to: '2025-12-28' })
  })

  it('months, quarters, halves and years end on their last day, leap years included', () => {
    expect(range('this month', '2024-02-10')).toMatchObject({ from: '2024-02-01', to: '2024-02-29' })
    expect(range('previous month', '2024-03-31')).toMatchObject({ from: '2024-02-01', to: '2024-02-29' })
    expect(range('previous month', '2025-01-31')).toMatchObject({ from: '2024-12-01', to: '2024-12-31' })
    expect(range('this month', '2025-12-31')).toMatchObject({ from: '2025-12-01', to: '2025-12-31' })
    expect(range('this quarter', '2025-05-20')).toMatchObject({ from: '2025-04-01', to: '2025-06-30' })
    expect(range('previous quarter', '2025-02-01')).toMatchObject({ from: '2024-10-01', to: '2024-12-31' })
    expect(range('previous half', '2025-03-01')).toMatchObject({ from: '2024-07-01', to: '2024-12-31' })
    expect(range('this year', '2025-12-31')).toMatchObject({ from: '2025-01-01', to: '2025-12-31' })
    expect(range('previous year', '2026-01-01')).toEqual({
      from: '2025-01-01',
      to: '2025-12-31',
      label: 'previous year (2025-01-01..2025-12-31)',
    })
    expect(range('previous day', '2026-03-01')).toEqual({ from: '2026-02-28', to: '2026-02-28', label: 'previous day (2026-02-28)' })
  })

  it('past N days is today and the N - 1 days before it', () => {
    expect(range('past 1 day', '2025-03-01')).toMatchObject({ from: '2025-03-01', to: '2025-03-01', label: 'past 1 day (2025-03-01)' })
    expect(range('past 7 days', '2025-03-03')).toMatchObject({ from: '2025-02-25', to: '2025-03-03' })
    expect(range('past 30 days', '2024-03-01')).toMatchObject({ from: '2024-02-01', to: '2024-03-01' })
  })
})
