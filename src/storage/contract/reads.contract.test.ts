import { expect, it } from 'vitest'
import type { SessionId } from '../../core/ids.js'
import { contentKey } from '../../lifecycle/write-guard.js'
import {
  ALPHA,
  appendEvents,
  BETA,
  DAY,
  describeContract,
  editEvent,
  MINUTE,
  memoryEvent,
  memoryId,
  observationId,
  promptEvent,
  T0,
} from './contract.js'

describeContract('derived reads and administration', (t) => {
  it('lists projects and sessions within the reader’s scope, newest session first, with paging', async () => {
    const { store } = t()
    await appendEvents(store, [
      promptEvent('a1', 'alice in alpha', { user: 'alice', session: 'al', ts: T0 }),
      promptEvent('b1', 'bob in beta', { user: 'bob', project: BETA, session: 'bo', ts: T0 + MINUTE }),
      promptEvent('s1', 'shared in alpha', { session: 'sh', ts: T0 + 2 * MINUTE }),
      promptEvent('c1', 'codex in alpha', { agent: 'codex', session: 'cx', ts: T0 + 3 * MINUTE }),
      promptEvent('a2', 'alice again', { user: 'alice', session: 'al', ts: T0 + 4 * MINUTE }),
    ])
    expect((await store.listProjects()).map((p) => p.name)).toEqual(['alpha', 'beta'])
    expect((await store.listProjects({ user: 'alice' })).map((p) => p.name)).toEqual(['alpha'])
    expect((await store.listProjects({ user: 'bob' })).map((p) => p.name)).toEqual(['alpha', 'beta'])
    const keys = async (options: Parameters<typeof store.listSessions>[0]) => (await store.listSessions(options)).map((s) => s.sessionKey)
    expect(await keys({ limit: 10 })).toEqual(['al', 'cx', 'sh', 'bo'])
    expect(await keys({ limit: 10, user: 'alice' })).toEqual(['al', 'cx', 'sh'])
    expect(await keys({ limit: 10, user: null, agent: 'claude-code' })).toEqual(['sh'])
    expect(await keys({ limit: 10, excludeAgent: 'codex' })).toEqual(['al', 'sh', 'bo'])
    expect(await keys({ limit: 2, offset: 1 })).toEqual(['cx', 'sh'])
    const alpha = (await store.listProjects())[0]!.id
    expect(await keys({ limit: 10, projectIds: [alpha] })).toEqual(['al', 'cx', 'sh'])
    const [al] = await store.listSessions({ limit: 1 })
    expect(al).toMatchObject({ agent: 'claude-code', title: 'alice in alpha', startedAt: T0, lastEventAt: T0 + 4 * MINUTE, user: 'alice' })
  })

  it('pages a session’s observations in time order and places one in it', async () => {
    const { store } = t()
    const events = [3, 0, 4, 1, 2].map((i) => promptEvent(`o${i}`, `step ${i}`, { ts: T0 + i * MINUTE }))
    await appendEvents(store, events)
    const id = (i: number) => observationId(promptEvent(`o${i}`, '', { ts: T0 + i * MINUTE }))
    const session = (await store.getObservation(id(0)))!.sessionId
    expect((await store.sessionObservations(session, 10)).map((o) => o.id)).toEqual([0, 1, 2, 3, 4].map(id))
    expect((await store.sessionObservations(session, 2)).map((o) => o.id)).toEqual([0, 1].map(id))
    expect((await store.sessionObservationsPage(session, 2, 2)).map((o) => o.id)).toEqual([2, 3].map(id))
    expect(await store.observationPosition(session, id(3))).toBe(3)
    expect(await store.observationPosition('ses_other' as SessionId, id(3))).toBeUndefined()
  })

  it('browses observations by log order in both directions, filtered by kind, agent and user', async () => {
    const { store } = t()
    await appendEvents(store, [
      promptEvent('p1', 'first prompt', { ts: T0 }),
      editEvent('e1', 'src/a.ts', 'x = 1', { ts: T0 + 1 }),
      promptEvent('p2', 'codex prompt', { agent: 'codex', session: 'cx', ts: T0 + 2 }),
      promptEvent('p3', 'alice prompt', { user: 'alice', session: 'al', ts: T0 + 3 }),
    ])
    const projectIds = (await store.listProjects()).map((p) => p.id)
    const texts = async (o: Partial<Parameters<typeof store.browseObservations>[0]>) =>
      (await store.browseObservations({ projectIds, order: 'asc', limit: 10, ...o })).map((r) => `${r.agent}:${r.text.split('\n')[0]}`)
    expect(await texts({})).toEqual([
      'claude-code:first prompt',
      'claude-code:Edit: /p/alpha/src/a.ts',
      'codex:codex prompt',
      'claude-code:alice prompt',
    ])
    expect(await texts({ order: 'desc', limit: 2 })).toEqual(['claude-code:alice prompt', 'codex:codex prompt'])
    expect(await texts({ order: 'desc', beforeSeq: 3 })).toEqual(['claude-code:Edit: /p/alpha/src/a.ts', 'claude-code:first prompt'])
    expect(await texts({ afterSeq: 2 })).toEqual(['codex:codex prompt', 'claude-code:alice prompt'])
    expect(await texts({ kinds: ['tool'] })).toEqual(['claude-code:Edit: /p/alpha/src/a.ts'])
    expect(await texts({ agent: 'codex' })).toEqual(['codex:codex prompt'])
    expect(await texts({ user: null })).toEqual(['claude-code:first prompt', 'claude-code:Edit: /p/alpha/src/a.ts', 'codex:codex prompt'])
  })

  it('finds the current memory of a content key per user, and the memories citing observations', async () => {
    const { store } = t()
    const shared = memoryEvent('use pnpm, not npm', { ts: T0 })
    const alice = memoryEvent('use pnpm, not npm', { ts: T0 + 1, user: 'alice' })
    await appendEvents(store, [shared, alice])
    const key = (await store.getMemory(memoryId(shared)))!
    expect((await store.memoryByIdemKey(shared.idemKey))?.id).toBe(key.id)
    // The content key is the write guard's, as the derivation stores it.
    const byContent = async (user: string | undefined) =>
      (await store.currentMemoryByContent(ALPHA.root, contentKey('fact', 'use pnpm, not npm'), user))?.id
    expect(await byContent(undefined)).toBe(memoryId(shared))
    expect(await byContent('alice')).toBe(memoryId(alice))
    expect(await byContent('bob')).toBeUndefined()
    const sourced = memoryEvent('a summary of the session', { ts: T0 + DAY })
    const withSources = { ...sourced, payload: { ...(sourced.payload as object), sources: ['obs_a', 'obs_b'] } }
    await appendEvents(store, [withSources])
    const cited = await store.memoriesFromObservations(key.projectId, ['obs_a', 'obs_c'])
    expect([...cited.entries()]).toEqual([['obs_a', [memoryId(withSources)]]])
  })

  it('records usage once per memory per day, injections once per item, and the audit log newest first', async () => {
    const { store } = t()
    const m = memoryEvent('run the linter before commits', { ts: T0 })
    await appendEvents(store, [m])
    const id = memoryId(m)
    await store.recordUsage([id], '2025-06-14')
    await store.recordUsage([id], '2025-06-14')
    await store.recordUsage([id], '2025-06-15')
    expect([...(await store.usageCounts([id, 'mem_unused'])).entries()].filter(([, n]) => n > 0)).toEqual([[id, 2]])
    const key = { agent: 'claude-code', sessionKey: 's1', user: '' }
    await store.recordInjections(key, [{ itemId: id, what: 'item' }], T0)
    await store.recordInjections(
      key,
      [
        { itemId: id, what: 'item' },
        { itemId: 'src/a.ts', what: 'file' },
      ],
      T0 + 1,
    )
    expect(await store.injections(key)).toEqual([
      { itemId: id, what: 'item', at: T0 },
      { itemId: 'src/a.ts', what: 'file', at: T0 + 1 },
    ])
    expect(await store.injections({ ...key, user: 'alice' })).toEqual([])
    await store.audit({ at: T0, actor: 'cli', action: 'forget', target: id, count: 1 })
    await store.audit({ at: T0 + 1, actor: 'rest', action: 'delete', target: '/p/alpha', count: 3, details: { before: 'x' } })
    expect(await store.auditLog(10)).toEqual([
      { at: T0 + 1, actor: 'rest', action: 'delete', target: '/p/alpha', count: 3, details: { before: 'x' } },
      { at: T0, actor: 'cli', action: 'forget', target: id, count: 1 },
    ])
    expect(await store.auditLog(1)).toHaveLength(1)
  })

  it('counts the store and passes its integrity check', async () => {
    const { store, clock } = t()
    expect(await store.stats()).toMatchObject({ events: 0, projects: 0, sessions: 0, observations: 0, memories: 0, lastEventAt: undefined })
    await appendEvents(store, [
      promptEvent('p1', 'one', { ts: T0 }),
      promptEvent('p2', 'two', { project: BETA, session: 'b', ts: T0 + DAY }),
    ])
    // The last event is the last one received (the store's clock), whatever time the event names.
    clock.set(T0 + 2 * DAY)
    await appendEvents(store, [memoryEvent('a memory', { ts: T0 })])
    const stats = await store.stats()
    expect(stats).toMatchObject({ events: 3, projects: 2, sessions: 2, observations: 2, memories: 1, lastEventAt: T0 + 2 * DAY })
    expect(stats.bytes).toBeGreaterThan(0)
    expect(await store.scopeCounts(BETA.root)).toEqual({ events: 1, sessions: 1, observations: 1, memories: 0 })
    expect(await store.integrityCheck()).toBe('ok')
  })

  it('rewrites payloads and folds old events in place, keeping what they derive', async () => {
    const { store } = t()
    await appendEvents(store, [promptEvent('p1', 'token sk-live-1234 here', { ts: T0 }), promptEvent('p2', 'new', { ts: T0 + DAY })])
    const changed = await store.rewritePayloads((payload) => {
      const p = payload as { prompt?: string }
      return p.prompt?.includes('sk-live') ? { ...p, prompt: p.prompt.replace('sk-live-1234', '[REDACTED]') } : undefined
    })
    expect(changed).toBe(1)
    expect(((await store.readEvents(0, 1))[0]!.payload as { prompt: string }).prompt).toBe('token [REDACTED] here')
    const folded = await store.foldEvents({ before: T0 + 1 }, (e) => ({
      format: 'folded',
      payload: { v: 1, from: e.format, observations: [] },
    }))
    expect(folded.events).toBe(1)
    const [first, second] = await store.readEvents(0, 2)
    expect(first).toMatchObject({ format: 'folded', payload: { v: 1, from: 'claude-hook', observations: [] } })
    expect(second).toMatchObject({ format: 'claude-hook', idemKey: 'p2' })
    // Derived rows are not touched by a fold.
    expect(await store.scopeCounts()).toEqual({ events: 2, sessions: 1, observations: 2, memories: 0 })
  })
})
