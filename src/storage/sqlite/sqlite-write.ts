import { makeId, type ProjectId, type SessionId } from '../../core/ids.js'
import { oneLine, SESSION_TITLE_CHARS } from '../../core/text.js'
import type { EntityRef, EventInput, StepPart } from '../../core/types.js'
import {
  type AppendItem,
  type AppendResult,
  CROSS_PATH_WINDOW_MS,
  type Derivation,
  type DeriveAhead,
  type StepSession,
  type StoredEvent,
} from '../store.js'
import type { SqliteDb } from './sqlite-db.js'
import { applyFacts, FACT_TABLES_SQL } from './sqlite-facts.js'
import { deleteFromIndex } from './sqlite-fts.js'
import {
  type EventRow,
  encodeObservationText,
  encodePayload,
  eventFromRow,
  type OldRow,
  payloadText,
  splitStoredKey,
  storedSessionKey,
  toStoredEvent,
  valueAfterSubject,
} from './sqlite-rows.js'

// Appending events and applying their derivations: observations, the full-text index, entities, memories and the write guard, sessions; and rebuild.

/**
 * What one write (an append batch, a rebuild, a session's re-derivation: one transaction) has already looked up, so
 * that applying event after event of one session does not ask the database again: project and session ids, entity
 * ids, whether a session holds observations of another capture path. Valid only inside that transaction (nothing
 * else writes then, and these writes never delete a project, a session or an entity). The bounds of the sessions it
 * touched are kept here and written once, by `finishWrite`.
 */
interface WriteContext {
  projects: Map<string, ProjectId>
  /** By agent NUL stored session key NUL project id NUL user. */
  sessions: Map<string, WriteSession>
  /** The same sessions by id. */
  sessionsById: Map<SessionId, WriteSession>
  /** By project id NUL type NUL name: the ids this write looked up or inserted. */
  entities: Map<string, number>
  /**
   * Ids committed before this write, keyed like `entities` (`SqliteDb.entityIds`, when still valid): an append reads
   * them instead of asking the database again for the entities of the batch before. Empty for other writes.
   */
  committedEntities: ReadonlyMap<string, number>
  /** Mentions to write (entity id, document key, …), in key order by `finishWrite`: inserts in index order touch each page once. */
  mentions: number[]
}

/** A session as a write sees it: its bounds and capture paths (`sessions.origins`), written by `finishWrite` when `changed`. */
interface WriteSession {
  id: SessionId
  startedAt: number
  lastEventAt: number
  origins: string[]
  changed: boolean
}

function newWrite(): WriteContext {
  return {
    projects: new Map(),
    sessions: new Map(),
    sessionsById: new Map(),
    entities: new Map(),
    committedEntities: new Map(),
    mentions: [],
  }
}

/** Most entity ids `SqliteDb.entityIds` keeps (past it, it starts again): ~30k for the 100k bench store. */
const MAX_KEPT_ENTITY_IDS = 200_000

/** The entity ids committed before now that are still valid (see `SqliteDb.entityIds`). Inside the write's transaction. */
function committedEntityIds(s: SqliteDb): Map<string, number> {
  const version = s.db.pragma('data_version', { simple: true }) as number
  if (s.entityIds.version !== version) s.entityIds = { version, ids: new Map() }
  return s.entityIds.ids
}

/**
 * Keeps the entity ids write `w` looked up or inserted, once its transaction has committed (never after a rollback,
 * which takes inserted entities back, nor inside an outer transaction, which still may).
 */
function keepEntityIds(s: SqliteDb, w: WriteContext): void {
  if (s.db.inTransaction) return
  const kept = s.entityIds.ids
  if (kept !== w.committedEntities) return
  if (kept.size + w.entities.size > MAX_KEPT_ENTITY_IDS) kept.clear()
  for (const [key, id] of w.entities) kept.set(key, id)
}

/** Writes the mentions, session bounds and capture paths `w` kept (see `WriteContext`). */
function finishWrite(s: SqliteDb, w: WriteContext): void {
  writeMentions(s, w)
  for (const session of w.sessions.values()) {
    if (!session.changed) continue
    s.stmt('UPDATE sessions SET started_at = ?, last_event_at = ?, origins = ? WHERE id = ?').run(
      session.startedAt,
      session.lastEventAt,
      session.origins.length > 0 ? session.origins.join(',') : null,
      session.id,
    )
    session.changed = false
  }
}

/**
 * Writes the mentions `w` kept, in key order, and empties its list: up to `MENTION_ROWS` per statement, or with
 * `oneRowEach` one per statement. A statement of several rows opens a statement journal, and with it a savepoint at
 * which FTS5 writes the terms it holds in memory to the index as a new segment; so a rebuild, which writes mentions
 * after every page, writes them one row each: the index's pages then stay those of one flush per transaction.
 */
function writeMentions(s: SqliteDb, w: WriteContext, oneRowEach = false): void {
  const pairs: [number, number][] = []
  for (let i = 0; i < w.mentions.length; i += 2) pairs.push([w.mentions[i]!, w.mentions[i + 1]!])
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  w.mentions = []
  if (oneRowEach) {
    const insert = s.stmt('INSERT INTO entity_mentions (entity_id, doc_key) VALUES (?, ?) ON CONFLICT DO NOTHING')
    for (const [entity, doc] of pairs) insert.run(entity, doc)
    return
  }
  for (let at = 0; at < pairs.length; at += MENTION_ROWS) {
    const chunk = pairs.slice(at, at + MENTION_ROWS)
    s.stmt(`INSERT INTO entity_mentions (entity_id, doc_key) VALUES ${chunk.map(() => '(?, ?)').join(', ')} ON CONFLICT DO NOTHING`).run(
      ...chunk.flat(),
    )
  }
}

export function append(s: SqliteDb, batch: readonly AppendItem[]): AppendResult {
  return s.guard('append', () => {
    const result: AppendResult = { inserted: 0, duplicates: 0, observations: 0, covered: 0, seqs: [], perEvent: [] }
    if (batch.length > 1) bulkPageCache(s)
    const w = newWrite()
    s.db
      .transaction(() => {
        const now = s.now()
        w.committedEntities = committedEntityIds(s)
        const stored = (key: string): boolean => s.stmt('SELECT 1 FROM events WHERE idem_key = ?').get(key) !== undefined
        for (const { event, derive, receivedAt: given, sameAs, storedPayload, storedTexts } of batch) {
          const receivedAt = given ?? now
          if (s.stmt('SELECT 1 FROM tombstones WHERE idem_key = ?').get(event.idemKey) || sameAs?.some(stored)) {
            result.duplicates++
            result.seqs.push(undefined)
            result.perEvent.push({ observations: 0, covered: 0 })
            continue
          }
          const info = s
            .stmt(
              `INSERT INTO events (idem_key, agent, format, type, session_key, project_root, project_name, ts, session_started_at, received_at, payload, user_id)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idem_key) DO NOTHING`,
            )
            .run(
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
              storedPayload ?? encodePayload(event.payload),
              event.user ?? null,
            )
          if (info.changes === 0) {
            result.duplicates++
            result.seqs.push(undefined)
            result.perEvent.push({ observations: 0, covered: 0 })
            continue
          }
          const seq = Number(info.lastInsertRowid)
          result.inserted++
          result.seqs.push(seq)
          const applied = apply(s, w, event, seq, derive(), storedTexts)
          result.observations += applied.added
          result.covered += applied.covered
          result.perEvent.push({ observations: applied.added, covered: applied.covered })
        }
        finishWrite(s, w)
      })
      .immediate()
    keepEntityIds(s, w)
    return result
  })
}

/**
 * Page cache of a connection that writes in bulk (an import's batches, a rebuild), KiB. SQLite's default is 2 MiB
 * (-2000): at 100k observations an index such as entity_mentions' is 11 MiB, so inserts at random places in it read
 * pages from the OS again and again. The cache grows only as pages are used, and a hook (one event per process)
 * never asks for it.
 */
const BULK_CACHE_KIB = 131_072

/** Connections already given the bulk page cache. */
const bulkConnections = new WeakSet<SqliteDb>()

/** Gives `s` the page cache of bulk writes (`BULK_CACHE_KIB`) for the rest of its life. */
function bulkPageCache(s: SqliteDb): void {
  if (bulkConnections.has(s)) return
  s.db.pragma(`cache_size = ${-BULK_CACHE_KIB}`)
  bulkConnections.add(s)
}

/**
 * Applies one event's derivation (`texts`: its observations' texts already encoded, see `AppendItem.storedTexts`);
 * returns how many observations it added and how many another capture path had stored.
 */
function apply(
  s: SqliteDb,
  w: WriteContext,
  event: EventInput,
  seq: number,
  d: Derivation,
  texts?: readonly (Uint8Array | undefined)[],
): { added: number; covered: number } {
  const projectId = ensureProject(s, w, event)
  const sessionId = ensureSession(s, w, event, projectId, d)
  const user = event.user ?? null
  let added = 0
  let covered = 0
  d.observations.forEach((o, i) => {
    const ts = o.ts ?? event.ts
    const stored = d.origin !== undefined ? storedByOtherPath(s, w, sessionId, d.origin, o, ts) : []
    if (stored.length > 0) {
      for (const rowid of stored)
        s.stmt('INSERT INTO observation_copies (observation_rowid, event_seq, origin) VALUES (?, ?, ?)').run(rowid, seq, d.origin)
      covered++
      return
    }
    // The index in the id is the derivation's, so ids stay the same whatever was covered.
    const id = makeId('obs', ts, `${event.idemKey}#${i}`)
    const info = s
      .stmt(
        `INSERT INTO observations (id, event_seq, session_id, project_id, kind, role, tool, files, source_ref, ts, text, flags, user_id, agent, origin, part)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id,
        seq,
        sessionId,
        projectId,
        o.kind,
        o.role,
        o.tool ?? null,
        o.files && o.files.length > 0 ? JSON.stringify(o.files) : null,
        o.sourceRef ?? null,
        ts,
        texts?.[i] ?? encodeObservationText(o.kind, o.text),
        o.flags && o.flags.length > 0 ? o.flags.join(',') : null,
        user,
        event.agent,
        d.origin ?? null,
        o.part ?? null,
      )
    s.stmt('INSERT INTO search_fts (rowid, body, parts, meta) VALUES (?, ?, ?, ?)').run(
      info.lastInsertRowid,
      o.index.body,
      o.index.parts,
      o.index.meta,
    )
    mention(s, w, projectId, Number(info.lastInsertRowid), o.entities)
    if (d.origin !== undefined) storedThrough(w, sessionId, d.origin)
    added++
    if (o.kind === 'prompt') {
      s.stmt('UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL').run(oneLine(o.text, SESSION_TITLE_CHARS), sessionId)
    }
  })
  if (d.memory) applyMemory(s, w, event, seq, projectId, d.memory)
  for (const op of d.memoryOps ?? []) applyMemoryOp(s, op, event.ts, event.user ?? null)
  if (d.facts) applyFacts(s, event, seq, d.facts)
  return { added, covered }
}

/**
 * The observations of the session through which a capture path other than `origin` already
 * stored this one (empty: it is new). A tool call's observation (`sourceRef`) is matched by that
 * id when the other path's observations of the call hold what it holds (`part`: its whole, or its
 * call and its result; a transcript's input-only call stands for the call, not for a hook's call
 * with its output). A prompt or an assistant message (no id) is matched by kind and text within
 * `CROSS_PATH_WINDOW_MS` of `ts`, nearest first, one copy per stored observation and path, so a
 * path's own repeats ("continue" sent twice) are kept whenever the other path saw fewer of them.
 * Rows of an unknown path (`origin` NULL: written by an older mnemo) never match.
 */
function storedByOtherPath(
  s: SqliteDb,
  w: WriteContext,
  sessionId: SessionId,
  origin: string,
  o: Derivation['observations'][number],
  ts: number,
): number[] {
  if (o.sourceRef === undefined && o.kind !== 'prompt' && o.kind !== 'message') return []
  // The session's list of capture paths settles the common case: a session captured through one path only.
  const session = w.sessionsById.get(sessionId)
  if (session !== undefined && !session.origins.some((other) => other !== origin)) return []
  const rows = otherPathRecords(s, sessionId, origin, { ...o, ts })
  if (o.sourceRef !== undefined) {
    const parts = new Set(rows.map((r) => r.part ?? 'whole'))
    const need = o.part ?? 'whole'
    const held = parts.has('whole') || (need === 'whole' ? parts.has('call') && parts.has('result') : parts.has(need))
    return held ? rows.map((r) => r.rowid) : []
  }
  // The nearest one not yet standing for a copy from this path.
  const free = rows.find(
    (r) => s.stmt('SELECT 1 FROM observation_copies WHERE observation_rowid = ? AND origin = ?').get(r.rowid, origin) === undefined,
  )
  return free === undefined ? [] : [free.rowid]
}

/** Notes in `w` that session `sessionId` now holds an observation of capture path `origin` (see `storedByOtherPath`). */
function storedThrough(w: WriteContext, sessionId: SessionId, origin: string): void {
  const session = w.sessionsById.get(sessionId)
  if (session === undefined || session.origins.includes(origin)) return
  session.origins.push(origin)
  session.changed = true
}

/**
 * The observations of a session through which a capture path other than `origin` recorded the
 * same step: the same `sourceRef` (in time order), or without one the same kind and text within
 * `CROSS_PATH_WINDOW_MS` of `ts` (nearest first). Rows of an unknown path (`origin` NULL) never
 * match. What the one-copy rule matches against, and what `forget` names as the step's other records.
 */
export function otherPathRecords(
  s: SqliteDb,
  sessionId: SessionId,
  origin: string,
  step: { sourceRef?: string | undefined; kind: string; text: string; ts: number },
): { rowid: number; id: string; ts: number; part: StepPart | null }[] {
  if (step.sourceRef !== undefined) {
    return s
      .stmt('SELECT rowid, id, ts, part FROM observations WHERE session_id = ? AND source_ref = ? AND origin <> ? ORDER BY ts, id')
      .all(sessionId, step.sourceRef, origin) as {
      rowid: number
      id: string
      ts: number
      part: StepPart | null
    }[]
  }
  return s
    .stmt(
      'SELECT rowid, id, ts, part FROM observations WHERE session_id = ? AND ts BETWEEN ? AND ? AND kind = ? AND text = ? AND origin <> ? ORDER BY abs(ts - ?), rowid',
    )
    .all(sessionId, step.ts - CROSS_PATH_WINDOW_MS, step.ts + CROSS_PATH_WINDOW_MS, step.kind, step.text, origin, step.ts) as {
    rowid: number
    id: string
    ts: number
    part: StepPart | null
  }[]
}

/** The id a session has now, found by what identifies it (see `StepSession`); undefined when it has no row. */
export function sessionIdOf(s: SqliteDb, session: StepSession): SessionId | undefined {
  return s
    .stmt('SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id WHERE p.root = ? AND s.agent = ? AND s.session_key = ?')
    .pluck()
    .get(session.projectRoot, session.agent, session.key) as SessionId | undefined
}

function mention(s: SqliteDb, w: WriteContext, projectId: ProjectId, docKey: number, entities: readonly EntityRef[]): void {
  for (const e of entities) {
    const key = `${projectId}\u0000${e.type}\u0000${e.name}`
    let id = w.entities.get(key) ?? w.committedEntities.get(key)
    if (id === undefined) {
      // Not .pluck(): statements are cached by their text, and another caller may read this one as a row.
      const row = s.stmt('SELECT id FROM entities WHERE project_id = ? AND type = ? AND name = ?').get(projectId, e.type, e.name) as
        | { id: number }
        | undefined
      id =
        row?.id ??
        Number(s.stmt('INSERT INTO entities (project_id, type, name) VALUES (?, ?, ?)').run(projectId, e.type, e.name).lastInsertRowid)
      w.entities.set(key, id)
    }
    // Written by finishWrite, in index order.
    w.mentions.push(id, docKey)
  }
}

/** Most mentions one INSERT writes (see `finishWrite`). */
const MENTION_ROWS = 32

/**
 * The write guard. Same content as a current memory of the project: its
 * seen count goes up, nothing new is stored. Otherwise a new memory; if it
 * names one to supersede, or a current memory of the same kind has the same
 * subject, that one gets `valid_to` = now and `superseded_by`, and current
 * memories quoting the old value are marked for review.
 */
function applyMemory(
  s: SqliteDb,
  w: WriteContext,
  event: EventInput,
  seq: number,
  projectId: ProjectId,
  m: NonNullable<Derivation['memory']>,
): void {
  // Each user has their own memories: the guard matches, supersedes and flags within the event's user only.
  const user = event.user ?? null
  const agent = m.agent ?? (event.agent === 'mnemo' ? null : event.agent)
  // Under agent isolation also within the memory's agent; `mine` is the condition and its parameters.
  const mine = m.guardByAgent ? { sql: 'user_id IS ? AND agent IS ?', params: [user, agent] } : { sql: 'user_id IS ?', params: [user] }
  const same =
    ((m.sameAs
      ? s
          .stmt(`SELECT rowid, id FROM memories WHERE id = ? AND project_id = ? AND ${mine.sql} AND valid_to IS NULL`)
          .get(m.sameAs, projectId, ...mine.params)
      : undefined) as { rowid: number; id: string } | undefined) ??
    (s
      .stmt(`SELECT rowid, id FROM memories WHERE project_id = ? AND ${mine.sql} AND content_key = ? AND valid_to IS NULL`)
      .get(projectId, ...mine.params, m.contentKey) as { rowid: number; id: string } | undefined)
  if (same) {
    // Seen again: a stated memory stays stated (NULL); a derived one keeps the surest extraction.
    s.stmt(
      'UPDATE memories SET seen_count = seen_count + 1, last_seen_at = MAX(last_seen_at, ?), archived_at = NULL, confidence = CASE WHEN confidence IS NULL OR ? IS NULL THEN NULL ELSE MAX(confidence, ?) END WHERE rowid = ?',
    ).run(event.ts, m.confidence ?? null, m.confidence ?? null, same.rowid)
    // Stated again as the replacement of another memory (`--supersedes`): that one ends here, superseded by this one.
    if (m.supersedes !== undefined && m.supersedes !== same.id) {
      const closed = s
        .stmt(`UPDATE memories SET valid_to = ?, superseded_by = ? WHERE id = ? AND project_id = ? AND ${mine.sql} AND valid_to IS NULL`)
        .run(event.ts, same.id, m.supersedes, projectId, ...mine.params)
      if (closed.changes > 0)
        s.stmt('UPDATE memories SET supersedes = ? WHERE rowid = ? AND supersedes IS NULL').run(m.supersedes, same.rowid)
    }
    return
  }
  const id = makeId('mem', event.ts, event.idemKey)
  const info = s
    .stmt(
      `INSERT INTO memories (id, event_seq, project_id, kind, text, created_at, flags, content_key, subject_key, last_seen_at, valid_from, sources, confidence, user_id, agent)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      id,
      seq,
      projectId,
      m.kind,
      m.text,
      event.ts,
      m.flags && m.flags.length > 0 ? m.flags.join(',') : null,
      m.contentKey,
      m.subjectKey ?? null,
      event.ts,
      event.ts,
      m.sources && m.sources.length > 0 ? JSON.stringify(m.sources) : null,
      m.confidence ?? null,
      user,
      agent,
    )
  const rowid = Number(info.lastInsertRowid)
  s.stmt('INSERT INTO search_fts (rowid, body, parts, meta) VALUES (?, ?, ?, ?)').run(-rowid, m.index.body, m.index.parts, m.index.meta)
  mention(s, w, projectId, -rowid, m.entities)
  const old = m.supersedes
    ? (s
        .stmt(`SELECT rowid, id, text, subject_key FROM memories WHERE id = ? AND project_id = ? AND ${mine.sql} AND valid_to IS NULL`)
        .all(m.supersedes, projectId, ...mine.params) as OldRow[])
    : m.subjectKey
      ? (s
          .stmt(
            `SELECT rowid, id, text, subject_key FROM memories WHERE project_id = ? AND ${mine.sql} AND kind = ? AND subject_key = ? AND valid_to IS NULL AND rowid <> ?`,
          )
          .all(projectId, ...mine.params, m.kind, m.subjectKey, rowid) as OldRow[])
      : []
  for (const o of old) {
    s.stmt('UPDATE memories SET valid_to = ?, superseded_by = ? WHERE rowid = ?').run(event.ts, id, o.rowid)
    s.stmt('UPDATE memories SET supersedes = ? WHERE rowid = ?').run(o.id, rowid)
    // A current memory that quotes the replaced memory's value may rest on it.
    const value = valueAfterSubject(o.text, o.subject_key)
    if (value && value.length >= 4) {
      s.stmt(
        `UPDATE memories SET review = ? WHERE project_id = ? AND ${mine.sql} AND valid_to IS NULL AND rowid <> ? AND instr(lower(text), ?) > 0`,
      ).run(`depends-on-superseded:${o.id}`, projectId, ...mine.params, rowid, value.toLowerCase())
    }
  }
}

/** A pin, unpin, archive or restore: applied only to a memory of the event's user (none: a shared memory), so no event changes another user's memory. */
function applyMemoryOp(s: SqliteDb, op: NonNullable<Derivation['memoryOps']>[number], ts: number, user: string | null): void {
  if (op.op === 'pin' || op.op === 'unpin')
    s.stmt('UPDATE memories SET pinned = ? WHERE id = ? AND user_id IS ?').run(op.op === 'pin' ? 1 : 0, op.id, user)
  else if (op.op === 'archive')
    s.stmt('UPDATE memories SET archived_at = ? WHERE id = ? AND user_id IS ? AND pinned = 0').run(ts, op.id, user)
  else s.stmt('UPDATE memories SET archived_at = NULL WHERE id = ? AND user_id IS ?').run(op.id, user)
}

export function removeDerived(s: SqliteDb, id: string): void {
  const obs = s.stmt('SELECT rowid FROM observations WHERE id = ?').get(id) as { rowid: number } | undefined
  if (obs) {
    s.stmt('DELETE FROM entity_mentions WHERE doc_key = ?').run(obs.rowid)
    s.stmt('DELETE FROM doc_vectors WHERE doc_key = ?').run(obs.rowid)
    deleteFromIndex(s, obs.rowid)
    s.stmt('DELETE FROM observation_copies WHERE observation_rowid = ?').run(obs.rowid)
    s.stmt('DELETE FROM observations WHERE rowid = ?').run(obs.rowid)
    return
  }
  const mem = s.stmt('SELECT rowid FROM memories WHERE id = ?').get(id) as { rowid: number } | undefined
  if (mem) {
    s.stmt('DELETE FROM entity_mentions WHERE doc_key = ?').run(-mem.rowid)
    s.stmt('DELETE FROM memory_usage WHERE memory_id = ?').run(id)
    s.stmt('DELETE FROM doc_vectors WHERE doc_key = ?').run(-mem.rowid)
    deleteFromIndex(s, -mem.rowid)
    s.stmt('DELETE FROM memories WHERE rowid = ?').run(mem.rowid)
  }
}

/**
 * The identity under which a project's or session's id is kept (`kept_ids`, migration 6). NUL
 * occurs in no root and no stored key, so no identity can be another's.
 */
function keptIdentity(thing: { projectRoot: string } | { projectRoot: string; agent: string; key: string }): string {
  return 'key' in thing ? `session\u0000${thing.agent}\u0000${thing.key}\u0000${thing.projectRoot}` : `project\u0000${thing.projectRoot}`
}

/**
 * The id a project or session was first given, else `fresh()` (then kept). An id is derived from
 * the time of the thing's first event (`makeId`), so without this a rebuild after its first events
 * were deleted (`forget --before`, a forget, a session's re-derivation) would name it anew, and
 * links, bookmarks and an agent's notes holding the old id would stop resolving.
 */
function keptId<T extends string>(s: SqliteDb, identity: string, fresh: () => T): T {
  const kept = s.stmt('SELECT id FROM kept_ids WHERE identity = ?').pluck().get(identity) as T | undefined
  if (kept !== undefined) return kept
  const id = fresh()
  s.stmt('INSERT INTO kept_ids (identity, id) VALUES (?, ?)').run(identity, id)
  return id
}

/** Forgets the kept ids of projects and sessions that no longer exist (their events are all gone): nothing is kept about deleted work. */
export function pruneKeptIds(s: SqliteDb): void {
  s.db.exec('DELETE FROM kept_ids WHERE id NOT IN (SELECT id FROM sessions) AND id NOT IN (SELECT id FROM projects)')
}

function ensureProject(s: SqliteDb, w: WriteContext, event: EventInput): ProjectId {
  const known = w.projects.get(event.project.root)
  if (known !== undefined) return known
  const found = s.stmt('SELECT id FROM projects WHERE root = ?').get(event.project.root) as { id: ProjectId } | undefined
  let id = found?.id
  if (id === undefined) {
    id = keptId(s, keptIdentity({ projectRoot: event.project.root }), () => makeId('prj', event.ts, event.project.root))
    s.stmt('INSERT INTO projects (id, root, name) VALUES (?, ?, ?)').run(id, event.project.root, event.project.name)
  }
  w.projects.set(event.project.root, id)
  return id
}

/**
 * The session of an event, created on its first event. A session is one
 * user's: a user's sessions are keyed by `user:<name>:<agent's session id>`
 * (`sessionKeyOf`), so another user's event naming the same id starts a
 * session of their own, never one beside the owner's text, and learns
 * nothing about it.
 */
function ensureSession(s: SqliteDb, w: WriteContext, event: EventInput, projectId: ProjectId, d: Derivation): SessionId {
  const user = event.agent === 'mnemo' ? null : (event.user ?? null)
  const key = storedSessionKey(event.sessionKey, user)
  const startedAt = event.sessionStartedAt ?? event.ts
  const cacheKey = `${event.agent}\u0000${key}\u0000${projectId}\u0000${user ?? ''}`
  let session = w.sessions.get(cacheKey)
  if (session === undefined) {
    const found = s
      .stmt(
        'SELECT id, started_at, last_event_at, origins FROM sessions WHERE agent = ? AND session_key = ? AND project_id = ? AND user_id IS ?',
      )
      .get(event.agent, key, projectId, user) as
      | { id: SessionId; started_at: number; last_event_at: number; origins: string | null }
      | undefined
    if (found) {
      const origins = found.origins ? found.origins.split(',') : []
      session = { id: found.id, startedAt: found.started_at, lastEventAt: found.last_event_at, origins, changed: false }
    } else {
      const id = keptId(s, keptIdentity({ projectRoot: event.project.root, agent: event.agent, key }), () => {
        // The first project of a session keeps the plain seed (ids stay as they were); another project's part gets its own id.
        const first = s.stmt('SELECT 1 FROM sessions WHERE agent = ? AND session_key = ?').get(event.agent, key) === undefined
        // NUL cannot occur in a stored key (capture repairs it to U+FFFD), so no key can make another session's seed.
        return makeId('ses', startedAt, first ? `${event.agent}:${key}` : `${event.agent}:${key}\u0000${event.project.root}`)
      })
      const bounds = { startedAt: Math.min(startedAt, event.ts), lastEventAt: Math.max(startedAt, event.ts) }
      s.stmt(
        `INSERT INTO sessions (id, project_id, agent, session_key, started_at, last_event_at, user_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(id, projectId, event.agent, key, bounds.startedAt, bounds.lastEventAt, user)
      session = { id, ...bounds, origins: [], changed: false }
    }
    w.sessions.set(cacheKey, session)
    w.sessionsById.set(session.id, session)
  }
  // The bounds are the earliest start and the latest event seen; written once per write by finishWrite.
  if (event.ts > session.lastEventAt || startedAt < session.startedAt) {
    session.lastEventAt = Math.max(session.lastEventAt, event.ts)
    session.startedAt = Math.min(session.startedAt, startedAt)
    session.changed = true
  }
  const id = session.id
  if (d.session?.ended) s.stmt('UPDATE sessions SET ended_at = MAX(COALESCE(ended_at, 0), ?) WHERE id = ?').run(event.ts, id)
  if (d.session?.title) s.stmt('UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL').run(d.session.title, id)
  return id
}

/** Applies a logged event's derivation again (rebuild, session re-derivation); returns the observations it added. */
function replay(s: SqliteDb, w: WriteContext, row: EventRow, derive: (event: StoredEvent) => Derivation): number {
  const event = toStoredEvent(row)
  return apply(s, w, event, row.seq, derive(event)).added
}

export function rederiveSession(s: SqliteDb, session: StepSession, derive: (event: StoredEvent) => Derivation): number {
  return s.guard('re-derive session', () => {
    let observations = 0
    s.db
      .transaction(() => {
        const id = sessionIdOf(s, session)
        if (id !== undefined) {
          for (const o of s.stmt('SELECT id FROM observations WHERE session_id = ?').pluck().all(id) as string[]) removeDerived(s, o)
          s.stmt('DELETE FROM sessions WHERE id = ?').run(id)
        }
        const { key, user } = splitStoredKey(session.key)
        const rows = s
          .stmt('SELECT * FROM events WHERE project_root = ? AND agent = ? AND session_key = ? AND user_id IS ? ORDER BY seq')
          .all(session.projectRoot, session.agent, key, user) as EventRow[]
        const w = newWrite()
        for (const row of rows) observations += replay(s, w, row, derive)
        finishWrite(s, w)
        pruneKeptIds(s)
      })
      .immediate()
    return observations
  })
}

/**
 * The secondary indexes of derived tables that applying events never reads (they serve recall, browsing and deletes):
 * `rebuild` drops them before deleting the derived rows and makes them once, after the rows.
 */
const DEFERRED_INDEXES = [
  'observations_project_time',
  'observations_project_event',
  'observations_event',
  'observations_scope',
  'observations_user_time',
  'entity_mentions_doc',
]

/** Events read per page while replaying the log (held in memory a few pages at a time). */
const REBUILD_PAGE = 1000
/**
 * Pages handed to a `DeriveAhead` before the first is written, and kept handed ahead: the helpers derive them while
 * this thread deletes the derived rows (1–2 s at 100k observations) and then writes the page before.
 */
const PAGES_AHEAD = 8

/** A wait for a helper's page longer than this, ms, means the helper is the longer path (see `rebuild`'s `inflateHere`). */
const HELPER_WAIT_MS = 1

/** A stored payload as JSON text where it can be read (else as stored: the helper, then `derive`, reports why not). */
function inflated(stored: string | Buffer): string | Buffer {
  try {
    return payloadText(stored)
  } catch {
    return stored
  }
}

export function rebuild(
  s: SqliteDb,
  derive: (event: StoredEvent) => Derivation,
  derivedWith?: number,
  ahead?: DeriveAhead,
): { events: number; observations: number } {
  return s.guard('rebuild', () => {
    let events = 0
    let observations = 0
    bulkPageCache(s)
    // The entities are deleted and numbered anew.
    s.forgetEntityIds()
    s.db
      .transaction(() => {
        // Read the log into memory in pages: iterate() cannot run while this connection writes (and the writes never
        // touch the log, so reading ahead reads the same rows).
        let after = 0
        const readPage = (): EventRow[] => {
          const rows = s.stmt(`SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ${REBUILD_PAGE}`).all(after) as EventRow[]
          after = rows.at(-1)?.seq ?? after
          return rows
        }
        // Whether this thread inflates the payloads of the pages it hands over (the helper then only parses them): while
        // it waits for the helper's derivations, the helper is the longer path, so the work is shared whichever thread
        // is the slower one on this machine (at 100k observations the helper derives for ~12 s and inflating is ~1.4 s
        // of it, beside ~10 s of writing here). Either way the helper derives from the same JSON text.
        let inflateHere = false
        // Pages read and not written yet, oldest first. With `ahead`, each was handed to it when read, its payloads as
        // stored (the helper decodes them: applying a derivation reads no payload), and an event's payload is decoded
        // here only when the helper could not derive it.
        const pages: { rows: EventRow[]; events: StoredEvent[] }[] = []
        const readAhead = (): void => {
          const rows = readPage()
          if (rows.length === 0) return
          if (ahead === undefined) {
            pages.push({ rows, events: rows.map((row) => toStoredEvent(row)) })
            return
          }
          const page = rows.map((row) => eventFromRow(row, undefined))
          pages.push({ rows, events: page })
          ahead.push(
            page,
            rows.map((row) => (inflateHere ? inflated(row.payload as string | Buffer) : (row.payload as string | Buffer))),
          )
        }
        // The helpers start on the first pages before the deletes below, so that they derive while this thread deletes.
        for (let i = 0; i < (ahead ? PAGES_AHEAD : 1); i++) readAhead()
        // Indexes the replay never reads are dropped first (the deletes then need not update them) and made again at
        // the end, from their own definitions: one sort of the rows each, instead of an index insert per row.
        const deferred = s.db
          .prepare(
            `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND name IN (${DEFERRED_INDEXES.map(() => '?').join(', ')})`,
          )
          .all(...DEFERRED_INDEXES) as { name: string; sql: string }[]
        for (const index of deferred) s.db.exec(`DROP INDEX ${index.name}`)
        s.db.exec(
          "INSERT INTO search_fts (search_fts) VALUES ('delete-all'); DELETE FROM entity_mentions; DELETE FROM entities; DELETE FROM doc_vectors; DELETE FROM lsa_models; DELETE FROM observation_copies; DELETE FROM observations; DELETE FROM memories; DELETE FROM sessions; DELETE FROM projects;",
        )
        s.db.exec(FACT_TABLES_SQL)
        const w = newWrite()
        for (let page = pages.shift(); page !== undefined; page = pages.shift()) {
          const asked = performance.now()
          const derived = ahead?.shift()
          inflateHere = performance.now() - asked > HELPER_WAIT_MS
          readAhead()
          for (const [i, event] of page.events.entries()) {
            const d = derived?.[i] ?? derive(derived === undefined ? event : toStoredEvent(page.rows[i]!))
            observations += apply(s, w, event, event.seq, d).added
            events++
          }
          // Each page's mentions: written while the helpers derive the pages ahead, not all after them.
          writeMentions(s, w, true)
        }
        finishWrite(s, w)
        for (const index of deferred) s.db.exec(index.sql)
        pruneKeptIds(s)
        if (derivedWith !== undefined) {
          s.stmt(
            "INSERT INTO store_meta (key, value) VALUES ('derived_with', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
          ).run(String(derivedWith))
        }
      })
      .immediate()
    return { events, observations }
  })
}
