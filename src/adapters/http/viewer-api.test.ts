import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callRest, conforms, type RestReply } from '../../testing/rest-client.js'
import { startServer, type RunningServer } from './server.js'
import { VIEWER_CSP } from './viewer-assets.js'
import { readEvents } from '../../testing/sse.js'
import type { z } from 'zod'
import type { graphJson, listedObservationJson, memoryJson, observationJson, sessionJson, timelineJson } from '../../engine/views.js'

// The routes the viewer reads and writes (browse, replay, history, edit, graph,
// live stream, the page itself), against a real server on 127.0.0.1, port 0,
// fed the recorded Claude Code session of the demo and then consolidated.
const ROOT = path.resolve(import.meta.dirname, '../../..')
const DEMO = path.join(ROOT, 'fixtures/demo/claude-code-session.jsonl')

type ListedObservation = z.infer<typeof listedObservationJson>
type Step = z.infer<typeof timelineJson>['observations'][number]
type Session = z.infer<typeof sessionJson>
type Memory = z.infer<typeof memoryJson>
type Observation = z.infer<typeof observationJson>
type Graph = z.infer<typeof graphJson>

let tmp: string
let server: RunningServer
const P = 'acme-api'

const api = (method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<RestReply> =>
  callRest(server, method, route, body, headers)

/** A well-formed id of the same kind that names nothing. */
function otherId(id: string): string {
  return `${id.slice(0, -2)}${id.endsWith('00') ? 'ff' : '00'}`
}

function hookLine(event: string, payload: Record<string, unknown>): string {
  return JSON.stringify({ event, payload: { session_id: 'live-1', cwd: '/home/demo/acme-api', hook_event_name: event, ...payload } })
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-viewer-api-'))
  server = await startServer({ home: path.join(tmp, 'home'), host: '127.0.0.1', port: 0, env: {}, streamPollMs: 20 })
  for (const line of readFileSync(DEMO, 'utf8')
    .split('\n')
    .filter((l) => l.trim())) {
    expect((await api('POST', '/v1/events', line)).status).toBe(202)
  }
  await server.engine.consolidate({ idleMs: 0 })
})

afterAll(async () => {
  await server?.close()
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

describe('GET /v1/observations', () => {
  it('pages newest first by event sequence, and filters by kind and agent', async () => {
    const first = conforms('GET', '/v1/observations', await api('GET', `/v1/observations?project=${P}&limit=5`))
    expect(first.observations).toHaveLength(5)
    const seqs = first.observations.map((o: ListedObservation) => o.seq)
    expect([...seqs].sort((a: number, b: number) => b - a)).toEqual(seqs)
    expect(first.observations.every((o: ListedObservation) => o.agent === 'claude-code' && o.project === P)).toBe(true)
    expect(first.nextBefore).toBe(seqs.at(-1))
    const second = (await api('GET', `/v1/observations?project=${P}&limit=5&before=${first.nextBefore}`)).body
    expect(second.observations[0].seq).toBeLessThan(first.nextBefore)
    const ids = new Set([...first.observations, ...second.observations].map((o: ListedObservation) => o.id))
    expect(ids.size).toBe(10)

    const prompts = (await api('GET', `/v1/observations?project=${P}&kind=prompt,error`)).body.observations
    expect(prompts.length).toBeGreaterThan(0)
    expect(prompts.every((o: ListedObservation) => o.kind === 'prompt' || o.kind === 'error')).toBe(true)
    expect((await api('GET', `/v1/observations?project=${P}&agent=codex`)).body).toEqual({ observations: [], nextBefore: null })
  })

  it('names a bad kind, and needs a project', async () => {
    const bad = await api('GET', `/v1/observations?project=${P}&kind=prompt,banana`)
    expect(bad.status).toBe(400)
    expect(bad.body.error.message).toBe(
      'kind must be one or more of prompt, message, reasoning, tool, tool_result, error, summary (got "prompt,banana")',
    )
    const none = await api('GET', '/v1/observations')
    expect(none.status).toBe(400)
    expect(none.body.error.message).toBe('project is required (got nothing)')
  })

  it('refuses a query parameter the route does not take (cursor=garbage no longer answers the first page), naming it and the paging parameter', async () => {
    const cursor = await api('GET', `/v1/observations?project=${P}&cursor=garbage`)
    expect(cursor.status).toBe(400)
    expect(cursor.body.error).toMatchObject({ code: 'INVALID_INPUT', message: 'cursor is not a query parameter of this route' })
    expect(cursor.body.error.hint).toBe(
      "it takes project, session, kind, agent, before, limit; pages are cut by before: pass the previous page's nextBefore",
    )
    const typo = await api('GET', `/v1/memories?project=${P}&limt=5`)
    expect(typo.status).toBe(400)
    expect(typo.body.error.message).toBe('limt is not a query parameter of this route')
    const badBefore = await api('GET', `/v1/observations?project=${P}&before=garbage`)
    expect(badBefore.status).toBe(400)
    expect(badBefore.body.error.message).toMatch(/^before /)
    // A DELETE is scoped by the project it names: an id of another project is refused, naming its project (as MCP memory_forget).
    const [obs] = (await api('GET', `/v1/observations?project=${P}&limit=1`)).body.observations
    const scoped = await api('DELETE', `/v1/observations/${obs.id}?project=elsewhere`)
    expect([scoped.status, scoped.body.error.code]).toEqual([404, 'NOT_FOUND'])
    const unscoped = await api('DELETE', `/v1/observations/${obs.id}`)
    expect([unscoped.status, unscoped.body.error.message]).toEqual([400, 'project is required (got nothing)'])
    const typoDelete = await api('DELETE', `/v1/observations/${obs.id}?project=${P}&force=1`)
    expect([typoDelete.status, typoDelete.body.error.message]).toEqual([400, 'force is not a query parameter of this route'])
    // Nothing the client sent is echoed (a token pasted as a parameter); an empty name is refused too.
    const pasted = await api('GET', `/v1/status?token=s3cr3t-server-token`)
    expect([pasted.status, JSON.stringify(pasted.body).includes('s3cr3t')]).toEqual([400, false])
    expect((await api('GET', '/v1/status?=1')).status).toBe(400)
    // Nor a token pasted as the parameter's name, nor the values of a parameter given twice.
    const named = await api('GET', '/v1/status?ghp_abcdefghijklmnopqrstuvwxyz0123456789')
    expect([named.status, named.body.error.message]).toEqual([
      400,
      'a parameter whose name is not shown is not a query parameter of this route',
    ])
    const twice = await api('GET', `/v1/observations?project=${P}&limit=1&limit=SUPERSECRET2`)
    expect([twice.status, JSON.stringify(twice.body).includes('SUPERSECRET2')]).toEqual([400, false])
    expect((await api('GET', `/v1/observations/${obs.id}`)).status).toBe(200)
    for (const url of ['/v1/health?foo=1', '/v1/status?zz=1', `/v1/sessions/${obs.session}?zz=1`])
      expect((await api('GET', url)).status, url).toBe(400)
  })
})

describe('sessions for replay', () => {
  it('GET /v1/sessions pages with offset; the timeline pages in order with derived memories', async () => {
    // The demo holds two sessions: the recorded one and the start of the next.
    const sessions = conforms('GET', '/v1/sessions', await api('GET', `/v1/sessions?project=${P}`)).sessions
    expect(sessions).toHaveLength(2)
    expect((await api('GET', `/v1/sessions?project=${P}&limit=1&offset=1`)).body.sessions.map((s: Session) => s.id)).toEqual([
      sessions[1].id,
    ])
    expect((await api('GET', `/v1/sessions?project=${P}&offset=2`)).body.sessions).toEqual([])
    const recorded = sessions.find((s: Session) => s.observations > 5)
    const id = recorded.id
    const all = conforms('GET', '/v1/sessions/:id/observations', await api('GET', `/v1/sessions/${id}/observations`))
    expect(all.total).toBe(recorded.observations)
    expect(all.observations).toHaveLength(all.total)
    const times = all.observations.map((o: Step) => o.time)
    expect([...times].sort()).toEqual(times)
    // The session summary written by consolidation names its steps as provenance: each is linked back.
    const summary = (await api('GET', `/v1/memories?project=${P}&tier=episodic`)).body.memories[0]
    expect(summary.kind).toBe('summary')
    const linked = all.observations.filter((o: Step) => o.derivedMemories.includes(summary.id)).map((o: Step) => o.id)
    expect(linked.length).toBeGreaterThan(0)
    expect(linked.sort()).toEqual([...summary.sources].sort())

    expect(all.position).toBeNull()
    const page = (await api('GET', `/v1/sessions/${id}/observations?offset=3&limit=2`)).body
    expect(page.offset).toBe(3)
    expect(page.observations.map((o: Step) => o.id)).toEqual(all.observations.slice(3, 5).map((o: Step) => o.id))
    // ?at= says where an observation sits, to open the page holding it.
    const seventh = all.observations[7].id
    expect((await api('GET', `/v1/sessions/${id}/observations?limit=1&at=${seventh}`)).body.position).toBe(7)
    const wrongKind = await api('GET', `/v1/sessions/${id}/observations?at=${id}`)
    expect([wrongKind.status, wrongKind.body.error.message]).toEqual([400, `at must be an observation id (obs_…) (got "${id}")`])
    const other = sessions.find((s: Session) => s.id !== id).id
    const elsewhere = await api('GET', `/v1/sessions/${other}/observations?at=${seventh}`)
    expect(elsewhere.status).toBe(404)
    expect(elsewhere.body.error.message).toBe(`no observation ${seventh} in session ${other}`)
    expect((await api('GET', `/v1/sessions/${otherId(id)}/observations`)).status).toBe(404)
    expect((await api('GET', '/v1/sessions/mem_x/observations')).status).toBe(400)
  })
})

describe('memories: browse, history, edit', () => {
  it('lists by tier and state, edits into a new version, and shows the chain', async () => {
    const made = (await api('POST', '/v1/memories', { text: 'staging runs on Fly.io', kind: 'fact', project: P })).body.memory
    const semantic = conforms('GET', '/v1/memories', await api('GET', `/v1/memories?project=${P}&tier=semantic`))
    expect(semantic.memories.map((m: Memory) => m.id)).toContain(made.id)
    expect(semantic.memories.every((m: Memory) => m.kind !== 'summary')).toBe(true)
    expect(semantic.total).toBe(semantic.memories.length)

    const edited = conforms(
      'PATCH',
      '/v1/memories/:id',
      await api('PATCH', `/v1/memories/${made.id}`, { text: 'staging runs on Render' }),
    ).memory
    expect(edited.id).not.toBe(made.id)
    expect(edited).toMatchObject({ text: 'staging runs on Render', kind: 'fact', supersedes: made.id, validTo: null })
    const history = conforms('GET', '/v1/memories/:id/history', await api('GET', `/v1/memories/${made.id}/history`))
    expect(history.chain.map((m: Memory) => m.id)).toEqual([made.id, edited.id])
    expect(history.chain[0].validTo).not.toBeNull()
    expect(history.chain[0].supersededBy).toBe(edited.id)
    expect(history.sources).toEqual([])

    // The procedural tier is listed like the others (none distilled from one session).
    expect((await api('GET', `/v1/memories?project=${P}&tier=procedural`)).body).toEqual({ memories: [], total: 0 })
    expect((await api('GET', `/v1/memories?project=${P}&kind=procedure,summary&tier=procedural`)).body).toEqual({ memories: [], total: 0 })
    const superseded = (await api('GET', `/v1/memories?project=${P}&state=superseded`)).body.memories.map((m: Memory) => m.id)
    expect(superseded).toEqual([made.id])
    const current = (await api('GET', `/v1/memories?project=${P}&kind=fact`)).body.memories.map((m: Memory) => m.id)
    expect(current).toContain(edited.id)
    expect(current).not.toContain(made.id)
    // The edit is audited like the CLI's changes.
    expect((await server.engine.auditLog(5)).find((a) => a.action === 'edit')).toMatchObject({ actor: 'http', target: made.id, count: 1 })
  })

  it('an edit keeps the pin, and the history shows the provenance of every version', async () => {
    const summary = (await api('GET', `/v1/memories?project=${P}&kind=summary`)).body.memories[0]
    const lesson = (
      await server.engine.remember('orders routes need the auth middleware first', {
        kind: 'lesson',
        project: { root: '/home/demo/acme-api', name: P },
      })
    ).memory
    expect((await api('PATCH', `/v1/memories/${lesson.id}`, { pinned: true })).body.memory.pinned).toBe(true)
    const edited = (await api('PATCH', `/v1/memories/${lesson.id}`, { text: 'orders routes need the JWT middleware first' })).body.memory
    expect(edited).toMatchObject({ pinned: true, supersedes: lesson.id })
    // A summary's history lists the observations it came from.
    const history = (await api('GET', `/v1/memories/${summary.id}/history`)).body
    expect(history.sources.map((o: Observation) => o.id).sort()).toEqual([...summary.sources].sort())
  })

  it('pins, archives and restores; an archived memory leaves the current list', async () => {
    const m = (await api('POST', '/v1/memories', { text: 'we deploy on Tuesdays only', kind: 'decision', project: P })).body.memory
    expect((await api('PATCH', `/v1/memories/${m.id}`, { pinned: true })).body.memory.pinned).toBe(true)
    expect((await api('GET', `/v1/memories?project=${P}`)).body.memories[0].id).toBe(m.id)
    expect((await api('PATCH', `/v1/memories/${m.id}`, { pinned: false })).body.memory.pinned).toBe(false)
    expect((await api('PATCH', `/v1/memories/${m.id}`, { archived: true })).body.memory.archivedAt).not.toBeNull()
    expect((await api('GET', `/v1/memories?project=${P}`)).body.memories.map((x: Memory) => x.id)).not.toContain(m.id)
    expect((await api('GET', `/v1/memories?project=${P}&state=archived`)).body.memories.map((x: Memory) => x.id)).toEqual([m.id])
    expect((await api('PATCH', `/v1/memories/${m.id}`, { archived: false })).body.memory.archivedAt).toBeNull()
  })

  it('answers 409 for archiving a pinned memory and for changing an older version, naming the current one', async () => {
    const m = (await api('POST', '/v1/memories', { text: 'the staging DB is restored nightly', kind: 'fact', project: P })).body.memory
    await api('PATCH', `/v1/memories/${m.id}`, { pinned: true })
    const pinned = await api('PATCH', `/v1/memories/${m.id}`, { archived: true })
    expect([pinned.status, pinned.body.error.code, pinned.body.error.message]).toEqual([
      409,
      'CONFLICT',
      `memory ${m.id} is pinned: pinned memories are never archived; unpin it first`,
    ])
    const newer = (await api('PATCH', `/v1/memories/${m.id}`, { text: 'the staging DB is restored every hour' })).body.memory
    // A second tab still showing the old version:
    for (const body of [{ text: 'the staging DB is restored weekly' }, { archived: true }, { pinned: false }]) {
      const stale = await api('PATCH', `/v1/memories/${m.id}`, body)
      expect([stale.status, stale.body.error.message]).toEqual([
        409,
        `memory ${m.id} was superseded by ${newer.id}: change the current version`,
      ])
    }
    expect((await api('GET', `/v1/memories/${newer.id}`)).body).toMatchObject({
      text: 'the staging DB is restored every hour',
      pinned: true,
      archivedAt: null,
      validTo: null,
    })
  })

  it('refuses a patch with no change or two, a summary edit, and unknown ids — nothing changes', async () => {
    const m = (await api('POST', '/v1/memories', { text: 'the CI cache key includes the lockfile hash', kind: 'lesson', project: P })).body
      .memory
    for (const body of [{}, { pinned: true, text: 'x' }]) {
      const r = await api('PATCH', `/v1/memories/${m.id}`, body)
      expect(r.status).toBe(400)
      expect(r.body.error.message).toMatch(/^give exactly one of pinned, archived, text/)
    }
    expect((await api('PATCH', `/v1/memories/${m.id}`, { text: '   ' })).status).toBe(400)
    const summary = (await api('GET', `/v1/memories?project=${P}&kind=summary`)).body.memories[0]
    const r = await api('PATCH', `/v1/memories/${summary.id}`, { text: 'rewritten' })
    expect(r.status).toBe(400)
    expect(r.body.error.message).toContain('session summary')
    expect((await api('PATCH', `/v1/memories/${otherId(m.id)}`, { pinned: true })).status).toBe(404)
    expect((await api('GET', `/v1/memories/${m.id}`)).body).toMatchObject({ text: m.text, pinned: false, validTo: null })
  })
})

describe('deeply nested bodies', () => {
  it('are 400 on a JSON route (not a stack overflow), stored capped on /v1/events as the hook stores them, and nothing else changes', async () => {
    const deep = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`
    const before = (await api('GET', '/v1/status')).body.counts.events
    for (const [method, route, body] of [
      ['POST', '/v1/recall', `{"query": ${deep(100_000)}, "project": "${P}"}`],
      ['POST', '/v1/memories', `{"text": ${deep(50_000)}, "project": "${P}"}`],
      ['PATCH', `/v1/memories/${(await api('GET', `/v1/memories?project=${P}`)).body.memories[0].id}`, `{"text": ${deep(50_000)}}`],
      ['POST', '/v1/events', deep(100_000)],
    ] as const) {
      const r = await api(method, route, body)
      expect([r.status, r.body.error.code], `${method} ${route}`).toEqual([400, 'INVALID_INPUT'])
    }
    const event = JSON.parse(hookLine('UserPromptSubmit', { prompt: 'deep extra field' })) as { payload: Record<string, unknown> }
    const r = await api(
      'POST',
      '/v1/events',
      `{"event": "UserPromptSubmit", "payload": ${JSON.stringify(event.payload).slice(0, -1)}, "extra": ${deep(100_000)}}}`,
    )
    expect([r.status, r.body]).toEqual([202, { stored: true }])
    expect((await api('GET', '/v1/status')).body.counts.events).toBe(before + 1)
    // MCP over HTTP: a JSON-RPC error or tool error, never a 500.
    const mcp = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_recall", "arguments": {"query": ${deep(100_000)}, "project": "${P}"}}}`,
    })
    expect(mcp.status).toBeLessThan(500)
  })
})

describe('hook event names', () => {
  it('refuses a name that is not an identifier without echoing it, and stores nothing', async () => {
    const before = (await api('GET', '/v1/status')).body.counts.events
    const r = await api('POST', '/v1/events', {
      event: 'Evil<script>alert(1)</script>',
      payload: { session_id: 'x', cwd: '/home/demo/acme-api' },
    })
    expect([r.status, r.body.error.message]).toEqual([
      400,
      'hook event name must be letters, digits, _ or -, starting with a letter, at most 64 characters (got a 29-character name containing "<")',
    ])
    for (const event of ['Evil<script>ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5', 'ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5']) {
      const secret = await api('POST', '/v1/events', { event, payload: { session_id: 'x', cwd: '/home/demo/acme-api' } })
      expect([secret.status, secret.body.error.message]).toEqual([400, 'hook event name looks like a secret (a token or key): not stored'])
    }
    expect((await api('GET', '/v1/status')).body.counts.events).toBe(before)
  })
})

describe('GET /v1/graph', () => {
  it('centres on an entity with its co-mentioned neighbours, edges and mentions; without one, the top entities', async () => {
    const top = conforms('GET', '/v1/graph', await api('GET', `/v1/graph?project=${P}&limit=10`))
    expect(top.center).toBeNull()
    expect(top.nodes.length).toBeGreaterThan(1)
    expect(top.nodes.every((n: Graph['nodes'][number]) => n.docs > 0)).toBe(true)
    expect(top.edges.length).toBeGreaterThan(0)
    const name = top.nodes[0].name as string
    const g = conforms('GET', '/v1/graph', await api('GET', `/v1/graph?project=${P}&entity=${encodeURIComponent(name.toUpperCase())}`))
    expect(g.center).toMatchObject({ name, docs: top.nodes[0].docs })
    expect(g.nodes[0]).toEqual(g.center)
    expect(g.mentions).toHaveLength(Math.min(50, g.center.docs))
    const ids = new Set(g.nodes.map((n: Graph['nodes'][number]) => n.id))
    expect(g.edges.every((e: Graph['edges'][number]) => ids.has(e.source) && ids.has(e.target) && e.weight > 0)).toBe(true)
    expect(g.edges.some((e: Graph['edges'][number]) => e.source === g.center.id || e.target === g.center.id)).toBe(g.nodes.length > 1)
    expect((await api('GET', `/v1/graph?project=${P}&entity=no-such-thing-anywhere`)).body).toEqual({
      center: null,
      nodes: [],
      edges: [],
      mentions: [],
    })
  })
})

describe('POST /v1/recall with explain', () => {
  it('says which channels found each hit', async () => {
    const r = conforms('POST', '/v1/recall', await api('POST', '/v1/recall', { query: 'jose middleware', project: P, explain: true }))
    expect(r.hits.length).toBeGreaterThan(0)
    expect(Object.keys(r.hits[0].channels).length).toBeGreaterThan(0)
    expect(typeof r.hits[0].viaNeighbor).toBe('boolean')
    expect((await api('POST', '/v1/recall', { query: 'jose middleware', project: P })).body.hits[0].channels).toBeUndefined()
    // Channels that cannot answer say why instead of returning nothing silently.
    const off = (await api('POST', '/v1/recall', { query: 'jose middleware', project: P, channels: ['vector', 'embedding'] })).body
    expect(off).toMatchObject({
      hits: [],
      warnings: [
        'channel vector is off (weight 0; set it in MNEMO_RECALL_WEIGHTS)',
        'channel embedding has no embedder (set MNEMO_EMBEDDER)',
      ],
    })
  })
})

describe('GET /v1/status jobs', () => {
  it('reports the consolidation job', async () => {
    const s = conforms('GET', '/v1/status', await api('GET', '/v1/status'))
    expect(s.jobs).toEqual([
      {
        name: 'consolidate',
        everyMinutes: 15,
        running: false,
        lastRunAt: null,
        nextRunAt: expect.any(String),
        lastResult: null,
        lastError: null,
      },
    ])
  })
})

describe('GET /v1/stream', () => {
  const open = (query: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${server.url}/v1/stream?${query}`, { headers: { authorization: `Bearer ${server.token}`, ...headers } })

  it('sends observations captured after it opened, filtered by kind, and resumes from Last-Event-ID', async () => {
    const res = await open(`project=${P}&kind=prompt`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const reading = readEvents(res, (events) => events.some((e) => e.event === 'observation'))
    await api(
      'POST',
      '/v1/events',
      hookLine('PreToolUse', { tool_name: 'Read', tool_input: { file_path: '/home/demo/acme-api/a.ts' }, tool_use_id: 't-live' }),
    )
    await api('POST', '/v1/events', hookLine('UserPromptSubmit', { prompt: 'live prompt about rate limits' }))
    const events = await reading
    expect(events[0]?.event).toBe('ready')
    const observation = events.find((e) => e.event === 'observation')
    if (!observation) throw new Error('no observation event')
    expect(observation.data).toMatchObject({ kind: 'prompt', agent: 'claude-code', project: P, text: 'live prompt about rate limits' })
    expect(observation.id).toBe(String(observation.data.seq))

    // A reconnect from before that event gets it again (and nothing of another kind).
    const again = await readEvents(await open(`project=${P}&kind=prompt`, { 'last-event-id': String(Number(observation.id) - 2) }), (e) =>
      e.some((x) => x.event === 'observation'),
    )
    expect(again.filter((e) => e.event === 'observation').map((e) => e.data.id)).toEqual([observation.data.id])
  })

  it('ends open streams when the server shuts down, so close() does not wait out the grace period', async () => {
    const s = await startServer({
      home: path.join(tmp, 'home-close'),
      host: '127.0.0.1',
      port: 0,
      env: {},
      streamPollMs: 20,
      shutdownGraceMs: 600_000,
    })
    await fetch(`${s.url}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: hookLine('UserPromptSubmit', { prompt: 'hello' }),
    })
    const res = await fetch(`${s.url}/v1/stream?project=${P}`, { headers: { authorization: `Bearer ${s.token}` } })
    const reader = res.body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('event: ready')
    // With a 10-minute grace, only the streams ending on their own lets this finish inside the test timeout.
    await s.close()
    for (;;) if ((await reader.read()).done) break
  })

  it('starts a Last-Event-ID ahead of the log at the head, and still delivers what comes next', async () => {
    const res = await open(`project=${P}&kind=prompt`, { 'last-event-id': '999999999' })
    const reading = readEvents(res, (events) => events.some((e) => e.event === 'observation'))
    await api('POST', '/v1/events', hookLine('UserPromptSubmit', { prompt: 'after a reconnect from the future' }))
    const events = await reading
    expect(events[0]?.data.seq).toBeLessThan(999999999)
    expect(events.find((e) => e.event === 'observation')?.data.text).toBe('after a reconnect from the future')
  })

  it('refuses a missing project and a bad Last-Event-ID, and needs the token', async () => {
    expect((await open('')).status).toBe(400)
    const bad = await open(`project=${P}`, { 'last-event-id': 'yesterday' })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('Last-Event-ID')
    expect((await fetch(`${server.url}/v1/stream?project=${P}`)).status).toBe(401)
  })
})

describe('the viewer page', () => {
  it('is served without a token under a strict CSP; the API behind it still needs the token', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mnemo-viewer-dist-'))
    mkdirSync(dir, { recursive: true })
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>mnemo</title>')
    writeFileSync(path.join(dir, 'app.js'), 'export {}')
    const s = await startServer({ home: path.join(tmp, 'home2'), host: '127.0.0.1', port: 0, env: {}, viewerDir: dir })
    try {
      const page = await fetch(`${s.url}/`)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toContain('text/html')
      expect(page.headers.get('content-security-policy')).toBe(VIEWER_CSP)
      expect(page.headers.get('x-content-type-options')).toBe('nosniff')
      expect(await page.text()).toContain('<title>mnemo</title>')
      const js = await fetch(`${s.url}/viewer/app.js`)
      expect(js.headers.get('content-type')).toContain('javascript')
      expect(js.headers.get('content-security-policy')).toBe(VIEWER_CSP)
      expect((await fetch(`${s.url}/viewer/missing.js`)).status).toBe(404)
      const icon = await fetch(`${s.url}/favicon.ico`, { redirect: 'manual' })
      expect([icon.status, icon.headers.get('location')]).toEqual([301, '/viewer/favicon.svg'])
      // Nothing outside the viewer folder: not the token file, not by an encoded dot-dot.
      for (const p of ['/viewer/../server-token', '/viewer/%2e%2e/server-token', '/viewer/..%2fserver-token']) {
        const r = await fetch(`${s.url}${p}`)
        expect(r.status, p).not.toBe(200)
        expect(await r.text()).not.toContain(s.token)
      }
      expect((await fetch(`${s.url}/v1/status`)).status).toBe(401)
      expect(s.viewerUrl).toBe(`${s.url}/#token=${s.token}`)
    } finally {
      await s.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('without a build, / says how to build it', async () => {
    const s = await startServer({
      home: path.join(tmp, 'home3'),
      host: '127.0.0.1',
      port: 0,
      env: {},
      viewerDir: path.join(tmp, 'nowhere'),
    })
    try {
      const r = await fetch(`${s.url}/`)
      expect(r.status).toBe(503)
      expect(((await r.json()) as { error: unknown }).error).toMatchObject({
        code: 'VIEWER_NOT_BUILT',
        hint: expect.stringContaining('npm run build'),
      })
    } finally {
      await s.close()
    }
  })
})
