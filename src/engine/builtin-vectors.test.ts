import { describe, expect, it } from 'vitest'
import { createTestEngine } from '../testing/test-mnemo.js'
import type { Store } from '../storage/store.js'
import { BuiltinVectors } from './builtin-vectors.js'

describe('builtin LSA vectors', () => {
  it('decode a stored model once per process, and again only after a refit elsewhere gives it a new space', async () => {
    const { engine, store, clock } = createTestEngine()
    const topics = ['painting sunset canvas brush', 'camping forest tent hike', 'database migration orders schema']
    for (let i = 0; i < 30; i++) await engine.remember(`${topics[i % 3]} note ${i}`, { project: { root: '/p/v', name: 'v' } })
    const scope = { projectIds: (await engine.listProjects()).map((p) => p.id) }
    // The process that fits the model keeps it decoded.
    const fitter = new BuiltinVectors(store, clock)
    expect((await fitter.search('canvas brush', scope, 5)).length).toBeGreaterThan(0)
    // Another process (a second instance over the same store) reads and decodes it once, however many searches follow.
    let reads = 0
    const counting = new Proxy(store, {
      get: (target, prop, receiver) =>
        prop === 'getLsaModel'
          ? async (...args: Parameters<Store['getLsaModel']>) => {
              reads++
              return await target.getLsaModel(...args)
            }
          : Reflect.get(target, prop, receiver),
    })
    const other = new BuiltinVectors(counting, clock)
    const first = await other.search('canvas brush', scope, 5)
    for (let i = 0; i < 5; i++) expect(await other.search('canvas brush', scope, 5)).toEqual(first)
    expect(reads).toBe(1)
    // A refit by the first process (a new space) is picked up: read and decoded once more.
    clock.advance(1000)
    await fitter.prepare(scope.projectIds[0]!, true)
    await other.search('tent hike', scope, 5)
    await other.search('tent hike', scope, 5)
    expect(reads).toBe(2)
  })
})
