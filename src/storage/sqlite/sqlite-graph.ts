import type { ProjectId, SessionId } from '../../core/ids.js'
import type { EntityRef } from '../../core/types.js'
import type { EntityRow, Scope } from '../store.js'
import { observationVisibility, type Visibility } from '../visibility.js'
import type { SqliteDb } from './sqlite-db.js'
import { DOC_VISIBILITY, docJoin, onEither, onTable, scopeWhere, visibleWhere } from './sqlite-rows.js'

// The entity graph: what the graph channel of recall reads (entity names, entities with their document counts in a
// scope, mentions, co-mentions), and what the viewer draws (entity search, sampled documents, entities and their
// co-mention edges).

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

export function entityNames(s: SqliteDb, projectIds: readonly ProjectId[]): string[] {
  // Asked on every recall; cached until this connection or another one writes (PRAGMA data_version).
  const version = s.dataVersion()
  const key = projectIds.join(',')
  const hit = s.namesCache.get(key)
  if (hit && hit.version === version) return hit.names
  const where = projectIds.length > 0 ? ` AND project_id IN (${projectIds.map(() => '?').join(',')})` : ''
  const names = s
    .stmt(`SELECT DISTINCT name FROM entities WHERE type = 'name'${where}`)
    .pluck()
    .all(...projectIds) as string[]
  if (s.namesCache.size > 100) s.namesCache.clear()
  s.namesCache.set(key, { version, names })
  return names
}

export function findEntities(
  s: SqliteDb,
  scope: Scope,
  refs: readonly EntityRef[],
  maxDocs?: number,
): { id: number; type: string; name: string; docs: number }[] {
  const projectIds = scope.projectIds ?? []
  // Every project when none is named, spelled out so that the (project_id, type, name) index finds the name (else: a scan of every entity per name).
  const where = ` AND e.project_id IN (${projectIds.length > 0 ? projectIds.map(() => '?').join(',') : 'SELECT id FROM projects'})`
  const count = mentionCount(whoMatters(s, scope), 'e.id', maxDocs)
  const out: { id: number; type: string; name: string; docs: number }[] = []
  for (const r of refs) {
    out.push(
      ...(s
        .stmt(`SELECT e.id, e.type, e.name, ${count.sql} AS docs FROM entities e WHERE e.type = ? AND e.name = ?${where}`)
        .all(...count.params, r.type, r.name, ...projectIds) as {
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
 * `scope` without its user condition when that condition holds for every document: a reader with no user
 * (`user: null`, shared documents only) of a store where no document has a user. The graph's queries then count
 * and walk mentions without joining each one to its document. Asked per recall; cached until a write (see
 * `countDocs`).
 */
function whoMatters(s: SqliteDb, scope: Scope): Scope {
  if (scope.user !== null) return scope
  const version = s.dataVersion()
  if (s.usersCache?.version !== version) {
    const any = s
      .stmt(
        'SELECT EXISTS (SELECT 1 FROM observations WHERE user_id IS NOT NULL) OR EXISTS (SELECT 1 FROM memories WHERE user_id IS NOT NULL)',
      )
      .pluck()
      .get() as number
    s.usersCache = { version, any: any === 1 }
  }
  if (s.usersCache.any) return scope
  const { user: _shared, ...rest } = scope
  return rest
}

/**
 * A subquery counting the documents of the scope that mention entity `entity` (an SQL expression):
 * another user's or agent's documents never weigh on how common an entity looks. With `maxDocs` it stops
 * counting at `maxDocs + 1` (a common entity, a speaker's name, can be in most documents: its exact count is
 * not needed to know it is over the caller's cut).
 */
function mentionCount(scope: Scope, entity: string, maxDocs?: number): { sql: string; params: unknown[] } {
  const cap = maxDocs === undefined ? '' : ` LIMIT ${Math.floor(maxDocs) + 1}`
  if (scope.user === undefined && scope.agent === undefined)
    return { sql: `(SELECT COUNT(*) FROM (SELECT 1 FROM entity_mentions c WHERE c.entity_id = ${entity}${cap}))`, params: [] }
  const inScope = scopeWhere({ ...scope, projectIds: [] }, onEither)
  return {
    sql: `(SELECT COUNT(*) FROM (SELECT 1 FROM entity_mentions c ${docJoin('c.doc_key')} WHERE c.entity_id = ${entity}${inScope.sql}${cap}))`,
    params: inScope.params,
  }
}

export function entityMentions(
  s: SqliteDb,
  entityIds: readonly number[],
  given: Scope & { sessionId?: SessionId; visible?: Visibility },
  limit: number,
): { entityId: number; docKey: number }[] {
  if (entityIds.length === 0) return []
  const scope = { ...whoMatters(s, given), ...(given.sessionId ? { sessionId: given.sessionId } : {}) }
  const ids = entityIds.map(() => '?').join(',')
  // Entities belong to one project, so the project scope is already applied; a session scope needs the observation join.
  if (scope.sessionId) {
    const inScope = scopeWhere({ ...scope, projectIds: [] }, onTable('o'))
    const shown = given.visible ? visibleWhere(given.visible, observationVisibility('o')) : { sql: '', params: [] }
    return s
      .stmt(
        `SELECT m.entity_id AS entityId, m.doc_key AS docKey FROM entity_mentions m JOIN observations o ON o.rowid = m.doc_key
       WHERE m.entity_id IN (${ids}) AND o.session_id = ?${inScope.sql}${shown.sql} LIMIT ?`,
      )
      .all(...entityIds, scope.sessionId, ...inScope.params, ...shown.params, limit) as { entityId: number; docKey: number }[]
  }
  if (scope.user !== undefined || scope.agent !== undefined || given.visible) {
    const inScope = scopeWhere({ ...scope, projectIds: [] }, onEither)
    const shown = given.visible ? visibleWhere(given.visible, DOC_VISIBILITY) : { sql: '', params: [] }
    return s
      .stmt(
        `SELECT x.entity_id AS entityId, x.doc_key AS docKey FROM entity_mentions x
       ${docJoin('x.doc_key')}
       WHERE x.entity_id IN (${ids})${inScope.sql}${shown.sql} LIMIT ?`,
      )
      .all(...entityIds, ...inScope.params, ...shown.params, limit) as { entityId: number; docKey: number }[]
  }
  return s
    .stmt(`SELECT entity_id AS entityId, doc_key AS docKey FROM entity_mentions WHERE entity_id IN (${ids}) LIMIT ?`)
    .all(...entityIds, limit) as {
    entityId: number
    docKey: number
  }[]
}

export function coMentioned(
  s: SqliteDb,
  entityIds: readonly number[],
  given: Scope,
  limit: number,
  maxDocs?: number,
): { id: number; shared: number; docs: number }[] {
  if (entityIds.length === 0) return []
  const scope = whoMatters(s, given)
  const ids = entityIds.map(() => '?').join(',')
  // Only documents of the scope make two entities related: another user's text never decides where the graph walks.
  const inScope = scope.user !== undefined || scope.agent !== undefined ? scopeWhere({ ...scope, projectIds: [] }, onEither) : undefined
  const hops = s
    .stmt(
      `SELECT x.entity_id AS id, COUNT(*) AS shared
     FROM entity_mentions q JOIN entity_mentions x ON x.doc_key = q.doc_key AND x.entity_id <> q.entity_id
     ${inScope ? docJoin('q.doc_key') : ''}
     WHERE q.entity_id IN (${ids}) AND x.entity_id NOT IN (${ids})${inScope?.sql ?? ''}
     GROUP BY x.entity_id ORDER BY shared DESC, x.entity_id LIMIT ?`,
    )
    .all(...entityIds, ...entityIds, ...(inScope?.params ?? []), limit) as { id: number; shared: number }[]
  // Document counts for the hops kept only (a correlated count per co-mentioned entity before the cut costs more than the walk).
  const count = mentionCount(scope, '?', maxDocs)
  const docsOf = s.stmt(`SELECT ${count.sql}`).pluck()
  return hops.map((h) => ({ ...h, docs: docsOf.get(h.id, ...count.params) as number }))
}
