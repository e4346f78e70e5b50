import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { createMcpServer } from '../adapters/mcp/server.js'
import type { ProjectId } from '../core/ids.js'
import type { ChannelName, Memory, Observation, Project, ProjectRef, RecallHit, Session } from '../core/types.js'
import { FIRST, FIRST_ONLY, hooksOf, memoriesOf, type OverlapFacts, SAME_MEMORY, SECOND, SECOND_ONLY } from '../testing/overlap-fixtures.js'
import { createTestEngine, hookPayload, recallWith } from '../testing/test-mnemo.js'
import type { MnemoEngine } from './mnemo.js'
import type { ParsedJson } from '../testing/json.js'

// Project isolation on every read path. Two projects whose texts overlap heavily — the same
// words, the same file names, the same identifier (validateToken), one identical memory — but
// different facts (PostgreSQL 14 / Auth0 / Frankfurt / Dana vs MySQL 8 / Okta / Oregon / Eli).
// Every scoped read of ALPHA must return only ALPHA's items, derived ones (session digests,
// consolidated summaries and lessons, graph neighbours, spread neighbours) included; an
// unscoped read is checked to find BETA's counterpart, so each test would see a leak.
// The roots do not exist on this machine, so the project of a path is the path itself.

const ROOT = '/nonexistent-mnemo-scope-test'

interface Facts extends OverlapFacts {
  ref: ProjectRef
}

const ALPHA: Facts = { ref: { root: `${ROOT}/alpha`, name: 'alpha' }, root: `${ROOT}/alpha`, key: 'alpha', session: 'sess-alpha', ...FIRST }
const BETA: Facts = { ref: { root: `${ROOT}/beta`, name: 'beta' }, root: `${ROOT}/beta`, key: 'beta', session: 'sess-beta', ...SECOND }
/** Words only BETA's texts contain, and only ALPHA's. */
const BETA_ONLY = SECOND_ONLY
const ALPHA_ONLY = FIRST_ONLY
/** The same text remembered in both projects. */
const SHARED_MEMORY = SAME_MEMORY

interface Seeded {
  engine: MnemoEngine
  alpha: Project
  beta: Project
  /** Every memory and observation id of each project, and its sessions. */
  items: Record<'alpha' | 'beta', { ids: Set<string>; memories: Memory[]; observations: Observation[]; sessions: Session[] }>
  /** The memory of each project holding `text` of memoriesOf (by index). */
  memory: (project: 'alpha' | 'beta', index: number) => Memory
}

/** Seeds both projects, interleaved one minute apart (ALPHA's item, then BETA's), then consolidates. */
async function seed(options: Parameters<typeof createTestEngine>[0] = {}): Promise<Seeded> {
  const { engine, clock, store } = createTestEngine({ cwd: ALPHA.ref.root, ...options })
  const remembered: Record<'alpha' | 'beta', Memory[]> = { alpha: [], beta: [] }
  const hooks = [hooksOf(ALPHA), hooksOf(BETA)] as const
  for (let i = 0; i < hooks[0].length; i++) {
    for (const [f, list] of [
      [ALPHA, hooks[0]],
      [BETA, hooks[1]],
    ] as const) {
      const [event, fields] = list[i]!
      expect(await engine.captureHook(event, hookPayload(event, fields, f.session, f.ref.root))).toMatchObject({
        stored: true,
        project: f.ref,
      })
      clock.advance(60_000)
    }
  }
  const texts = [memoriesOf(ALPHA), memoriesOf(BETA)] as const
  for (let i = 0; i < texts[0].length; i++) {
    for (const [f, list] of [
      [ALPHA, texts[0]],
      [BETA, texts[1]],
    ] as const) {
      const { memory, created } = await engine.remember(list[i]!, { project: f.ref })
      expect(created).toBe(true)
      remembered[f.ref.name as 'alpha' | 'beta'].push(memory)
      clock.advance(60_000)
    }
  }
  // Derived items: each ended session becomes a summary memory, the fixed failure a lesson.
  expect(await engine.consolidate()).toMatchObject({ sessions: 2, summaries: 2, lessons: 2, archived: 0 })
  const byName = new Map((await engine.listProjects()).map((p) => [p.name, p]))
  const alpha = byName.get('alpha')!
  const beta = byName.get('beta')!
  expect([...byName.keys()].sort()).toEqual(['alpha', 'beta'])
  const itemsOf = async (p: Project): Promise<Seeded['items']['alpha']> => {
    const sessions = await engine.sessions({ projectIds: [p.id] })
    const observations: Observation[] = []
    for (const s of sessions) {
      const shown = await engine.show(s.id)
      if (shown.type === 'session') observations.push(...shown.detail.observations)
    }
    const memories = await store.listMemories({ projectIds: [p.id], limit: 1000 })
    return { ids: new Set([...memories.map((m) => m.id), ...observations.map((o) => o.id)]), memories, observations, sessions }
  }
  return {
    engine,
    alpha,
    beta,
    items: { alpha: await itemsOf(alpha), beta: await itemsOf(beta) },
    memory: (project, index) => remembered[project][index]!,
  }
}

const ids = (hits: readonly { id: string }[]): string[] => hits.map((h) => h.id)
const sorted = (values: Iterable<string>): string[] => [...values].sort()

function expectOnly(hits: readonly RecallHit[], project: Project, allowed: ReadonlySet<string>): void {
  for (const h of hits) {
    expect(h.projectId, `${h.id} (${h.snippet})`).toBe(project.id)
    expect(h.project).toBe(project.name)
    expect(allowed.has(h.id), `${h.id} is one of ${project.name}'s items`).toBe(true)
  }
}

describe('the corpus overlaps', () => {
  it('an unscoped recall finds both projects for the shared words, so the scoped tests below can see a leak', async () => {
    const s = await seed()
    const hits = await s.engine.recall('orders database validateToken tokens', { limit: 100 })
    expect(new Set(hits.map((h) => h.project))).toEqual(new Set(['alpha', 'beta']))
    // The identical memory exists twice, once per project.
    expect(
      sorted(
        ids(
          (await s.engine.recall(SHARED_MEMORY, { limit: 100, channels: ['bm25'] })).filter(
            (h) => h.type === 'memory' && h.snippet === SHARED_MEMORY,
          ),
        ),
      ),
    ).toEqual(sorted([s.memory('alpha', 10).id, s.memory('beta', 10).id]))
    // Both projects hold the same counts of each kind of item.
    expect(s.items.alpha.observations.map((o) => o.kind)).toEqual(s.items.beta.observations.map((o) => o.kind))
    expect(s.items.alpha.memories.map((m) => m.kind).sort()).toEqual(s.items.beta.memories.map((m) => m.kind).sort())
  })
})

describe('recall scoped to one project, per channel', () => {
  const QUERIES = [
    'orders database connection pool',
    'validateToken',
    'checkIssuer',
    'what happened on 14 June 2025',
    'npm test orders-database failed',
    'src/auth/validate-token.ts',
    SHARED_MEMORY,
  ]
  const ABLATIONS: (readonly ChannelName[] | undefined)[] = [
    undefined,
    ['bm25'],
    ['time'],
    ['graph'],
    ['vector'],
    ['bm25', 'graph'],
    ['bm25', 'time'],
    ['vector', 'graph', 'time'],
  ]

  it.each(ABLATIONS.map((c) => [c?.join('+') ?? 'default', c] as const))(
    'channels %s: every hit of every query is ALPHA’s, BETA’s counterparts show up unscoped',
    async (_name, channels) => {
      const s = await seed({ recall: recallWith({ vector: 1, graph: 1 }) })
      let found = 0
      for (const query of QUERIES) {
        const scoped = await s.engine.recall(query, { projectIds: [s.alpha.id], limit: 100, ...(channels ? { channels } : {}) })
        expectOnly(scoped, s.alpha, s.items.alpha.ids)
        found += scoped.length
        if (scoped.length > 0) {
          const unscoped = await s.engine.recall(query, { limit: 100, ...(channels ? { channels } : {}) })
          expect(
            unscoped.some((h) => h.project === 'beta'),
            query,
          ).toBe(true)
        }
        const other = await s.engine.recall(query, { projectIds: [s.beta.id], limit: 100, ...(channels ? { channels } : {}) })
        expectOnly(other, s.beta, s.items.beta.ids)
        // Same corpus shape, same query: the two scoped answers mirror each other (each project's
        // vector model is fitted on its own words, so with the vector channel the counts may differ).
        if (!(channels ?? ['vector']).includes('vector')) expect(scoped.length, query).toBe(other.length)
      }
      expect(found).toBeGreaterThan(0)
    },
  )

  it('bm25: a phrase of one memory gives exactly that project’s memory; unscoped, both', async () => {
    const s = await seed()
    const scoped = await s.engine.recall('nightly backup', { projectIds: [s.alpha.id], channels: ['bm25'] })
    expect(ids(scoped)).toEqual([s.memory('alpha', 5).id])
    const unscoped = await s.engine.recall('nightly backup', { channels: ['bm25'] })
    expect(sorted(ids(unscoped))).toEqual(sorted([s.memory('alpha', 5).id, s.memory('beta', 5).id]))
  })

  it('bm25: words only BETA uses find nothing in ALPHA, on every channel that reads words', async () => {
    const s = await seed({ recall: recallWith({ vector: 1, graph: 1 }) })
    for (const channels of [['bm25'], ['graph'], ['time'], ['bm25', 'graph', 'time']] as ChannelName[][]) {
      expect(await s.engine.recall(BETA_ONLY.join(' '), { projectIds: [s.alpha.id], channels })).toEqual([])
    }
    expect((await s.engine.recall(BETA_ONLY.join(' '), { channels: ['bm25'], limit: 100 })).every((h) => h.project === 'beta')).toBe(true)
  })

  it('bm25 with neighbour spreading: the neighbours pulled in are ALPHA’s session’s', async () => {
    const s = await seed()
    const scoped = await s.engine.recall('refused the connection', { projectIds: [s.alpha.id], channels: ['bm25'], limit: 100 })
    const alphaSession = s.items.alpha.sessions.find((x) => x.agent === 'claude-code')!
    const direct = scoped.filter((h) => !h.viaNeighbor)
    const spread = scoped.filter((h) => h.viaNeighbor)
    expect(direct[0]!.snippet).toContain(`${ALPHA.db} refused the connection`)
    expect(spread.length).toBeGreaterThan(0)
    for (const h of spread) expect(h.sessionId).toBe(alphaSession.id)
    expectOnly(scoped, s.alpha, s.items.alpha.ids)
  })

  it('time: a day both projects wrote on gives exactly ALPHA’s documents', async () => {
    const s = await seed()
    const scoped = await s.engine.recall('what happened on 14 June 2025', { projectIds: [s.alpha.id], channels: ['time'], limit: 100 })
    expect(sorted(ids(scoped))).toEqual(sorted(s.items.alpha.ids))
    const unscoped = await s.engine.recall('what happened on 14 June 2025', { channels: ['time'], limit: 100 })
    expect(sorted(ids(unscoped))).toEqual(sorted([...s.items.alpha.ids, ...s.items.beta.ids]))
  })

  it('graph: an entity mentioned in both projects (checkIssuer) reaches only ALPHA’s documents and neighbours', async () => {
    const s = await seed({ recall: recallWith({ graph: 1 }) })
    const scoped = await s.engine.recall('checkIssuer', { projectIds: [s.alpha.id], channels: ['graph'], limit: 100 })
    expect(ids(scoped)).toContain(s.memory('alpha', 1).id)
    expect(ids(scoped)).toContain(s.memory('alpha', 7).id)
    expectOnly(scoped, s.alpha, s.items.alpha.ids)
    const unscoped = await s.engine.recall('checkIssuer', { channels: ['graph'], limit: 100 })
    expect(ids(unscoped)).toEqual(
      expect.arrayContaining([s.memory('alpha', 1).id, s.memory('beta', 1).id, s.memory('alpha', 7).id, s.memory('beta', 7).id]),
    )
    // Scoped to ALPHA, the graph channel gives what the unscoped graph gives for ALPHA: BETA's mentions never add to it.
    expect(sorted(ids(scoped))).toEqual(sorted(ids(unscoped.filter((h) => h.project === 'alpha'))))
  })

  it('vector: each project’s own model, ALPHA’s documents only', async () => {
    const s = await seed({ recall: recallWith({ vector: 1 }) })
    const scoped = await s.engine.recall('orders database backup region replica', {
      projectIds: [s.alpha.id],
      channels: ['vector'],
      limit: 100,
    })
    expect(scoped.length).toBeGreaterThan(0)
    expect(scoped.every((h) => h.channels?.vector !== undefined)).toBe(true)
    expectOnly(scoped, s.alpha, s.items.alpha.ids)
    const unscoped = await s.engine.recall('orders database backup region replica', { channels: ['vector'], limit: 100 })
    expect(new Set(unscoped.map((h) => h.project))).toEqual(new Set(['alpha', 'beta']))
  })

  it('a session scope inside the project scope stays inside both', async () => {
    const s = await seed()
    const alphaSession = s.items.alpha.sessions.find((x) => x.agent === 'claude-code')!
    const hits = await s.engine.recall('orders database', { projectIds: [s.alpha.id], sessionId: alphaSession.id, limit: 100 })
    expect(hits.every((h) => h.sessionId === alphaSession.id)).toBe(true)
    // Terms are ORed: the direct hits are the session's observations with either word.
    expect(sorted(ids(hits.filter((h) => !h.viaNeighbor)))).toEqual(
      sorted(s.items.alpha.observations.filter((o) => o.sessionId === alphaSession.id && /orders|database/i.test(o.text)).map((o) => o.id)),
    )
  })
})

describe('context, sessions, show', () => {
  it('context of ALPHA: ALPHA’s memories and session digest, no word of BETA’s', async () => {
    const s = await seed()
    const block = await s.engine.context({ project: ALPHA.ref, budgetTokens: 100_000 })
    const alphaSession = s.items.alpha.sessions.find((x) => x.agent === 'claude-code')!
    expect(block.project).toBe('alpha')
    expect(block.sessionIds).toEqual([alphaSession.id])
    // Every current memory but the session summary (its digest is there as the session itself), newest first (as listed).
    expect(block.memoryIds).toEqual(s.items.alpha.memories.filter((m) => m.kind !== 'summary').map((m) => m.id))
    for (const word of ALPHA_ONLY) expect(block.text).toContain(word)
    for (const word of BETA_ONLY) expect(block.text).not.toContain(word)
    // The default project is the working directory's (ALPHA): the same block.
    expect((await s.engine.context({ budgetTokens: 100_000 })).text).toBe(block.text)
  })

  it('context of BETA mirrors it', async () => {
    const s = await seed()
    const block = await s.engine.context({ project: BETA.ref, budgetTokens: 100_000 })
    expect(block.sessionIds).toEqual([s.items.beta.sessions.find((x) => x.agent === 'claude-code')!.id])
    for (const word of BETA_ONLY) expect(block.text).toContain(word)
    for (const word of ALPHA_ONLY) expect(block.text).not.toContain(word)
  })

  it("sessions of ALPHA: exactly its hook session (mnemo's own bookkeeping sessions are not listed)", async () => {
    const s = await seed()
    const sessions = await s.engine.sessions({ projectIds: [s.alpha.id] })
    expect(sessions.map((x) => [x.agent, x.sessionKey]).sort()).toEqual([['claude-code', ALPHA.session]])
    expect(sessions.every((x) => x.projectId === s.alpha.id)).toBe(true)
    expect(sorted((await s.engine.sessions()).map((x) => x.id))).toEqual(
      sorted([...s.items.alpha.sessions, ...s.items.beta.sessions].filter((x) => x.agent !== 'mnemo').map((x) => x.id)),
    )
  })

  it('show of a foreign id is allowed (ids are explicit) and says which project it is from', async () => {
    const s = await seed()
    const bObs = s.items.beta.observations[0]!
    const shown = await s.engine.show(bObs.id)
    expect(shown).toMatchObject({ type: 'observation', observation: { id: bObs.id, projectId: s.beta.id }, project: { name: 'beta' } })
    const bMem = s.memory('beta', 0)
    expect(await s.engine.show(bMem.id)).toMatchObject({
      type: 'memory',
      memory: { id: bMem.id, text: `orders database engine is ${BETA.db}` },
      project: { name: 'beta' },
    })
    const bSession = s.items.beta.sessions.find((x) => x.agent === 'claude-code')!
    const session = await s.engine.show(bSession.id)
    if (session.type !== 'session') throw new Error('expected a session')
    expect(session.detail.project?.name).toBe('beta')
    expect(session.detail.observations.every((o) => o.projectId === s.beta.id)).toBe(true)
  })
})

describe('forget never touches the other project', () => {
  it('forgetting ALPHA’s copy of a memory both projects hold keeps BETA’s, and BETA’s reads are unchanged', async () => {
    const s = await seed()
    const queries = ['orders database', SHARED_MEMORY, 'validateToken', 'npm test orders-database']
    const before = await Promise.all(queries.map((q) => s.engine.recall(q, { projectIds: [s.beta.id], limit: 100 })))
    const contextBefore = (await s.engine.context({ project: BETA.ref, budgetTokens: 100_000 })).text

    expect(await s.engine.forget(s.memory('alpha', 10).id)).toMatchObject({ type: 'memory' })
    const bashAlpha = s.items.alpha.observations.find((o) => o.tool === 'Bash' && o.kind === 'tool')!
    await s.engine.forget(bashAlpha.id)

    const after = await Promise.all(queries.map((q) => s.engine.recall(q, { projectIds: [s.beta.id], limit: 100 })))
    expect(after.map(ids)).toEqual(before.map(ids))
    expect((await s.engine.context({ project: BETA.ref, budgetTokens: 100_000 })).text).toBe(contextBefore)
    expect(await s.engine.show(s.memory('beta', 10).id)).toMatchObject({ type: 'memory', memory: { text: SHARED_MEMORY } })
    const shared = await s.engine.recall(SHARED_MEMORY, { channels: ['bm25'], limit: 100 })
    expect(ids(shared.filter((h) => h.snippet === SHARED_MEMORY))).toEqual([s.memory('beta', 10).id])
    await expect(s.engine.show(s.memory('alpha', 10).id)).rejects.toThrow(/no memory/)
    const bashBeta = s.items.beta.observations.find((o) => o.tool === 'Bash' && o.kind === 'tool')!
    const passed = await s.engine.recall('tests passed against', { channels: ['bm25'], limit: 100 })
    expect(ids(passed)).toContain(bashBeta.id)
    expect(ids(passed)).not.toContain(bashAlpha.id)
    await expect(s.engine.show(bashAlpha.id)).rejects.toThrow(/no observation/)
    expect(await s.engine.show(bashBeta.id)).toMatchObject({ type: 'observation', observation: { text: bashBeta.text } })
  })

  it('deleting ALPHA’s whole scope leaves every BETA item', async () => {
    const s = await seed()
    await s.engine.deleteScope({ project: s.alpha })
    const betaSessions = await s.engine.sessions({ projectIds: [s.beta.id] })
    expect(sorted(betaSessions.map((x) => x.id))).toEqual(sorted(s.items.beta.sessions.map((x) => x.id)))
    for (const id of s.items.beta.ids) expect(() => s.engine.show(id)).not.toThrow()
  })
})

describe('the MCP server started in ALPHA’s folder', () => {
  const clients: Client[] = []
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()))
  })

  async function connect(engine: MnemoEngine, cwd: string): Promise<(name: string, args: Record<string, unknown>) => Promise<ParsedJson>> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await createMcpServer(engine, cwd).connect(serverSide)
    const client = new Client({ name: 'scope-test', version: '0.0.0' })
    await client.connect(clientSide)
    clients.push(client)
    return async (name, args) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult
      const first = result.content[0]
      if (first?.type !== 'text') throw new Error(`no text content from ${name}`)
      expect(result.isError ?? false, first.text).toBe(false)
      return JSON.parse(first.text)
    }
  }

  it.each([
    ['the project root', `${ROOT}/alpha`],
    ['a subfolder', `${ROOT}/alpha/src/auth`],
  ])('from %s: recall, sessions and context are ALPHA’s only', async (_where, cwd) => {
    const s = await seed()
    const call = await connect(s.engine, cwd)
    for (const query of [
      'orders database connection pool',
      'validateToken',
      'checkIssuer',
      'what happened on 14 June 2025',
      SHARED_MEMORY,
    ]) {
      const doc = await call('memory_recall', { query, limit: 100 })
      const expected = await s.engine.recall(query, { projectIds: [s.alpha.id], limit: 100 })
      expect(doc.hits.map((h: { id: string }) => h.id)).toEqual(ids(expected))
      expect(doc.hits.length).toBeGreaterThan(0)
      expect(doc.hits.every((h: { project: string; id: string }) => h.project === 'alpha' && s.items.alpha.ids.has(h.id))).toBe(true)
    }
    expect((await call('memory_recall', { query: BETA_ONLY.join(' ') })).hits).toEqual([])
    const sessions = await call('memory_sessions', {})
    expect(sorted(sessions.sessions.map((x: { id: string }) => x.id))).toEqual(sorted(s.items.alpha.sessions.map((x) => x.id)))
    const context = await call('memory_context', { budget: 100_000 })
    expect(context.project).toBe('alpha')
    for (const word of BETA_ONLY) expect(context.text).not.toContain(word)
  })

  it('returns BETA’s items only when a call names BETA, and shows a foreign id on request', async () => {
    const s = await seed()
    const call = await connect(s.engine, ALPHA.ref.root)
    const doc = await call('memory_recall', { query: 'orders database connection pool', project: 'beta', limit: 100 })
    expect(doc.hits.length).toBeGreaterThan(0)
    expect(doc.hits.every((h: { project: string; id: string }) => h.project === 'beta' && s.items.beta.ids.has(h.id))).toBe(true)
    const shown = await call('memory_show', { id: s.memory('beta', 0).id })
    expect(shown).toMatchObject({ type: 'memory', memory: { project: 'beta', text: `orders database engine is ${BETA.db}` } })
  })
})

describe('one agent session that moves between projects (same session id, two folders)', () => {
  // Sessions are keyed by agent + session id + project: the part of the session spent in BETA is
  // BETA's own session, so neither ALPHA's context digest nor neighbour spreading crosses over.
  async function moved(): Promise<{ engine: MnemoEngine; alpha: ProjectId; beta: ProjectId }> {
    const { engine, clock } = createTestEngine({ cwd: ALPHA.ref.root })
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: `check the orders database on ${ALPHA.db}` }, 'sess-moving', ALPHA.ref.root),
    )
    clock.advance(60_000)
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: `check the orders database on ${BETA.db}` }, 'sess-moving', BETA.ref.root),
    )
    const byName = new Map((await engine.listProjects()).map((p) => [p.name, p.id]))
    return { engine, alpha: byName.get('alpha')!, beta: byName.get('beta')! }
  }

  it('each observation keeps the project of its own folder, and recall scoped to ALPHA is ALPHA’s', async () => {
    const m = await moved()
    const hits = await m.engine.recall('check the orders database', { projectIds: [m.alpha], channels: ['bm25'], limit: 100 })
    expect(hits.filter((h) => !h.viaNeighbor).map((h) => h.snippet)).toEqual([`check the orders database on ${ALPHA.db}`])
  })

  it('context of ALPHA leaves out what the session did in BETA', async () => {
    const m = await moved()
    expect((await m.engine.context({ project: ALPHA.ref, budgetTokens: 100_000 })).text).not.toContain(BETA.db)
  })

  it('recall scoped to ALPHA does not spread into BETA’s part of the session', async () => {
    const m = await moved()
    const hits = await m.engine.recall('check the orders database PostgreSQL', { projectIds: [m.alpha], channels: ['bm25'], limit: 100 })
    expect(hits.map((h) => h.projectId)).not.toContain(m.beta)
  })
})
