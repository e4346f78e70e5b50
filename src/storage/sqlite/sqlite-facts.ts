import type { FactQuery } from '../../core/facts/fact-query.js'
import type {
  CollectionSpec,
  FactOp,
  FactProvenance,
  FactRecord,
  FactStatus,
  FactValue,
  FactValues,
  FactVersion,
} from '../../core/facts/fact-types.js'
import { mergeSpecs } from '../../core/facts/fact-values.js'
import type { EventInput } from '../../core/types.js'
import type { FactListedRecord, FactQueryLimits, FactQueryResult, FactScope, FactStore } from '../fact-store.js'
import type { SqliteDb } from './sqlite-db.js'
import { runFactQuery } from './sqlite-fact-query.js'

// The fact ledger's tables (migration 8): applying fact operations as events are appended or replayed, removing what
// a deleted event wrote, and the reads of the FactStore port.

/** Record columns as read back: data and provenance (stored as JSONB, which json_extract reads without parsing text) as JSON text. */
const RECORD_COLUMNS =
  'id, collection, identity, json(data) AS data, status, valid_from, valid_to, retracted_at, recorded_at, version, json(provenance) AS provenance, user_id'
const VERSION_COLUMNS =
  'record_id, project_root, collection, action, json(data) AS data, status, valid_from, valid_to, recorded_at, superseded_at, json(provenance) AS provenance, event_seq, user_id, version'

/** The fact tables a rebuild empties before replaying the log. */
export const FACT_TABLES_SQL = 'DELETE FROM fact_schema; DELETE FROM fact_versions; DELETE FROM fact_records; DELETE FROM fact_tombstones;'

interface VersionRow {
  record_id: string
  project_root: string
  version: number
  collection: string
  action: 'assert' | 'retract'
  data: string
  status: FactStatus
  valid_from: number | null
  valid_to: number | null
  recorded_at: number
  superseded_at: number | null
  provenance: string
  event_seq: number
  user_id: string | null
  identity?: string | null
}

interface RecordRow {
  id: string
  collection: string
  data: string
  status: FactStatus
  valid_from: number | null
  valid_to: number | null
  retracted_at: number | null
  recorded_at: number
  version: number
  provenance: string
  user_id: string | null
  identity?: string | null
}

/**
 * Applies one event's fact operations: a declaration adds a schema row; an assert adds a version and makes it the
 * record's current row; a retract adds a version that ends the fact (`valid_to`, `retracted_at`); a delete removes
 * the record's rows and leaves a tombstone. Operations apply only within the event's project and user.
 */
export function applyFacts(s: SqliteDb, event: EventInput, seq: number, ops: readonly FactOp[]): void {
  const root = event.project.root
  const user = event.user ?? null
  for (const op of ops) {
    if (op.action === 'declare') {
      s.stmt('INSERT INTO fact_schema (project_root, user_id, collection, event_seq, spec) VALUES (?, ?, ?, ?, ?)').run(
        root,
        user,
        op.collection.name,
        seq,
        JSON.stringify(op.collection),
      )
      continue
    }
    const current = s
      .stmt('SELECT id, user_id, version, data FROM fact_records WHERE id = ? AND project_root = ? AND user_id IS ?')
      .get(op.id, root, user) as { id: string; version: number; data: string } | undefined
    if (op.action === 'delete') {
      s.stmt('DELETE FROM fact_versions WHERE record_id = ? AND project_root = ? AND user_id IS ?').run(op.id, root, user)
      s.stmt('DELETE FROM fact_records WHERE id = ? AND project_root = ? AND user_id IS ?').run(op.id, root, user)
      s.stmt(
        'INSERT INTO fact_tombstones (record_id, project_root, user_id, collection, identity, deleted_at, event_seq) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(op.id, root, user, op.collection, op.identity ?? null, event.ts, seq)
      continue
    }
    // Another user's record (or another project's) with this id is not this event's to change.
    if (current === undefined && s.stmt('SELECT 1 FROM fact_versions WHERE record_id = ? LIMIT 1').get(op.id) !== undefined) continue
    if (op.action === 'retract' && current === undefined) continue
    const version = (current?.version ?? 0) + 1
    s.stmt('UPDATE fact_versions SET superseded_at = ? WHERE record_id = ? AND superseded_at IS NULL').run(event.ts, op.id)
    if (op.action === 'assert') {
      const identity = op.identity ?? null
      const data = JSON.stringify(op.values)
      const provenance = JSON.stringify(op.provenance)
      s.stmt(
        `INSERT INTO fact_versions (record_id, version, project_root, user_id, collection, action, data, status, valid_from, valid_to, recorded_at, provenance, event_seq)
         VALUES (?, ?, ?, ?, ?, 'assert', jsonb(?), ?, ?, ?, ?, jsonb(?), ?)`,
      ).run(op.id, version, root, user, op.collection, data, op.status, op.validFrom ?? null, op.validTo ?? null, event.ts, provenance, seq)
      s.stmt(
        `INSERT INTO fact_records (id, project_root, user_id, collection, identity, data, status, valid_from, valid_to, retracted_at, recorded_at, version, provenance, event_seq)
         VALUES (?, ?, ?, ?, ?, jsonb(?), ?, ?, ?, NULL, ?, ?, jsonb(?), ?)
         ON CONFLICT (id) DO UPDATE SET identity = excluded.identity, data = excluded.data, status = excluded.status, valid_from = excluded.valid_from,
           valid_to = excluded.valid_to, retracted_at = NULL, recorded_at = excluded.recorded_at, version = excluded.version, provenance = excluded.provenance,
           event_seq = excluded.event_seq`,
      ).run(
        op.id,
        root,
        user,
        op.collection,
        identity,
        data,
        op.status,
        op.validFrom ?? null,
        op.validTo ?? null,
        event.ts,
        version,
        provenance,
        seq,
      )
    } else {
      const row = s.stmt('SELECT * FROM fact_records WHERE id = ?').get(op.id) as RecordRow
      s.stmt(
        `INSERT INTO fact_versions (record_id, version, project_root, user_id, collection, action, data, status, valid_from, valid_to, recorded_at, provenance, event_seq)
         VALUES (?, ?, ?, ?, ?, 'retract', ?, ?, ?, ?, ?, ?, ?)`,
      ).run(op.id, version, root, user, row.collection, row.data, row.status, row.valid_from, op.at, event.ts, row.provenance, seq)
      s.stmt('UPDATE fact_records SET valid_to = ?, retracted_at = ?, version = ?, recorded_at = ?, event_seq = ? WHERE id = ?').run(
        op.at,
        event.ts,
        version,
        event.ts,
        seq,
        op.id,
      )
    }
  }
}

/**
 * Removes what a deleted event wrote to the fact tables, leaving them as a rebuild without it would derive them:
 * its declaration, its versions (the records they belong to re-read from their remaining versions) and its tombstone.
 */
export function removeFactsOfEvent(s: SqliteDb, seq: number): void {
  const ids = s.stmt('SELECT DISTINCT record_id FROM fact_versions WHERE event_seq = ?').pluck().all(seq) as string[]
  s.stmt('DELETE FROM fact_schema WHERE event_seq = ?').run(seq)
  s.stmt('DELETE FROM fact_tombstones WHERE event_seq = ?').run(seq)
  if (ids.length === 0) return
  s.stmt('DELETE FROM fact_versions WHERE event_seq = ?').run(seq)
  for (const id of ids) {
    const versions = s.stmt('SELECT * FROM fact_versions WHERE record_id = ? ORDER BY version').all(id) as VersionRow[]
    s.stmt('DELETE FROM fact_versions WHERE record_id = ?').run(id)
    const identity = (s.stmt('SELECT identity FROM fact_records WHERE id = ?').pluck().get(id) as string | null | undefined) ?? null
    s.stmt('DELETE FROM fact_records WHERE id = ?').run(id)
    versions.forEach((v, i) => {
      s.stmt(
        `INSERT INTO fact_versions (record_id, version, project_root, user_id, collection, action, data, status, valid_from, valid_to, recorded_at, superseded_at, provenance, event_seq)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        id,
        i + 1,
        v.project_root,
        v.user_id,
        v.collection,
        v.action,
        v.data,
        v.status,
        v.valid_from,
        v.valid_to,
        v.recorded_at,
        versions[i + 1]?.recorded_at ?? null,
        v.provenance,
        v.event_seq,
      )
    })
    const last = versions.at(-1)
    if (last === undefined) continue
    s.stmt(
      `INSERT INTO fact_records (id, project_root, user_id, collection, identity, data, status, valid_from, valid_to, retracted_at, recorded_at, version, provenance, event_seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      last.project_root,
      last.user_id,
      last.collection,
      identity,
      last.data,
      last.status,
      last.valid_from,
      last.valid_to,
      last.action === 'retract' ? last.recorded_at : null,
      last.recorded_at,
      versions.length,
      last.provenance,
      last.event_seq,
    )
  }
}

function toRecord(r: RecordRow): FactRecord & { retractedAt?: number } {
  return {
    id: r.id,
    collection: r.collection,
    values: JSON.parse(r.data) as FactValues,
    status: r.status,
    ...(r.valid_from !== null ? { validFrom: r.valid_from } : {}),
    ...(r.valid_to !== null ? { validTo: r.valid_to } : {}),
    ...(r.retracted_at !== null ? { retractedAt: r.retracted_at } : {}),
    recordedAt: r.recorded_at,
    version: r.version,
    provenance: JSON.parse(r.provenance) as FactProvenance,
    ...(r.identity !== undefined && r.identity !== null ? { identity: r.identity } : {}),
    ...(r.user_id !== null ? { user: r.user_id } : {}),
  }
}

/** The SQLite FactStore over one connection. */
export function createSqliteFacts(s: SqliteDb): FactStore {
  const specs = (scope: FactScope): CollectionSpec[] => {
    const rows = s
      .stmt('SELECT collection, spec FROM fact_schema WHERE project_root = ? AND user_id IS ? ORDER BY event_seq')
      .all(scope.projectRoot, scope.user) as { collection: string; spec: string }[]
    const byName = new Map<string, CollectionSpec>()
    for (const r of rows) {
      const spec = JSON.parse(r.spec) as CollectionSpec
      const had = byName.get(r.collection)
      byName.set(r.collection, had ? mergeSpecs(had, spec) : spec)
    }
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
  }
  return {
    collections: async (scope) => s.guard('facts schema', () => specs(scope)),
    collectionStats: async (scope, examples) =>
      s.guard('facts schema', () => {
        const out = new Map<string, { records: number; from?: string; to?: string; examples: Record<string, FactValue[]> }>()
        for (const spec of specs(scope)) {
          const base = 'FROM fact_records WHERE project_root = ? AND user_id IS ? AND collection = ? AND retracted_at IS NULL'
          const records = s.stmt(`SELECT count(*) ${base}`).pluck().get(scope.projectRoot, scope.user, spec.name) as number
          const stats: { records: number; from?: string; to?: string; examples: Record<string, FactValue[]> } = { records, examples: {} }
          if (spec.timeField !== undefined) {
            const range = s
              .stmt(`SELECT min(json_extract(data, ?)) AS lo, max(json_extract(data, ?)) AS hi ${base}`)
              .get(`$.${spec.timeField}`, `$.${spec.timeField}`, scope.projectRoot, scope.user, spec.name) as {
              lo: string | null
              hi: string | null
            }
            if (range.lo !== null) stats.from = range.lo
            if (range.hi !== null) stats.to = range.hi
          }
          for (const f of spec.fields) {
            const sql =
              f.type === 'list'
                ? `SELECT DISTINCT j.value FROM fact_records r, json_each(r.data, ?) j WHERE r.project_root = ? AND r.user_id IS ? AND r.collection = ? AND r.retracted_at IS NULL ORDER BY r.recorded_at LIMIT ?`
                : `SELECT DISTINCT json_extract(data, ?) AS v ${base} AND json_extract(data, ?) IS NOT NULL ORDER BY recorded_at LIMIT ?`
            const params =
              f.type === 'list'
                ? [`$.${f.name}`, scope.projectRoot, scope.user, spec.name, examples]
                : [`$.${f.name}`, scope.projectRoot, scope.user, spec.name, `$.${f.name}`, examples]
            const values = s
              .stmt(sql)
              .pluck()
              .all(...params) as FactValue[]
            stats.examples[f.name] = f.type === 'boolean' || f.items === 'boolean' ? values.map((v) => v === 1 || v === true) : values
          }
          out.set(spec.name, stats)
        }
        return out
      }),
    byIdentity: async (scope, collection, identity) =>
      s.guard('facts read', () => {
        const row = s
          .stmt(
            `SELECT ${RECORD_COLUMNS} FROM fact_records WHERE project_root = ? AND collection = ? AND identity = ? AND user_id IS ? AND retracted_at IS NULL`,
          )
          .get(scope.projectRoot, collection, identity, scope.user) as RecordRow | undefined
        return row ? toRecord(row) : undefined
      }),
    get: async (scope, id) =>
      s.guard('facts read', () => {
        const row = s
          .stmt(`SELECT ${RECORD_COLUMNS} FROM fact_records WHERE id = ? AND project_root = ? AND user_id IS ?`)
          .get(id, scope.projectRoot, scope.user) as RecordRow | undefined
        return row ? toRecord(row) : undefined
      }),
    list: async (scope, collection, { state, sort, dir, offset, limit }) =>
      s.guard('facts read', () => {
        const superseded = state === 'superseded'
        const table = superseded ? 'fact_versions' : 'fact_records'
        const where = `project_root = @root AND user_id IS @user AND collection = @collection AND ${
          superseded ? 'superseded_at IS NOT NULL' : `retracted_at IS ${state === 'retracted' ? 'NOT NULL' : 'NULL'}`
        }`
        const way = dir === 'desc' ? 'DESC' : 'ASC'
        // json_extract orders numbers as numbers and text bytewise, NULLs first ascending: the query compiler's order.
        const order = `${sort !== undefined ? `json_extract(data, @path) ${way}, ` : ''}recorded_at ${way}, ${superseded ? `record_id ${way}, version ${way}` : `id ${way}`}`
        const params = { root: scope.projectRoot, user: scope.user, collection, ...(sort !== undefined ? { path: `$.${sort}` } : {}) }
        const columns = superseded ? VERSION_COLUMNS : RECORD_COLUMNS
        const rows = s.stmt(`SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY ${order} LIMIT @limit OFFSET @offset`).all({
          ...params,
          limit,
          offset,
        }) as (RecordRow | VersionRow)[]
        const { path: _path, ...counted } = params as typeof params & { path?: string }
        const total = s.stmt(`SELECT count(*) FROM ${table} WHERE ${where}`).pluck().get(counted) as number
        const records = rows.map((r): FactListedRecord => {
          if (!('record_id' in r)) return toRecord(r)
          return {
            ...toRecord({ ...r, id: r.record_id, retracted_at: null }),
            ...(r.superseded_at !== null ? { supersededAt: r.superseded_at } : {}),
          }
        })
        return { records, total }
      }),
    tombstones: async (scope, collection, offset, limit) =>
      s.guard('facts read', () => {
        const where = 'project_root = ? AND user_id IS ? AND collection = ?'
        const rows = s
          .stmt(`SELECT record_id, deleted_at FROM fact_tombstones WHERE ${where} ORDER BY deleted_at DESC, record_id LIMIT ? OFFSET ?`)
          .all(scope.projectRoot, scope.user, collection, limit, offset) as { record_id: string; deleted_at: number }[]
        const total = s
          .stmt(`SELECT count(*) FROM fact_tombstones WHERE ${where}`)
          .pluck()
          .get(scope.projectRoot, scope.user, collection) as number
        return { tombstones: rows.map((r) => ({ id: r.record_id, deletedAt: r.deleted_at })), total }
      }),
    history: async (scope, id) =>
      s.guard('facts read', () => {
        const rows = s
          .stmt(`SELECT ${VERSION_COLUMNS} FROM fact_versions WHERE record_id = ? AND project_root = ? AND user_id IS ? ORDER BY version`)
          .all(id, scope.projectRoot, scope.user) as VersionRow[]
        return rows.map(
          (v): FactVersion => ({
            ...toRecord({ ...v, id: v.record_id, retracted_at: null }),
            action: v.action,
            ...(v.superseded_at !== null ? { supersededAt: v.superseded_at } : {}),
          }),
        )
      }),
    tombstone: async (scope, id) =>
      s.guard('facts read', () => {
        const row = s
          .stmt(
            'SELECT collection, deleted_at FROM fact_tombstones WHERE record_id = ? AND project_root = ? AND user_id IS ? ORDER BY deleted_at DESC LIMIT 1',
          )
          .get(id, scope.projectRoot, scope.user) as { collection: string; deleted_at: number } | undefined
        return row ? { collection: row.collection, deletedAt: row.deleted_at } : undefined
      }),
    tombstoneByIdentity: async (scope, collection, identity) =>
      s.guard('facts read', () => {
        const row = s
          .stmt(
            'SELECT record_id, deleted_at FROM fact_tombstones WHERE project_root = ? AND collection = ? AND identity = ? AND user_id IS ? ORDER BY deleted_at DESC LIMIT 1',
          )
          .get(scope.projectRoot, collection, identity, scope.user) as { record_id: string; deleted_at: number } | undefined
        return row ? { id: row.record_id, deletedAt: row.deleted_at } : undefined
      }),
    eventSeqs: async (scope, id) =>
      s.guard(
        'facts read',
        () =>
          s
            .stmt('SELECT event_seq FROM fact_versions WHERE record_id = ? AND project_root = ? AND user_id IS ? ORDER BY version')
            .pluck()
            .all(id, scope.projectRoot, scope.user) as number[],
      ),
    query: async (scope: FactScope, spec: CollectionSpec, query: FactQuery, limits: FactQueryLimits): Promise<FactQueryResult> =>
      runFactQuery(s, scope, spec, query, limits),
  }
}
