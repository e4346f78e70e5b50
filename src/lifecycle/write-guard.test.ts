import { describe, expect, it } from 'vitest'
import { contentKey, contradiction, findContradicted, isNearDuplicate, jaccard, retiredValues, subjectKey } from './write-guard.js'

describe('write guard keys', () => {
  it('ignores case, spacing and final punctuation in the content key', () => {
    expect(contentKey('fact', 'Use  pnpm, not npm.')).toBe(contentKey('fact', 'use pnpm, not npm'))
    expect(contentKey('fact', 'use pnpm')).not.toBe(contentKey('preference', 'use pnpm'))
  })
  it('reads the subject before the linking verb', () => {
    expect(subjectKey('The orders DB is PostgreSQL 14')).toBe('orders db')
    expect(subjectKey('orders DB migrated to MySQL 8')).toBe('orders db')
    expect(subjectKey('API_URL = https://api.example.com')).toBe('api_url')
    expect(subjectKey('we like tabs')).toBeUndefined()
    expect(subjectKey('is it raining')).toBeUndefined()
    expect(subjectKey('a very long sentence with many many words before the verb is here')).toBeUndefined()
  })
  it('never treats a changed number as a duplicate', () => {
    expect(jaccard('a b c', 'a b d')).toBeCloseTo(0.5)
    expect(
      isNearDuplicate(
        'the orders service keeps request logs for thirty days and rotates them nightly',
        'The orders service keeps the request logs for thirty days and rotates them nightly.',
      ),
    ).toBe(true)
    expect(
      isNearDuplicate(
        'the orders database runs on PostgreSQL 14 in the eu-west region cluster',
        'the orders database runs on PostgreSQL 15 in the eu-west region cluster',
      ),
    ).toBe(false)
  })
})

describe('contradiction: a new statement that retires an older one in natural words', () => {
  it('finds the retired value or the swapped word in the issue’s examples', () => {
    expect(
      contradiction(
        'The orders database was migrated from PostgreSQL to MySQL 8 this week; PostgreSQL is no longer used.',
        'The orders service stores its data in PostgreSQL 14.',
      ),
    ).toEqual({ rule: 'replaced-value', value: 'postgresql' })
    expect(contradiction('Code style changed: indent with 2 spaces, never tabs.', 'Code style: indent with tabs.')).toEqual({
      rule: 'replaced-value',
      value: 'tabs',
    })
    expect(contradiction('we deploy on Thursdays now', 'we deploy on Fridays')).toEqual({ rule: 'now-update', value: 'fridays' })
    expect(contradiction('The API now uses OAuth instead of JWT', 'The API uses JWT for auth')).toEqual({
      rule: 'replaced-value',
      value: 'jwt',
    })
    expect(contradiction('Tests now run with jest', 'Tests run with vitest')).toEqual({ rule: 'now-update', value: 'vitest' })
  })

  it('keeps statements about different subjects, additions and unrelated changes apart', () => {
    // Another subject, though it retires a value the older one names.
    expect(
      contradiction('The billing service was migrated from PostgreSQL to MySQL 8.', 'The orders service stores its data in PostgreSQL 14.'),
    ).toBeUndefined()
    expect(contradiction('The staging server is now on port 9090', 'The production server is on port 8080')).toBeUndefined()
    // Something added about the same subject, not a changed value.
    expect(contradiction('we now also run smoke tests on Fridays', 'we deploy on Fridays')).toBeUndefined()
    expect(contradiction('The orders service now exposes a GraphQL endpoint', 'The orders service uses PostgreSQL 14')).toBeUndefined()
    // The retired value is not the older one's.
    expect(contradiction('Use pnpm, never npm', 'Use pnpm for installs')).toBeUndefined()
    // Too much changed to be one swapped value.
    expect(contradiction('we deploy the docs site on Mondays now', 'we deploy on Fridays')).toBeUndefined()
    // No cue: two values side by side may both be true.
    expect(contradiction('we deploy on Thursdays', 'we deploy on Fridays')).toBeUndefined()
  })

  it('reads the values a text retires', () => {
    expect(retiredValues('switched the build from webpack to vite; no longer using Babel, yarn is deprecated')).toEqual([
      'webpack',
      'babel',
      'yarn',
    ])
    expect(
      findContradicted('we deploy on Thursdays now', [
        { id: 'mem_a', text: 'the cache is Redis' },
        { id: 'mem_b', text: 'we deploy on Fridays' },
      ]),
    ).toEqual({ id: 'mem_b', rule: 'now-update', value: 'fridays' })
  })
})
