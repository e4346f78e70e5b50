import { makeId, type ProjectId, type SessionId } from '../../core/ids.js'
import { oneLine, SESSION_TITLE_CHARS } from '../../core/text.js'
import type { EventInput, StepPart } from '../../core/types.js'
import { storedSessionKey } from '../rows.js'
import { type AppendItem, type AppendResult, CROSS_PATH_WINDOW_MS, type Derivation, type StepSession } from '../store.js'
import type { PgDb } from './pg-db.js'
import { docInsert, mention, type PgDocColumn } from './pg-docs.js'
import { applyMemory, applyMemoryOp } from './pg-memory-write.js'
import { first, one, Params, type Queryable, rows, same } from './pg-sql.js'

// Appending events and applying their derivations on PostgreSQL: observations, their search documents, entities,
// memories and the write guard, sessions, the one-copy-per-step matching. The same rules as sqlite-write.ts, statement
// for statement, so both dialects derive the same rows (same ids) from the same log.

/** What the fact ledger's part of the dialect (pg-facts*.ts) does inside the store's transactions. */
interface PgFactWrites {
  /** Applies one event's fact operations inside the append's (or rebuild's) transaction. */
  apply(c: Queryable, event: EventInput, seq: number, ops: NonNullable<Derivation['facts']>): Promise<void>
  /** Removes the fact rows one event wrote (a governance delete of that event). */
  removeOfEvent(c: Queryable, seq: number): Promise<void>
  /** Empties the fact tables (a rebuild re-derives them). */
  clear(c: Queryable): Promise<void>
}

/** The other parts of the dialect the derivation writes through, inside the same transaction. */
export interface PgWriteParts {
  facts: PgFactWrites
  /** Extra columns of a search document (none: the base schema's only). */
  docColumns: readonly PgDocColumn[]
}

type Batch = readonly AppendItem[]

/** See `EventLog.append`: one transaction under the store's write lock; a derive that throws leaves nothing written. */
export async function append(db: PgDb, parts: PgWriteParts, batch: Batch): Promise<AppendResult> {
  return db.transaction('append', async (c) => {
    const result: AppendResult = { inserted: 0, duplicates: 0, observations: 0, covered: 0, seqs: [], perEvent: [] }
    const now = db.now()
    for (const { event, derive, receivedAt: given, sameAs } of batch) {
      const receivedAt = given ?? now
      // One statement: not a tombstoned key, none of its sameAs keys stored, and not stored already (ON CONFLICT).
      const inserted = await first<{ seq: number }>(
        c,
        `INSERT INTO events (idem_key, agent, format, type, session_key, project_root, project_name, ts, session_started_at, received_at, payload, user_id)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8::bigint, $9::bigint, $10::bigint, $11, $12
         WHERE NOT EXISTS (SELECT 1 FROM tombstones WHERE idem_key = $1)
           AND NOT EXISTS (SELECT 1 FROM events WHERE idem_key = ANY($13::text[]))
         ON CONFLICT (idem_key) DO NOTHING RETURNING seq`,
        [
          event.idemKey,
          event.agent,
          event.format,
          event.type,
          event.sessionKey,
          event.project.root,
          event.project.name,
          event.ts,
          event.sessionStartedAt ?? null,
          receivedAt,
          JSON.stringify(event.payload ?? null),
          event.user ?? null,
          sameAs ?? [],
        ],
      )
      if (inserted === undefined) {
        result.duplicates++
        result.seqs.push(undefined)
        result.perEvent.push({ observations: 0, covered: 0 })
        continue
      }
      result.inserted++
      result.seqs.push(inserted.seq)
      const applied = await apply(c, parts, event, inserted.seq, derive())
      result.observations += applied.added
      result.covered += applied.covered
      result.perEvent.push({ observations: applied.added, covered: applied.covered })
    }
    return result
  })
}

/** Applies one event's derivation; returns how many observations it added and how many another capture path had stored. */
export async function apply(
  c: Queryable,
  parts: PgWriteParts,
  event: EventInput,
  seq: number,
  d: Derivation,
): Promise<{ added: number; covered: number }> {
  const projectId = await ensureProject(c, event)
  const sessionId = await ensureSession(c, event, projectId, d)
  const user = event.user ?? null
  let added = 0
  let covered = 0
  for (const [i, o] of d.observations.entries()) {
    const ts = o.ts ?? event.ts
    const stored = d.origin !== undefined ? await storedByOtherPath(c, sessionId, d.origin, o, ts) : []
    if (stored.length > 0) {
      for (const rowid of stored)
        await c.query('INSERT INTO observation_copies (observation_rowid, event_seq, origin) VALUES ($1, $2, $3)', [rowid, seq, d.origin])
      covered++
      continue
    }
    // The index in the id is the derivation's, so ids stay the same whatever was covered.
    const id = makeId('obs', ts, `${event.idemKey}#${i}`)
    const flags = o.flags && o.flags.length > 0 ? o.flags.join(',') : null
    const p = new Params()
    const v = {
      id: p.add(id),
      kind: p.add(o.kind),
      role: p.add(o.role),
      projectId: p.add(projectId),
      sessionId: p.add(sessionId),
      user: p.add(user),
      agent: p.add(event.agent),
      ts: p.add(ts),
      flags: p.add(flags),
    }
    const values = [
      v.id,
      p.add(seq),
      v.sessionId,
      v.projectId,
      v.kind,
      v.role,
      p.add(o.tool ?? null),
      p.add(o.files && o.files.length > 0 ? JSON.stringify(o.files) : null),
      p.add(o.sourceRef ?? null),
      v.ts,
      p.add(o.text),
      v.flags,
      v.user,
      v.agent,
      p.add(d.origin ?? null),
      p.add(o.part ?? null),
    ]
    // The row and its search document in one statement.
    const row = await one<{ doc_key: number }>(
      c,
      `WITH o AS (
         INSERT INTO observations (id, event_seq, session_id, project_id, kind, role, tool, files, source_ref, ts, text, flags, user_id, agent, origin, part)
         VALUES (${values.join(', ')}) RETURNING rowid
       )
       ${docInsert(p, parts, o.index, 'o.rowid', 'observation', { ...v, sessionId: v.sessionId })} FROM o RETURNING doc_key`,
      p.values,
    )
    const docKey = row.doc_key
    await mention(c, projectId, docKey, o.entities)
    added++
    if (o.kind === 'prompt') {
      await c.query('UPDATE sessions SET title = $1 WHERE id = $2 AND title IS NULL', [oneLine(o.text, SESSION_TITLE_CHARS), sessionId])
    }
  }
  if (d.memory) await applyMemory(c, parts, event, seq, projectId, d.memory)
  for (const op of d.memoryOps ?? []) await applyMemoryOp(c, op, event.ts, event.user ?? null)
  if (d.facts) await parts.facts.apply(c, event, seq, d.facts)
  return { added, covered }
}

/**
 * The observations of the session through which a capture path other than `origin` already stored this one (empty:
 * it is new): sqlite-write.ts's `storedByOtherPath` — a tool call by `sourceRef` when the other path's rows hold its
 * part, a prompt or message by kind and text within `CROSS_PATH_WINDOW_MS`, one copy per stored row and path.
 */
async function storedByOtherPath(
  c: Queryable,
  sessionId: SessionId,
  origin: string,
  o: Derivation['observations'][number],
  ts: number,
): Promise<number[]> {
  if (o.sourceRef === undefined && o.kind !== 'prompt' && o.kind !== 'message') return []
  // One index probe settles the common case: a session captured through one path only.
  const other = await first(c, 'SELECT 1 FROM observations WHERE session_id = $1 AND origin IS NOT NULL AND origin <> $2 LIMIT 1', [
    sessionId,
    origin,
  ])
  if (other === undefined) return []
  const found = await otherPathRecords(c, sessionId, origin, { ...o, ts })
  if (o.sourceRef !== undefined) {
    const parts = new Set(found.map((r) => r.part ?? 'whole'))
    const need = o.part ?? 'whole'
    const held = parts.has('whole') || (need === 'whole' ? parts.has('call') && parts.has('result') : parts.has(need))
    return held ? found.map((r) => r.rowid) : []
  }
  // The nearest one not yet standing for a copy from this path.
  for (const r of found) {
    const taken = await first(c, 'SELECT 1 FROM observation_copies WHERE observation_rowid = $1 AND origin = $2', [r.rowid, origin])
    if (taken === undefined) return [r.rowid]
  }
  return []
}

/**
 * The observations of a session through which a capture path other than `origin` recorded the same step: the same
 * `sourceRef` (in time order), or without one the same kind and text within `CROSS_PATH_WINDOW_MS` of `ts` (nearest
 * first). Rows of an unknown path (`origin` NULL) never match.
 */
export async function otherPathRecords(
  c: Queryable,
  sessionId: SessionId,
  origin: string,
  step: { sourceRef?: string | undefined; kind: string; text: string; ts: number },
): Promise<{ rowid: number; id: string; ts: number; part: StepPart | null }[]> {
  if (step.sourceRef !== undefined) {
    return rows(
      c,
      'SELECT rowid, id, ts, part FROM observations WHERE session_id = $1 AND source_ref = $2 AND origin <> $3 ORDER BY ts, id',
      [sessionId, step.sourceRef, origin],
    )
  }
  return rows(
    c,
    `SELECT rowid, id, ts, part FROM observations
     WHERE session_id = $1 AND ts BETWEEN $2 AND $3 AND kind = $4 AND text = $5 AND origin <> $6 ORDER BY abs(ts - $7), rowid`,
    [sessionId, step.ts - CROSS_PATH_WINDOW_MS, step.ts + CROSS_PATH_WINDOW_MS, step.kind, step.text, origin, step.ts],
  )
}

/** The id a session has now, found by what identifies it (see `StepSession`); undefined when it has no row. */
export async function sessionIdOf(c: Queryable, session: StepSession): Promise<SessionId | undefined> {
  const row = await first<{ id: SessionId }>(
    c,
    'SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id WHERE p.root = $1 AND s.agent = $2 AND s.session_key = $3',
    [session.projectRoot, session.agent, session.key],
  )
  return row?.id
}

/** The identity under which a project's or session's id is kept (`kept_ids`): a JSON array, unambiguous for any text. */
function keptIdentity(thing: { projectRoot: string } | { projectRoot: string; agent: string; key: string }): string {
  return JSON.stringify('key' in thing ? ['session', thing.agent, thing.key, thing.projectRoot] : ['project', thing.projectRoot])
}

/** The id a project or session was first given, else `fresh()` (then kept), as sqlite-write.ts's `keptId`. */
async function keptId<T extends string>(c: Queryable, identity: string, fresh: () => Promise<T>): Promise<T> {
  const kept = await first<{ id: T }>(c, 'SELECT id FROM kept_ids WHERE identity = $1', [identity])
  if (kept !== undefined) return kept.id
  const id = await fresh()
  await c.query('INSERT INTO kept_ids (identity, id) VALUES ($1, $2)', [identity, id])
  return id
}

/** Forgets the kept ids of projects and sessions that no longer exist (their events are all gone). */
export async function pruneKeptIds(c: Queryable): Promise<void> {
  await c.query(
    'DELETE FROM kept_ids k WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = k.id) AND NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = k.id)',
  )
}

async function ensureProject(c: Queryable, event: EventInput): Promise<ProjectId> {
  const found = await first<{ id: ProjectId }>(c, 'SELECT id FROM projects WHERE root = $1', [event.project.root])
  if (found) return found.id
  const id = await keptId(c, keptIdentity({ projectRoot: event.project.root }), async () => makeId('prj', event.ts, event.project.root))
  await c.query('INSERT INTO projects (id, root, name) VALUES ($1, $2, $3)', [id, event.project.root, event.project.name])
  return id
}

/** The session of an event, created on its first event; a user's sessions are keyed in the user's namespace (see sqlite-write.ts). */
async function ensureSession(c: Queryable, event: EventInput, projectId: ProjectId, d: Derivation): Promise<SessionId> {
  const user = event.agent === 'mnemo' ? null : (event.user ?? null)
  const key = storedSessionKey(event.sessionKey, user)
  const startedAt = event.sessionStartedAt ?? event.ts
  const p = new Params()
  // An existing session's times widen in the same statement that finds it.
  const found = await first<{ id: SessionId }>(
    c,
    `UPDATE sessions SET last_event_at = GREATEST(last_event_at, ${p.add(event.ts)}), started_at = LEAST(started_at, ${p.add(startedAt)})
     WHERE agent = ${p.add(event.agent)} AND session_key = ${p.add(key)} AND project_id = ${p.add(projectId)} AND ${same('user_id', user, p)} RETURNING id`,
    p.values,
  )
  let id: SessionId
  if (found) {
    id = found.id
  } else {
    id = await keptId(c, keptIdentity({ projectRoot: event.project.root, agent: event.agent, key }), async () => {
      // The first project of a session keeps the plain seed; another project's part gets its own id.
      const first_ =
        (await first(c, 'SELECT 1 FROM sessions WHERE agent = $1 AND session_key = $2 LIMIT 1', [event.agent, key])) === undefined
      return makeId('ses', startedAt, first_ ? `${event.agent}:${key}` : `${event.agent}:${key}\u0000${event.project.root}`)
    })
    await c.query(
      'INSERT INTO sessions (id, project_id, agent, session_key, started_at, last_event_at, user_id) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [id, projectId, event.agent, key, Math.min(startedAt, event.ts), Math.max(startedAt, event.ts), user],
    )
  }
  if (d.session?.ended) await c.query('UPDATE sessions SET ended_at = GREATEST(COALESCE(ended_at, 0), $1) WHERE id = $2', [event.ts, id])
  if (d.session?.title) await c.query('UPDATE sessions SET title = $1 WHERE id = $2 AND title IS NULL', [d.session.title, id])
  return id
}
