import type { ClientBase, QueryResultRow } from 'pg'
import { type EventRow, eventFromRow } from '../rows.js'
import type { EventFilter, Scope, StoredEvent } from '../store.js'
import { type Visibility, type VisibilityColumns, visibilitySql } from '../visibility.js'

// SQL fragments every PostgreSQL store module shares: numbered parameters, the scope conditions, the delete filters.

/** A connection (inside a transaction, or lent for reads by `PgDb.read`): what the store modules query through. */
export type Queryable = Pick<ClientBase, 'query'>

/** Rows of one statement. */
export async function rows<R extends QueryResultRow>(c: Queryable, sql: string, params: readonly unknown[] = []): Promise<R[]> {
  return (await c.query<R>(sql, params as unknown[])).rows
}

/** The first row of one statement, or undefined. */
export async function first<R extends QueryResultRow>(c: Queryable, sql: string, params: readonly unknown[] = []): Promise<R | undefined> {
  return (await c.query<R>(sql, params as unknown[])).rows[0]
}

/** The one row a statement returns (an INSERT … RETURNING, an aggregate); a statement that returns none is a bug here. */
export async function one<R extends QueryResultRow>(c: Queryable, sql: string, params: readonly unknown[] = []): Promise<R> {
  const row = (await c.query<R>(sql, params as unknown[])).rows[0]
  if (row === undefined) throw new Error(`expected a row from: ${sql.slice(0, 80)}`)
  return row
}

/** How many rows a statement changed. */
export async function changes(c: Queryable, sql: string, params: readonly unknown[] = []): Promise<number> {
  return (await c.query(sql, params as unknown[])).rowCount ?? 0
}

/** The parameters of one statement as it is written: `add` returns the placeholder (`$3`) of the value it appends. */
export class Params {
  readonly values: unknown[] = []

  add(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

/** `col = $n`, or `col IS NULL` for null: SQLite's `col IS ?` (null-safe equality), in a form that uses indexes. */
export function same(col: string, value: string | null, p: Params): string {
  return value === null ? `${col} IS NULL` : `${col} = ${p.add(value)}`
}

/**
 * SQL conditions, each starting with ` AND `, that confine rows to a scope (see `Scope`): `col` names a column of the
 * row being filtered (`project_id`, `user_id`, `agent`). A project list is one array parameter (`= ANY`).
 */
export function scopeWhere(scope: Scope, col: (name: 'project_id' | 'user_id' | 'agent') => string, p: Params): string {
  let sql = ''
  const projects = scope.projectIds ?? []
  if (projects.length > 0) sql += ` AND ${col('project_id')} = ANY(${p.add(projects)}::text[])`
  if (scope.user === null) sql += ` AND ${col('user_id')} IS NULL`
  else if (scope.user !== undefined) sql += ` AND (${col('user_id')} IS NULL OR ${col('user_id')} = ${p.add(scope.user)})`
  if (scope.agent !== undefined) sql += ` AND (${col('agent')} IS NULL OR ${col('agent')} = ${p.add(scope.agent)})`
  return sql
}

/**
 * SQL conditions, each starting with ` AND `, that keep the documents `v` lets recall return (see `visibilitySql`,
 * the rule both dialects share), over the columns `cols` names.
 */
export function visibleWhere(v: Visibility, cols: VisibilityColumns, p: Params): string {
  return visibilitySql(v, cols, { param: (value) => p.add(value), inList: (col, values) => `${col} = ANY(${p.add(values)}::text[])` })
}

/** The facts `visibleWhere` reads of a row of `search_docs` (`alias` its alias): every document, of either type. */
export const docVisibility = (alias: string): VisibilityColumns => ({
  kind: `${alias}.kind`,
  ts: `${alias}.ts`,
  validTo: `${alias}.valid_to`,
  archivedAt: `${alias}.archived_at`,
  rows: { notMemory: `${alias}.doc_key > 0` },
})

/** Columns of one table or alias (`o.user_id`). */
export const onTable =
  (alias: string) =>
  (name: string): string =>
    `${alias}.${name}`

/** The conditions of the events a delete or fold filter names (column names prefixed with `alias`), as in sqlite-rows.ts. */
export function eventConditions(filter: EventFilter, p: Params, alias = ''): string[] {
  const sql: string[] = []
  if (filter.seqs) sql.push(`${alias}seq = ANY(${p.add(filter.seqs)}::bigint[])`)
  if (filter.projectRoot !== undefined) sql.push(`${alias}project_root = ${p.add(filter.projectRoot)}`)
  if (filter.sessionKey !== undefined) sql.push(`${alias}session_key = ${p.add(filter.sessionKey)}`)
  if (filter.agent !== undefined) sql.push(`${alias}agent = ${p.add(filter.agent)}`)
  if (filter.before !== undefined) sql.push(`${alias}ts < ${p.add(filter.before)}`)
  // A user's delete takes their own events only: shared ones (no user) belong to everyone.
  if (filter.user === null) sql.push(`${alias}user_id IS NULL`)
  else if (filter.user !== undefined) sql.push(`${alias}user_id = ${p.add(filter.user)}`)
  return sql
}

/** A logged event from its row: the PostgreSQL log keeps each payload as its JSON text. */
export function toStoredEvent(row: EventRow): StoredEvent {
  return eventFromRow(row, JSON.parse(typeof row.payload === 'string' ? row.payload : row.payload.toString('utf8')) as unknown)
}
