import { expect, it } from 'vitest'
import { mulberry32 } from '../../core/random.js'
import type { EventInput, MemoryKind } from '../../core/types.js'
import type { SearchDoc, Store } from '../store.js'
import { isVisible, type Visibility } from '../visibility.js'
import { ALPHA, appendEvents, describeContract, editEvent, MINUTE, memoryEvent, memoryId, memoryOp, promptEvent, T0 } from './contract.js'

// The visibility rule (storage/visibility.ts) is applied in SQL by every channel's query of each dialect and in
// TypeScript by `isVisible` (the builtin vectors' cached matrices): over generated documents and requests, each
// channel's answer is exactly its answer without the rule, filtered by `isVisible`.

const KINDS: readonly MemoryKind[] = ['fact', 'decision', 'lesson', 'preference']
const FILE = 'src/zebra.ts'

/**
 * Observations (prompts and edits, in three sessions) and memories of every stated kind, some superseded by a later
 * version and some archived, at times one minute apart, every text naming `FILE` and the word "zebra".
 * @returns The times that matter at the boundaries: each document's, and when each memory was superseded or archived.
 */
async function world(store: Store, next: () => number): Promise<number[]> {
  const events: EventInput[] = []
  const times: number[] = []
  let ts = T0
  const tick = (): number => {
    ts += MINUTE
    times.push(ts)
    return ts
  }
  const current: string[] = []
  for (let i = 0; i < 24; i++) {
    const session = `s${i % 3}`
    const r = next()
    if (r < 0.3) events.push(promptEvent(`p${i}`, `zebra crossing near ${FILE} #${i}`, { session, ts: tick() }))
    else if (r < 0.5) events.push(editEvent(`e${i}`, FILE, `zebra stripes ${i}`, { session, ts: tick() }))
    else if (r < 0.7 && current.length > 0) {
      // A new version of a current memory: the old one is superseded at this time.
      const old = current.splice(Math.floor(next() * current.length), 1)[0]!
      const event = memoryEvent(`zebra count in ${FILE} is now ${i}`, { kind: 'fact', supersedes: old, ts: tick() })
      events.push(event)
      current.push(memoryId(event))
    } else if (r < 0.8 && current.length > 0) {
      events.push(memoryOp('archive', current[Math.floor(next() * current.length)]!, { ts: tick() }))
    } else {
      const kind = KINDS[Math.floor(next() * KINDS.length)]!
      const event = memoryEvent(`zebra ${kind} ${i} about ${FILE}`, { kind, ts: tick() })
      events.push(event)
      current.push(memoryId(event))
    }
  }
  await appendEvents(store, events)
  return times
}

/** A request: as of a time at a boundary (a document's time, or a millisecond either side) or none, archived or not, some kinds or none. */
function aVisibility(next: () => number, times: readonly number[], kinds: readonly string[]): Visibility {
  const v: Visibility = {}
  if (next() < 0.6) v.asOf = times[Math.floor(next() * times.length)]! + [-1, 0, 1][Math.floor(next() * 3)]!
  if (next() < 0.5) v.includeArchived = true
  const k = next()
  if (k < 0.2) v.kinds = []
  else if (k < 0.6) v.kinds = [...kinds.filter(() => next() < 0.4), ...(next() < 0.2 ? ['unknown'] : [])]
  return v
}

const keysOf = (docs: readonly SearchDoc[]): number[] => docs.map((d) => d.docKey).sort((a, b) => a - b)
const sorted = (keys: Iterable<number>): number[] => [...keys].sort((a, b) => a - b)

describeContract('visibility', (t) => {
  it.each([1, 2, 3])(
    'every channel returns exactly the documents isVisible keeps (generated world and requests, seed %i)',
    async (seed) => {
      const { store } = t()
      {
        const next = mulberry32(seed)
        const times = await world(store, next)
        const alpha = (await store.listProjects()).find((p) => p.root === ALPHA.root)!.id
        const scope = { projectIds: [alpha], user: null }
        // Every document of the scope: the time channel without a rule.
        const inOrder = await store.docsInTimeRange({ ...scope, from: 0, to: T0 + 1000 * MINUTE, limit: 10_000 })
        const all = await store.docs(inOrder)
        const kinds = [...new Set(all.map((d) => d.kind))]
        // The world holds what the rule tells apart: both types, superseded and archived memories.
        expect(all.some((d) => d.type === 'observation')).toBe(true)
        expect(all.some((d) => d.validTo !== undefined) && all.some((d) => d.archivedAt !== undefined)).toBe(true)
        await store.putVectors(
          'test:space',
          all.map((d) => ({ docKey: d.docKey, vec: new Float32Array([1, 0]) })),
        )
        const [entity] = await store.findEntities(scope, [{ type: 'file', name: FILE }])
        const mentioned = sorted((await store.entityMentions([entity!.id], scope, 10_000)).map((m) => m.docKey))
        expect(mentioned.some((k) => k > 0) && mentioned.some((k) => k < 0)).toBe(true)
        const observations = all.filter((d) => d.type === 'observation')
        const unfilteredNeighbors = await store.neighbors(observations, 1000)
        // Prompt recall's count of matches: what recall returns by default.
        const byDefault = all.filter((d) => isVisible({}, d)).length
        expect(await store.matchCount({ ...scope, match: '"zebra"', limit: 10_000 })).toBe(byDefault)
        for (let i = 0; i < 40; i++) {
          const v = aVisibility(next, times, kinds)
          const label = `seed ${seed}, request ${JSON.stringify(v)}`
          const visible = new Set(keysOf(all.filter((d) => isVisible(v, d))))
          const hits = await store.searchText({ ...scope, ...v, match: '"zebra"', limit: 10_000 })
          expect(sorted(hits.map((h) => h.docKey)), `keyword: ${label}`).toEqual(sorted(visible))
          const inTime = await store.docsInTimeRange({ ...scope, from: 0, to: T0 + 1000 * MINUTE, limit: 10_000, visible: v })
          expect(sorted(inTime), `time: ${label}`).toEqual(sorted(visible))
          // Before the cut: the first three visible documents, however many hidden ones come before them.
          const firstThree = await store.docsInTimeRange({ ...scope, from: 0, to: T0 + 1000 * MINUTE, limit: 3, visible: v })
          expect(firstThree, `time, limit 3: ${label}`).toEqual(inOrder.filter((k) => visible.has(k)).slice(0, 3))
          const mentions = await store.entityMentions([entity!.id], { ...scope, visible: v }, 10_000)
          expect(sorted(mentions.map((m) => m.docKey)), `graph: ${label}`).toEqual(mentioned.filter((k) => visible.has(k)))
          const vectors = await store.vectors('test:space', scope, v)
          expect(sorted(vectors.map((r) => r.docKey)), `vectors: ${label}`).toEqual(sorted(visible))
          const near = await store.neighbors(observations, 1000, v)
          for (const [key, { prev, next: after }] of unfilteredNeighbors) {
            expect(near.get(key), `neighbours of ${key}: ${label}`).toEqual({
              prev: prev.filter((k) => visible.has(k)),
              next: after.filter((k) => visible.has(k)),
            })
          }
        }
      }
    },
  )
})
