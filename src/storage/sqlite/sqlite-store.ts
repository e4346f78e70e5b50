import Database from 'better-sqlite3'
import { statSync } from 'node:fs'
import { MnemoError } from '../../core/errors.js'
import { makeId, type MemoryId, type ObservationId, type ProjectId, type SessionId } from '../../core/ids.js'
import type { AgentName, DerivedObservation, EventFormat, EventInput, Memory, Observation, Project, Session } from '../../core/types.js'
import type { EntityRef } from '../../retrieval/entities.js'
import { CROSS_PATH_WINDOW_MS, type AppendResult, type AuditEntry, type BrowseMemoriesOptions, type BrowseObservationsOptions, type Derivation, type EntityRow, type EventFilter, type Scope, type SearchDoc, type SearchTextOptions, type Store, type StoreStats, type StoredEvent, type TextMatch } from '../store.js'
import { MIGRATIONS } from './migrations.js'
import {
  docJoin,
  eventConditions,
  onEither,
  onTable,
  scopeWhere,
  SESSION_COLUMNS,
  splitFlags,
  storedSessionKey,
  toMemory,
  toObservation,
  toSession,
  toStoredEvent,
  valueAfterSubject,
  type EventRow,
  type MemoryRow,
  type ObservationRow,
  type OldRow,
  type SessionRow,
} from './sqlite-rows.js'

export interface SqliteStoreOptions {
  /** Database file path, or `:memory:`. */
  path: string
  /** How long a writer waits for another process's lock before failing, ms. Default 5000. */
  busyTimeoutMs?: number
  /** Open without write access (no migrations). Default false. */
  readonly?: boolean
}

/**
 * Opens (creating and migrating when needed) the SQLite store at `options.path`:
 * WAL journal, `synchronous=FULL` so an acknowledged write survives a crash or
 * power loss, foreign keys on, a busy timeout so parallel writers (hooks of
 * concurrent sessions, the CLI, an import) wait instead of failing.
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the file cannot be opened or migrated; `cause` holds the driver error.
 */
export function openSqliteStore(options: SqliteStoreOptions, now: () => number = Date.now): Store {
  let db: Database.Database
  try {
    db = new Database(options.path, { readonly: options.readonly ?? false })
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`)
    if (!options.readonly) {
      db.pragma('journal_mode = WAL')
      db.pragma('synchronous = FULL')
    }
    db.pragma('foreign_keys = ON')
    if (!options.readonly) migrate(db)
  } catch (cause) {
    throw wrap(cause, 'open', options.path)
  }
  return new SqliteStore(db, options.path, now)
}

function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current >= MIGRATIONS.length) return
  // IMMEDIATE takes the write lock first, so two processes opening a fresh file do not both migrate.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number
    for (const m of MIGRATIONS) {
      if (m.version <= version) continue
      db.exec(m.sql)
      db.pragma(`user_version = ${m.version}`)
    }
  }).immediate()
}

function wrap(cause: unknown, operation: string, path?: string): MnemoError {
  if (MnemoError.is(cause)) return cause
  const message = cause instanceof Error ? cause.message : String(cause)
  const init = { details: { dialect: 'sqlite' as const, operation }, cause }
  return new MnemoError(
    'STORE_UNAVAILABLE',
    `sqlite ${operation} failed${path && path !== ':memory:' ? ` (${path})` : ''}: ${message}`,
    /locked|busy/i.test(message) ? { ...init, hint: 'another mnemo process holds the database; retry, or raise busyTimeoutMs' } : init,
  )
}

class SqliteStore implements Store {
  private readonly stmts = new Map<string, Database.Statement>()
  private readonly namesCache = new Map<string, { version: string; names: string[] }>()
  /** Writes on this connection (PRAGMA data_version only counts other connections' commits). */
  private writes = 0

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly now: () => number,
  ) {}

  private stmt(sql: string): Database.Statement {
    if (!/^\s*SELECT/i.test(sql)) this.writes++
    let s = this.stmts.get(sql)
    if (!s) {
      s = this.db.prepare(sql)
      this.stmts.set(sql, s)
    }
    return s
  }

  private guard<T>(operation: string, fn: () => T): T {
    try {
      return fn()
    } catch (cause) {
      throw wrap(cause, operation, this.path)
    }
  }

  append(batch: readonly { event: EventInput; derive: () => Derivation; receivedAt?: number }[]): AppendResult {
    return this.guard('append', () => {
      const result: AppendResult = { inserted: 0, duplicates: 0, observations: 0, covered: 0, seqs: [] }
      this.db
        .transaction(() => {
          const now = this.now()
          for (const { event, derive, receivedAt: given } of batch) {
            const receivedAt = given ?? now
            if (this.stmt('SELECT 1 FROM tombstones WHERE idem_key = ?').get(event.idemKey)) {
              result.duplicates++
              result.seqs.push(undefined)
              continue
            }
            const info = this.stmt(
              `INSERT INTO events (idem_key, agent, format, type, session_key, project_root, project_name, ts, session_started_at, received_at, payload, user_id)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idem_key) DO NOTHING`,
            ).run(
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
            )
            if (info.changes === 0) {
              result.duplicates++
              result.seqs.push(undefined)
              continue
            }
            const seq = Number(info.lastInsertRowid)
            result.inserted++
            result.seqs.push(seq)
            const applied = this.apply(event, seq, derive())
            result.observations += applied.added
            result.covered += applied.covered
          }
        })
        .immediate()
      return result
    })
  }

  /** Applies one event's derivation; returns how many observations it added and how many another capture path had stored. */
  private apply(event: EventInput, seq: number, d: Derivation): { added: number; covered: number } {
    const projectId = this.ensureProject(event)
    const sessionId = this.ensureSession(event, projectId, d)
    const user = event.user ?? null
    let added = 0
    let covered = 0
    d.observations.forEach((o, i) => {
      const ts = o.ts ?? event.ts
      if (d.origin !== undefined && this.storedByOtherPath(sessionId, d.origin, o, ts)) {
        covered++
        return
      }
      // The index in the id is the derivation's, so ids stay the same whatever was covered.
      const id = makeId('obs', ts, `${event.idemKey}#${i}`)
      const info = this.stmt(
        `INSERT INTO observations (id, event_seq, session_id, project_id, kind, role, tool, files, source_ref, ts, text, flags, user_id, agent, origin)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
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
        o.text,
        o.flags && o.flags.length > 0 ? o.flags.join(',') : null,
        user,
        event.agent,
        d.origin ?? null,
      )
      this.stmt('INSERT INTO search_fts (rowid, body, parts, meta) VALUES (?, ?, ?, ?)').run(info.lastInsertRowid, o.index.body, o.index.parts, o.index.meta)
      this.mention(projectId, Number(info.lastInsertRowid), o.entities)
      added++
      if (o.kind === 'prompt') {
        this.stmt('UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL').run(o.text.replace(/\s+/g, ' ').trim().slice(0, 160), sessionId)
      }
    })
    if (d.memory) this.applyMemory(event, seq, projectId, d.memory)
    for (const op of d.memoryOps ?? []) this.applyMemoryOp(op, event.ts, event.user ?? null)
    return { added, covered }
  }

  /**
   * Whether a capture path other than `origin` already stored this observation in the session: an
   * observation with the same `sourceRef` (a tool call id: the hook's PostToolUse and the
   * transcript's tool_use and tool_result are one step), or, for a prompt or an assistant message
   * (they carry no id), the same kind and text within `CROSS_PATH_WINDOW_MS` of `ts`. Another
   * path only: a path's own repeats (the same prompt sent twice) are kept.
   */
  private storedByOtherPath(sessionId: SessionId, origin: string, o: DerivedObservation, ts: number): boolean {
    if (o.sourceRef !== undefined) {
      return this.stmt('SELECT 1 FROM observations WHERE session_id = ? AND source_ref = ? AND origin IS NOT ? LIMIT 1').get(sessionId, o.sourceRef, origin) !== undefined
    }
    if (o.kind !== 'prompt' && o.kind !== 'message') return false
    return (
      this.stmt('SELECT 1 FROM observations WHERE session_id = ? AND ts BETWEEN ? AND ? AND kind = ? AND text = ? AND origin IS NOT ? LIMIT 1').get(
        sessionId,
        ts - CROSS_PATH_WINDOW_MS,
        ts + CROSS_PATH_WINDOW_MS,
        o.kind,
        o.text,
        origin,
      ) !== undefined
    )
  }

  private mention(projectId: ProjectId, docKey: number, entities: readonly EntityRef[]): void {
    for (const e of entities) {
      this.stmt('INSERT INTO entities (project_id, type, name) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(projectId, e.type, e.name)
      const row = this.stmt('SELECT id FROM entities WHERE project_id = ? AND type = ? AND name = ?').get(projectId, e.type, e.name) as { id: number }
      this.stmt('INSERT INTO entity_mentions (entity_id, doc_key) VALUES (?, ?) ON CONFLICT DO NOTHING').run(row.id, docKey)
    }
  }

  /**
   * The write guard. Same content as a current memory of the project: its
   * seen count goes up, nothing new is stored. Otherwise a new memory; if it
   * names one to supersede, or a current memory of the same kind has the same
   * subject, that one gets `valid_to` = now and `superseded_by`, and current
   * memories quoting the old value are marked for review.
   */
  private applyMemory(event: EventInput, seq: number, projectId: ProjectId, m: NonNullable<Derivation['memory']>): void {
    // Each user has their own memories: the guard matches, supersedes and flags within the event's user only.
    const user = event.user ?? null
    const agent = m.agent ?? (event.agent === 'mnemo' ? null : event.agent)
    // Under agent isolation also within the memory's agent; `mine` is the condition and its parameters.
    const mine = m.guardByAgent ? { sql: 'user_id IS ? AND agent IS ?', params: [user, agent] } : { sql: 'user_id IS ?', params: [user] }
    const same = (m.sameAs ? this.stmt(`SELECT rowid, id FROM memories WHERE id = ? AND project_id = ? AND ${mine.sql} AND valid_to IS NULL`).get(m.sameAs, projectId, ...mine.params) : undefined) as
      | { rowid: number; id: string }
      | undefined ??
      (this.stmt(`SELECT rowid, id FROM memories WHERE project_id = ? AND ${mine.sql} AND content_key = ? AND valid_to IS NULL`).get(projectId, ...mine.params, m.contentKey) as
        | { rowid: number; id: string }
        | undefined)
    if (same) {
      // Seen again: a stated memory stays stated (NULL); a derived one keeps the surest extraction.
      this.stmt(
        'UPDATE memories SET seen_count = seen_count + 1, last_seen_at = MAX(last_seen_at, ?), archived_at = NULL, confidence = CASE WHEN confidence IS NULL OR ? IS NULL THEN NULL ELSE MAX(confidence, ?) END WHERE rowid = ?',
      ).run(event.ts, m.confidence ?? null, m.confidence ?? null, same.rowid)
      return
    }
    const id = makeId('mem', event.ts, event.idemKey)
    const info = this.stmt(
      `INSERT INTO memories (id, event_seq, project_id, kind, text, created_at, flags, content_key, subject_key, last_seen_at, valid_from, sources, confidence, user_id, agent)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
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
    this.stmt('INSERT INTO search_fts (rowid, body, parts, meta) VALUES (?, ?, ?, ?)').run(-rowid, m.index.body, m.index.parts, m.index.meta)
    this.mention(projectId, -rowid, m.entities)
    const old = m.supersedes
      ? (this.stmt(`SELECT rowid, id, text, subject_key FROM memories WHERE id = ? AND project_id = ? AND ${mine.sql} AND valid_to IS NULL`).all(m.supersedes, projectId, ...mine.params) as OldRow[])
      : m.subjectKey
        ? (this.stmt(`SELECT rowid, id, text, subject_key FROM memories WHERE project_id = ? AND ${mine.sql} AND kind = ? AND subject_key = ? AND valid_to IS NULL AND rowid <> ?`).all(
            projectId,
            ...mine.params,
            m.kind,
            m.subjectKey,
            rowid,
          ) as OldRow[])
        : []
    for (const o of old) {
      this.stmt('UPDATE memories SET valid_to = ?, superseded_by = ? WHERE rowid = ?').run(event.ts, id, o.rowid)
      this.stmt('UPDATE memories SET supersedes = ? WHERE rowid = ?').run(o.id, rowid)
      // A current memory that quotes the replaced memory's value may rest on it.
      const value = valueAfterSubject(o.text, o.subject_key)
      if (value && value.length >= 4) {
        this.stmt(
          `UPDATE memories SET review = ? WHERE project_id = ? AND ${mine.sql} AND valid_to IS NULL AND rowid <> ? AND instr(lower(text), ?) > 0`,
        ).run(`depends-on-superseded:${o.id}`, projectId, ...mine.params, rowid, value.toLowerCase())
      }
    }
  }

  /** A pin, unpin, archive or restore: applied only to a memory of the event's user (none: a shared memory), so no event changes another user's memory. */
  private applyMemoryOp(op: NonNullable<Derivation['memoryOps']>[number], ts: number, user: string | null): void {
    if (op.op === 'pin' || op.op === 'unpin') this.stmt('UPDATE memories SET pinned = ? WHERE id = ? AND user_id IS ?').run(op.op === 'pin' ? 1 : 0, op.id, user)
    else if (op.op === 'archive') this.stmt('UPDATE memories SET archived_at = ? WHERE id = ? AND user_id IS ? AND pinned = 0').run(ts, op.id, user)
    else this.stmt('UPDATE memories SET archived_at = NULL WHERE id = ? AND user_id IS ?').run(op.id, user)
  }

  private removeDerived(id: string): void {
    const obs = this.stmt('SELECT rowid FROM observations WHERE id = ?').get(id) as { rowid: number } | undefined
    if (obs) {
      this.stmt('DELETE FROM entity_mentions WHERE doc_key = ?').run(obs.rowid)
      this.stmt('DELETE FROM doc_vectors WHERE doc_key = ?').run(obs.rowid)
      this.stmt('DELETE FROM search_fts WHERE rowid = ?').run(obs.rowid)
      this.stmt('DELETE FROM observations WHERE rowid = ?').run(obs.rowid)
      return
    }
    const mem = this.stmt('SELECT rowid FROM memories WHERE id = ?').get(id) as { rowid: number } | undefined
    if (mem) {
      this.stmt('DELETE FROM entity_mentions WHERE doc_key = ?').run(-mem.rowid)
      this.stmt('DELETE FROM memory_usage WHERE memory_id = ?').run(id)
      this.stmt('DELETE FROM doc_vectors WHERE doc_key = ?').run(-mem.rowid)
      this.stmt('DELETE FROM search_fts WHERE rowid = ?').run(-mem.rowid)
      this.stmt('DELETE FROM memories WHERE rowid = ?').run(mem.rowid)
    }
  }

  private ensureProject(event: EventInput): ProjectId {
    const found = this.stmt('SELECT id FROM projects WHERE root = ?').get(event.project.root) as { id: ProjectId } | undefined
    if (found) return found.id
    const id = makeId('prj', event.ts, event.project.root)
    this.stmt('INSERT INTO projects (id, root, name) VALUES (?, ?, ?)').run(id, event.project.root, event.project.name)
    return id
  }

  /**
   * The session of an event, created on its first event. A session is one
   * user's: a user's sessions are keyed by `user:<name>:<agent's session id>`
   * (`sessionKeyOf`), so another user's event naming the same id starts a
   * session of their own, never one beside the owner's text, and learns
   * nothing about it.
   */
  private ensureSession(event: EventInput, projectId: ProjectId, d: Derivation): SessionId {
    const user = event.agent === 'mnemo' ? null : (event.user ?? null)
    const key = storedSessionKey(event.sessionKey, user)
    const found = this.stmt('SELECT id FROM sessions WHERE agent = ? AND session_key = ? AND project_id = ? AND user_id IS ?').get(event.agent, key, projectId, user) as
      | { id: SessionId }
      | undefined
    const startedAt = event.sessionStartedAt ?? event.ts
    let id: SessionId
    if (found) {
      id = found.id
      this.stmt(
        'UPDATE sessions SET last_event_at = MAX(last_event_at, ?), started_at = MIN(started_at, ?) WHERE id = ?',
      ).run(event.ts, startedAt, id)
    } else {
      // The first project of a session keeps the plain seed (ids stay as they were); another project's part gets its own id.
      const first = this.stmt('SELECT 1 FROM sessions WHERE agent = ? AND session_key = ?').get(event.agent, key) === undefined
      // NUL cannot occur in a stored key (capture repairs it to U+FFFD), so no key can make another session's seed.
      id = makeId('ses', startedAt, first ? `${event.agent}:${key}` : `${event.agent}:${key}\u0000${event.project.root}`)
      this.stmt(
        `INSERT INTO sessions (id, project_id, agent, session_key, started_at, last_event_at, user_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(id, projectId, event.agent, key, Math.min(startedAt, event.ts), Math.max(startedAt, event.ts), user)
    }
    if (d.session?.ended) this.stmt('UPDATE sessions SET ended_at = MAX(COALESCE(ended_at, 0), ?) WHERE id = ?').run(event.ts, id)
    if (d.session?.title) this.stmt('UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL').run(d.session.title, id)
    return id
  }

  readEvents(afterSeq: number, limit: number): StoredEvent[] {
    return this.guard('read events', () => (this.stmt('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit) as EventRow[]).map(toStoredEvent))
  }

  rebuild(derive: (event: StoredEvent) => Derivation): { events: number; observations: number } {
    return this.guard('rebuild', () => {
      let events = 0
      let observations = 0
      this.db
        .transaction(() => {
          this.db.exec('DELETE FROM search_fts; DELETE FROM entity_mentions; DELETE FROM entities; DELETE FROM doc_vectors; DELETE FROM lsa_models; DELETE FROM observations; DELETE FROM memories; DELETE FROM sessions; DELETE FROM projects;')
          // Read the log into memory in pages: iterate() cannot run while this connection writes.
          let after = 0
          for (;;) {
            const rows = this.stmt('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT 1000').all(after) as EventRow[]
            if (rows.length === 0) break
            for (const row of rows) {
              const event = toStoredEvent(row)
              observations += this.apply(event, row.seq, derive(event)).added
              events++
              after = row.seq
            }
          }
        })
        .immediate()
      return { events, observations }
    })
  }

  searchText(options: SearchTextOptions): TextMatch[] {
    return this.guard('search', () => {
      const [wBody, wParts, wMeta] = options.weights ?? [1, 0.5, 0.5]
      const inScope = scopeWhere(options, onEither)
      const params: unknown[] = [options.match, ...inScope.params]
      let scope = inScope.sql
      if (options.sessionId) {
        scope += ' AND o.session_id = ?'
        params.push(options.sessionId)
      }
      if (options.asOf !== undefined) {
        scope += ' AND (o.id IS NULL OR o.ts <= ?) AND (m.id IS NULL OR (m.valid_from <= ? AND (m.valid_to IS NULL OR m.valid_to > ?)))'
        params.push(options.asOf, options.asOf, options.asOf)
      } else scope += ' AND (m.id IS NULL OR m.valid_to IS NULL)'
      if (!options.includeArchived) scope += ' AND (m.id IS NULL OR m.archived_at IS NULL)'
      params.push(options.limit)
      return this.stmt(
        `SELECT f.rowid AS docKey, COALESCE(o.role, m.kind) AS role, -bm25(search_fts, ${Number(wBody)}, ${Number(wParts)}, ${Number(wMeta)}) AS score
         FROM search_fts f
         ${docJoin('f.rowid')}
         WHERE search_fts MATCH ?${scope} AND (o.id IS NOT NULL OR m.id IS NOT NULL)
         ORDER BY score DESC, f.rowid LIMIT ?`,
      ).all(...params) as TextMatch[]
    })
  }

  vectors(space: string, scope: Scope): { docKey: number; vec: Float32Array }[] {
    return this.guard('vectors', () => {
      const inScope = scopeWhere(scope, onEither)
      const rows = this.stmt(
        `SELECT v.doc_key AS docKey, v.vec AS vec FROM doc_vectors v
         ${docJoin('v.doc_key')}
         WHERE v.space = ? AND (o.id IS NOT NULL OR m.id IS NOT NULL)${inScope.sql}`,
      ).all(space, ...inScope.params) as { docKey: number; vec: Buffer }[]
      return rows.map((r) => ({ docKey: r.docKey, vec: new Float32Array(r.vec.buffer.slice(r.vec.byteOffset, r.vec.byteOffset + r.vec.byteLength)) }))
    })
  }

  putVectors(space: string, rows: readonly { docKey: number; vec: Float32Array }[]): void {
    this.guard('put vectors', () => {
      this.db
        .transaction(() => {
          for (const r of rows) this.stmt('INSERT OR REPLACE INTO doc_vectors (space, doc_key, vec) VALUES (?, ?, ?)').run(space, r.docKey, Buffer.from(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength))
        })
        .immediate()
    })
  }

  dropSpace(space: string): void {
    this.guard('drop vectors', () => this.stmt('DELETE FROM doc_vectors WHERE space = ?').run(space))
  }

  docsWithoutVector(space: string, scope: Scope, limit: number): { docKey: number; text: string }[] {
    return this.guard('docs without vector', () => {
      const inO = scopeWhere(scope, onTable('observations'))
      const inM = scopeWhere(scope, onTable('memories'))
      const obs = this.stmt(
        `SELECT rowid AS docKey, text FROM observations WHERE NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.space = ? AND v.doc_key = observations.rowid)${inO.sql} ORDER BY rowid LIMIT ?`,
      ).all(space, ...inO.params, limit) as { docKey: number; text: string }[]
      const mem = this.stmt(
        `SELECT -rowid AS docKey, text FROM memories WHERE NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.space = ? AND v.doc_key = -memories.rowid)${inM.sql} ORDER BY rowid LIMIT ?`,
      ).all(space, ...inM.params, limit) as { docKey: number; text: string }[]
      return [...obs, ...mem].slice(0, limit)
    })
  }

  projectTexts(projectId: ProjectId, limit: number): string[] {
    return this.guard('project texts', () => {
      const obs = this.stmt('SELECT text FROM observations WHERE project_id = ? ORDER BY rowid DESC LIMIT ?').pluck().all(projectId, limit) as string[]
      const mem = this.stmt('SELECT text FROM memories WHERE project_id = ? ORDER BY rowid DESC LIMIT ?').pluck().all(projectId, limit) as string[]
      return [...mem, ...obs].slice(0, limit)
    })
  }

  getLsaModel(projectId: ProjectId): { space: string; docCount: number; builtAt: number; model: Uint8Array } | undefined {
    const row = this.stmt('SELECT space, doc_count AS docCount, built_at AS builtAt, model FROM lsa_models WHERE project_id = ?').get(projectId) as
      | { space: string; docCount: number; builtAt: number; model: Buffer }
      | undefined
    return row && { ...row, model: new Uint8Array(row.model) }
  }

  putLsaModel(projectId: ProjectId, row: { space: string; docCount: number; builtAt: number; model: Uint8Array }): void {
    this.guard('put model', () =>
      this.stmt('INSERT OR REPLACE INTO lsa_models (project_id, space, doc_count, built_at, model) VALUES (?, ?, ?, ?, ?)').run(projectId, row.space, row.docCount, row.builtAt, Buffer.from(row.model)),
    )
  }

  entityNames(projectIds: readonly ProjectId[]): string[] {
    // Asked on every recall; cached until this connection or another one writes (PRAGMA data_version).
    const version = `${this.writes}:${this.db.pragma('data_version', { simple: true }) as number}`
    const key = projectIds.join(',')
    const hit = this.namesCache.get(key)
    if (hit && hit.version === version) return hit.names
    const where = projectIds.length > 0 ? ` AND project_id IN (${projectIds.map(() => '?').join(',')})` : ''
    const names = this.stmt(`SELECT DISTINCT name FROM entities WHERE type = 'name'${where}`).pluck().all(...projectIds) as string[]
    if (this.namesCache.size > 100) this.namesCache.clear()
    this.namesCache.set(key, { version, names })
    return names
  }

  findEntities(scope: Scope, refs: readonly EntityRef[]): { id: number; type: string; name: string; docs: number }[] {
    const projectIds = scope.projectIds ?? []
    const where = projectIds.length > 0 ? ` AND e.project_id IN (${projectIds.map(() => '?').join(',')})` : ''
    const count = this.mentionCount(scope, 'e.id')
    const out: { id: number; type: string; name: string; docs: number }[] = []
    for (const r of refs) {
      out.push(
        ...(this.stmt(`SELECT e.id, e.type, e.name, ${count.sql} AS docs FROM entities e WHERE e.type = ? AND e.name = ?${where}`).all(...count.params, r.type, r.name, ...projectIds) as {
          id: number
          type: string
          name: string
          docs: number
        }[]),
      )
    }
    return out.filter((e) => e.docs > 0)
  }

  /**
   * A subquery counting the documents of the scope that mention entity `entity` (an SQL expression):
   * another user's or agent's documents never weigh on how common an entity looks.
   */
  private mentionCount(scope: Scope, entity: string): { sql: string; params: unknown[] } {
    if (scope.user === undefined && scope.agent === undefined) return { sql: `(SELECT COUNT(*) FROM entity_mentions c WHERE c.entity_id = ${entity})`, params: [] }
    const inScope = scopeWhere({ ...scope, projectIds: [] }, onEither)
    return {
      sql: `(SELECT COUNT(*) FROM entity_mentions c ${docJoin('c.doc_key')} WHERE c.entity_id = ${entity}${inScope.sql})`,
      params: inScope.params,
    }
  }

  entityMentions(entityIds: readonly number[], scope: Scope & { sessionId?: SessionId }, limit: number): { entityId: number; docKey: number }[] {
    if (entityIds.length === 0) return []
    const ids = entityIds.map(() => '?').join(',')
    // Entities belong to one project, so the project scope is already applied; a session scope needs the observation join.
    if (scope.sessionId) {
      const inScope = scopeWhere({ ...scope, projectIds: [] }, onTable('o'))
      return this.stmt(
        `SELECT m.entity_id AS entityId, m.doc_key AS docKey FROM entity_mentions m JOIN observations o ON o.rowid = m.doc_key
         WHERE m.entity_id IN (${ids}) AND o.session_id = ?${inScope.sql} LIMIT ?`,
      ).all(...entityIds, scope.sessionId, ...inScope.params, limit) as { entityId: number; docKey: number }[]
    }
    if (scope.user !== undefined || scope.agent !== undefined) {
      const inScope = scopeWhere({ ...scope, projectIds: [] }, onEither)
      return this.stmt(
        `SELECT x.entity_id AS entityId, x.doc_key AS docKey FROM entity_mentions x
         ${docJoin('x.doc_key')}
         WHERE x.entity_id IN (${ids})${inScope.sql} LIMIT ?`,
      ).all(...entityIds, ...inScope.params, limit) as { entityId: number; docKey: number }[]
    }
    return this.stmt(`SELECT entity_id AS entityId, doc_key AS docKey FROM entity_mentions WHERE entity_id IN (${ids}) LIMIT ?`).all(...entityIds, limit) as {
      entityId: number
      docKey: number
    }[]
  }

  coMentioned(entityIds: readonly number[], scope: Scope, limit: number): { id: number; shared: number; docs: number }[] {
    if (entityIds.length === 0) return []
    const ids = entityIds.map(() => '?').join(',')
    // Only documents of the scope make two entities related: another user's text never decides where the graph walks.
    const inScope = scope.user !== undefined || scope.agent !== undefined ? scopeWhere({ ...scope, projectIds: [] }, onEither) : undefined
    const count = this.mentionCount(scope, 'x.entity_id')
    return this.stmt(
      `SELECT x.entity_id AS id, COUNT(*) AS shared, ${count.sql} AS docs
       FROM entity_mentions q JOIN entity_mentions x ON x.doc_key = q.doc_key AND x.entity_id <> q.entity_id
       ${inScope ? docJoin('q.doc_key') : ''}
       WHERE q.entity_id IN (${ids}) AND x.entity_id NOT IN (${ids})${inScope?.sql ?? ''}
       GROUP BY x.entity_id ORDER BY shared DESC, x.entity_id LIMIT ?`,
    ).all(...count.params, ...entityIds, ...entityIds, ...(inScope?.params ?? []), limit) as { id: number; shared: number; docs: number }[]
  }

  countDocs(scope: Scope): number {
    const inO = scopeWhere(scope, onTable('observations'))
    const inM = scopeWhere(scope, onTable('memories'))
    const obs = this.stmt(`SELECT COUNT(*) FROM observations WHERE 1 = 1${inO.sql}`).pluck().get(...inO.params) as number
    const mem = this.stmt(`SELECT COUNT(*) FROM memories WHERE 1 = 1${inM.sql}`).pluck().get(...inM.params) as number
    return obs + mem
  }

  docsInTimeRange(options: Scope & { sessionId?: SessionId; from: number; to: number; limit: number }): number[] {
    return this.guard('time range', () => {
      const inO = scopeWhere(options, onTable('observations'))
      const inM = scopeWhere(options, onTable('memories'))
      const obs = this.stmt(
        `SELECT rowid FROM observations WHERE ts >= ? AND ts < ?${inO.sql}${options.sessionId ? ' AND session_id = ?' : ''} ORDER BY ts, rowid LIMIT ?`,
      )
        .pluck()
        .all(options.from, options.to, ...inO.params, ...(options.sessionId ? [options.sessionId] : []), options.limit) as number[]
      if (options.sessionId) return obs
      const mems = this.stmt(`SELECT -rowid FROM memories WHERE created_at >= ? AND created_at < ?${inM.sql} ORDER BY created_at, rowid LIMIT ?`)
        .pluck()
        .all(options.from, options.to, ...inM.params, options.limit) as number[]
      return [...obs, ...mems].slice(0, options.limit)
    })
  }

  docs(docKeys: readonly number[]): SearchDoc[] {
    return this.guard('docs', () => {
      const found = new Map<number, SearchDoc>()
      const obsKeys = docKeys.filter((k) => k > 0)
      const memKeys = docKeys.filter((k) => k < 0).map((k) => -k)
      for (let i = 0; i < obsKeys.length; i += 500) {
        const chunk = obsKeys.slice(i, i + 500)
        const rows = this.stmt(`SELECT rowid AS doc_key, * FROM observations WHERE rowid IN (${chunk.map(() => '?').join(',')})`).all(...chunk) as (ObservationRow & { doc_key: number })[]
        for (const o of rows) {
          found.set(o.doc_key, {
            docKey: o.doc_key,
            type: 'observation',
            id: o.id,
            kind: o.kind,
            role: o.role,
            projectId: o.project_id as ProjectId,
            sessionId: o.session_id as SessionId,
            ts: o.ts,
            text: o.text,
            sourceRef: o.source_ref ?? undefined,
            flags: splitFlags(o.flags),
          })
        }
      }
      for (let i = 0; i < memKeys.length; i += 500) {
        const chunk = memKeys.slice(i, i + 500)
        const rows = this.stmt(`SELECT rowid AS row_id, * FROM memories WHERE rowid IN (${chunk.map(() => '?').join(',')})`).all(...chunk) as (MemoryRow & { row_id: number })[]
        for (const m of rows) {
          found.set(-m.row_id, {
            docKey: -m.row_id,
            type: 'memory',
            id: m.id,
            kind: m.kind,
            role: m.kind,
            projectId: m.project_id as ProjectId,
            sessionId: undefined,
            ts: m.created_at,
            text: m.text,
            sourceRef: undefined,
            flags: splitFlags(m.flags),
            ...(m.valid_to !== null ? { validTo: m.valid_to } : {}),
            ...(m.archived_at !== null ? { archivedAt: m.archived_at } : {}),
          })
        }
      }
      return docKeys.map((k) => found.get(k)).filter((d): d is SearchDoc => d !== undefined)
    })
  }

  neighbors(docs: readonly { docKey: number; sessionId: SessionId | undefined; ts: number }[], span: number): Map<number, { prev: number[]; next: number[] }> {
    return this.guard('neighbors', () => {
      const out = new Map<number, { prev: number[]; next: number[] }>()
      for (const d of docs) {
        if (d.docKey <= 0 || d.sessionId === undefined) continue
        const prev = this.stmt(
          'SELECT rowid FROM observations WHERE session_id = ? AND (ts, rowid) < (?, ?) ORDER BY ts DESC, rowid DESC LIMIT ?',
        ).pluck().all(d.sessionId, d.ts, d.docKey, span) as number[]
        const next = this.stmt(
          'SELECT rowid FROM observations WHERE session_id = ? AND (ts, rowid) > (?, ?) ORDER BY ts, rowid LIMIT ?',
        ).pluck().all(d.sessionId, d.ts, d.docKey, span) as number[]
        out.set(d.docKey, { prev, next })
      }
      return out
    })
  }


  getObservation(id: ObservationId | string): Observation | undefined {
    const row = this.stmt('SELECT * FROM observations WHERE id = ?').get(id) as ObservationRow | undefined
    return row && toObservation(row)
  }

  getMemory(id: MemoryId | string): Memory | undefined {
    const row = this.stmt('SELECT * FROM memories WHERE id = ?').get(id) as MemoryRow | undefined
    return row && toMemory(row)
  }

  memoryByIdemKey(idemKey: string): Memory | undefined {
    const row = this.stmt('SELECT m.* FROM memories m JOIN events e ON e.seq = m.event_seq WHERE e.idem_key = ?').get(idemKey) as
      | MemoryRow
      | undefined
    return row && toMemory(row)
  }

  currentMemoryByContent(projectRoot: string, contentKey: string, user: string | undefined, agent?: AgentName | null): Memory | undefined {
    const byAgent = agent === undefined ? '' : ' AND m.agent IS ?'
    const row = this.stmt(
      `SELECT m.* FROM memories m JOIN projects p ON p.id = m.project_id WHERE p.root = ? AND m.content_key = ? AND m.user_id IS ? AND m.valid_to IS NULL${byAgent}`,
    ).get(projectRoot, contentKey, user ?? null, ...(agent === undefined ? [] : [agent])) as MemoryRow | undefined
    return row && toMemory(row)
  }

  recordUsage(memoryIds: readonly string[], day: string): void {
    if (memoryIds.length === 0) return
    this.guard('record usage', () =>
      this.db
        .transaction(() => {
          for (const id of memoryIds) this.stmt('INSERT INTO memory_usage (memory_id, day) VALUES (?, ?) ON CONFLICT DO NOTHING').run(id, day)
        })
        .immediate(),
    )
  }

  usageCounts(memoryIds: readonly string[]): Map<string, number> {
    const out = new Map<string, number>()
    for (const id of memoryIds) out.set(id, this.stmt('SELECT COUNT(*) FROM memory_usage WHERE memory_id = ?').pluck().get(id) as number)
    return out
  }

  allMemories(projectId: ProjectId): Memory[] {
    return (this.stmt('SELECT * FROM memories WHERE project_id = ? ORDER BY created_at, rowid').all(projectId) as MemoryRow[]).map(toMemory)
  }

  memoryHistory(id: string): Memory[] {
    const start = this.getMemory(id)
    if (!start) return []
    const chain: Memory[] = [start]
    let back = start.supersedes
    while (back && chain.length < 1000) {
      const m = this.getMemory(back)
      if (!m) break
      chain.unshift(m)
      back = m.supersedes
    }
    let forward = start.supersededBy
    while (forward && chain.length < 2000) {
      const m = this.getMemory(forward)
      if (!m) break
      chain.push(m)
      forward = m.supersededBy
    }
    return chain
  }

  observationIdsOfEvents(filter: EventFilter & { projectRoot: string }): string[] {
    const where = eventConditions(filter, 'e.')
    return this.stmt(`SELECT o.id FROM observations o JOIN events e ON e.seq = o.event_seq WHERE ${where.sql.join(' AND ')}`).pluck().all(...where.params) as string[]
  }

  sourceEventOf(id: string): number | undefined {
    const o = this.stmt('SELECT event_seq FROM observations WHERE id = ?').pluck().get(id) as number | undefined
    if (o !== undefined) return o
    return this.stmt('SELECT event_seq FROM memories WHERE id = ?').pluck().get(id) as number | undefined
  }

  deleteEvents(filter: EventFilter): number {
    return this.guard('delete', () => {
      if (filter.seqs && filter.seqs.length === 0) return 0
      const { sql: where, params } = eventConditions(filter)
      if (where.length === 0) throw new MnemoError('INVALID_INPUT', 'a delete needs a scope (ids, project, session or time)', { details: { path: 'scope' } })
      let deleted = 0
      this.db
        .transaction(() => {
          const rows = this.stmt(`SELECT seq, idem_key, project_root FROM events WHERE ${where.join(' AND ')}`).all(...params) as { seq: number; idem_key: string; project_root: string }[]
          for (const r of rows) {
            // Derived rows first (they reference the event), then the event; its key becomes a tombstone.
            for (const o of this.stmt('SELECT id FROM observations WHERE event_seq = ?').pluck().all(r.seq) as string[]) this.removeDerived(o)
            for (const m of this.stmt('SELECT id, superseded_by FROM memories WHERE event_seq = ?').all(r.seq) as { id: string; superseded_by: string | null }[]) {
              this.removeDerived(m.id)
              const next = m.superseded_by ? (this.stmt('SELECT id, valid_from FROM memories WHERE id = ?').get(m.superseded_by) as { id: string; valid_from: number } | undefined) : undefined
              if (next) {
                // A middle version goes: the one before it is now superseded by the one after it (as a rebuild would derive).
                this.stmt('UPDATE memories SET superseded_by = ?, valid_to = ? WHERE superseded_by = ?').run(next.id, next.valid_from, m.id)
                const before = this.stmt('SELECT id FROM memories WHERE superseded_by = ?').pluck().get(next.id) as string | undefined
                this.stmt('UPDATE memories SET supersedes = ? WHERE id = ?').run(before ?? null, next.id)
              } else {
                // The current version goes: the one it replaced is current again.
                this.stmt('UPDATE memories SET valid_to = NULL, superseded_by = NULL WHERE superseded_by = ?').run(m.id)
              }
            }
            this.stmt('INSERT INTO tombstones (idem_key, at, project_root) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(r.idem_key, this.now(), r.project_root)
            this.stmt('DELETE FROM events WHERE seq = ?').run(r.seq)
          }
          deleted = rows.length
        })
        .immediate()
      return deleted
    })
  }

  getSession(id: SessionId | string): Session | undefined {
    const row = this.stmt(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = ?`).get(id) as SessionRow | undefined
    return row && toSession(row)
  }

  getProject(id: ProjectId | string): Project | undefined {
    return this.stmt('SELECT id, name, root FROM projects WHERE id = ?').get(id) as Project | undefined
  }

  listProjects(scope: Omit<Scope, 'projectIds'> = {}): Project[] {
    if (scope.user === undefined && scope.agent === undefined) return this.stmt('SELECT id, name, root FROM projects ORDER BY name, root').all() as Project[]
    const sessions = scopeWhere(scope, onTable('s'))
    const memories = scopeWhere(scope, onTable('m'))
    return this.stmt(
      `SELECT id, name, root FROM projects p
       WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.project_id = p.id AND s.agent <> 'mnemo'${sessions.sql})
          OR EXISTS (SELECT 1 FROM memories m WHERE m.project_id = p.id${memories.sql})
       ORDER BY name, root`,
    ).all(...sessions.params, ...memories.params) as Project[]
  }

  listSessions(options: Scope & { limit: number; offset?: number; excludeAgent?: string }): Session[] {
    const inScope = scopeWhere(options, onTable('s'))
    const rows = this.stmt(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE 1 = 1${inScope.sql}${options.excludeAgent !== undefined ? ' AND s.agent <> ?' : ''} ORDER BY s.last_event_at DESC, s.id DESC LIMIT ? OFFSET ?`,
    ).all(
      ...inScope.params,
      ...(options.excludeAgent !== undefined ? [options.excludeAgent] : []),
      options.limit,
      options.offset ?? 0,
    ) as SessionRow[]
    return rows.map(toSession)
  }

  sessionObservations(sessionId: SessionId, limit: number): Observation[] {
    const rows = this.stmt('SELECT * FROM observations WHERE session_id = ? ORDER BY ts, rowid LIMIT ?').all(sessionId, limit) as ObservationRow[]
    return rows.map(toObservation)
  }

  listMemories(options: Scope & { limit: number }): Memory[] {
    const inScope = scopeWhere(options, onTable('memories'))
    const rows = this.stmt(`SELECT * FROM memories WHERE valid_to IS NULL AND archived_at IS NULL${inScope.sql} ORDER BY pinned DESC, created_at DESC, rowid DESC LIMIT ?`).all(
      ...inScope.params,
      options.limit,
    ) as MemoryRow[]
    return rows.map(toMemory)
  }

  browseObservations(options: BrowseObservationsOptions): (Observation & { agent: AgentName })[] {
    return this.guard('browse observations', () => {
      if (options.projectIds.length === 0) return []
      // The agent filter below is the viewer's (one agent's rows exactly): an observation always has an agent.
      const inScope = scopeWhere({ projectIds: options.projectIds, ...(options.user !== undefined ? { user: options.user } : {}) }, onTable('o'))
      const where = [`1 = 1${inScope.sql}`]
      const params: unknown[] = [...inScope.params]
      if (options.sessionId !== undefined) {
        where.push('o.session_id = ?')
        params.push(options.sessionId)
      }
      if (options.kinds && options.kinds.length > 0) {
        where.push(`o.kind IN (${options.kinds.map(() => '?').join(',')})`)
        params.push(...options.kinds)
      }
      if (options.agent !== undefined) {
        // An agent with no session here would otherwise cost a scan of every row of the projects.
        const any = this.stmt(`SELECT 1 FROM sessions WHERE agent = ? AND project_id IN (${options.projectIds.map(() => '?').join(',')}) LIMIT 1`).get(options.agent, ...options.projectIds)
        if (any === undefined) return []
        where.push('o.agent = ?')
        params.push(options.agent)
      }
      if (options.afterSeq !== undefined) {
        where.push('o.event_seq > ?')
        params.push(options.afterSeq)
      }
      if (options.beforeSeq !== undefined) {
        where.push('o.event_seq < ?')
        params.push(options.beforeSeq)
      }
      const dir = options.order === 'asc' ? 'ASC' : 'DESC'
      const rows = this.stmt(
        `SELECT o.*, s.agent AS agent FROM observations o JOIN sessions s ON s.id = o.session_id
         WHERE ${where.join(' AND ')} ORDER BY o.event_seq ${dir}, o.rowid ${dir} LIMIT ?`,
      ).all(...params, options.limit) as (ObservationRow & { agent: string })[]
      return rows.map((r) => ({ ...toObservation(r), agent: r.agent as AgentName }))
    })
  }

  lastEventSeq(): number {
    return (this.stmt('SELECT COALESCE(MAX(seq), 0) FROM events').pluck().get() as number) ?? 0
  }

  sessionObservationsPage(sessionId: SessionId, offset: number, limit: number): Observation[] {
    const rows = this.stmt('SELECT * FROM observations WHERE session_id = ? ORDER BY ts, rowid LIMIT ? OFFSET ?').all(sessionId, limit, offset) as ObservationRow[]
    return rows.map(toObservation)
  }

  observationPosition(sessionId: SessionId, observationId: string): number | undefined {
    const at = this.stmt('SELECT ts, rowid FROM observations WHERE id = ? AND session_id = ?').get(observationId, sessionId) as { ts: number; rowid: number } | undefined
    if (!at) return undefined
    return this.stmt('SELECT COUNT(*) FROM observations WHERE session_id = ? AND (ts, rowid) < (?, ?)').pluck().get(sessionId, at.ts, at.rowid) as number
  }

  browseMemories(options: BrowseMemoriesOptions): { memories: Memory[]; total: number } {
    return this.guard('browse memories', () => {
      if (options.projectIds.length === 0) return { memories: [], total: 0 }
      const inScope = scopeWhere(options, onTable('memories'))
      const where = [`1 = 1${inScope.sql}`]
      const params: unknown[] = [...inScope.params]
      if (options.kinds && options.kinds.length > 0) {
        where.push(`kind IN (${options.kinds.map(() => '?').join(',')})`)
        params.push(...options.kinds)
      }
      if (options.state === 'current') where.push('valid_to IS NULL AND archived_at IS NULL')
      else if (options.state === 'archived') where.push('valid_to IS NULL AND archived_at IS NOT NULL')
      else if (options.state === 'superseded') where.push('valid_to IS NOT NULL')
      const clause = where.join(' AND ')
      const total = this.stmt(`SELECT COUNT(*) FROM memories WHERE ${clause}`).pluck().get(...params) as number
      const rows = this.stmt(`SELECT * FROM memories WHERE ${clause} ORDER BY pinned DESC, created_at DESC, rowid DESC LIMIT ? OFFSET ?`).all(
        ...params,
        options.limit,
        options.offset,
      ) as MemoryRow[]
      return { memories: rows.map(toMemory), total }
    })
  }

  memoriesFromObservations(projectId: ProjectId, observationIds: readonly string[]): Map<string, string[]> {
    const out = new Map<string, string[]>()
    if (observationIds.length === 0) return out
    const rows = this.stmt(
      `SELECT j.value AS obs, m.id AS mem FROM memories m, json_each(m.sources) j
       WHERE m.project_id = ? AND m.sources IS NOT NULL AND j.value IN (SELECT value FROM json_each(?))
       ORDER BY m.created_at, m.rowid`,
    ).all(projectId, JSON.stringify(observationIds)) as { obs: string; mem: string }[]
    for (const r of rows) out.set(r.obs, [...(out.get(r.obs) ?? []), r.mem])
    return out
  }

  searchEntities(scope: Scope & { projectIds: readonly ProjectId[] }, text: string, limit: number): EntityRow[] {
    if (scope.projectIds.length === 0) return []
    const needle = text.trim().toLowerCase()
    const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    // Only entities some document of the scope mentions: another user's names never show up.
    const inScope = scope.user !== undefined || scope.agent !== undefined ? scopeWhere({ ...scope, projectIds: [] }, onEither) : undefined
    const visible = inScope
      ? ` AND EXISTS (SELECT 1 FROM entity_mentions x ${docJoin('x.doc_key')} WHERE x.entity_id = e.id${inScope.sql})`
      : ''
    return this.stmt(
      `SELECT e.id, e.type, e.name, (SELECT COUNT(*) FROM entity_mentions m WHERE m.entity_id = e.id) AS docs
       FROM entities e WHERE e.project_id IN (${scope.projectIds.map(() => '?').join(',')}) AND lower(e.name) LIKE ? ESCAPE '\\'${visible}
       ORDER BY lower(e.name) = ? DESC, docs DESC, e.id LIMIT ?`,
    ).all(...scope.projectIds, pattern, ...(inScope?.params ?? []), needle, limit) as EntityRow[]
  }

  sampleDocs(scope: Scope & { projectIds: readonly ProjectId[] }, entityId: number | undefined, limit: number): number[] {
    if (scope.projectIds.length === 0) return []
    if (entityId !== undefined && (scope.user !== undefined || scope.agent !== undefined)) {
      const inScope = scopeWhere({ ...scope, projectIds: [] }, onEither)
      return this.stmt(
        `SELECT x.doc_key FROM entity_mentions x ${docJoin('x.doc_key')}
         WHERE x.entity_id = ?${inScope.sql} ORDER BY x.doc_key > 0 DESC, abs(x.doc_key) DESC LIMIT ?`,
      )
        .pluck()
        .all(entityId, ...inScope.params, limit) as number[]
    }
    if (entityId !== undefined) {
      // Entities belong to one project: its mentions are already in scope.
      const obs = this.stmt('SELECT doc_key FROM entity_mentions WHERE entity_id = ? AND doc_key > 0 ORDER BY doc_key DESC LIMIT ?').pluck().all(entityId, limit) as number[]
      if (obs.length >= limit) return obs
      const mem = this.stmt('SELECT doc_key FROM entity_mentions WHERE entity_id = ? AND doc_key < 0 ORDER BY doc_key LIMIT ?').pluck().all(entityId, limit - obs.length) as number[]
      return [...obs, ...mem]
    }
    const inScope = scopeWhere(scope, onTable('observations'))
    return this.stmt(`SELECT rowid FROM observations WHERE 1 = 1${inScope.sql} ORDER BY event_seq DESC LIMIT ?`)
      .pluck()
      .all(...inScope.params, limit) as number[]
  }

  entitiesInDocs(docKeys: readonly number[], limit: number): { id: number; shared: number }[] {
    if (docKeys.length === 0) return []
    return this.stmt(
      `SELECT entity_id AS id, COUNT(*) AS shared FROM entity_mentions WHERE doc_key IN (SELECT value FROM json_each(?))
       GROUP BY entity_id ORDER BY shared DESC, entity_id LIMIT ?`,
    ).all(JSON.stringify(docKeys), limit) as { id: number; shared: number }[]
  }

  entitiesById(ids: readonly number[]): EntityRow[] {
    if (ids.length === 0) return []
    const rows = this.stmt(
      `SELECT e.id, e.type, e.name, (SELECT COUNT(*) FROM entity_mentions m WHERE m.entity_id = e.id) AS docs
       FROM entities e WHERE e.id IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(ids)) as EntityRow[]
    const byId = new Map(rows.map((r) => [r.id, r]))
    return ids.map((id) => byId.get(id)).filter((r): r is EntityRow => r !== undefined)
  }

  entityEdges(ids: readonly number[], docKeys: readonly number[]): { source: number; target: number; weight: number }[] {
    if (ids.length < 2 || docKeys.length === 0) return []
    // One indexed read of the (document, entity) pairs, then pairs counted here: a self-join in SQL
    // over a JSON-listed sample is ~20× slower (measured with scripts/bench-viewer.mjs).
    const rows = this.stmt(
      `SELECT doc_key AS doc, entity_id AS entity FROM entity_mentions
       WHERE doc_key IN (SELECT value FROM json_each(?)) AND +entity_id IN (SELECT value FROM json_each(?)) ORDER BY doc_key, entity_id`,
    ).all(JSON.stringify(docKeys), JSON.stringify(ids)) as { doc: number; entity: number }[]
    const weights = new Map<string, number>()
    for (let i = 0; i < rows.length; ) {
      let j = i
      while (j < rows.length && rows[j]!.doc === rows[i]!.doc) j++
      for (let a = i; a < j; a++) for (let b = a + 1; b < j; b++) {
        const key = `${rows[a]!.entity}:${rows[b]!.entity}`
        weights.set(key, (weights.get(key) ?? 0) + 1)
      }
      i = j
    }
    return [...weights]
      .map(([key, weight]) => {
        const [source, target] = key.split(':').map(Number) as [number, number]
        return { source, target, weight }
      })
      .sort((x, y) => y.weight - x.weight || x.source - y.source || x.target - y.target)
  }

  scopeCounts(projectRoot?: string, user?: string | null): { events: number; sessions: number; observations: number; memories: number } {
    const byUser = scopeWhere(user === undefined ? {} : { user }, (column) => column)
    const n = (table: string, where: string, project: string): number =>
      this.stmt(`SELECT COUNT(*) FROM ${table} WHERE ${where}${projectRoot !== undefined ? ` AND ${project}` : ''}${byUser.sql}`)
        .pluck()
        .get(...(projectRoot !== undefined ? [projectRoot] : []), ...byUser.params) as number
    const inProject = 'project_id IN (SELECT id FROM projects WHERE root = ?)'
    return {
      events: n('events', '1 = 1', 'project_root = ?'),
      // Agents' sessions: mnemo's bookkeeping session of a project is shared by its users' statements.
      sessions: n('sessions', "agent <> 'mnemo'", inProject),
      observations: n('observations', '1 = 1', inProject),
      memories: n('memories', '1 = 1', inProject),
    }
  }

  readScopedEvents(afterSeq: number, limit: number, scope: { projectRoot?: string; user?: string | null }): StoredEvent[] {
    return this.guard('read events', () => {
      const where = ['seq > ?']
      const params: unknown[] = [afterSeq]
      if (scope.projectRoot !== undefined) {
        where.push('project_root = ?')
        params.push(scope.projectRoot)
      }
      const byUser = scopeWhere(scope.user === undefined ? {} : { user: scope.user }, (column) => column)
      return (this.stmt(`SELECT * FROM events WHERE ${where.join(' AND ')}${byUser.sql} ORDER BY seq LIMIT ?`).all(...params, ...byUser.params, limit) as EventRow[]).map(toStoredEvent)
    })
  }

  stats(): StoreStats {
    return this.guard('stats', () => {
      const count = (table: string): number => (this.stmt(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n
      const last = this.stmt('SELECT MAX(received_at) AS t FROM events').get() as { t: number | null }
      let bytes = 0
      if (this.path !== ':memory:') {
        for (const suffix of ['', '-wal']) {
          try {
            bytes += statSync(this.path + suffix).size
          } catch {
            // the WAL file may not exist between checkpoints
          }
        }
      }
      return {
        events: count('events'),
        projects: count('projects'),
        // Agents' sessions: mnemo's own bookkeeping session per project (remember, consolidation) is not one.
        sessions: this.stmt("SELECT COUNT(*) FROM sessions WHERE agent <> 'mnemo'").pluck().get() as number,
        observations: count('observations'),
        memories: count('memories'),
        lastEventAt: last.t ?? undefined,
        bytes,
      }
    })
  }

  rewritePayloads(fn: (payload: unknown) => unknown): number {
    return this.guard('rewrite payloads', () => {
      let changed = 0
      this.db
        .transaction(() => {
          let after = 0
          for (;;) {
            const rows = this.stmt('SELECT seq, payload FROM events WHERE seq > ? ORDER BY seq LIMIT 1000').all(after) as { seq: number; payload: string }[]
            if (rows.length === 0) break
            for (const row of rows) {
              after = row.seq
              const next = fn(JSON.parse(row.payload) as unknown)
              if (next === undefined) continue
              const text = JSON.stringify(next)
              if (text === row.payload) continue
              this.stmt('UPDATE events SET payload = ? WHERE seq = ?').run(text, row.seq)
              changed++
            }
          }
        })
        .immediate()
      return changed
    })
  }

  foldEvents(
    options: { before: number; projectRoot?: string; user?: string | null },
    fold: (event: StoredEvent) => { format: EventFormat; payload: unknown } | undefined,
  ): { events: number; bytesBefore: number; bytesAfter: number } {
    return this.guard('fold events', () => {
      const out = { events: 0, bytesBefore: 0, bytesAfter: 0 }
      const scope = `${options.projectRoot !== undefined ? ' AND project_root = ?' : ''}${options.user === null ? ' AND user_id IS NULL' : options.user !== undefined ? ' AND user_id = ?' : ''}`
      this.db
        .transaction(() => {
          let after = 0
          for (;;) {
            const rows = this.stmt(`SELECT * FROM events WHERE seq > ? AND ts < ?${scope} ORDER BY seq LIMIT 1000`).all(
              after,
              options.before,
              ...(options.projectRoot !== undefined ? [options.projectRoot] : []),
              ...(typeof options.user === 'string' ? [options.user] : []),
            ) as EventRow[]
            if (rows.length === 0) break
            for (const row of rows) {
              after = row.seq
              const next = fold(toStoredEvent(row))
              if (next === undefined) continue
              const text = JSON.stringify(next.payload)
              this.stmt('UPDATE events SET format = ?, payload = ? WHERE seq = ?').run(next.format, text, row.seq)
              out.events++
              out.bytesBefore += Buffer.byteLength(row.payload)
              out.bytesAfter += Buffer.byteLength(text)
            }
          }
        })
        .immediate()
      return out
    })
  }

  vacuum(): { bytesBefore: number; bytesAfter: number } {
    return this.guard('vacuum', () => {
      const size = (): number => (this.path === ':memory:' ? 0 : statSync(this.path).size)
      this.db.pragma('wal_checkpoint(TRUNCATE)')
      const bytesBefore = size()
      this.db.exec('VACUUM')
      this.db.pragma('wal_checkpoint(TRUNCATE)')
      return { bytesBefore, bytesAfter: size() }
    })
  }

  tombstones(projectRoot?: string): { idemKey: string; at: number; projectRoot: string | undefined }[] {
    const rows = (
      projectRoot === undefined
        ? this.stmt('SELECT idem_key, at, project_root FROM tombstones ORDER BY at, idem_key').all()
        : this.stmt('SELECT idem_key, at, project_root FROM tombstones WHERE project_root = ? ORDER BY at, idem_key').all(projectRoot)
    ) as { idem_key: string; at: number; project_root: string | null }[]
    return rows.map((r) => ({ idemKey: r.idem_key, at: r.at, projectRoot: r.project_root ?? undefined }))
  }

  putTombstones(rows: readonly { idemKey: string; at: number; projectRoot: string | undefined }[]): void {
    this.guard('put tombstones', () =>
      this.db
        .transaction(() => {
          for (const r of rows) this.stmt('INSERT INTO tombstones (idem_key, at, project_root) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(r.idemKey, r.at, r.projectRoot ?? null)
        })
        .immediate(),
    )
  }

  audit(entry: AuditEntry): void {
    this.guard('audit', () =>
      this.stmt('INSERT INTO audit_log (at, actor, action, target, count, details) VALUES (?, ?, ?, ?, ?, ?)').run(
        entry.at,
        entry.actor,
        entry.action,
        entry.target,
        entry.count,
        entry.details ? JSON.stringify(entry.details) : null,
      ),
    )
  }

  auditLog(limit: number): AuditEntry[] {
    const rows = this.stmt('SELECT at, actor, action, target, count, details FROM audit_log ORDER BY id DESC LIMIT ?').all(limit) as (Omit<AuditEntry, 'details'> & { details: string | null })[]
    return rows.map((r) => ({ at: r.at, actor: r.actor, action: r.action, target: r.target, count: r.count, ...(r.details ? { details: JSON.parse(r.details) as Record<string, unknown> } : {}) }))
  }

  integrityCheck(): string {
    const rows = this.db.pragma('integrity_check') as { integrity_check: string }[]
    return rows.map((r) => r.integrity_check).join('; ')
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}
