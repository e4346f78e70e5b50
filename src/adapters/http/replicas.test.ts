import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { callRest } from '../../testing/rest-client.js'
import { type RunningServer, startServer } from './server.js'

// Two `mnemo serve` replicas on one PostgreSQL database (issue 19 item 4), against a real server: what one takes, the
// other serves; one delivery sent to both is stored once; background consolidation runs once per interval across them.
const pg = await withPostgres()

describe.skipIf(!pg)(`mnemo serve replicas on one PostgreSQL database${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  let tmp: string
  let a: RunningServer
  let b: RunningServer
  const cwd = '/srv/team/shop'

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-replicas-'))
    const options = { host: '127.0.0.1', port: 0, env: {}, database: pg!.url, consolidateEveryMinutes: 0 }
    a = await startServer({ ...options, home: path.join(tmp, 'a') })
    // Every replica holds the same token file (README: what each replica needs).
    mkdirSync(path.join(tmp, 'b'), { mode: 0o700 })
    copyFileSync(path.join(tmp, 'a', 'server-token'), path.join(tmp, 'b', 'server-token'))
    b = await startServer({ ...options, home: path.join(tmp, 'b') })
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await pg?.drop()
    if (tmp) rmSync(tmp, { recursive: true, force: true })
  })

  const event = (sessionId: string, prompt: string) => ({
    event: 'UserPromptSubmit',
    payload: { session_id: sessionId, cwd, hook_event_name: 'UserPromptSubmit', prompt },
    projectRoot: cwd,
  })

  it('serves one database: both name it, with the same token', () => {
    expect(a.database).toBe(b.database)
    expect(a.database).toMatch(/^postgres/)
    expect(b.token).toBe(a.token)
  })

  it('recalls through one replica what was captured through the other, at once', async () => {
    const captured = await callRest(a, 'POST', '/v1/events', event('s-recall', 'rotate the xylophone signing keys before the release'))
    expect(captured).toMatchObject({ status: 202, body: { stored: true } })
    const recalled = await callRest(b, 'POST', '/v1/recall', { query: 'xylophone signing keys', project: cwd })
    expect(recalled.status).toBe(200)
    expect(recalled.body.hits.map((h: { snippet: string }) => h.snippet).join('\n')).toContain('xylophone')
  })

  it('stores an event delivered to both replicas at once once', async () => {
    const before = (await b.engine.stats()).events
    const delivery = event('s-twice', 'the quokka importer drops rows with an empty sku')
    const replies = await Promise.all([a, b, a, b].map((r) => callRest(r, 'POST', '/v1/events', delivery)))
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 202])
    expect(replies.filter((r) => r.body.stored === true)).toHaveLength(1)
    expect((await a.engine.stats()).events).toBe(before + 1)
    const hits = (await callRest(a, 'POST', '/v1/recall', { query: 'quokka importer', project: cwd })).body.hits
    expect(hits.filter((h: { snippet: string }) => h.snippet.includes('quokka'))).toHaveLength(1)
  })

  it('consolidates once per interval across replicas, and again in the next', async () => {
    await callRest(a, 'POST', '/v1/events', { ...event('s-end', 'ship it'), event: 'SessionEnd' })
    const turn = Math.floor(Date.now() / 60_000)
    const first = await Promise.all([a.engine.consolidateTurn(turn), b.engine.consolidateTurn(turn)])
    expect(first.filter((r) => r !== undefined)).toHaveLength(1)
    // The interval is done: neither runs it again, whichever fires later.
    expect(await Promise.all([b.engine.consolidateTurn(turn), a.engine.consolidateTurn(turn)])).toEqual([undefined, undefined])
    const next = await Promise.all([b.engine.consolidateTurn(turn + 1), a.engine.consolidateTurn(turn + 1)])
    expect(next.filter((r) => r !== undefined)).toHaveLength(1)
  })
})
