import { describe, expect, it } from 'vitest'
import { MnemoError } from '../../core/errors.js'
import { toMatchExpression } from '../../retrieval/fts-query.js'
import { anyTerm, ftsTokens, MAX_POSITIONS_PER_LEXEME, parseMatch, searchVector } from './pg-text.js'

describe('ftsTokens', () => {
  // Each expected list is what FTS5 (porter unicode61 remove_diacritics 2, better-sqlite3 12.11.1) stored for the text.
  const FTS5: [string, string[]][] = [
    [
      'src/middleware/auth.ts jose.jwtVerify rate-limiting foo_bar v2.3.1',
      ['src', 'middlewar', 'auth', 'ts', 'jose', 'jwtverifi', 'rate', 'limit', 'foo', 'bar', 'v2', '3', '1'],
    ],
    ['Café naïve İstanbul straße e\u0301te\u0301 ΣΊΣΥΦΟΣ', ['cafe', 'naiv', 'istanbul', 'straß', 'et', 'σίσυφοσ']],
    ['Running runners generously relational hopefully agreed ponies', ['run', 'runner', 'gener', 'relat', 'hopefulli', 'agre', 'poni']],
    [' 数据 据库 库迁 迁移 を実行した', ['数据', '据库', '库迁', '迁移', 'を実行した']],
    [
      "it's don't O'Brien x@y.com https://ex.com/a?b=c",
      ['it', 's', 'don', 't', 'o', 'brien', 'x', 'y', 'com', 'http', 'ex', 'com', 'a', 'b', 'c'],
    ],
  ]
  it('makes the tokens FTS5 makes', () => {
    for (const [text, want] of FTS5) expect(ftsTokens(text), text).toEqual(want)
  })
})

describe('searchVector', () => {
  it('writes positions with the column as weight and an empty position between columns', () => {
    expect(searchVector({ body: "O'Neil said it's back\\slash", parts: 'said', meta: 'user' })).toBe(
      "'o':1A 'neil':2A 'said':3A,9B 'it':4A 's':5A 'back':6A 'slash':7A 'user':11C",
    )
    expect(searchVector({ body: '', parts: '', meta: 'Caroline' })).toBe("'carolin':1C")
    expect(searchVector({ body: '...', parts: '', meta: '' })).toBe('')
  })

  it('keeps at most 256 positions of a lexeme and leaves out tokens too long for PostgreSQL', () => {
    const v = searchVector({ body: `${'go '.repeat(300)}${'x'.repeat(3000)} end`, parts: '', meta: '' })
    expect(v.split(',').length).toBe(MAX_POSITIONS_PER_LEXEME)
    expect(v).toContain("'end':302A")
    expect(v).not.toContain('xxxx')
  })
})

describe('parseMatch', () => {
  it('turns the expressions toMatchExpression writes into tsquery terms', () => {
    expect(parseMatch('"jwt verify" OR "auth.ts" OR "認"*')).toEqual([
      { lexemes: ['jwt', 'verifi'], prefix: false, tsquery: "'jwt' <-> 'verifi'" },
      { lexemes: ['auth', 'ts'], prefix: false, tsquery: "'auth' <-> 'ts'" },
      { lexemes: ['認'], prefix: true, tsquery: "'認':*" },
    ])
    expect(parseMatch('"say ""hi"""')).toEqual([{ lexemes: ['sai', 'hi'], prefix: false, tsquery: "'sai' <-> 'hi'" }])
    expect(anyTerm(parseMatch('"a" OR "b c"'))).toBe("('a') | ('b' <-> 'c')")
    for (const q of [
      'when did we add rate limiting to auth.ts?',
      '数据库迁移はいつ',
      "Caroline's LGBTQ support group",
      'applyDiscount v2.3',
    ])
      expect(() => parseMatch(toMatchExpression(q) ?? ''), q).not.toThrow()
  })

  it('leaves out phrases without tokens, as FTS5 matches nothing for them', () => {
    expect(parseMatch('"..." OR "jwt"')).toEqual([{ lexemes: ['jwt'], prefix: false, tsquery: "'jwt'" }])
    expect(anyTerm(parseMatch('"?"'))).toBeUndefined()
  })

  it('refuses the rest of FTS5 syntax with INVALID_INPUT naming the expression', () => {
    for (const bad of [
      'jwt',
      '"a" AND "b"',
      'NEAR("a" "b")',
      '"a" OR',
      '"a" "b"',
      '"a" ORx "b"',
      '"unclosed',
      '   ',
      'body:"a"',
      '"a"**',
    ]) {
      let thrown: unknown
      try {
        parseMatch(bad)
      } catch (e) {
        thrown = e
      }
      expect(MnemoError.is(thrown, 'INVALID_INPUT'), bad).toBe(true)
      expect((thrown as MnemoError<'INVALID_INPUT'>).details.path).toBe('match')
      expect((thrown as Error).message).toContain(JSON.stringify(bad))
    }
  })
})
