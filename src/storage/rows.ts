import type { MemoryId, ObservationId, ProjectId, SessionId } from '../core/ids.js'
import type { AgentName, EventFormat, Memory, MemoryKind, Observation, ObservationKind, Session } from '../core/types.js'
import type { StoredEvent } from './store.js'

// The derived rows as both dialects' databases return them (snake_case columns, epoch ms as numbers, NULL as null),
// their mapping to the domain types, and the session-key namespacing both dialects store: the storage layer's shared
// part, so that storage/sqlite and storage/postgres read the same rows the same way.

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

/** A logged event from its row and its decoded payload (each dialect stores payloads its own way). */
export function eventFromRow(row: EventRow, payload: unknown): StoredEvent {
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
    payload,
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
