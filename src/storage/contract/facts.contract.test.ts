import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { answerValueText } from '../../core/facts/fact-answer.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import { describeContract, engineOver, T0 } from './contract.js'
import { DIALECTS } from './dialects.js'

// The typed fact ledger (docs/FACTS.md) over each dialect's `Store.facts`, driven through the engine: the records are
// derived from fact events in the log, so the same events must give the same answers on every store.

const TRIPS = fileURLToPath(new URL('../../../fixtures/facts/trips.jsonl', import.meta.url))

const QUERIES = [
  'from trips count',
  'from trips where purpose = "business" avg duration_days',
  'from trips where date in 2024 sum cost_usd',
  'from trips where date in 2024-Q4 count',
  'from trips where tags has "work" and transportation = "flight" count',
  'from trips distinct country',
  'from trips group by purpose share >= 40%',
  'from trips group by year(date) count',
  'from trips argmax duration_days return destination ties earliest date',
  'from trips compare count over date 2023 vs 2024',
]

async function answers(engine: MnemoEngine): Promise<string[]> {
  const out: string[] = []
  for (const q of QUERIES) out.push(answerValueText(await engine.facts.query(q)))
  return out
}

/** What the queries answer over the fixture's ten trips (the same figures as the engine's own fact tests). */
const EXPECTED = ['10', '4', '10050.75', '2', '3', '6', '["business","vacation"]', '["2024","2023","2025"]', 'Paris', 'increase']

describeContract('typed facts', (t) => {
  it('answers typed queries over imported records exactly, and keeps a record’s versions', async () => {
    const { store, clock } = t()
    const engine = engineOver(store, clock)
    await engine.facts.importFile(TRIPS, 'trips')
    expect(await answers(engine)).toEqual(EXPECTED)
    const [id] = (await engine.facts.query('from trips where external_id = 2 list')).records
    clock.advance(1000)
    await engine.facts.update(id!, { duration_days: 15 })
    expect(answerValueText(await engine.facts.query('from trips argmax duration_days return destination'))).toBe('Paris')
    const shown = await engine.facts.show(id!)
    expect(JSON.stringify(shown)).toContain('15')
    // Rebuild derives the same records and versions from the log.
    const before = await answers(engine)
    await engine.rebuild()
    expect(await answers(engine)).toEqual(before)
    expect(await engine.facts.show(id!)).toEqual(shown)
  })

  it('deletes a record for real and keeps users apart', async () => {
    const { store, clock } = t()
    const engine = engineOver(store, clock)
    await engine.facts.importFile(TRIPS, 'trips')
    const [lisbon] = (await engine.facts.query('from trips where destination = "Lisbon" list')).records
    await engine.facts.delete(lisbon!)
    expect(answerValueText(await engine.facts.query('from trips count'))).toBe('9')
    expect(await engine.facts.show(lisbon!)).toEqual({
      deleted: { id: lisbon, collection: 'trips', deletedAt: T0, text: 'you asked me to forget that on 2025-06-14' },
    })
    expect((await store.readEvents(0, 1000)).some((e) => JSON.stringify(e.payload).includes('Lisbon'))).toBe(false)
    const bob = engine.scoped({ user: 'bob' })
    await expect(Promise.resolve().then(() => bob.facts.query('from trips count'))).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await bob.facts.add('trips', { id: 1, date: '2024-01-01', destination: 'Lima' })
    expect(answerValueText(await bob.facts.query('from trips count'))).toBe('1')
    expect(answerValueText(await engine.facts.query('from trips count'))).toBe('9')
  })

  it('carries collections and records through the engine’s export into every dialect', async () => {
    const { store, clock } = t()
    const engine = engineOver(store, clock)
    await engine.facts.importFile(TRIPS, 'trips')
    const lines: string[] = []
    await engine.exportJsonl((line) => lines.push(line))
    for (const target of DIALECTS.filter((d) => d.skip === undefined)) {
      const db = await target.create()
      try {
        const other = engineOver(await db.open(() => clock.now()), clock)
        await other.importExport(lines.join('\n'), 'export.jsonl')
        expect(await answers(other), `into ${target.name}`).toEqual(EXPECTED)
      } finally {
        await db.close()
      }
    }
  })
})
