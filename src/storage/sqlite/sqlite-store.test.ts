import path from 'node:path'
import { deflateRawSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import type { EventInput } from '../../core/types.js'
import { tempDir } from '../../testing/test-mnemo.js'
import type { Derivation } from '../store.js'
import { MIGRATIONS } from './migrations.js'
import type { SqliteDb } from './sqlite-db.js'
import { openSqliteStore } from './sqlite-store.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

function event(idemKey: string, ts = 1_000): EventInput {
  return {
    agent: 'claude-code',
    format: 'claude-hook',
    type: 'UserPromptSubmit',
    sessionKey: 's1',
    project: { root: '/p/a', name: 'a' },
    ts,
    idemKey,
    payload: { prompt: idemKey },
  }
}
/** Rolls a file back from version 14 to what version 13 wrote: no index of observations by user and time. */
const UNDO_V14 = 'DROP INDEX observations_user_time'
/** Rolls a file back from version 14 to what version 12 wrote: no index of events by receive time. */
const UNDO_V13 = `${UNDO_V14}; DROP INDEX events_received_at`
/** Rolls a file back from version 14 to what version 11 wrote: an index of observations by capture path, no list per session. */
const UNDO_V12 = `${UNDO_V13}; ALTER TABLE sessions DROP COLUMN origins; CREATE INDEX observations_session_origin ON observations(session_id, origin)`
/**
 * Rolls a file back from version 14 to what version 10 wrote: a full-text index with its own copy of the text (here the
 * documents' text as the body, as `derive` below indexes it).
 */
const UNDO_V11 = `${UNDO_V12}; DROP TABLE search_fts;
  CREATE VIRTUAL TABLE search_fts USING fts5(body, parts, meta, tokenize = 'porter unicode61 remove_diacritics 2');
  INSERT INTO search_fts (rowid, body, parts, meta) SELECT rowid, text, '', '' FROM observations UNION ALL SELECT -rowid, text, '', '' FROM memories`
/** Rolls a file back from version 14 to what version 9 wrote. */
const UNDO_V10 = `${UNDO_V11}; DROP TABLE context_injections`
/** Rolls a file back from version 14 to what version 8 wrote. */
const UNDO_V9 = `${UNDO_V10}; DROP INDEX observations_scope; DROP INDEX memories_scope`
/** Rolls a file back from version 14 to what version 7 wrote. */
const UNDO_V8 = `${UNDO_V9}; DROP TABLE fact_schema; DROP TABLE fact_versions; DROP TABLE fact_records; DROP TABLE fact_tombstones`
/** Rolls a file back from version 8 to what version 6 wrote. */
const UNDO_V7 = `${UNDO_V8}; DROP TABLE store_meta`
/** Rolls a file back from version 7 to what version 5 wrote. */
const UNDO_V6 = `${UNDO_V7}; DROP TABLE kept_ids`
/** Rolls a file back from version 6 to what version 4 wrote. */
const UNDO_V5 = `${UNDO_V6}; DROP TABLE observation_copies; DROP INDEX observations_session_ref; DROP INDEX observations_session_origin; ALTER TABLE observations DROP COLUMN part; ALTER TABLE observations DROP COLUMN origin`
/** A store file holding `batch`, then changed by `sql` and marked as schema `version`: what an older (or newer) mnemo left. */
async function fileAtVersion(
  name: string,
  version: number,
  sql: string,
  batch: Parameters<ReturnType<typeof openSqliteStore>['append']>[0] = [],
): Promise<string> {
  const t = tempDir()
  cleanups.push(t.cleanup)
  const file = path.join(t.dir, name)
  const store = openSqliteStore({ path: file })
  if (batch.length > 0) await store.append(batch)
  await store.close()
  const db = new Database(file)
  if (sql) db.exec(sql)
  db.pragma(`user_version = ${version}`)
  db.close()
  return file
}
const derive = (text: string) => (): Derivation => ({
  observations: [{ kind: 'prompt', role: 'user', text, index: { body: text, parts: '', meta: '' }, entities: [] }],
})

describe('sqlite store', () => {
  it('migrating a version-3 file gives its rows no user (shared) and its observations their session’s agent', async () => {
    // Rolled back to what version 3 wrote: no user or agent columns.
    const undoV4 = [
      ['events', 'user_id'],
      ['sessions', 'user_id'],
      ['observations', 'user_id'],
      ['observations', 'agent'],
      ['memories', 'user_id'],
      ['memories', 'agent'],
    ]
      .map(([table, column]) => `ALTER TABLE ${table} DROP COLUMN ${column};`)
      .join(' ')
    const file = await fileAtVersion('v3.db', 3, `DROP INDEX events_user; ${UNDO_V5}; ${undoV4}`, [
      { event: event('k1'), derive: derive('written before users existed') },
    ])
    const store = openSqliteStore({ path: file })
    cleanups.push(() => store.close())
    const project = (await store.listProjects())[0]!
    const [row] = await store.browseObservations({ projectIds: [project.id], agent: 'claude-code', order: 'desc', limit: 10 })
    expect(row).toMatchObject({ text: 'written before users existed', agent: 'claude-code' })
    expect(row!.user).toBeUndefined()
    // Shared rows: a reader with no user and a reader with a user both see them.
    for (const user of [null, 'alice']) expect(await store.searchText({ match: '"users"', limit: 5, user })).toHaveLength(1)
  })

  it('migrating a version-4 file gives every observation the capture path of its event (a folded one, the path it was folded from)', async () => {
    const folded: EventInput = {
      ...event('k2', 2_000),
      format: 'folded',
      payload: { v: 1, from: 'claude-transcript', observations: [{ kind: 'prompt', role: 'user', text: 'folded' }] },
    }
    const file = await fileAtVersion('v4.db', 4, UNDO_V5, [
      { event: event('k1'), derive: derive('from a hook') },
      { event: folded, derive: derive('folded') },
    ])
    await openSqliteStore({ path: file }).close()
    const after = new Database(file, { readonly: true })
    cleanups.push(() => after.close())
    expect(after.prepare('SELECT text, origin FROM observations ORDER BY event_seq').all()).toEqual([
      { text: 'from a hook', origin: 'claude-hook' },
      { text: 'folded', origin: 'claude-transcript' },
    ])
    expect(after.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)!.version)
  })

  it('stores a long payload compressed and a short one as text, and reads both back exactly, with old text payloads', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const file = path.join(t.dir, 'payloads.db')
    const store = openSqliteStore({ path: file })
    cleanups.push(() => store.close())
    const long = { prompt: `${'é '.repeat(150)}the end 🔴`, nested: { n: 1.5, list: [null, true, 'x'] } }
    await store.append([
      { event: { ...event('long'), payload: long }, derive: derive('long') },
      { event: event('short'), derive: derive('short') },
    ])
    const raw = new Database(file)
    cleanups.push(() => raw.close())
    expect(raw.prepare('SELECT idem_key, typeof(payload) AS type FROM events ORDER BY seq').all()).toEqual([
      { idem_key: 'long', type: 'blob' },
      { idem_key: 'short', type: 'text' },
    ])
    // Compressed over the preset dictionary: its tag first.
    expect(raw.prepare("SELECT hex(substr(payload, 1, 1)) FROM events WHERE idem_key = 'long'").pluck().get()).toBe('06')
    // A payload written before payloads were compressed: JSON text, however long.
    raw.prepare('UPDATE events SET payload = ? WHERE idem_key = ?').run(JSON.stringify({ ...long, old: true }), 'short')
    expect((await store.readEvents(0, 10)).map((e) => e.payload)).toEqual([long, { ...long, old: true }])
    // One compressed before the dictionary (raw DEFLATE, no tag) reads the same.
    raw.prepare('UPDATE events SET payload = ? WHERE idem_key = ?').run(deflateRawSync(JSON.stringify(long), { level: 1 }), 'long')
    expect((await store.readEvents(0, 1)).map((e) => e.payload)).toEqual([long])
    await store.rewritePayloads((p) => ({ ...(p as object), rewritten: 1 }))
    expect((await store.readEvents(0, 10)).map((e) => e.payload)).toEqual([
      { ...long, rewritten: 1 },
      { ...long, old: true, rewritten: 1 },
    ])
    expect(raw.prepare('SELECT typeof(payload) AS type FROM events ORDER BY seq').pluck().all()).toEqual(['blob', 'blob'])
    // A BLOB in an encoding this mnemo does not know (a newer one's tag) is refused, never misread.
    raw.prepare('UPDATE events SET payload = ? WHERE idem_key = ?').run(Buffer.from([0x0e, 1, 2, 3]), 'long')
    await expect(store.readEvents(0, 1)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining('tag 0xe') })
  })

  it('migrating a version-5 file keeps the ids its sessions and projects had, through a rebuild after their first events are deleted', async () => {
    const file = await fileAtVersion('v5.db', 5, UNDO_V6, [
      { event: event('k1', 1_000), derive: derive('first prompt') },
      { event: event('k2', 90_000_000), derive: derive('second prompt') },
    ])
    const store = openSqliteStore({ path: file })
    cleanups.push(() => store.close())
    const [project] = await store.listProjects()
    const [session] = await store.listSessions({ projectIds: [project!.id], limit: 5 })
    await store.deleteEvents({ seqs: [1] })
    await store.rebuild(derive('re-derived'))
    expect((await store.listProjects()).map((p) => p.id)).toEqual([project!.id])
    expect((await store.listSessions({ projectIds: [project!.id], limit: 5 })).map((x) => [x.id, x.startedAt])).toEqual([
      [session!.id, 90_000_000],
    ])
  })

  it('records the derivation a store’s rows were made with: 1 for a migrated store holding events, the given version for a new one, and what a rebuild says', async () => {
    const old = await fileAtVersion('v6.db', 6, UNDO_V7, [{ event: event('k1'), derive: derive('derived by an older mnemo') }])
    const migrated = openSqliteStore({ path: old, derivationVersion: 2 })
    cleanups.push(() => migrated.close())
    expect(await migrated.derivedWith()).toBe(1)
    await migrated.rebuild(derive('re-derived'), 2)
    expect(await migrated.derivedWith()).toBe(2)
    const t = tempDir()
    cleanups.push(t.cleanup)
    const fresh = openSqliteStore({ path: path.join(t.dir, 'new.db'), derivationVersion: 2 })
    cleanups.push(() => fresh.close())
    expect(await fresh.derivedWith()).toBe(2)
    await fresh.append([{ event: event('k1'), derive: derive('new') }])
    // Reopening with a newer version does not pretend the rows were made by it.
    await fresh.close()
    const reopened = openSqliteStore({ path: path.join(t.dir, 'new.db'), derivationVersion: 3 })
    cleanups.push(() => reopened.close())
    expect(await reopened.derivedWith()).toBe(2)
  })

  it('keeps nothing about a session or project whose events are all deleted, once re-derived', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const file = path.join(t.dir, 'k.db')
    const store = openSqliteStore({ path: file })
    await store.append([
      { event: event('k1'), derive: derive('kept') },
      { event: { ...event('k2'), sessionKey: 's2', project: { root: '/p/b', name: 'b' } }, derive: derive('deleted') },
    ])
    const kept = () => new Database(file, { readonly: true }).prepare('SELECT identity FROM kept_ids ORDER BY identity').pluck().all()
    expect(kept()).toHaveLength(4)
    await store.deleteEvents({ projectRoot: '/p/b' })
    await store.rebuild(derive('re-derived'))
    await store.close()
    expect(kept()).toEqual(['project\u0000/p/a', 'session\u0000claude-code\u0000s1\u0000/p/a'])
  })

  it('refuses a file a newer mnemo wrote (a schema version it does not know), writing nothing', async () => {
    const file = await fileAtVersion('newer.db', MIGRATIONS.at(-1)!.version + 1, '')
    for (const readonly of [false, true]) {
      expect(() => openSqliteStore({ path: file, readonly })).toThrow(
        expect.objectContaining({
          code: 'STORE_UNAVAILABLE',
          message: expect.stringContaining(
            `written by a newer mnemo (schema version ${MIGRATIONS.at(-1)!.version + 1}; this mnemo knows up to ${MIGRATIONS.at(-1)!.version})`,
          ),
        }),
      )
    }
  })

  it('stores a long tool output compressed and reads it back whole through every reader', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const file = path.join(t.dir, 'texts.db')
    const store = openSqliteStore({ path: file })
    cleanups.push(() => store.close())
    const output = Array.from({ length: 120 }, (_, i) => `PASS src/test-${i}.ts (${i} ms) é 🔴`).join('\n')
    const short = 'PASS src/one.ts'
    const tool = (text: string) => (): Derivation => ({
      observations: [{ kind: 'tool_result', role: 'tool', tool: 'Bash', text, index: { body: text, parts: '', meta: '' }, entities: [] }],
    })
    await store.append([
      { event: event('long'), derive: tool(output) },
      { event: event('short', 2_000), derive: tool(short) },
    ])
    const raw = new Database(file, { readonly: true })
    cleanups.push(() => raw.close())
    expect(raw.prepare('SELECT typeof(text) FROM observations ORDER BY rowid').pluck().all()).toEqual(['blob', 'text'])
    expect(output.length).toBeGreaterThan(3000)
    const [project] = await store.listProjects()
    const rows = await store.browseObservations({ projectIds: [project!.id], order: 'asc', limit: 10 })
    expect(rows.map((r) => r.text)).toEqual([output, short])
    expect((await store.getObservation(rows[0]!.id))?.text).toBe(output)
    expect((await store.sessionObservations(rows[0]!.sessionId, 10)).map((o) => o.text)).toEqual([output, short])
    expect((await store.sessionObservationsPage(rows[0]!.sessionId, 0, 10)).map((o) => o.text)).toEqual([output, short])
    const [hit] = await store.searchText({ match: '"test"', limit: 5 })
    expect((await store.docs([hit!.docKey]))[0]?.text).toBe(output)
    expect(await store.projectTexts(project!.id, 10)).toEqual([short, output])
    expect((await store.docsWithoutVector('space', {}, 10)).map((d) => d.text)).toEqual([output, short])
  })

  it('scores a search after a delete as a store that never held the deleted document does (the index keeps no text)', async () => {
    const texts = ['alpha bravo charlie delta', 'alpha echo', 'alpha foxtrot golf hotel india', 'alpha juliet']
    const batch = texts.map((text, i) => ({ event: event(`k${i}`, 1_000 + i), derive: derive(text) }))
    const store = openSqliteStore({ path: ':memory:' })
    const fresh = openSqliteStore({ path: ':memory:' })
    cleanups.push(
      () => store.close(),
      () => fresh.close(),
    )
    await store.append(batch)
    await fresh.append(batch.filter((_, i) => i !== 0 && i !== 2))
    await store.deleteEvents({ seqs: [1] })
    await store.deleteEvents({ seqs: [3] })
    const scores = async (s: typeof store) => (await s.searchText({ match: '"alpha"', limit: 10 })).map((m) => m.score)
    expect(await scores(store)).toHaveLength(2)
    expect(await scores(store)).toEqual(await scores(fresh))
  })

  it('persists across reopen, migrates once, and passes the integrity check', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const file = path.join(t.dir, 'm.db')
    const a = openSqliteStore({ path: file })
    await a.append([{ event: event('k1'), derive: derive('hello world') }])
    await a.close()
    const b = openSqliteStore({ path: file })
    expect(await b.stats()).toMatchObject({ events: 1, sessions: 1, observations: 1, projects: 1 })
    expect(await b.integrityCheck()).toBe('ok')
    expect(await b.searchText({ match: '"hello"', limit: 5 })).toHaveLength(1)
    await b.close()
  })

  it('gives a connection the page cache it is asked for (KiB), read-write and read-only, and SQLite’s default otherwise', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const file = path.join(t.dir, 'm.db')
    const cacheOf = (store: object): unknown => (store as { s: SqliteDb }).s.db.pragma('cache_size', { simple: true })
    const plain = openSqliteStore({ path: file })
    const small = openSqliteStore({ path: file, pageCacheKib: 4096 })
    const reader = openSqliteStore({ path: file, readonly: true, pageCacheKib: 1024.7 })
    expect([cacheOf(plain), cacheOf(small), cacheOf(reader)]).toEqual([-16_000, -4096, -1024])
    await Promise.all([plain.close(), small.close(), reader.close()])
  })

  it('treats a repeated idempotency key in one batch as a duplicate and does not derive it again', async () => {
    const store = openSqliteStore({ path: ':memory:' })
    let derived = 0
    const r = await store.append([
      {
        event: event('same'),
        derive: () => {
          derived++
          return derive('one')()
        },
      },
      {
        event: event('same'),
        derive: () => {
          derived++
          return derive('two')()
        },
      },
    ])
    expect(r).toMatchObject({ inserted: 1, duplicates: 1, observations: 1 })
    expect(r.seqs).toEqual([1, undefined])
    expect(derived).toBe(1)
  })

  it('writes nothing from a batch whose derivation fails', async () => {
    const store = openSqliteStore({ path: ':memory:' })
    await expect(
      store.append([
        { event: event('ok'), derive: derive('fine') },
        {
          event: event('bad'),
          derive: () => {
            throw new Error('boom')
          },
        },
      ]),
    ).rejects.toThrow(expect.objectContaining({ code: 'STORE_UNAVAILABLE' }))
    expect(await store.stats()).toMatchObject({ events: 0, observations: 0, sessions: 0 })
  })

  it('keeps session bounds as the earliest and latest event time', async () => {
    const store = openSqliteStore({ path: ':memory:' })
    await store.append([{ event: event('b', 5_000), derive: derive('later') }])
    await store.append([{ event: event('a', 2_000), derive: derive('earlier') }])
    const [s] = await store.listSessions({ limit: 5 })
    expect(s).toMatchObject({ startedAt: 2_000, lastEventAt: 5_000, observationCount: 2, title: 'later' })
  })

  it('gives the no-wait window to the writes inside withoutLockWait, through its awaits, and to none after it', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const file = path.join(t.dir, 'lock.db')
    const store = openSqliteStore({ path: file, busyTimeoutMs: 60_000 })
    cleanups.push(() => store.close())
    const other = new Database(file)
    cleanups.push(() => other.close())
    other.exec('BEGIN IMMEDIATE')
    // With the other connection's lock held, a waiting write would block a minute: these fail at once.
    const inside = store.withoutLockWait(async () => {
      await Promise.resolve()
      await store.append([{ event: event('k1'), derive: derive('before the lock is gone') }])
    })
    await expect(inside).rejects.toThrow(expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining('locked') }))
    await expect(store.withoutLockWait(() => store.audit({ at: 1, actor: 'cli', action: 'test', target: '*', count: 0 }))).rejects.toThrow(
      expect.objectContaining({ code: 'STORE_UNAVAILABLE' }),
    )
    other.exec('ROLLBACK')
    expect(await store.append([{ event: event('k1'), derive: derive('after') }])).toMatchObject({ inserted: 1 })
    expect(await store.withoutLockWait(async () => (await store.stats()).events)).toBe(1)
  })

  it('wraps an unopenable path as STORE_UNAVAILABLE', async () => {
    expect(() => openSqliteStore({ path: '/proc/definitely/not/here.db' })).toThrow(
      expect.objectContaining({ code: 'STORE_UNAVAILABLE', details: { dialect: 'sqlite', operation: 'open' } }),
    )
  })
})
