import { describe, expect, it } from 'vitest'
import { estimateTokens } from '../core/text.js'
import { MAX_ITEM_SHARE } from '../context/block-builder.js'
import { createTestEngine, hookPayload } from '../testing/test-mnemo.js'

describe('the context block is fair, well-formed and says what it left out', () => {
  it('one 9,000-character memory takes at most its share: the three short ones are still injected', async () => {
    const { engine, clock } = createTestEngine()
    const long = (await engine.remember(`Build log: ${'compiled module ok; '.repeat(470)}`)).memory
    clock.advance(1000)
    const short: string[] = []
    for (const t of ['we deploy with the release script', 'the orders DB is PostgreSQL 14', 'code style: tabs']) {
      clock.advance(1000)
      short.push((await engine.remember(t)).memory.id)
    }
    const block = await engine.context({ budgetTokens: 2000 })
    expect(block.memoryIds).toEqual(expect.arrayContaining([long.id, ...short]))
    const line = block.text.split('\n').find((l) => l.includes('Build log'))!
    expect(estimateTokens(line)).toBeLessThanOrEqual(2000 * MAX_ITEM_SHARE)
    expect(line).toContain(`… (cut; memory_show ${long.id})`)
    expect(block.tokens).toBeLessThanOrEqual(2000)
  })

  it('a prompt of "ab" + 300 × 🔴 leaves the session digest well-formed (no lone surrogate)', async () => {
    const { engine } = createTestEngine()
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: `ab${'🔴'.repeat(300)}` }))
    for (const budget of [200, 250, 300, 2000]) {
      const block = await engine.context({ budgetTokens: budget, excludeSessionKey: 'other' })
      expect(block.sessionIds).toHaveLength(1)
      expect(block.text.isWellFormed()).toBe(true)
      expect(block.text).not.toContain('\uFFFD')
      expect(block.text).toMatch(/🔴…/)
    }
  })

  it('says in the block how many items it left out', async () => {
    const { engine, clock } = createTestEngine()
    for (let i = 0; i < 30; i++) {
      clock.advance(1000)
      await engine.remember(`memory number ${i} about the ${'deployment pipeline '.repeat(8)}`)
    }
    const block = await engine.context({ budgetTokens: 300 })
    expect(block.omitted).toBeGreaterThan(0)
    expect(block.text).toContain(`(${block.omitted} more items left out for the budget;`)
    expect(block.tokens).toBeLessThanOrEqual(300)
  })

  it('shows the day a memory with a relative date was said', async () => {
    const { engine } = createTestEngine()
    const { memory } = await engine.remember('the release freeze starts tomorrow')
    const day = new Date(memory.createdAt).toISOString().slice(0, 10)
    expect((await engine.context()).text).toContain(`the release freeze starts tomorrow (said ${day})`)
  })
})
