import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../testing/test-mnemo.js'
import { appendEvents, promptEvent, T0 } from '../contract/contract.js'
import type { Store, TextMatch } from '../store.js'
import { matchedOnly, matchPhrases, zeroIdfSplit } from './sqlite-common-terms.js'
import { SqliteDb } from './sqlite-db.js'
import { openSqliteStore } from './sqlite-store.js'

/** The plain query: every match of `match` ranked by bm25, cut at `limit` (the whole store, nothing hidden in it). */
function plain(db: Database.Database, match: string, limit: number): TextMatch[] {
  return db
    .prepare(
      `SELECT f.rowid AS docKey, o.role AS role, -bm25(search_fts, 1, 0.5, 0.5) AS score FROM search_fts f
       JOIN observations o ON o.rowid = f.rowid WHERE search_fts MATCH ? ORDER BY score DESC, f.rowid LIMIT ?`,
    )
    .all(match, limit) as TextMatch[]
}

/** Rows of the index holding `phrase`. */
const rowsWith = (db: Database.Database, phrase: string): number =>
  db.prepare('SELECT COUNT(*) FROM search_fts WHERE search_fts MATCH ?').pluck().get(phrase) as number

/**
 * A store of `n` prompts, each with a length of its own (no two documents tie on a score): prompt i holds `common`
 * when i % 10 < 6 (60%), `half` when i < n / 2, `under` when i < n / 2 - 1 (just under half: an idf above 0),
 * `rare` when i % 9 = 0 and `scarce` when i % 13 = 0.
 */
async function openFixture(n: number): Promise<{ store: Store; db: Database.Database; s: SqliteDb; close: () => Promise<void> }> {
  const dir = tempDir('mnemo-common-terms-')
  const file = path.join(dir.dir, 'mnemo.db')
  const store = openSqliteStore({ path: file })
  const events = Array.from({ length: n }, (_, i) => {
    const words = [
      ...(i % 10 < 6 ? ['common'] : []),
      ...(i < n / 2 ? ['half'] : []),
      ...(i < n / 2 - 1 ? ['under'] : []),
      ...(i % 9 === 0 ? ['rare', 'rare'] : []),
      ...(i % 13 === 0 ? ['scarce'] : []),
      // A length of its own: filler words no query asks for.
      ...Array.from({ length: 1 + (i % 97) }, (_, j) => `filler${j % 5}`),
    ]
    return promptEvent(`p${i}`, words.join(' '), { session: `s${i % 7}`, ts: T0 + i * 60_000 })
  })
  await appendEvents(store, events)
  const db = new Database(file, { readonly: true })
  return {
    store,
    db,
    s: new SqliteDb(db, file, () => T0),
    close: async () => {
      db.close()
      await store.close()
      dir.cleanup()
    },
  }
}

describe('matchPhrases', () => {
  it('reads the phrases of the form toMatchExpression writes', () => {
    expect(matchPhrases('"a" OR "b c" OR "認"* OR "say ""hi"""')).toEqual(['"a"', '"b c"', '"認"*', '"say ""hi"""'])
    expect(matchPhrases('"a"')).toEqual(['"a"'])
  })
  it('gives undefined for any other syntax', () => {
    for (const other of ['a OR b', '"a" AND "b"', '("a" OR "b")', '"a" OR', '"a" NOT "b"', '"a" OR "b', ''])
      expect(matchPhrases(other), other).toBeUndefined()
  })
})

describe('zeroIdfSplit on a small store (every phrase counted)', () => {
  let f: Awaited<ReturnType<typeof openFixture>>
  beforeAll(async () => {
    f = await openFixture(60)
  })
  afterAll(async () => f.close())

  it('drops the phrases in half the rows or more and keeps the one just under half', () => {
    const rows = f.db.prepare('SELECT COUNT(*) FROM search_fts').pluck().get() as number
    // The fixture is what the names say: FTS5's idf of `under` is above 0, of `half` and `common` clamped.
    expect(2 * rowsWith(f.db, '"under"')).toBeLessThan(rows)
    expect(2 * rowsWith(f.db, '"half"')).toBeGreaterThanOrEqual(rows)
    expect(2 * rowsWith(f.db, '"common"')).toBeGreaterThanOrEqual(rows)
    expect(zeroIdfSplit(f.s, '"rare" OR "common" OR "under" OR "half"')).toEqual({
      kept: '"rare" OR "under"',
      dropped: '"common" OR "half"',
    })
  })

  it('keeps every phrase when every one is common, and a lone phrase', () => {
    expect(zeroIdfSplit(f.s, '"common" OR "half"')).toBeUndefined()
    expect(zeroIdfSplit(f.s, '"common"')).toBeUndefined()
    expect(zeroIdfSplit(f.s, '"rare" OR "under"')).toBeUndefined()
  })

  it('gives the plain query’s documents in its order, scores within 2.2e-6 per phrase dropped', async () => {
    const queries = [
      '"rare" OR "common"',
      '"scarce" OR "common" OR "half"',
      '"rare" OR "under" OR "common"',
      '"under" OR "half"',
      '"common" OR "half"',
      '"scarce" OR "rare" OR "filler3" OR "common"',
    ]
    let compared = 0
    // 3: the kept phrases fill the limit; 40 and 100: the documents holding only dropped phrases fill the tail.
    for (const match of queries)
      for (const limit of [3, 40, 100]) {
        const got = await f.store.searchText({ match, limit, weights: [1, 0.5, 0.5] })
        const want = plain(f.db, match, limit)
        expect(
          got.map((h) => [h.docKey, h.role]),
          `${match} limit ${limit}`,
        ).toEqual(want.map((h) => [h.docKey, h.role]))
        for (const [i, h] of got.entries()) expect(Math.abs(h.score - want[i]!.score)).toBeLessThanOrEqual(2 * 2.2e-6)
        compared += got.length
      }
    expect(compared).toBeGreaterThan(500)
  })
})

describe('matchedOnly', () => {
  let f: Awaited<ReturnType<typeof openFixture>>
  beforeAll(async () => {
    f = await openFixture(60)
  })
  afterAll(() => f.close())

  it('leaves out the phrases no document holds, in order, and gives undefined when none is held', () => {
    expect(matchedOnly(f.s, '"nowhere" OR "rare" OR "rarecommon" OR "common" OR "gone"*')).toBe('"rare" OR "common"')
    expect(matchedOnly(f.s, '"rare" OR "common"')).toBe('"rare" OR "common"')
    expect(matchedOnly(f.s, '"nowhere" OR "gone"')).toBeUndefined()
    // Another syntax comes back as it is.
    expect(matchedOnly(f.s, 'rare AND nowhere')).toBe('rare AND nowhere')
  })

  it('gives searchText the same hits, scores bit for bit, as the plain query with every phrase', async () => {
    // No phrase here is in half the rows (zeroIdfSplit leaves none out).
    for (const match of ['"nowhere" OR "rare" OR "under" OR "rareunder"', '"scarce" OR "nowhere" OR "under"', '"nowhere" OR "gone"'])
      for (const limit of [3, 40]) {
        const got = await f.store.searchText({ match, limit, weights: [1, 0.5, 0.5] })
        expect(got, `${match} limit ${limit}`).toEqual(plain(f.db, match, limit))
      }
  })
})

describe('zeroIdfSplit on a store of 1,200 prompts (phrases sampled among the oldest first)', () => {
  let f: Awaited<ReturnType<typeof openFixture>>
  beforeAll(async () => {
    f = await openFixture(1200)
  })
  afterAll(async () => f.close())

  it('drops the common phrase found in the sample and keeps the rest', async () => {
    // `half` is in the oldest half only: in all of the sample, so counted, and dropped; `under` is kept by its count.
    expect(zeroIdfSplit(f.s, '"scarce" OR "common" OR "under" OR "half"')).toEqual({
      kept: '"scarce" OR "under"',
      dropped: '"common" OR "half"',
    })
    const match = '"scarce" OR "rare" OR "common"'
    const got = await f.store.searchText({ match, limit: 200, weights: [1, 0.5, 0.5] })
    const want = new Map(plain(f.db, match, 200).map((h) => [h.docKey, h.score]))
    // Lengths repeat here, so documents tie on `scarce` and `rare`: the plain query orders them by their share of
    // `common` (≤ 2.2e-6), the split by key. The same documents, and no plain score out of order by more than that.
    expect(new Set(got.map((h) => h.docKey))).toEqual(new Set(want.keys()))
    let lowest = Number.POSITIVE_INFINITY
    for (const h of got) {
      const score = want.get(h.docKey)!
      expect(score - lowest).toBeLessThanOrEqual(2.2e-6)
      lowest = Math.min(lowest, score)
    }
  })
})
