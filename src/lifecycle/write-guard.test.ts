import { describe, expect, it } from 'vitest'
import { contentKey, isNearDuplicate, jaccard, subjectKey } from './write-guard.js'

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
    expect(isNearDuplicate('the orders service keeps request logs for thirty days and rotates them nightly', 'The orders service keeps the request logs for thirty days and rotates them nightly.')).toBe(true)
    expect(isNearDuplicate('the orders database runs on PostgreSQL 14 in the eu-west region cluster', 'the orders database runs on PostgreSQL 15 in the eu-west region cluster')).toBe(false)
  })
})
