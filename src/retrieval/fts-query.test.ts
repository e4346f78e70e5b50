import { describe, expect, it } from 'vitest'
import { toMatchExpression, toQueryTerms, toSearchQuery } from './fts-query.js'
import { cjkBigrams, searchForm, splitIdentifier, toIndexedText } from './search-text.js'

describe('index side', () => {
  it('rewrites CJK runs as overlapping bigrams and leaves other text alone', () => {
    expect(cjkBigrams('使用数据库')).toBe(' 使用 用数 数据 据库 ')
    expect(cjkBigrams('run 迁 now')).toBe('run  迁  now')
  })
  it('splits camelCase, PascalCase and acronyms', () => {
    expect(splitIdentifier('validateToken')).toEqual(['validate', 'token'])
    expect(splitIdentifier('HTTPServerError')).toEqual(['http', 'server', 'error'])
    expect(splitIdentifier('getV2Api')).toEqual(['get', 'v2', 'api'])
  })
  it('answers a repeated identifier from its cache with the same words, and splits a long one each time', () => {
    const first = splitIdentifier('XMLHttpRequestFactory')
    expect(first).toEqual(['xml', 'http', 'request', 'factory'])
    expect(splitIdentifier('XMLHttpRequestFactory')).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    const long = `parse${'Segment'.repeat(12)}`
    expect(splitIdentifier(long)).toEqual(['parse', ...Array<string>(12).fill('segment')])
    expect(splitIdentifier(long)).not.toBe(splitIdentifier(long))
  })
  it('puts identifier parts and extra strings in the parts column', () => {
    const ix = toIndexedText('call validateToken now', ['src/middleware/auth.ts', 'Edit'])
    expect(ix.body).toBe('call validateToken now')
    expect(ix.parts).toBe('validate token src/middleware/auth.ts Edit')
  })
  it('indexes the NFKC form: full-width letters, half-width katakana and ligatures as their plain forms', () => {
    const ix = toIndexedText('ｃｈｅｃｋｏｕｔ calls ａｐｐｌｙＤｉｓｃｏｕｎｔ ﬁrst; ｶﾀｶﾅ', ['ｓｒｃ／ｃａｒｔ．ｔｓ'])
    expect(ix.body).toBe('checkout calls applyDiscount first;  カタ タカ カナ ')
    expect(ix.parts).toBe('apply discount src/cart.ts')
    expect(searchForm('plain ascii')).toBe('plain ascii')
    expect(searchForm(searchForm('①ｃ'))).toBe('1c')
  })
})

describe('query side', () => {
  it('drops stop words and possessives, keeps content words', () => {
    expect(toQueryTerms("When did Caroline's team add rate limiting?").map((t) => t.source)).toEqual([
      'Caroline',
      'team',
      'add',
      'rate',
      'limiting',
    ])
  })
  it('keeps paths and dotted identifiers as one phrase term', () => {
    expect(toMatchExpression('where is src/middleware/auth.ts')).toBe('"src/middleware/auth.ts"')
  })
  it('turns a CJK word into the phrase of its bigrams and a single character into a prefix', () => {
    expect(toMatchExpression('数据库')).toBe('"数据 据库" OR "数据" OR "库"*')
    expect(toMatchExpression('数据')).toBe('"数据"')
    expect(toMatchExpression('库')).toBe('"库"*')
  })
  it('reads the query in NFKC form, as the index is: full-width checkout searches for checkout', () => {
    expect(toMatchExpression('ｃｈｅｃｋｏｕｔ')).toBe('"checkout"')
    expect(toMatchExpression('ｓｒｃ／ｃａｒｔ．ｔｓ')).toBe('"src/cart.ts"')
  })
  it('also searches adjacent words joined, the one token FTS5 makes of a camelCase identifier', () => {
    expect(toMatchExpression('apply discount')).toBe('"apply" OR "discount" OR "applydiscount"')
    expect(toMatchExpression('apply bulk discount')).toBe(
      '"apply" OR "bulk" OR "discount" OR "applybulk" OR "applybulkdiscount" OR "bulkdiscount"',
    )
    // A stop word, punctuation inside a word or CJK breaks a run; one word has nothing to join.
    expect(toMatchExpression('apply the discount')).toBe('"apply" OR "discount"')
    expect(toMatchExpression('src/cart.ts discount')).toBe('"src/cart.ts" OR "discount"')
    expect(toMatchExpression('数据 discount')).toBe('"数据" OR "discount"')
    expect(toMatchExpression('checkout')).toBe('"checkout"')
  })
  it('falls back to stop words when nothing else is left', () => {
    expect(toMatchExpression('what is it')).toBe('"what" OR "is" OR "it"')
  })
  it('escapes double quotes and returns undefined for punctuation only', () => {
    expect(toMatchExpression('say "hi"')).toBe('"say" OR "hi" OR "sayhi"')
    expect(toMatchExpression('a"b')).toBe('"a""b"')
    expect(toMatchExpression('?!  ...')).toBeUndefined()
  })
  it('reads a query once into the same form, terms and expression as the separate functions', () => {
    for (const q of ['apply bulk discount', 'ｃｈｅｃｋｏｕｔ ﬁx', '数据库迁移 validateToken', 'src/cart.ts?', '?!  ...', 'what is it']) {
      expect(toSearchQuery(q)).toEqual({ form: searchForm(q), terms: toQueryTerms(q), match: toMatchExpression(q) })
    }
  })
})
