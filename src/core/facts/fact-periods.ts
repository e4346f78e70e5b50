import type { BucketUnit, CalendarPeriod, Period } from './fact-query.js'

/**
 * Calendar periods relative to today (`this week`, `previous month`, `past 7 days`; see fact-query.ts), resolved
 * against an injected clock: the caller gives today's date in the user's time zone and how to find the instant a
 * local day starts, so the result depends on nothing else. Pure.
 *
 * Weeks are ISO 8601 weeks (Monday to Sunday), as `week(...)` buckets are; quarters and halves are calendar ones.
 */

/** What resolving a calendar period needs: today, and the instant a local day starts. */
export interface CalendarClock {
  /** Today's date in the user's time zone, `YYYY-MM-DD`. */
  today: string
  /** The instant (ISO 8601 UTC, `…Z`) local midnight of an ISO date falls on in the user's time zone (DST-aware). */
  dayStart(date: string): string
}

const DAY_MS = 86_400_000

function ymd(date: string): { y: number; m: number; d: number } {
  return { y: Number(date.slice(0, 4)), m: Number(date.slice(5, 7)), d: Number(date.slice(8, 10)) }
}

function iso(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

function addDays(date: string, days: number): string {
  return iso(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS)
}

/** First and last day of the month `m` (1–12, may be out of range: it rolls over years) of year `y`. */
function monthRange(y: number, m: number, months = 1): { from: string; to: string } {
  return { from: iso(Date.UTC(y, m - 1, 1)), to: iso(Date.UTC(y, m - 1 + months, 0)) }
}

/** The inclusive day range of the calendar `unit` holding `date`, `back` units before it. */
function unitRange(unit: BucketUnit, date: string, back: number): { from: string; to: string } {
  const { y, m } = ymd(date)
  switch (unit) {
    case 'day': {
      const d = addDays(date, -back)
      return { from: d, to: d }
    }
    case 'week': {
      const weekday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7
      const monday = addDays(date, -weekday - 7 * back)
      return { from: monday, to: addDays(monday, 6) }
    }
    case 'month':
      return monthRange(y, m - back)
    case 'quarter':
      return monthRange(y, Math.floor((m - 1) / 3) * 3 + 1 - 3 * back, 3)
    case 'half':
      return monthRange(y, (m <= 6 ? 1 : 7) - 6 * back, 6)
    case 'year':
      return { from: `${y - back}-01-01`, to: `${y - back}-12-31` }
  }
}

/** The inclusive day range and label a calendar period names on `today` (`this week (2025-06-09..2025-06-15)`). */
export function calendarRange(p: CalendarPeriod, today: string): { from: string; to: string; label: string } {
  const r = 'past' in p ? { from: addDays(today, -(p.past - 1)), to: today } : unitRange(p.unit, today, p.calendar === 'this' ? 0 : 1)
  const name = 'past' in p ? `past ${p.past} day${p.past === 1 ? '' : 's'}` : `${p.calendar} ${p.unit}`
  return { ...r, label: `${name} (${r.from === r.to ? r.from : `${r.from}..${r.to}`})` }
}

/** True for a period relative to today (`this week`, `previous month`, `past 7 days`). */
export function isCalendar(p: Period): p is CalendarPeriod {
  return 'calendar' in p || 'past' in p
}
