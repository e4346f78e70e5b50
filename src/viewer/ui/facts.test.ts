import { describe, expect, it } from 'vitest'
import { factValueText, fieldTypeText, isUncertain, provenanceText, versionChanges } from './facts.js'
import type { FactVersion } from './types.js'

const v = (n: number, values: FactVersion['values'], extra: Partial<FactVersion> = {}): FactVersion => ({
  id: 'fct_1',
  collection: 'flights',
  values,
  status: 'done',
  recordedAt: Date.UTC(2024, 0, n),
  version: n,
  provenance: { source: 'user' },
  action: 'assert',
  ...extra,
})

describe('fact formatting', () => {
  it('writes types and values in words', () => {
    expect(fieldTypeText({ name: 'tags', type: 'list', items: 'string' })).toBe('list of string')
    expect(fieldTypeText({ name: 'kind', type: 'enum', values: ['a', 'b'] })).toBe('enum (a, b)')
    expect(fieldTypeText({ name: 'fare', type: 'money', currency: 'EUR' })).toBe('money (EUR)')
    expect(fieldTypeText({ name: 'trip', type: 'reference', collection: 'trips' })).toBe('reference → trips')
    expect(factValueText(1290.5, { name: 'fare', type: 'money' })).toBe('1,290.5 USD')
    expect(factValueText(['a', 'b'])).toBe('a, b')
    expect(factValueText([])).toBe('(none)')
    expect(factValueText(null)).toBe('—')
    expect(factValueText(false)).toBe('false')
  })

  it('says what each version changed', () => {
    const fields = [
      { name: 'to', type: 'string' },
      { name: 'fare', type: 'money' },
    ]
    const a = v(1, { to: 'Tokyo', fare: 820 })
    const b = v(2, { to: 'Tokyo', fare: 905 }, { status: 'planned' })
    const c = v(3, { to: 'Tokyo', fare: 905 }, { status: 'planned', action: 'retract', validTo: Date.UTC(2024, 4, 2) })
    const d = v(4, { to: 'Osaka', fare: 905 }, { status: 'planned' })
    expect(versionChanges(undefined, a, fields)).toEqual(['recorded'])
    expect(versionChanges(a, b, fields)).toEqual(['fare: 820 USD → 905 USD', 'status: done → planned'])
    expect(versionChanges(b, c, fields)).toEqual(['retracted (stopped holding on 2024-05-02)'])
    expect(versionChanges(c, d, fields)).toEqual(['asserted again', 'to: Tokyo → Osaka', 'valid to: 2024-05-02 → —'])
    expect(versionChanges(b, v(5, b.values, { status: 'planned' }), fields)).toEqual(['no change'])
  })

  it('marks an uncertain entity-attribute fact, and writes provenance', () => {
    expect(isUncertain({ collection: 'entity_state', values: { certainty: 'uncertain' } })).toBe(true)
    expect(isUncertain({ collection: 'entity_state', values: { certainty: 'known' } })).toBe(false)
    expect(isUncertain({ collection: 'notes', values: { certainty: 'uncertain' } })).toBe(false)
    expect(provenanceText({ source: 'import', file: 'trips.csv', line: 4 })).toBe('import (trips.csv line 4)')
    expect(provenanceText({ source: 'extraction', quote: 'we flew to Lima' })).toBe('extraction: “we flew to Lima”')
  })
})
