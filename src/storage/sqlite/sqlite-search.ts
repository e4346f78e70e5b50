import type { ProjectId, SessionId } from '../../core/ids.js'
import type { EntityRef } from '../../retrieval/entities.js'
import type { Scope, SearchDoc, SearchTextOptions, TextMatch } from '../store.js'
import { docJoin, onEither, onTable, scopeWhere, splitFlags, type MemoryRow, type ObservationRow } from './sqlite-rows.js'
import type { SqliteDb } from './sqlite-db.js'

// The retrieval primitives: BM25 search, vectors and LSA models, entity lookups for the graph channel, time ranges, documents and their neighbours.

export function searchText(s: SqliteDb, options: SearchTextOptions): TextMatch[] {
  return s.guard('search', () => {
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
    return s.stmt(
      `SELECT f.rowid AS docKey, COALESCE(o.role, m.kind) AS role, -bm25(search_fts, ${Number(wBody)}, ${Number(wParts)}, ${Number(wMeta)}) AS score
       FROM search_fts f
       ${docJoin('f.rowid')}
       WHERE search_fts MATCH ?${scope} AND (o.id IS NOT NULL OR m.id IS NOT NULL)
       ORDER BY score DESC, f.rowid LIMIT ?`,
    ).all(...params) as TextMatch[]
  })
}

export function vectors(s: SqliteDb, space: string, scope: Scope): { docKey: number; vec: Float32Array }[] {
  return s.guard('vectors', () => {
    const inScope = scopeWhere(scope, onEither)
    const rows = s.stmt(
      `SELECT v.doc_key AS docKey, v.vec AS vec FROM doc_vectors v
       ${docJoin('v.doc_key')}
       WHERE v.space = ? AND (o.id IS NOT NULL OR m.id IS NOT NULL)${inScope.sql}`,
    ).all(space, ...inScope.params) as { docKey: number; vec: Buffer }[]
    return rows.map((r) => ({ docKey: r.docKey, vec: new Float32Array(r.vec.buffer.slice(r.vec.byteOffset, r.vec.byteOffset + r.vec.byteLength)) }))
  })
}

export function putVectors(s: SqliteDb, space: string, rows: readonly { docKey: number; vec: Float32Array }[]): void {
  s.guard('put vectors', () => {
    s.db
      .transaction(() => {
        for (const r of rows) s.stmt('INSERT OR REPLACE INTO doc_vectors (space, doc_key, vec) VALUES (?, ?, ?)').run(space, r.docKey, Buffer.from(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength))
      })
      .immediate()
  })
}

export function dropSpace(s: SqliteDb, space: string): void {
  s.guard('drop vectors', () => s.stmt('DELETE FROM doc_vectors WHERE space = ?').run(space))
}

export function docsWithoutVector(s: SqliteDb, space: string, scope: Scope, limit: number): { docKey: number; text: string }[] {
  return s.guard('docs without vector', () => {
    const inO = scopeWhere(scope, onTable('observations'))
    const inM = scopeWhere(scope, onTable('memories'))
    const obs = s.stmt(
      `SELECT rowid AS docKey, text FROM observations WHERE NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.space = ? AND v.doc_key = observations.rowid)${inO.sql} ORDER BY rowid LIMIT ?`,
    ).all(space, ...inO.params, limit) as { docKey: number; text: string }[]
    const mem = s.stmt(
      `SELECT -rowid AS docKey, text FROM memories WHERE NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.space = ? AND v.doc_key = -memories.rowid)${inM.sql} ORDER BY rowid LIMIT ?`,
    ).all(space, ...inM.params, limit) as { docKey: number; text: string }[]
    return [...obs, ...mem].slice(0, limit)
  })
}

export function projectTexts(s: SqliteDb, projectId: ProjectId, limit: number): string[] {
  return s.guard('project texts', () => {
    const obs = s.stmt('SELECT text FROM observations WHERE project_id = ? ORDER BY rowid DESC LIMIT ?').pluck().all(projectId, limit) as string[]
    const mem = s.stmt('SELECT text FROM memories WHERE project_id = ? ORDER BY rowid DESC LIMIT ?').pluck().all(projectId, limit) as string[]
    return [...mem, ...obs].slice(0, limit)
  })
}

export function getLsaModel(s: SqliteDb, projectId: ProjectId): { space: string; docCount: number; builtAt: number; model: Uint8Array } | undefined {
  const row = s.stmt('SELECT space, doc_count AS docCount, built_at AS builtAt, model FROM lsa_models WHERE project_id = ?').get(projectId) as
    | { space: string; docCount: number; builtAt: number; model: Buffer }
    | undefined
  return row && { ...row, model: new Uint8Array(row.model) }
}

export function lsaModelInfo(s: SqliteDb, projectId: ProjectId): { space: string; docCount: number; builtAt: number } | undefined {
  return s.stmt('SELECT space, doc_count AS docCount, built_at AS builtAt FROM lsa_models WHERE project_id = ?').get(projectId) as
    | { space: string; docCount: number; builtAt: number }
    | undefined
}

export function putLsaModel(s: SqliteDb, projectId: ProjectId, row: { space: string; docCount: number; builtAt: number; model: Uint8Array }): void {
  s.guard('put model', () =>
    s.stmt('INSERT OR REPLACE INTO lsa_models (project_id, space, doc_count, built_at, model) VALUES (?, ?, ?, ?, ?)').run(projectId, row.space, row.docCount, row.builtAt, Buffer.from(row.model)),
  )
}

export function entityNames(s: SqliteDb, projectIds: readonly ProjectId[]): string[] {
  // Asked on every recall; cached until this connection or another one writes (PRAGMA data_version).
  const version = `${s.writes}:${s.db.pragma('data_version', { simple: true }) as number}`
  const key = projectIds.join(',')
  const hit = s.namesCache.get(key)
  if (hit && hit.version === version) return hit.names
  const where = projectIds.length > 0 ? ` AND project_id IN (${projectIds.map(() => '?').join(',')})` : ''
  const names = s.stmt(`SELECT DISTINCT name FROM entities WHERE type = 'name'${where}`).pluck().all(...projectIds) as string[]
  if (s.namesCache.size > 100) s.namesCache.clear()
  s.namesCache.set(key, { version, names })
  return names
}

export function findEntities(s: SqliteDb, scope: Scope, refs: readonly EntityRef[]): { id: number; type: string; name: string; docs: number }[] {
  const projectIds = scope.projectIds ?? []
  const where = projectIds.length > 0 ? ` AND e.project_id IN (${projectIds.map(() => '?').join(',')})` : ''
  const count = mentionCount(s, scope, 'e.id')
  const out: { id: number; type: string; name: string; docs: number }[] = []
  for (const r of refs) {
    out.push(
      ...(s.stmt(`SELECT e.id, e.type, e.name, ${count.sql} AS docs FROM entities e WHERE e.type = ? AND e.name = ?${where}`).all(...count.params, r.type, r.name, ...projectIds) as {
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
function mentionCount(s: SqliteDb, scope: Scope, entity: string): { sql: string; params: unknown[] } {
  if (scope.user === undefined && scope.agent === undefined) return { sql: `(SELECT COUNT(*) FROM entity_mentions c WHERE c.entity_id = ${entity})`, params: [] }
  const inScope = scopeWhere({ ...scope, projectIds: [] }, onEither)
  return {
    sql: `(SELECT COUNT(*) FROM entity_mentions c ${docJoin('c.doc_key')} WHERE c.entity_id = ${entity}${inScope.sql})`,
    params: inScope.params,
  }
}

export function entityMentions(s: SqliteDb, entityIds: readonly number[], scope: Scope & { sessionId?: SessionId }, limit: number): { entityId: number; docKey: number }[] {
  if (entityIds.length === 0) return []
  const ids = entityIds.map(() => '?').join(',')
  // Entities belong to one project, so the project scope is already applied; a session scope needs the observation join.
  if (scope.sessionId) {
    const inScope = scopeWhere({ ...scope, projectIds: [] }, onTable('o'))
    return s.stmt(
      `SELECT m.entity_id AS entityId, m.doc_key AS docKey FROM entity_mentions m JOIN observations o ON o.rowid = m.doc_key
       WHERE m.entity_id IN (${ids}) AND o.session_id = ?${inScope.sql} LIMIT ?`,
    ).all(...entityIds, scope.sessionId, ...inScope.params, limit) as { entityId: number; docKey: number }[]
  }
  if (scope.user !== undefined || scope.agent !== undefined) {
    const inScope = scopeWhere({ ...scope, projectIds: [] }, onEither)
    return s.stmt(
      `SELECT x.entity_id AS entityId, x.doc_key AS docKey FROM entity_mentions x
       ${docJoin('x.doc_key')}
       WHERE x.entity_id IN (${ids})${inScope.sql} LIMIT ?`,
    ).all(...entityIds, ...inScope.params, limit) as { entityId: number; docKey: number }[]
  }
  return s.stmt(`SELECT entity_id AS entityId, doc_key AS docKey FROM entity_mentions WHERE entity_id IN (${ids}) LIMIT ?`).all(...entityIds, limit) as {
    entityId: number
    docKey: number
  }[]
}

export function coMentioned(s: SqliteDb, entityIds: readonly number[], scope: Scope, limit: number): { id: number; shared: number; docs: number }[] {
  if (entityIds.length === 0) return []
  const ids = entityIds.map(() => '?').join(',')
  // Only documents of the scope make two entities related: another user's text never decides where the graph walks.
  const inScope = scope.user !== undefined || scope.agent !== undefined ? scopeWhere({ ...scope, projectIds: [] }, onEither) : undefined
  const count = mentionCount(s, scope, 'x.entity_id')
  return s.stmt(
    `SELECT x.entity_id AS id, COUNT(*) AS shared, ${count.sql} AS docs
     FROM entity_mentions q JOIN entity_mentions x ON x.doc_key = q.doc_key AND x.entity_id <> q.entity_id
     ${inScope ? docJoin('q.doc_key') : ''}
     WHERE q.entity_id IN (${ids}) AND x.entity_id NOT IN (${ids})${inScope?.sql ?? ''}
     GROUP BY x.entity_id ORDER BY shared DESC, x.entity_id LIMIT ?`,
  ).all(...count.params, ...entityIds, ...entityIds, ...(inScope?.params ?? []), limit) as { id: number; shared: number; docs: number }[]
}

export function countDocs(s: SqliteDb, scope: Scope): number {
  const inO = scopeWhere(scope, onTable('observations'))
  const inM = scopeWhere(scope, onTable('memories'))
  const obs = s.stmt(`SELECT COUNT(*) FROM observations WHERE 1 = 1${inO.sql}`).pluck().get(...inO.params) as number
  const mem = s.stmt(`SELECT COUNT(*) FROM memories WHERE 1 = 1${inM.sql}`).pluck().get(...inM.params) as number
  return obs + mem
}

export function docsInTimeRange(s: SqliteDb, options: Scope & { sessionId?: SessionId; from: number; to: number; limit: number }): number[] {
  return s.guard('time range', () => {
    const inO = scopeWhere(options, onTable('observations'))
    const inM = scopeWhere(options, onTable('memories'))
    const obs = s.stmt(
      `SELECT rowid FROM observations WHERE ts >= ? AND ts < ?${inO.sql}${options.sessionId ? ' AND session_id = ?' : ''} ORDER BY ts, rowid LIMIT ?`,
    )
      .pluck()
      .all(options.from, options.to, ...inO.params, ...(options.sessionId ? [options.sessionId] : []), options.limit) as number[]
    if (options.sessionId) return obs
    const mems = s.stmt(`SELECT -rowid FROM memories WHERE created_at >= ? AND created_at < ?${inM.sql} ORDER BY created_at, rowid LIMIT ?`)
      .pluck()
      .all(options.from, options.to, ...inM.params, options.limit) as number[]
    return [...obs, ...mems].slice(0, options.limit)
  })
}

export function docs(s: SqliteDb, docKeys: readonly number[]): SearchDoc[] {
  return s.guard('docs', () => {
    const found = new Map<number, SearchDoc>()
    const obsKeys = docKeys.filter((k) => k > 0)
    const memKeys = docKeys.filter((k) => k < 0).map((k) => -k)
    for (let i = 0; i < obsKeys.length; i += 500) {
      const chunk = obsKeys.slice(i, i + 500)
      const rows = s.stmt(`SELECT rowid AS doc_key, * FROM observations WHERE rowid IN (${chunk.map(() => '?').join(',')})`).all(...chunk) as (ObservationRow & { doc_key: number })[]
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
      const rows = s.stmt(`SELECT rowid AS row_id, * FROM memories WHERE rowid IN (${chunk.map(() => '?').join(',')})`).all(...chunk) as (MemoryRow & { row_id: number })[]
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

export function neighbors(s: SqliteDb, docs: readonly { docKey: number; sessionId: SessionId | undefined; ts: number }[], span: number): Map<number, { prev: number[]; next: number[] }> {
  return s.guard('neighbors', () => {
    const out = new Map<number, { prev: number[]; next: number[] }>()
    for (const d of docs) {
      if (d.docKey <= 0 || d.sessionId === undefined) continue
      const prev = s.stmt(
        'SELECT rowid FROM observations WHERE session_id = ? AND (ts, rowid) < (?, ?) ORDER BY ts DESC, rowid DESC LIMIT ?',
      ).pluck().all(d.sessionId, d.ts, d.docKey, span) as number[]
      const next = s.stmt(
        'SELECT rowid FROM observations WHERE session_id = ? AND (ts, rowid) > (?, ?) ORDER BY ts, rowid LIMIT ?',
      ).pluck().all(d.sessionId, d.ts, d.docKey, span) as number[]
      out.set(d.docKey, { prev, next })
    }
    return out
  })
}
