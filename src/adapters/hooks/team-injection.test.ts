import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { addServerUser } from '../../runtime/server-users.js'
import { callRest } from '../../testing/rest-client.js'
import { hookPayload, T0, tempDir } from '../../testing/test-mnemo.js'
import { startServer, type RunningServer } from '../http/server.js'
import { runHook } from './run-hook.js'

// Team mode (MNEMO_SERVER_URL): per-prompt recall, corrections and file hints come from a real `mnemo serve` started
// in-process on loopback, which keeps per session and per user of the token what it injected.

const PROJECT = { root: '/work/demo-app', name: 'demo-app' }
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

function home(): string {
  const t = tempDir()
  cleanups.push(t.cleanup)
  return t.dir
}

async function serve(): Promise<RunningServer> {
  const server = await startServer({ home: home(), host: '127.0.0.1', port: 0, env: { MNEMO_TZ: 'UTC' }, consolidateEveryMinutes: 0 })
  cleanups.push(() => server.close())
  return server
}

interface HookOut {
  stdout: string
  code: number | undefined
}

/** Runs `mnemo hook <event> --agent <agent>` in-process against the server at `url` with `token`; `client` is its own data directory. */
async function remoteHook(
  client: string,
  url: string,
  token: string,
  event: string,
  stdin: string,
  options: { agent?: string; env?: Record<string, string>; inject?: number; context?: number } = {},
): Promise<HookOut> {
  const input = new PassThrough()
  let stdout = ''
  let code: number | undefined
  const run = runHook(
    event,
    {
      // Room for a loaded test machine: these tests are about what is sent and printed, not how fast.
      remoteBudgetMs: { capture: 1500, context: options.context ?? 1500, inject: options.inject ?? 1500 },
      stdin: input,
      stdout: { write: (t: string) => (stdout += t) },
      env: { MNEMO_HOME: client, HOME: client, MNEMO_SERVER_URL: url, MNEMO_SERVER_TOKEN: token, ...options.env },
      cwd: PROJECT.root,
      exit: (c) => {
        code = c
      },
    },
    options.agent,
  )
  input.end(stdin)
  await run
  return { stdout, code }
}

/** The injected block and the event name it went out under, from a hook's stdout. */
function injected(out: HookOut): { hookEventName: string; additionalContext: string } {
  expect(out.code).toBe(0)
  return (JSON.parse(out.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } }).hookSpecificOutput
}

const ask = (session: string, prompt = 'how do we rate-limit the API?') => hookPayload('UserPromptSubmit', { prompt }, session)
/** The events waiting in the client's spool (none when it never spooled). */
const spooled = (client: string) =>
  existsSync(path.join(client, 'spool')) ? readdirSync(path.join(client, 'spool')).filter((f) => f.endsWith('.json')) : []

describe('mnemo hook in team mode: per-prompt recall, corrections and file hints from the server', () => {
  it('injects what the server recalls, once per session, never what SessionStart already showed, and corrects it once', async () => {
    const server = await serve()
    const client = home()
    const hook = (event: string, stdin: string, agent?: string) =>
      remoteHook(client, server.url, server.token, event, stdin, agent ? { agent } : {})
    const rate = (
      await server.engine.remember('We rate-limit the public API with a token bucket in src/middleware/rate-limit.ts.', {
        project: PROJECT,
        kind: 'decision',
      })
    ).memory

    const first = injected(await hook('UserPromptSubmit', ask('a')))
    expect(first.hookEventName).toBe('UserPromptSubmit')
    expect(first.additionalContext).toMatch(/^<mnemo-recall>\n[\s\S]*token bucket[\s\S]*<\/mnemo-recall>$/)
    // The server keeps what session a was shown: the same question again injects nothing.
    expect(await hook('UserPromptSubmit', ask('a'))).toEqual({ stdout: '', code: 0 })
    // Session b got the memory in its SessionStart block (recorded by the server for b): its prompt does not repeat it.
    const start = injected(await hook('SessionStart', hookPayload('SessionStart', { source: 'startup' }, 'b')))
    expect(start.additionalContext).toContain('token bucket')
    expect(await hook('UserPromptSubmit', ask('b'))).toEqual({ stdout: '', code: 0 })
    // Each agent gets it through its own channel (Gemini CLI: BeforeAgent).
    expect(injected(await hook('UserPromptSubmit', ask('g'), 'gemini'))).toMatchObject({
      hookEventName: 'BeforeAgent',
      additionalContext: expect.stringContaining('token bucket'),
    })

    // Another process (here the server's own engine) supersedes it: sessions a and b each get one correction.
    await server.engine.remember('We rate-limit the public API with a sliding window in Redis now.', {
      project: PROJECT,
      kind: 'decision',
      supersedes: rate.id,
    })
    for (const session of ['a', 'b']) {
      const fix = injected(await hook('UserPromptSubmit', ask(session, 'thanks, go on')))
      expect(fix.additionalContext).toContain(`- Correction: "We rate-limit the public API with a sliding window in Redis now."`)
      expect(fix.additionalContext).toContain(`(${rate.id})`)
      expect(fix.additionalContext).not.toContain('<mnemo-context')
      expect(await hook('UserPromptSubmit', ask(session, 'thanks, go on'))).toEqual({ stdout: '', code: 0 })
    }
    // Every event reached the server; none waits in the client's spool, and the client keeps no store.
    expect(spooled(client)).toEqual([])
    expect(readdirSync(client).filter((f) => f.endsWith('.db'))).toEqual([])
    // Sessions a, b and g, each as the server filed it (a repeated prompt in the same second is one event).
    expect((await server.engine.stats()).sessions).toBe(3)
  })

  it('gives file hints from the server once per file per session (Claude Code before the tool, OpenCode after it)', async () => {
    const server = await serve()
    const client = home()
    await server.engine.remember('src/billing/invoice.ts keeps amounts in integer cents, never floats', {
      project: PROJECT,
      kind: 'decision',
    })
    const read = (session: string, id: string) =>
      hookPayload(
        'PreToolUse',
        { tool_name: 'Read', tool_use_id: id, tool_input: { file_path: `${PROJECT.root}/src/billing/invoice.ts` } },
        session,
      )
    const hint = injected(await remoteHook(client, server.url, server.token, 'PreToolUse', read('s', 'r1')))
    expect(hint).toMatchObject({ hookEventName: 'PreToolUse', additionalContext: expect.stringContaining('integer cents') })
    expect(await remoteHook(client, server.url, server.token, 'PreToolUse', read('s', 'r2'))).toEqual({ stdout: '', code: 0 })
    const ocRead = hookPayload(
      'PostToolUse',
      { tool_name: 'read', tool_use_id: 'c1', tool_input: { filePath: 'src/billing/invoice.ts' }, tool_response: 'x'.repeat(200_000) },
      'oc',
    )
    expect(injected(await remoteHook(client, server.url, server.token, 'PostToolUse', ocRead, { agent: 'opencode' }))).toMatchObject({
      hookEventName: 'PostToolUse',
      additionalContext: expect.stringContaining('integer cents'),
    })
    // MNEMO_PROMPT_RECALL=off on the client: the hook does not ask.
    const off = await remoteHook(client, server.url, server.token, 'PreToolUse', read('off', 'r3'), { env: { MNEMO_PROMPT_RECALL: 'off' } })
    expect(off).toEqual({ stdout: '', code: 0 })
  })

  it("answers each user by their token with their own memories and their own session records, never another user's", async () => {
    const server = await serve()
    const client = home()
    const alice = addServerUser(server.home, 'alice', T0)
    const bob = addServerUser(server.home, 'bob', T0)
    for (const [token, text] of [
      [alice, 'We rate-limit the public API with a token bucket (Alice).'],
      [bob, 'We rate-limit the public API with a leaky bucket (Bob).'],
    ] as const)
      expect(
        (await callRest({ url: server.url, token }, 'POST', '/v1/memories', { text, kind: 'decision', project: PROJECT.root })).status,
      ).toBe(201)
    // The same agent session id for both: what one was shown never counts for the other.
    const a = injected(await remoteHook(client, server.url, alice, 'UserPromptSubmit', ask('shared')))
    expect(a.additionalContext).toContain('token bucket (Alice)')
    expect(a.additionalContext).not.toContain('Bob')
    const b = injected(await remoteHook(client, server.url, bob, 'UserPromptSubmit', ask('shared')))
    expect(b.additionalContext).toContain('leaky bucket (Bob)')
    expect(b.additionalContext).not.toContain('Alice')
    expect(await remoteHook(client, server.url, alice, 'UserPromptSubmit', ask('shared'))).toEqual({ stdout: '', code: 0 })
    // The server token (no user) sees neither user's memory.
    expect(await remoteHook(client, server.url, server.token, 'UserPromptSubmit', ask('shared'))).toEqual({ stdout: '', code: 0 })
  })

  it('refuses an injection request without an absolute cwd, naming the field', async () => {
    const server = await serve()
    const r = await callRest(server, 'POST', '/v1/injections', {
      event: 'UserPromptSubmit',
      payload: { session_id: 's', cwd: 'demo-app', prompt: 'how do we rate-limit?' },
    })
    expect(r).toMatchObject({
      status: 400,
      body: { error: { code: 'INVALID_INPUT', message: 'payload.cwd must be an absolute path (got "demo-app")' } },
    })
    const budget = await callRest(server, 'POST', '/v1/injections', {
      event: 'UserPromptSubmit',
      payload: { session_id: 's', cwd: '/work/demo-app', prompt: 'x' },
      budget: 5,
    })
    expect(budget).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT', message: expect.stringContaining('budget') } } })
  })

  it('records an answer asked with ack only once the client posts its ack; without ack, when it is computed', async () => {
    const server = await serve()
    const memory = (
      await server.engine.remember('We rate-limit the public API with a token bucket in src/middleware/rate-limit.ts.', {
        project: PROJECT,
        kind: 'decision',
      })
    ).memory
    const ask = (session: string, ack?: boolean) =>
      callRest(server, 'POST', '/v1/injections', {
        event: 'UserPromptSubmit',
        payload: { session_id: session, cwd: PROJECT.root, prompt: 'how do we rate-limit the API?' },
        agent: 'codex',
        ...(ack === undefined ? {} : { ack }),
      })
    const first = await ask('s', true)
    expect(first.status).toBe(200)
    const answer = (first.body as { injection: { text: string; ack: unknown } }).injection
    expect(answer.text).toContain('token bucket')
    expect(answer.ack).toEqual({ agent: 'codex', session: 's', shown: [{ itemId: memory.id, what: 'item' }] })
    // Not confirmed: not recorded, so the session is offered it again.
    expect((await ask('s', true)).body).toMatchObject({ injection: { text: expect.stringContaining('token bucket') } })
    expect(await callRest(server, 'POST', '/v1/injections/ack', answer.ack)).toMatchObject({ status: 200, body: { recorded: 1 } })
    expect((await ask('s', true)).body).toEqual({ injection: null })
    // A client that asks without ack gets the answer recorded as it is computed (and no ack to send).
    expect((await ask('old')).body).toEqual({
      injection: { hookEventName: 'UserPromptSubmit', text: expect.stringContaining('token bucket') },
    })
    expect((await ask('old')).body).toEqual({ injection: null })
    const bad = await callRest(server, 'POST', '/v1/injections/ack', {
      agent: 'codex',
      session: 's',
      shown: [{ itemId: memory.id, what: 'shown' }],
    })
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT', message: expect.stringContaining('shown.0.what') } } })
  })
})

/** Starts `server` on a free loopback port, closed (its connections too) when the test ends; its URL. */
async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/**
 * A loopback proxy in front of `target` that forwards every request and its answer, except as `hold` says for the
 * routes it names (`GET /v1/context` names it whatever its query): `never`, the target answers (it has computed the answer) but the answer is never passed on; a
 * status, the proxy answers it without asking the target. Records the routes asked and the held answers.
 */
async function proxy(
  target: string,
  hold: Record<string, 'never' | number>,
): Promise<{ url: string; routes: string[]; held: Promise<string>[] }> {
  const routes: string[] = []
  const held: Promise<string>[] = []
  const server: Server = createServer((req, res) => {
    const route = `${req.method} ${req.url}`
    routes.push(route)
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const rule = hold[route] ?? hold[route.split('?')[0]!]
      if (typeof rule === 'number') {
        res.writeHead(rule, { 'content-type': 'application/json' }).end('{"error":{"code":"STORE_UNAVAILABLE","message":"held"}}')
        return
      }
      const answer = fetch(`${target}${req.url}`, {
        method: req.method ?? 'GET',
        headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      }).then(async (r) => ({ status: r.status, text: await r.text() }))
      if (rule === 'never') held.push(answer.then((a) => a.text))
      else void answer.then((a) => res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.text))
    })
  })
  return { url: await listenOnLoopback(server), routes, held }
}

describe('mnemo hook in team mode: what the server records as injected', () => {
  const rateLimit = 'We rate-limit the public API with a token bucket in src/middleware/rate-limit.ts.'

  it('does not count an answer that came after the hook stopped waiting: the next prompt of the session gets it', async () => {
    const server = await serve()
    await server.engine.remember(rateLimit, { project: PROJECT, kind: 'decision' })
    // The server computes the answer, but it never reaches the hook, which gives up after its budget.
    const late = await proxy(server.url, { 'POST /v1/injections': 'never' })
    const client = home()
    expect(await remoteHook(client, late.url, server.token, 'UserPromptSubmit', ask('s'), { inject: 50 })).toEqual({ stdout: '', code: 0 })
    expect(late.routes).toEqual(['POST /v1/events', 'POST /v1/injections'])
    const [answer] = await Promise.all(late.held)
    expect(answer).toContain('token bucket')
    // Never printed, never acknowledged, never recorded: the session's next prompt is offered it.
    const next = injected(await remoteHook(client, server.url, server.token, 'UserPromptSubmit', ask('s', 'and the rate-limit API?')))
    expect(next.additionalContext).toContain('token bucket')
    // That one was printed and acknowledged: the session does not get it a third time.
    expect(await remoteHook(client, server.url, server.token, 'UserPromptSubmit', ask('s'))).toEqual({ stdout: '', code: 0 })
  })

  it("does not count a SessionStart block that came after the hook stopped waiting: the session's prompt gets its items", async () => {
    const server = await serve()
    await server.engine.remember(rateLimit, { project: PROJECT, kind: 'decision' })
    const late = await proxy(server.url, { 'GET /v1/context': 'never' })
    const client = home()
    const start = hookPayload('SessionStart', { source: 'startup' }, 's')
    expect(await remoteHook(client, late.url, server.token, 'SessionStart', start, { context: 50 })).toEqual({ stdout: '', code: 0 })
    const [answer] = await Promise.all(late.held)
    expect(answer).toContain('token bucket')
    // Never printed, never acknowledged, never recorded: the session's prompt is offered the memory.
    expect(injected(await remoteHook(client, server.url, server.token, 'UserPromptSubmit', ask('s'))).additionalContext).toContain(
      'token bucket',
    )
    // A block that arrives is printed and acknowledged: that session's prompt does not repeat it.
    const shown = injected(
      await remoteHook(client, server.url, server.token, 'SessionStart', hookPayload('SessionStart', { source: 'startup' }, 't')),
    )
    expect(shown.additionalContext).toContain('token bucket')
    expect(await remoteHook(client, server.url, server.token, 'UserPromptSubmit', ask('t'))).toEqual({ stdout: '', code: 0 })
  })

  it('injects, then logs a lost acknowledgement: the block was shown, the server has not recorded it, a later prompt repeats it', async () => {
    const server = await serve()
    await server.engine.remember(rateLimit, { project: PROJECT, kind: 'decision' })
    const noAck = await proxy(server.url, { 'POST /v1/injections/ack': 503 })
    const client = home()
    expect(injected(await remoteHook(client, noAck.url, server.token, 'UserPromptSubmit', ask('s'))).additionalContext).toContain(
      'token bucket',
    )
    expect(noAck.routes).toEqual(['POST /v1/events', 'POST /v1/injections', 'POST /v1/injections/ack'])
    const log = readFileSync(path.join(client, 'logs', 'errors.jsonl'), 'utf8')
    expect(log).toContain('the block was injected, but it is not recorded as shown')
    expect(injected(await remoteHook(client, server.url, server.token, 'UserPromptSubmit', ask('s'))).additionalContext).toContain(
      'token bucket',
    )
  })
})

describe('mnemo hook in team mode when the server is slow or down', () => {
  /**
   * A loopback server that takes events (202) and never answers an injection request, or answers it at once with
   * `status`; records the routes asked.
   */
  async function slowInjections(status?: number): Promise<{ url: string; routes: string[] }> {
    const routes: string[] = []
    const pending = new Set<IncomingMessage>()
    const server: Server = createServer((req, res) => {
      routes.push(`${req.method} ${req.url}`)
      req.resume()
      if (req.url === '/v1/events') req.on('end', () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"stored":true}'))
      else if (status !== undefined) req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end('{}'))
      else pending.add(req)
    })
    return { url: await listenOnLoopback(server), routes }
  }

  it('prints nothing when the injection does not come within its budget; the event was taken, nothing is spooled', async () => {
    const slow = await slowInjections()
    const client = home()
    const out = await remoteHook(client, slow.url, 'tok', 'UserPromptSubmit', ask('s'), { inject: 50 })
    expect(out).toEqual({ stdout: '', code: 0 })
    expect(slow.routes).toEqual(['POST /v1/events', 'POST /v1/injections'])
    expect(spooled(client)).toEqual([])
    // Logged where `mnemo status` shows it, as the event that got no block.
    const log = readFileSync(path.join(client, 'logs', 'errors.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { where: string; code: string; message: string })
    expect(log).toEqual([
      expect.objectContaining({
        where: 'hook UserPromptSubmit recall',
        code: 'STORE_UNAVAILABLE',
        message: expect.stringContaining(`server ${slow.url} unreachable`),
      }),
    ])
  })

  it('asks the server only for an event its agent takes context at, with a session and words or a file to ask about', async () => {
    // Injection requests are answered at once (503): whether the hook asked does not depend on how fast it is.
    const slow = await slowInjections(503)
    const client = home()
    const read = { tool_name: 'Read', tool_use_id: 'r1', tool_input: { file_path: `${PROJECT.root}/src/billing/invoice.ts` } }
    const asks = async (event: string, stdin: string, agent?: string): Promise<boolean> => {
      slow.routes.length = 0
      expect(await remoteHook(client, slow.url, 'tok', event, stdin, agent ? { agent } : {})).toEqual({
        stdout: '',
        code: 0,
      })
      expect(slow.routes[0]).toBe('POST /v1/events')
      return slow.routes.includes('POST /v1/injections')
    }
    // No channel: Cursor anywhere, Claude Code after a tool, Codex, Gemini CLI and OpenCode before one.
    expect(await asks('UserPromptSubmit', ask('c'), 'cursor')).toBe(false)
    expect(await asks('PostToolUse', hookPayload('PostToolUse', read, 'c'))).toBe(false)
    for (const agent of ['codex', 'gemini', 'opencode'])
      expect(await asks('PreToolUse', hookPayload('PreToolUse', read, 'c'), agent)).toBe(false)
    // A channel, but nothing to ask about: no words, no session, a tool without a file.
    expect(await asks('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: '  ' }, 'c'))).toBe(false)
    expect(
      await asks('UserPromptSubmit', JSON.stringify({ cwd: PROJECT.root, hook_event_name: 'UserPromptSubmit', prompt: 'rate-limit?' })),
    ).toBe(false)
    expect(
      await asks('PreToolUse', hookPayload('PreToolUse', { tool_name: 'Bash', tool_use_id: 'b1', tool_input: { command: 'ls' } }, 'c')),
    ).toBe(false)
    // The ones that do ask, by the agent's own event name too (Gemini CLI's BeforeAgent is mnemo's UserPromptSubmit).
    expect(await asks('UserPromptSubmit', ask('c'))).toBe(true)
    expect(await asks('PreToolUse', hookPayload('PreToolUse', read, 'c'))).toBe(true)
    expect(await asks('PostToolUse', hookPayload('PostToolUse', read, 'c'), 'codex')).toBe(true)
    expect(await asks('BeforeAgent', hookPayload('BeforeAgent', { prompt: 'how do we rate-limit?' }, 'c'), 'gemini')).toBe(true)
  })

  it('prints nothing and spools the event when the server is down', async () => {
    const server = await serve()
    const url = server.url
    await cleanups.pop()!()
    const client = home()
    expect(await remoteHook(client, url, server.token, 'UserPromptSubmit', ask('s'))).toEqual({ stdout: '', code: 0 })
    expect(spooled(client)).toHaveLength(1)
  })
})
