import { describe, expect, it } from 'vitest'
import { estimateTokens } from '../core/text.js'
import { createTestEngine } from '../testing/test-mnemo.js'

const DAY = 86_400_000

async function fareChanged() {
  const t = createTestEngine()
  const deps = t.engine.facts.dependencies
  await deps.set('fare', '840 USD')
  await deps.set('trip_T-12_total', '1290 USD')
  await deps.addRule({ source: 'fare', target: 'trip_T-12_total', effect: 'uncertain' })
  t.clock.advance(DAY)
  await deps.set('fare', '910 USD')
  return t
}

describe('uncertain dependants in the next context block', () => {
  it('shows each uncertain dependant once, in the next block, with what it depended on', async () => {
    const t = await fareChanged()
    const first = await t.engine.context()
    expect(first.text).toContain('## Facts now uncertain')
    expect(first.text).toContain(
      '- Uncertain: trip_T-12_total was 1290 USD, but it depended on fare, which changed to 910 USD on 2025-06-15',
    )
    expect(first.tokens).toBeLessThanOrEqual(first.budgetTokens)
    // Shown once: the next block has nothing left to say (no memories or sessions either, so it is empty).
    expect((await t.engine.context()).text).toBe('')
    // Uncertain again after a later change: shown again, once.
    t.clock.advance(DAY)
    await t.engine.facts.dependencies.set('fare', '990 USD')
    expect((await t.engine.context()).text).toContain('which changed to 990 USD on 2025-06-16')
    expect((await t.engine.context()).text).toBe('')
  })

  it('renders the same block for the same state, oldest change first', async () => {
    const build = async () => {
      const t = await fareChanged()
      const deps = t.engine.facts.dependencies
      await deps.set('hotel_total', '300 USD')
      await deps.addRule({ source: 'fare', target: 'hotel_total', effect: 'uncertain' })
      await deps.set('team_lead', 'Ana')
      await deps.set('review_owner', 'Ana')
      await deps.addRule({ source: 'team_lead', target: 'review_owner', effect: 'uncertain' })
      t.clock.advance(DAY)
      await deps.set('fare', '1000 USD')
      t.clock.advance(DAY)
      await deps.set('team_lead', 'Jihoon')
      return (await t.engine.context()).text
    }
    const a = await build()
    expect(a).toBe(await build())
    const lines = a.split('\n').filter((l) => l.startsWith('- Uncertain: '))
    expect(lines.map((l) => l.split(' ')[2])).toEqual(['hotel_total', 'trip_T-12_total', 'review_owner'])
  })

  it('keeps within the budget; notices left out are counted and shown by a later block', async () => {
    const t = createTestEngine()
    const deps = t.engine.facts.dependencies
    await deps.set('fare', '840 USD')
    for (let i = 0; i < 30; i++) {
      const key = `trip_T-${String(i).padStart(2, '0')}_total_with_a_long_name_for_the_line_${'x'.repeat(60)}`
      await deps.set(key, `${1000 + i} USD`)
      await deps.addRule({ source: 'fare', target: key, effect: 'uncertain' })
    }
    t.clock.advance(DAY)
    await deps.set('fare', '910 USD')
    const shown: string[] = []
    for (let round = 0; round < 10 && shown.length < 30; round++) {
      const block = await t.engine.context({ budgetTokens: 400 })
      expect(block.tokens).toBeLessThanOrEqual(400)
      expect(estimateTokens(block.text)).toBe(block.tokens)
      const lines = block.text.split('\n').filter((l) => l.startsWith('- Uncertain: '))
      expect(lines.length).toBeGreaterThan(0)
      expect(block.omitted).toBe(30 - shown.length - lines.length)
      if (block.omitted > 0) expect(block.text).toContain(`(${block.omitted} more item`)
      for (const l of lines) shown.push(l.split(' ')[2]!)
    }
    expect(shown).toHaveLength(30)
    expect(new Set(shown).size).toBe(30)
    expect((await t.engine.context()).text).toBe('')
  })

  it('adds nothing to a project without dependent facts', async () => {
    const t = createTestEngine()
    await t.engine.facts.dependencies.set('fare', '840 USD')
    expect((await t.engine.context()).text).toBe('')
  })
})
