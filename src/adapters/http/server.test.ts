import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_MAX_BODY_BYTES } from './app.js'
import { readServerToken, startServer, type RunningServer } from './server.js'
import { ensureServerToken } from '../../runtime/server-token.js'
import type { ParsedJson } from '../../testing/json.js'

// The server's lifecycle against real sockets on 127.0.0.1: auth, the token
// file, limits, port conflicts, servers side by side, graceful shutdown, and
// `mnemo serve` as a process.
const ROOT = path.resolve(import.meta.dirname, '../../..')
const CLI = path.join(ROOT, 'dist/adapters/cli/main.js')
const DEMO_LINES = readFileSync(path.join(ROOT, 'fixtures/demo/claude-code-session.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())

let tmp: string
const started: RunningServer[] = []

async function start(name: string, options: Parameters<typeof startServer>[0] = {}): Promise<RunningServer> {
  const server = await startServer({ home: path.join(tmp, name), host: '127.0.0.1', port: 0, env: {}, ...options })
  started.push(server)
  return server
}

async function request(
  server: RunningServer,
  method: string,
  route: string,
  init: { token?: string | null; body?: string; headers?: Record<string, string> } = {},
) {
  const token = init.token === undefined ? server.token : init.token
  const res = await fetch(`${server.url}${route}`, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers }
}

beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-serve-'))
})
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()))
})
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

/** One request over a raw socket (fetch does not let a caller set Host), with exactly these headers. */
function rawRequest(
  server: RunningServer,
  method: string,
  route: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: ParsedJson }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path: route, headers, setHost: false }, (res) => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString('utf8')))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text.startsWith('{') ? JSON.parse(text) : text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('Host and Origin checks (DNS rebinding)', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '0' } },
  })
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

  it('refuses REST, the viewer and /mcp with 403 when Host or Origin names another site, even with the token', async () => {
    const server = await start('rebinding')
    const auth = { authorization: `Bearer ${server.token}` }
    const own = `127.0.0.1:${server.port}`
    expect(await rawRequest(server, 'GET', '/v1/status', { ...auth, host: 'evil.example' })).toMatchObject({
      status: 403,
      body: { error: { code: 'FORBIDDEN', message: 'Host "evil.example" is not a name of this server' } },
    })
    expect(await rawRequest(server, 'GET', '/v1/status', { ...auth, host: `evil.example:${server.port}` })).toMatchObject({ status: 403 })
    expect(await rawRequest(server, 'GET', '/', { host: 'evil.example' })).toMatchObject({ status: 403 })
    expect(await rawRequest(server, 'GET', '/v1/health', { host: 'evil.example' })).toMatchObject({ status: 403 })
    const mcp = await rawRequest(server, 'POST', '/mcp', { ...auth, ...mcpHeaders, host: own, origin: 'https://evil.example' }, initialize)
    expect(mcp).toMatchObject({
      status: 403,
      body: { error: { code: 'FORBIDDEN', message: 'Origin "https://evil.example" is not this server\'s' } },
    })
    expect(await rawRequest(server, 'GET', '/v1/status', { ...auth, host: own, origin: 'null' })).toMatchObject({ status: 403 })
  })

  it('answers its own names: 127.0.0.1, localhost and [::1] with any port, a same-origin Origin, and --allowed-hosts names', async () => {
    const server = await start('own-names', { allowedHosts: ['mnemo.internal'] })
    const auth = { authorization: `Bearer ${server.token}` }
    for (const host of [
      `127.0.0.1:${server.port}`,
      `localhost:${server.port}`,
      'LOCALHOST',
      `[::1]:${server.port}`,
      'mnemo.internal:7077',
    ]) {
      expect((await rawRequest(server, 'GET', '/v1/status', { ...auth, host })).status).toBe(200)
    }
    const mcp = await rawRequest(
      server,
      'POST',
      '/mcp',
      { ...auth, ...mcpHeaders, host: `localhost:${server.port}`, origin: `http://localhost:${server.port}` },
      initialize,
    )
    expect(mcp.status).toBe(200)
    expect((await rawRequest(server, 'GET', '/v1/status', { ...auth, host: 'mnemo.internal.evil.example' })).status).toBe(403)
  })
})

describe('auth', () => {
  it('refuses a request without a token and with a wrong one, and accepts the right one', async () => {
    const server = await start('auth')
    const hint = `send Authorization: Bearer <token>: your user token (mnemo user add <name> on the server), or the server token in ${path.join(tmp, 'auth', 'server-token')}`
    const missing = await request(server, 'GET', '/v1/status', { token: null })
    expect(missing.status).toBe(401)
    expect(missing.body).toEqual({ error: { code: 'UNAUTHORIZED', message: 'missing bearer token', hint } })
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="mnemo"')

    const wrong = await request(server, 'GET', '/v1/status', { token: 'f'.repeat(64) })
    expect(wrong).toMatchObject({ status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'wrong bearer token', hint } } })
    expect(await request(server, 'GET', '/v1/status', { token: server.token.slice(0, 63) })).toMatchObject({ status: 401 })
    expect(await request(server, 'GET', '/v1/status', { token: null, headers: { authorization: `Basic ${server.token}` } })).toMatchObject({
      status: 401,
    })

    const ok = await request(server, 'GET', '/v1/status')
    expect(ok.status).toBe(200)
    expect(ok.body.counts).toEqual({ events: 0, projects: 0, sessions: 0, observations: 0, memories: 0 })
    expect(await request(server, 'GET', '/v1/status', { token: null, headers: { authorization: `bearer ${server.token}` } })).toMatchObject(
      { status: 200 },
    )
  })

  it('guards every route but /v1/health, MCP and unknown routes included', async () => {
    const server = await start('guard')
    for (const [method, route] of [
      ['POST', '/v1/recall'],
      ['POST', '/v1/events'],
      ['GET', '/v1/openapi.json'],
      ['GET', '/v1/sessions'],
      ['DELETE', '/v1/memories/mem_0000000000000000000000'],
      ['POST', '/mcp'],
      ['GET', '/nothing'],
    ]) {
      const init = method === 'POST' ? { token: null, body: '{}' } : { token: null }
      expect((await request(server, method!, route!, init)).status, `${method} ${route}`).toBe(401)
    }
  })

  it('answers /v1/health without a token', async () => {
    const server = await start('health')
    expect(await request(server, 'GET', '/v1/health', { token: null })).toMatchObject({
      status: 200,
      body: { ok: true, name: 'mnemo', version: '0.1.0' },
    })
  })

  it('creates the token on first start: 64 hex characters, mode 0600, kept across restarts and readable with readServerToken', async () => {
    const home = path.join(tmp, 'token')
    expect(readServerToken(home)).toBeUndefined()
    const first = await start('token')
    expect(first.token).toMatch(/^[0-9a-f]{64}$/)
    expect(first.tokenPath).toBe(path.join(home, 'server-token'))
    expect(statSync(first.tokenPath).mode & 0o777).toBe(0o600)
    expect(readServerToken(home)).toBe(first.token)
    await first.close()
    const second = await start('token')
    expect(second.token).toBe(first.token)
  })
})

describe('limits and failures', () => {
  it('refuses a body over the limit (1 MiB by default) with 413, declared or chunked, REST or MCP', async () => {
    const server = await start('limits')
    expect(DEFAULT_MAX_BODY_BYTES).toBe(1024 * 1024)
    const expected = {
      status: 413,
      body: {
        error: {
          code: 'PAYLOAD_TOO_LARGE',
          message: 'request body is larger than 1048576 bytes',
          hint: 'send a smaller body: cap large fields, or import big transcripts with POST /v1/import',
        },
      },
    }
    const big = JSON.stringify({ event: 'PostToolUse', payload: { cwd: '/w/p', session_id: 's', pad: 'x'.repeat(DEFAULT_MAX_BODY_BYTES) } })
    expect(await request(server, 'POST', '/v1/events', { body: big })).toMatchObject(expected)
    expect(await request(server, 'POST', '/mcp', { body: big })).toMatchObject(expected)

    // Chunked: no Content-Length, so the limit applies while reading.
    const chunked = await fetch(`${server.url}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}` },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit)
    expect({ status: chunked.status, body: await chunked.json() }).toEqual(expected)

    // Just under the limit is read (and judged on its content).
    const fits = JSON.stringify({ event: 'Stop', payload: { pad: 'x'.repeat(DEFAULT_MAX_BODY_BYTES - 100) } })
    expect((await request(server, 'POST', '/v1/events', { body: fits })).body.error.message).toBe(
      'payload.cwd must be an absolute path (got nothing)',
    )
  })

  it('fails fast on a port already in use, with the documented message', async () => {
    const first = await start('port-a')
    await expect(start('port-b', { port: first.port })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: `port ${first.port} is already in use (--port or MNEMO_PORT to choose another)`,
    })
    // The first server is unaffected.
    expect((await request(first, 'GET', '/v1/health')).status).toBe(200)
  })

  it('refuses a host that is not an address of this machine', async () => {
    await expect(start('bad-host', { host: '192.0.2.1' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: 'cannot listen on host "192.0.2.1" (EADDRNOTAVAIL)',
      details: { path: 'host' },
    })
  })

  it('`mnemo serve` on a port in use exits 1 with the one-line message', async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`)
    const first = await start('port-cli')
    const r = spawnSync(process.execPath, [CLI, 'serve', '--port', String(first.port)], {
      env: { ...process.env, MNEMO_HOME: path.join(tmp, 'port-cli-2') },
      encoding: 'utf8',
      timeout: 15_000,
    })
    expect(r.stderr).toBe(`mnemo: port ${first.port} is already in use (--port or MNEMO_PORT to choose another)\n`)
    expect(r.stdout).toBe('')
    expect(r.status).toBe(1)
  })
})

describe('servers side by side', () => {
  it('two servers with different homes and ports do not see each other’s data or accept each other’s tokens', async () => {
    const a = await start('side-a')
    const b = await start('side-b')
    expect(a.port).not.toBe(b.port)
    expect(a.token).not.toBe(b.token)
    for (const line of DEMO_LINES) expect((await request(a, 'POST', '/v1/events', { body: line })).status).toBe(202)
    await request(b, 'POST', '/v1/memories', { body: JSON.stringify({ text: 'billing runs on the 1st', project: '/srv/billing' }) })

    expect((await request(a, 'GET', '/v1/status')).body.projects).toMatchObject([{ name: 'acme-api', root: '/home/demo/acme-api' }])
    expect((await request(b, 'GET', '/v1/status')).body.projects).toMatchObject([{ name: 'billing', root: '/srv/billing' }])
    expect(
      (await request(a, 'POST', '/v1/recall', { body: JSON.stringify({ query: 'validateToken', project: 'acme-api' }) })).body.hits.length,
    ).toBeGreaterThan(0)
    expect(await request(b, 'POST', '/v1/recall', { body: JSON.stringify({ query: 'validateToken', project: 'acme-api' }) })).toMatchObject(
      {
        status: 404,
        body: { error: { code: 'NOT_FOUND', message: 'no project named or containing "acme-api"', hint: 'known projects: billing' } },
      },
    )
    expect((await request(b, 'GET', '/v1/status', { token: a.token })).status).toBe(401)
  })
})

describe('graceful shutdown', () => {
  it('close() stops accepting, lets an in-flight request finish, then closes the store', async () => {
    let arrived!: () => void
    const inFlight = new Promise<void>((resolve) => (arrived = resolve))
    const server = await startServer({
      home: path.join(tmp, 'graceful'),
      port: 0,
      env: {},
      onRequest: (method, route) => {
        if (method === 'POST' && route === '/v1/memories') arrived()
      },
    })
    const body = JSON.stringify({ text: 'deploys go out on Tuesdays', kind: 'decision', project: '/srv/shop' })
    const req = http.request(`${server.url}/v1/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    })
    const response = new Promise<{ status: number; body: ParsedJson }>((resolve, reject) => {
      req.on('response', (res) => {
        let text = ''
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
      })
      req.on('error', reject)
    })
    req.write(body.slice(0, 10))
    await inFlight

    let closed = false
    const closing = server.close().then(() => (closed = true))
    await new Promise((resolve) => setImmediate(resolve))
    expect(closed).toBe(false)
    // No longer accepting.
    await expect(fetch(`${server.url}/v1/health`)).rejects.toThrow()

    req.end(body.slice(10))
    const res = await response
    expect(res.status).toBe(201)
    expect(res.body.memory).toMatchObject({ kind: 'decision', text: 'deploys go out on Tuesdays' })
    await closing
    expect(closed).toBe(true)
    await expect(server.engine.stats()).rejects.toThrow()
    // close() is idempotent.
    await server.close()
  })

  it('`mnemo serve` stops on SIGTERM and exits 0', async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`)
    const home = path.join(tmp, 'cli-serve')
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--json'], {
      env: { ...process.env, MNEMO_HOME: home, MNEMO_PORT: '' },
    })
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const listening = await new Promise<{ url: string; home: string; tokenPath: string; pid: number }>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8')
        try {
          resolve(JSON.parse(stdout))
        } catch {
          // not the whole document yet
        }
      })
      child.on('exit', () => reject(new Error(`serve exited early: ${stderr}`)))
    })
    const token = readServerToken(home)
    expect(listening).toEqual({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      // stdout is a pipe here: the token is not printed, only where to find it.
      viewerUrl: `${listening.url}/`,
      home,
      database: path.join(home, 'mnemo.db'),
      tokenPath: path.join(home, 'server-token'),
      pid: child.pid,
    })
    const status = await fetch(`${listening.url}/v1/status`, { headers: { authorization: `Bearer ${token}` } })
    expect(status.status).toBe(200)
    // `mnemo viewer` prints the same address, and says when no server answers at the port asked.
    const env = { ...process.env, MNEMO_HOME: home, MNEMO_PORT: '' }
    const port = new URL(listening.url).port
    const viewer = spawnSync(process.execPath, [CLI, 'viewer', '--port', port, '--json'], { env, encoding: 'utf8' })
    expect(JSON.parse(viewer.stdout)).toEqual({ url: `${listening.url}/#token=${token}`, running: true, tokenAccepted: true })
    // Another data directory's token is refused by this server, and `viewer` says so.
    const otherHome = path.join(tmp, 'cli-serve-other')
    mkdirSync(otherHome, { recursive: true })
    ensureServerToken(otherHome)
    const other = spawnSync(process.execPath, [CLI, 'viewer', '--port', port, '--home', otherHome], { env, encoding: 'utf8' })
    expect(other.stdout).toContain(
      `(the server at ${listening.url} refuses this token (HTTP 401): it serves another data directory; pass that one's --home)`,
    )
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(stderr).toBe('mnemo serve: SIGTERM, finishing in-flight requests\nmnemo serve: stopped\n')
    const after = spawnSync(process.execPath, [CLI, 'viewer', '--port', port], { env, encoding: 'utf8' })
    expect(after.status).toBe(0)
    expect(after.stdout).toBe(
      `${listening.url}/#token=${token}\n(no server answers at ${listening.url}: start it with mnemo serve --port ${port})\n`,
    )
  })

  it('`mnemo viewer` before any server ran names the missing token file', () => {
    const home = path.join(tmp, 'never-served')
    const r = spawnSync(process.execPath, [CLI, 'viewer'], { env: { ...process.env, MNEMO_HOME: home, MNEMO_PORT: '' }, encoding: 'utf8' })
    expect(r.status).toBe(1)
    expect(r.stderr).toBe(
      `mnemo: no server token in ${path.join(home, 'server-token')}: the server has not run with this data directory\nhint: start it with mnemo serve (it prints the viewer address)\n`,
    )
  })
})

describe('deferred capture', () => {
  it('stores what this machine’s hooks spooled before each request, so a REST recall finds it', async () => {
    const server = await start('deferred')
    const project = path.join(tmp, 'deferred-project')
    const stdin = JSON.stringify({
      session_id: 'sess-deferred',
      cwd: project,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'make quokkarelease' },
      tool_response: { stdout: 'released' },
      tool_use_id: 'toolu_deferred1',
    })
    // `mnemo hook PostToolUse` as an agent runs it, on the served data directory while the server runs.
    const hook = spawnSync(process.execPath, [CLI, 'hook', 'PostToolUse'], {
      input: stdin,
      env: { ...process.env, MNEMO_HOME: server.home, HOME: tmp },
    })
    expect(hook.status).toBe(0)
    expect(readdirSync(path.join(server.home, 'spool')).filter((f) => f.endsWith('.json'))).toHaveLength(1)
    const found = await request(server, 'POST', '/v1/recall', { body: JSON.stringify({ query: 'quokkarelease', project }) })
    expect(found.status).toBe(200)
    expect(JSON.stringify(found.body.hits)).toContain('quokkarelease')
    expect(readdirSync(path.join(server.home, 'spool')).filter((f) => f.endsWith('.json'))).toHaveLength(0)
  })
})
