import { MnemoError } from '../../core/errors.js'
import type { EventFormat } from '../../core/types.js'
import type { EventRow } from '../rows.js'
import type { EventFilter, StepSession, StoredEvent } from '../store.js'
import type { PgDb } from './pg-db.js'
import { removeDerived } from './pg-docs.js'
import { eventConditions, first, Params, type Queryable, rows, scopeWhere, toStoredEvent } from './pg-sql.js'
import { otherPathRecords, type PgWriteParts, pruneKeptIds, sessionIdOf } from './pg-write.js'

// The event log on PostgreSQL: reads, governance deletes with tombstones, payload rewrites and folding, and the
// step lookups of the one-copy rule. The same rules as sqlite-log.ts.

/** Events read per page by the in-place rewrites. */
const PAGE = 1000

export async function readEvents(db: PgDb, afterSeq: number, limit: number): Promise<StoredEvent[]> {
  const r = await db.query<EventRow>('read events', 'SELECT * FROM events WHERE seq > $1 ORDER BY seq LIMIT $2', [afterSeq, limit])
  return r.rows.map(toStoredEvent)
}

export async function readScopedEvents(
  db: PgDb,
  afterSeq: number,
  limit: number,
  scope: { projectRoot?: string; user?: string | null },
): Promise<StoredEvent[]> {
  const p = new Params()
  let where = `seq > ${p.add(afterSeq)}`
  if (scope.projectRoot !== undefined) where += ` AND project_root = ${p.add(scope.projectRoot)}`
  where += scopeWhere(scope.user === undefined ? {} : { user: scope.user }, (column) => column, p)
  const r = await db.query<EventRow>('read events', `SELECT * FROM events WHERE ${where} ORDER BY seq LIMIT ${p.add(limit)}`, p.values)
  return r.rows.map(toStoredEvent)
}

export async function lastEventSeq(db: PgDb): Promise<number> {
  return (await db.query<{ n: number }>('last event', 'SELECT COALESCE(MAX(seq), 0) AS n FROM events')).rows[0]?.n ?? 0
}

export async function observationIdsOfEvents(db: PgDb, filter: EventFilter & { projectRoot: string }): Promise<string[]> {
  const p = new Params()
  const where = eventConditions(filter, p, 'e.')
  const r = await db.query<{ id: string }>(
    'observations of events',
    `SELECT o.id FROM observations o JOIN events e ON e.seq = o.event_seq WHERE ${where.join(' AND ')} ORDER BY o.rowid`,
    p.values,
  )
  return r.rows.map((row) => row.id)
}

export async function eventsHaveCopies(db: PgDb, seqs: readonly number[]): Promise<boolean> {
  if (seqs.length === 0) return false
  const r = await db.query(
    'copies of events',
    'SELECT 1 FROM observation_copies c JOIN observations o ON o.rowid = c.observation_rowid WHERE o.event_seq = ANY($1::bigint[]) LIMIT 1',
    [seqs],
  )
  return r.rows.length > 0
}

export async function stepRecords(
  db: PgDb,
  session: StepSession,
  origin: string,
  step: { sourceRef?: string; kind: string; text: string; ts: number },
): Promise<string[]> {
  return db.read('step records', async (c) => {
    const sessionId = await sessionIdOf(c, session)
    if (sessionId === undefined) return []
    return (await otherPathRecords(c, sessionId, origin, step))
      .sort((a, b) => a.ts - b.ts || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((r) => r.id)
  })
}

export async function stepOf(db: PgDb, observationId: string): Promise<{ origin: string | undefined; session: StepSession } | undefined> {
  const r = await db.query<{ origin: string | null; projectRoot: string; agent: string; key: string }>(
    'step of',
    `SELECT o.origin, p.root AS "projectRoot", se.agent, se.session_key AS key
     FROM observations o JOIN sessions se ON se.id = o.session_id JOIN projects p ON p.id = se.project_id WHERE o.id = $1`,
    [observationId],
  )
  const row = r.rows[0]
  return row ? { origin: row.origin ?? undefined, session: { projectRoot: row.projectRoot, agent: row.agent, key: row.key } } : undefined
}

export async function sourceEventOf(db: PgDb, id: string): Promise<number | undefined> {
  const r = await db.query<{ seq: number }>(
    'source event',
    'SELECT event_seq AS seq FROM observations WHERE id = $1 UNION ALL SELECT event_seq FROM memories WHERE id = $1 LIMIT 1',
    [id],
  )
  return r.rows[0]?.seq
}

/**
 * See `EventLog.deleteEvents`: in one transaction, each event's derived rows, then the event; its key becomes a
 * tombstone. Deleting a middle version of a memory relinks its neighbours; deleting the current one makes the one it
 * replaced current again (as a rebuild would derive). A project left without events goes with what hangs on it.
 * @throws {MnemoError} `INVALID_INPUT` (path `scope`) — the filter names nothing (it would delete every event).
 */
export async function deleteEvents(db: PgDb, parts: PgWriteParts, filter: EventFilter): Promise<number> {
  if (filter.seqs && filter.seqs.length === 0) return 0
  const p = new Params()
  const where = eventConditions(filter, p)
  if (where.length === 0)
    throw new MnemoError('INVALID_INPUT', 'a delete needs a scope (ids, project, session or time)', { details: { path: 'scope' } })
  return db.transaction('delete', async (c) => {
    const doomed = await rows<{ seq: number; idem_key: string; project_root: string }>(
      c,
      `SELECT seq, idem_key, project_root FROM events WHERE ${where.join(' AND ')} ORDER BY seq`,
      p.values,
    )
    for (const r of doomed) {
      for (const o of await rows<{ id: string }>(c, 'SELECT id FROM observations WHERE event_seq = $1 ORDER BY rowid', [r.seq]))
        await removeDerived(c, o.id)
      const memories = await rows<{ id: string; superseded_by: string | null }>(
        c,
        'SELECT id, superseded_by FROM memories WHERE event_seq = $1 ORDER BY rowid',
        [r.seq],
      )
      for (const m of memories) {
        await removeDerived(c, m.id)
        const next = m.superseded_by
          ? await first<{ id: string; valid_from: number }>(c, 'SELECT id, valid_from FROM memories WHERE id = $1', [m.superseded_by])
          : undefined
        if (next) {
          // A middle version goes: the one before it is now superseded by the one after it.
          await c.query('UPDATE memories SET superseded_by = $1, valid_to = $2 WHERE superseded_by = $3', [next.id, next.valid_from, m.id])
          const before = await first<{ id: string }>(c, 'SELECT id FROM memories WHERE superseded_by = $1 ORDER BY rowid LIMIT 1', [
            next.id,
          ])
          await c.query('UPDATE memories SET supersedes = $1 WHERE id = $2', [before?.id ?? null, next.id])
        } else {
          // The current version goes: the one it replaced is current again.
          await c.query('UPDATE memories SET valid_to = NULL, superseded_by = NULL WHERE superseded_by = $1', [m.id])
        }
      }
      await c.query('DELETE FROM observation_copies WHERE event_seq = $1', [r.seq])
      await parts.facts.removeOfEvent(c, r.seq)
      await c.query('INSERT INTO tombstones (idem_key, at, project_root) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        r.idem_key,
        db.now(),
        r.project_root,
      ])
      await c.query('DELETE FROM events WHERE seq = $1', [r.seq])
    }
    for (const root of new Set(doomed.map((r) => r.project_root))) await dropProjectIfEmpty(c, root)
    return doomed.length
  })
}

/** A project none of whose events is left goes with its sessions, entities, LSA model and kept ids (as a rebuild leaves it). */
async function dropProjectIfEmpty(c: Queryable, root: string): Promise<void> {
  if ((await first(c, 'SELECT 1 FROM events WHERE project_root = $1 LIMIT 1', [root])) !== undefined) return
  const id = (await first<{ id: string }>(c, 'SELECT id FROM projects WHERE root = $1', [root]))?.id
  if (id === undefined) return
  const observations = await rows<{ id: string }>(
    c,
    'SELECT o.id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.project_id = $1 ORDER BY o.rowid',
    [id],
  )
  for (const o of observations) await removeDerived(c, o.id)
  await c.query('DELETE FROM sessions WHERE project_id = $1', [id])
  await c.query('DELETE FROM entity_mentions WHERE entity_id IN (SELECT id FROM entities WHERE project_id = $1)', [id])
  await c.query('DELETE FROM entities WHERE project_id = $1', [id])
  await c.query('DELETE FROM lsa_models WHERE project_id = $1', [id])
  await c.query('DELETE FROM projects WHERE id = $1', [id])
  await pruneKeptIds(c)
}

/** See `EventLog.rewritePayloads`: one transaction; an event whose new payload serialises the same is left alone. */
export async function rewritePayloads(db: PgDb, fn: (payload: unknown) => unknown): Promise<number> {
  return db.transaction('rewrite payloads', async (c) => {
    let changed = 0
    let after = 0
    for (;;) {
      const page = await rows<{ seq: number; payload: string }>(c, 'SELECT seq, payload FROM events WHERE seq > $1 ORDER BY seq LIMIT $2', [
        after,
        PAGE,
      ])
      if (page.length === 0) break
      for (const row of page) {
        after = row.seq
        const next = fn(JSON.parse(row.payload) as unknown)
        if (next === undefined) continue
        const text = JSON.stringify(next)
        if (text === row.payload) continue
        await c.query('UPDATE events SET payload = $1 WHERE seq = $2', [text, row.seq])
        changed++
      }
    }
    return changed
  })
}

/**
 * See `EventLog.foldEvents`. Bytes are the payloads' stored sizes (`pg_column_size`: after PostgreSQL's own
 * compression of large values), before and after.
 */
export async function foldEvents(
  db: PgDb,
  options: { before: number; projectRoot?: string; user?: string | null },
  fold: (event: StoredEvent) => { format: EventFormat; payload: unknown } | undefined,
): Promise<{ events: number; bytesBefore: number; bytesAfter: number }> {
  return db.transaction('fold events', async (c) => {
    const out = { events: 0, bytesBefore: 0, bytesAfter: 0 }
    let after = 0
    for (;;) {
      const p = new Params()
      let where = `seq > ${p.add(after)} AND ts < ${p.add(options.before)}`
      if (options.projectRoot !== undefined) where += ` AND project_root = ${p.add(options.projectRoot)}`
      if (options.user === null) where += ' AND user_id IS NULL'
      else if (options.user !== undefined) where += ` AND user_id = ${p.add(options.user)}`
      const page = await rows<EventRow & { bytes: number }>(
        c,
        `SELECT *, pg_column_size(payload) AS bytes FROM events WHERE ${where} ORDER BY seq LIMIT ${p.add(PAGE)}`,
        p.values,
      )
      if (page.length === 0) break
      for (const row of page) {
        after = row.seq
        const next = fold(toStoredEvent(row))
        if (next === undefined) continue
        const written = await first<{ bytes: number }>(
          c,
          'UPDATE events SET format = $1, payload = $2 WHERE seq = $3 RETURNING pg_column_size(payload) AS bytes',
          [next.format, JSON.stringify(next.payload ?? null), row.seq],
        )
        out.events++
        out.bytesBefore += row.bytes
        out.bytesAfter += written?.bytes ?? 0
      }
    }
    return out
  })
}

export async function tombstones(
  db: PgDb,
  projectRoot?: string,
): Promise<{ idemKey: string; at: number; projectRoot: string | undefined }[]> {
  const r =
    projectRoot === undefined
      ? await db.query<{ idem_key: string; at: number; project_root: string | null }>(
          'tombstones',
          'SELECT idem_key, at, project_root FROM tombstones ORDER BY at, idem_key',
        )
      : await db.query<{ idem_key: string; at: number; project_root: string | null }>(
          'tombstones',
          'SELECT idem_key, at, project_root FROM tombstones WHERE project_root = $1 ORDER BY at, idem_key',
          [projectRoot],
        )
  return r.rows.map((t) => ({ idemKey: t.idem_key, at: t.at, projectRoot: t.project_root ?? undefined }))
}

export async function putTombstones(
  db: PgDb,
  list: readonly { idemKey: string; at: number; projectRoot: string | undefined }[],
): Promise<void> {
  if (list.length === 0) return
  await db.transaction('put tombstones', async (c) => {
    await c.query(
      `INSERT INTO tombstones (idem_key, at, project_root)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) ON CONFLICT DO NOTHING`,
      [list.map((t) => t.idemKey), list.map((t) => t.at), list.map((t) => t.projectRoot ?? null)],
    )
  })
}
