import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  formatLocomoReport,
  LOCOMO_GROUPS,
  ndcgAtK,
  normalizeEvidence,
  percentile,
  recallAllAtK,
  recallAnyAtK,
  recallAtK,
  reciprocalRank,
  runLocomoBench,
  scoreRanking,
  sessionOf,
  sessionRanking,
  sessionRecallAnyAtK,
  turnRanking,
  type LocomoReport,
} from './locomo.js'
import type { Embedder } from '../providers/embedder.js'

const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const mini = path.join(repoRoot, 'fixtures/locomo/mini-locomo.json')
const devFile = path.join(repoRoot, '../shared/datasets/locomo/locomo-dev.json')

const METRICS = [
  'recall@1',
  'recall@5',
  'recall@10',
  'recall@25',
  'recall_all@10',
  'recall_any@10',
  'mrr',
  'ndcg@10',
  'session_recall_any@1',
  'session_recall_any@3',
  'session_recall_any@5',
] as const

describe('normalizeEvidence', () => {
  const valid = new Set(['D1:1', 'D1:2', 'D8:6', 'D9:17', 'D30:5', 'D11:26', 'D4:4', 'D4:6', 'D9:1'])

  it('splits a string holding several ids separated by "; "', async () => {
    expect(normalizeEvidence(['D8:6; D9:17'], valid)).toEqual(['D8:6', 'D9:17'])
  })

  it('splits space-separated lists', async () => {
    expect(normalizeEvidence(['D9:1 D4:4 D4:6'], valid)).toEqual(['D9:1', 'D4:4', 'D4:6'])
  })

  it('drops leading zeros of the turn number', async () => {
    expect(normalizeEvidence(['D30:05'], valid)).toEqual(['D30:5'])
  })

  it('yields nothing for "D" and "D:11:26" (no id matches, even though D11:26 exists)', async () => {
    expect(normalizeEvidence(['D'], valid)).toEqual([])
    expect(normalizeEvidence(['D:11:26'], valid)).toEqual([])
  })

  it('drops dangling ids not in the conversation and keeps the rest', async () => {
    expect(normalizeEvidence(['D1:1', 'D10:19', 'D9:4'], valid)).toEqual(['D1:1'])
  })

  it('dedupes ids, also across spellings, in order of first mention', async () => {
    expect(normalizeEvidence(['D1:2', 'D1:1', 'D1:02', 'D01:1; D1:2'], valid)).toEqual(['D1:2', 'D1:1'])
  })

  it('tolerates an empty list, a non-list and non-string items', async () => {
    expect(normalizeEvidence([], valid)).toEqual([])
    expect(normalizeEvidence(undefined, valid)).toEqual([])
    expect(normalizeEvidence('D1:1', valid)).toEqual([])
    expect(normalizeEvidence([3, null, 'D1:2'], valid)).toEqual(['D1:2'])
  })
})

describe('ranking metrics', () => {
  const ranking = ['a', 'b', 'c', 'd']
  const gold = new Set(['b', 'd'])

  it('recall@k = |gold ∩ top-k| / |gold|', async () => {
    expect(recallAtK(ranking, gold, 1)).toBe(0)
    expect(recallAtK(ranking, gold, 2)).toBe(0.5)
    expect(recallAtK(ranking, gold, 3)).toBe(0.5)
    expect(recallAtK(ranking, gold, 4)).toBe(1)
    expect(recallAtK(ranking, gold, 10)).toBe(1)
    expect(recallAtK(ranking, new Set(['b', 'x', 'y']), 10)).toBeCloseTo(1 / 3, 12)
    expect(recallAtK([], gold, 10)).toBe(0)
  })

  it('recall_all@k and recall_any@k', async () => {
    expect(recallAllAtK(ranking, gold, 2)).toBe(0)
    expect(recallAllAtK(ranking, gold, 4)).toBe(1)
    expect(recallAnyAtK(ranking, gold, 1)).toBe(0)
    expect(recallAnyAtK(ranking, gold, 2)).toBe(1)
    expect(recallAllAtK(ranking, new Set<string>(), 10)).toBe(0)
    expect(recallAnyAtK([], gold, 10)).toBe(0)
  })

  it('reciprocal rank of the first gold hit, 0 without one', async () => {
    expect(reciprocalRank(ranking, gold)).toBe(0.5)
    expect(reciprocalRank(ranking, new Set(['a']))).toBe(1)
    expect(reciprocalRank(ranking, new Set(['d']))).toBe(0.25)
    expect(reciprocalRank(ranking, new Set(['z']))).toBe(0)
    expect(reciprocalRank([], gold)).toBe(0)
  })

  it('NDCG@k with binary relevance, computed by hand', async () => {
    // Hits at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5) = 0.630930 + 0.430677 = 1.061606.
    // Ideal: 2 relevant at ranks 1 and 2: IDCG = 1 + 1/log2(3) = 1.630930. NDCG = 0.650921.
    expect(ndcgAtK(ranking, gold, 10)).toBeCloseTo(0.650921, 6)
    // Cut at 2: DCG = 0.630930, ideal still 2 items: 0.630930 / 1.630930 = 0.386853.
    expect(ndcgAtK(ranking, gold, 2)).toBeCloseTo(0.386853, 6)
    // Cut at 1: no hit.
    expect(ndcgAtK(ranking, gold, 1)).toBe(0)
    expect(ndcgAtK(['b', 'd', 'a'], gold, 10)).toBeCloseTo(1, 12)
  })

  it('NDCG@10 takes the ideal over min(|gold|, 10) items', async () => {
    const many = Array.from({ length: 12 }, (_, i) => `g${i}`)
    expect(ndcgAtK(many.slice(0, 10), new Set(many), 10)).toBeCloseTo(1, 12)
    // One gold of twelve at rank 1: 1 / Σ_{i=1..10} 1/log2(i+1) = 1 / 4.543559 = 0.220092.
    expect(ndcgAtK(['g0'], new Set(many), 10)).toBeCloseTo(0.220092, 6)
  })

  it('maps turn ids to sessions by first appearance', async () => {
    expect(sessionOf('D12:3')).toBe('D12')
    const turns = ['D1:1', 'D3:2', 'D1:4', 'D2:5', 'D3:1']
    expect(sessionRanking(turns)).toEqual(['D1', 'D3', 'D2'])
    expect(sessionRecallAnyAtK(turns, new Set(['D2:9']), 1)).toBe(0)
    expect(sessionRecallAnyAtK(turns, new Set(['D2:9']), 3)).toBe(1)
    // D3:1 is at turn rank 5, but its session D3 is second among sessions.
    expect(sessionRecallAnyAtK(turns, new Set(['D3:1']), 1)).toBe(0)
    expect(sessionRecallAnyAtK(turns, new Set(['D3:1']), 3)).toBe(1)
    expect(sessionRecallAnyAtK(turns, new Set(['D4:1']), 5)).toBe(0)
  })

  it('scoreRanking gathers every metric of one question', async () => {
    // Gold turns D2:1 and D5:3; ranking puts D2:1 at 3, D5:3 at 12.
    const r = ['D1:1', 'D1:2', 'D2:1', 'D3:1', 'D3:2', 'D1:3', 'D4:1', 'D4:2', 'D4:3', 'D4:4', 'D6:1', 'D5:3']
    const s = scoreRanking(r, new Set(['D2:1', 'D5:3']))
    expect(s['recall@1']).toBe(0)
    expect(s['recall@5']).toBe(0.5)
    expect(s['recall@10']).toBe(0.5)
    expect(s['recall@25']).toBe(1)
    expect(s['recall_all@10']).toBe(0)
    expect(s['recall_any@10']).toBe(1)
    expect(s.mrr).toBeCloseTo(1 / 3, 12)
    // DCG = 1/log2(4) = 0.5; IDCG = 1 + 1/log2(3) = 1.630930.
    expect(s['ndcg@10']).toBeCloseTo(0.5 / 1.63093, 5)
    // Sessions in order: D1, D2, D3, D4, D6, D5.
    expect(s['session_recall_any@1']).toBe(0)
    expect(s['session_recall_any@3']).toBe(1)
    expect(s['session_recall_any@5']).toBe(1)
  })

  it('turnRanking keeps distinct sourceRefs in hit order, skips hits without one, cuts at k', async () => {
    const hits = [{ sourceRef: 'D1:1' }, { sourceRef: undefined }, { sourceRef: 'D1:1' }, { sourceRef: 'D2:2' }, { sourceRef: 'D3:3' }]
    expect(turnRanking(hits, 25)).toEqual(['D1:1', 'D2:2', 'D3:3'])
    expect(turnRanking(hits, 2)).toEqual(['D1:1', 'D2:2'])
    expect(turnRanking([], 5)).toEqual([])
  })

  it('percentile interpolates between closest ranks', async () => {
    expect(percentile([4, 1, 3, 2], 50)).toBe(2.5)
    expect(percentile([4, 1, 3, 2], 95)).toBeCloseTo(3.85, 12)
    expect(percentile([7], 95)).toBe(7)
    expect(percentile([], 50)).toBe(0)
  })
})

function expectShape(report: LocomoReport): void {
  expect(report.dataset).toBe('locomo')
  expect(Object.keys(report.groups)).toEqual([...LOCOMO_GROUPS])
  for (const g of LOCOMO_GROUPS) {
    const row = report.groups[g]
    expect(Object.keys(row).sort()).toEqual(['n', ...METRICS].sort())
    for (const m of METRICS) {
      expect(row[m]).toBeGreaterThanOrEqual(0)
      expect(row[m]).toBeLessThanOrEqual(1)
    }
  }
  const g = report.groups
  expect(g['cat1-4'].n).toBe(g.cat1.n + g.cat2.n + g.cat3.n + g.cat4.n)
  expect(report.questions).toBe(g['cat1-4'].n + g.cat5.n)
  expect(report.latency_ms.p50).toBeGreaterThanOrEqual(0)
  expect(report.latency_ms.p95).toBeGreaterThanOrEqual(report.latency_ms.p50)
  expect(report.ingest_ms).toBeGreaterThanOrEqual(0)
  // Plain JSON: no NaN or undefined.
  expect(JSON.parse(JSON.stringify(report))).toEqual(report)
}

describe('runLocomoBench on the hand-written fixture', () => {
  it('counts questions, skipped questions, conversations, turns and group sizes exactly', async () => {
    const report = await runLocomoBench(mini, {})
    expectShape(report)
    // 11 qa items; "D:2:6" and "D" normalise to nothing.
    expect(report.questions).toBe(9)
    expect(report.skipped).toBe(2)
    expect(report.conversations).toBe(2)
    expect(report.turns).toBe(30)
    expect(report.k).toBe(25)
    expect(report.unsearchable).toBe(0)
    const n = Object.fromEntries(LOCOMO_GROUPS.map((g) => [g, report.groups[g].n]))
    expect(n).toEqual({ 'cat1-4': 7, cat1: 1, cat2: 2, cat3: 2, cat4: 2, cat5: 2 })
  })

  it('reports categories 1–4 per conversation, and their n-weighted means are the pooled figures', async () => {
    const report = await runLocomoBench(mini, {})
    const rows = Object.values(report.by_conversation)
    expect(rows).toHaveLength(2)
    expect(rows.reduce((sum, r) => sum + r.n, 0)).toBe(report.groups['cat1-4'].n)
    const pooled = rows.reduce((sum, r) => sum + r['recall@10'] * r.n, 0) / report.groups['cat1-4'].n
    expect(pooled).toBeCloseTo(report.groups['cat1-4']['recall@10'], 10)
    expect(formatLocomoReport(report)).toMatch(/cat1-4 R@10 by conversation: \S+ \d\.\d{3} \(n \d+\), \S+ \d\.\d{3} \(n \d+\)/)
  })

  it('measures a configured embedder too: every turn embedded before the questions, every scored question’s query embedded by recall', async () => {
    // A deterministic stand-in: a 64-dimensional hashed bag of words, unit length.
    const calls = { document: 0, query: 0 }
    const embedder: Embedder = {
      provider: 'test',
      model: 'bow',
      spaceId: 'test:bow:64',
      dimension: () => 64,
      embed: async (texts, kind) => {
        calls[kind] += texts.length
        return texts.map((t) => {
          const v = new Float32Array(64)
          for (const w of t.toLowerCase().match(/[a-z]+/g) ?? []) v[[...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 64, 7)]! += 1
          const n = Math.hypot(...v) || 1
          return v.map((x) => x / n)
        })
      },
    }
    const report = await runLocomoBench(mini, { embedder })
    expect(report.embedder).toBe('test:bow:64')
    expect(report.embed_ms).toBeGreaterThanOrEqual(0)
    expect(calls.document).toBe(report.turns)
    expect(calls.query).toBe(report.questions)
    expect(formatLocomoReport(report)).toContain('embedder test:bow:64')
  })

  it('ranks the evidence turn of an obvious single-hop question first', async () => {
    // The first question: "What did Tomasz bake from his grandmother's recipe?" → D1:3.
    const report = await runLocomoBench(mini, { limitQuestions: 1 })
    expect(report.questions).toBe(1)
    expect(report.conversations).toBe(1)
    expect(report.groups.cat4.n).toBe(1)
    expect(report.groups.cat4['recall@1']).toBe(1)
    expect(report.groups.cat4.mrr).toBe(1)
    expect(report.groups.cat4['ndcg@10']).toBe(1)
    expect(report.groups.cat4['session_recall_any@1']).toBe(1)
  })

  it('limitQuestions counts skipped questions and ingests only the conversations needed', async () => {
    const report = await runLocomoBench(mini, { limitQuestions: 6 })
    expect(report.conversations).toBe(1)
    expect(report.turns).toBe(18)
    expect(report.questions).toBe(5)
    expect(report.skipped).toBe(1)
    const next = await runLocomoBench(mini, { limitQuestions: 7 })
    expect(next.conversations).toBe(2)
    expect(next.questions).toBe(6)
  })

  it('conversations keeps only the samples named, and reports only them', async () => {
    const all = await runLocomoBench(mini, {})
    const [first, second] = Object.keys(all.by_conversation)
    const one = await runLocomoBench(mini, { conversations: [second ?? '', 'no-such-conversation'] })
    expect(one.conversations).toBe(1)
    expect(Object.keys(one.by_conversation)).toEqual([second])
    expect(one.by_conversation[second ?? '']).toEqual(all.by_conversation[second ?? ''])
    expect(Object.keys(one.by_conversation)).not.toContain(first)
  })

  it('cuts the ranking at k', async () => {
    const report = await runLocomoBench(mini, { k: 1 })
    expect(report.k).toBe(1)
    for (const g of LOCOMO_GROUPS) expect(report.groups[g]['recall@25']).toBe(report.groups[g]['recall@1'])
    await expect(runLocomoBench(mini, { k: 0 })).rejects.toThrow(RangeError)
  })

  it('formats a fixed-width table with one row per group, latency and skipped count', async () => {
    const text = formatLocomoReport(await runLocomoBench(mini, {}))
    const lines = text.split('\n')
    const header = lines.find((l) => l.startsWith('group'))
    expect(header).toBeDefined()
    for (const label of ['n', 'R@1', 'R@5', 'R@10', 'R@25', 'all@10', 'any@10', 'MRR', 'NDCG@10', 'S@1', 'S@3', 'S@5']) {
      expect(header?.split(/\s+/)).toContain(label)
    }
    const rows = LOCOMO_GROUPS.map((g) => lines.find((l) => l.startsWith(`${g} `)))
    for (const row of rows) {
      expect(row).toBeDefined()
      expect(row?.length).toBe(header?.length)
    }
    expect(rows[0]).toMatch(/^cat1-4\s+7\s/)
    expect(text).toMatch(/latency per query: p50 \d+\.\d\d ms, p95 \d+\.\d\d ms/)
    expect(text).toContain('skipped (no valid evidence): 2')
  })
})

describe.skipIf(!existsSync(devFile))('runLocomoBench on the real dev split (reads ../shared/datasets/locomo/locomo-dev.json)', () => {
  it('scores the first 20 questions with the report shape and cat1-4 R@10 above 0.3', async () => {
    const report = await runLocomoBench(devFile, { limitQuestions: 20 })
    expectShape(report)
    expect(report.questions + report.skipped).toBe(20)
    expect(report.conversations).toBe(1)
    expect(report.groups['cat1-4'].n).toBeGreaterThan(0)
    expect(report.groups['cat1-4']['recall@10']).toBeGreaterThan(0.3)
  }, 60_000)
})
