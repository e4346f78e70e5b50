import { describe, expect, it } from 'vitest'
import type { ChannelName, Memory, Observation, Project, RecallHit } from '../core/types.js'
import { FIRST, FIRST_ONLY, hooksOf, memoriesOf, type OverlapFacts, SAME_MEMORY, SECOND, SECOND_ONLY } from '../testing/overlap-fixtures.js'
import { createTestEngine, hookPayload, recallWith, T0 } from '../testing/test-mnemo.js'
import { readExport } from './export-io.js'
import { MnemoEngine } from './mnemo.js'

// User isolation on every read path, inside ONE project (a team server's shared repository).
// Alice and Bob work on the same code with the same words, file names and identifier
// (validateToken) and one identical memory, but different facts (PostgreSQL 14 / Auth0 /
// Frankfurt / Dana vs MySQL 8 / Okta / Oregon / Eli). A third, shared memory was written with no
// user. Every read as Alice must return only Alice's items and shared ones, derived items
// (summaries, lessons, graph neighbours, spread neighbours) included; a read with allUsers is
// checked to find Bob's counterpart, so each test would see a leak.

const PROJECT = { root: '/nonexistent-mnemo-user-scope/shop', name: 'shop' }

interface Facts extends OverlapFacts {
  user: 'alice' | 'bob'
}
const ALICE: Facts = { user: 'alice', root: PROJECT.root, key: 'alice', session: 'sess-alice', ...FIRST }
const BOB: Facts = { user: 'bob', root: PROJECT.root, key: 'bob', session: 'sess-bob', ...SECOND }
const ALICE_ONLY = FIRST_ONLY
const BOB_ONLY = SECOND_ONLY
/** Remembered by both users, word for word (`memoriesOf` index 10). */
const SAME_TEXT = SAME_MEMORY
/** Remembered with no user: every user of the project reads it. */
const SHARED = 'the orders database is backed up by the platform team every night'

interface Seeded {
  base: MnemoEngine
  as: Record<'alice' | 'bob', MnemoEngine>
  all: MnemoEngine
  project: Project
  /** Ids of every observation and memory of each user, and of the shared items. */
  ids: Record<'alice' | 'bob' | 'shared', Set<string>>
  memory: (user: 'alice' | 'bob', index: number) => Memory
  shared: Memory
}

async function seed(options: Parameters<typeof createTestEngine>[0] = {}): Promise<Seeded> {
  const { engine: base, clock, store } = createTestEngine({ cwd: PROJECT.root, ...options })
  const as = { alice: base.scoped({ user: 'alice' }), bob: base.scoped({ user: 'bob' }) }
  const hooks = [hooksOf(ALICE), hooksOf(BOB)] as const
  for (let i = 0; i < hooks[0].length; i++) {
    for (const [f, list] of [
      [ALICE, hooks[0]],
      [BOB, hooks[1]],
    ] as const) {
      const [event, fields] = list[i]!
      expect(await as[f.user].captureHook(event, hookPayload(event, fields, f.session, PROJECT.root))).toMatchObject({ stored: true })
      clock.advance(60_000)
    }
  }
  const remembered: Record<'alice' | 'bob', Memory[]> = { alice: [], bob: [] }
  const texts = [memoriesOf(ALICE), memoriesOf(BOB)] as const
  for (let i = 0; i < texts[0].length; i++) {
    for (const [f, list] of [
      [ALICE, texts[0]],
      [BOB, texts[1]],
    ] as const) {
      const { memory, created } = await as[f.user].remember(list[i]!, { project: PROJECT })
      expect(created, list[i]).toBe(true)
      remembered[f.user].push(memory)
      clock.advance(60_000)
    }
  }
  const shared = (await base.remember(SHARED, { project: PROJECT })).memory
  // Derived items: each ended session becomes a summary, the fixed failure a lesson; each is its session's user's.
  expect(await base.consolidate()).toMatchObject({ sessions: 2, summaries: 2, lessons: 2 })
  const project = (await base.listProjects())[0]!
  const all = base.scoped({ allUsers: true })
  const idsOf = async (user: string | undefined): Promise<Set<string>> => {
    const memories = (await store.listMemories({ projectIds: [project.id], limit: 1000 })).filter((m) => m.user === user)
    const sessions = (await store.listSessions({ projectIds: [project.id], limit: 100 })).filter((s) => s.user === user)
    const observations: Observation[] = []
    for (const s of sessions) observations.push(...(await store.sessionObservations(s.id, 1000)))
    return new Set([...memories.map((m) => m.id), ...observations.map((o) => o.id)])
  }
  return {
    base,
    as,
    all,
    project,
    ids: { alice: await idsOf('alice'), bob: await idsOf('bob'), shared: await idsOf(undefined) },
    memory: (u, i) => remembered[u][i]!,
    shared,
  }
}

/** One successful session of the same kind of work: read, write a middleware, edit the app, the tests pass. */
async function playWork(
  engine: MnemoEngine,
  clock: { advance: (ms: number) => void },
  agent: 'claude-code' | 'codex',
  id: string,
  prompt: string,
  file: string,
): Promise<void> {
  const hook = async (event: string, fields: Record<string, unknown>): Promise<void> => {
    await engine.captureHook(event, hookPayload(event, fields, id, PROJECT.root), agent)
    clock.advance(1000)
  }
  await hook('UserPromptSubmit', { prompt })
  await hook('PostToolUse', {
    tool_name: 'Read',
    tool_use_id: `${id}-r`,
    tool_input: { file_path: `${PROJECT.root}/src/app.ts` },
    tool_response: 'ok',
  })
  await hook('PostToolUse', {
    tool_name: 'Write',
    tool_use_id: `${id}-w`,
    tool_input: { file_path: `${PROJECT.root}/src/middleware/${file}.ts`, content: 'x' },
    tool_response: 'ok',
  })
  await hook('PostToolUse', {
    tool_name: 'Edit',
    tool_use_id: `${id}-e`,
    tool_input: { file_path: `${PROJECT.root}/src/app.ts`, old_string: 'a', new_string: 'b' },
    tool_response: 'ok',
  })
  await hook('PostToolUse', {
    tool_name: 'Bash',
    tool_use_id: `${id}-t`,
    tool_input: { command: 'npm test' },
    tool_response: { stdout: 'Tests: 14 passed' },
  })
  await hook('SessionEnd', {})
  clock.advance(600_000)
}

const ids = (hits: readonly { id: string }[]): string[] => hits.map((h) => h.id)
const sorted = (values: Iterable<string>): string[] => [...values].sort()

/** An export's lines with one more tombstone (the manifest counts it). */
function withTombstone(lines: readonly string[], idemKey: string): string {
  const manifest = JSON.parse(lines[0]!) as { counts: { tombstones: number } }
  manifest.counts.tombstones++
  return [JSON.stringify(manifest), ...lines.slice(1), JSON.stringify({ kind: 'tombstone', idemKey, at: 1, projectRoot: null })].join('\n')
}

/** Every hit is the user's own or shared. */
function expectSeenBy(hits: readonly RecallHit[], s: Seeded, user: 'alice' | 'bob'): void {
  for (const h of hits) expect(s.ids[user].has(h.id) || s.ids.shared.has(h.id), `${h.id} (${h.snippet}) is ${user}'s or shared`).toBe(true)
}

describe('the corpus overlaps', () => {
  it('with allUsers a recall finds both users’ items, the identical memory twice, so the tests below can see a leak', async () => {
    const s = await seed()
    const hits = await s.all.recall('orders database validateToken tokens', { limit: 100 })
    expect(hits.some((h) => s.ids.alice.has(h.id))).toBe(true)
    expect(hits.some((h) => s.ids.bob.has(h.id))).toBe(true)
    const same = (await s.all.recall(SAME_TEXT, { limit: 100, channels: ['bm25'] })).filter((h) => h.snippet === SAME_TEXT)
    expect(sorted(ids(same))).toEqual(sorted([s.memory('alice', 10).id, s.memory('bob', 10).id]))
    // Each user's summary and lesson are theirs: consolidation wrote them with the session's user.
    expect(s.ids.alice.size).toBe(s.ids.bob.size)
    expect(s.ids.shared).toEqual(new Set([s.shared.id]))
  })

  it('the write guard works per user: the same text is two memories, and Bob’s newer fact on a subject supersedes nothing of Alice’s', async () => {
    const s = await seed()
    expect(s.memory('alice', 10).id).not.toBe(s.memory('bob', 10).id)
    // Same subject ("orders database engine"), other users: both stay current.
    expect(await s.as.alice.show(s.memory('alice', 0).id)).toMatchObject({ type: 'memory', memory: { validTo: undefined, user: 'alice' } })
    expect(await s.as.bob.show(s.memory('bob', 0).id)).toMatchObject({ type: 'memory', memory: { validTo: undefined, user: 'bob' } })
    // Within one user it still supersedes.
    const next = (await s.as.bob.remember('orders database engine is MariaDB 11', { project: PROJECT })).memory
    expect(next.supersedes).toBe(s.memory('bob', 0).id)
    expect(await s.as.alice.show(s.memory('alice', 0).id)).toMatchObject({ type: 'memory', memory: { validTo: undefined } })
  })
})

describe('recall as one user, per channel', () => {
  const QUERIES = [
    'orders database connection pool',
    'validateToken',
    'checkIssuer',
    'what happened on 14 June 2025',
    'npm test orders-database failed',
    'src/auth/validate-token.ts',
    SAME_TEXT,
    SHARED,
  ]
  const ABLATIONS: (readonly ChannelName[] | undefined)[] = [
    undefined,
    ['bm25'],
    ['time'],
    ['graph'],
    ['vector'],
    ['bm25', 'graph'],
    ['vector', 'graph', 'time'],
  ]

  it.each(ABLATIONS.map((c) => [c?.join('+') ?? 'default', c] as const))(
    'channels %s: every hit is the user’s own or shared; allUsers finds the other’s',
    async (_name, channels) => {
      const s = await seed({ recall: recallWith({ vector: 1, graph: 1 }) })
      let found = 0
      for (const query of QUERIES) {
        for (const user of ['alice', 'bob'] as const) {
          const hits = await s.as[user].recall(query, { limit: 100, ...(channels ? { channels } : {}) })
          expectSeenBy(hits, s, user)
          found += hits.length
        }
        const everyone = await s.all.recall(query, { limit: 100, ...(channels ? { channels } : {}) })
        if (everyone.some((h) => s.ids.alice.has(h.id)))
          expect(
            everyone.some((h) => s.ids.bob.has(h.id)),
            query,
          ).toBe(true)
      }
      expect(found).toBeGreaterThan(0)
    },
  )

  it('words only Bob wrote find nothing for Alice on every channel that reads words; allUsers finds Bob’s', async () => {
    const s = await seed({ recall: recallWith({ vector: 1, graph: 1 }) })
    for (const channels of [['bm25'], ['graph'], ['bm25', 'graph', 'time']] as ChannelName[][]) {
      expect(await s.as.alice.recall(BOB_ONLY.join(' '), { channels })).toEqual([])
    }
    expect((await s.all.recall(BOB_ONLY.join(' '), { channels: ['bm25'], limit: 100 })).every((h) => s.ids.bob.has(h.id))).toBe(true)
  })

  it('the shared memory reaches both users; a store reader with no user sees shared items only', async () => {
    const s = await seed()
    for (const user of ['alice', 'bob'] as const)
      expect(ids(await s.as[user].recall('backed up by the platform team', { channels: ['bm25'] }))).toEqual([s.shared.id])
    const none = await s.base.recall('orders database validateToken backed up', { limit: 100 })
    expect(ids(none)).toEqual([s.shared.id])
  })

  it('graph: an entity both users mention (checkIssuer) reaches only the reader’s documents', async () => {
    const s = await seed({ recall: recallWith({ graph: 1 }) })
    const scoped = await s.as.alice.recall('checkIssuer', { channels: ['graph'], limit: 100 })
    expect(ids(scoped)).toEqual(expect.arrayContaining([s.memory('alice', 1).id, s.memory('alice', 7).id]))
    expectSeenBy(scoped, s, 'alice')
    // How common an entity is counts the reader's documents only: Bob's graph finds his, as Alice's finds hers.
    const bobs = await s.as.bob.recall('checkIssuer', { channels: ['graph'], limit: 100 })
    expect(ids(bobs)).toEqual(expect.arrayContaining([s.memory('bob', 1).id, s.memory('bob', 7).id]))
    expectSeenBy(bobs, s, 'bob')
  })

  it('bm25 neighbour spreading stays in the user’s own session', async () => {
    const s = await seed()
    const hits = await s.as.alice.recall('refused the connection', { channels: ['bm25'], limit: 100 })
    expect(hits.some((h) => h.viaNeighbor)).toBe(true)
    expectSeenBy(hits, s, 'alice')
  })

  it('time: the day both users wrote on gives exactly Alice’s and shared documents', async () => {
    const s = await seed()
    const hits = await s.as.alice.recall('what happened on 14 June 2025', { channels: ['time'], limit: 100 })
    expect(sorted(ids(hits))).toEqual(sorted([...s.ids.alice, ...s.ids.shared]))
  })
})

describe('context, sessions, show, browse, graph', () => {
  it('context as Alice: her memories, her session digest and the shared memory, no word of Bob’s', async () => {
    const s = await seed()
    const block = await s.as.alice.context({ project: PROJECT, budgetTokens: 100_000 })
    for (const word of ALICE_ONLY) expect(block.text).toContain(word)
    for (const word of BOB_ONLY) expect(block.text).not.toContain(word)
    expect(block.text).toContain(SHARED)
    expect(block.memoryIds.every((id) => s.ids.alice.has(id) || s.ids.shared.has(id))).toBe(true)
    const bobs = await s.as.bob.context({ project: PROJECT, budgetTokens: 100_000 })
    for (const word of ALICE_ONLY) expect(bobs.text).not.toContain(word)
  })

  it('sessions, memories and observation pages list the user’s own (and shared) rows only', async () => {
    const s = await seed()
    expect((await s.as.alice.sessions()).map((x) => x.sessionKey)).toEqual([ALICE.session])
    expect(sorted((await s.all.sessions()).map((x) => x.sessionKey))).toEqual([ALICE.session, BOB.session])
    expect(await s.base.sessions()).toEqual([])
    const memories = await s.as.alice.currentMemories(s.project.id, 100)
    expect(memories.every((m) => s.ids.alice.has(m.id) || m.id === s.shared.id)).toBe(true)
    expect(memories.map((m) => m.id)).toContain(s.shared.id)
    const page = await s.as.alice.browseMemories({ projectIds: [s.project.id], state: 'all', offset: 0, limit: 100 })
    expect(page.total).toBe(page.memories.length)
    expect(page.memories.every((m) => m.user === 'alice' || m.user === undefined)).toBe(true)
    const observations = await s.as.alice.browseObservations({ projectIds: [s.project.id], order: 'desc', limit: 500 })
    expect(observations.length).toBeGreaterThan(0)
    expect(observations.every((o) => s.ids.alice.has(o.id))).toBe(true)
  })

  it('show, history and replay of Bob’s ids answer NOT_FOUND to Alice, and show them to Bob', async () => {
    const s = await seed()
    const bobSession = (await s.all.sessions()).find((x) => x.sessionKey === BOB.session)!
    for (const id of [s.memory('bob', 0).id, bobSession.id, [...s.ids.bob].find((x) => x.startsWith('obs_'))!]) {
      await expect(s.as.alice.show(id)).rejects.toThrow(/^no (memory|observation|session) with id/)
      expect(() => s.as.bob.show(id)).not.toThrow()
    }
    await expect(s.as.alice.history(s.memory('bob', 0).id)).rejects.toThrow(/no memory/)
    await expect(s.as.alice.sessionTimeline(bobSession.id, 0, 10)).rejects.toThrow(/no session/)
  })

  it('the entity graph as Alice neither finds nor draws what only Bob wrote', async () => {
    const s = await seed()
    expect((await s.as.alice.entityGraph([s.project.id], 'Okta', 20)).center).toBeUndefined()
    expect((await s.all.entityGraph([s.project.id], 'Okta', 20)).center?.name).toMatch(/okta/i)
    const graph = await s.as.alice.entityGraph([s.project.id], 'checkIssuer', 50)
    expect(graph.mentions.every((m) => s.ids.alice.has(m.id) || s.ids.shared.has(m.id))).toBe(true)
    for (const node of graph.nodes) for (const word of BOB_ONLY) expect(node.name.toLowerCase()).not.toBe(word.toLowerCase())
  })
})

describe('writes and deletes stay inside the user', () => {
  it('Alice cannot forget, pin, archive or edit Bob’s items (NOT_FOUND), nor change a shared one (CONFLICT); Bob’s stay', async () => {
    const s = await seed()
    const bobMemory = s.memory('bob', 0).id
    const bobObservation = [...s.ids.bob].find((x) => x.startsWith('obs_'))!
    await expect(s.as.alice.forget(bobMemory)).rejects.toThrow(/no memory/)
    await expect(s.as.alice.forget(bobObservation)).rejects.toThrow(/no observation/)
    await expect(s.as.alice.setMemoryState(bobMemory, 'archive')).rejects.toThrow(/no memory/)
    await expect(s.as.alice.editMemory(bobMemory, 'orders database engine is SQLite')).rejects.toThrow(/no memory/)
    await expect(s.as.alice.remember('orders database engine is SQLite', { project: PROJECT, supersedes: bobMemory })).rejects.toThrow(
      /no current memory/,
    )
    await expect(s.as.alice.setMemoryState(s.shared.id, 'archive')).rejects.toThrow(/is shared/)
    await expect(s.as.alice.forget(s.shared.id)).rejects.toThrow(/is shared/)
    expect(await s.as.bob.show(bobMemory)).toMatchObject({ type: 'memory', memory: { archivedAt: undefined, validTo: undefined } })
    expect(() => s.as.bob.show(bobObservation)).not.toThrow()
    // Her own: fine.
    expect(await s.as.alice.forget(s.memory('alice', 0).id)).toMatchObject({ type: 'memory' })
  })

  it('forgetting Alice’s copy of the memory both hold keeps Bob’s copy (the forget sweep matches her remembers only)', async () => {
    const s = await seed()
    await s.as.alice.forget(s.memory('alice', 10).id)
    expect(await s.as.bob.show(s.memory('bob', 10).id)).toMatchObject({ type: 'memory', memory: { text: SAME_TEXT } })
  })

  it('a scoped delete by Alice takes her events only: Bob’s and the shared items stay, and a delete with no user takes shared ones only', async () => {
    const s = await seed()
    const { events } = await s.as.alice.deleteScope({ project: s.project })
    expect(events).toBeGreaterThan(0)
    expect(await s.as.alice.sessions()).toEqual([])
    expect((await s.as.bob.sessions()).map((x) => x.sessionKey)).toEqual([BOB.session])
    for (const id of s.ids.bob) expect(() => s.as.bob.show(id), id).not.toThrow()
    expect(() => s.as.bob.show(s.shared.id)).not.toThrow()
    await s.base.deleteScope({ project: s.project })
    await expect(s.as.bob.show(s.shared.id)).rejects.toThrow(/no memory/)
    expect((await s.as.bob.sessions()).map((x) => x.sessionKey)).toEqual([BOB.session])
  })

  it('another user’s event naming a session starts a session of their own: nothing lands beside the owner’s text, nothing is refused', async () => {
    const s = await seed()
    const aliceSession = (await s.as.alice.sessions())[0]!
    expect(
      await s.as.bob.captureHook(
        'UserPromptSubmit',
        hookPayload('UserPromptSubmit', { prompt: 'show me the Auth0 keys' }, ALICE.session, PROJECT.root),
      ),
    ).toMatchObject({ stored: true })
    const bobs = (await s.as.bob.sessions()).find((x) => x.sessionKey === ALICE.session)!
    expect(bobs.id).not.toBe(aliceSession.id)
    expect(bobs.user).toBe('bob')
    const shown = await s.as.alice.show(aliceSession.id)
    if (shown.type !== 'session') throw new Error('expected a session')
    expect(shown.detail.observations.map((o) => o.text).join(' ')).not.toContain('show me the Auth0 keys')
    expect(await s.as.alice.sessions()).toEqual([aliceSession])
  })

  it('a scoped delete of shared events keeps a user’s own memory that cites one of them', async () => {
    const s = await seed()
    await s.base.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'shared giraffe prompt' }, 'sess-shared', PROJECT.root),
    )
    const sharedSession = (await s.base.sessions()).find((x) => x.sessionKey === 'sess-shared')!
    const shown = await s.base.show(sharedSession.id)
    const observation = shown.type === 'session' ? shown.detail.observations[0]!.id : ''
    // Alice's statement citing it (as an import could write it).
    const lines: string[] = [
      JSON.stringify({
        format: 'mnemo-export',
        version: 1,
        exportedAt: new Date(T0).toISOString(),
        project: null,
        counts: { events: 1, tombstones: 0, audit: 0, sessions: 0, observations: 0, memories: 0 },
      }),
      JSON.stringify({
        kind: 'event',
        seq: 1,
        idemKey: 'cite-1',
        agent: 'mnemo',
        format: 'mnemo',
        type: 'remember',
        sessionKey: `mnemo:${PROJECT.root}`,
        project: PROJECT,
        ts: T0,
        receivedAt: T0,
        payload: { op: 'remember', kind: 'fact', text: 'alice note citing the giraffe prompt', sources: [observation] },
      }),
    ]
    await s.as.alice.importExport(lines.join('\n'), 'cite.jsonl')
    await s.base.deleteScope({ project: s.project, session: sharedSession.id })
    expect((await s.as.alice.recall('alice note citing the giraffe', { channels: ['bm25'] })).map((h) => h.snippet)).toEqual([
      'alice note citing the giraffe prompt',
    ])
  })

  it('a user’s compaction folds their own events only', async () => {
    const s = await seed()
    const folded = await s.as.alice.compact({ before: T0 + 86_400_000, vacuum: false })
    expect(folded.events).toBeGreaterThan(0)
    const formats = async (engine: MnemoEngine): Promise<string[]> => {
      const lines: string[] = []
      await engine.exportJsonl((l) => lines.push(l))
      return lines
        .slice(1)
        .map((l) => JSON.parse(l) as { kind: string; format?: string; user?: string })
        .filter((r) => r.kind === 'event' && r.user !== undefined)
        .map((r) => r.format!)
    }
    expect(await formats(s.as.bob)).not.toContain('folded')
    expect(await formats(s.as.alice)).toContain('folded')
  })

  it('a shared session id that looks like a user’s key (user:alice:s9) never takes in that user’s captures', async () => {
    const s = await seed()
    await s.base.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'hello' }, 'user:alice:s9', PROJECT.root))
    await s.as.alice.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'alice private zebra plan' }, 's9', PROJECT.root),
    )
    const planted = (await s.base.sessions()).find((x) => x.sessionKey === 'user:alice:s9')!
    const shown = await s.as.bob.show(planted.id)
    expect(shown.type === 'session' && shown.detail.observations.map((o) => o.text)).toEqual(['hello'])
    expect((await s.as.bob.context({ project: PROJECT, budgetTokens: 100_000 })).text).not.toContain('zebra')
    expect((await s.as.alice.sessions()).map((x) => x.sessionKey)).toContain('s9')
  })

  it('one user’s many sessions never crowd another’s out of procedure distillation', async () => {
    const { engine, clock } = createTestEngine({ cwd: PROJECT.root })
    const bob = engine.scoped({ user: 'bob' })
    await playWork(bob, clock, 'claude-code', 'b1', 'bob rate limiting', 'rate')
    await playWork(bob, clock, 'claude-code', 'b2', 'bob cors', 'cors')
    const alice = engine.scoped({ user: 'alice' })
    for (let i = 0; i < 12; i++)
      await alice.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: `alice misc ${i}` }, `a${i}`, PROJECT.root))
    clock.advance(3_600_000)
    await engine.consolidate({ procedures: { windowSessions: 5 } })
    const procedures = (
      await bob.browseMemories({
        projectIds: [(await bob.listProjects())[0]!.id],
        kinds: ['procedure'],
        state: 'current',
        offset: 0,
        limit: 10,
      })
    ).memories
    expect(procedures.map((m) => m.user)).toEqual(['bob'])
  })

  it('forget --session deletes exactly the named session: not another user’s or agent’s session with the same agent session id', async () => {
    const { engine } = createTestEngine({ cwd: PROJECT.root })
    const alice = engine.scoped({ user: 'alice' })
    await alice.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'alice heron' }, 'S', PROJECT.root))
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'shared stork' }, 'S', PROJECT.root))
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'codex zebra' }, 'S', PROJECT.root), 'codex')
    const project = (await engine.listProjects())[0]!
    const shared = (await engine.sessions()).find((x) => x.agent === 'claude-code')!
    // Alice may not delete the shared session; she cannot hit her own by naming it.
    await expect(alice.deleteScope({ project, session: shared.id })).rejects.toThrow(/is shared/)
    expect((await alice.sessions()).filter((x) => x.user === 'alice')).toHaveLength(1)
    const all = engine.scoped({ allUsers: true })
    expect(await all.deleteScope({ project, session: (await alice.sessions()).find((x) => x.user === 'alice')!.id })).toEqual({ events: 1 })
    expect((await all.sessions()).map((x) => `${x.agent}:${x.user ?? '-'}`).sort()).toEqual(['claude-code:-', 'codex:-'])
  })

  it('a user is named only the projects they have something in, and counts of their own and shared rows; agents under isolation likewise', async () => {
    const { engine } = createTestEngine({ cwd: PROJECT.root, agentScope: 'own' })
    const alice = engine.scoped({ user: 'alice' })
    const bob = engine.scoped({ user: 'bob' })
    await alice.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'price the acquisition' }, 's1', '/nonexistent-mnemo-user-scope/merger'),
    )
    await bob.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'fix the cart' }, 's2', PROJECT.root), 'codex')
    await engine.remember('the shop deploys on Fridays', { project: PROJECT })
    const names = async (e: MnemoEngine) => (await e.listProjects()).map((p) => p.name)
    expect(await names(alice)).toEqual(['merger', 'shop']) // shop through the shared memory
    expect(await names(bob)).toEqual(['shop'])
    expect(await bob.stats()).toMatchObject({ projects: 1, sessions: 1, observations: 1, memories: 1 })
    await expect(bob.resolveProjects('merger')).rejects.toThrow(/no project named[\s\S]*$/)
    // A write naming it gets a project of bob's own by that name, never alice's (nor its root).
    expect(await bob.projectForWrite('merger')).toEqual({ root: 'project:merger', name: 'merger' })
    await expect(bob.projectForWrite('merger', { create: false })).rejects.toThrow(/no project named[\s\S]*$/)
    // The machine's owner (no user) and --all-users see every project.
    expect(await names(engine)).toEqual(['merger', 'shop'])
    expect((await engine.scoped({ user: 'bob', allUsers: true }).stats()).sessions).toBe(2)
    // Under isolation an agent is named the projects with its own sessions or agent-less memories.
    expect(await names(alice.scoped({ agent: 'codex' }))).toEqual(['shop'])
    // And counts only its own rows and agent-less ones: none of Claude Code's in the merger project.
    expect(await alice.scoped({ agent: 'codex' }).stats()).toMatchObject({ projects: 1, sessions: 0, observations: 0, memories: 1 })
    expect(await names(alice.scoped({ agent: 'claude-code' }))).toEqual(['merger', 'shop'])
  })

  it('a malformed user name is refused', async () => {
    const { engine } = createTestEngine()
    for (const bad of ['', ' alice', 'a/b', 'x'.repeat(65), '-lead'])
      expect(() => engine.scoped({ user: bad })).toThrow(/user must be 1–64 ASCII/)
  })
})

describe('export and import as a user', () => {
  it('Alice’s export holds her events and shared ones, not Bob’s; restored with allUsers it stays hers, with the same counts', async () => {
    const s = await seed()
    const lines: string[] = []
    const manifest = await s.as.alice.exportJsonl((l) => lines.push(l), {})
    const text = lines.join('\n')
    for (const word of BOB_ONLY) expect(text).not.toContain(word)
    for (const word of ALICE_ONLY) expect(text).toContain(word)
    expect(text).toContain(SHARED)
    const fresh = createTestEngine().engine
    const imported = await fresh.scoped({ allUsers: true }).importExport(text, 'alice.jsonl')
    expect(imported.events).toBe(manifest.counts.events)
    const copy = fresh.scoped({ user: 'alice' })
    expect(sorted((await copy.sessions()).map((x) => x.sessionKey))).toEqual([ALICE.session])
    expect(ids(await copy.recall('backed up by the platform team', { channels: ['bm25'] }))).toEqual([s.shared.id])
    // Still hers, not turned into shared rows: a reader with no user, or Bob, sees only the shared memory.
    expect(await fresh.sessions()).toEqual([])
    expect(ids(await fresh.scoped({ user: 'bob' }).recall('orders database validateToken', { limit: 100 }))).toEqual([s.shared.id])
    expect((await copy.sessions())[0]!.user).toBe('alice')
  })

  it('a file cannot write into another user’s data: what Alice imports is hers, whatever users the file names, and its tombstones block only her keys', async () => {
    const s = await seed()
    const lines: string[] = []
    await s.as.bob.exportJsonl((l) => lines.push(l), {})
    // Bob's own export, plus a tombstone for a key of Bob's, handed to Alice.
    const bobKey = JSON.parse(lines.find((l) => l.includes('"kind":"event"') && l.includes('"user":"bob"'))!).idemKey as string
    const text = withTombstone(lines, `user:bob:future-${bobKey}`)
    const target = createTestEngine({ cwd: PROJECT.root }).engine
    await target.scoped({ user: 'alice' }).importExport(text, 'bob.jsonl')
    expect((await target.scoped({ user: 'alice' }).sessions()).map((x) => x.sessionKey)).toEqual([BOB.session])
    expect(await target.scoped({ user: 'bob' }).sessions()).toEqual([])
    expect(ids(await target.scoped({ user: 'bob' }).recall(BOB_ONLY.join(' '), { limit: 100 }))).toEqual([])
    // Bob's own copy of the same records is still his to store: Alice's import took no key of his namespace.
    const bobs = await target.scoped({ user: 'bob' }).importExport(lines.join('\n'), 'bob.jsonl')
    expect(bobs.duplicates).toBe(0)
    expect((await target.scoped({ user: 'bob' }).sessions()).map((x) => x.sessionKey)).toEqual([BOB.session])
  })

  it('pin, archive and provenance in a file touch only the importer’s own memories; a pin by Bob is his, kept by a shared delete', async () => {
    const s = await seed()
    const bobMemory = s.memory('bob', 0)
    const bobObservation = [...s.ids.bob].find((x) => x.startsWith('obs_'))!
    await s.as.bob.setMemoryState(s.memory('bob', 1).id, 'pin')
    const event = (type: string, payload: Record<string, unknown>, n: number) =>
      JSON.stringify({
        kind: 'event',
        seq: n,
        idemKey: `crafted-${n}`,
        agent: 'mnemo',
        format: 'mnemo',
        type,
        sessionKey: `mnemo:${PROJECT.root}`,
        project: PROJECT,
        ts: T0 + n,
        receivedAt: T0 + n,
        payload,
        user: 'bob',
      })
    const lines = [
      event('archive', { op: 'archive', id: bobMemory.id }, 1),
      event('archive', { op: 'archive', id: s.shared.id }, 2),
      event('unpin', { op: 'unpin', id: s.memory('bob', 1).id }, 3),
      event('remember', { op: 'remember', kind: 'fact', text: 'cites what Bob did', sources: [bobObservation] }, 4),
      event('remember', { op: 'remember', kind: 'fact', text: 12345 }, 5),
      event('remember', { op: 'remember', kind: 'fact', text: `long ${'x'.repeat(100_000)}` }, 6),
    ]
    const manifest = {
      format: 'mnemo-export',
      version: 1,
      exportedAt: new Date(T0).toISOString(),
      project: null,
      counts: { events: lines.length, tombstones: 0, audit: 0, sessions: 0, observations: 0, memories: 0 },
    }
    await s.as.alice.importExport([JSON.stringify(manifest), ...lines].join('\n'), 'crafted.jsonl')
    expect(await s.as.bob.show(bobMemory.id)).toMatchObject({ type: 'memory', memory: { archivedAt: undefined } })
    expect(await s.as.bob.show(s.memory('bob', 1).id)).toMatchObject({ type: 'memory', memory: { pinned: true } })
    expect(await s.base.show(s.shared.id)).toMatchObject({ type: 'memory', memory: { archivedAt: undefined } })
    // Her statement citing Bob's observation does not show her his text.
    const citing = (await s.as.alice.recall('cites what Bob did', { channels: ['bm25'] }))[0]!
    expect((await s.as.alice.memorySources(await s.as.alice.history(citing.id))).map((o) => o.id)).not.toContain(bobObservation)
    // A text that is not a string derives nothing; an oversized one is capped like any capture.
    const long = (await s.as.alice.recall('long', { channels: ['bm25'] })).find((h) => h.type === 'memory')!
    const shown = await s.as.alice.show(long.id)
    expect(shown.type === 'memory' && shown.memory.text.length).toBeLessThanOrEqual(16_400)
    // Bob's pin is his: a delete of shared events (no user) leaves it.
    await s.base.deleteScope({ project: s.project })
    expect(await s.as.bob.show(s.memory('bob', 1).id)).toMatchObject({ type: 'memory', memory: { pinned: true } })
  })

  it('a named user’s export holds their own tombstones and shared ones, and no audit records (they name every user’s items)', async () => {
    const s = await seed()
    await s.as.bob.forget(s.memory('bob', 2).id)
    await s.as.alice.forget(s.memory('alice', 2).id)
    const records = async (engine: MnemoEngine): Promise<{ kind: string; idemKey?: string }[]> => {
      const lines: string[] = []
      await engine.exportJsonl((l) => lines.push(l))
      return lines.slice(1).map((l) => JSON.parse(l) as { kind: string; idemKey?: string })
    }
    const alices = await records(s.as.alice)
    const tombstones = alices.filter((r) => r.kind === 'tombstone').map((r) => r.idemKey!)
    expect(tombstones.length).toBeGreaterThan(0)
    expect(tombstones.every((k) => k.startsWith('user:alice:'))).toBe(true)
    expect(alices.some((r) => r.kind === 'audit')).toBe(false)
    expect((await records(s.all)).filter((r) => r.kind === 'tombstone').some((r) => r.idemKey!.startsWith('user:bob:'))).toBe(true)
  })

  it('an import with event times outside 1970–9999, or oversized envelope fields, is refused naming the line; an unreadable payload names the event', async () => {
    const s = await seed()
    const manifest = (n: number) =>
      JSON.stringify({
        format: 'mnemo-export',
        version: 1,
        exportedAt: new Date(T0).toISOString(),
        project: null,
        counts: { events: n, tombstones: 0, audit: 0, sessions: 0, observations: 0, memories: 0 },
      })
    const event = (over: Record<string, unknown>) =>
      JSON.stringify({
        kind: 'event',
        seq: 1,
        idemKey: 'odd-1',
        agent: 'claude-code',
        format: 'claude-hook',
        type: 'UserPromptSubmit',
        sessionKey: 's',
        project: PROJECT,
        ts: T0,
        receivedAt: T0,
        payload: {},
        ...over,
      })
    const before = (await s.base.scoped({ allUsers: true }).stats()).events
    await expect(s.as.alice.importExport([manifest(1), event({ ts: 9_007_199_254_740_991 })].join('\n'), 'odd.jsonl')).rejects.toThrow(
      /odd\.jsonl:2: .*ts/,
    )
    await expect(
      s.as.alice.importExport([manifest(1), event({ project: { root: `/x${'y'.repeat(5000)}`, name: 'x' } })].join('\n'), 'odd.jsonl'),
    ).rejects.toThrow(/odd\.jsonl:2: .*root/)
    const locomo = event({
      agent: 'locomo',
      format: 'locomo-turn',
      type: 'turn',
      payload: { speaker: 7, text: ['not', 'text'], dia_id: 'D1:1' },
    })
    await expect(s.as.alice.importExport([manifest(1), locomo].join('\n'), 'odd.jsonl')).rejects.toThrow(
      /event user:alice:odd-1 \(locomo-turn\) has a payload mnemo cannot read/,
    )
    expect((await s.base.scoped({ allUsers: true }).stats()).events).toBe(before)
  })

  it('an import that fails part-way stores nothing, tombstones included (they are written only after every event is)', async () => {
    const s = await seed()
    const lines: string[] = []
    await s.as.alice.exportJsonl((l) => lines.push(l), {})
    const { engine, store } = createTestEngine()
    // The store fails the write (a lock, a full disk): the one transaction rolls back and no tombstone was written before it.
    const failing = new Proxy(store, {
      get: (t, k) =>
        k === 'append'
          ? () => {
              throw new Error('disk full')
            }
          : Reflect.get(t, k),
    })
    await expect(
      readExport(failing, { now: () => 0 }, () => ({ observations: [] }), withTombstone(lines, 'some-key'), 'alice.jsonl', {
        user: 'alice',
      }),
    ).rejects.toThrow(/disk full/)
    expect(await store.tombstones()).toEqual([])
    expect((await engine.stats()).events).toBe(0)
  })
})

describe('agent isolation (agentScope: own)', () => {
  /** One project, one user: a Claude Code session and a Codex session, a memory each agent stated over MCP, one a person stated. */
  async function agents(agentScope: 'own' | 'shared') {
    const { engine: base, clock, store } = createTestEngine({ cwd: PROJECT.root, agentScope })
    await base.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'rotate the Auth0 signing keys for validateToken' }, 'sess-claude', PROJECT.root),
      'claude-code',
    )
    clock.advance(60_000)
    await base.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'rotate the Okta signing keys for validateToken' }, 'sess-codex', PROJECT.root),
      'codex',
    )
    clock.advance(60_000)
    const claudeMemory = (await base.remember('validateToken caches Auth0 keys for 10 minutes', { project: PROJECT, agent: 'claude-code' }))
      .memory
    const codexMemory = (await base.remember('validateToken caches Okta keys for 5 minutes', { project: PROJECT, agent: 'codex' })).memory
    const personMemory = (await base.remember('signing keys rotate every 90 days', { project: PROJECT })).memory
    return {
      base,
      store,
      clock,
      claude: base.scoped({ agent: 'claude-code' }),
      codex: base.scoped({ agent: 'codex' }),
      claudeMemory,
      codexMemory,
      personMemory,
    }
  }

  it('each agent recalls and gets context of its own captures and memories plus what a person stated', async () => {
    const a = await agents('own')
    const claude = await a.claude.recall('validateToken signing keys', { limit: 100 })
    expect(claude.map((h) => h.snippet).join(' ')).not.toMatch(/Okta/)
    expect(ids(claude)).toEqual(expect.arrayContaining([a.claudeMemory.id, a.personMemory.id]))
    const codex = await a.codex.recall('validateToken signing keys', { limit: 100 })
    expect(codex.map((h) => h.snippet).join(' ')).not.toMatch(/Auth0/)
    expect(ids(codex)).toEqual(expect.arrayContaining([a.codexMemory.id, a.personMemory.id]))
    const block = (await a.codex.context({ project: PROJECT, budgetTokens: 100_000 })).text
    expect(block).toContain('Okta')
    expect(block).not.toContain('Auth0')
    await expect(a.codex.show(a.claudeMemory.id)).rejects.toThrow(/no memory/)
    // A person (no agent) sees both.
    expect((await a.base.recall('validateToken signing keys', { limit: 100 })).map((h) => h.snippet).join(' ')).toMatch(
      /Auth0[\s\S]*Okta|Okta[\s\S]*Auth0/,
    )
  })

  it('under isolation the write guard stays within the agent: Codex neither merges into, supersedes nor flags Claude’s memories', async () => {
    const a = await agents('own')
    const claudeDb = (await a.base.remember('orders DB is PostgreSQL 14', { project: PROJECT, agent: 'claude-code' })).memory
    const quoting = (await a.base.remember('the replica also runs PostgreSQL 14', { project: PROJECT, agent: 'claude-code' })).memory
    const codexDb = (await a.base.remember('orders DB is MySQL 8', { project: PROJECT, agent: 'codex' })).memory
    expect(codexDb.supersedes).toBeUndefined()
    expect(await a.claude.show(claudeDb.id)).toMatchObject({ type: 'memory', memory: { validTo: undefined } })
    expect(await a.claude.show(quoting.id)).toMatchObject({ type: 'memory', memory: { review: undefined } })
    // The same words stated by both agents are two memories, so a duplicate tells Codex nothing about Claude's.
    const again = await a.base.remember('validateToken caches Auth0 keys for 10 minutes', { project: PROJECT, agent: 'codex' })
    expect(again.created).toBe(true)
    expect(again.memory.id).not.toBe(a.claudeMemory.id)
  })

  it('the agent guard is recorded in the events: a rebuild under the shared setting merges and supersedes nothing across agents', async () => {
    const a = await agents('own')
    const claudeDb = (await a.base.remember('orders DB is PostgreSQL 14', { project: PROJECT, agent: 'claude-code' })).memory
    await a.base.remember('orders DB is PostgreSQL 14', { project: PROJECT, agent: 'codex' })
    await a.base.remember('orders DB is MySQL 8', { project: PROJECT, agent: 'codex' })
    // The same store, opened with the default (shared) setting, rebuilt from its log.
    const reopened = new MnemoEngine({ store: a.store, clock: a.clock, cwd: PROJECT.root, contextBudgetTokens: 2000, timeZone: 'UTC' })
    await reopened.rebuild()
    expect(await reopened.show(claudeDb.id)).toMatchObject({ type: 'memory', memory: { validTo: undefined, seenCount: 1 } })
  })

  it('under isolation each agent’s procedure is its own: no reuse of another agent’s wording, no block by its archive', async () => {
    const { engine, clock } = createTestEngine({ cwd: PROJECT.root, agentScope: 'own' })
    const play = (agent: 'claude-code' | 'codex', id: string, prompt: string, file: string): Promise<void> =>
      playWork(engine, clock, agent, id, prompt, file)
    const procedures = async (e: MnemoEngine, state: 'current' | 'all' = 'current') =>
      (await e.browseMemories({ projectIds: [(await e.listProjects())[0]!.id], kinds: ['procedure'], state, offset: 0, limit: 50 }))
        .memories
    await play('claude-code', 'c1', 'SECRETCLAUDE alpha rate limiting', 'rate')
    await play('claude-code', 'c2', 'SECRETCLAUDE beta cors', 'cors')
    await engine.consolidate()
    const claudes = await procedures(engine.scoped({ agent: 'claude-code' }))
    expect(claudes).toHaveLength(1)
    await engine.setMemoryState(claudes[0]!.id, 'archive')
    await play('codex', 'x1', 'codex gamma gzip', 'gzip')
    await play('codex', 'x2', 'codex delta auth', 'auth')
    await engine.consolidate()
    const codexes = await procedures(engine.scoped({ agent: 'codex' }))
    expect(codexes).toHaveLength(1)
    expect(codexes[0]!.agent).toBe('codex')
    expect(codexes[0]!.text).not.toMatch(/SECRETCLAUDE/i)
  })

  it('under isolation a new version of an agent’s memory (edit, --supersedes) is that agent’s and replaces it', async () => {
    const a = await agents('own')
    const edited = await a.base.editMemory(a.codexMemory.id, 'validateToken caches Okta keys for 15 minutes')
    expect(edited).toMatchObject({ agent: 'codex', supersedes: a.codexMemory.id })
    expect(await a.codex.show(a.codexMemory.id)).toMatchObject({ type: 'memory', memory: { validTo: expect.any(Number) } })
  })

  it('under isolation an agent may export Markdown, not the raw log of every agent (FORBIDDEN)', async () => {
    const a = await agents('own')
    await expect(a.codex.exportJsonl(() => undefined)).rejects.toThrow(expect.objectContaining({ code: 'FORBIDDEN' }))
    const markdown = [...(await a.codex.exportMarkdown()).values()].join('\n')
    expect(markdown).toContain('Okta')
    expect(markdown).not.toContain('Auth0')
    // A person (no agent) still exports everything.
    const lines: string[] = []
    await a.base.exportJsonl((l) => lines.push(l))
    expect(lines.join('\n')).toMatch(/Auth0/)
  })

  it('the session a context leaves out is the caller’s own: another agent’s session with the same id stays in', async () => {
    const a = await agents('shared')
    await a.base.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'codex quokka' }, 'sess-claude', PROJECT.root),
      'codex',
    )
    const block = (await a.codex.context({ project: PROJECT, budgetTokens: 100_000, excludeSessionKey: 'sess-claude' })).text
    expect(block).toContain('Auth0')
    expect(block).not.toContain('quokka')
  })

  it('with the default shared scope every agent reads the others’ memory (cross-agent memory)', async () => {
    const a = await agents('shared')
    const codex = await a.codex.recall('validateToken signing keys', { limit: 100 })
    expect(ids(codex)).toEqual(expect.arrayContaining([a.claudeMemory.id, a.codexMemory.id, a.personMemory.id]))
  })
})
