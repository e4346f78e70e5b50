import { expect, it } from 'vitest'
import type { Store } from '../store.js'
import {
  ALPHA,
  appendEvents,
  BETA,
  DAY,
  describeContract,
  editEvent,
  engineOver,
  HOUR,
  idsOf,
  MINUTE,
  memoryEvent,
  memoryId,
  memoryOp,
  observationId,
  promptEvent,
  T0,
} from './contract.js'

/** Ids of the documents a keyword search finds, sorted. */
async function found(store: Store, match: string, options: { asOf?: number; includeArchived?: boolean; user?: string | null } = {}) {
  const hits = await store.searchText({ match, limit: 50, ...options })
  return (
    await idsOf(
      store,
      hits.map((h) => h.docKey),
    )
  ).sort()
}

/** Three versions of one memory, a day apart: v2 supersedes v1, v3 supersedes v2. */
async function chain(store: Store) {
  const v1 = memoryEvent('the orders DB is PostgreSQL 14', { ts: T0 })
  await appendEvents(store, [v1])
  const v2 = memoryEvent('the orders DB is PostgreSQL 16', { ts: T0 + DAY, supersedes: memoryId(v1) })
  await appendEvents(store, [v2])
  const v3 = memoryEvent('the orders DB moved to MySQL 8', { ts: T0 + 2 * DAY, supersedes: memoryId(v2) })
  await appendEvents(store, [v3])
  return { v1: memoryId(v1), v2: memoryId(v2), v3: memoryId(v3), events: { v1, v2, v3 } }
}

describeContract('deletes and tombstones', (t) => {
  it('a governance delete takes the event and everything derived from it, and its key becomes a tombstone', async () => {
    const { store, clock } = t()
    const gone = editEvent('gone', 'src/secret.ts', 'leaked token handling', { ts: T0 })
    const kept = promptEvent('kept', 'handling of the retry queue', { ts: T0 + MINUTE })
    await appendEvents(store, [gone, kept])
    const [goneKey] = await store.docsInTimeRange({ from: T0, to: T0 + 1, limit: 1 })
    await store.putVectors('space', [{ docKey: goneKey!, vec: new Float32Array([1, 0]) }])
    expect(await store.observationIdsOfEvents({ projectRoot: ALPHA.root, seqs: [1] })).toEqual([observationId(gone)])
    clock.set(T0 + HOUR)
    expect(await store.deleteEvents({ seqs: [1] })).toBe(1)
    expect(await store.getObservation(observationId(gone))).toBeUndefined()
    expect(await store.docs([goneKey!])).toEqual([])
    expect(await found(store, '"handling"')).toEqual([observationId(kept)])
    expect(await store.vectors('space', {})).toEqual([])
    expect(await store.findEntities({}, [{ type: 'file', name: 'src/secret.ts' }])).toEqual([])
    expect((await store.readEvents(0, 10)).map((e) => e.idemKey)).toEqual(['kept'])
    expect(await store.tombstones()).toEqual([{ idemKey: 'gone', at: T0 + HOUR, projectRoot: ALPHA.root }])
    // A re-delivery or re-import of the deleted event is a no-op.
    expect(await appendEvents(store, [gone])).toMatchObject({ inserted: 0, duplicates: 1, observations: 0 })
    expect(await store.getObservation(observationId(gone))).toBeUndefined()
    expect(await store.scopeCounts()).toEqual({ events: 1, sessions: 1, observations: 1, memories: 0 })
  })

  it('deletes one user’s events of a project, or only shared ones, and nothing of another project or user', async () => {
    const { store } = t()
    await appendEvents(store, [
      promptEvent('a1', 'alice one', { user: 'alice', session: 'al', ts: T0 }),
      promptEvent('a2', 'alice two', { user: 'alice', session: 'al', ts: T0 + 1 }),
      promptEvent('b1', 'bob one', { user: 'bob', session: 'bo', ts: T0 + 2 }),
      promptEvent('s1', 'shared one', { ts: T0 + 3 }),
      promptEvent('x1', 'alice in beta', { user: 'alice', project: BETA, session: 'al', ts: T0 + 4 }),
    ])
    expect(await store.deleteEvents({ projectRoot: ALPHA.root, user: 'alice' })).toBe(2)
    expect((await store.readEvents(0, 10)).map((e) => e.idemKey)).toEqual(['user:bob:b1', 's1', 'user:alice:x1'])
    expect(await store.deleteEvents({ projectRoot: ALPHA.root, user: null })).toBe(1)
    expect((await store.readEvents(0, 10)).map((e) => e.idemKey)).toEqual(['user:bob:b1', 'user:alice:x1'])
    expect((await store.tombstones(ALPHA.root)).map((r) => r.idemKey).sort()).toEqual(['s1', 'user:alice:a1', 'user:alice:a2'])
    expect(await store.tombstones(BETA.root)).toEqual([])
    // (Sessions left without events are the engine's to re-derive: `deleteScope` rebuilds after the delete.)
    expect(await store.scopeCounts(ALPHA.root)).toMatchObject({ events: 1, observations: 1, memories: 0 })
    expect(await store.scopeCounts(BETA.root, 'alice')).toMatchObject({ events: 1, observations: 1, memories: 0 })
    // A project none of whose events is left is gone, as a rebuild would leave it.
    expect(await store.deleteEvents({ projectRoot: BETA.root })).toBe(1)
    expect((await store.listProjects()).map((p) => p.root)).toEqual([ALPHA.root])
  })

  it('deletes a session’s events, or those before a time', async () => {
    const { store } = t()
    await appendEvents(store, [
      promptEvent('s1-old', 'old one', { session: 's1', ts: T0 }),
      promptEvent('s1-new', 'new one', { session: 's1', ts: T0 + DAY }),
      promptEvent('s2', 'other session', { session: 's2', ts: T0 }),
      promptEvent('cx', 'codex, same session id', { session: 's1', agent: 'codex', ts: T0 }),
    ])
    expect(await store.deleteEvents({ projectRoot: ALPHA.root, sessionKey: 's1', agent: 'claude-code', before: T0 + HOUR })).toBe(1)
    expect((await store.readEvents(0, 10)).map((e) => e.idemKey)).toEqual(['s1-new', 's2', 'cx'])
    expect(await store.deleteEvents({ projectRoot: ALPHA.root, before: T0 + HOUR })).toBe(2)
    expect((await store.readEvents(0, 10)).map((e) => e.idemKey)).toEqual(['s1-new'])
  })

  it('refuses a delete without a scope and loses nothing', async () => {
    const { store } = t()
    await appendEvents(store, [promptEvent('p', 'still here')])
    await expect(store.deleteEvents({})).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    expect(await store.deleteEvents({ seqs: [] })).toBe(0)
    expect(await store.scopeCounts()).toEqual({ events: 1, sessions: 1, observations: 1, memories: 0 })
  })

  it('keeps tombstones brought by an export: their events are not stored, and existing tombstones are not changed', async () => {
    const { store } = t()
    await store.putTombstones([
      { idemKey: 'exported-gone', at: T0 - DAY, projectRoot: ALPHA.root },
      { idemKey: 'beta-gone', at: T0 - DAY, projectRoot: BETA.root },
      { idemKey: 'no-project', at: T0 - DAY, projectRoot: undefined },
    ])
    await store.putTombstones([{ idemKey: 'exported-gone', at: T0, projectRoot: ALPHA.root }])
    expect(await store.tombstones(ALPHA.root)).toEqual([{ idemKey: 'exported-gone', at: T0 - DAY, projectRoot: ALPHA.root }])
    expect((await store.tombstones()).map((r) => r.idemKey).sort()).toEqual(['beta-gone', 'exported-gone', 'no-project'])
    expect(await appendEvents(store, [promptEvent('exported-gone', 'must not come back'), promptEvent('fresh', 'new')])).toMatchObject({
      inserted: 1,
      duplicates: 1,
      seqs: [undefined, 1],
    })
  })
})

describeContract('version chains and as-of reads', (t) => {
  it('a memory that supersedes another closes its validity; the history lists every version oldest first', async () => {
    const { store } = t()
    const { v1, v2, v3 } = await chain(store)
    const history = await store.memoryHistory(v2)
    expect(history.map((m) => [m.id, m.validFrom, m.validTo, m.supersedes, m.supersededBy])).toEqual([
      [v1, T0, T0 + DAY, undefined, v2],
      [v2, T0 + DAY, T0 + 2 * DAY, v1, v3],
      [v3, T0 + 2 * DAY, undefined, v2, undefined],
    ])
    expect((await store.memoryHistory(v1)).map((m) => m.id)).toEqual([v1, v2, v3])
    expect((await store.memoryHistory(v3)).map((m) => m.id)).toEqual([v1, v2, v3])
    expect(await store.memoryHistory('mem_unknown')).toEqual([])
    const alpha = (await store.listProjects())[0]!.id
    expect((await store.listMemories({ projectIds: [alpha], limit: 10 })).map((m) => m.id)).toEqual([v3])
    expect((await store.allMemories(alpha)).map((m) => m.id)).toEqual([v1, v2, v3])
    const page = (state: 'current' | 'superseded' | 'all') => store.browseMemories({ projectIds: [alpha], state, offset: 0, limit: 10 })
    expect((await page('current')).total).toBe(1)
    expect((await page('superseded')).memories.map((m) => m.id).sort()).toEqual([v1, v2].sort())
    expect((await page('all')).total).toBe(3)
    expect(await found(store, '"orders"')).toEqual([v3])
  })

  it('reads as of a time: the version current then, and nothing written after it', async () => {
    const { store } = t()
    const { v1, v2, v3 } = await chain(store)
    const later = promptEvent('later', 'orders DB question', { ts: T0 + 3 * DAY })
    await appendEvents(store, [later])
    expect(await found(store, '"orders"', { asOf: T0 - 1 })).toEqual([])
    expect(await found(store, '"orders"', { asOf: T0 })).toEqual([v1])
    expect(await found(store, '"orders"', { asOf: T0 + DAY - 1 })).toEqual([v1])
    expect(await found(store, '"orders"', { asOf: T0 + DAY })).toEqual([v2])
    expect(await found(store, '"orders"', { asOf: T0 + 2 * DAY + HOUR })).toEqual([v3])
    expect(await found(store, '"orders"', { asOf: T0 + 3 * DAY })).toEqual([v3, observationId(later)].sort())
    expect(await found(store, '"orders"')).toEqual([v3, observationId(later)].sort())
  })

  it('archived memories leave default search and come back with includeArchived; pinned ones list first', async () => {
    const { store } = t()
    const a = memoryEvent('deploys go through the staging queue', { ts: T0 })
    const b = memoryEvent('deploys need a changelog entry', { ts: T0 + 1 })
    const c = memoryEvent('deploys are frozen on Fridays', { ts: T0 + 2 })
    await appendEvents(store, [a, b, c])
    await appendEvents(store, [memoryOp('archive', memoryId(b), { ts: T0 + 3 }), memoryOp('pin', memoryId(a), { ts: T0 + 4 })])
    expect(await found(store, '"deploys"')).toEqual([memoryId(a), memoryId(c)].sort())
    expect(await found(store, '"deploys"', { includeArchived: true })).toEqual([memoryId(a), memoryId(b), memoryId(c)].sort())
    const alpha = (await store.listProjects())[0]!.id
    expect((await store.listMemories({ projectIds: [alpha], limit: 10 })).map((m) => m.id)).toEqual([memoryId(a), memoryId(c)])
    expect(await store.getMemory(memoryId(b))).toMatchObject({ archivedAt: T0 + 3, pinned: false })
    expect(
      (await store.browseMemories({ projectIds: [alpha], state: 'archived', offset: 0, limit: 10 })).memories.map((m) => m.id),
    ).toEqual([memoryId(b)])
    await appendEvents(store, [memoryOp('restore', memoryId(b), { ts: T0 + 5 })])
    expect(await found(store, '"deploys"')).toEqual([memoryId(a), memoryId(b), memoryId(c)].sort())
  })

  it('deleting a middle version links its neighbours; deleting the current one makes the one before current again', async () => {
    const { store } = t()
    const { v1, v2, v3 } = await chain(store)
    expect(await store.deleteEvents({ seqs: [2] })).toBe(1)
    expect((await store.memoryHistory(v3)).map((m) => [m.id, m.validTo, m.supersedes, m.supersededBy])).toEqual([
      [v1, T0 + 2 * DAY, undefined, v3],
      [v3, undefined, v1, undefined],
    ])
    expect(await store.getMemory(v2)).toBeUndefined()
    expect(await store.deleteEvents({ seqs: [3] })).toBe(1)
    expect((await store.memoryHistory(v1)).map((m) => [m.id, m.validTo, m.supersededBy])).toEqual([[v1, undefined, undefined]])
    expect(await found(store, '"orders"')).toEqual([v1])
  })

  it('the engine’s remember, history, forget and recall as of work over the store', async () => {
    const { store, clock } = t()
    const engine = engineOver(store, clock)
    const first = (await engine.remember('the payments service uses Stripe', { project: ALPHA })).memory
    clock.advance(DAY)
    const second = (await engine.remember('the payments service uses Adyen now', { project: ALPHA, supersedes: first.id })).memory
    expect((await engine.history(first.id)).map((m) => [m.id, m.validTo])).toEqual([
      [first.id, T0 + DAY],
      [second.id, undefined],
    ])
    const now = await engine.recall('payments service', { limit: 5 })
    expect(now.map((h) => h.id)).toEqual([second.id])
    const then = await engine.recall('payments service', { limit: 5, asOf: T0 + HOUR })
    expect(then.map((h) => h.id)).toEqual([first.id])
    clock.advance(HOUR)
    const forgotten = await engine.forget(second.id)
    expect(forgotten).toMatchObject({ id: second.id, type: 'memory', events: 1, restored: { id: first.id } })
    expect((await engine.recall('payments service', { limit: 5 })).map((h) => h.id)).toEqual([first.id])
    expect((await store.tombstones(ALPHA.root)).map((r) => r.at)).toEqual([T0 + DAY + HOUR])
  })
})
