import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { noRedaction } from '../capture/sanitize.js'
import { createManualClock } from '../core/clock.js'
import { MnemoEngine } from '../engine/mnemo.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import { callRest } from '../testing/rest-client.js'
import { T0 } from '../testing/test-mnemo.js'
import { runCliCaptured } from '../testing/run-cli.js'
import { runHook } from './hooks/run-hook.js'
import { startServer } from './http/server.js'
import { readEvents } from '../testing/sse.js'
import type { ParsedJson } from '../testing/json.js'

// Issue 17 item 1: "the staging password is Hunter2-xyz" sent through every surface the item names (hook, CLI
// remember, MCP memory_remember, REST POST and PATCH /v1/memories, import) never comes back out of recall, context,
// export, the SSE stream or the database file's bytes; a store written before the rule loses it to `redact --rescan`.

const SECRET = 'Hunter2-xyz'
const SAID = `the staging password is ${SECRET}`

let tmp: string
let home: string
let proj: string
beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-prose-secret-'))
  home = path.join(tmp, 'home')
  proj = path.join(tmp, 'proj')
  mkdirSync(path.join(proj, '.git'), { recursive: true })
})
afterEach(() => rmSync(tmp, { recursive: true, force: true }))

const cli = (argv: string[]) => runCliCaptured(argv, { env: { MNEMO_HOME: home, HOME: tmp }, cwd: proj })

async function hook(event: string, payload: Record<string, unknown>): Promise<number | undefined> {
  const input = new PassThrough()
  let code: number | undefined
  const run = runHook(event, {
    stdin: input,
    stdout: { write: () => undefined },
    env: { MNEMO_HOME: home, HOME: tmp },
    cwd: proj,
    exit: (c) => (code = c),
  })
  input.end(JSON.stringify({ hook_event_name: event, session_id: 'sess-hook', cwd: proj, ...payload }))
  await run
  return code
}

/** The bytes of the store's database file and its -wal/-shm companions, as latin1 text (the secret is ASCII). */
function databaseBytes(): string {
  const files = readdirSync(home).filter((f) => /\.db(-wal|-shm)?$/.test(f))
  expect(files).toContain('mnemo.db')
  return files.map((f) => readFileSync(path.join(home, f)).toString('latin1')).join('\n')
}

describe('a password stated in prose, through every surface (issue 17 item 1)', () => {
  it('is redacted on the hook, CLI remember, import, MCP, REST POST and PATCH; recall, context, export, SSE and the database never hold it', async () => {
    expect(await hook('UserPromptSubmit', { prompt: SAID })).toBe(0)
    const remembered = await cli(['remember', `cli note: ${SAID}`])
    expect(remembered.code, remembered.stderr).toBe(0)
    const transcript = path.join(tmp, 'session.jsonl')
    writeFileSync(
      transcript,
      `${JSON.stringify({ type: 'user', sessionId: 'imp', uuid: 'u1', cwd: proj, timestamp: '2025-06-14T10:00:00Z', message: { role: 'user', content: `imported: ${SAID}` } })}\n`,
    )
    const imported = await cli(['import', transcript, '--format', 'claude-code'])
    expect(imported.code, imported.stderr).toBe(0)

    const server = await startServer({ home, host: '127.0.0.1', port: 0, env: { HOME: tmp }, streamPollMs: 20 })
    let streamed: { event: string; data: ParsedJson }[]
    try {
      const mcp = new Client({ name: 'prose-secret-test', version: '0.0.0' })
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${server.token}` } },
        }),
      )
      try {
        const viaMcp = await mcp.callTool({ name: 'memory_remember', arguments: { text: `mcp note: ${SAID}`, project: proj } })
        expect(viaMcp.isError, JSON.stringify(viaMcp)).toBeFalsy()
        expect(JSON.stringify(viaMcp)).not.toContain(SECRET)
      } finally {
        await mcp.close()
      }
      const posted = await callRest(server, 'POST', '/v1/memories', { text: `rest note: ${SAID}`, project: proj })
      expect(posted.status, JSON.stringify(posted.body)).toBe(201)
      expect(JSON.stringify(posted.body)).not.toContain(SECRET)
      const clean = await callRest(server, 'POST', '/v1/memories', { text: 'the staging host is staging.internal', project: proj })
      expect(clean.status).toBe(201)
      const patched = await callRest(server, 'PATCH', `/v1/memories/${clean.body.memory.id}`, { text: `patched: ${SAID}` })
      expect(patched.status, JSON.stringify(patched.body)).toBe(200)
      expect(JSON.stringify(patched.body)).not.toContain(SECRET)
      const project = posted.body.memory.project as string

      // The stream from the start of the log, up to a last prompt sent after everything else.
      const sentinel = await callRest(server, 'POST', '/v1/events', {
        event: 'UserPromptSubmit',
        payload: { session_id: 'sess-end', cwd: proj, prompt: 'end of the secret surfaces run' },
      })
      expect(sentinel.body, JSON.stringify(sentinel.body)).toEqual({ stored: true })
      expect(sentinel.status, JSON.stringify(sentinel.body)).toBe(202)
      const res = await fetch(`${server.url}/v1/stream?project=${encodeURIComponent(project)}`, {
        headers: { authorization: `Bearer ${server.token}`, 'last-event-id': '0' },
      })
      expect(res.status).toBe(200)
      streamed = await readEvents(res, (events) =>
        events.some((e) => e.event === 'observation' && String(e.data.text).includes('end of the secret surfaces run')),
      )
      const recalledRest = await callRest(server, 'POST', '/v1/recall', { query: 'staging password', project })
      expect(recalledRest.status).toBe(200)
      expect(JSON.stringify(recalledRest.body)).not.toContain(SECRET)
    } finally {
      await server.close()
    }
    const streamedText = JSON.stringify(streamed)
    expect(streamedText).toContain(`imported: the staging password is [REDACTED:password]`)
    expect(streamedText).toContain(`the staging password is [REDACTED:password]`)
    expect(streamedText).not.toContain(SECRET)

    const recalled = await cli(['recall', 'staging password', '--json', '--limit', '20'])
    expect(recalled.code, recalled.stderr).toBe(0)
    const hits = (JSON.parse(recalled.stdout) as { hits: { snippet?: string; text?: string }[] }).hits
    // Every write above is found, each with the placeholder where the password was.
    for (const prefix of ['cli note', 'mcp note', 'rest note', 'patched', 'imported'])
      expect(recalled.stdout).toContain(`${prefix}: the staging password is [REDACTED:password]`)
    expect(hits.length).toBeGreaterThanOrEqual(6)
    const context = await cli(['context', '--project', proj])
    expect(context.code, context.stderr).toBe(0)
    expect(context.stdout).toContain('[REDACTED:password]')
    const exported = await cli(['export'])
    expect(exported.code, exported.stderr).toBe(0)
    expect(exported.stdout).toContain('patched: the staging password is [REDACTED:password]')
    for (const out of [recalled, context, exported]) expect(out.stdout + out.stderr).not.toContain(SECRET)
    expect(databaseBytes()).not.toContain(SECRET)
  })

  it('stored before the rule (written with no redaction), is removed by `redact --rescan` from the log, recall, export and the file', async () => {
    const clock = createManualClock(T0)
    mkdirSync(home, { recursive: true })
    const store = openSqliteStore({ path: path.join(home, 'mnemo.db') }, () => clock.now())
    const legacy = new MnemoEngine({ store, clock, cwd: proj, contextBudgetTokens: 2000, timeZone: 'UTC', redact: noRedaction })
    await legacy.captureHook(
      'UserPromptSubmit',
      JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: 's', cwd: proj, prompt: SAID }),
    )
    expect(JSON.stringify(await store.readEvents(0, 10))).toContain(SECRET)
    await store.close()
    expect(databaseBytes()).toContain(SECRET)

    const rescan = await cli(['redact', '--rescan'])
    expect(rescan.code, rescan.stderr).toBe(0)
    const recalled = await cli(['recall', 'staging password', '--json'])
    expect(recalled.stdout).toContain('the staging password is [REDACTED:password]')
    const exported = await cli(['export'])
    expect(exported.stdout).toContain('the staging password is [REDACTED:password]')
    for (const out of [rescan, recalled, exported]) expect(out.stdout + out.stderr).not.toContain(SECRET)
    expect(existsSync(path.join(home, 'mnemo.db'))).toBe(true)
    expect(databaseBytes()).not.toContain(SECRET)
  })
})
