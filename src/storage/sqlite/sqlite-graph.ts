import type { ProjectId } from '../../core/ids.js'
import type { EntityRow, Scope } from '../store.js'
import { docJoin, onEither, onTable, scopeWhere } from './sqlite-rows.js'
import type { SqliteDb } from './sqlite-db.js'

// The entity graph the viewer draws: entity search, sampled documents, entities and their co-mention edges.

export function searchEntities(s: SqliteDb, scope: Scope & { projectIds: readonly ProjectId[] }, text: string, limit: number): EntityRow[] {
  if (scope.projectIds.length === 0) return []
  const needle = text.trim().toLowerCase()
  const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  // Only entities some document of the scope mentions: another user's names never show up.
  const inScope = scope.user !== undefined || scope.agent !== undefined ? scopeWhere({ ...scope, projectIds: [] }, onEither) : undefined
  const visible = inScope
    ? ` AND EXISTS (SELECT 1 FROM entity_mentions x ${docJoin('x.doc_key')} WHERE x.entity_id = e.id${inScope.sql})`
    : ''
  return s
    .stmt(
      `SELECT e.id, e.type, e.name, (SELECT COUNT(*) FROM entity_mentions m WHERE m.entity_id = e.id) AS docs
     FROM entities e WHERE e.project_id IN (${scope.projectIds.map(() => '?').join(',')}) AND lower(e.name) LIKE ? ESCAPE '\\'${visible}
     ORDER BY lower(e.name) = ? DESC, docs DESC, e.id LIMIT ?`,
    )
    .all(...scope.projectIds, pattern, ...(inScope?.params ?? []), needle, limit) as EntityRow[]
}

export function sampleDocs(
  s: SqliteDb,
  scope: Scope & { projectIds: readonly ProjectId[] },
  entityId: number | undefined,
  limit: number,
): number[] {
  if (scope.projectIds.length === 0) return []
  if (entityId !== undefined && (scope.user !== undefined || scope.agent !== undefined)) {
    const inScope = scopeWhere({ ...scope, projectIds: [] }, onEither)
    return s
      .stmt(
        `SELECT x.doc_key FROM entity_mentions x ${docJoin('x.doc_key')}
       WHERE x.entity_id = ?${inScope.sql} ORDER BY x.doc_key > 0 DESC, abs(x.doc_key) DESC LIMIT ?`,
      )
      .pluck()
      .all(entityId, ...inScope.params, limit) as number[]
  }
  if (entityId !== undefined) {
    // Entities belong to one project: its mentions are already in scope.
    const obs = s
      .stmt('SELECT doc_key FROM entity_mentions WHERE entity_id = ? AND doc_key > 0 ORDER BY doc_key DESC LIMIT ?')
      .pluck()
      .all(entityId, limit) as number[]
    if (obs.length >= limit) return obs
    const mem = s
      .stmt('SELECT doc_key FROM entity_mentions WHERE entity_id = ? AND doc_key < 0 ORDER BY doc_key LIMIT ?')
      .pluck()
      .all(entityId, limit - obs.length) as number[]
    return [...obs, ...mem]
  }
  const inScope = scopeWhere(scope, onTable('observations'))
  return s
    .stmt(`SELECT rowid FROM observations WHERE 1 = 1${inScope.sql} ORDER BY event_seq DESC LIMIT ?`)
    .pluck()
    .all(...inScope.params, limit) as number[]
}

export function entitiesInDocs(s: SqliteDb, docKeys: readonly number[], limit: number): { id: number; shared: number }[] {
  if (docKeys.length === 0) return []
  return s
    .stmt(
      `SELECT entity_id AS id, COUNT(*) AS shared FROM entity_mentions WHERE doc_key IN (SELECT value FROM json_each(?))
     GROUP BY entity_id ORDER BY shared DESC, entity_id LIMIT ?`,
    )
    .all(JSON.stringify(docKeys), limit) as { id: number; shared: number }[]
}

export function entitiesById(s: SqliteDb, ids: readonly number[]): EntityRow[] {
  if (ids.length === 0) return []
  const rows = s
    .stmt(
      `SELECT e.id, e.type, e.name, (SELECT COUNT(*) FROM entity_mentions m WHERE m.entity_id = e.id) AS docs
     FROM entities e WHERE e.id IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(ids)) as EntityRow[]
  const byId = new Map(rows.map((r) => [r.id, r]))
  return ids.map((id) => byId.get(id)).filter((r): r is EntityRow => r !== undefined)
}

export function entityEdges(
  s: SqliteDb,
  ids: readonly number[],
  docKeys: readonly number[],
): { source: number; target: number; weight: number }[] {
  if (ids.length < 2 || docKeys.length === 0) return []
  // One indexed read of the (document, entity) pairs, then pairs counted here: a self-join in SQL
  // over a JSON-listed sample is ~20× slower (measured with scripts/bench-viewer.mjs).
  const rows = s
    .stmt(
      `SELECT doc_key AS doc, entity_id AS entity FROM entity_mentions
     WHERE doc_key IN (SELECT value FROM json_each(?)) AND +entity_id IN (SELECT value FROM json_each(?)) ORDER BY doc_key, entity_id`,
    )
    .all(JSON.stringify(docKeys), JSON.stringify(ids)) as { doc: number; entity: number }[]
  const weights = new Map<string, number>()
  for (let i = 0; i < rows.length; ) {
    let j = i
    while (j < rows.length && rows[j]!.doc === rows[i]!.doc) j++
    for (let a = i; a < j; a++)
      for (let b = a + 1; b < j; b++) {
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
