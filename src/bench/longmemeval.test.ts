import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import {
  formatLongMemEvalReport,
  isAbstention,
  LONGMEMEVAL_KS,
  LONGMEMEVAL_LEVELS,
  longMemEvalEvents,
  longMemEvalGold,
  longMemEvalTurnId,
  ndcgAnyAtK,
  parseLongMemEvalDate,
  runLongMemEvalBench,
  scoreLongMemEvalRanking,
  sessionOfTurnId,
  sessionRankingOf,
  validateLongMemEval,
  type LongMemEvalInstance,
  type LongMemEvalReport,
} from './longmemeval.js'

const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const mini = path.join(repoRoot, 'fixtures/longmemeval/mini.json')
const miniData = (): LongMemEvalInstance[] => validateLongMemEval(JSON.parse(readFileSync(mini, 'utf8')), mini)
const tmp = mkdtempSync(path.join(os.tmpdir(), 'mnemo-lme-test-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

/** log2(3), the official discount of rank 3. */
const LOG2_3 = Math.log2(3)

describe('parseLongMemEvalDate', () => {
  it('reads "YYYY/MM/DD (Day) HH:MM" as UTC', () => {
    expect(parseLongMemEvalDate('2023/05/20 (Sat) 02:21')).toBe(Date.UTC(2023, 4, 20, 2, 21))
    expect(parseLongMemEvalDate(' 2023/11/12 (Sun) 21:15 ')).toBe(Date.UTC(2023, 10, 12, 21, 15))
  })

  it('refuses other forms and impossible dates', () => {
    expect(parseLongMemEvalDate('2023-05-20 02:21')).toBeUndefined()
    expect(parseLongMemEvalDate('2023/05/20 02:21')).toBeUndefined()
    expect(parseLongMemEvalDate('2023/02/30 (Thu) 10:00')).toBeUndefined()
    expect(parseLongMemEvalDate('2023/05/20 (Sat) 24:00')).toBeUndefined()
    expect(parseLongMemEvalDate('')).toBeUndefined()
  })
})

describe('ids and gold sets', () => {
  it('numbers turns 1-based over all turns and maps them back to their session', () => {
    expect(longMemEvalTurnId('answer_ab_1', 3)).toBe('answer_ab_1#3')
    expect(sessionOfTurnId('answer_ab_1#3')).toBe('answer_ab_1')
    expect(sessionOfTurnId('odd#id#12')).toBe('odd#id')
    expect(sessionOfTurnId('no-hash')).toBe('no-hash')
  })

  it('spots abstention questions by the _abs suffix', () => {
    expect(isAbstention('q_puppy_abs')).toBe(true)
    expect(isAbstention('q_puppy')).toBe(false)
  })

  it('gold turns are user turns with has_answer; gold sessions are answer sessions in the haystack holding one', () => {
    const [puppy, instruments, , pasta, , sister] = miniData() as [
      LongMemEvalInstance,
      LongMemEvalInstance,
      LongMemEvalInstance,
      LongMemEvalInstance,
      LongMemEvalInstance,
      LongMemEvalInstance,
    ]
    expect(longMemEvalGold(puppy)).toEqual({ session: new Set(['answer_puppy_1']), turn: new Set(['answer_puppy_1#1']) })
    expect(longMemEvalGold(instruments)).toEqual({
      session: new Set(['answer_guitar_1', 'answer_piano_2']),
      turn: new Set(['answer_guitar_1#1', 'answer_piano_2#1']),
    })
    // The evidence is an assistant turn: no user-side evidence at either level.
    expect(longMemEvalGold(pasta)).toEqual({ session: new Set(), turn: new Set() })
    // The answer session is not in the haystack: skipped at session level, scored at turn level.
    expect(longMemEvalGold(sister)).toEqual({ session: new Set(), turn: new Set(['sharegpt_family_1#1']) })
  })

  it('counts a user has_answer turn at its position among all turns (assistant turns included)', () => {
    const inst: LongMemEvalInstance = {
      question_id: 'q',
      question_type: 't',
      question: 'q?',
      question_date: '2023/01/01 (Sun) 00:00',
      answer: 'a',
      haystack_session_ids: ['s1', 'answer_s2'],
      haystack_dates: ['2023/01/01 (Sun) 00:00', '2023/01/02 (Mon) 00:00'],
      haystack_sessions: [
        [{ role: 'user', content: 'x' }],
        [
          { role: 'user', content: 'a', has_answer: false },
          { role: 'assistant', content: 'b', has_answer: true },
          { role: 'user', content: 'c', has_answer: true },
        ],
      ],
      answer_session_ids: ['answer_s2', 'answer_gone'],
    }
    expect(longMemEvalGold(inst)).toEqual({ session: new Set(['answer_s2']), turn: new Set(['answer_s2#3']) })
  })
})

describe('metrics, session level', () => {
  // Turn ranking whose sessions first appear as A, GOLD, C: the gold session is at session rank 2.
  const turns = ['A#1', 'GOLD#3', 'A#3', 'C#1', 'GOLD#1']
  const gold = new Set(['GOLD'])

  it('ranks sessions by first appearance among the turns', () => {
    expect(sessionRankingOf(turns)).toEqual(['A', 'GOLD', 'C'])
    expect(sessionRankingOf([])).toEqual([])
  })

  it('gold session at rank 2: recall_any@1 = 0, recall_any@3 = 1, NDCG@3 = 1 with the official DCG', () => {
    const m = scoreLongMemEvalRanking(sessionRankingOf(turns), gold)
    expect(m['recall_any@1']).toBe(0)
    expect(m['recall_all@1']).toBe(0)
    expect(m['ndcg_any@1']).toBe(0)
    expect(m['recall_any@3']).toBe(1)
    expect(m['recall_all@3']).toBe(1)
    // Official DCG: ranks 1 and 2 both weigh 1, so DCG@3 = 0 + 1/log2(2) + 0 = 1 = IDCG@3.
    expect(m['ndcg_any@3']).toBe(1)
    for (const k of [5, 10, 30, 50] as const) expect(m[`recall_any@${k}`]).toBe(1)
  })

  it('gold session at rank 3: NDCG@3 = 1/log2(3) = 0.630930', () => {
    expect(ndcgAnyAtK(['A', 'C', 'GOLD'], gold, 3)).toBeCloseTo(1 / LOG2_3, 12)
    expect(ndcgAnyAtK(['A', 'C', 'GOLD'], gold, 3)).toBeCloseTo(0.63093, 5)
    expect(ndcgAnyAtK(['A', 'C', 'GOLD'], gold, 2)).toBe(0)
  })

  it('two gold sessions at ranks 1 and 3: recall_all flips at 3, NDCG@3 = (1 + 1/log2 3) / 2 = 0.815465', () => {
    const two = new Set(['G1', 'G2'])
    const m = scoreLongMemEvalRanking(['G1', 'X', 'G2', 'Y'], two)
    expect(m['recall_any@1']).toBe(1)
    expect(m['recall_all@1']).toBe(0)
    // Ideal@1 holds one relevant item only: DCG@1 = 1 = IDCG@1.
    expect(m['ndcg_any@1']).toBe(1)
    expect(m['recall_all@3']).toBe(1)
    expect(m['ndcg_any@3']).toBeCloseTo((1 + 1 / LOG2_3) / 2, 12)
    expect(m['ndcg_any@3']).toBeCloseTo(0.815465, 6)
    // Nothing more below rank 3: the same value at every deeper k.
    expect(m['ndcg_any@50']).toBeCloseTo(0.815465, 6)
  })

  it('is 0 everywhere for an empty ranking or an empty gold set', () => {
    const m = scoreLongMemEvalRanking([], gold)
    for (const k of LONGMEMEVAL_KS) {
      expect(m[`recall_any@${k}`]).toBe(0)
      expect(m[`recall_all@${k}`]).toBe(0)
      expect(m[`ndcg_any@${k}`]).toBe(0)
    }
    expect(ndcgAnyAtK(['A'], new Set(), 5)).toBe(0)
  })
})

describe('metrics, turn level', () => {
  const ranking = ['s1#1', 's2#3', 's2#1', 's3#5', 's1#3']
  const gold = new Set(['s2#3', 's3#5'])

  it('gold turns at ranks 2 and 4, computed by hand', () => {
    const m = scoreLongMemEvalRanking(ranking, gold)
    expect(m['recall_any@1']).toBe(0)
    expect(m['recall_all@1']).toBe(0)
    expect(m['ndcg_any@1']).toBe(0)
    expect(m['recall_any@3']).toBe(1)
    expect(m['recall_all@3']).toBe(0)
    // DCG@3 = 0 + 1 (rank 2) + 0 = 1; IDCG@3 = 1 + 1 = 2.
    expect(m['ndcg_any@3']).toBe(0.5)
    expect(m['recall_any@5']).toBe(1)
    expect(m['recall_all@5']).toBe(1)
    // DCG@5 = 1 + 1/log2(4) = 1.5; IDCG@5 = 2.
    expect(m['ndcg_any@5']).toBe(0.75)
    expect(m['ndcg_any@10']).toBe(0.75)
  })

  it('has the 18 metrics of the official log, k ∈ {1,3,5,10,30,50}', () => {
    const keys = Object.keys(scoreLongMemEvalRanking(ranking, gold)).sort()
    expect(keys).toEqual(LONGMEMEVAL_KS.flatMap((k) => [`recall_any@${k}`, `recall_all@${k}`, `ndcg_any@${k}`]).sort())
  })

  it('a gold turn beyond rank 50 counts nowhere', () => {
    const long = Array.from({ length: 60 }, (_, i) => `s#${i + 1}`)
    const m = scoreLongMemEvalRanking(long, new Set(['s#55']))
    expect(m['recall_any@50']).toBe(0)
    expect(m['ndcg_any@50']).toBe(0)
    expect(scoreLongMemEvalRanking(long, new Set(['s#50']))['recall_any@50']).toBe(1)
    // Rank 50 weighs 1/log2(50).
    expect(scoreLongMemEvalRanking(long, new Set(['s#50']))['ndcg_any@50']).toBeCloseTo(1 / Math.log2(50), 12)
  })
})

describe('longMemEvalEvents', () => {
  it('ingests user turns only, as locomo-turn events keyed by turn id and dated by their session', () => {
    const [puppy] = miniData() as [LongMemEvalInstance]
    const events = longMemEvalEvents(puppy)
    expect(events).toHaveLength(6)
    expect(events.map((e) => (e.payload as { dia_id: string }).dia_id)).toEqual([
      'sharegpt_cook_1#1',
      'sharegpt_cook_1#3',
      'answer_puppy_1#1',
      'answer_puppy_1#3',
      'ultrachat_travel_2#1',
      'ultrachat_travel_2#3',
    ])
    const e = events[3]!
    expect(e.format).toBe('locomo-turn')
    expect(e.project).toEqual({ root: 'longmemeval:q_puppy', name: 'q_puppy' })
    expect(e.payload).toEqual({
      speaker: 'user',
      dia_id: 'answer_puppy_1#3',
      text: 'How often should a young dog like her eat each day?',
      index: 2,
    })
    expect(e.sessionStartedAt).toBe(Date.UTC(2023, 4, 24, 9, 15))
    expect(e.ts).toBe(Date.UTC(2023, 4, 24, 9, 15) + 2000)
    expect(new Set(events.map((x) => x.idemKey)).size).toBe(6)
    expect(new Set(events.map((x) => x.sessionKey)).size).toBe(3)
  })
})

describe('validation', () => {
  const good = (): Record<string, unknown> => JSON.parse(JSON.stringify(miniData()[0])) as Record<string, unknown>
  const bad = (mutate: (inst: Record<string, unknown>) => void): unknown[] => {
    const inst = good()
    mutate(inst)
    return [good(), inst]
  }

  it('accepts the fixture', () => {
    expect(miniData()).toHaveLength(6)
  })

  it('refuses a non-array', () => {
    expect(() => validateLongMemEval({ question_id: 'x' }, 'f.json')).toThrow(/f\.json: LongMemEval data must be a JSON array/)
  })

  it('names the first bad instance and its field', () => {
    expect(() => validateLongMemEval([good(), 'nope'], 'f.json')).toThrow('f.json: instance 1: (the instance) must be an object')
    expect(() =>
      validateLongMemEval(
        bad((i) => delete i['question']),
        'f.json',
      ),
    ).toThrow('f.json: instance 1: question must be a string')
    expect(() =>
      validateLongMemEval(
        bad((i) => delete i['answer']),
        'f.json',
      ),
    ).toThrow('instance 1: answer is missing')
    expect(() =>
      validateLongMemEval(
        bad((i) => (i['question_date'] = '2023-06-02')),
        'f.json',
      ),
    ).toThrow('instance 1: question_date is not a date')
    expect(() =>
      validateLongMemEval(
        bad((i) => (i['haystack_sessions'] = 'x')),
        'f.json',
      ),
    ).toThrow('instance 1: haystack_sessions must be an array')
    expect(() =>
      validateLongMemEval(
        bad((i) => ((i['haystack_sessions'] as Record<string, unknown>[][])[1]![2]!['role'] = 'system')),
        'f.json',
      ),
    ).toThrow('instance 1: haystack_sessions[1][2].role must be "user" or "assistant"')
    expect(() =>
      validateLongMemEval(
        bad((i) => ((i['haystack_sessions'] as Record<string, unknown>[][])[0]![0]!['content'] = 3)),
        'f.json',
      ),
    ).toThrow('instance 1: haystack_sessions[0][0].content must be a string')
    expect(() =>
      validateLongMemEval(
        bad((i) => ((i['haystack_sessions'] as Record<string, unknown>[][])[1]![0]!['has_answer'] = 'yes')),
        'f.json',
      ),
    ).toThrow('instance 1: haystack_sessions[1][0].has_answer must be a boolean')
    expect(() =>
      validateLongMemEval(
        bad((i) => (i['haystack_session_ids'] = ['a', 'b'])),
        'f.json',
      ),
    ).toThrow('instance 1: haystack_session_ids has 2 ids for 3 sessions')
    expect(() =>
      validateLongMemEval(
        bad((i) => ((i['haystack_dates'] as string[])[2] = 'May 28')),
        'f.json',
      ),
    ).toThrow('instance 1: haystack_dates[2] is not a date')
    expect(() =>
      validateLongMemEval(
        bad((i) => (i['answer_session_ids'] = [1])),
        'f.json',
      ),
    ).toThrow('instance 1: answer_session_ids[0] must be a string')
  })

  it('runLongMemEvalBench refuses a bad file before running anything', async () => {
    const file = path.join(tmp, 'bad.json')
    writeFileSync(file, JSON.stringify(bad((i) => delete i['haystack_dates'])))
    await expect(runLongMemEvalBench(file)).rejects.toThrow(`${file}: instance 1: haystack_dates must be an array of strings`)
  })
})

function expectShape(report: LongMemEvalReport): void {
  expect(report.dataset).toBe('longmemeval')
  for (const level of LONGMEMEVAL_LEVELS) {
    const lr = report.levels[level]
    const rows = [lr.overall, ...Object.values(lr.by_type)]
    for (const row of rows) {
      expect(Object.keys(row)).toHaveLength(19)
      for (const [key, v] of Object.entries(row)) {
        if (key === 'n') continue
        expect(v).toBeGreaterThanOrEqual(0)
        expect(v).toBeLessThanOrEqual(1)
      }
    }
    expect(Object.values(lr.by_type).reduce((sum, r) => sum + r.n, 0)).toBe(lr.overall.n)
  }
  expect(report.latency_ms.p95).toBeGreaterThanOrEqual(report.latency_ms.p50)
  // Plain JSON: no NaN or undefined.
  expect(JSON.parse(JSON.stringify(report))).toEqual(report)
}

describe('runLongMemEvalBench on the hand-written fixture', () => {
  it('counts instances, questions, skips, sessions and turns exactly', async () => {
    const report = await runLongMemEvalBench(mini)
    expectShape(report)
    expect(report.instances).toBe(6)
    // q_puppy, q_instruments, q_half_marathon, q_sister_city.
    expect(report.questions).toBe(4)
    // q_puppy_abs; q_pasta_recipe (assistant-side evidence) at both levels; q_sister_city (answer session not in haystack) at session level.
    expect(report.skipped).toEqual({ abstention: 1, no_user_evidence: { session: 2, turn: 1 } })
    expect(report.levels.session.overall.n).toBe(3)
    expect(report.levels.turn.overall.n).toBe(4)
    expect(Object.keys(report.levels.session.by_type)).toEqual(['multi-session', 'single-session-user', 'temporal-reasoning'])
    expect(Object.keys(report.levels.turn.by_type)).toEqual([
      'knowledge-update',
      'multi-session',
      'single-session-user',
      'temporal-reasoning',
    ])
    // 4 queried haystacks × 3 sessions × 2 user turns.
    expect(report.sessions).toBe(12)
    expect(report.turns).toBe(24)
    expect(report.unsearchable).toBe(0)
  })

  it('retrieves the evidence of an obvious question at rank 1, at both levels', async () => {
    // limitQuestions 1 = q_puppy only: "What breed is my new puppy?" vs "I just brought home a beagle puppy …".
    const report = await runLongMemEvalBench(mini, { limitQuestions: 1 })
    expect(report.instances).toBe(1)
    expect(report.questions).toBe(1)
    for (const level of LONGMEMEVAL_LEVELS) {
      const row = report.levels[level].overall
      expect(row.n).toBe(1)
      expect(row['recall_any@1']).toBe(1)
      expect(row['recall_all@1']).toBe(1)
      expect(row['ndcg_any@1']).toBe(1)
    }
    const bm25 = await runLongMemEvalBench(mini, { limitQuestions: 1, channels: ['bm25'] })
    expect(bm25.levels.session.overall['recall_any@1']).toBe(1)
  })

  it('formats a table with both levels, every group and both skip counts', async () => {
    const text = formatLongMemEvalReport(await runLongMemEvalBench(mini))
    expect(text).toContain('6 instances read, 4 questions queried')
    expect(text).toContain('Session level')
    expect(text).toContain('Turn level')
    for (const g of ['overall', 'knowledge-update', 'multi-session', 'single-session-user', 'temporal-reasoning']) expect(text).toContain(g)
    expect(text).toMatch(/recall_any +1\.000/)
    expect(text).toContain('skipped: 1 abstention (_abs); no user-side evidence: 2 at session level, 1 at turn level')
    expect(text).toMatch(/p50 [\d.]+ ms, p95 [\d.]+ ms/)
  })
})
