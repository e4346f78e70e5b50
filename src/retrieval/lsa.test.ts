import { describe, expect, it } from 'vitest'
import { deserializeLsa, embedLsa, fitLsa, lsaTerms, serializeLsa } from './lsa.js'
import { VectorMatrix } from './vector-index.js'

const corpus = [
  'I painted a sunset over the lake with acrylic paint',
  'the canvas and the brushes for painting are in the studio',
  'painting landscapes with oil paint on canvas relaxes me',
  'we went camping in the forest and hiked to the lake',
  'the campfire and the tent made camping in the forest great',
  'hiking trails in the forest near the campsite',
  'the database migration failed on the orders table',
  'postgres migration scripts for the orders database',
  'rolled back the database migration and fixed the orders schema',
  'my sunset painting won a prize at the art show',
]

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)

describe('lsaTerms', () => {
  it('stems, drops stop words and numbers, splits identifiers, bigrams CJK', () => {
    expect(lsaTerms('The painters were painting 42 validateToken 数据库')).toEqual([
      'painter',
      'paint',
      'validatetoken',
      'valid',
      'token',
      '数据',
      '据库',
    ])
  })
})

describe('lsaTerms in NFKC form', () => {
  it('reads full-width and ligature text as its plain letters, so both sides of the vector channel agree', () => {
    expect(lsaTerms('ｐａｉｎｔｉｎｇ ａｐｐｌｙＤｉｓｃｏｕｎｔ ﬁles')).toEqual(lsaTerms('painting applyDiscount files'))
  })
})

describe('fitLsa / embedLsa', () => {
  it('is deterministic and gives unit vectors', () => {
    const a = fitLsa(corpus, 8)!
    const b = fitLsa(corpus, 8)!
    expect(Array.from(embedLsa(a, 'paint'))).toEqual(Array.from(embedLsa(b, 'paint')))
    expect(dot(embedLsa(a, 'paint the canvas'), embedLsa(a, 'paint the canvas'))).toBeCloseTo(1, 5)
  })
  it('places texts on the same topic closer than texts on another, without shared words', () => {
    const m = fitLsa(corpus, 3)!
    const q = embedLsa(m, 'canvas')
    const art = embedLsa(m, 'sunset painting prize')
    const db = embedLsa(m, 'postgres orders schema')
    expect(dot(q, art)).toBeGreaterThan(dot(q, db))
  })
  it('returns undefined for a corpus too small to learn from', () => {
    expect(fitLsa(['one text', 'two texts'])).toBeUndefined()
  })
  it('round-trips through serialisation', () => {
    const m = fitLsa(corpus, 6)!
    const back = deserializeLsa(serializeLsa(m))!
    expect(Array.from(embedLsa(back, 'camping forest'))).toEqual(Array.from(embedLsa(m, 'camping forest')))
    expect(deserializeLsa(new TextEncoder().encode('not a model'))).toBeUndefined()
  })
})

describe('VectorMatrix.topK', () => {
  it('returns the k most similar rows best first, skipping non-positive scores and wrong dimensions', () => {
    const v = (...xs: number[]) => Float32Array.from(xs)
    const m = new VectorMatrix(
      [
        { docKey: 1, vec: v(1, 0) },
        { docKey: 2, vec: v(0.6, 0.8) },
        { docKey: 3, vec: v(0, 1) },
        { docKey: -4, vec: v(-1, 0) },
        { docKey: 5, vec: v(1, 0, 0) },
      ],
      2,
    )
    expect(m.size).toBe(4)
    expect(m.topK(v(1, 0), 2)).toEqual([
      { key: 1, score: 1 },
      { key: 2, score: expect.closeTo(0.6, 5) },
    ])
    expect(m.topK(v(1, 0), 10).map((h) => h.key)).toEqual([1, 2])
  })
})
