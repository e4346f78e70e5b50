import { expect, it } from 'vitest'
import { invalidInput } from '../../core/errors.js'
import type { EventInput } from '../../core/types.js'
import { indexEvent } from '../../engine/index-event.js'
import type { Derivation, Store } from '../store.js'
import {
  ALPHA,
  appendEvents,
  BETA,
  describeContract,
  editEvent,
  MINUTE,
  memoryEvent,
  memoryId,
  memoryOp,
  observationId,
  promptEvent,
  T0,
  TIME_ZONE,
} from './contract.js'

/** Everything derived that a reader can see, by id: what a rebuild must reproduce. */
async function derivedState(store: Store) {
  const projects = await store.listProjects()
  const projectIds = projects.map((p) => p.id)
  const sessions = await store.listSessions({ limit: 100 })
  const observations = await Promise.all(sessions.map((s) => store.sessionObservations(s.id, 100)))
  const memories = await Promise.all(projectIds.map((id) => store.allMemories(id)))
  const search = await store.searchText({ match: '"billing"', limit: 20 })
  return {
    projects,
    sessions,
    observations,
    memories,
    counts: await store.scopeCounts(),
    docs: await store.countDocs({}),
    search: (await store.docs(search.map((m) => m.docKey))).map((d) => d.id),
  }
}

describeContract('event log', (t) => {
  it('stores an event delivered twice, in one batch or in two, once, and derives it once', async () => {
    const { store } = t()
    const e = promptEvent('k1', 'add rate limiting to validateToken')
    let derived = 0
    const item = {
      event: e,
      derive: (): Derivation => {
        derived++
        return indexEvent(e, TIME_ZONE)
      },
    }
    const first = await store.append([item, item])
    expect(first).toMatchObject({ inserted: 1, duplicates: 1, observations: 1, seqs: [1, undefined] })
    const second = await store.append([item])
    expect(second).toMatchObject({ inserted: 0, duplicates: 1, observations: 0, seqs: [undefined] })
    expect(derived).toBe(1)
    expect((await store.readEvents(0, 10)).map((s) => s.idemKey)).toEqual(['k1'])
    expect(await store.scopeCounts()).toEqual({ events: 1, sessions: 1, observations: 1, memories: 0 })
  })

  it('skips an event one of whose sameAs keys is stored (the same delivery keyed in a neighbouring second)', async () => {
    const { store } = t()
    const e = promptEvent('k1@1', 'run the migrations')
    await appendEvents(store, [e])
    const again = { ...promptEvent('k1@2', 'run the migrations'), ts: T0 + 1000 }
    const r = await store.append([{ event: again, derive: () => indexEvent(again, TIME_ZONE), sameAs: ['k1@1'] }])
    expect(r).toMatchObject({ inserted: 0, duplicates: 1 })
    expect((await store.readEvents(0, 10)).map((s) => s.idemKey)).toEqual(['k1@1'])
  })

  it('concurrent appends through two stores on one database keep exactly one copy of each event', async () => {
    const { db, store, clock } = t()
    const other = await db.open(() => clock.now())
    const events: EventInput[] = []
    for (let i = 0; i < 30; i++) {
      const origin = { session: `s${i % 3}`, ts: T0 + i * 1000, project: i % 2 === 0 ? ALPHA : BETA }
      events.push(
        i % 5 === 4 ? editEvent(`e${i}`, `src/f${i}.ts`, `change ${i}`, origin) : promptEvent(`e${i}`, `prompt number ${i}`, origin),
      )
    }
    // Every event goes in four times at once: alone through each store, and in a batch of all of them through each,
    // one batch in reverse order, so both stores race for the same keys in opposite orders.
    const results = await Promise.all([
      ...events.map((e) => appendEvents(store, [e])),
      ...events.map((e) => appendEvents(other, [e])),
      appendEvents(store, events),
      appendEvents(other, [...events].reverse()),
    ])
    expect(results.reduce((n, r) => n + r.inserted, 0)).toBe(30)
    expect(results.reduce((n, r) => n + r.duplicates, 0)).toBe(90)
    expect(results.reduce((n, r) => n + r.observations, 0)).toBe(30)
    for (const reader of [store, other]) {
      const logged = await reader.readEvents(0, 1000)
      expect(logged.map((s) => s.idemKey).sort()).toEqual(events.map((e) => e.idemKey).sort())
      expect(new Set(logged.map((s) => s.seq)).size).toBe(30)
      expect(await reader.scopeCounts()).toEqual({ events: 30, sessions: 6, observations: 30, memories: 0 })
      expect(await reader.countDocs({})).toBe(30)
    }
    for (const e of events) expect((await other.getObservation(observationId(e)))?.ts).toBe(e.ts)
  })

  it('numbers events in append order and reads them back exactly, after a sequence number and by scope', async () => {
    const { store } = t()
    const a = promptEvent('a', 'alpha shared', { ts: T0 })
    const b = promptEvent('b', 'alpha of alice', { ts: T0 + 1, user: 'alice' })
    const c = promptEvent('c', 'beta shared', { ts: T0 + 2, project: BETA })
    const r = await appendEvents(store, [a, b, c])
    expect(r.seqs).toEqual([1, 2, 3])
    expect(await store.lastEventSeq()).toBe(3)
    const all = await store.readEvents(0, 10)
    expect(all.map((s) => [s.seq, s.idemKey, s.user])).toEqual([
      [1, 'a', undefined],
      [2, 'user:alice:b', 'alice'],
      [3, 'c', undefined],
    ])
    expect(all[0]).toMatchObject({ ...a, seq: 1, receivedAt: T0 })
    expect(all[0]!.payload).toEqual(a.payload)
    expect((await store.readEvents(1, 1)).map((s) => s.seq)).toEqual([2])
    const keys = async (scope: { projectRoot?: string; user?: string | null }) =>
      (await store.readScopedEvents(0, 10, scope)).map((s) => s.seq)
    expect(await keys({ projectRoot: ALPHA.root })).toEqual([1, 2])
    expect(await keys({ projectRoot: ALPHA.root, user: null })).toEqual([1])
    expect(await keys({ user: 'alice' })).toEqual([1, 2, 3])
    expect(await keys({ user: 'bob' })).toEqual([1, 3])
    expect((await store.readScopedEvents(1, 1, { user: null })).map((s) => s.seq)).toEqual([3])
  })

  it('applies the derivation in the append’s transaction: a derivation that throws stores nothing of its batch', async () => {
    const { store } = t()
    const good = promptEvent('good', 'keep the changelog current')
    const bad = promptEvent('bad', 'this one fails to derive', { ts: T0 + 1 })
    await expect(
      store.append([
        { event: good, derive: () => indexEvent(good, TIME_ZONE) },
        {
          event: bad,
          derive: () => {
            throw invalidInput('payload', 'event bad has a payload mnemo cannot read')
          },
        },
      ]),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    expect(await store.readEvents(0, 10)).toEqual([])
    expect(await store.lastEventSeq()).toBe(0)
    expect(await store.getObservation(observationId(good))).toBeUndefined()
    expect(await store.scopeCounts()).toEqual({ events: 0, sessions: 0, observations: 0, memories: 0 })
    expect(await store.listProjects()).toEqual([])
    // The failed batch left no idempotency key behind: the same event goes in afterwards.
    expect(await appendEvents(store, [good])).toMatchObject({ inserted: 1, observations: 1 })
  })

  it('has an event’s derived rows, index entries and memory readable as soon as its append resolves, through another store', async () => {
    const { db, store, clock } = t()
    const other = await db.open(() => clock.now())
    const p = promptEvent('p1', 'fix the billing export', { ts: T0 })
    const m = memoryEvent('billing exports run nightly', { ts: T0 + MINUTE })
    await appendEvents(store, [p, m])
    const o = await other.getObservation(observationId(p))
    expect(o).toMatchObject({ id: observationId(p), kind: 'prompt', role: 'user', text: 'fix the billing export', ts: T0 })
    const session = await other.getSession(o!.sessionId)
    expect(session).toMatchObject({ agent: 'claude-code', title: 'fix the billing export', startedAt: T0 })
    expect((await other.getProject(o!.projectId))?.root).toBe(ALPHA.root)
    expect(await other.getMemory(memoryId(m))).toMatchObject({ text: 'billing exports run nightly', kind: 'fact', validFrom: T0 + MINUTE })
    expect((await other.memoryByIdemKey(m.idemKey))?.id).toBe(memoryId(m))
    const hits = await other.searchText({ match: '"billing"', limit: 10 })
    expect((await other.docs(hits.map((h) => h.docKey))).map((d) => d.id).sort()).toEqual([observationId(p), memoryId(m)].sort())
    expect(await other.sourceEventOf(observationId(p))).toBe(1)
    expect(await other.sourceEventOf(memoryId(m))).toBe(2)
  })

  it('rebuild derives the same rows, ids and index from the log, and records the derivation version', async () => {
    const { store, clock } = t()
    const v1 = memoryEvent('billing runs on cron', { ts: T0 + 2 * MINUTE })
    await appendEvents(store, [
      promptEvent('p1', 'why does billing fail on retries', { ts: T0 }),
      editEvent('e1', 'src/billing.ts', 'retry(3)', { ts: T0 + MINUTE }),
      promptEvent('p2', 'billing for beta', { ts: T0 + MINUTE, project: BETA, session: 'b1', user: 'alice' }),
      v1,
    ])
    clock.advance(10 * MINUTE)
    const v2 = memoryEvent('billing runs on the queue now', { ts: T0 + 3 * MINUTE, supersedes: memoryId(v1) })
    await appendEvents(store, [v2, memoryOp('pin', memoryId(v2), { ts: T0 + 4 * MINUTE })])
    const before = await derivedState(store)
    expect(before.counts).toEqual({ events: 6, sessions: 2, observations: 3, memories: 2 })
    expect(before.search).toHaveLength(4)
    const rebuilt = await store.rebuild((e) => indexEvent(e, TIME_ZONE), 7)
    expect(rebuilt).toEqual({ events: 6, observations: 3 })
    expect(await derivedState(store)).toEqual(before)
    expect(await store.derivedWith()).toBe(7)
    expect((await store.getMemory(memoryId(v2)))?.pinned).toBe(true)
  })

  it('rebuild with another derivation replaces every derived row; rebuilding again restores them', async () => {
    const { store } = t()
    const events = [promptEvent('p1', 'billing one', { ts: T0 }), promptEvent('p2', 'billing two', { ts: T0 + 1 })]
    await appendEvents(store, events)
    const before = await derivedState(store)
    expect(await store.rebuild(() => ({ observations: [] }))).toEqual({ events: 2, observations: 0 })
    expect(await store.countDocs({})).toBe(0)
    expect(await store.searchText({ match: '"billing"', limit: 10 })).toEqual([])
    expect(await store.getObservation(observationId(events[0]!))).toBeUndefined()
    expect((await store.readEvents(0, 10)).map((e) => e.idemKey)).toEqual(['p1', 'p2'])
    expect(await store.rebuild((e) => indexEvent(e, TIME_ZONE))).toEqual({ events: 2, observations: 2 })
    expect(await derivedState(store)).toEqual(before)
  })

  it('re-derives one session from its events, leaving other sessions alone', async () => {
    const { store } = t()
    await appendEvents(store, [
      promptEvent('a1', 'session a billing', { session: 'a', ts: T0 }),
      promptEvent('a2', 'session a invoices', { session: 'a', ts: T0 + 1 }),
      promptEvent('b1', 'session b billing', { session: 'b', ts: T0 + 2 }),
    ])
    const derivedA = await store.rederiveSession({ projectRoot: ALPHA.root, agent: 'claude-code', key: 'a' }, (e) =>
      e.idemKey === 'a2' ? { observations: [] } : indexEvent(e, TIME_ZONE),
    )
    expect(derivedA).toBe(1)
    const hits = await store.searchText({ match: '"session"', limit: 10 })
    expect((await store.docs(hits.map((h) => h.docKey))).map((d) => d.id).sort()).toEqual(
      [
        observationId(promptEvent('a1', '', { session: 'a', ts: T0 })),
        observationId(promptEvent('b1', '', { session: 'b', ts: T0 + 2 })),
      ].sort(),
    )
    expect(await store.scopeCounts()).toEqual({ events: 3, sessions: 2, observations: 2, memories: 0 })
  })

  it('reports per event, in order, the observations it stored (nothing for a duplicate)', async () => {
    const { store } = t()
    const first = promptEvent('p-1', 'Fix the login bug in src/login.ts', { session: 'sp', ts: T0 })
    await appendEvents(store, [first])
    const r = await appendEvents(store, [first, promptEvent('p-2', 'and the signup bug', { session: 'sp', ts: T0 + 1000 })])
    expect(r).toMatchObject({ inserted: 1, duplicates: 1, observations: 1, covered: 0 })
    expect(r.perEvent).toEqual([
      { observations: 0, covered: 0 },
      { observations: 1, covered: 0 },
    ])
  })

  it('keeps one copy of a step two capture paths carried (hook and transcript), and records the copy', async () => {
    const { store } = t()
    const text = 'Fix the login bug in src/login.ts'
    const hook = promptEvent('hook-1', text, { session: 'sx', ts: T0 + 1000 })
    const record = {
      sessionId: 'sx',
      cwd: ALPHA.root,
      type: 'user',
      uuid: 'u-1',
      timestamp: new Date(T0).toISOString(),
      message: { role: 'user', content: text },
    }
    const transcript: EventInput = {
      agent: 'claude-code',
      format: 'claude-transcript',
      type: 'user',
      sessionKey: 'sx',
      project: ALPHA,
      ts: T0,
      idemKey: 'claude-code:sx:u-1',
      payload: record,
    }
    expect(await appendEvents(store, [hook])).toMatchObject({ inserted: 1, observations: 1, covered: 0 })
    expect(await appendEvents(store, [transcript])).toMatchObject({
      inserted: 1,
      observations: 0,
      covered: 1,
      perEvent: [{ observations: 0, covered: 1 }],
    })
    expect(await store.scopeCounts()).toEqual({ events: 2, sessions: 1, observations: 1, memories: 0 })
    // The hook's observation (event 1) stands for the transcript's copy (event 2), not the other way round.
    expect(await store.eventsHaveCopies([1])).toBe(true)
    expect(await store.eventsHaveCopies([2])).toBe(false)
    const session = { projectRoot: ALPHA.root, agent: 'claude-code', key: 'sx' }
    expect(await store.stepOf(observationId(hook))).toEqual({ origin: 'claude-hook', session })
    expect(await store.stepRecords(session, 'claude-transcript', { kind: 'prompt', text, ts: T0 })).toEqual([observationId(hook)])
    expect(await store.stepRecords(session, 'claude-transcript', { kind: 'prompt', text, ts: T0 + 11 * MINUTE })).toEqual([])
    // A rebuild derives the same: one copy, the first path's.
    expect(await store.rebuild((e) => indexEvent(e, TIME_ZONE))).toEqual({ events: 2, observations: 1 })
    expect((await store.getObservation(observationId(hook)))?.text).toBe(text)
    expect(await store.getObservation(observationId(transcript))).toBeUndefined()
  })
})
