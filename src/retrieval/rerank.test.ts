import { describe, expect, it } from 'vitest'
import { mulberry32 } from '../core/random.js'
import {
  countWords,
  DEFAULT_RERANK_WEIGHTS,
  RERANK_FEATURES,
  type RerankCandidate,
  type RerankFeature,
  rerankFeatures,
  rerankOrder,
  type RerankQuery,
} from './rerank.js'

function candidate(over: Partial<RerankCandidate> = {}): RerankCandidate {
  return { fused: 0.01, bm25: 0, spread: 0, spreadOnly: false, inTime: false, text: 'nothing here', role: 'Ann', session: 's1', ...over }
}

const at = (row: readonly number[] | undefined, name: RerankFeature): number => row![RERANK_FEATURES.indexOf(name)]!

const query: RerankQuery = { words: new Set(['when', 'did', 'ben', 'adopt', 'the', 'cat']), terms: ['ben', 'adopt', 'cat'], asked: 'time' }

describe('rerankFeatures', () => {
  it('gives one vector per candidate, in feature order, normalised per query', () => {
    const head = [
      candidate({ fused: 0.032, bm25: 8, spread: 9, text: 'I adopted a cat last May.', role: 'Ben', session: 's1' }),
      candidate({ fused: 0.016, bm25: 4, spread: 4, text: 'Do you like cats?', role: 'Ann', session: 's1', graphRank: 1 }),
      candidate({ fused: 0.008, spread: 2, spreadOnly: true, inTime: true, text: 'Cool.', role: 'Ann', session: 's2' }),
    ]
    const rows = rerankFeatures(head, query)
    expect(rows).toHaveLength(3)
    for (const row of rows) expect(row).toHaveLength(RERANK_FEATURES.length)
    expect(at(rows[0], 'fused')).toBe(1)
    expect(at(rows[1], 'fused')).toBe(0.5)
    expect(at(rows[0], 'logRank')).toBe(1)
    expect(at(rows[2], 'logRank')).toBe(0)
    expect(at(rows[1], 'bm25')).toBe(0.5)
    expect(at(rows[2], 'spreadOnly')).toBe(1)
    expect(at(rows[1], 'graph')).toBe(1)
    expect(at(rows[0], 'graph')).toBe(0)
    expect(at(rows[2], 'time')).toBe(1)
    expect(at(rows[0], 'speaker')).toBe(1)
    expect(at(rows[1], 'speaker')).toBe(0)
    expect(at(rows[0], 'answerType')).toBe(1)
    expect(at(rows[1], 'answerType')).toBe(0)
    expect(at(rows[1], 'question')).toBe(1)
    expect(at(rows[0], 'question')).toBe(0)
  })

  it('caps the length feature at 99 words: a long tool output does not rise on its length alone', () => {
    const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i}`).join(' ')
    const rows = rerankFeatures([candidate({ text: words(9) }), candidate({ text: words(99) }), candidate({ text: words(2000) })], query)
    expect(at(rows[0], 'length')).toBeCloseTo(Math.log(10) / Math.log(100))
    expect(at(rows[1], 'length')).toBe(1)
    expect(at(rows[2], 'length')).toBe(1)
  })

  it('weights covered terms by how few candidates hold them; short terms must match whole words', () => {
    const head = [candidate({ text: 'adopted a cat' }), candidate({ text: 'the cat sat' }), candidate({ text: 'a category error' })]
    const rows = rerankFeatures(head, { words: new Set(), terms: ['adopt', 'cat'] })
    // "adopt" is in one candidate of three, "cat" (a whole word) in two: ln(1 + 3/2) and ln(1 + 3/3).
    const adopt = Math.log(1 + 3 / 2)
    const cat = Math.log(1 + 3 / 3)
    expect(at(rows[0], 'coverage')).toBeCloseTo(1)
    expect(at(rows[1], 'coverage')).toBeCloseTo(cat / (adopt + cat))
    expect(at(rows[2], 'coverage')).toBe(0)
  })

  it('describes the session: its best fused score, its share of the head, the best other keyword score, whether it is among the first three', () => {
    const head = [
      candidate({ fused: 0.04, bm25: 10, session: 'a' }),
      candidate({ fused: 0.03, bm25: 6, session: 'b' }),
      candidate({ fused: 0.02, bm25: 5, session: 'c' }),
      candidate({ fused: 0.01, bm25: 2, session: 'a' }),
      candidate({ fused: 0.005, bm25: 1, session: 'd' }),
    ]
    const rows = rerankFeatures(head, { words: new Set(), terms: [] })
    expect(at(rows[3], 'sessionBest')).toBe(1)
    expect(at(rows[3], 'sessionShare')).toBe(2 / 5)
    expect(at(rows[0], 'sessionOther')).toBe(0.2)
    expect(at(rows[3], 'sessionOther')).toBe(1)
    expect(at(rows[1], 'sessionOther')).toBe(0)
    expect(rows.map((r) => at(r, 'sessionTop3'))).toEqual([1, 1, 1, 1, 0])
  })

  it('returns nothing for an empty head', () => {
    expect(rerankFeatures([], query)).toEqual([])
  })
})

describe('rerankOrder', () => {
  it('keeps the fused order with the fused score alone, ties included', () => {
    const head = [candidate({ fused: 0.03 }), candidate({ fused: 0.02 }), candidate({ fused: 0.02 }), candidate({ fused: 0.01 })]
    expect(rerankOrder(rerankFeatures(head, query), { fused: 1 })).toEqual([0, 1, 2, 3])
  })

  it('lets a strong feature lift a lower candidate', () => {
    const head = [candidate({ fused: 0.03, text: 'Is it?' }), candidate({ fused: 0.029, text: 'It is.' })]
    expect(rerankOrder(rerankFeatures(head, query), { fused: 1, question: -1 })).toEqual([1, 0])
  })
})

describe('DEFAULT_RERANK_WEIGHTS', () => {
  it('names only known features and is finite', () => {
    for (const [name, w] of Object.entries(DEFAULT_RERANK_WEIGHTS)) {
      expect(RERANK_FEATURES).toContain(name)
      expect(Number.isFinite(w)).toBe(true)
    }
  })
})

describe('countWords', () => {
  it('counts what split(/\\s+/) without its empty strings counts, Unicode spaces included', () => {
    for (const text of [
      '',
      '   ',
      'one',
      ' two  words ',
      'tab\tnew\nline\r\nend',
      'no\u00a0break\u2003em\u3000ideo',
      'ｆｕｌｌ ｗｉｄｔｈ 😀 x',
      '\ufeffbom start',
    ]) {
      const words = text.split(/\s+/).filter((w) => w.length > 0).length
      expect(countWords(text)).toBe(words)
      for (const max of [0, 1, 2, 99]) expect(countWords(text, max)).toBe(Math.min(max, words))
    }
    // Twice in a row: no state carried from one call to the next.
    expect(countWords('a b c', 2)).toBe(2)
    expect(countWords('a b c')).toBe(3)
  })

  it('counts up to max as split does, around max and past the first 4,096 characters', () => {
    const rand = mulberry32(7)
    const spaces = [' ', '  ', '\t', '\n', '\u3000']
    for (let t = 0; t < 300; t++) {
      const n = Math.floor(rand() * 220)
      const wordLength = 1 + Math.floor(rand() * (t % 3 === 0 ? 90 : 8))
      const lead = rand() < 0.5 ? ' ' : ''
      const text =
        lead +
        Array.from({ length: n }, () => 'x'.repeat(1 + Math.floor(rand() * wordLength))).join(spaces[t % spaces.length]) +
        (rand() < 0.5 ? '\n' : '')
      const words = text.split(/\s+/).filter((w) => w.length > 0).length
      for (const max of [1, 2, 98, 99, 100, 150, 1000, 1001])
        expect(countWords(text, max), `${n} words, max ${max}`).toBe(Math.min(max, words))
    }
  })

  it('gives the length feature of a text of 99 words and more the same value, 1', () => {
    for (const n of [98, 99, 100, 5000]) {
      const value = Math.min(1, Math.log(1 + n) / Math.log(100))
      expect(Math.min(1, Math.log(1 + Math.min(n, 99)) / Math.log(100))).toBe(value)
    }
  })
})
