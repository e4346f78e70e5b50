import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createTestEngine } from '../testing/test-mnemo.js'
import { findUacDir, ingestUac, readUac, runUac } from './uac-analytical.js'
import { scoreUac } from './uac-score.js'

const DIR = findUacDir(path.resolve(import.meta.dirname, '../..'))

describe('the published UaC scorer', () => {
  it('reads ints, floats, strings and sets as the README describes', () => {
    expect(scoreUac('int', 'I took 1,234 trips', 1234)).toBe(true)
    expect(scoreUac('int', '12 of 13', 12)).toBe(false)
    expect(scoreUac('float', '$7,62', 762)).toBe(true)
    expect(scoreUac('float', '100.9', 100)).toBe(true)
    expect(scoreUac('float', '101.5', 100)).toBe(false)
    expect(scoreUac('string', ' Thailand ', 'thailand')).toBe(true)
    expect(scoreUac('string', '', '')).toBe(true)
    expect(scoreUac('string', 'x', '')).toBe(false)
    expect(scoreUac('set', '["Dr. Kim","Dr. Chen"]', ['Dr. Chen', 'Dr. Kim'])).toBe(true)
    expect(scoreUac('set', 'fair; good', ['fair', 'good', 'poor'])).toBe(false)
    expect(scoreUac('set', '[]', [])).toBe(true)
    expect(scoreUac('set', 'Final answer: Chinese', ['chinese'])).toBe(false)
  })
})

describe.skipIf(DIR === undefined)('UaC analytical dev split (reads ../shared/datasets/uac-analytical; skipped when absent)', () => {
  it('answers all 60 questions with hand-written queries, scored by the published scorer', async () => {
    const { engine } = createTestEngine()
    const { users, questions } = readUac(DIR!)
    await ingestUac(engine, users)
    const results = await runUac(engine, questions)
    const wrong = results.filter((r) => !r.correct).map((r) => `${r.caseId}: ${r.query} → ${r.prediction} (gold ${JSON.stringify(r.gold)})`)
    expect(wrong).toEqual([])
    expect(results).toHaveLength(60)
    for (const r of results) expect(r.answer.records.length).toBeGreaterThan(0)
  })
})

if (DIR === undefined) console.warn('UaC analytical dev split skipped: ../shared/datasets/uac-analytical is absent (set MNEMO_SHARED_DIR)')
