import { type EventRow, splitStoredKey } from '../rows.js'
import type { Derivation, StepSession, StoredEvent } from '../store.js'
import type { PgDb } from './pg-db.js'
import { removeDerived } from './pg-docs.js'
import { Params, type Queryable, rows, same, toStoredEvent } from './pg-sql.js'
import { apply, type PgWriteParts, pruneKeptIds, sessionIdOf } from './pg-write.js'

// Re-deriving from the log: the whole store (rebuild) or one session, each in one transaction under the write lock.

/** Events read per page while replaying the log (they are held in memory one page at a time). */
const PAGE = 1000

/** The derived tables a rebuild empties (not the log, tombstones, audit, kept ids, usage, injections, store facts). */
const DERIVED_TABLES = [
  'search_docs',
  'entity_mentions',
  'entities',
  'doc_vectors',
  'lsa_models',
  'observation_copies',
  'observations',
  'memories',
  'sessions',
  'projects',
]

async function replay(c: Queryable, parts: PgWriteParts, row: EventRow, derive: (event: StoredEvent) => Derivation): Promise<number> {
  const event = toStoredEvent(row)
  return (await apply(c, parts, event, row.seq, derive(event))).added
}

/**
 * See `EventLog.rebuild`: deletes every derived row and re-applies `derive` to each logged event in order, in one
 * transaction (readers see the old rows until it commits: DELETE, not TRUNCATE, so reads never wait for it).
 */
export async function rebuild(
  db: PgDb,
  parts: PgWriteParts,
  derive: (event: StoredEvent) => Derivation,
  derivedWith?: number,
): Promise<{ events: number; observations: number }> {
  return db.transaction('rebuild', async (c) => {
    for (const table of DERIVED_TABLES) await c.query(`DELETE FROM ${table}`)
    await parts.facts.clear(c)
    let events = 0
    let observations = 0
    let after = 0
    for (;;) {
      const page = await rows<EventRow>(c, 'SELECT * FROM events WHERE seq > $1 ORDER BY seq LIMIT $2', [after, PAGE])
      if (page.length === 0) break
      for (const row of page) {
        observations += await replay(c, parts, row, derive)
        events++
        after = row.seq
      }
    }
    await pruneKeptIds(c)
    if (derivedWith !== undefined) {
      await c.query(
        "INSERT INTO store_meta (key, value) VALUES ('derived_with', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        [String(derivedWith)],
      )
    }
    return { events, observations }
  })
}

/** See `EventLog.rederiveSession`: the session's rows go and its events are replayed, the rest of the store untouched. */
export async function rederiveSession(
  db: PgDb,
  parts: PgWriteParts,
  session: StepSession,
  derive: (event: StoredEvent) => Derivation,
): Promise<number> {
  return db.transaction('re-derive session', async (c) => {
    const id = await sessionIdOf(c, session)
    if (id !== undefined) {
      for (const o of await rows<{ id: string }>(c, 'SELECT id FROM observations WHERE session_id = $1', [id])) await removeDerived(c, o.id)
      await c.query('DELETE FROM sessions WHERE id = $1', [id])
    }
    const { key, user } = splitStoredKey(session.key)
    const p = new Params()
    const events = await rows<EventRow>(
      c,
      `SELECT * FROM events WHERE project_root = ${p.add(session.projectRoot)} AND agent = ${p.add(session.agent)} AND session_key = ${p.add(key)} AND ${same('user_id', user, p)} ORDER BY seq`,
      p.values,
    )
    let observations = 0
    for (const row of events) observations += await replay(c, parts, row, derive)
    await pruneKeptIds(c)
    return observations
  })
}
