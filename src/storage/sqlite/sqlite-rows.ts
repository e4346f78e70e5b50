import { type EventRow, eventFromRow, type ObservationRow, toObservation } from '../rows.js'
import type { Observation } from '../../core/types.js'
import type { EventFilter, Scope, StoredEvent } from '../store.js'
import { type Visibility, type VisibilityColumns, visibilitySql } from '../visibility.js'
import { observationText, payloadText } from './sqlite-payload.js'

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
export { encodeObservationText, encodePayload, observationText, payloadText } from './sqlite-payload.js'

// The SQLite store's payload encoding (sqlite-payload.ts, re-exported) and the SQL fragments every query shares (scope conditions, delete filters);
// the rows and their mapping to the domain types are the storage layer's (../rows.ts), re-exported here.

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

/**
 * SQL conditions, each starting with ` AND `, that keep the documents `v` lets recall return (see `visibilitySql`,
 * the rule both dialects share), over the columns `cols` names.
 */
export function visibleWhere(v: Visibility, cols: VisibilityColumns): { sql: string; params: unknown[] } {
  const params: unknown[] = []
  const sql = visibilitySql(v, cols, {
    param: (value) => {
      params.push(value)
      return '?'
    },
    inList: (col, values) => {
      params.push(...values)
      return `${col} IN (${values.map(() => '?').join(', ')})`
    },
  })
  return { sql, params }
}

/** The facts `visibleWhere` reads of a document that is an observation `o` or a memory `m` (see `docJoin`). */
export const DOC_VISIBILITY: VisibilityColumns = {
  kind: 'COALESCE(o.kind, m.kind)',
  ts: 'COALESCE(o.ts, m.created_at)',
  validTo: 'm.valid_to',
  archivedAt: 'm.archived_at',
  rows: { notMemory: 'm.id IS NULL' },
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

/**
 * `toObservation(withText(row))`, but a compressed text (a long tool output or error: see `encodeObservationText`) is
 * inflated when it is first read, not before: `text` is then an accessor, enumerable like a plain field (a spread,
 * `JSON.stringify` and a structured clone read it), that keeps what it inflated (or what is assigned to it). For a
 * session's observations, which a context digest reads without reading a tool output's text (23 texts of the 268 of
 * the 100k bench store's busiest project's block: ~2.5 ms CPU a block).
 */
export function toObservationInflatedOnRead(row: ObservationRow): Observation {
  const stored = row.text as string | Buffer
  if (typeof stored === 'string') return toObservation(row)
  const o = toObservation({ ...row, text: '' })
  let text: string | undefined
  return Object.defineProperty(o, 'text', {
    get: () => {
      text ??= observationText(stored)
      return text
    },
    set: (value: string) => {
      text = value
    },
    enumerable: true,
    configurable: true,
  })
}

/** `row` with its text as written (a long tool output is stored compressed: see `encodeObservationText`). */
export function withText<R extends { text: string }>(row: R): R {
  const stored = row.text as string | Buffer
  return typeof stored === 'string' ? row : { ...row, text: observationText(stored) }
}
