import { existsSync, readFileSync } from 'node:fs'
import * as chrono from 'chrono-node/en'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { mayNameDate } from './query-time.js'

const NOW = new Date(Date.UTC(2026, 11, 2, 4, 0))

/** The texts of chrono's results that pointTimes keeps: certain of a year, a month, a day, or a weekday without a month. */
function keptDates(query: string): string[] {
  return chrono
    .parse(query, { instant: NOW, timezone: 0 }, { forwardDate: false })
    .filter((r) => {
      const has = (unit: 'year' | 'month' | 'day' | 'weekday'): boolean => r.start.isCertain(unit)
      return has('year') || has('month') || has('day') || (has('weekday') && !has('month'))
    })
    .map((r) => r.text)
}

// Words and shapes chrono's English parsers read, words that look like them, and ordinary words of coding prompts.
const TOKENS = [
  ...[
    '3',
    '16',
    '2023',
    '1999',
    '10:30',
    '6/16',
    '6/16/2023',
    '16.6',
    '1.5',
    'v2',
    '42',
    '3d',
    '5m',
    '2h',
    '+2',
    '-3',
    '5pm',
    '16th',
    '3rd',
    '12am',
  ],
  ...[
    'd',
    'days',
    'day',
    'week',
    'weeks',
    'w',
    'm',
    's',
    'h',
    'hr',
    'hrs',
    'mo',
    'mos',
    'yr',
    'y',
    'quarter',
    'qtr',
    'sec',
    'min',
    'mon',
    'month',
    'year',
  ],
  ...['a', 'an', 'the', 'few', 'several', 'half', 'couple', 'of', 'one', 'two', 'five', 'ten', 'twelve', 'about', 'around', 'roughly', '~'],
  ...['this', 'last', 'past', 'next', 'after', 'within', 'in', 'for', 'since', 'until', 'between', 'and', 'to', 'on', 'at', 'from'],
  ...['ago', 'before', 'earlier', 'later', 'from now', 'out', 'forward', 'henceforth'],
  ...['june', 'Jun', 'sept.', 'may', 'March', 'dec', 'monday', 'Tue', 'thurs', 'fri.', 'weekend', 'weekday', 'first', 'twenty-first'],
  ...[
    'now',
    'today',
    'tonight',
    'tomorrow',
    'tmr',
    'tmrw',
    'join',
    'contrast',
    'afterthis',
    'overmorrow',
    'yesterday',
    'last night',
    'noon',
    'morning',
    'evening',
    'midnight',
  ],
  ...[
    'fix',
    'bug',
    'src/api/refund.ts',
    'settleLedger',
    'returns',
    'stale',
    'entry',
    'order',
    'partial',
    'github',
    'common',
    'lasts',
    'pasty',
    'line',
    // Words holding a month, weekday or casual day name that chrono does not read as one.
    'decided',
    'maybe',
    'friends',
    'sunrise',
    'mentors',
    'market',
    'know',
    'snow',
    'monthly',
    'end',
    'day',
    'tmrw',
    'join',
    'contrast',
    'afterthis',
  ],
]
const SEPARATORS = [' ', ' ', ' ', '', '  ', ', ', '-', '/', '.', ' (', ') ', ': ']

describe('mayNameDate', () => {
  it('is true for every query in which chrono finds a date that pointTimes keeps', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...TOKENS), fc.constantFrom(...SEPARATORS)), { minLength: 1, maxLength: 7 }),
        (parts) => {
          const query = parts.map(([t, s]) => t + s).join('')
          if (!mayNameDate(query)) expect(keptDates(query), query).toEqual([])
        },
      ),
      { numRuns: 4000 },
    )
  })

  it('is true for the dates of questions and prompts', () => {
    for (const q of [
      'When did Caroline go to the LGBTQ support group?',
      'what did we decide on 16 June, 2023',
      'what changed in the retry loop last week',
      'errors since 2025-02-21',
      'the deploy two days ago',
      'a couple of weeks later',
      'what happened yesterday',
      'since Monday',
      'in 5 minutes',
      'due at the end of the month',
      'on June first',
      'friday this week',
    ])
      if (keptDates(q).length > 0) expect(mayNameDate(q), q).toBe(true)
  })

  // Reads ../shared (the LoCoMo development split; beside a clone, or two levels up from a worktree); skipped where it is absent.
  const locomo = ['../../../shared', '../../../../shared']
    .map((up) => new URL(`${up}/datasets/locomo/locomo-dev.json`, import.meta.url))
    .find((file) => existsSync(file))
  it.skipIf(locomo === undefined)('is true for every LoCoMo dev question in which chrono finds a date', () => {
    const conversations = JSON.parse(readFileSync(locomo!, 'utf8')) as { qa: { question: string }[] }[]
    const questions = conversations.flatMap((c) => c.qa.map((q) => q.question))
    expect(questions.length).toBeGreaterThan(1000)
    const missed = questions.filter((q) => !mayNameDate(q) && keptDates(q).length > 0)
    expect(missed).toEqual([])
  })

  it('is false for prompts with numbers but no date, so chrono is not loaded for them', () => {
    for (const q of [
      'Fix the refund bug in src/api/refund.ts (run 3): settleLedger returns a stale entry when the order is partial. Check how the coupon cache stores it.',
      'why does line 42 of settle.ts throw',
      'bump the client to v2 and rerun the tests',
    ]) {
      expect(mayNameDate(q), q).toBe(false)
      expect(keptDates(q), q).toEqual([])
    }
  })

  it('is false for words that hold a month, weekday or casual day name chrono does not read as one', () => {
    for (const q of [
      'What career path has Caroline decided to persue?',
      'When did Melanie paint a sunrise?',
      'When did Caroline join a mentorship program?',
      'maybe the market summary is wrong, do you know?',
      'how long has she known her friends?',
    ]) {
      expect(mayNameDate(q), q).toBe(false)
      expect(keptDates(q), q).toEqual([])
    }
  })
})
