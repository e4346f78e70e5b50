import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { estimateTokens } from '../core/text.js'
import { anchorRelativeDates, hasRelativeDate } from './anchor-dates.js'
import { BlockBuilder, capItem, cutToTokens, MAX_ITEM_SHARE, omittedLine } from './block-builder.js'

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' })
const graphemesOf = (text: string): string[] => [...segmenter.segment(text)].map((s) => s.segment)

/** Graphemes that break naive cuts: astral emoji, ZWJ families, flags, skin tones, keycaps, combining marks, CJK. */
const HARD = ['🔴', '👨‍👩‍👧‍👦', '🇯🇵', '🇺🇦', '👍🏽', '🧑🏿‍💻', '1️⃣', 'é', 'ñ', '語', '𠮷', '🏳️‍🌈', 'a', ' ']

/** True when `cut` is `text` itself or whole graphemes of its start plus `…` (what a grapheme-safe cut gives). */
function isGraphemePrefix(cut: string, text: string): boolean {
  if (cut === text || cut === '') return true
  if (!cut.endsWith('…')) return false
  const head = graphemesOf(cut.slice(0, -1))
  const whole = graphemesOf(text)
  return head.every((g, i) => whole[i] === g)
}

describe('cutToTokens and capItem', () => {
  it('cut every mixed grapheme string at every budget on a grapheme boundary, well-formed and within the budget', () => {
    // Each hard grapheme at every offset: a 2-char ASCII prefix shifts surrogate parity like the "ab" + "🔴"×300 prompt.
    for (const g of HARD) {
      for (const prefix of ['', 'a', 'ab', 'abc']) {
        const text = `${prefix}${g.repeat(40)} tail`
        const total = estimateTokens(text)
        for (let t = 0; t <= total + 1; t++) {
          const cut = cutToTokens(text, t)
          expect(cut.isWellFormed(), `${JSON.stringify(prefix)}+${g} at ${t}`).toBe(true)
          expect(estimateTokens(cut)).toBeLessThanOrEqual(t)
          expect(isGraphemePrefix(cut, text), `${JSON.stringify(prefix)}+${g} at ${t}: ${JSON.stringify(cut)}`).toBe(true)
        }
      }
    }
  })

  it('holds for any string of hard graphemes at any budget (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...HARD), { minLength: 0, maxLength: 120 }), fc.integer({ min: 0, max: 80 }), (parts, t) => {
        const text = parts.join('')
        const cut = cutToTokens(text, t)
        return cut.isWellFormed() && estimateTokens(cut) <= t && isGraphemePrefix(cut, text)
      }),
      { numRuns: 400, seed: 15 },
    )
  })

  it('names the item id in a cut so the rest can be fetched, and leaves a fitting item whole', () => {
    const long = `build log ${'step ok '.repeat(2000)}`
    const capped = capItem(long, 100, 'mem_01abc')
    expect(capped).toMatch(/… \(cut; memory_show mem_01abc\)$/)
    expect(estimateTokens(capped)).toBeLessThanOrEqual(100)
    expect(capItem('short', 100, 'mem_01abc')).toBe('short')
  })
})

describe('BlockBuilder', () => {
  it('gives no item more than its share: one 9,000-character log beside three short memories leaves room for all four', () => {
    const b = new BlockBuilder(['<b>'], '</b>', 2000)
    expect(b.item(`- [fact] ${'x'.repeat(9000)}`, 'mem_long')).toBe(true)
    for (const id of ['mem_a', 'mem_b', 'mem_c']) expect(b.item(`- [fact] short memory ${id}`, id)).toBe(true)
    const built = b.finish()
    expect(built.omitted).toBe(0)
    expect(built.tokens).toBeLessThanOrEqual(2000)
    const longLine = built.text.split('\n').find((l) => l.includes('mem_long'))!
    expect(estimateTokens(longLine)).toBeLessThanOrEqual(2000 * MAX_ITEM_SHARE)
    expect(built.text).toContain('short memory mem_c')
  })

  it('says how many items it left out, and still fits the budget with that line', () => {
    const b = new BlockBuilder(['<b>'], '</b>', 200)
    let shown = 0
    for (let i = 0; i < 30; i++) if (b.item(`- item ${i} ${'word '.repeat(20)}`, `mem_${i}`)) shown++
    const built = b.finish()
    expect(built.omitted).toBe(30 - shown)
    expect(built.text).toContain(omittedLine(30 - shown))
    expect(built.tokens).toBeLessThanOrEqual(200)
  })

  it('is well-formed and within budget for any items at any budget (property)', () => {
    const item = fc.array(fc.constantFrom(...HARD, 'word ', 'x'), { minLength: 1, maxLength: 400 }).map((p) => p.join(''))
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 12 }), fc.integer({ min: 120, max: 900 }), (items, budget) => {
        const b = new BlockBuilder(['<b>'], '</b>', budget)
        let shown = 0
        for (const [i, text] of items.entries()) if (b.item(text, `mem_${i}`)) shown++
        const built = b.finish()
        // No repair is needed: every line was cut on grapheme boundaries.
        return (
          built.text.isWellFormed() && !built.text.includes('\uFFFD') && built.tokens <= budget && built.omitted === items.length - shown
        )
      }),
      { numRuns: 300, seed: 4 },
    )
  })
})

describe('anchorRelativeDates', () => {
  const said = Date.parse('2026-11-30T20:00:00Z')
  it('appends the day a relative date was said, in the engine time zone', () => {
    expect(anchorRelativeDates('release freeze starts tomorrow', said, 'UTC')).toBe('release freeze starts tomorrow (said 2026-11-30)')
    // 20:00 UTC is already 1 December in Tokyo.
    expect(anchorRelativeDates('we ship next week', said, 'Asia/Tokyo')).toBe('we ship next week (said 2026-12-01)')
    for (const t of [
      'deploy in 3 days',
      'the outage was 2 weeks ago',
      'demo on Friday',
      'standup moved to this afternoon',
      'retro next sprint',
    ])
      expect(hasRelativeDate(t), t).toBe(true)
  })
  it('leaves text without a relative date alone', () => {
    for (const t of ['the orders DB is PostgreSQL 14', 'freeze starts 2026-12-01', 'todays-report.ts is generated', 'nextweekly cron'])
      expect(anchorRelativeDates(t, said, 'UTC'), t).toBe(t)
  })
})
