import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isAscii, isLetterOrNumber, letterNumberRuns, trimToLettersAndNumbers } from './search-text.js'

/** Characters where the ASCII and Unicode forms could part: edges of the ASCII classes, letters and digits beyond it, surrogates. */
const EDGE_CHARS = [
  'a',
  'z',
  'A',
  'Z',
  '0',
  '9',
  '_',
  '-',
  "'",
  '’',
  '.',
  '/',
  '@',
  '[',
  '`',
  '{',
  ' ',
  '\t',
  '\n',
  '\u0000',
  '\u007f',
  '\u0080',
  'ª',
  'º',
  '²',
  'é',
  'ß',
  'İ',
  'K',
  'ſ',
  '٣',
  '语',
  'ｃ',
  '𝐀',
  '😀',
  '\ud835',
  '\udc00',
  '\u200b',
  '\u00a0',
  '–',
  '—',
  '♀',
  '\ufe0f',
  '\u200d',
  '🌟',
  '\u2070',
  '\u2071',
  '\u2460',
  '\u2776',
  '🄀',
  '🯰',
]
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: fc.constantFrom(...EDGE_CHARS) }),
  fc.string({ unit: fc.constantFrom(...EDGE_CHARS.filter((c) => isAscii(c))) }),
)

describe('letter and number scans', () => {
  it('find the same runs, edges and characters as the Unicode property regexps, ASCII text or not', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(letterNumberRuns(s)).toEqual(s.match(/[\p{L}\p{N}]+/gu) ?? [])
        expect(letterNumberRuns(s, true)).toEqual(s.match(/[\p{L}\p{N}_]+/gu) ?? [])
        expect(trimToLettersAndNumbers(s)).toBe(s.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
      }),
      { numRuns: 3000 },
    )
    // Every code point (lone surrogates included), one by one and as the runs of a text.
    const property = /[\p{L}\p{N}]/u
    let wrong = 0
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const ch = String.fromCodePoint(cp)
      if (isLetterOrNumber(ch) !== property.test(ch)) wrong++
    }
    expect(wrong).toBe(0)
    for (let from = 0x80; from <= 0x10ffff; from += 0x200) {
      let s = ''
      for (let cp = from; cp < Math.min(from + 0x200, 0x110000); cp++) s += `${String.fromCodePoint(cp)}_a `
      expect(letterNumberRuns(s)).toEqual(s.match(/[\p{L}\p{N}]+/gu) ?? [])
      expect(letterNumberRuns(s, true)).toEqual(s.match(/[\p{L}\p{N}_]+/gu) ?? [])
    }
    const long = 'naïve – café 𝐀1 '.repeat(500)
    expect(letterNumberRuns(long)).toEqual(long.match(/[\p{L}\p{N}]+/gu) ?? [])
    for (const ch of ['𝐀', '😀', '𠮷', '\ud835\udc00', 'ab', '-a', '']) expect(isLetterOrNumber(ch)).toBe(property.test(ch))
  })

  it('read ASCII text by its ASCII classes', () => {
    expect(letterNumberRuns('What did Caroline_2 research?')).toEqual(['What', 'did', 'Caroline', '2', 'research'])
    expect(letterNumberRuns('What did Caroline_2 research?', true)).toEqual(['What', 'did', 'Caroline_2', 'research'])
    expect(trimToLettersAndNumbers('"auth.ts?"')).toBe('auth.ts')
    expect(letterNumberRuns('café ｃｈｅｃｋ 𝐀1')).toEqual(['café', 'ｃｈｅｃｋ', '𝐀1'])
    expect(isAscii('')).toBe(true)
    expect(isAscii('a\u0080')).toBe(false)
  })
})
