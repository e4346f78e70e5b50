import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { findUacDir, predictionFor, readUac } from '../../bench/uac-analytical.js'
import { UAC_QUERIES } from '../../bench/uac-queries.js'
import { scoreUac } from '../../bench/uac-score.js'
import { toFactAnswer } from '../../core/facts/fact-answer.js'
import { difference, FactDialects, withoutSql } from '../../testing/fact-dialects.js'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { T0 } from '../../testing/test-mnemo.js'

const DIR = findUacDir(path.resolve(import.meta.dirname, '../../..'))
const pg = DIR === undefined ? undefined : await withPostgres()
const skipped = DIR === undefined ? 'reads ../shared/datasets/uac-analytical, which is absent' : pg ? '' : (whyNoPostgres() ?? '')

describe.skipIf(DIR === undefined || !pg)(
  `UaC analytical dev split on PostgreSQL${skipped ? ` (skipped: ${skipped})` : ' (reads ../shared/datasets/uac-analytical)'}`,
  () => {
    afterAll(() => pg?.drop())

    it('scores 60/60 with the same answers as SQLite: value, record ids and coverage', async () => {
      const d = await FactDialects.open(pg!.url, T0)
      try {
        const { users, questions } = readUac(DIR!)
        for (const u of users) await d.add(u.user_id, u.records, { provenance: { source: 'import', file: 'users.jsonl' } })
        const wrong: string[] = []
        const diffs: string[] = []
        for (const q of questions) {
          const text = UAC_QUERIES[q.case_id]
          if (text === undefined) throw new Error(`no query written for ${q.case_id}`)
          const { query } = await d.resolve(text)
          const { sqlite, pg: p } = await d.query(text)
          const diff = difference(withoutSql(sqlite), withoutSql(p))
          if (diff !== undefined) diffs.push(`${q.case_id}: ${diff}`)
          const answer = toFactAnswer(query, p, false)
          const prediction = predictionFor(q.answer_kind, answer)
          if (!scoreUac(q.answer_kind, prediction, q.gold))
            wrong.push(`${q.case_id}: ${text} → ${prediction} (gold ${JSON.stringify(q.gold)})`)
          expect(answer.records.length, q.case_id).toBeGreaterThan(0)
        }
        expect(questions).toHaveLength(60)
        expect(wrong).toEqual([])
        expect(diffs).toEqual([])
      } finally {
        await d.close()
      }
    }, 120_000)
  },
)

if (DIR === undefined)
  console.warn('UaC analytical on PostgreSQL skipped: ../shared/datasets/uac-analytical is absent (set MNEMO_SHARED_DIR)')
