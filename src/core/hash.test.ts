import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fnv1a64 } from './hash.js'

/** 64-bit FNV-1a over UTF-16 code units, written the plain way (BigInt), as the reference. */
function fnv1a64BigInt(text: string): string {
  let h = 0xcbf29ce484222325n
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i))
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return h.toString(16).padStart(16, '0')
}

describe('fnv1a64', () => {
  it('gives the FNV reference values for ASCII text (one code unit per byte)', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325')
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c')
    expect(fnv1a64('foobar')).toBe('85944171f73967e8')
  })

  it('equals the BigInt computation for any string, astral characters and lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(fnv1a64(text)).toBe(fnv1a64BigInt(text))
      }),
      { numRuns: 2000 },
    )
    // Code units that set every bit of the low limb, and long runs that carry through every limb.
    for (const text of ['\uffff'.repeat(1000), '\u00ff\uff00'.repeat(777), 'x'.repeat(10_000)])
      expect(fnv1a64(text)).toBe(fnv1a64BigInt(text))
  })
})
