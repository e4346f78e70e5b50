/**
 * Answer-type priors, the classic open-domain QA step (Moldovan et al.,
 * "The Structure and Performance of an Open-Domain Question Answering
 * System", ACL 2000; Prager et al., "Question-answering by predictive
 * annotation", SIGIR 2000): the question word says what kind of thing the
 * answer is ("when" → a time, "how many" → a number), and a passage that
 * holds something of that kind is a likelier answer than one that only
 * shares the question's words.
 */

/** What a question asks for; `undefined` when its form says nothing reliable. */
export type AnswerType = 'time' | 'number'

const ASKS_TIME = /^\s*(?:when\b|what (?:year|month|day|date|time)\b|(?:in )?which (?:year|month|day|date)\b|how long ago\b)/i
const ASKS_NUMBER = /^\s*(?:how (?:many|much|often|old|long|far)\b)/i

/**
 * The answer type a question asks for, from its first words: `time` for
 * "When…", "What year/month/day/date…", "Which year…", "How long ago…";
 * `number` for "How many/much/often/old/long/far…". Anything else (including
 * questions that do not start with a question word) gives `undefined`.
 */
export function answerTypeOf(query: string): AnswerType | undefined {
  if (ASKS_TIME.test(query)) return 'time'
  if (ASKS_NUMBER.test(query)) return 'number'
  return undefined
}

const MONTH_OR_DAY =
  'january|february|march|april|may|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday'
const TIME_IN_TEXT = new RegExp(
  [
    `\\b(?:${MONTH_OR_DAY})\\b`,
    '\\b(?:19|20)\\d\\d\\b',
    '\\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately)\\b',
    '\\b(?:last|next|this past|past|coming) (?:week|weekend|month|year|night|summer|winter|spring|fall|autumn|time)\\b',
    '\\b(?:this|last|next) (?:morning|afternoon|evening)\\b',
    '\\b(?:since|until|for) (?:\\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|several) (?:day|week|month|year)s?\\b',
    '\\b\\d{1,2}(?::\\d\\d)? ?(?:am|pm)\\b',
    '\\b\\d{1,2}/\\d{1,2}(?:/\\d{2,4})?\\b',
  ].join('|'),
  'i',
)

const NUMBER_WORDS =
  'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|hundred|thousand|dozen|couple|once|twice|several|few'
const NUMBER_IN_TEXT = new RegExp(`\\d|\\b(?:${NUMBER_WORDS})\\b`, 'i')

/** True when `text` holds something of `type`: a time expression (dates, months, weekdays, "yesterday", "last week", "3 years ago") or a number (digits or number words). */
export function hasAnswerType(text: string, type: AnswerType): boolean {
  return type === 'time' ? TIME_IN_TEXT.test(text) : NUMBER_IN_TEXT.test(text)
}

/**
 * True when `text` ends with a question: its last character, ignoring
 * trailing spaces, closing quotes and brackets and a trailing bracketed
 * attachment note (`… any plans? [shares an image: …]`), is `?` (or `？`).
 * Such a turn asks about its topic rather than saying something about it.
 */
export function endsWithQuestion(text: string): boolean {
  // Scanned from the end, not by an end-anchored regex: that one tries every position of a long text (a code listing).
  let t = text.trimEnd()
  if (t.endsWith(']')) {
    const open = t.lastIndexOf('[')
    if (open >= 0 && t.indexOf(']', open) === t.length - 1) t = t.slice(0, open).trimEnd()
  }
  let end = t.length
  while (end > 0 && (TRAILING.has(t[end - 1]!) || /\s/u.test(t[end - 1]!))) end--
  return end > 0 && (t[end - 1] === '?' || t[end - 1] === '？')
}

/** What may follow the question mark of a question, besides spaces: closing quotes and brackets. */
const TRAILING = new Set(['"', "'", '”', '’', ')', ']'])
