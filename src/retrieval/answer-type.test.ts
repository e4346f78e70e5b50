import { describe, expect, it } from 'vitest'
import { answerTypeOf, endsWithQuestion, hasAnswerType } from './answer-type.js'

describe('answerTypeOf', () => {
  it('reads a time question from its first words', () => {
    for (const q of [
      'When did we switch to pnpm?',
      'what year was the API versioned',
      'Which month did the outage happen?',
      'How long ago did Ann move?',
    ]) {
      expect(answerTypeOf(q)).toBe('time')
    }
  })

  it('reads a number question from its first words', () => {
    for (const q of ['How many retries does the client make?', 'how often does the cron job run', 'How old is the cache?'])
      expect(answerTypeOf(q)).toBe('number')
  })

  it('says nothing for other questions, or when the question word is not at the start', () => {
    for (const q of ['Why did the build fail?', 'What did Ann paint?', 'the deploy when it failed', 'migrations', 'Where is the config?'])
      expect(answerTypeOf(q)).toBeUndefined()
  })
})

describe('hasAnswerType', () => {
  it('finds dates, months, weekdays, years and relative times', () => {
    for (const t of [
      'I moved in 2019.',
      'We met last week!',
      'See you on Friday',
      'It was 3 years ago',
      'the 5/12 release',
      'at 9 am',
      'I went there yesterday',
      'since two months',
    ]) {
      expect(hasAnswerType(t, 'time')).toBe(true)
    }
    expect(hasAnswerType('The cat is lovely and the shelter was great.', 'time')).toBe(false)
  })

  it('finds digits and number words', () => {
    for (const t of ['retries 3 times', 'three times a week', 'I went twice', 'a dozen eggs']) expect(hasAnswerType(t, 'number')).toBe(true)
    expect(hasAnswerType('no count here at all', 'number')).toBe(false)
  })
})

describe('endsWithQuestion', () => {
  it('is true for text whose last sentence asks, after quotes, brackets or an attachment note', () => {
    for (const t of ['Great! What did you paint?', 'Did you say "why?"', 'Any plans? [shares an image: a beach]', 'Ready?  ', '本当？'])
      expect(endsWithQuestion(t)).toBe(true)
  })

  it('is false for statements, even with a question inside', () => {
    for (const t of ['Why? Because the cache was cold.', 'We shipped it.', 'run `ls -la`', '']) expect(endsWithQuestion(t)).toBe(false)
  })
})
