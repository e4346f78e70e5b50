import type { ProjectId, SessionId } from '../../core/ids.js'
import type { EntityRef } from '../../core/types.js'
import type { EntityRow, Scope } from '../store.js'
import type { Visibility } from '../visibility.js'
import type { PgDb } from './pg-db.js'
import { docVisibility, onTable, Params, scopeWhere, visibleWhere } from './pg-sql.js'

// The entity graph on PostgreSQL (the GraphIndex port): the graph channel's entity lookups, mentions and co-mentions,
// and the viewer's graph, over pg-schema.ts's entities and entity_mentions. A mention's document is its search_docs
// row (same doc_key), which carries whose it is: scope conditions join it only when a user or agent is given
// (entities belong to one project, so their mentions are already in the project scope).

const onDoc = onTable('d')

/** True when the scope names a user or an agent: its conditions need each mention's document. */
const needsDocs = (scope: Scope): boolean => scope.user !== undefined || scope.agent !== undefined

/** The user and agent conditions of `scope` on the joined document `d` (no project list: entities carry it). */
const whose = (scope: Scope, p: Params): string => scopeWhere({ ...scope, projectIds: [] }, onDoc, p)

/**
 * A subquery counting the scope's documents that mention entity `entity` (an SQL expression), stopping at
 * `maxDocs + 1` when given: another user's or agent's documents never weigh on how common an entity looks.
 */
function mentionCount(scope: Scope, entity: string, p: Params, maxDocs?: number): string {
  const cap = maxDocs === undefined ? '' : ` LIMIT ${p.add(Math.floor(maxDocs) + 1)}`
  if (!needsDocs(scope)) return `(SELECT count(*) FROM (SELECT 1 FROM entity_mentions c WHERE c.entity_id = ${entity}${cap}) n)`
  return `(SELECT count(*) FROM (SELECT 1 FROM entity_mentions c JOIN search_docs d ON d.doc_key = c.doc_key
    WHERE c.entity_id = ${entity}${whose(scope, p)}${cap}) n)`
}

/** Lowercase names of the `name` entities of these projects (all projects when empty). */
export async function entityNames(db: PgDb, projectIds: readonly ProjectId[]): Promise<string[]> {
  const r = await db.query<{ name: string }>(
    'entity names',
    `SELECT DISTINCT name FROM entities WHERE type = 'name'${projectIds.length > 0 ? ' AND project_id = ANY($1::text[])' : ''}`,
    projectIds.length > 0 ? [projectIds] : [],
  )
  return r.rows.map((row) => row.name)
}

/**
 * The stored entities matching `refs` in the scope's projects (every project when none), with how many of the scope's
 * documents mention each (capped at `maxDocs + 1`); unmentioned ones left out. In the order of `refs`.
 */
export async function findEntities(
  db: PgDb,
  scope: Scope,
  refs: readonly EntityRef[],
  maxDocs?: number,
): Promise<{ id: number; type: string; name: string; docs: number }[]> {
  if (refs.length === 0) return []
  const p = new Params()
  const types = p.add(refs.map((r) => r.type))
  const names = p.add(refs.map((r) => r.name))
  const projects = scope.projectIds ?? []
  const inProjects = projects.length > 0 ? ` AND e.project_id = ANY(${p.add(projects)}::text[])` : ''
  const r = await db.query<{ id: number; type: string; name: string; docs: number }>(
    'find entities',
    `SELECT id, type, name, docs FROM (
       SELECT e.id, e.type, e.name, ${mentionCount(scope, 'e.id', p, maxDocs)} AS docs, r.i, e.project_id
       FROM unnest(${types}::text[], ${names}::text[]) WITH ORDINALITY AS r(type, name, i)
       JOIN entities e ON e.type = r.type AND e.name = r.name${inProjects}
     ) x WHERE docs > 0 ORDER BY i, project_id, id`,
    p.values,
  )
  return r.rows.map((e) => ({ id: Number(e.id), type: e.type, name: e.name, docs: Number(e.docs) }))
}

/**
 * Documents mentioning any of `entityIds`, as (entity, document) pairs of the scope (and session; with `visible`, of the
 * documents it lets recall return only), at most `limit`, by entity then key.
 */
export async function entityMentions(
  db: PgDb,
  entityIds: readonly number[],
  scope: Scope & { sessionId?: SessionId; visible?: Visibility },
  limit: number,
): Promise<{ entityId: number; docKey: number }[]> {
  if (entityIds.length === 0) return []
  const p = new Params()
  const ids = p.add(entityIds)
  let join = ''
  let where = ''
  if (scope.sessionId || scope.visible || needsDocs(scope)) {
    join = ' JOIN search_docs d ON d.doc_key = m.doc_key'
    where = whose(scope, p)
    if (scope.sessionId) where += ` AND d.session_id = ${p.add(scope.sessionId)}`
    if (scope.visible) where += visibleWhere(scope.visible, docVisibility('d'), p)
  }
  const r = await db.query<{ entityId: number; docKey: number }>(
    'entity mentions',
    `SELECT m.entity_id AS "entityId", m.doc_key AS "docKey" FROM entity_mentions m${join}
     WHERE m.entity_id = ANY(${ids}::bigint[])${where} ORDER BY m.entity_id, m.doc_key LIMIT ${p.add(limit)}`,
    p.values,
  )
  return r.rows.map((m) => ({ entityId: Number(m.entityId), docKey: Number(m.docKey) }))
}

/**
 * The `limit` entities sharing most of the scope's documents with `entityIds` (ties by id), with the number shared
 * and their own count of the scope's documents (capped at `maxDocs + 1`).
 */
export async function coMentioned(
  db: PgDb,
  entityIds: readonly number[],
  scope: Scope,
  limit: number,
  maxDocs?: number,
): Promise<{ id: number; shared: number; docs: number }[]> {
  if (entityIds.length === 0) return []
  const p = new Params()
  const ids = p.add(entityIds)
  // Only documents of the scope make two entities related: another user's text never decides where the graph walks.
  const join = needsDocs(scope) ? ' JOIN search_docs d ON d.doc_key = q.doc_key' : ''
  const where = needsDocs(scope) ? whose(scope, p) : ''
  const hops = await db.query<{ id: number; shared: number }>(
    'co-mentioned',
    `SELECT x.entity_id AS id, count(*) AS shared
     FROM entity_mentions q JOIN entity_mentions x ON x.doc_key = q.doc_key AND x.entity_id <> q.entity_id${join}
     WHERE q.entity_id = ANY(${ids}::bigint[]) AND NOT x.entity_id = ANY(${ids}::bigint[])${where}
     GROUP BY x.entity_id ORDER BY shared DESC, x.entity_id LIMIT ${p.add(limit)}`,
    p.values,
  )
  if (hops.rows.length === 0) return []
  // Document counts for the hops kept only (a count per co-mentioned entity before the cut costs more than the walk).
  const q = new Params()
  const hopIds = q.add(hops.rows.map((h) => Number(h.id)))
  const counts = await db.query<{ id: number; docs: number }>(
    'co-mentioned',
    `SELECT h.id, ${mentionCount(scope, 'h.id', q, maxDocs)} AS docs FROM unnest(${hopIds}::bigint[]) AS h(id)`,
    q.values,
  )
  const docsOf = new Map(counts.rows.map((c) => [Number(c.id), Number(c.docs)]))
  return hops.rows.map((h) => ({ id: Number(h.id), shared: Number(h.shared), docs: docsOf.get(Number(h.id)) ?? 0 }))
}

/**
 * Entities of the scope's projects, mentioned in a document of the scope, whose name contains `text` (ASCII letters
 * case-insensitively, as SQLite's lower() and LIKE), exact matches first, then most mentioned, then by id.
 */
export async function searchEntities(
  db: PgDb,
  scope: Scope & { projectIds: readonly ProjectId[] },
  text: string,
  limit: number,
): Promise<EntityRow[]> {
  if (scope.projectIds.length === 0) return []
  const needle = text.trim().toLowerCase()
  const p = new Params()
  const projects = p.add(scope.projectIds)
  const pattern = p.add(`%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
  // Only entities some document of the scope mentions: another user's names never show up.
  const visible = needsDocs(scope)
    ? ` AND EXISTS (SELECT 1 FROM entity_mentions x JOIN search_docs d ON d.doc_key = x.doc_key WHERE x.entity_id = e.id${whose(scope, p)})`
    : ''
  const r = await db.query<EntityRow>(
    'search entities',
    `SELECT e.id, e.type, e.name, (SELECT count(*) FROM entity_mentions m WHERE m.entity_id = e.id) AS docs
     FROM entities e WHERE e.project_id = ANY(${projects}::text[]) AND lower(e.name) LIKE ${pattern} ESCAPE '\\'${visible}
     ORDER BY lower(e.name) = ${p.add(needle)} DESC, docs DESC, e.id LIMIT ${p.add(limit)}`,
    p.values,
  )
  return r.rows.map(toEntityRow)
}

const toEntityRow = (e: EntityRow): EntityRow => ({ id: Number(e.id), type: e.type, name: e.name, docs: Number(e.docs) })

/**
 * Keys of the newest `limit` documents of these projects that mention `entityId` (observations newest first, then
 * memories newest first), or without an entity the newest observations (by event): the viewer graph's sample.
 */
export async function sampleDocs(
  db: PgDb,
  scope: Scope & { projectIds: readonly ProjectId[] },
  entityId: number | undefined,
  limit: number,
): Promise<number[]> {
  if (scope.projectIds.length === 0) return []
  const p = new Params()
  if (entityId === undefined) {
    const r = await db.query<{ k: number }>(
      'sample docs',
      `SELECT rowid AS k FROM observations o WHERE true${scopeWhere(scope, onTable('o'), p)} ORDER BY event_seq DESC LIMIT ${p.add(limit)}`,
      p.values,
    )
    return r.rows.map((row) => Number(row.k))
  }
  const entity = p.add(entityId)
  const join = needsDocs(scope) ? ' JOIN search_docs d ON d.doc_key = x.doc_key' : ''
  const where = needsDocs(scope) ? whose(scope, p) : ''
  const r = await db.query<{ k: number }>(
    'sample docs',
    `SELECT x.doc_key AS k FROM entity_mentions x${join} WHERE x.entity_id = ${entity}${where}
     ORDER BY x.doc_key > 0 DESC, abs(x.doc_key) DESC LIMIT ${p.add(limit)}`,
    p.values,
  )
  return r.rows.map((row) => Number(row.k))
}

/** Entities mentioned in `docKeys`, most mentioned there first (ties by id), with that count (`shared`). */
export async function entitiesInDocs(db: PgDb, docKeys: readonly number[], limit: number): Promise<{ id: number; shared: number }[]> {
  if (docKeys.length === 0) return []
  const r = await db.query<{ id: number; shared: number }>(
    'entities in docs',
    `SELECT entity_id AS id, count(*) AS shared FROM entity_mentions WHERE doc_key = ANY($1::bigint[])
     GROUP BY entity_id ORDER BY shared DESC, entity_id LIMIT $2`,
    [docKeys, limit],
  )
  return r.rows.map((e) => ({ id: Number(e.id), shared: Number(e.shared) }))
}

/** Entities by id, in the order asked (unknown ids left out), with their document counts over the whole store. */
export async function entitiesById(db: PgDb, ids: readonly number[]): Promise<EntityRow[]> {
  if (ids.length === 0) return []
  const r = await db.query<EntityRow>(
    'entities by id',
    `SELECT e.id, e.type, e.name, (SELECT count(*) FROM entity_mentions m WHERE m.entity_id = e.id) AS docs
     FROM entities e WHERE e.id = ANY($1::bigint[])`,
    [ids],
  )
  const byId = new Map(r.rows.map((row) => [Number(row.id), toEntityRow(row)]))
  return ids.map((id) => byId.get(id)).filter((row): row is EntityRow => row !== undefined)
}

/** Co-mention edges among `ids` within `docKeys`: pairs (source < target) sharing documents there, heaviest first. */
export async function entityEdges(
  db: PgDb,
  ids: readonly number[],
  docKeys: readonly number[],
): Promise<{ source: number; target: number; weight: number }[]> {
  if (ids.length < 2 || docKeys.length === 0) return []
  // One indexed read of the (document, entity) pairs, then pairs counted here, as sqlite-graph.ts does.
  const r = await db.query<{ doc: number; entity: number }>(
    'entity edges',
    `SELECT doc_key AS doc, entity_id AS entity FROM entity_mentions
     WHERE doc_key = ANY($1::bigint[]) AND entity_id = ANY($2::bigint[]) ORDER BY doc_key, entity_id`,
    [docKeys, ids],
  )
  const rows = r.rows.map((row) => ({ doc: Number(row.doc), entity: Number(row.entity) }))
  const weights = new Map<string, number>()
  for (let i = 0; i < rows.length; ) {
    let j = i
    while (j < rows.length && rows[j]?.doc === rows[i]?.doc) j++
    for (let a = i; a < j; a++)
      for (let b = a + 1; b < j; b++) {
        const key = `${rows[a]?.entity}:${rows[b]?.entity}`
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
