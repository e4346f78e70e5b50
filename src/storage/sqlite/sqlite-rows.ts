import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { type EventRow, eventFromRow } from '../rows.js'
import type { EventFilter, Scope, StoredEvent } from '../store.js'

export type { EventRow, MemoryRow, ObservationRow, OldRow, SessionRow } from '../rows.js'
export {
  eventFromRow,
  SESSION_COLUMNS,
  splitFlags,
  splitStoredKey,
  storedSessionKey,
  toMemory,
  toObservation,
  toSession,
  valueAfterSubject,
} from '../rows.js'

// The SQLite store's payload encoding and the SQL fragments every query shares (scope conditions, delete filters);
// the rows and their mapping to the domain types are the storage layer's (../rows.ts), re-exported here.

/** Payloads whose JSON is shorter than this many characters are stored as text: compressing them gains little. */
const COMPRESS_PAYLOAD_FROM = 200

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
  return eventFromRow(row, JSON.parse(payloadText(row.payload)) as unknown)
}
