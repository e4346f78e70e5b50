import { resolveRelativeTimes, zonedDate, zonedMidnight, type TimeRange } from './time-expressions.js'

/** Cheap test for words that may carry a date, so the date parser is loaded only when needed. */
const MAYBE_TIME = /\d|\b(yesterday|today|tonight|ago|last|this|next|week|weekend|month|year|january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i

type Chrono = typeof import('chrono-node')
let chronoModule: Promise<Chrono> | undefined

/** UTC offset of `timeZone` at `ms`, in minutes (what chrono's `timezone` option takes). */
function offsetMinutes(ms: number, timeZone: string): number {
  const d = zonedDate(ms, timeZone)
  const midnightLocal = zonedMidnight(d, timeZone)
  return Math.round((Date.UTC(d.y, d.m - 1, d.d) - midnightLocal) / 60_000)
}

/**
 * The time ranges a query asks about, resolved against `nowMs` in
 * `timeZone`: absolute dates ("on 16 June, 2023", "August 2023") read with
 * chrono-node (loaded on first use), relative ones ("last week",
 * "yesterday", "last May") with `resolveRelativeTimes` so every surface
 * gives them the same meaning. Empty when the query names no time.
 */
export async function parseQueryTimes(query: string, nowMs: number, timeZone: string): Promise<TimeRange[]> {
  if (!MAYBE_TIME.test(query)) return []
  const relative = resolveRelativeTimes(query, nowMs, timeZone)
  chronoModule ??= import('chrono-node')
  const chrono = await chronoModule
  const out = [...relative]
  for (const r of chrono.parse(query, { instant: new Date(nowMs), timezone: offsetMinutes(nowMs, timeZone) }, { forwardDate: false })) {
    // Relative phrases keep the documented meaning from resolveRelativeTimes.
    if (relative.some((x) => r.text.toLowerCase().includes(x.text.toLowerCase()) || x.text.toLowerCase().includes(r.text.toLowerCase()))) continue
    const has = (unit: 'year' | 'month' | 'day'): boolean => r.start.isCertain(unit)
    if (!has('year') && !has('month') && !has('day')) continue
    const y = r.start.get('year') ?? zonedDate(nowMs, timeZone).y
    const m = r.start.get('month') ?? 1
    if (has('day')) {
      const from = zonedMidnight({ y, m, d: r.start.get('day') ?? 1 }, timeZone)
      out.push({ from, to: from + 86_400_000, granularity: 'day', text: r.text })
    } else if (has('month')) {
      const next = m === 12 ? { y: y + 1, m: 1, d: 1 } : { y, m: m + 1, d: 1 }
      out.push({ from: zonedMidnight({ y, m, d: 1 }, timeZone), to: zonedMidnight(next, timeZone), granularity: 'month', text: r.text })
    } else out.push({ from: zonedMidnight({ y, m: 1, d: 1 }, timeZone), to: zonedMidnight({ y: y + 1, m: 1, d: 1 }, timeZone), granularity: 'year', text: r.text })
  }
  return out
}
