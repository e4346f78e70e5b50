import { afterAll, describe, expect, it } from 'vitest'
import { memoryOpEvent, rememberEvent } from '../../capture/mnemo-ops.js'
import { MnemoError } from '../../core/errors.js'
import { makeId } from '../../core/ids.js'
import { mulberry32 } from '../../core/random.js'
import type { EventInput } from '../../core/types.js'
import { indexEvent } from '../../engine/index-event.js'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { openSqliteStore } from '../sqlite/sqlite-store.js'
import type { Derivation, Store } from '../store.js'
import { PgDb, WRITE_LOCK } from './pg-db.js'
import { openPostgresStoreWith, type PgParts } from './pg-store.js'

// The PostgreSQL store's own parts (log, derivation writes, derived reads, lifecycle) against a real server, each
// compared with the SQLite store fed the same events: the same rows, ids, versions, counts and tombstones.

const pg = await withPostgres()

const T0 = Date.parse('2025-06-14T10:00:00Z')
const ZONE = 'UTC'
const ALPHA = { root: '/p/alpha', name: 'alpha' }
const BETA = { root: '/p/beta', name: 'beta' }

/**
 * The parts this file's tests need: no search step and no fact ledger (their own tests cover them; these events derive
 * no facts, and a call to either fails the test).
 */
const BASE_PARTS: PgParts = {
  migrations: [],
  write: {
    docColumns: [],
    facts: {
      apply: () => Promise.reject(new Error('these tests derive no facts')),
      removeOfEvent: async () => {},
      clear: async () => {},
    },
  },
  channels: () =>
    new Proxy({} as ReturnType<PgParts['channels']>, {
      get: (_, name) => () => Promise.reject(new Error(`the search channels are not under test here (${String(name)})`)),
    }),
  facts: () =>
    new Proxy({} as ReturnType<PgParts['facts']>, {
      get: (_, name) => () => Promise.reject(new Error(`the fact ledger is not under test here (${String(name)})`)),
    }),
}

function prompt(key: string, text: string, o: { session?: string; user?: string; ts?: number; project?: typeof ALPHA } = {}): EventInput {
  const project = o.project ?? ALPHA
  const session = o.session ?? 's1'
  return {
    agent: 'claude-code',
    format: 'claude-hook',
    type: 'UserPromptSubmit',
    sessionKey: session,
    project,
    ts: o.ts ?? T0,
    idemKey: o.user ? `${key}@${o.user}` : key,
    payload: { session_id: session, cwd: project.root, hook_event_name: 'UserPromptSubmit', prompt: text },
    ...(o.user !== undefined ? { user: o.user } : {}),
  }
}

function edit(key: string, file: string, text: string, ts: number): EventInput {
  return {
    agent: 'claude-code',
    format: 'claude-hook',
    type: 'PostToolUse',
    sessionKey: 's1',
    project: ALPHA,
    ts,
    idemKey: key,
    payload: {
      session_id: 's1',
      cwd: ALPHA.root,
      hook_event_name: 'PostToolUse',
      tool_name: 'Edit',
      tool_use_id: `tu-${key}`,
      tool_input: { file_path: `${ALPHA.root}/${file}`, old_string: '', new_string: text },
      tool_response: { success: true },
    },
  }
}

const random = mulberry32(19)
const LONG_WORD = Array.from({ length: 4000 }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(random() * 26)]).join('')

/** `value`, which the test has just made sure exists (fails the test when it does not). */
function must<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error(`expected ${what}`)
  return value
}

const indexed = (event: EventInput) => ({ event, derive: () => indexEvent(event, ZONE) })

/** A varied log: two projects and users, prompts and edits (entities), memories with versions, review flags, pins, archives, a repeat. */
function scenario(): EventInput[] {
  const v1 = rememberEvent(ALPHA, 'fact', 'The orders database is PostgreSQL 14', T0 + 10_000)
  const v2 = rememberEvent(ALPHA, 'fact', 'The orders database is PostgreSQL 16', T0 + 20_000, { supersedes: memId(v1) })
  const images = rememberEvent(ALPHA, 'decision', 'We build the images from PostgreSQL 14 base layers', T0 + 15_000)
  return [
    prompt('p1', 'Why does validateToken fail in src/auth.ts?', { ts: T0 }),
    edit('e1', 'src/auth.ts', 'export function validateToken(jwt: string) { return verify(jwt) }', T0 + 1000),
    prompt('p2', 'Alice asks about the deploy pipeline', { user: 'alice', session: 's2', ts: T0 + 2000 }),
    prompt('p3', 'Beta project: migrate the billing service', { project: BETA, session: 's3', ts: T0 + 3000 }),
    v1,
    images,
    v2,
    rememberEvent(ALPHA, 'fact', 'The orders database is PostgreSQL 16', T0 + 30_000),
    rememberEvent(ALPHA, 'preference', 'Alice prefers pnpm', T0 + 31_000, { user: 'alice' }),
    memoryOpEvent(ALPHA, 'pin', memId(v2), T0 + 40_000),
    memoryOpEvent(ALPHA, 'archive', memId(images), T0 + 41_000),
  ]
}

/** The id the derivation gives a remembered memory. */
const memId = (event: EventInput): string => makeId('mem', event.ts, event.idemKey)

/** Everything a store derived, in a form two dialects must agree on. */
async function snapshot(store: Store): Promise<unknown> {
  const projects = await store.listProjects()
  const sessions = await store.listSessions({ limit: 100 })
  const out: Record<string, unknown> = {
    events: (await store.readEvents(0, 1000)).map((e) => ({ ...e })),
    projects,
    sessions,
    counts: await store.scopeCounts(),
    alice: await store.scopeCounts(ALPHA.root, 'alice'),
    stats: { ...(await store.stats()), bytes: 0 },
    tombstones: await store.tombstones(),
    lastSeq: await store.lastEventSeq(),
  }
  for (const s of sessions) out[`obs ${s.id}`] = await store.sessionObservations(s.id, 1000)
  for (const p of projects) {
    const memories = await store.allMemories(p.id)
    out[`mem ${p.id}`] = memories
    for (const m of memories) out[`history ${m.id}`] = await store.memoryHistory(m.id)
    out[`browse ${p.id}`] = await store.browseObservations({ projectIds: [p.id], order: 'asc', limit: 100 })
    out[`current ${p.id}`] = await store.browseMemories({ projectIds: [p.id], state: 'current', offset: 0, limit: 100 })
  }
  out.listMemories = await store.listMemories({ limit: 100, user: 'alice' })
  out.listProjectsBob = await store.listProjects({ user: 'bob' })
  return out
}

describe.skipIf(!pg)(`PostgresStore: log, derivation, reads, lifecycle${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  const url = pg?.url ?? ''
  const opened: Store[] = []
  afterAll(async () => {
    for (const s of opened) await s.close()
    await pg?.drop()
  })
  let n = 0
  /** A store on a fresh schema of its own (each test its own database tables, by a fresh PostgreSQL schema). */
  async function fresh(): Promise<{ url: string; open: () => Promise<Store> }> {
    const schema = `t${++n}`
    const admin = PgDb.open(url)
    await admin.query('t', `CREATE SCHEMA ${schema}`)
    await admin.close()
    const at = `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`
    return {
      url: at,
      open: async () => {
        const s = await openPostgresStoreWith(at, BASE_PARTS, { now: () => T0 + 100_000 })
        opened.push(s)
        return s
      },
    }
  }
  const sqlite = (): Store => {
    const s = openSqliteStore({ path: ':memory:' }, () => T0 + 100_000)
    opened.push(s)
    return s
  }

  it('derives the same rows, ids, versions and counts as SQLite from the same log', async () => {
    const store = await (await fresh()).open()
    const reference = sqlite()
    const batch = scenario().map(indexed)
    const a = await store.append(batch)
    const b = await reference.append(batch)
    expect(a).toEqual(b)
    expect(a.inserted).toBe(batch.length)
    const [got, want] = [await snapshot(store), await snapshot(reference)]
    expect(got).toEqual(want)
    // The scenario exercised what it means to: a superseded version, a flagged dependent, a pin, an archive, a repeat.
    const alpha = must(
      (await reference.listProjects()).find((p) => p.root === ALPHA.root),
      'project alpha',
    )
    const memories = await reference.allMemories(alpha.id)
    expect(memories.some((m) => m.validTo !== undefined)).toBe(true)
    expect(memories.some((m) => m.review?.startsWith('depends-on-superseded:'))).toBe(true)
    expect(memories.some((m) => m.pinned && m.seenCount === 2)).toBe(true)
    expect(memories.some((m) => m.archivedAt !== undefined)).toBe(true)
    expect(await store.integrityCheck()).toBe('ok')
  })

  it('keeps memories whose subject outgrows a b-tree index entry, with their versions', async () => {
    const store = await (await fresh()).open()
    const reference = sqlite()
    // Capture shortens such words (sanitize); a derivation handed to the store directly need not.
    const memory = (key: string, text: string, ts: number) => ({
      event: { ...rememberEvent(ALPHA, 'fact', text, ts), idemKey: key },
      derive: (): Derivation => ({
        observations: [],
        memory: { kind: 'fact', text, index: { body: text, parts: '', meta: '' }, entities: [], contentKey: key, subjectKey: LONG_WORD },
      }),
    })
    const batch = [memory('long-1', 'first value', T0), memory('long-2', 'second value', T0 + 1)]
    for (const s of [store, reference]) expect(await s.append(batch)).toMatchObject({ inserted: 2 })
    expect(await snapshot(store)).toEqual(await snapshot(reference))
    const [project] = await store.listProjects()
    if (!project) throw new Error('the memories made no project')
    expect((await store.allMemories(project.id)).map((m) => m.validTo !== undefined)).toEqual([true, false])
  })

  it('stores an event once when two pools append the same batch at the same moment', async () => {
    const db = await fresh()
    const [one, two] = [await db.open(), await db.open()]
    const events = Array.from({ length: 40 }, (_, i) => prompt(`c${i}`, `concurrent prompt number ${i}`, { ts: T0 + i }))
    const results = await Promise.all([
      one.append(events.map(indexed)),
      two.append(events.map(indexed)),
      // The same events one at a time through each pool, interleaved with the batches.
      ...events.slice(0, 10).flatMap((e) => [one.append([indexed(e)]), two.append([indexed(e)])]),
    ])
    expect(results.reduce((sum, r) => sum + r.inserted, 0)).toBe(40)
    expect(results.reduce((sum, r) => sum + r.inserted + r.duplicates, 0)).toBe(40 * 2 + 20)
    expect(await one.scopeCounts()).toEqual({ events: 40, sessions: 1, observations: 40, memories: 0 })
    // Sequence numbers commit in order: one per event, no gap a reader tailing by seq could skip.
    const seqs = (await two.readEvents(0, 100)).map((e) => e.seq)
    expect(seqs).toHaveLength(40)
    // A delivery keyed a second apart (`sameAs`) is the same event.
    const again = await two.append([{ ...indexed({ ...must(events[0], 'an event'), idemKey: 'c0-next-second' }), sameAs: ['c0'] }])
    expect(again).toMatchObject({ inserted: 0, duplicates: 1, seqs: [undefined] })
  })

  it('keeps the write guard across replicas: the same memory stated through two pools at once is one memory, seen as often as it was said', async () => {
    const db = await fresh()
    const [one, two] = [await db.open(), await db.open()]
    const said = (i: number) => rememberEvent(ALPHA, 'fact', `Deploys start from the release-${i % 5} branch`, T0 + i)
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : two).append([indexed(said(i))])))
    const project = must((await one.listProjects())[0], 'the project')
    const memories = await two.allMemories(project.id)
    // Five texts, each said four times: five memories, each seen four times, as one writer would have derived them.
    expect(memories.map((m) => m.seenCount)).toEqual([4, 4, 4, 4, 4])
    const reference = sqlite()
    for (let i = 0; i < 20; i++) await reference.append([indexed(said(i))])
    const byText = (ms: { text: string; seenCount: number }[]) => ms.map((m) => `${m.text}×${m.seenCount}`).sort()
    expect(byText(memories)).toEqual(byText(await reference.allMemories(must((await reference.listProjects())[0], 'project').id)))
  })

  it('applies the derivation in the append transaction: a derive that throws leaves nothing, and the store works on', async () => {
    const store = await (await fresh()).open()
    const events = [prompt('d1', 'first'), prompt('d2', 'second'), prompt('d3', 'third')]
    const failing = events.map((event, i) => ({
      event,
      derive: (): Derivation => {
        if (i === 2) throw new Error('derivation failed on the third event')
        return indexEvent(event, ZONE)
      },
    }))
    await expect(store.append(failing)).rejects.toThrow(/third event/)
    expect(await store.scopeCounts()).toEqual({ events: 0, sessions: 0, observations: 0, memories: 0 })
    expect(await store.listProjects()).toEqual([])
    expect(await store.append(events.map(indexed))).toMatchObject({ inserted: 3, observations: 3 })
    expect(await store.integrityCheck()).toBe('ok')
  })

  it('rebuilds to exactly what the appends derived, keeping the ids of projects and sessions', async () => {
    const store = await (await fresh()).open()
    await store.append(scenario().map(indexed))
    const before = await snapshot(store)
    const rebuilt = await store.rebuild((event) => indexEvent(event, ZONE), 7)
    expect(rebuilt).toEqual({
      events: scenario().length,
      observations: (before as { counts: { observations: number } }).counts.observations,
    })
    expect(await snapshot(store)).toEqual(before)
    expect(await store.derivedWith()).toBe(7)
    expect(await store.integrityCheck()).toBe('ok')
  })

  it('deletes events with their rows and tombstones, relinks versions, and never takes the event back', async () => {
    const store = await (await fresh()).open()
    const reference = sqlite()
    const events = scenario()
    for (const s of [store, reference]) await s.append(events.map(indexed))
    // The middle version of the orders memory, one session's events, then a whole project.
    const v2 = must(events[6], 'the second version')
    for (const s of [store, reference]) {
      const seq = must(
        (await s.readEvents(0, 100)).find((e) => e.idemKey === v2.idemKey),
        'its event',
      ).seq
      expect(await s.deleteEvents({ seqs: [seq] })).toBe(1)
      expect(await s.deleteEvents({ projectRoot: ALPHA.root, sessionKey: 's2', user: 'alice' })).toBe(1)
      expect(await s.deleteEvents({ projectRoot: BETA.root })).toBe(1)
    }
    expect(await snapshot(store)).toEqual(await snapshot(reference))
    const tombs = await store.tombstones()
    expect(tombs.map((t) => t.idemKey).sort()).toEqual([v2.idemKey, 'p2@alice', 'p3'].sort())
    expect((await store.listProjects()).map((p) => p.root)).toEqual([ALPHA.root])
    // Replayed (an import of an old export): tombstoned keys stay out.
    const replay = await store.append(events.map(indexed))
    expect(replay).toMatchObject({ inserted: 0, duplicates: events.length })
    await expect(store.deleteEvents({})).rejects.toSatisfy((e: unknown) => MnemoError.is(e, 'INVALID_INPUT'))
    expect(await store.integrityCheck()).toBe('ok')
  })

  it('stores a step captured by two paths once, records the copy, and lets it in again when the stored one goes', async () => {
    const store = await (await fresh()).open()
    const reference = sqlite()
    const hook = prompt('h1', 'run the migration tests')
    const transcript: EventInput = { ...hook, format: 'claude-transcript', type: 'user', idemKey: 't1', ts: T0 + 5_000 }
    const derivation = (origin: 'claude-hook' | 'claude-transcript', ts: number) => (): Derivation => ({
      origin,
      observations: [
        {
          kind: 'prompt',
          role: 'user',
          text: 'run the migration tests',
          ts,
          index: { body: 'run the migration tests', parts: '', meta: 'user' },
          entities: [],
        },
      ],
    })
    for (const s of [store, reference]) {
      await s.append([{ event: hook, derive: derivation('claude-hook', T0) }])
      const second = await s.append([{ event: transcript, derive: derivation('claude-transcript', T0 + 5_000) }])
      expect(second).toMatchObject({ inserted: 1, observations: 0, covered: 1 })
      const seqs = (await s.readEvents(0, 10)).map((e) => e.seq)
      const hookSeq = must(seqs[0], 'the hook event')
      expect(await s.eventsHaveCopies([hookSeq])).toBe(true)
      const stored = (await s.browseObservations({ projectIds: (await s.listProjects()).map((p) => p.id), order: 'asc', limit: 10 }))[0]
      if (!stored) throw new Error('no stored observation')
      const step = await s.stepOf(stored.id)
      expect(step?.origin).toBe('claude-hook')
      expect(
        await s.stepRecords(must(step, 'its step').session, 'claude-transcript', {
          kind: 'prompt',
          text: 'run the migration tests',
          ts: T0 + 5_000,
        }),
      ).toEqual([stored.id])
      await s.deleteEvents({ seqs: [hookSeq] })
      await s.rederiveSession(must(step, 'its step').session, (e) =>
        e.format === 'claude-transcript' ? derivation('claude-transcript', T0 + 5_000)() : derivation('claude-hook', T0)(),
      )
    }
    expect(await snapshot(store)).toEqual(await snapshot(reference))
    expect((await store.scopeCounts()).observations).toBe(1)
  })

  it('rewrites and folds payloads in place, counting stored bytes', async () => {
    const store = await (await fresh()).open()
    await store.append([prompt('r1', 'secret token sk-123'), prompt('r2', 'plain')].map(indexed))
    const changed = await store.rewritePayloads((p) => {
      const text = JSON.stringify(p)
      return text.includes('sk-123') ? JSON.parse(text.replace('sk-123', '[REDACTED]')) : undefined
    })
    expect(changed).toBe(1)
    expect(JSON.stringify(must((await store.readEvents(0, 10))[0], 'an event').payload)).toContain('[REDACTED]')
    const folded = await store.foldEvents({ before: T0 + 1 }, (e) => ({ format: 'folded', payload: { from: e.format, small: true } }))
    expect(folded.events).toBe(2)
    expect(folded.bytesAfter).toBeLessThan(folded.bytesBefore)
    expect((await store.readEvents(0, 10)).map((e) => e.format)).toEqual(['folded', 'folded'])
  })

  it('records usage and injections, audits, and counts per scope', async () => {
    const store = await (await fresh()).open()
    await store.append(scenario().map(indexed))
    const project = must(
      (await store.listProjects()).find((p) => p.root === ALPHA.root),
      'project alpha',
    )
    const ids = (await store.allMemories(project.id)).map((m) => m.id)
    await store.recordUsage(ids, '2025-06-14')
    await store.recordUsage(ids, '2025-06-14')
    await store.recordUsage(ids.slice(0, 1), '2025-06-15')
    expect([...(await store.usageCounts(ids)).values()]).toEqual([2, ...ids.slice(1).map(() => 1)])
    const key = { agent: 'claude-code', sessionKey: 's1', user: '' }
    const first = must(ids[0], 'a memory')
    await store.recordInjections(
      key,
      [
        { itemId: first, what: 'item' },
        { itemId: first, what: 'item' },
        { itemId: 'src/a.ts', what: 'file' },
      ],
      T0,
    )
    expect(await store.injections(key)).toEqual([
      { itemId: ids[0], what: 'item', at: T0 },
      { itemId: 'src/a.ts', what: 'file', at: T0 },
    ])
    await store.audit({ at: T0, actor: 'cli', action: 'forget', target: 'mem_x', count: 1, details: { why: 'test' } })
    expect(await store.auditLog(5)).toEqual([
      { at: T0, actor: 'cli', action: 'forget', target: 'mem_x', count: 1, details: { why: 'test' } },
    ])
    const reference = sqlite()
    await reference.append(scenario().map(indexed))
    const scopes: Parameters<Store['scopeCounts']>[] = [
      [ALPHA.root, 'alice'],
      [ALPHA.root, null],
      [undefined, undefined, 'claude-code'],
      [BETA.root],
    ]
    for (const args of scopes) expect(await store.scopeCounts(...args)).toEqual(await reference.scopeCounts(...args))
    const { bytesBefore, bytesAfter } = await store.vacuum()
    expect(bytesBefore).toBeGreaterThan(0)
    expect(bytesAfter).toBeGreaterThan(0)
  })

  it('fails a write at once inside withoutLockWait while another writer holds the lock, and waits outside it', async () => {
    const db = await fresh()
    const store = await db.open()
    const holder = PgDb.open(url)
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let locked!: () => void
    const isLocked = new Promise<void>((r) => (locked = r))
    const holding = holder.transaction(
      'hold',
      async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK.toString()])
        locked()
        await held
      },
      { writeLock: false },
    )
    await isLocked
    const error = await store.withoutLockWait(() => store.append([indexed(prompt('w1', 'while locked'))])).catch((e: unknown) => e)
    expect(MnemoError.is(error, 'STORE_UNAVAILABLE')).toBe(true)
    expect((error as Error).message).toMatch(/locked/)
    // Usage is best effort: it records nothing rather than wait.
    await store.recordUsage(['mem_x'], '2025-06-14')
    const waiting = store.append([indexed(prompt('w2', 'after the lock'))])
    release()
    await holding
    expect(await waiting).toMatchObject({ inserted: 1 })
    // Outside it a write waits for the lock up to lockTimeoutMs, then fails saying so.
    const patient = await openPostgresStoreWith(db.url, BASE_PARTS, { lockTimeoutMs: 200 })
    opened.push(patient)
    const again = holder.transaction(
      'hold again',
      async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK.toString()])
        const timedOut = await patient.append([indexed(prompt('w3', 'waited too long'))]).catch((e: unknown) => e)
        expect(MnemoError.is(timedOut, 'STORE_UNAVAILABLE')).toBe(true)
        expect((timedOut as Error).message).toMatch(/locked/)
      },
      { writeLock: false },
    )
    await again
    expect((await store.usageCounts(['mem_x'])).get('mem_x')).toBe(0)
    await holder.close()
  })

  it('integrityCheck names derived rows that disagree with the log or each other', async () => {
    const db = await fresh()
    const store = await db.open()
    await store.append(scenario().map(indexed))
    expect(await store.integrityCheck()).toBe('ok')
    // Damage as a bug or a hand edit would: a lost search document, a memory whose document kept its old validity, a renamed session.
    const raw = PgDb.open(url)
    const schema = `t${n}`
    await raw.transaction(
      'damage',
      async (c) => {
        await c.query(`SET LOCAL search_path = ${schema}`)
        await c.query('DELETE FROM search_docs WHERE doc_key = (SELECT MIN(rowid) FROM observations)')
        await c.query('ALTER TABLE memories DISABLE TRIGGER memories_validity')
        await c.query('UPDATE memories SET archived_at = 1 WHERE rowid = (SELECT MIN(rowid) FROM memories)')
        await c.query('ALTER TABLE memories ENABLE TRIGGER memories_validity')
        await c.query(
          "UPDATE kept_ids SET id = 'ses_other' WHERE identity LIKE '[\"session\"%' AND id = (SELECT MIN(id) FROM sessions WHERE agent <> 'mnemo')",
        )
      },
      { writeLock: false },
    )
    await raw.close()
    // The lost document also leaves its entity mentions (the first prompt names two entities) without one.
    expect(await store.integrityCheck()).toBe(
      '1 observations without their search document; 1 memories without their search document; 2 entity mentions of missing documents; 1 sessions without their kept id',
    )
  })

  it('reports a connection lost mid-write as STORE_UNAVAILABLE with its cause, writes nothing, and reconnects after', async () => {
    const store = await (await fresh()).open()
    const admin = PgDb.open(url)
    let release = (): void => {}
    const held = new Promise<void>((r) => {
      release = r
    })
    const holding = admin.transaction(
      'hold',
      async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK.toString()])
        // The store's append now waits for the lock: end its connection as a server restart or a network cut would.
        const waiting = store.append([indexed(prompt('x1', 'lost on the way'))]).catch((e: unknown) => e)
        for (;;) {
          const r = await c.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory' AND pid <> pg_backend_pid()",
          )
          if (r.rows[0]) {
            await c.query('SELECT pg_terminate_backend($1)', [r.rows[0].pid])
            break
          }
        }
        const error = await waiting
        expect(MnemoError.is(error, 'STORE_UNAVAILABLE')).toBe(true)
        expect((error as Error).message).toMatch(/postgres append failed .*terminat/)
        expect((error as Error).cause).toBeInstanceOf(Error)
        release()
        await held
      },
      { writeLock: false },
    )
    await holding
    await admin.close()
    expect(await store.lastEventSeq()).toBe(0)
    expect(await store.append([indexed(prompt('x2', 'after the reconnect'))])).toMatchObject({ inserted: 1 })
  })

  it('records the derivation version of a new store, and 1 for one that held events before versions were kept', async () => {
    const db = await fresh()
    const first = await openPostgresStoreWith(db.url, BASE_PARTS, { derivationVersion: 9 })
    opened.push(first)
    expect(await first.derivedWith()).toBe(9)
    const older = await fresh()
    const before = await older.open()
    expect(await before.derivedWith()).toBeUndefined()
    await before.append([indexed(prompt('v1', 'written before versions'))])
    const after = await openPostgresStoreWith(older.url, BASE_PARTS, { derivationVersion: 9 })
    opened.push(after)
    expect(await after.derivedWith()).toBe(1)
    expect((await after.stats()).bytes).toBeGreaterThan(0)
  })

  it('reports a closed store as STORE_UNAVAILABLE', async () => {
    const store = await (await fresh()).open()
    await store.close()
    const error = await store.lastEventSeq().catch((e: unknown) => e)
    expect(MnemoError.is(error, 'STORE_UNAVAILABLE')).toBe(true)
  })
})
