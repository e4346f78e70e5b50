/**
 * Time expressions: calendar arithmetic in a time zone, the relative dates
 * people write in text ("yesterday", "last week", "3 days ago"), and time
 * ranges asked for in queries. Pure: the reference time and zone are passed in.
 *
 * Meanings (documented, the same on every surface):
 * - a day is a calendar day in the configured time zone;
 * - "last week" is the previous calendar week, Monday to Sunday; "this week"
 *   the current one; "last weekend" the most recent Saturday–Sunday before
 *   the reference day;
 * - "last May" is the most recent May strictly before the current month;
 *   "in May" the most recent May not after it;
 * - "N days/weeks/months/years ago" is the calendar day that far back
 *   (weeks: that whole week).
 */

import { dateFieldsIn } from '../core/time-zone.js'

const DAY_MS = 86_400_000
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday']
/** Count words a time phrase may use for its number ("a couple of weeks", "three days"), by lowercase word. */
export const COUNT_WORDS: Readonly<Record<string, number>> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  couple: 2,
  few: 3,
}

/** A half-open time interval [from, to) in epoch ms, with what it came from. */
export interface TimeRange {
  from: number
  to: number
  granularity: 'day' | 'week' | 'month' | 'year'
  /** The words it was read from. */
  text: string
}

interface Ymd {
  y: number
  m: number // 1-12
  d: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()

/**
 * The `Intl.DateTimeFormat` of `options` in `timeZone`, made once: making one costs ~100× a format call, and every
 * stored document asks for its date.
 */
function zonedFormat(timeZone: string, options: 'date' | 'time'): Intl.DateTimeFormat {
  const key = `${options}\u0000${timeZone}`
  let f = formatters.get(key)
  if (!f) {
    f =
      options === 'date'
        ? new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric', weekday: 'long' })
        : new Intl.DateTimeFormat('en-US', { timeZone, hour: 'numeric', minute: 'numeric', hourCycle: 'h23' })
    if (formatters.size > 64) formatters.clear()
    formatters.set(key, f)
  }
  return f
}

const QUARTER_HOUR_MS = 900_000
/** Since 1980 every zone's UTC offset is a whole number of quarter hours (IANA tz database), so a date holds for a quarter hour. */
const QUARTER_HOURS_FROM = Date.UTC(1980, 0, 1)
const dates = new Map<string, Ymd & { weekday: number }>()

/** Calendar date of `ms` in `timeZone`. */
export function zonedDate(ms: number, timeZone: string): Ymd & { weekday: number } {
  // Documents come in runs of close times: the date of each quarter hour is computed once.
  // UTC, or the zone the process's local time is in: Date's getters, cheaper than the cache below.
  const fields = dateFieldsIn(timeZone)
  if (fields !== undefined) {
    const t = new Date(ms)
    return fields === 'utc'
      ? { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate(), weekday: t.getUTCDay() }
      : { y: t.getFullYear(), m: t.getMonth() + 1, d: t.getDate(), weekday: t.getDay() }
  }
  const key = ms >= QUARTER_HOURS_FROM ? `${timeZone}\u0000${Math.floor(ms / QUARTER_HOUR_MS)}` : undefined
  const known = key !== undefined ? dates.get(key) : undefined
  if (known) return { ...known }
  const parts = zonedFormat(timeZone, 'date').formatToParts(new Date(ms))
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? ''
  const date = {
    y: Number(get('year')),
    m: Number(get('month')),
    d: Number(get('day')),
    weekday: WEEKDAYS.indexOf(get('weekday').toLowerCase()),
  }
  if (key !== undefined) {
    if (dates.size > 4096) dates.clear()
    dates.set(key, date)
  }
  return { ...date }
}

/** Epoch ms of 00:00 of a calendar date in `timeZone` (handles DST by re-checking the offset). */
export function zonedMidnight(date: Ymd, timeZone: string): number {
  const fields = dateFieldsIn(timeZone)
  if (fields === 'utc') return Date.UTC(date.y, date.m - 1, date.d)
  if (fields === 'local') {
    // ECMA-262 LocalTime → UTC reads a wall time in a gap with the offset before the transition, which lands on the
    // first instant of the day that exists: what the iteration below finds for those days.
    const t = new Date(2000, 0, 1)
    t.setFullYear(date.y, date.m - 1, date.d)
    return t.getTime()
  }
  const guess = Date.UTC(date.y, date.m - 1, date.d)
  let ms = guess
  let latest = -Infinity
  for (let i = 0; i < 2; i++) {
    const z = zonedDate(ms, timeZone)
    const parts = zonedFormat(timeZone, 'time').formatToParts(new Date(ms))
    const h = Number(parts.find((p) => p.type === 'hour')?.value ?? 0)
    const min = Number(parts.find((p) => p.type === 'minute')?.value ?? 0)
    const shown = Date.UTC(z.y, z.m - 1, z.d) + (h * 60 + min) * 60_000
    ms += guess - shown
    latest = Math.max(latest, ms)
  }
  // No 00:00 that day (a DST gap at midnight, or the day skipped by a zone change, Apia 2011-12-30): the
  // iteration can land on the day before; the day (or the next one that exists) starts at the later candidate.
  const day = (at: number): number => {
    const z = zonedDate(at, timeZone)
    return z.y * 10_000 + z.m * 100 + z.d
  }
  const wanted = date.y * 10_000 + date.m * 100 + date.d
  const found = day(ms) < wanted ? latest : ms
  // 00:00 twice that day (clocks set back from 01:00 to 00:00, Asia/Gaza in autumn; from 02:00 to 23:00 the day
  // before, Antarctica/Casey 2010-03-05): the candidate can be the later one. The day starts at the earlier one, as
  // ECMA-262 reads an ambiguous wall time. Offsets change by whole quarter hours, by 3 hours at most: look that far back.
  let start = found
  for (let k = 1; k <= 16; k++) if (day(found - k * QUARTER_HOUR_MS) === wanted) start = found - k * QUARTER_HOUR_MS
  return start
}

function addDays(date: Ymd, days: number): Ymd {
  const t = new Date(Date.UTC(date.y, date.m - 1, date.d) + days * DAY_MS)
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() }
}

function dayRange(date: Ymd, tz: string, text: string): TimeRange {
  return { from: zonedMidnight(date, tz), to: zonedMidnight(addDays(date, 1), tz), granularity: 'day', text }
}

function weekRange(anyDay: Ymd & { weekday: number }, tz: string, text: string): TimeRange {
  const monday = addDays(anyDay, -((anyDay.weekday + 6) % 7))
  return { from: zonedMidnight(monday, tz), to: zonedMidnight(addDays(monday, 7), tz), granularity: 'week', text }
}

function monthRange(y: number, m: number, tz: string, text: string): TimeRange {
  const next = m === 12 ? { y: y + 1, m: 1, d: 1 } : { y, m: m + 1, d: 1 }
  return { from: zonedMidnight({ y, m, d: 1 }, tz), to: zonedMidnight(next, tz), granularity: 'month', text }
}

function yearRange(y: number, tz: string, text: string): TimeRange {
  return { from: zonedMidnight({ y, m: 1, d: 1 }, tz), to: zonedMidnight({ y: y + 1, m: 1, d: 1 }, tz), granularity: 'year', text }
}

function withWeekday(d: Ymd): Ymd & { weekday: number } {
  return { ...d, weekday: new Date(Date.UTC(d.y, d.m - 1, d.d)).getUTCDay() }
}

function count(word: string): number | undefined {
  const n = Number(word)
  return Number.isInteger(n) && n > 0 && n < 1000 ? n : COUNT_WORDS[word.toLowerCase()]
}

const RELATIVE =
  /\b(yesterday|today|tonight|this morning|this afternoon|this evening|last night|(?:this past|last|this) (?:week|weekend|month|year)|(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple|few) (?:of )?(day|week|month|year)s? ago|(?:last|this past|this) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:last|in|this) (january|february|march|april|may|june|july|august|september|october|november|december)|in ((?:19|20)\d\d))\b/gi

/**
 * Finds relative and month/year time expressions in `text` and resolves
 * them against `refMs` (when the text was written) in `timeZone`.
 * "yesterday" written on 8 May 2023 is 7 May 2023. Absolute dates
 * ("16 June 2023") are left to the query parser.
 *
 * @returns Ranges in the order they appear; empty when there are none.
 */
export function resolveRelativeTimes(text: string, refMs: number, timeZone: string): TimeRange[] {
  if (!/\b(yester|today|tonight|this|last|ago|in (?:19|20)|in [a-z]+)/i.test(text)) return []
  const ref = zonedDate(refMs, timeZone)
  const out: TimeRange[] = []
  for (const m of text.matchAll(RELATIVE)) {
    const phrase = m[0].toLowerCase()
    const t = m[0]
    if (phrase === 'yesterday' || phrase === 'last night') out.push(dayRange(addDays(ref, -1), timeZone, t))
    else if (
      phrase === 'today' ||
      phrase === 'tonight' ||
      phrase.startsWith('this morning') ||
      phrase.startsWith('this afternoon') ||
      phrase.startsWith('this evening')
    )
      out.push(dayRange(ref, timeZone, t))
    else if (m[2] !== undefined && m[3] !== undefined) {
      const n = count(m[2])
      if (n === undefined) continue
      const unit = m[3].toLowerCase()
      if (unit === 'day') out.push(dayRange(addDays(ref, -n), timeZone, t))
      else if (unit === 'week') out.push(weekRange(withWeekday(addDays(ref, -7 * n)), timeZone, t))
      else if (unit === 'month') {
        const total = ref.y * 12 + (ref.m - 1) - n
        out.push(monthRange(Math.floor(total / 12), (total % 12) + 1, timeZone, t))
      } else out.push(yearRange(ref.y - n, timeZone, t))
    } else if (m[4] !== undefined) {
      const target = WEEKDAYS.indexOf(m[4].toLowerCase())
      const back = (ref.weekday - target + 7) % 7 || 7
      out.push(dayRange(addDays(ref, -back), timeZone, t))
    } else if (m[5] !== undefined) {
      const month = MONTHS.indexOf(m[5].toLowerCase()) + 1
      const strictlyBefore = phrase.startsWith('last')
      const year = month < ref.m || (!strictlyBefore && month === ref.m) ? ref.y : ref.y - 1
      out.push(monthRange(year, month, timeZone, t))
    } else if (m[6] !== undefined) out.push(yearRange(Number(m[6]), timeZone, t))
    else if (/week$/.test(phrase))
      out.push(weekRange(withWeekday(phrase.startsWith('this') && !phrase.includes('past') ? ref : addDays(ref, -7)), timeZone, t))
    else if (/weekend$/.test(phrase)) {
      const back = (ref.weekday - 6 + 7) % 7 || 7
      const saturday = addDays(ref, -back)
      out.push({ from: zonedMidnight(saturday, timeZone), to: zonedMidnight(addDays(saturday, 2), timeZone), granularity: 'day', text: t })
    } else if (/month$/.test(phrase)) {
      const total = ref.y * 12 + (ref.m - 1) - (phrase.startsWith('this') && !phrase.includes('past') ? 0 : 1)
      out.push(monthRange(Math.floor(total / 12), (total % 12) + 1, timeZone, t))
    } else if (/year$/.test(phrase))
      out.push(yearRange(ref.y - (phrase.startsWith('this') && !phrase.includes('past') ? 0 : 1), timeZone, t))
  }
  // A day the zone skipped (Apia 2011-12-30) lasted no time: no range.
  return out.filter((r) => r.from < r.to)
}

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
]

/** Words for a range, as they are indexed: `7 May 2023`, `May 2023`, `2023`; a week gives its Monday's date. */
export function rangeWords(range: TimeRange, timeZone: string): string {
  const d = zonedDate(range.from, timeZone)
  if (range.granularity === 'year') return String(d.y)
  if (range.granularity === 'month') return `${MONTH_NAMES[d.m - 1]} ${d.y}`
  return `${d.d} ${MONTH_NAMES[d.m - 1]} ${d.y}`
}
