import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { T0 } from '../../testing/test-mnemo.js'
import { callRest } from '../../testing/rest-client.js'
import { startServer, type RunningServer } from './server.js'
import { addServerUser, listServerUsers, removeServerUser, serverUsersPath } from '../../runtime/server-users.js'

// A team server with per-user tokens: Alice and Bob capture into the same project with the same
// words and different facts; every surface answers each of them with their own data only.
const CWD = '/nonexistent-mnemo-team/shop'

let tmp: string
let home: string
let server: RunningServer
const tokens: Record<string, string> = {}

const as = (user: string) => ({ url: server.url, token: tokens[user] ?? server.token })
const prompt = (session: string, text: string) => ({
  event: 'UserPromptSubmit',
  payload: { session_id: session, cwd: CWD, hook_event_name: 'UserPromptSubmit', prompt: text },
})

beforeAll(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-users-'))
  home = path.join(tmp, 'home')
  server = await startServer({ home, host: '127.0.0.1', port: 0, env: {} })
  tokens['alice'] = addServerUser(home, 'alice', T0)
  tokens['bob'] = addServerUser(home, 'bob', T0)
  expect(
    (await callRest(as('alice'), 'POST', '/v1/events', prompt('sess-a', 'rotate the Auth0 signing keys for validateToken in Frankfurt')))
      .status,
  ).toBe(202)
  expect(
    (await callRest(as('bob'), 'POST', '/v1/events', prompt('sess-b', 'rotate the Okta signing keys for validateToken in Oregon'))).status,
  ).toBe(202)
})

afterAll(async () => {
  await server?.close()
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

describe('per-user tokens', () => {
  it('the users file keeps digests only, mode 0600', () => {
    expect(listServerUsers(home).map((u) => u.user)).toEqual(['alice', 'bob'])
    const text = JSON.stringify(listServerUsers(home))
    expect(text).not.toContain(tokens['alice'])
    expect(statSync(serverUsersPath(home)).mode & 0o777).toBe(0o600)
  })

  it('REST recall answers each user with their own captures; the server token (no user) sees neither', async () => {
    const alice = await callRest(as('alice'), 'POST', '/v1/recall', { query: 'rotate signing keys validateToken', project: CWD })
    expect(alice.status).toBe(200)
    expect(alice.body.hits.map((h: { snippet: string }) => h.snippet).join(' ')).toMatch(/Auth0/)
    expect(JSON.stringify(alice.body)).not.toMatch(/Okta|Oregon/)
    const bob = await callRest(as('bob'), 'POST', '/v1/recall', { query: 'rotate signing keys validateToken', project: CWD })
    expect(JSON.stringify(bob.body)).toMatch(/Okta/)
    expect(JSON.stringify(bob.body)).not.toMatch(/Auth0|Frankfurt/)
    const operator = await callRest(server, 'POST', '/v1/recall', { query: 'rotate signing keys validateToken', project: CWD })
    expect(operator.body.hits).toEqual([])
  })

  it('a memory stated with a user token is that user’s: the other user gets 404 for its id and never sees it in context', async () => {
    const stated = await callRest(as('alice'), 'POST', '/v1/memories', { text: 'Auth0 tenant is acme-eu', kind: 'fact', project: CWD })
    expect(stated.status).toBe(201)
    const id = stated.body.memory.id as string
    expect((await callRest(as('alice'), 'GET', `/v1/memories/${id}`)).status).toBe(200)
    expect(await callRest(as('bob'), 'GET', `/v1/memories/${id}`)).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } })
    expect((await callRest(as('bob'), 'DELETE', `/v1/memories/${id}?project=${encodeURIComponent(CWD)}`)).status).toBe(404)
    const context = await callRest(as('bob'), 'GET', `/v1/context?project=${encodeURIComponent(CWD)}&agent=claude-code&budget=100000`)
    expect(context.status).toBe(200)
    expect(context.body.text).toMatch(/Okta/)
    expect(context.body.text).not.toMatch(/Auth0|acme-eu/)
    const sessions = await callRest(as('bob'), 'GET', `/v1/sessions?project=${encodeURIComponent(CWD)}`)
    expect(sessions.body.sessions.map((s: { sessionKey: string }) => s.sessionKey)).toEqual(['sess-b'])
  })

  it("the viewer's fact listing shows each user their own records only; another user's collection is 404 to them", async () => {
    const add = (user: string, records: unknown) =>
      callRest(as(user), 'POST', '/v1/facts/records', { project: CWD, collection: 'vendors', records })
    expect((await add('alice', [{ name: 'Auth0', region: 'Frankfurt' }])).status).toBe(201)
    expect(
      (
        await add('bob', [
          { name: 'Okta', region: 'Oregon' },
          { name: 'Twilio', region: 'Ohio' },
        ])
      ).status,
    ).toBe(201)
    const list = (user: string, q = '') =>
      callRest(as(user), 'GET', `/v1/facts/collections/vendors/records?project=${encodeURIComponent(CWD)}${q}`)
    const alice = await list('alice')
    expect(alice.body).toMatchObject({ total: 1, records: [{ values: { name: 'Auth0' }, user: 'alice' }] })
    const bob = await list('bob', '&sort=name')
    expect(bob.body.records.map((r: { values: { name: string } }) => r.values.name)).toEqual(['Okta', 'Twilio'])
    expect(JSON.stringify(bob.body)).not.toMatch(/Auth0|Frankfurt/)
    const aliceId = alice.body.records[0].id
    expect((await callRest(as('bob'), 'GET', `/v1/facts/records/${aliceId}?project=${encodeURIComponent(CWD)}`)).status).toBe(404)
    // The operator (no user) has no such collection; nor does a member who never recorded one.
    expect((await list('operator')).status).toBe(404)
    tokens['dana'] = addServerUser(home, 'dana', T0)
    try {
      const dana = await list('dana')
      expect(dana.status).toBe(404)
      expect(dana.body.error.message).toMatch(/^no collection vendors in this project/)
    } finally {
      removeServerUser(home, 'dana')
    }
  })

  it('status names a member only their own projects and counts, and no server errors; the operator sees the whole store', async () => {
    const secret = '/nonexistent-mnemo-team/acquisition-2027'
    const event = {
      event: 'UserPromptSubmit',
      payload: { session_id: 'sess-secret', cwd: secret, hook_event_name: 'UserPromptSubmit', prompt: 'draft the term sheet' },
    }
    expect((await callRest(as('alice'), 'POST', '/v1/events', event)).status).toBe(202)
    const bob = await callRest(as('bob'), 'GET', '/v1/status')
    expect(bob.status).toBe(200)
    expect(JSON.stringify(bob.body)).not.toMatch(/acquisition/)
    expect(bob.body.projects.map((p: { root: string }) => p.root)).toEqual([CWD])
    expect(bob.body.counts).toMatchObject({ projects: 1, sessions: 1, observations: 1 })
    expect(bob.body.errors).toEqual([])
    const alice = await callRest(as('alice'), 'GET', '/v1/status')
    expect(alice.body.projects.map((p: { root: string }) => p.root).sort()).toEqual([secret, CWD].sort())
    const operator = await callRest(server, 'GET', '/v1/status')
    expect(operator.body.counts.sessions).toBeGreaterThanOrEqual(3)
    expect(operator.body.projects.map((p: { root: string }) => p.root)).toContain(secret)
    // Naming the other user's project answers as for a project that does not exist, hint included.
    const recall = await callRest(as('bob'), 'POST', '/v1/recall', { query: 'term sheet', project: 'acquisition-2027' })
    expect(recall).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } })
    expect(recall.body.error.hint).toBe('known projects: shop')
  })

  it('MCP over HTTP with a user token recalls that user’s data only', async () => {
    const client = new Client({ name: 'users-test', version: '0.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?project=${encodeURIComponent(CWD)}`), {
        requestInit: { headers: { authorization: `Bearer ${tokens['bob']}` } },
      }),
    )
    try {
      const result = await client.callTool({ name: 'memory_recall', arguments: { query: 'rotate signing keys validateToken' } })
      const text = JSON.stringify(result.structuredContent)
      expect(text).toMatch(/Okta/)
      expect(text).not.toMatch(/Auth0/)
    } finally {
      await client.close()
    }
  })

  it('a wrong token is 401; a revoked one is 401 from the next request on; only --replace gives an existing user a new token', async () => {
    expect((await callRest({ url: server.url, token: 'f'.repeat(64) }, 'GET', '/v1/status')).status).toBe(401)
    const carol = addServerUser(home, 'carol', T0)
    expect((await callRest({ url: server.url, token: carol }, 'GET', '/v1/status')).status).toBe(200)
    expect(() => addServerUser(home, 'carol', T0)).toThrow(/user carol already has a token/)
    expect(() => addServerUser(home, 'Carol', T0, { replace: true })).toThrow(/differs from it only in case/)
    const again = addServerUser(home, 'carol', T0, { replace: true })
    expect((await callRest({ url: server.url, token: carol }, 'GET', '/v1/status')).status).toBe(401)
    expect((await callRest({ url: server.url, token: again }, 'GET', '/v1/status')).status).toBe(200)
    expect(removeServerUser(home, 'carol')).toBe(true)
    expect(removeServerUser(home, 'carol')).toBe(false)
    expect((await callRest({ url: server.url, token: again }, 'GET', '/v1/status')).status).toBe(401)
  })

  it('an event time outside 1970–9999 is refused (a backup must stay importable)', async () => {
    const reply = await callRest(as('alice'), 'POST', '/v1/events', { ...prompt('sess-old', 'long ago'), at: '0001-01-01T00:00:00Z' })
    expect(reply).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT' } } })
    expect(reply.body.error.message).toMatch(/1970–9999/)
  })

  it('a bad user name is refused before anything is written; names that are object keys elsewhere are plain names', async () => {
    for (const bad of ['a b', 'b\u043eb', 'u\u0308n', ''])
      expect(() => addServerUser(home, bad, T0), bad).toThrow(/user must be 1–64 ASCII/)
    expect(listServerUsers(home).map((u) => u.user)).toEqual(['alice', 'bob'])
    for (const name of ['constructor', 'valueOf', 'toString']) {
      const token = addServerUser(home, name, T0)
      expect((await callRest({ url: server.url, token }, 'GET', '/v1/status')).status, name).toBe(200)
      expect(removeServerUser(home, name)).toBe(true)
    }
    expect(listServerUsers(home).map((u) => u.user)).toEqual(['alice', 'bob'])
  })

  it('a user token cannot make the server read a path (403); the server token can', async () => {
    expect(await callRest(as('alice'), 'POST', '/v1/import', { path: '/etc/passwd' })).toMatchObject({
      status: 403,
      body: { error: { code: 'FORBIDDEN' } },
    })
    expect((await callRest(server, 'POST', '/v1/import', { path: '/nonexistent-mnemo/x.jsonl' })).status).toBe(404)
  })

  it('an open live stream ends when its token is revoked', async () => {
    const dave = addServerUser(home, 'dave', T0)
    const res = await fetch(`${server.url}/v1/stream?project=${encodeURIComponent(CWD)}`, { headers: { authorization: `Bearer ${dave}` } })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    let text = ''
    const read = async (until: string): Promise<void> => {
      while (!text.includes(until)) {
        const { value, done } = await reader.read()
        if (done) return
        text += new TextDecoder().decode(value)
      }
    }
    await read('event: ready')
    removeServerUser(home, 'dave')
    await read('event: unauthorized')
    expect(text).toContain('event: unauthorized')
    expect((await reader.read()).done).toBe(true)
  })

  it('a damaged users file gives an error naming it, and the server token still works', async () => {
    const file = serverUsersPath(home)
    const kept = readFileSync(file, 'utf8')
    writeFileSync(file, '{"version":1,"users":[{"name":"alice","tokenSha256":"not a digest","createdAt":""}]}')
    try {
      const reply = await callRest(as('alice'), 'GET', '/v1/status')
      expect(reply.status).toBe(500)
      expect(reply.body.error).toMatchObject({ code: 'CONFIG_INVALID' })
      expect(reply.body.error.message).toContain(file)
      expect((await callRest(server, 'GET', '/v1/status')).status).toBe(200)
    } finally {
      writeFileSync(file, kept)
    }
  })
})

describe('a server that isolates agents (MNEMO_AGENT_SCOPE=own)', () => {
  it('refuses /mcp and /v1/context calls that do not say which agent they are for', async () => {
    const own = await startServer({ home: path.join(tmp, 'own'), host: '127.0.0.1', port: 0, env: { MNEMO_AGENT_SCOPE: 'own' } })
    try {
      const mcp = await fetch(`${own.url}/mcp?project=${encodeURIComponent(CWD)}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${own.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
      expect(mcp.status).toBe(400)
      expect(((await mcp.json()) as { error: { message: string } }).error.message).toMatch(/add \?agent=/)
      expect(await callRest(own, 'GET', `/v1/context?project=${encodeURIComponent(CWD)}`)).toMatchObject({
        status: 400,
        body: { error: { code: 'INVALID_INPUT' } },
      })
      expect((await callRest(own, 'GET', `/v1/context?project=${encodeURIComponent(CWD)}&agent=codex`)).status).not.toBe(400)
    } finally {
      await own.close()
    }
  })
})

describe('changes of the users file', () => {
  const built = path.resolve(import.meta.dirname, '../../../dist/runtime/server-users.js')

  it.skipIf(!existsSync(built))(
    'concurrent adds and a remove in separate processes all land: the revocation sticks, every printed token exists',
    async () => {
      const h = path.join(tmp, 'race')
      addServerUser(h, 'victim', T0)
      const run = promisify(execFile)
      const script = (call: string): string[] => ['--input-type=module', '-e', `import * as u from ${JSON.stringify(built)}; ${call}`]
      await Promise.all([
        run(process.execPath, script(`u.removeServerUser(${JSON.stringify(h)}, 'victim')`)),
        ...Array.from({ length: 8 }, (_, i) => run(process.execPath, script(`u.addServerUser(${JSON.stringify(h)}, 'w${i}', 0)`))),
      ])
      expect(listServerUsers(h).map((u) => u.user)).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7'])
      expect(existsSync(`${serverUsersPath(h)}.lock`)).toBe(false)
    },
  )

  it('a lock left by a crashed process is taken over once stale', () => {
    const h = path.join(tmp, 'stale')
    addServerUser(h, 'a', T0)
    const lock = `${serverUsersPath(h)}.lock`
    writeFileSync(lock, '')
    utimesSync(lock, new Date(0), new Date(0))
    addServerUser(h, 'b', T0)
    expect(listServerUsers(h).map((u) => u.user)).toEqual(['a', 'b'])
    expect(existsSync(lock)).toBe(false)
  })

  it('a server-token import restores a mnemo export with the users it names (the operator restoring a store)', async () => {
    const lines = [
      JSON.stringify({
        format: 'mnemo-export',
        version: 1,
        exportedAt: new Date(T0).toISOString(),
        project: null,
        counts: { events: 1, tombstones: 0, audit: 0, sessions: 0, observations: 0, memories: 1 },
      }),
      JSON.stringify({
        kind: 'event',
        seq: 1,
        idemKey: 'restore-1',
        agent: 'mnemo',
        format: 'mnemo',
        type: 'remember',
        sessionKey: `mnemo:${CWD}`,
        project: { root: CWD, name: 'shop' },
        ts: T0,
        user: 'bob',
        receivedAt: T0,
        payload: { op: 'remember', kind: 'fact', text: 'restored ostrich fact of Bob' },
      }),
    ]
    const file = path.join(tmp, 'restore.jsonl')
    writeFileSync(file, lines.join('\n'))
    expect(await callRest(server, 'POST', '/v1/import', { path: file, format: 'mnemo' })).toMatchObject({ status: 200 })
    const bob = await callRest(as('bob'), 'POST', '/v1/recall', { query: 'ostrich', project: CWD })
    expect(bob).toMatchObject({ status: 200 })
    expect(bob.body.hits.map((h: { snippet: string }) => h.snippet)).toEqual(['restored ostrich fact of Bob'])
    expect((await callRest(as('alice'), 'POST', '/v1/recall', { query: 'ostrich', project: CWD })).body.hits).toEqual([])
  })
})
