import { describe, expect, it } from 'vitest'
import { createTestEngine } from '../testing/test-mnemo.js'

const DAY = 86_400_000

/** fare → total (uncertain) → budget (uncertain); total → owner (set to "finance"). */
async function chain() {
  const t = createTestEngine()
  const deps = t.engine.facts.dependencies
  await deps.set('fare', '840 USD')
  await deps.set('total', '1290 USD')
  await deps.set('budget', 'ok')
  await deps.set('owner', 'Ana')
  await deps.addRule({ source: 'fare', target: 'total', effect: 'uncertain' })
  await deps.addRule({ source: 'total', target: 'budget', effect: 'uncertain' })
  await deps.addRule({ source: 'total', target: 'owner', effect: 'set', value: 'finance' })
  t.clock.advance(DAY)
  return { t, deps }
}

/** Each key's status, value and number of versions. */
async function state(t: ReturnType<typeof createTestEngine>, keys: string[]) {
  const out: Record<string, string> = {}
  for (const key of keys) {
    const a = await t.engine.facts.dependencies.answer(key)
    const shown = await t.engine.facts.show(a.record!)
    out[key] = `${a.status} ${a.value} v${'history' in shown ? shown.history.length : 0}`
  }
  return out
}

describe('confirming a fact', () => {
  it('re-asserting the value a known key has leaves its dependants as they are', async () => {
    const { t, deps } = await chain()
    const before = await state(t, ['total', 'budget', 'owner'])
    const changes = await deps.set('fare', '840 USD')
    expect(changes).toEqual([{ key: 'fare', before: '840 USD', after: '840 USD', certainty: 'known' }])
    expect(await state(t, ['total', 'budget', 'owner'])).toEqual(before)
    expect(before).toEqual({ total: 'current 1290 USD v1', budget: 'current ok v1', owner: 'current Ana v1' })
  })

  it('re-asserting the value an uncertain key had makes it known and leaves its dependants as they are', async () => {
    const { t, deps } = await chain()
    await deps.set('fare', '910 USD')
    // The change ran: total became uncertain, and so did what rests on it (a set rule cannot fire on an unknown value).
    const after = await state(t, ['total', 'budget', 'owner'])
    expect(after).toEqual({ total: 'uncertain 1290 USD v2', budget: 'uncertain ok v2', owner: 'uncertain Ana v2' })
    t.clock.advance(DAY)
    const changes = await deps.set('total', '1290 USD')
    expect(changes).toEqual([{ key: 'total', before: '1290 USD', after: '1290 USD', certainty: 'known' }])
    expect(await state(t, ['total', 'budget', 'owner'])).toEqual({
      total: 'current 1290 USD v3',
      // Not re-marked (no new version), and the set rule did not fire: the value they rest on did not change.
      budget: 'uncertain ok v2',
      owner: 'uncertain Ana v2',
    })
    // A new value does cascade.
    await deps.set('total', '1400 USD')
    expect(await state(t, ['budget', 'owner'])).toEqual({ budget: 'uncertain ok v3', owner: 'changed finance v3' })
  })
})
