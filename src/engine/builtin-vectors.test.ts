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

  /** 40 distinct texts over three topics (the write guard keeps each: no two are near duplicates). */
  const varied = (n: number, from = 0): string[] => {
    const topics = ['painting sunset canvas brush', 'camping forest tent hike', 'database migration orders schema']
    const extra = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima']
    return Array.from({ length: n }, (_, k) => {
      const i = from + k
      return `${topics[i % 3]} ${extra[i % 12]} ${extra[(i * 5 + 3) % 12]} ${extra[(i * 7 + 1) % 12]} session ${i * 37} about ${i}`
    })
  }

  it('search what another process embedded since this one read its vectors (server replicas on one database)', async () => {
    const { engine, store, clock } = createTestEngine()
    const project = { root: '/p/v', name: 'v' }
    for (const text of varied(30)) await engine.remember(text, { project })
    const scope = { projectIds: (await engine.listProjects()).map((p) => p.id) }
    const writer = new BuiltinVectors(store, clock)
    const reader = new BuiltinVectors(store, clock)
    const before = (await reader.search('tent hike', scope, 100)).map((h) => h.key)
    expect(before.length).toBeGreaterThan(5)
    // The writer's replica stores three more and embeds them on its own next search (no refit for three).
    for (const name of ['kilo', 'lima', 'mike']) await engine.remember(`camping forest tent hike ${name} weekend by the lake`, { project })
    const written = (await writer.search('tent hike', scope, 100)).map((h) => h.key)
    expect(written.filter((key) => !before.includes(key))).toHaveLength(3)
    // The reader embeds nothing itself (the vectors are there), and still sees them all, ranked as the writer ranks them.
    expect((await reader.search('tent hike', scope, 100)).map((h) => h.key)).toEqual(written)
  })

  it('prepare a project once for concurrent searches of one scope', async () => {
    const { engine, store, clock } = createTestEngine()
    for (const text of varied(30)) await engine.remember(text, { project: { root: '/p/v', name: 'v' } })
    const scope = { projectIds: (await engine.listProjects()).map((p) => p.id) }
    let fits = 0
    const counting = new Proxy(store, {
      get: (target, prop, receiver) =>
        prop === 'putLsaModel'
          ? async (...args: Parameters<Store['putLsaModel']>) => {
              fits++
              await target.putLsaModel(...args)
            }
          : Reflect.get(target, prop, receiver),
    })
    const vectors = new BuiltinVectors(counting, clock)
    const results = await Promise.all([1, 2, 3, 4].map(() => vectors.search('tent hike', scope, 5)))
    expect(fits).toBe(1)
    expect(results[0]!.length).toBeGreaterThan(0)
    for (const r of results) expect(r).toEqual(results[0])
  })
})
