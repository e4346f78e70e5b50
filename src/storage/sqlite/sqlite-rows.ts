import { deflateRawSync, inflateRawSync } from 'node:zlib'
import type { MemoryId, ObservationId, ProjectId, SessionId } from '../../core/ids.js'
import type { AgentName, EventFormat, Memory, MemoryKind, Observation, ObservationKind, Session } from '../../core/types.js'
import type { EventFilter, Scope, StoredEvent } from '../store.js'

// The SQLite store's rows as the database returns them, their mapping to the domain types, and the
// SQL fragments every query shares (scope conditions, delete filters).

export interface ObservationRow {
  id: string
  event_seq: number
  session_id: string
  project_id: string
  kind: string
  role: string
  tool: string | null
  files: string | null
  source_ref: string | null
  ts: number
  text: string
  flags: string | null
  user_id: string | null
}
export interface MemoryRow {
  id: string
  project_id: string
  kind: string
  text: string
  created_at: number
  seen_count: number
  flags: string | null
  content_key: string
  subject_key: string | null
  last_seen_at: number
  valid_from: number
  valid_to: number | null
  supersedes: string | null
  superseded_by: string | null
  review: string | null
  pinned: number
  archived_at: number | null
  sources: string | null
  confidence: number | null
  user_id: string | null
  agent: string | null
}
export interface SessionRow {
  id: string
  project_id: string
  agent: string
  session_key: string
  started_at: number
  last_event_at: number
  ended_at: number | null
  title: string | null
  observation_count: number
  user_id: string | null
}
export interface EventRow {
  seq: number
  idem_key: string
  agent: string
  format: string
  type: string
  session_key: string
  project_root: string
  project_name: string
  ts: number
  session_started_at: number | null
  received_at: number
  /** JSON text, or that text compressed (see `encodePayload`). */
  payload: string | Buffer
  user_id: string | null
}

/** Payloads whose JSON is shorter than this many characters are stored as text: compressing them gains little. */
export const COMPRESS_PAYLOAD_FROM = 200

/**
 * An event payload as the log stores it: its JSON text, compressed with raw DEFLATE (RFC 1951, zlib level 1: level 6 gains 5% for twice the time) into a
 * BLOB when the text has `COMPRESS_PAYLOAD_FROM` characters or more. A transcript record (code listings, test
 * output) shrinks about 2.7× so; the log stays the source of truth, read back exactly by `payloadText`. Stores
 * written before payloads were compressed hold text, which reads the same.
 */
export function encodePayload(value: unknown): string | Buffer {
  const text = JSON.stringify(value ?? null)
  return text.length < COMPRESS_PAYLOAD_FROM ? text : deflateRawSync(text, { level: 1 })
}

/** The JSON text of a stored payload (text, or a BLOB written by `encodePayload`). */
export function payloadText(stored: string | Buffer): string {
  return typeof stored === 'string' ? stored : inflateRawSync(stored).toString('utf8')
}

export const SESSION_COLUMNS = `s.id, s.project_id, s.agent, s.session_key, s.started_at, s.last_event_at, s.ended_at, s.title, s.user_id,
  (SELECT COUNT(*) FROM observations o WHERE o.session_id = s.id) AS observation_count`

export interface OldRow {
  rowid: number
  id: string
  text: string
  subject_key: string | null
}

/** The words of a memory after its subject ("orders DB is PostgreSQL 14" → "postgresql 14"). */
export function valueAfterSubject(text: string, subjectKey: string | null): string | undefined {
  if (!subjectKey) return undefined
  const m = /\b(?:is|are|was|were|uses?|runs?(?: on)?|migrated to|moved to|switched to|changed to|became|now)\b\s*(.+)$/i.exec(text)
  return m?.[1]?.replace(/[.!]+$/, '').trim()
}

/**
 * SQL conditions, each starting with ` AND `, that confine rows to a scope
 * (see `Scope`): `col` names a column of the row being filtered.
 */
export function scopeWhere(scope: Scope, col: (name: 'project_id' | 'user_id' | 'agent') => string): { sql: string; params: unknown[] } {
  let sql = ''
  const params: unknown[] = []
  const projects = scope.projectIds ?? []
  if (projects.length > 0) {
    sql += ` AND ${col('project_id')} IN (${projects.map(() => '?').join(',')})`
    params.push(...projects)
  }
  if (scope.user === null) sql += ` AND ${col('user_id')} IS NULL`
  else if (scope.user !== undefined) {
    sql += ` AND (${col('user_id')} IS NULL OR ${col('user_id')} = ?)`
    params.push(scope.user)
  }
  if (scope.agent !== undefined) {
    sql += ` AND (${col('agent')} IS NULL OR ${col('agent')} = ?)`
    params.push(scope.agent)
  }
  return { sql, params }
}

/** Columns of one table or alias (`o.user_id`). */
export const onTable =
  (alias: string) =>
  (name: string): string =>
    `${alias}.${name}`
/** The outer joins that make a document key (`f.rowid`, `x.doc_key`) an observation `o` or a memory `m` (positive keys are observations, negative memories). */
export const docJoin = (key: string): string =>
  `LEFT JOIN observations o ON ${key} > 0 AND o.rowid = ${key} LEFT JOIN memories m ON ${key} < 0 AND m.rowid = -${key}`
/** Columns of a document that is an observation `o` or a memory `m` (outer-joined, one of them NULL). */
export const onEither = (name: string): string => `COALESCE(o.${name}, m.${name})`

/** The conditions of the events a delete or fold filter names (column names prefixed with `alias`). */
export function eventConditions(filter: EventFilter, alias = ''): { sql: string[]; params: unknown[] } {
  const sql: string[] = []
  const params: unknown[] = []
  const and = (condition: string, ...values: unknown[]): void => {
    sql.push(condition)
    params.push(...values)
  }
  if (filter.seqs) and(`${alias}seq IN (${filter.seqs.map(() => '?').join(',')})`, ...filter.seqs)
  if (filter.projectRoot !== undefined) and(`${alias}project_root = ?`, filter.projectRoot)
  if (filter.sessionKey !== undefined) and(`${alias}session_key = ?`, filter.sessionKey)
  if (filter.agent !== undefined) and(`${alias}agent = ?`, filter.agent)
  if (filter.before !== undefined) and(`${alias}ts < ?`, filter.before)
  // A user's delete takes their own events only: shared ones (no user) belong to everyone.
  if (filter.user === null) and(`${alias}user_id IS NULL`)
  else if (filter.user !== undefined) and(`${alias}user_id = ?`, filter.user)
  return { sql, params }
}

export function toStoredEvent(row: EventRow): StoredEvent {
  const event: StoredEvent = {
    seq: row.seq,
    receivedAt: row.received_at,
    idemKey: row.idem_key,
    agent: row.agent as AgentName,
    format: row.format as EventFormat,
    type: row.type,
    sessionKey: row.session_key,
    project: { root: row.project_root, name: row.project_name },
    ts: row.ts,
    payload: JSON.parse(payloadText(row.payload)) as unknown,
  }
  if (row.session_started_at !== null) event.sessionStartedAt = row.session_started_at
  if (row.user_id !== null) event.user = row.user_id
  return event
}

export function toObservation(row: ObservationRow): Observation {
  return {
    id: row.id as ObservationId,
    sessionId: row.session_id as SessionId,
    projectId: row.project_id as ProjectId,
    kind: row.kind as ObservationKind,
    role: row.role,
    text: row.text,
    tool: row.tool ?? undefined,
    files: row.files ? (JSON.parse(row.files) as string[]) : [],
    sourceRef: row.source_ref ?? undefined,
    ts: row.ts,
    eventSeq: row.event_seq,
    flags: splitFlags(row.flags),
    ...(row.user_id !== null ? { user: row.user_id } : {}),
  }
}

export function splitFlags(flags: string | null): string[] {
  return flags ? flags.split(',') : []
}

export function toMemory(row: MemoryRow): Memory {
  return {
    id: row.id as MemoryId,
    projectId: row.project_id as ProjectId,
    kind: row.kind as MemoryKind,
    text: row.text,
    createdAt: row.created_at,
    seenCount: row.seen_count,
    flags: splitFlags(row.flags),
    validFrom: row.valid_from,
    validTo: row.valid_to ?? undefined,
    supersedes: row.supersedes ?? undefined,
    supersededBy: row.superseded_by ?? undefined,
    review: row.review ?? undefined,
    pinned: row.pinned === 1,
    archivedAt: row.archived_at ?? undefined,
    lastSeenAt: row.last_seen_at,
    sources: row.sources ? (JSON.parse(row.sources) as string[]) : [],
    confidence: row.confidence ?? undefined,
    ...(row.user_id !== null ? { user: row.user_id } : {}),
    ...(row.agent !== null ? { agent: row.agent as AgentName } : {}),
  }
}

/**
 * How a session's key is stored: a user's sessions are namespaced by the user (`user:<name>:<key>`), shared ones as
 * the agent gave it — unless that looks namespaced (`user:…`, `shared:…`), which gets `shared:` in front, so no
 * shared session can ever take a user's key.
 */
export function storedSessionKey(sessionKey: string, user: string | null): string {
  if (user !== null) return `user:${user}:${sessionKey}`
  return /^(user|shared):/.test(sessionKey) ? `shared:${sessionKey}` : sessionKey
}

/** The agent's session key and the user of a stored key (see `storedSessionKey`; user names hold no colon). */
export function splitStoredKey(stored: string): { key: string; user: string | null } {
  const named = /^user:([^:]+):(.*)$/s.exec(stored)
  if (named) return { key: named[2]!, user: named[1]! }
  return { key: stored.startsWith('shared:') ? stored.slice('shared:'.length) : stored, user: null }
}

/** The agent's own session id from a stored key (see `storedSessionKey`). */
function agentSessionKey(stored: string, user: string | null): string {
  if (user !== null) return stored.slice(`user:${user}:`.length)
  return stored.startsWith('shared:') ? stored.slice('shared:'.length) : stored
}

export function toSession(row: SessionRow): Session {
  return {
    id: row.id as SessionId,
    projectId: row.project_id as ProjectId,
    agent: row.agent as AgentName,
    // The agent's own id, as the agent and every surface know it.
    sessionKey: agentSessionKey(row.session_key, row.user_id),
    startedAt: row.started_at,
    lastEventAt: row.last_event_at,
    endedAt: row.ended_at ?? undefined,
    title: row.title ?? undefined,
    observationCount: row.observation_count,
    ...(row.user_id !== null ? { user: row.user_id } : {}),
  }
}
