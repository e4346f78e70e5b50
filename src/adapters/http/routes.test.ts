import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IMPORT_FORMATS } from '../../engine/import-files.js'
import { REST_ROUTES } from './rest-routes.js'
import { callRest, conforms, type RestReply } from '../../testing/rest-client.js'
import { startServer, type RunningServer } from './server.js'
import type { z } from 'zod'
import type { sessionJson } from '../../engine/views.js'

// REST and MCP over HTTP against a real server on 127.0.0.1, port 0, fed the
// recorded Claude Code session of the demo through POST /v1/events.
const ROOT = path.resolve(import.meta.dirname, '../../..')
const DEMO = path.join(ROOT, 'fixtures/demo/claude-code-session.jsonl')
const OPENAPI_FILE = path.join(ROOT, 'docs/openapi.json')
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let tmp: string
let server: RunningServer
let client: Client

/** A call's status and body only: the assertions below compare whole replies. */
async function api(
  method: string,
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Pick<RestReply, 'status' | 'body'>> {
  const { status, body: json } = await callRest(server, method, route, body, headers)
  return { status, body: json }
}

async function callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

function toolText(result: CallToolResult): string {
  const first = result.content[0]
  if (result.content.length !== 1 || first?.type !== 'text')
    throw new Error(`expected one text content, got ${JSON.stringify(result.content)}`)
  return first.text
}

async function mcpClient(query = ''): Promise<Client> {
  const c = new Client({ name: 'mnemo-http-test', version: '0.0.0' })
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp${query}`), {
      requestInit: { headers: { authorization: `Bearer ${server.token}` } },
    }),
  )
  return c
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-http-'))
  server = await startServer({ home: path.join(tmp, 'home'), host: '127.0.0.1', port: 0, env: {} })
  for (const line of readFileSync(DEMO, 'utf8')
    .split('\n')
    .filter((l) => l.trim())) {
    const reply = await api('POST', '/v1/events', line)
    expect(reply, line.slice(0, 80)).toEqual({ status: 202, body: { stored: true } })
  }
  client = await mcpClient()
})

afterAll(async () => {
  await client?.close()
  await server?.close()
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

describe('a Claude Code hook sequence posted to /v1/events', () => {
  it('is stored once: a second delivery of the same event is accepted and not stored again', async () => {
    const first = readFileSync(DEMO, 'utf8').split('\n')[3]!
    expect(await api('POST', '/v1/events', first)).toEqual({ status: 202, body: { stored: false } })
    const status = conforms('GET', '/v1/status', await api('GET', '/v1/status'))
    expect(status.counts).toEqual({ events: 23, projects: 1, sessions: 2, observations: expect.any(Number), memories: 0 })
    expect(status.projects).toEqual([{ name: 'acme-api', root: '/home/demo/acme-api', lastActivityAt: expect.stringMatching(ISO) }])
  })

  it('is recalled through REST with the same ids in the same order as engine.recall', async () => {
    const projectIds = (await server.engine.resolveProjects('acme-api')).map((p) => p.id)
    for (const query of ['validateToken', 'how do we rate-limit the API?', 'src/middleware/auth.ts']) {
      const direct = (await server.engine.recall(query, { projectIds })).map((h) => h.id)
      expect(direct.length).toBeGreaterThan(0)
      const reply = await api('POST', '/v1/recall', { query, project: 'acme-api' })
      expect(reply.status).toBe(200)
      const doc = conforms('POST', '/v1/recall', reply)
      expect(doc.hits.map((h: { id: string }) => h.id)).toEqual(direct)
      expect(doc.query).toBe(query)
      expect(doc.hits[0]).toMatchObject({ project: 'acme-api', time: expect.stringMatching(ISO) })
    }
  })

  it('is recalled through MCP over HTTP (SDK client, bearer header) with the same ids in the same order', async () => {
    const projectIds = (await server.engine.resolveProjects('acme-api')).map((p) => p.id)
    for (const query of ['validateToken', 'how do we rate-limit the API?', 'src/middleware/auth.ts']) {
      const direct = (await server.engine.recall(query, { projectIds })).map((h) => h.id)
      const result = await callTool('memory_recall', { query, project: 'acme-api' })
      expect(result.isError ?? false, toolText(result)).toBe(false)
      expect((result.structuredContent as { hits: { id: string }[] }).hits.map((h) => h.id)).toEqual(direct)
    }
  })

  it('takes the MCP project from ?project= when the tool call names none', async () => {
    const scoped = await mcpClient('?project=acme-api')
    try {
      const direct = (
        await server.engine.recall('validateToken', { projectIds: (await server.engine.resolveProjects('acme-api')).map((p) => p.id) })
      ).map((h) => h.id)
      const result = await scoped.callTool({ name: 'memory_recall', arguments: { query: 'validateToken' } })
      expect((result.structuredContent as { hits: { id: string }[] }).hits.map((h) => h.id)).toEqual(direct)
    } finally {
      await scoped.close()
    }
  })

  it('lists the same tools over HTTP as over stdio', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([
      'facts_declare',
      'facts_delete',
      'facts_query',
      'facts_record',
      'facts_schema',
      'facts_state',
      'facts_state_resolve',
      'facts_state_set',
      'facts_update',
      'memory_context',
      'memory_export',
      'memory_forget',
      'memory_recall',
      'memory_remember',
      'memory_sessions',
      'memory_show',
      'memory_status',
      'memory_timeline',
    ])
    const recall = tools.find((t) => t.name === 'memory_recall')!
    expect(recall.inputSchema.required).toEqual(['query'])
    expect(recall.inputSchema.properties?.['limit']).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 })
  })
})

describe('the same bad input gives the same error on REST and MCP', () => {
  const cases: [string, Record<string, unknown>, string, string][] = [
    ['limit 0', { query: 'validateToken', limit: 0 }, 'limit', 'limit must be an integer 1–100 (got 0)'],
    ['limit 101', { query: 'validateToken', limit: 101 }, 'limit', 'limit must be an integer 1–100 (got 101)'],
    ['a blank query', { query: '   ' }, 'query', 'query must not be blank (got "   ")'],
    ['an empty query', { query: '' }, 'query', 'query must not be blank (got "")'],
  ]
  for (const [name, args, key, message] of cases) {
    it(`${name}: REST 400 INVALID_INPUT and an MCP isError result with the same message`, async () => {
      const rest = await api('POST', '/v1/recall', { ...args, project: 'acme-api' })
      expect(rest).toEqual({ status: 400, body: { error: { code: 'INVALID_INPUT', message, hint: null } } })
      const mcp = await callTool('memory_recall', { ...args, project: 'acme-api' })
      expect(mcp.isError).toBe(true)
      expect(toolText(mcp)).toBe(`Invalid arguments: ${message}`)
      expect(message.startsWith(`${key} `)).toBe(true)
    })
  }

  it('a malformed MCP call (wrong type) is still rejected by the SDK before the tool runs', async () => {
    const result = await callTool('memory_recall', { query: 'x', limit: 'ten', project: 'acme-api' })
    expect(result.isError).toBe(true)
    expect(toolText(result)).toContain('Input validation error')
    expect(toolText(result)).toContain('limit')
    expect(await api('POST', '/v1/recall', { query: 'x', limit: 'ten', project: 'acme-api' })).toEqual({
      status: 400,
      body: { error: { code: 'INVALID_INPUT', message: 'limit must be a number (got "ten")', hint: null } },
    })
  })
})

describe('a missing project never means every project', () => {
  const hint = 'known projects: acme-api'
  it('REST recall, sessions and context answer 400 naming project', async () => {
    expect(await api('POST', '/v1/recall', { query: 'validateToken' })).toEqual({
      status: 400,
      body: {
        error: {
          code: 'INVALID_INPUT',
          message: 'project is required (got nothing)',
          hint: `pass "project" in the JSON body: a project name or an absolute path inside it; ${hint}`,
        },
      },
    })
    for (const route of ['/v1/sessions', '/v1/context', '/v1/sessions?limit=5']) {
      expect(await api('GET', route)).toEqual({
        status: 400,
        body: {
          error: {
            code: 'INVALID_INPUT',
            message: 'project is required (got nothing)',
            hint: `add ?project=<name> to the URL: a project name or an absolute path inside it; ${hint}`,
          },
        },
      })
    }
    expect((await api('POST', '/v1/memories', { text: 'a fact with no home' })).body.error.message).toBe(
      'project is required (got nothing)',
    )
  })

  it('a relative path is refused (the server has no working directory)', async () => {
    expect(await api('GET', '/v1/sessions?project=./acme-api')).toEqual({
      status: 400,
      body: {
        error: {
          code: 'INVALID_INPUT',
          message: 'project must be a project name or an absolute path (got "./acme-api")',
          hint: `the server has no working directory; ${hint}`,
        },
      },
    })
  })

  it('MCP tools answer isError without a project argument or ?project=', async () => {
    for (const [tool, args] of [
      ['memory_recall', { query: 'validateToken' }],
      ['memory_sessions', {}],
      ['memory_context', {}],
      ['memory_remember', { text: 'a fact with no home' }],
    ] as const) {
      const result = await callTool(tool, args)
      expect(result.isError, tool).toBe(true)
      expect(toolText(result)).toBe(
        `Invalid arguments: project is required (got nothing) (hint: pass a \`project\` argument or add ?project=<name> to the server URL: a project name or an absolute path inside it; ${hint})`,
      )
    }
    // Tools that need no project still work.
    expect((await callTool('memory_status', {})).structuredContent).toMatchObject({ projects: 1, events: 23 })
  })

  it('a relative ?project= on the MCP URL is refused before MCP runs', async () => {
    const res = await fetch(`${server.url}/mcp?project=../x`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 400,
      body: {
        error: {
          code: 'INVALID_INPUT',
          message: 'project must be a project name or an absolute path (got "../x")',
          hint: `the server has no working directory; ${hint}`,
        },
      },
    })
  })

  it('an unknown project is 404 with the known ones in the hint', async () => {
    expect(await api('POST', '/v1/recall', { query: 'x', project: 'nope' })).toEqual({
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: 'no project named or containing "nope"', hint: 'known projects: acme-api' } },
    })
  })

  it('routes marked projectRequired are exactly the scoped ones', () => {
    expect(REST_ROUTES.filter((r) => r.projectRequired).map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /v1/recall',
      'POST /v1/memories',
      'DELETE /v1/memories/:id',
      'DELETE /v1/observations/:id',
      'GET /v1/sessions',
      'GET /v1/context',
      'GET /v1/observations',
      'GET /v1/memories',
      'GET /v1/graph',
      'GET /v1/facts/schema',
      'POST /v1/facts/query',
      'POST /v1/facts/records',
      'GET /v1/facts/collections/:name/records',
      'GET /v1/facts/records/:id',
      'PATCH /v1/facts/records/:id',
      'DELETE /v1/facts/records/:id',
      'POST /v1/facts/collections',
      'GET /v1/facts/state/:key',
      'POST /v1/facts/state/:key',
      'POST /v1/facts/state/:key/resolve',
    ])
  })
})

describe('REST routes', () => {
  it('remembers a user-wide memory with no project, and a project’s recall finds it labelled as the user’s', async () => {
    const created = await api('POST', '/v1/memories', {
      text: 'I prefer squash merges for zanzibarquokka branches',
      kind: 'preference',
      scope: 'user',
    })
    expect(created.status).toBe(201)
    expect(conforms('POST', '/v1/memories', created).memory.project).toMatch(/^~/)
    const found = conforms(
      'POST',
      '/v1/recall',
      await api('POST', '/v1/recall', { query: 'zanzibarquokka squash merges', project: 'acme-api' }),
    )
    expect(found.hits.find((h: { id: string }) => h.id === created.body.memory.id)?.project).toBe(created.body.memory.project)
  })

  it('remember, get, recall, forget a memory', async () => {
    const created = await api('POST', '/v1/memories', { text: 'orders DB is PostgreSQL 14', kind: 'fact', project: 'acme-api' })
    expect(created.status).toBe(201)
    const doc = conforms('POST', '/v1/memories', created)
    expect(doc).toEqual({
      created: true,
      memory: {
        id: expect.stringMatching(/^mem_/),
        kind: 'fact',
        project: 'acme-api',
        projectId: expect.stringMatching(/^prj_/),
        createdAt: expect.stringMatching(ISO),
        seenCount: 1,
        flags: [],
        text: 'orders DB is PostgreSQL 14',
        validFrom: expect.stringMatching(ISO),
        validTo: null,
        supersedes: null,
        supersededBy: null,
        review: null,
        pinned: false,
        archivedAt: null,
        sources: [],
        confidence: null,
      },
    })
    const id = doc.memory.id as string
    const again = await api('POST', '/v1/memories', { text: 'orders DB is PostgreSQL 14', kind: 'fact', project: 'acme-api' })
    expect(again.status).toBe(200)
    expect(conforms('POST', '/v1/memories', again)).toMatchObject({ created: false, memory: { id } })

    expect(conforms('GET', '/v1/memories/:id', await api('GET', `/v1/memories/${id}`))).toMatchObject({
      id,
      text: 'orders DB is PostgreSQL 14',
    })
    const hits = (await api('POST', '/v1/recall', { query: 'PostgreSQL', project: 'acme-api' })).body.hits as { id: string }[]
    expect(hits.map((h) => h.id)).toEqual([id])

    // A delete names the project it acts in: another project's id is refused, naming its project, as MCP memory_forget does (issue 17 item 16).
    expect((await api('DELETE', `/v1/memories/${id}`)).body.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'project is required (got nothing)',
    })
    await api('POST', '/v1/memories', { text: 'another project for the delete rule', project: '/srv/elsewhere' })
    expect(await api('DELETE', `/v1/memories/${id}?project=elsewhere`)).toEqual({
      status: 404,
      body: {
        error: {
          code: 'NOT_FOUND',
          message: `no memory ${id} in project "elsewhere"`,
          hint: 'it belongs to project "acme-api": add ?project=acme-api to reach it',
        },
      },
    })
    const refused = await callTool('memory_forget', { id, project: 'elsewhere' })
    expect([refused.isError, toolText(refused)]).toEqual([
      true,
      `Not found: no memory ${id} in this project (hint: it belongs to project "acme-api": pass project: "acme-api" to reach it)`,
    ])
    const forgotten = await api('DELETE', `/v1/memories/${id}?project=acme-api`)
    expect(conforms('DELETE', '/v1/memories/:id', forgotten)).toEqual({ forgotten: { id, type: 'memory', events: 2, alsoRecorded: [] } })
    expect((await api('POST', '/v1/recall', { query: 'PostgreSQL', project: 'acme-api' })).body.hits).toEqual([])
    expect(await api('GET', `/v1/memories/${id}`)).toEqual({
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: `no memory with id ${id}`, hint: null } },
    })
    expect((await api('DELETE', `/v1/memories/${id}?project=acme-api`)).status).toBe(404)
  })

  it('a project named on a write is exactly that project, created if new: a path below a known root, or a new name (issue 17 item 11)', async () => {
    const root = ((await api('GET', '/v1/status')).body.projects as { name: string; root: string }[]).find(
      (p) => p.name === 'acme-api',
    )!.root
    const nested = path.join(root, 'tools', 'new-folder')
    const below = await api('POST', '/v1/memories', { text: 'the zanzibar folder keeps its own notes', project: nested })
    expect(below.status).toBe(201)
    expect(below.body.memory.project).toBe('new-folder')
    expect((await api('POST', '/v1/recall', { query: 'zanzibar', project: nested })).body.hits.map((h: { id: string }) => h.id)).toEqual([
      below.body.memory.id,
    ])
    expect((await api('POST', '/v1/recall', { query: 'zanzibar', project: 'acme-api' })).body.hits).toEqual([])
    const named = await api('POST', '/v1/memories', { text: 'the shop deploys on Fridays', project: 'shop' })
    expect([named.status, named.body.memory.project]).toEqual([201, 'shop'])
    // A read of an unknown name stays NOT_FOUND.
    expect((await api('GET', '/v1/context?project=no-such-shop')).status).toBe(404)
    // Status lists the project with the latest activity first (the viewer opens on it), and the channels recall uses (issue 17 item 19).
    const status = (await api('GET', '/v1/status')).body
    expect(status.projects[0]).toMatchObject({ name: 'shop', lastActivityAt: expect.stringMatching(ISO) })
    expect(status.channels).toContainEqual({ name: 'vector', weight: 0, on: false })
    expect(status.channels).toContainEqual({ name: 'bm25', weight: 1, on: true })
  })

  it('DELETE of the newest version names the version current again; ?chain=true deletes every version', async () => {
    const v18 = (await api('POST', '/v1/memories', { text: 'Node version is 18', kind: 'fact', project: 'acme-api' })).body.memory
      .id as string
    const v20 = (await api('POST', '/v1/memories', { text: 'Node version is 20', kind: 'fact', project: 'acme-api' })).body.memory
      .id as string
    expect(conforms('DELETE', '/v1/memories/:id', await api('DELETE', `/v1/memories/${v20}?project=acme-api`))).toMatchObject({
      forgotten: { id: v20, restored: { id: v18, text: 'Node version is 18' } },
    })
    const v22 = (await api('POST', '/v1/memories', { text: 'Node version is 22', kind: 'fact', project: 'acme-api' })).body.memory
      .id as string
    expect((await api('DELETE', `/v1/memories/${v22}?project=acme-api&chain=true`)).body).toMatchObject({
      forgotten: { id: v22, versions: [v18, v22] },
    })
    expect((await api('GET', `/v1/memories/${v18}`)).status).toBe(404)
  })

  it('an id of the wrong kind for the route is 400', async () => {
    expect(await api('GET', '/v1/memories/obs_0000000000000000000000')).toEqual({
      status: 400,
      body: { error: { code: 'INVALID_INPUT', message: 'id must be a memory id (mem_…) (got "obs_0000000000000000000000")', hint: null } },
    })
    expect((await api('DELETE', '/v1/observations/not-an-id')).body.error.message).toBe(
      'id must be an observation id (obs_…) (got "not-an-id")',
    )
  })

  it('sessions, a session with its timeline, an observation, and forgetting it', async () => {
    const list = conforms('GET', '/v1/sessions', await api('GET', '/v1/sessions?project=acme-api&limit=5'))
    const captured = (list.sessions as z.infer<typeof sessionJson>[]).filter((s) => s.agent === 'claude-code')
    expect(captured.map((s) => s.sessionKey)).toEqual(['9b3d5f10-demo-0002', '4f1c2e7a-demo-0001'])
    const first = captured[1]!
    expect(first).toMatchObject({ project: 'acme-api', agent: 'claude-code', endedAt: expect.stringMatching(ISO) })
    expect(conforms('GET', '/v1/sessions', await api('GET', '/v1/sessions?project=/home/demo/acme-api&limit=1')).sessions).toHaveLength(1)

    const detail = conforms('GET', '/v1/sessions/:id', await api('GET', `/v1/sessions/${first.id}`))
    expect(detail.session).toEqual(first)
    expect(detail.observations.length).toBe(first.observations)
    const obs = detail.observations.find((o: { kind: string }) => o.kind === 'error')
    expect(obs).toMatchObject({ id: expect.stringMatching(/^obs_/), sessionId: first.id, project: 'acme-api' })

    expect(conforms('GET', '/v1/observations/:id', await api('GET', `/v1/observations/${obs.id}`))).toEqual(obs)
    expect(conforms('DELETE', '/v1/observations/:id', await api('DELETE', `/v1/observations/${obs.id}?project=acme-api`))).toEqual({
      forgotten: { id: obs.id, type: 'observation', events: 1, alsoRecorded: [] },
    })
    expect((await api('GET', `/v1/observations/${obs.id}`)).status).toBe(404)
    expect(await api('GET', '/v1/sessions?project=acme-api&limit=500')).toEqual({
      status: 400,
      body: { error: { code: 'INVALID_INPUT', message: 'limit must be an integer 1–200 (got 500)', hint: null } },
    })
  })

  it('context: the project block under the budget', async () => {
    const doc = conforms('GET', '/v1/context', await api('GET', '/v1/context?project=acme-api&budget=300'))
    expect(doc.project).toBe('acme-api')
    expect(doc.text.startsWith('<mnemo-context project="acme-api"')).toBe(true)
    expect(doc.tokens).toBeLessThanOrEqual(300)
    expect(doc.budgetTokens).toBe(300)
    expect((await api('GET', '/v1/context?project=acme-api&budget=100')).body.error.message).toBe(
      'budget must be an integer 200–100000 (got 100)',
    )
    // The session asking (a team-mode SessionStart) is left out of the recent sessions.
    const all = conforms('GET', '/v1/context', await api('GET', '/v1/context?project=acme-api'))
    const without = conforms('GET', '/v1/context', await api('GET', '/v1/context?project=acme-api&excludeSession=4f1c2e7a-demo-0001'))
    expect(without.sessionIds.length).toBe(all.sessionIds.length - 1)
  })

  it('import: a transcript file on the server machine, then the same again adds nothing', async () => {
    const file = path.join(ROOT, 'fixtures/transcripts/claude-code/mixed-session.jsonl')
    const first = conforms('POST', '/v1/import', await api('POST', '/v1/import', { path: file }))
    expect(first.imported).toBeGreaterThan(0)
    expect(first.files).toHaveLength(1)
    const again = conforms('POST', '/v1/import', await api('POST', '/v1/import', { path: file, format: 'claude-code' }))
    expect(again).toMatchObject({ imported: 0, duplicates: first.imported })
    expect(await api('POST', '/v1/import', { path: 'fixtures/x.jsonl' })).toEqual({
      status: 400,
      body: {
        error: {
          code: 'INVALID_INPUT',
          message: 'path must be absolute (got "fixtures/x.jsonl")',
          hint: 'the server has no working directory; paths are read on the server machine',
        },
      },
    })
    expect((await api('POST', '/v1/import', { path: file, format: 'word' })).body.error.message).toBe(
      `format must be one of ${IMPORT_FORMATS.join(', ')} (got "word")`,
    )
  })

  it('events: refuses a payload with no absolute cwd, and a payload that is not a hook payload', async () => {
    expect(await api('POST', '/v1/events', { event: 'Stop', payload: { session_id: 's' } })).toEqual({
      status: 400,
      body: {
        error: {
          code: 'INVALID_INPUT',
          message: 'payload.cwd must be an absolute path (got nothing)',
          hint: "the server has no working directory: the hook payload's cwd says which project the event belongs to",
        },
      },
    })
    expect((await api('POST', '/v1/events', { event: 'Stop', payload: { cwd: '/w/p' } })).body.error.message).toBe(
      'hook Stop: session_id is missing',
    )
    expect((await api('POST', '/v1/events', { event: 'Stop', payload: [] })).body.error.message).toBe('payload must be an object (got [])')
    expect((await api('POST', '/v1/events', { payload: {} })).body.error.message).toBe('event is required (got nothing)')
  })

  it('JSON that does not parse, an empty body and a body that is not an object are 400', async () => {
    expect(await api('POST', '/v1/recall', '{"query": ')).toEqual({
      status: 400,
      body: {
        error: {
          code: 'INVALID_INPUT',
          message: expect.stringMatching(/^body is not valid JSON \(.+\)$/),
          hint: 'send Content-Type: application/json with a JSON object',
        },
      },
    })
    expect((await api('POST', '/v1/recall', '')).body.error.message).toBe('body is empty (expected a JSON object)')
    expect((await api('POST', '/v1/recall', '[1]')).body.error.message).toBe('body must be an object (got [1])')
  })

  it('an unknown route is 404 naming it', async () => {
    expect(await api('GET', '/v1/nothing-here')).toEqual({
      status: 404,
      body: {
        error: { code: 'NOT_FOUND', message: 'no route GET /v1/nothing-here', hint: 'the routes are listed by GET /v1/openapi.json' },
      },
    })
  })
})

describe('OpenAPI', () => {
  it('the checked-in docs/openapi.json is exactly what GET /v1/openapi.json serves', async () => {
    const served = await api('GET', '/v1/openapi.json')
    expect(served.status).toBe(200)
    // Regenerate with: UPDATE_OPENAPI=1 npx vitest run src/adapters/http/routes.test.ts
    if (process.env['UPDATE_OPENAPI'] === '1') writeFileSync(OPENAPI_FILE, `${JSON.stringify(served.body, null, 2)}\n`)
    expect(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'))).toEqual(served.body)
  })

  it('documents every route of the table, and /mcp', async () => {
    const doc = (await api('GET', '/v1/openapi.json')).body
    expect(doc.openapi).toBe('3.1.0')
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`),
    )
    expect(ops.sort()).toEqual(
      [...REST_ROUTES.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`), 'GET /v1/stream', 'POST /mcp'].sort(),
    )
    expect(doc.paths['/v1/health'].get.security).toEqual([])
    expect(doc.paths['/v1/recall'].post.requestBody.content['application/json'].schema.required).toEqual(['query', 'project'])
    expect(doc.paths['/v1/sessions'].get.parameters).toEqual([
      {
        name: 'project',
        in: 'query',
        required: true,
        description: expect.any(String),
        schema: { type: 'string', minLength: 1, maxLength: 4096 },
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: 'Most sessions, 1–200. Default 20.',
        schema: { type: 'integer', minimum: 1, maximum: 200 },
      },
      {
        name: 'offset',
        in: 'query',
        required: false,
        description: 'Sessions to skip (pagination). Default 0.',
        schema: { type: 'integer', minimum: 0, maximum: 1000000 },
      },
    ])
  })
})
