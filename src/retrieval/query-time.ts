import { letterNumberRuns } from './search-text.js'
import { COUNT_WORDS, resolveRelativeTimes, zonedDate, zonedMidnight, type TimeRange } from './time-expressions.js'

/** Cheap test for words that may carry a date, so the date parser is loaded only when needed. */
const MAYBE_TIME =
  /\d|\b(yesterday|today|tonight|ago|last|past|this|next|since|week|weekend|month|year|january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i

/** Spellings of the time units chrono-node's English parser reads after a number or `this`/`last`/`next`. */
const CHRONO_UNITS =
  'quarters|quarter|seconds|second|minutes|minute|months|month|hours|hour|weeks|week|years|year|mins|min|hrs|hr|days|day|sec|mon|mos|qtr|mo|yr|s|m|h|d|w|y'
/** Amounts in words before a unit ("a few days", "the last two weeks", "half an hour", "a couple of months"). */
const WORD_AMOUNT = '(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|half|an?|few|several|the|couple|of)\\s{0,3}[qsmhdwy]'

/** chrono-node's English month names (its `MONTH_DICTIONARY`, without the dotted forms), longest first. */
const MONTH_NAMES =
  'january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec'
/** chrono-node's English weekday names (its `WEEKDAY_DICTIONARY`, without the dotted forms), longest first. */
const WEEKDAY_NAMES = 'sunday|monday|tuesday|wednesday|thursday|friday|saturday|thurs|thur|thu|sun|mon|tue|wed|fri|sat'

/**
 * A necessary condition for chrono-node's English parser to find a date that `pointTimes` keeps (a year, month, day
 * or weekday it is certain of): the query holds a date-shaped number (`2023`, `6/16`, `16.6`, `3 d`), a month or
 * weekday name (`jan`…`december`, `sun`…`saturday`; chrono reads one only where no letter follows it, but for `of`, an
 * ordinal word after a month or `this`/`last`/`past`/`next` after a weekday: so `decided`, `maybe`, `friends` and
 * `sunrise` are none), `end of the month`, a casual day not inside a word (`now` but not `know`, `today`, `tonight`,
 * `tomorrow`, `tmr`, `yesterday`) or `night`, `this`/`last`/`past`/`next`/`after` before a unit or an amount, `within`/`in`/`for`
 * before an amount (those words not inside a word: `join a meeting` has none), or an amount with a word after it that chrono reads as its direction (`ago`, `before`, `earlier`,
 * `later`, `after`, `from now`, `henceforth`, `forward`, `out`). Each is what one of chrono's parsers needs; its time
 * parsers alone (`at 5`, `10:30`, `noon`) give no certain date. Without any of them chrono is not run: loading and
 * running it costs a hook ~55 ms CPU, and most prompts with a number in them (`line 42`, `v2`) name no date. Checked
 * against chrono itself in query-time.test.ts.
 */
const DATE_ANCHOR = new RegExp(
  [
    '\\d[\\/.\\-:]\\d',
    '\\d{4}',
    '\\d\\s{0,3}[qsmhdwy]',
    `(?:${MONTH_NAMES})(?:(?![a-z])|(?=of|fi|se|si|th|fo|ei|ni|te|el|tw))`,
    `(?:${WEEKDAY_NAMES})(?:(?![a-z])|(?=of|this|last|past|next))`,
    'weekend|weekday',
    'of\\s+(?:the\\s+)?month',
    '(?<![a-z])(?:now|today|tonight|tomorrow|overmorrow|tmrw|tmr|yesterday)(?![a-z])',
    'night',
    `(?<![a-z])(?:after\\s*this|this|last|past|next|after)\\s*(?:${CHRONO_UNITS})(?![a-z0-9_])`,
    `(?:(?<![a-z])(?:this|last|past|next|after|within|in|for)|\\+|-)\\s*(?:(?:about|around|roughly|approximately|just)\\s*(?:~\\s*)?)?(?:(?:about|around)\\s{0,3})?${WORD_AMOUNT}`,
  ].join('|'),
  'i',
)
/** An amount in words, and the words chrono reads after one as its direction ("a few days ago", "two weeks later"). */
const AMOUNT = new RegExp(WORD_AMOUNT, 'i')
const DIRECTION = /ago|before|earlier|later|after|from\s*now|henceforth|forward|out/i

/** Whether chrono-node may find a date in `query` that `pointTimes` keeps (see `DATE_ANCHOR`); false: it cannot. */
export function mayNameDate(query: string): boolean {
  return DATE_ANCHOR.test(query) || (AMOUNT.test(query) && DIRECTION.test(query))
}

// The English parser alone (`chrono-node/en`, the `casual` parser the package's own `parse` uses): the package entry
// loads every locale, ~113 ms CPU per process against ~27 ms (in-process, 2 cores), paid by each UserPromptSubmit hook
// whose prompt may name a time (docs/prompt-recall.md).
type Chrono = typeof import('chrono-node/en')
let chronoModule: Promise<Chrono> | undefined

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
const COUNT = '(\\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple|few)'

/**
 * "past 7 days", "the last 2 weeks", "within the past 3 hours": a span that ends now. Its start is the
 * same clock time that many units back (hours), or the start of the calendar day that many days, weeks
 * (7 days), months or years back (days, weeks, months, years), in the time zone.
 */
const TRAILING_SPAN = new RegExp(
  `\\b(?:(?:in|over|during|within|for) )?(?:the )?(?:past|last|previous) ${COUNT}(?: of)? (hour|day|week|month|year)s?\\b`,
  'gi',
)

/** A bound before a time: `since 2025-02-21` (from its start), `after` (from its end), `before` (until its start), `until`/`till`/`through` (until its end). */
const BOUND_BEFORE = /\b(since|after|before|until|till|through|from)\s+$/i
/** What joins the two ends of `between X and Y` / `from X to Y`. */
const JOINER = /^\s*(?:and|to|until|till|through|-|–)\s*$/i

/** UTC offset of `timeZone` at `ms`, in minutes (what chrono's `timezone` option takes). */
function offsetMinutes(ms: number, timeZone: string): number {
  const d = zonedDate(ms, timeZone)
  const midnightLocal = zonedMidnight(d, timeZone)
  return Math.round((Date.UTC(d.y, d.m - 1, d.d) - midnightLocal) / 60_000)
}

function countOf(word: string): number {
  return /^\d+$/.test(word) ? Number(word) : (COUNT_WORDS[word.toLowerCase()] ?? 1)
}

/** The start of the calendar day `days` days before the day of `nowMs`, and of `months` months before it. */
function dayStart(nowMs: number, timeZone: string, back: { days?: number; months?: number }): number {
  const today = zonedDate(nowMs, timeZone)
  const total = today.y * 12 + (today.m - 1) - (back.months ?? 0)
  const y = Math.floor(total / 12)
  const m = (total % 12) + 1
  const lastDay = new Date(Date.UTC(y, m, 0)).getUTCDate()
  const t = new Date(Date.UTC(y, m - 1, Math.min(today.d, lastDay)) - (back.days ?? 0) * DAY_MS)
  return zonedMidnight({ y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() }, timeZone)
}

/** The end of the day of `nowMs` (the start of the next), where a span "up to now" ends. */
function endOfToday(nowMs: number, timeZone: string): number {
  const today = zonedDate(nowMs, timeZone)
  const t = new Date(Date.UTC(today.y, today.m - 1, today.d) + DAY_MS)
  return zonedMidnight({ y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() }, timeZone)
}

/**
 * The time ranges a query asks about, resolved against `nowMs` in
 * `timeZone`, each a half-open [from, to) in epoch ms:
 * - absolute dates ("on 16 June, 2023", "August 2023", "2025-02-21") read with chrono-node's English parser (loaded on first use);
 * - relative ones ("last week", "yesterday", "last May", "last Tuesday") with `resolveRelativeTimes`, so every
 *   surface gives them the same meaning;
 * - spans that end now: "past 7 days", "the last 2 weeks" (from the start of the day that far back; hours:
 *   that clock time) up to the end of today;
 * - bounds: "since X" (from X's start) and "after X" (from its end) up to the end of today; "before X"
 *   (up to X's start) and "until X" (up to its end) from the beginning of the store; "between X and Y" and
 *   "from X to Y" from X's start to Y's end. X and Y are any of the above.
 * Empty when the query names no time.
 */
export async function parseQueryTimes(query: string, nowMs: number, timeZone: string): Promise<TimeRange[]> {
  if (!MAYBE_TIME.test(query)) return []
  const spans: { at: number; range: TimeRange }[] = []
  let rest = query
  for (const m of query.matchAll(TRAILING_SPAN)) {
    const n = countOf(m[1]!)
    const unit = m[2]!.toLowerCase()
    const from =
      unit === 'hour'
        ? nowMs - n * HOUR_MS
        : dayStart(
            nowMs,
            timeZone,
            unit === 'day' ? { days: n } : unit === 'week' ? { days: 7 * n } : { months: unit === 'month' ? n : 12 * n },
          )
    spans.push({
      at: m.index,
      range: { from, to: unit === 'hour' ? nowMs + 1 : endOfToday(nowMs, timeZone), granularity: 'day', text: m[0] },
    })
    // Blanked out (same length, so positions hold): chrono would read "past 7 days" as the one day 7 days ago.
    rest = rest.slice(0, m.index) + ' '.repeat(m[0].length) + rest.slice(m.index + m[0].length)
  }
  const points = await pointTimes(rest, nowMs, timeZone)
  const all = [...spans, ...points].sort((a, b) => a.at - b.at)
  const out: TimeRange[] = []
  for (let i = 0; i < all.length; i++) {
    const { at, range } = all[i]!
    const bound = BOUND_BEFORE.exec(query.slice(Math.max(0, at - 12), at))
    const word = bound?.[1]?.toLowerCase()
    const next = all[i + 1]
    const joined = next !== undefined && JOINER.test(query.slice(at + range.text.length, next.at))
    const before = query.slice(0, at)
    if (joined && (word === 'from' || /\bbetween\s+$/i.test(before))) {
      // between X and Y, from X to Y: X's start to Y's end (either order).
      const from = Math.min(range.from, next.range.from)
      const to = Math.max(range.to, next.range.to)
      out.push({ from, to, granularity: 'day', text: query.slice(at - (word === 'from' ? 5 : 8), next.at + next.range.text.length).trim() })
      i++
    } else if (word === 'since' || word === 'after' || word === 'from') {
      // Up to the end of today; a bound in the future still names its own day, where nothing can be yet.
      const from = word === 'after' ? range.to : range.from
      out.push({
        from,
        to: Math.max(endOfToday(nowMs, timeZone), word === 'after' ? 2 * range.to - range.from : range.to),
        granularity: 'day',
        text: `${word} ${range.text}`,
      })
    } else if (word === 'before' || word === 'until' || word === 'till' || word === 'through') {
      out.push({ from: 0, to: word === 'before' ? range.from : range.to, granularity: 'day', text: `${word} ${range.text}` })
    } else out.push(range)
  }
  return out.filter((r) => r.from < r.to)
}

/** Single times (a day, a week, a month, a year) with where they start in `query`. */
async function pointTimes(query: string, nowMs: number, timeZone: string): Promise<{ at: number; range: TimeRange }[]> {
  if (!MAYBE_TIME.test(query)) return []
  const lower = query.toLowerCase()
  const located = (text: string, from = 0): number => lower.indexOf(text.toLowerCase(), from)
  const out: { at: number; range: TimeRange }[] = []
  let cursor = 0
  const relative = resolveRelativeTimes(query, nowMs, timeZone)
  for (const r of relative) {
    const at = located(r.text, cursor)
    cursor = at + r.text.length
    out.push({ at, range: r })
  }
  if (!mayNameDate(query)) return out
  chronoModule ??= import('chrono-node/en')
  const chrono = await chronoModule
  for (const r of chrono.parse(query, { instant: new Date(nowMs), timezone: offsetMinutes(nowMs, timeZone) }, { forwardDate: false })) {
    // Relative phrases keep the documented meaning from resolveRelativeTimes.
    if (relative.some((x) => r.text.toLowerCase().includes(x.text.toLowerCase()) || x.text.toLowerCase().includes(r.text.toLowerCase())))
      continue
    const has = (unit: 'year' | 'month' | 'day' | 'weekday'): boolean => r.start.isCertain(unit)
    // A weekday alone ("since Monday") is the most recent one, as chrono reads it without forward dating.
    const dayKnown = has('day') || (has('weekday') && !has('month'))
    if (!has('year') && !has('month') && !dayKnown) continue
    const y = r.start.get('year') ?? zonedDate(nowMs, timeZone).y
    const m = r.start.get('month') ?? 1
    let range: TimeRange
    if (dayKnown) {
      const d = r.start.get('day') ?? 1
      const next = new Date(Date.UTC(y, m - 1, d) + DAY_MS)
      range = {
        from: zonedMidnight({ y, m, d }, timeZone),
        to: zonedMidnight({ y: next.getUTCFullYear(), m: next.getUTCMonth() + 1, d: next.getUTCDate() }, timeZone),
        granularity: 'day',
        text: r.text,
      }
    } else if (has('month')) {
      const next = m === 12 ? { y: y + 1, m: 1, d: 1 } : { y, m: m + 1, d: 1 }
      range = { from: zonedMidnight({ y, m, d: 1 }, timeZone), to: zonedMidnight(next, timeZone), granularity: 'month', text: r.text }
    } else
      range = {
        from: zonedMidnight({ y, m: 1, d: 1 }, timeZone),
        to: zonedMidnight({ y: y + 1, m: 1, d: 1 }, timeZone),
        granularity: 'year',
        text: r.text,
      }
    out.push({ at: r.index, range })
  }
  return out
}

/** Time units recall reads in a quantity phrase ("past 7 days", "3 weeks ago"). */
const KNOWN_UNITS = /^(?:hour|day|week|weekend|month|year|night|morning|afternoon|evening)s?$/i

/**
 * Phrases of `query` shaped like a time that recall could not read, to say so instead of failing silently:
 * a quantity of something that is not a time unit after `past`/`last`/`next`/`within`/`in` ("in 3 sprints",
 * "past 2 releases") or before `ago` ("3 sprints ago"). `strict`: only the unmistakable forms
 * (past/last/next/within/ago); "in N <word>" is also an ordinary phrase ("in 2 files").
 */
export function unreadTimePhrases(query: string, strict: boolean): string[] {
  const out: string[] = []
  const lead = strict ? '(?:past|last|next|within|previous)' : '(?:past|last|next|within|previous|in|over|for)'
  const forms = [new RegExp(`\\b${lead} (?:the )?${COUNT}(?: of)? ([\\p{L}]+)`, 'giu'), new RegExp(`\\b${COUNT} ([\\p{L}]+) ago\\b`, 'giu')]
  for (const re of forms) for (const m of query.matchAll(re)) if (!KNOWN_UNITS.test(m[2]!)) out.push(m[0])
  return [...new Set(out)]
}

/** Words a query made only of a time may hold besides it ("what happened last Tuesday", "show me everything since Monday"). */
const FILLER = new Set(
  'a an the what which who happened happen did do does done we i you they me us our my show list give tell find recall search everything anything something things stuff items work worked working on in at during of for from to and or since after before until till through between over within that this was were is are has have had there any all been been'.split(
    ' ',
  ),
)

/**
 * Whether `query` asks only for a time: once the time phrases are taken out, nothing but filler words
 * remain ("last Tuesday", "past 7 days", "what happened since 2025-02-21"). Recall then lists what
 * happened in the ranges, newest first, instead of matching the phrase's words ("last", "Tuesday") in text.
 */
export function isTimeOnlyQuery(query: string, ranges: readonly TimeRange[]): boolean {
  if (ranges.length === 0) return false
  let rest = query.toLowerCase()
  for (const r of ranges) rest = rest.split(r.text.toLowerCase()).join(' ')
  const words = letterNumberRuns(rest)
  return words.every((w) => FILLER.has(w))
}
