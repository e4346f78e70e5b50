import { describe, expect, it } from 'vitest'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import { createTestEngine } from '../testing/test-mnemo.js'
import { toMatchExpression } from './fts-query.js'

// Counterexamples found by `node scripts/fuzz.mjs` (targets fts-query and recall), kept as unit tests.
// "Accepted" means the real FTS5 table (porter unicode61 remove_diacritics 2) runs the expression.

async function ftsAccepts(expr: string): Promise<void> {
  const store = openSqliteStore({ path: ':memory:' }, () => 0)
  try {
    expect(() => store.searchText({ match: expr, limit: 5 })).not.toThrow()
  } finally {
    await store.close()
  }
}

describe('toMatchExpression: fuzz regressions', () => {
  it.each([
    ['0\u0000vitae', '"0\uFFFDvitae"'],
    ['NEAR(\u0000__init__', '"NEAR(\uFFFD__init"'],
    ['ø\u00000', '"ø\uFFFD0"'],
  ])('turns a NUL in %j into U+FFFD (as stored text has it), which FTS5 accepts', async (query, expected) => {
    // Before the fix the NUL reached SQLite, which read it as the end of the text: "unterminated string".
    const expr = toMatchExpression(query)
    expect(expr).toBe(expected)
    await ftsAccepts(expr!)
  })

  it('terminates on "ｧァ" (a halfwidth katakana the indexer does not treat as CJK, then a full-width one)', async () => {
    // Before the fix: RangeError, Maximum call stack size exceeded (addChunk recursed on the same piece).
    const expr = toMatchExpression('ｧァ')
    // Queries are read in NFKC form since: the halfwidth ｧ is the full-width ァ, so the run is one CJK bigram.
    expect(expr).toBe('"ァァ"')
    await ftsAccepts(expr!)
  })

  it('recall finds "ｧァ" the way it was indexed, and never throws on it', async () => {
    const { engine } = createTestEngine()
    const { memory } = await engine.remember('ｧァ is the tag of the build', { project: { root: '/p/kana', name: 'kana' } })
    const hits = await engine.recall('ｧァ')
    expect(hits.map((h) => h.id)).toEqual([memory.id])
  })
})
