import { zonedDate } from '../retrieval/time-expressions.js'

/**
 * Words that date a statement relative to when it was made: "tomorrow", "next week", "in 3 days", "last Friday",
 * "this sprint", "tonight", "2 weeks ago". Read months later, "release freeze starts tomorrow" says nothing unless
 * the day it was said comes with it.
 */
const RELATIVE_DATE =
  /\b(?:yesterday|today|tonight|tomorrow|this (?:morning|afternoon|evening|week(?:end)?|month|quarter|year|sprint)|last (?:night|week(?:end)?|month|quarter|year|sprint)|next (?:week(?:end)?|month|quarter|year|sprint|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|(?:last|this|on|by|until|till) (?:mon|tues|wednes|thurs|fri|satur|sun)day|in (?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few) (?:day|week|month|year)s?|(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few) (?:day|week|month|year)s? ago|(?:a|one|two|\d{1,2}) (?:day|week)s? from now|(?:the )?day after tomorrow|(?:the )?day before yesterday)\b/i

/** True when `text` dates something relative to when it was said (see `anchorRelativeDates`). */
export function hasRelativeDate(text: string): boolean {
  return RELATIVE_DATE.test(text)
}

/** `YYYY-MM-DD` of `ms` in `timeZone`. */
export function isoDay(ms: number, timeZone: string): string {
  const d = zonedDate(ms, timeZone)
  return `${d.y}-${String(d.m).padStart(2, '0')}-${String(d.d).padStart(2, '0')}`
}

/**
 * `text` with the day it was said appended when it holds a relative date: "release freeze starts tomorrow" written
 * on 30 November 2026 becomes "release freeze starts tomorrow (said 2026-11-30)". Text without one comes back as it is.
 *
 * @param saidAt - Epoch ms the text was written (a memory's `createdAt`).
 * @param timeZone - IANA zone whose calendar day is named (the engine's `timeZone`).
 */
export function anchorRelativeDates(text: string, saidAt: number, timeZone: string): string {
  return hasRelativeDate(text) ? `${text} (said ${isoDay(saidAt, timeZone)})` : text
}
