import { describe, expect, it } from 'vitest'
import { assemblePromptBlock, type PromptItem } from './prompt-block.js'

const items = (n: number, chars: number): PromptItem[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `obs_${i}`,
    label: `message · 2023-05-0${(i % 9) + 1}`,
    text: `item ${i} ${'said something about the retry loop '.repeat(Math.ceil(chars / 36))}`.slice(0, chars),
  }))

describe('assemblePromptBlock', () => {
  it('prepares only the items offered to the block: those after it is full are counted as omitted unread', () => {
    const prepared: string[] = []
    const given = items(12, 400)
    const block = assemblePromptBlock({
      items: given,
      corrections: [],
      budgetTokens: 300,
      prepare: (t) => {
        prepared.push(t)
        return t.toUpperCase()
      },
    })
    // 400 characters are ~100 tokens, a third of the budget: two items fit, the third does not (it is offered, so
    // prepared, and fills the block), the nine after it are left out unread.
    expect(block.itemIds).toEqual(['obs_0', 'obs_1'])
    expect(block.omitted).toBe(10)
    expect(prepared).toEqual(given.slice(0, 3).map((i) => i.text))
    expect(block.text).toContain('- [message · 2023-05-01] ITEM 0 SAID SOMETHING ABOUT THE RETRY LOOP')
  })

  it('gives the same block as preparing every text first', () => {
    const prepare = (t: string): string => t.replace(/retry/g, '[REDACTED]')
    for (const [n, chars, budget] of [
      [12, 400, 300],
      [5, 40, 300],
      [12, 900, 1000],
      [1, 3000, 100],
      [0, 10, 300],
    ] as const) {
      const given = items(n, chars)
      const lazy = assemblePromptBlock({ items: given, corrections: ['- Correction: x'], budgetTokens: budget, prepare })
      const eager = assemblePromptBlock({
        items: given.map((i) => ({ ...i, text: prepare(i.text) })),
        corrections: ['- Correction: x'],
        budgetTokens: budget,
      })
      expect(lazy).toEqual(eager)
    }
  })
})
