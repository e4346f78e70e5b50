import type { ProjectId } from '../../core/ids.js'
import type { Scope } from '../store.js'
import type { Visibility } from '../visibility.js'
import type { PgDb } from './pg-db.js'
import { docVisibility, onTable, Params, scopeWhere, visibleWhere } from './pg-sql.js'

// The vector channel's storage on PostgreSQL (the VectorIndex port): vectors per embedding space in pg-schema.ts's
// doc_vectors (bytea: little-endian float32, as SQLite's BLOB), and the builtin LSA model per project. The engine
// scans the vectors itself (exact search, as on SQLite), so the server needs no vector extension.

/** Rows per INSERT of `putVectors` (two array parameters each). */
const PUT_CHUNK = 1000

/** A bytea as a Float32Array of its own (copied: a Buffer's offset need not be 4-aligned). */
function toVector(bytes: Buffer): Float32Array {
  const copy = new Uint8Array(bytes.byteLength)
  copy.set(bytes)
  return new Float32Array(copy.buffer, 0, Math.floor(bytes.byteLength / 4))
}

const toBytes = (vec: Float32Array): Buffer => Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength)

/** All vectors of `space` among the scope's documents (with `visible`, those it lets recall return), as (key, vector) pairs in key order. */
export async function vectors(
  db: PgDb,
  space: string,
  scope: Scope,
  visible?: Visibility,
): Promise<{ docKey: number; vec: Float32Array }[]> {
  const p = new Params()
  const r = await db.query<{ k: number; vec: Buffer }>(
    'vectors',
    `SELECT v.doc_key AS k, v.vec FROM doc_vectors v JOIN search_docs d ON d.doc_key = v.doc_key
     WHERE v.space = ${p.add(space)}${scopeWhere(scope, onTable('d'), p)}${visible ? visibleWhere(visible, docVisibility('d'), p) : ''} ORDER BY v.doc_key`,
    p.values,
  )
  return r.rows.map((row) => ({ docKey: Number(row.k), vec: toVector(row.vec) }))
}

/** Stores vectors of `space`, replacing a document's existing one, in one write transaction. */
export async function putVectors(db: PgDb, space: string, rows: readonly { docKey: number; vec: Float32Array }[]): Promise<void> {
  if (rows.length === 0) return
  await db.transaction('put vectors', async (c) => {
    for (let i = 0; i < rows.length; i += PUT_CHUNK) {
      const chunk = rows.slice(i, i + PUT_CHUNK)
      await c.query(
        `INSERT INTO doc_vectors (space, doc_key, vec) SELECT $1, k, v FROM unnest($2::bigint[], $3::bytea[]) AS u(k, v)
         ON CONFLICT (space, doc_key) DO UPDATE SET vec = excluded.vec`,
        [space, chunk.map((r) => r.docKey), chunk.map((r) => toBytes(r.vec))],
      )
    }
  })
}

/** Deletes every vector of `space`. */
export async function dropSpace(db: PgDb, space: string): Promise<void> {
  await db.transaction('drop vectors', async (c) => {
    await c.query('DELETE FROM doc_vectors WHERE space = $1', [space])
  })
}

/** Keys and texts of the scope's documents without a vector in `space`, oldest first (observations, then memories), at most `limit`. */
export async function docsWithoutVector(db: PgDb, space: string, scope: Scope, limit: number): Promise<{ docKey: number; text: string }[]> {
  // One round trip for both kinds (the builtin vector channel asks this per project on every search).
  const p = new Params()
  const s = p.add(space)
  const n = p.add(limit)
  const r = await db.query<{ k: number; text: string }>(
    'docs without vector',
    `(SELECT o.rowid AS k, o.text, 0 AS part, o.rowid AS r FROM observations o
       WHERE NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.space = ${s} AND v.doc_key = o.rowid)${scopeWhere(scope, onTable('o'), p)}
       ORDER BY o.rowid LIMIT ${n})
     UNION ALL
     (SELECT -m.rowid AS k, m.text, 1 AS part, m.rowid AS r FROM memories m
       WHERE NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.space = ${s} AND v.doc_key = -m.rowid)${scopeWhere(scope, onTable('m'), p)}
       ORDER BY m.rowid LIMIT ${n})
     ORDER BY part, r LIMIT ${n}`,
    p.values,
  )
  return r.rows.map((row) => ({ docKey: Number(row.k), text: row.text }))
}

/** Texts of a project's documents, newest first, memories before observations, at most `limit` (for fitting the builtin model). */
export async function projectTexts(db: PgDb, projectId: ProjectId, limit: number): Promise<string[]> {
  const r = await db.query<{ text: string }>(
    'project texts',
    `(SELECT text, 0 AS part, rowid FROM memories WHERE project_id = $1 ORDER BY rowid DESC LIMIT $2)
     UNION ALL (SELECT text, 1 AS part, rowid FROM observations WHERE project_id = $1 ORDER BY rowid DESC LIMIT $2)
     ORDER BY part, rowid DESC LIMIT $2`,
    [projectId, limit],
  )
  return r.rows.map((row) => row.text)
}

/** The stored builtin (LSA) model of a project, with its bytes. */
export async function getLsaModel(
  db: PgDb,
  projectId: ProjectId,
): Promise<{ space: string; docCount: number; builtAt: number; model: Uint8Array } | undefined> {
  const r = await db.query<{ space: string; doc_count: number; built_at: number; model: Buffer }>(
    'lsa model',
    'SELECT space, doc_count, built_at, model FROM lsa_models WHERE project_id = $1',
    [projectId],
  )
  const row = r.rows[0]
  return row && { space: row.space, docCount: Number(row.doc_count), builtAt: Number(row.built_at), model: new Uint8Array(row.model) }
}

/** The stored LSA model's space, document count and fit time, without its bytes. */
export async function lsaModelInfo(
  db: PgDb,
  projectId: ProjectId,
): Promise<{ space: string; docCount: number; builtAt: number } | undefined> {
  const r = await db.query<{ space: string; doc_count: number; built_at: number }>(
    'lsa model',
    'SELECT space, doc_count, built_at FROM lsa_models WHERE project_id = $1',
    [projectId],
  )
  const row = r.rows[0]
  return row && { space: row.space, docCount: Number(row.doc_count), builtAt: Number(row.built_at) }
}

/** Stores (or replaces) a project's builtin model. */
export async function putLsaModel(
  db: PgDb,
  projectId: ProjectId,
  row: { space: string; docCount: number; builtAt: number; model: Uint8Array },
): Promise<void> {
  await db.transaction('put model', async (c) => {
    await c.query(
      `INSERT INTO lsa_models (project_id, space, doc_count, built_at, model) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (project_id) DO UPDATE SET space = excluded.space, doc_count = excluded.doc_count, built_at = excluded.built_at, model = excluded.model`,
      [projectId, row.space, row.docCount, row.builtAt, Buffer.from(row.model.buffer, row.model.byteOffset, row.model.byteLength)],
    )
  })
}
