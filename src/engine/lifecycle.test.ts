import { describe, expect, it } from 'vitest'
import { createTestEngine, hookPayload, T0 } from '../testing/test-mnemo.js'

const A = { root: '/p/alpha', name: 'alpha' }
const B = { root: '/p/beta', name: 'beta' }

describe('contradictions supersede, history stays', () => {
  it('a new value for the same subject supersedes the old one, which keeps its validity interval', async () => {
    const { engine, clock } = createTestEngine()
    const v1 = (await engine.remember('orders DB is PostgreSQL 14', { project: A })).memory
    clock.advance(86_400_000)
    const v2 = (await engine.remember('orders DB migrated to MySQL 8', { project: A })).memory
    const [old, current] = await engine.history(v2.id)
    expect(old).toMatchObject({ id: v1.id, validFrom: T0, validTo: T0 + 86_400_000, supersededBy: v2.id })
    expect(current).toMatchObject({ id: v2.id, validFrom: T0 + 86_400_000, validTo: undefined, supersedes: v1.id })
    // Never both current, never neither: recall shows only the new one…
    expect(
      (await engine.recall('orders DB', { projectIds: (await engine.resolveProjects('alpha')).map((p) => p.id) })).map((h) => h.id),
    ).toEqual([v2.id])
    // …and "as of" a time before the change gives the old one.
    const asOf = await engine.recall('orders DB', { asOf: T0 + 1000 })
    expect(asOf.map((h) => h.id)).toEqual([v1.id])
    expect((await engine.context({ project: A })).text).toContain('orders DB migrated to MySQL 8')
    expect((await engine.context({ project: A })).text).not.toContain('PostgreSQL 14')
  })

  it('flags a memory that quoted the superseded value for review', async () => {
    const { engine, clock } = createTestEngine()
    await engine.remember('orders DB is PostgreSQL 14', { project: A })
    const dependent = (
      await engine.remember('backups use pg_dump because the orders database is PostgreSQL 14', {
        kind: 'decision',
        project: A,
      })
    ).memory
    clock.advance(1000)
    const v2 = (await engine.remember('orders DB migrated to MySQL 8', { project: A })).memory
    const old = (await engine.history(v2.id))[0]!
    expect((await engine.history(dependent.id))[0]!.review).toBe(`depends-on-superseded:${old.id}`)
  })

  it('supersedes the memory named explicitly, and refuses an unknown one', async () => {
    const { engine } = createTestEngine()
    const a = (await engine.remember('deploys happen on Tuesdays', { project: A, kind: 'decision' })).memory
    const b = (await engine.remember('we deploy every weekday after standup', { project: A, kind: 'decision', supersedes: a.id })).memory
    expect((await engine.history(b.id)).map((m) => m.id)).toEqual([a.id, b.id])
    await expect(engine.remember('x', { project: A, supersedes: 'mem_0000000000000000000000' })).rejects.toThrow(
      expect.objectContaining({ code: 'NOT_FOUND' }),
    )
  })

  it('merges a near duplicate instead of storing it twice', async () => {
    const { engine } = createTestEngine()
    const a = await engine.remember('the orders service keeps request logs for thirty days and rotates them nightly', { project: A })
    const b = await engine.remember('The orders service keeps the request logs for thirty days and rotates them nightly.', { project: A })
    expect(b).toMatchObject({ created: false, memory: { id: a.memory.id, seenCount: 2 } })
  })

  it('rebuild reproduces the same versions and intervals', async () => {
    const { engine, clock } = createTestEngine()
    await engine.remember('orders DB is PostgreSQL 14', { project: A })
    clock.advance(5000)
    const v2 = (await engine.remember('orders DB migrated to MySQL 8', { project: A })).memory
    const before = await engine.history(v2.id)
    await engine.rebuild()
    expect(await engine.history(v2.id)).toEqual(before)
  })
})

describe('archive, restore, pin', () => {
  it('archived memories leave default recall and context, stay findable with includeArchived, and come back with restore', async () => {
    const { engine } = createTestEngine()
    const m = (await engine.remember('the legacy billing cron runs at 03:00', { project: A })).memory
    await engine.setMemoryState(m.id, 'archive')
    expect(await engine.recall('billing cron')).toEqual([])
    expect((await engine.recall('billing cron', { includeArchived: true })).map((h) => h.id)).toEqual([m.id])
    expect((await engine.context({ project: A })).text).not.toContain('billing cron')
    await engine.setMemoryState(m.id, 'restore')
    expect((await engine.recall('billing cron')).map((h) => h.id)).toEqual([m.id])
  })

  it('a pinned memory is not archived: asking says so, and nothing changes', async () => {
    const { engine } = createTestEngine()
    const m = (await engine.remember('never force-push to main', { project: A, kind: 'lesson' })).memory
    await engine.setMemoryState(m.id, 'pin')
    await expect(engine.setMemoryState(m.id, 'archive')).rejects.toThrow(
      expect.objectContaining({
        code: 'CONFLICT',
        message: `memory ${m.id} is pinned: pinned memories are never archived; unpin it first`,
      }),
    )
    expect((await engine.history(m.id))[0]).toMatchObject({ pinned: true, archivedAt: undefined })
  })

  it('an observation id given where a memory id is wanted is named as an observation, not as missing', async () => {
    const { engine } = createTestEngine()
    await engine.remember('never force-push to main', { project: A })
    const obs = 'obs_0123456789abcdef012345'
    for (const call of [() => engine.setMemoryState(obs, 'pin'), () => engine.history(obs)])
      await expect(call()).rejects.toThrow(
        expect.objectContaining({
          code: 'NOT_FOUND',
          message: `${obs} is an observation, not a memory: this takes a memory id (mem_…); remember the observation's text to make a memory of it`,
        }),
      )
    await expect(engine.setMemoryState('mem_0123456789abcdef012345', 'pin')).rejects.toThrow('no memory with id mem_0123456789abcdef012345')
  })

  it('a change that is already so logs nothing: pin twice, restore a current memory, edit to the same text', async () => {
    const { engine } = createTestEngine()
    const m = (await engine.remember('never force-push to main', { project: A, kind: 'lesson' })).memory
    await engine.setMemoryState(m.id, 'pin')
    const events = (await engine.stats()).events
    expect(await engine.setMemoryState(m.id, 'pin')).toMatchObject({ id: m.id, pinned: true })
    expect(await engine.setMemoryState(m.id, 'restore')).toMatchObject({ id: m.id, archivedAt: undefined })
    expect(await engine.editMemory(m.id, '  never force-push to main ')).toMatchObject({ id: m.id, seenCount: 1 })
    expect((await engine.stats()).events).toBe(events)
  })

  it('an older version is not pinned, archived or edited: the error names the current one', async () => {
    const { engine, clock } = createTestEngine()
    const v1 = (await engine.remember('orders DB is PostgreSQL 14', { project: A })).memory
    clock.advance(1000)
    const v2 = (await engine.remember('orders DB migrated to MySQL 8', { project: A })).memory
    const conflict = expect.objectContaining({
      code: 'CONFLICT',
      message: `memory ${v1.id} was superseded by ${v2.id}: change the current version`,
    })
    for (const op of ['pin', 'archive'] as const) await expect(engine.setMemoryState(v1.id, op)).rejects.toThrow(conflict)
    await expect(engine.editMemory(v1.id, 'orders DB is PostgreSQL 15')).rejects.toThrow(conflict)
    expect((await engine.history(v2.id)).map((m) => [m.id, m.pinned, m.archivedAt])).toEqual([
      [v1.id, false, undefined],
      [v2.id, false, undefined],
    ])
  })
})

describe('deletion really deletes', () => {
  it('forget removes the memory, every remember of it, and brings back the version it superseded', async () => {
    const { engine, clock } = createTestEngine()
    const v1 = (await engine.remember('orders DB is PostgreSQL 14', { project: A })).memory
    clock.advance(1000)
    const v2 = (await engine.remember('orders DB migrated to MySQL 8', { project: A })).memory
    clock.advance(1000)
    await engine.remember('orders DB migrated to MySQL 8', { project: A })
    const r = await engine.forget(v2.id)
    expect(r).toEqual({
      id: v2.id,
      type: 'memory',
      events: 2,
      alsoRecorded: [],
      restored: { id: v1.id, text: 'orders DB is PostgreSQL 14' },
    })
    expect((await engine.recall('orders DB')).map((h) => h.id)).toEqual([v1.id])
    await engine.rebuild()
    expect((await engine.recall('orders DB')).map((h) => h.id)).toEqual([v1.id])
    expect((await engine.auditLog(1))[0]).toMatchObject({ action: 'forget', target: v2.id, count: 2 })
  })

  it('a forgotten observation is not brought back by importing the same payload again', async () => {
    const { engine } = createTestEngine()
    const payload = hookPayload('UserPromptSubmit', { prompt: 'the launch code is banana' })
    await engine.captureHook('UserPromptSubmit', payload)
    const [hit] = await engine.recall('launch code')
    await engine.forget(hit!.id)
    expect((await engine.captureHook('UserPromptSubmit', payload)).stored).toBe(false)
    expect(await engine.recall('launch code')).toEqual([])
  })

  it('forgetting the prompt that titled a session leaves no trace of it in the session list or the context', async () => {
    const { engine, clock } = createTestEngine()
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'my home address is 12 Secret Lane' }, 's1'))
    clock.advance(10_000)
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'second harmless prompt' }, 's1'))
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'a lone prompt in its own session' }, 's2'))
    const [s2, s1] = await engine.sessions({ limit: 5 })
    const first = (await engine.browseObservations({ projectIds: [s1!.projectId], order: 'asc', limit: 1 }))[0]!
    await engine.forget(first.id)
    const after = (await engine.sessions({ limit: 5 })).find((s) => s.id === s1!.id)!
    expect([after.title, after.startedAt]).toEqual(['second harmless prompt', T0 + 10_000])
    expect((await engine.context({ excludeSessionKey: 'other' })).text).not.toContain('Secret Lane')
    // A session whose only observation is forgotten is gone from the list.
    const lone = (await engine.browseObservations({ projectIds: [s2!.projectId], order: 'desc', limit: 1 }))[0]!
    expect(lone.text).toBe('a lone prompt in its own session')
    await engine.forget(lone.id)
    expect((await engine.sessions({ limit: 5 })).map((s) => s.id)).toEqual([s1!.id])
  })

  it('a transcript prompt titles its session as a hook prompt does, so forgetting a long one re-derives the title too', async () => {
    const { engine } = createTestEngine()
    const long = `please keep my recovery phrase ${'secret-word '.repeat(20)}safe`
    const record = (uuid: string, ts: number, role: 'user' | 'assistant', content: unknown) => ({
      agent: 'claude-code' as const,
      format: 'claude-transcript' as const,
      type: role,
      sessionKey: 'tx',
      project: A,
      ts,
      idemKey: `claude-code:tx:${uuid}`,
      payload: { type: role, uuid, sessionId: 'tx', cwd: A.root, timestamp: new Date(ts).toISOString(), message: { role, content } },
    })
    // The session starts with the assistant's words, so only its title tells that the long prompt shaped it.
    await engine.append([
      record('a-0', T0, 'assistant', [{ type: 'text', text: 'ready when you are' }]),
      record('u-1', T0 + 1000, 'user', long),
      record('u-2', T0 + 2000, 'user', 'later words'),
    ])
    const [titled] = await engine.sessions({ limit: 5 })
    expect(titled!.title).toBe(`${long.slice(0, 159)}…`)
    const prompt = (await engine.browseObservations({ projectIds: [titled!.projectId], order: 'asc', limit: 5 })).find(
      (o) => o.text === long,
    )
    await engine.forget(prompt!.id)
    expect((await engine.sessions({ limit: 5 }))[0]!.title).toBe('later words')
  })

  it('forgetting a project’s last observation leaves no project behind, as a rebuild would', async () => {
    const { engine } = createTestEngine()
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'the only thing said in beta' }, 's1', '/p/beta'),
    )
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'alpha stays' }, 's2', '/p/alpha'))
    const beta = (await engine.resolveProjects('beta'))[0]!
    const [only] = await engine.browseObservations({ projectIds: [beta.id], order: 'asc', limit: 5 })
    await engine.forget(only!.id)
    const live = { projects: (await engine.listProjects()).map((p) => p.name), stats: (await engine.stats()).projects }
    expect(live).toEqual({ projects: ['alpha'], stats: 1 })
    await engine.rebuild()
    expect({ projects: (await engine.listProjects()).map((p) => p.name), stats: (await engine.stats()).projects }).toEqual(live)
  })

  it('a session and its project keep their ids when a delete takes their first events', async () => {
    const { engine, clock } = createTestEngine()
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'the first prompt goes' }, 's1', '/p/alpha'))
    clock.advance(10_000)
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'the second one stays' }, 's1', '/p/alpha'))
    const [project] = await engine.resolveProjects('alpha')
    const [session] = await engine.sessions({ limit: 5 })
    expect(await engine.deleteScope({ project: project!, before: T0 + 5000 })).toEqual({ events: 1 })
    expect((await engine.resolveProjects('alpha')).map((p) => p.id)).toEqual([project!.id])
    expect((await engine.sessions({ limit: 5 })).map((x) => [x.id, x.startedAt])).toEqual([[session!.id, T0 + 10_000]])
    expect((await engine.show(session!.id)).type).toBe('session')
  })

  it('a scoped delete removes a project (or one session, or what is older than a time) and never touches another project', async () => {
    const { engine, clock } = createTestEngine()
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'rotate the signing keys' }, 's-old', '/p/alpha'),
    )
    clock.advance(10_000)
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'rotate the signing keys again' }, 's-new', '/p/alpha'),
    )
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'rotate the signing keys in beta' }, 's-beta', '/p/beta'),
    )
    await engine.remember('signing keys rotate monthly', { project: B })
    const alpha = (await engine.resolveProjects('alpha'))[0]!
    expect(await engine.deleteScope({ project: alpha, before: T0 + 5000 })).toEqual({ events: 1 })
    expect((await engine.recall('signing keys')).map((h) => h.snippet).sort()).toEqual([
      'rotate the signing keys again',
      'rotate the signing keys in beta',
      'signing keys rotate monthly',
    ])
    expect(await engine.deleteScope({ project: alpha })).toEqual({ events: 1 })
    expect((await engine.recall('signing keys')).map((h) => h.project)).toEqual(['beta', 'beta'])
    expect((await engine.auditLog(2)).map((a) => [a.action, a.target, a.count])).toEqual([
      ['delete', '/p/alpha', 1],
      ['delete', '/p/alpha', 1],
    ])
    await engine.rebuild()
    expect((await engine.recall('signing keys')).map((h) => h.project)).toEqual(['beta', 'beta'])
  })
})

describe('forgetting a middle version', () => {
  it('relinks the chain exactly as a rebuild derives it', async () => {
    const { engine, clock } = createTestEngine()
    const v1 = (await engine.remember('cache TTL is 60 seconds', { project: A })).memory
    clock.advance(1000)
    const v2 = (await engine.remember('cache TTL changed to 120 seconds', { project: A })).memory
    clock.advance(1000)
    const v3 = (await engine.remember('cache TTL changed to 300 seconds', { project: A })).memory
    await engine.forget(v2.id)
    const after = await engine.history(v3.id)
    expect(after.map((m) => [m.id, m.validTo, m.supersedes, m.supersededBy])).toEqual([
      [v1.id, T0 + 2000, undefined, v3.id],
      [v3.id, undefined, v1.id, undefined],
    ])
    expect((await engine.recall('cache TTL')).map((h) => h.id)).toEqual([v3.id])
    await engine.rebuild()
    expect(await engine.history(v3.id)).toEqual(after)
  })
})
