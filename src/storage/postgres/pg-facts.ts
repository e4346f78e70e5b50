import type { ClientBase, Pool } from 'pg'
import type {
  CollectionSpec,
  FactProvenance,
  FactRecord,
  FactStatus,
  FactValue,
  FactValues,
  FactVersion,
} from '../../core/facts/fact-types.js'
import { mergeSpecs } from '../../core/facts/fact-values.js'
import type { FactListedRecord, FactScope, FactStore } from '../fact-store.js'
import type { PgDb } from './pg-db.js'
import { applyFactOps, removeFactsOfEvent } from './pg-fact-ops.js'
import { runPgFactQuery, runPgNamedFactQuery } from './pg-fact-query.js'
import { FACT_MIGRATION, FACT_TABLES_SQL, run } from './pg-fact-schema.js'
import { asc, desc, inSpecOrder, PgSql } from './pg-fact-sql.js'

// The FactStore port on PostgreSQL: the reads of the fact tables (pg-fact-schema.ts) that applyFactOps
// (pg-fact-ops.ts) writes, and queries (pg-fact-query.ts). The same answers as sqlite-facts.ts.

const RECORD_COLUMNS =
  'id, collection, identity, data, status, valid_from, valid_to, retracted_at, recorded_at, version, provenance, user_id'
const VERSION_COLUMNS =
  'record_id, collection, action, data, status, valid_from, valid_to, recorded_at, superseded_at, provenance, user_id, version'
/** The scope of a statement whose first two parameters are the project root and the user. */
const SCOPE = 'project_root = $1 AND user_id IS NOT DISTINCT FROM $2'
const LIVE = `${SCOPE} AND collection = $3 AND retracted_at IS NULL`

interface RecordRow {
  id: string
  collection: string
  data: FactValues
  status: FactStatus
  valid_from: number | null
  valid_to: number | null
  retracted_at: number | null
  recorded_at: number
  version: number
  provenance: FactProvenance
  user_id: string | null
  identity?: string | null
}

interface VersionRow extends Omit<RecordRow, 'id' | 'retracted_at'> {
  record_id: string
  action: 'assert' | 'retract'
  superseded_at: number | null
}

function toRecord(r: RecordRow, spec: CollectionSpec | undefined): FactRecord & { retractedAt?: number } {
  return {
    id: r.id,
    collection: r.collection,
    values: inSpecOrder(r.data, spec),
    status: r.status,
    ...(r.valid_from !== null ? { validFrom: r.valid_from } : {}),
    ...(r.valid_to !== null ? { validTo: r.valid_to } : {}),
    ...(r.retracted_at !== null ? { retractedAt: r.retracted_at } : {}),
    recordedAt: r.recorded_at,
    version: r.version,
    provenance: r.provenance,
    ...(r.identity !== undefined && r.identity !== null ? { identity: r.identity } : {}),
    ...(r.user_id !== null ? { user: r.user_id } : {}),
  }
}

/** The current spec of each collection of a scope: the union of its declarations in log order, by name. */
async function pgFactSpecs(db: Pool, scope: FactScope): Promise<CollectionSpec[]> {
  const rows = await run<{ collection: string; spec: CollectionSpec }>(
    db,
    'facts schema',
    `SELECT collection, spec FROM fact_schema WHERE ${SCOPE} ORDER BY event_seq`,
    [scope.projectRoot, scope.user],
  )
  const byName = new Map<string, CollectionSpec>()
  for (const r of rows) {
    const had = byName.get(r.collection)
    byName.set(r.collection, had ? mergeSpecs(had, r.spec) : r.spec)
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
}

/**
 * The PostgreSQL FactStore over a pool: each read is one statement (or one read-only transaction for a query).
 * @param db - A pool on a database migrated with `FACT_MIGRATION`.
 */
function createPgFacts(db: Pool): FactStore {
  const specOf = async (scope: FactScope, name: string): Promise<CollectionSpec | undefined> =>
    (await pgFactSpecs(db, scope)).find((s) => s.name === name)
  const record = async (scope: FactScope, row: RecordRow | undefined): Promise<(FactRecord & { retractedAt?: number }) | undefined> =>
    row === undefined ? undefined : toRecord(row, await specOf(scope, row.collection))
  return {
    collections: (scope) => pgFactSpecs(db, scope),
    async collectionStats(scope, examples) {
      const out = new Map<string, { records: number; from?: string; to?: string; examples: Record<string, FactValue[]> }>()
      for (const spec of await pgFactSpecs(db, scope)) {
        const params = [scope.projectRoot, scope.user, spec.name]
        const records =
          (await run<{ n: number }>(db, 'facts schema', `SELECT count(*) AS n FROM fact_records WHERE ${LIVE}`, params))[0]?.n ?? 0
        const stats: { records: number; from?: string; to?: string; examples: Record<string, FactValue[]> } = { records, examples: {} }
        if (spec.timeField !== undefined) {
          const range = (
            await run<{ lo: string | null; hi: string | null }>(
              db,
              'facts schema',
              `SELECT min((data->>$4) COLLATE "C") AS lo, max((data->>$4) COLLATE "C") AS hi FROM fact_records WHERE ${LIVE}`,
              [...params, spec.timeField],
            )
          )[0]
          if (range?.lo != null) stats.from = range.lo
          if (range?.hi != null) stats.to = range.hi
        }
        for (const f of spec.fields) {
          // Distinct values as SQLite lists them: each value's first occurrence in record order (a list's items in
          // list order), sorted by that record's record time.
          const from =
            f.type === 'list'
              ? `SELECT DISTINCT ON (j.v) j.v AS v, r.recorded_at AS t, r.rn, j.o FROM fact_records r,
                   jsonb_array_elements(CASE WHEN jsonb_typeof(r.data->$4) = 'array' THEN r.data->$4 ELSE '[]' END) WITH ORDINALITY AS j(v, o)
                 WHERE ${LIVE} ORDER BY j.v, r.rn, j.o`
              : `SELECT DISTINCT ON (data->$4) data->$4 AS v, recorded_at AS t, rn, 0 AS o FROM fact_records
                 WHERE ${LIVE} AND data->$4 IS NOT NULL AND data->$4 <> 'null'::jsonb ORDER BY data->$4, rn`
          const sql = `SELECT v FROM (${from}) x ORDER BY t, rn, o LIMIT $5`
          const rows = await run<{ v: FactValue }>(db, 'facts schema', sql, [...params, f.name, examples])
          stats.examples[f.name] = rows.map((r) => r.v)
        }
        out.set(spec.name, stats)
      }
      return out
    },
    async byIdentity(scope, collection, identity) {
      const rows = await run<RecordRow>(db, 'facts read', `SELECT ${RECORD_COLUMNS} FROM fact_records WHERE ${LIVE} AND identity = $4`, [
        scope.projectRoot,
        scope.user,
        collection,
        identity,
      ])
      return record(scope, rows[0])
    },
    async get(scope, id) {
      const rows = await run<RecordRow>(db, 'facts read', `SELECT ${RECORD_COLUMNS} FROM fact_records WHERE ${SCOPE} AND id = $3`, [
        scope.projectRoot,
        scope.user,
        id,
      ])
      return record(scope, rows[0])
    },
    async list(scope, collection, { state, sort, dir, offset, limit }) {
      const spec = await specOf(scope, collection)
      const superseded = state === 'superseded'
      const table = superseded ? 'fact_versions' : 'fact_records'
      const where = `${SCOPE} AND collection = $3 AND ${
        superseded ? 'superseded_at IS NOT NULL' : `retracted_at IS ${state === 'retracted' ? 'NOT NULL' : 'NULL'}`
      }`
      const params: unknown[] = [scope.projectRoot, scope.user, collection]
      const sql = new PgSql(spec ?? { name: collection, fields: [], identity: [] })
      sql.params.push(...params, limit, offset)
      // The sort field typed by the spec (numbers as numeric, text in "C" order), as the query compiler orders it.
      const field = sort === undefined ? '' : `${(dir === 'desc' ? desc : asc)(sql.field(sort))}, `
      const tie = dir === 'desc' ? 'DESC' : 'ASC'
      const order = `${field}recorded_at ${tie}, ${superseded ? `record_id COLLATE "C" ${tie}, version ${tie}` : `id COLLATE "C" ${tie}`}`
      const rows = await run<RecordRow | VersionRow>(
        db,
        'facts read',
        `SELECT ${superseded ? VERSION_COLUMNS : RECORD_COLUMNS} FROM ${table} r WHERE ${where} ORDER BY ${order} LIMIT $4 OFFSET $5`,
        sql.params,
      )
      const total = (await run<{ n: number }>(db, 'facts read', `SELECT count(*) AS n FROM ${table} WHERE ${where}`, params))[0]?.n ?? 0
      const records = rows.map((r): FactListedRecord => {
        if (!('record_id' in r)) return toRecord(r, spec)
        return {
          ...toRecord({ ...r, id: r.record_id, retracted_at: null }, spec),
          ...(r.superseded_at !== null ? { supersededAt: r.superseded_at } : {}),
        }
      })
      return { records, total }
    },
    async tombstones(scope, collection, offset, limit) {
      const where = `${SCOPE} AND collection = $3`
      const params = [scope.projectRoot, scope.user, collection]
      const rows = await run<{ record_id: string; deleted_at: number }>(
        db,
        'facts read',
        `SELECT record_id, deleted_at FROM fact_tombstones WHERE ${where} ORDER BY deleted_at DESC, record_id COLLATE "C" LIMIT $4 OFFSET $5`,
        [...params, limit, offset],
      )
      const total =
        (await run<{ n: number }>(db, 'facts read', `SELECT count(*) AS n FROM fact_tombstones WHERE ${where}`, params))[0]?.n ?? 0
      return { tombstones: rows.map((r) => ({ id: r.record_id, deletedAt: r.deleted_at })), total }
    },
    async history(scope, id) {
      const rows = await run<VersionRow>(
        db,
        'facts read',
        `SELECT ${VERSION_COLUMNS} FROM fact_versions WHERE ${SCOPE} AND record_id = $3 ORDER BY version`,
        [scope.projectRoot, scope.user, id],
      )
      const spec = rows[0] !== undefined ? await specOf(scope, rows[0].collection) : undefined
      return rows.map(
        (v): FactVersion => ({
          ...toRecord({ ...v, id: v.record_id, retracted_at: null }, spec),
          action: v.action,
          ...(v.superseded_at !== null ? { supersededAt: v.superseded_at } : {}),
        }),
      )
    },
    async tombstone(scope, id) {
      const row = (
        await run<{ collection: string; deleted_at: number }>(
          db,
          'facts read',
          `SELECT collection, deleted_at FROM fact_tombstones WHERE ${SCOPE} AND record_id = $3 ORDER BY deleted_at DESC LIMIT 1`,
          [scope.projectRoot, scope.user, id],
        )
      )[0]
      return row ? { collection: row.collection, deletedAt: row.deleted_at } : undefined
    },
    async tombstoneByIdentity(scope, collection, identity) {
      const row = (
        await run<{ record_id: string; deleted_at: number }>(
          db,
          'facts read',
          `SELECT record_id, deleted_at FROM fact_tombstones WHERE ${SCOPE} AND collection = $3 AND identity = $4 ORDER BY deleted_at DESC LIMIT 1`,
          [scope.projectRoot, scope.user, collection, identity],
        )
      )[0]
      return row ? { id: row.record_id, deletedAt: row.deleted_at } : undefined
    },
    async eventSeqs(scope, id) {
      const rows = await run<{ event_seq: number }>(
        db,
        'facts read',
        `SELECT event_seq FROM fact_versions WHERE ${SCOPE} AND record_id = $3 ORDER BY version`,
        [scope.projectRoot, scope.user, id],
      )
      return rows.map((r) => r.event_seq)
    },
    query: (scope, spec, query, limits) => runPgFactQuery(db, scope, spec, query, limits),
    queryByName: (scope, name, resolve, limits) => runPgNamedFactQuery(db, scope, name, resolve, limits),
  }
}

/**
 * The fact ledger's part of the PostgreSQL dialect, for `PgParts`: its schema step, what the store's write path calls
 * inside its transactions (apply an event's fact operations, remove what a deleted event wrote, empty the tables for
 * a rebuild), and the FactStore over the store's pool.
 */
export const PG_FACT_PART = {
  migrations: [FACT_MIGRATION] as const,
  writes: {
    apply: applyFactOps,
    removeOfEvent: removeFactsOfEvent,
    clear: async (c: Pick<ClientBase, 'query'>): Promise<void> => {
      for (const statement of FACT_TABLES_SQL.split('; ')) await run(c, 'facts clear', statement)
    },
  },
  facts: (db: PgDb): FactStore => createPgFacts(db.pool),
}
