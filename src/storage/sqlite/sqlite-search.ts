import type { ProjectId, SessionId } from '../../core/ids.js'
import type { EntityRef } from '../../core/types.js'
import type { InjectionKey, InjectionWhat, Scope, SearchDoc, SearchTextOptions, TextMatch } from '../store.js'
import type { SqliteDb } from './sqlite-db.js'
import { docJoin, type MemoryRow, type ObservationRow, observationText, onEither, onTable, scopeWhere, splitFlags } from './sqlite-rows.js'

// The retrieval primitives: BM25 search, vectors and LSA models, entity lookups for the graph channel, time ranges, documents and their neighbours.

/**
 * BM25 search with the scope applied inside the query. The FTS5 ranking comes first, cut at a window of the best
 * matches (sized to the scope's share of the store's documents), and only that window is joined to its observations and memories to apply the scope; when the
 * window holds fewer than `limit` documents of the scope and there are more matches, the window grows (×8) and the
 * query runs again, up to every match. The result is exactly the best `limit` documents of the scope (ties broken
 * by key), as one query joining every match would give — without joining tens of thousands of matches at 100k
 * observations when the scope is most of the store.
 */
export function searchText(s: SqliteDb, options: SearchTextOptions): TextMatch[] {
  return s.guard('search', () => {
    const [wBody, wParts, wMeta] = options.weights ?? [1, 0.5, 0.5]
    const inScope = scopeWhere(options, onEither)
    const params: unknown[] = [...inScope.params]
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
    if (options.kinds && options.kinds.length > 0) {
      scope += ` AND COALESCE(o.kind, m.kind) IN (${options.kinds.map(() => '?').join(', ')})`
      params.push(...options.kinds)
    }
    const ranked = `SELECT rowid AS docKey, -bm25(search_fts, ${Number(wBody)}, ${Number(wParts)}, ${Number(wMeta)}) AS score FROM search_fts WHERE search_fts MATCH ? ORDER BY score DESC, rowid`
    const select = (inner: string): string =>
      `SELECT f.docKey, COALESCE(o.role, m.kind) AS role, f.score FROM (${inner}) f
       ${docJoin('f.docKey')}
       WHERE (o.id IS NOT NULL OR m.id IS NOT NULL)${scope}
       ORDER BY f.score DESC, f.docKey LIMIT ?`
    // The first window is sized to the scope's share of the store (one project of six: 1.5 × 6 × limit). A session, or
    // a window over half the store (a small store, a small scope), goes straight to every match, as the window would.
    const total = countDocs(s, {})
    const share = options.sessionId ? 0 : countDocs(s, options) / Math.max(1, total)
    let window = share === 0 ? Infinity : Math.max(400, Math.ceil((options.limit * 1.5) / share))
    if (window * 2 >= total) window = Infinity
    for (;;) {
      if (!Number.isFinite(window)) return s.stmt(select(ranked)).all(options.match, ...params, options.limit) as TextMatch[]
      const found = s.stmt(select(`${ranked} LIMIT ?`)).all(options.match, window, ...params, options.limit) as TextMatch[]
      if (found.length >= options.limit) return found
      const matches = s
        .stmt(`SELECT COUNT(*) FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT ?)`)
        .pluck()
        .get(options.match, window + 1) as number
      if (matches <= window) return found
      window = window * 8 > 100_000 ? Infinity : window * 8
    }
  })
}

export function vectors(s: SqliteDb, space: string, scope: Scope): { docKey: number; vec: Float32Array }[] {
  return s.guard('vectors', () => {
    const inScope = scopeWhere(scope, onEither)
    const rows = s
      .stmt(
        `SELECT v.doc_key AS docKey, v.vec AS vec FROM doc_vectors v
       ${docJoin('v.doc_key')}
       WHERE v.space = ? AND (o.id IS NOT NULL OR m.id IS NOT NULL)${inScope.sql}`,
      )
      .all(space, ...inScope.params) as { docKey: number; vec: Buffer }[]
    return rows.map((r) => ({
      docKey: r.docKey,
      vec: new Float32Array(r.vec.buffer.slice(r.vec.byteOffset, r.vec.byteOffset + r.vec.byteLength)),
    }))
  })
}

export function putVectors(s: SqliteDb, space: string, rows: readonly { docKey: number; vec: Float32Array }[]): void {
  s.guard('put vectors', () => {
    s.db
      .transaction(() => {
        for (const r of rows)
          s.stmt('INSERT OR REPLACE INTO doc_vectors (space, doc_key, vec) VALUES (?, ?, ?)').run(
            space,
            r.docKey,
            Buffer.from(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength),
          )
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
    const obs = s
      .stmt(
        `SELECT rowid AS docKey, text FROM observations WHERE NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.space = ? AND v.doc_key = observations.rowid)${inO.sql} ORDER BY rowid LIMIT ?`,
      )
      .all(space, ...inO.params, limit) as { docKey: number; text: string }[]
    for (const o of obs) o.text = observationText(o.text)
    const mem = s
      .stmt(
        `SELECT -rowid AS docKey, text FROM memories WHERE NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.space = ? AND v.doc_key = -memories.rowid)${inM.sql} ORDER BY rowid LIMIT ?`,
      )
      .all(space, ...inM.params, limit) as { docKey: number; text: string }[]
    return [...obs, ...mem].slice(0, limit)
  })
}

export function projectTexts(s: SqliteDb, projectId: ProjectId, limit: number): string[] {
  return s.guard('project texts', () => {
    const obs = s.stmt('SELECT text FROM observations WHERE project_id = ? ORDER BY rowid DESC LIMIT ?').pluck().all(projectId, limit) as (
      | string
      | Buffer
    )[]
    const obsTexts = obs.map(observationText)
    const mem = s
      .stmt('SELECT text FROM memories WHERE project_id = ? ORDER BY rowid DESC LIMIT ?')
      .pluck()
      .all(projectId, limit) as string[]
    return [...mem, ...obsTexts].slice(0, limit)
  })
}

export function getLsaModel(
  s: SqliteDb,
  projectId: ProjectId,
): { space: string; docCount: number; builtAt: number; model: Uint8Array } | undefined {
  const row = s
    .stmt('SELECT space, doc_count AS docCount, built_at AS builtAt, model FROM lsa_models WHERE project_id = ?')
    .get(projectId) as { space: string; docCount: number; builtAt: number; model: Buffer } | undefined
  return row && { ...row, model: new Uint8Array(row.model) }
}

export function lsaModelInfo(s: SqliteDb, projectId: ProjectId): { space: string; docCount: number; builtAt: number } | undefined {
  return s.stmt('SELECT space, doc_count AS docCount, built_at AS builtAt FROM lsa_models WHERE project_id = ?').get(projectId) as
    | { space: string; docCount: number; builtAt: number }
    | undefined
}

export function putLsaModel(
  s: SqliteDb,
  projectId: ProjectId,
  row: { space: string; docCount: number; builtAt: number; model: Uint8Array },
): void {
  s.guard('put model', () =>
    s
      .stmt('INSERT OR REPLACE INTO lsa_models (project_id, space, doc_count, built_at, model) VALUES (?, ?, ?, ?, ?)')
      .run(projectId, row.space, row.docCount, row.builtAt, Buffer.from(row.model)),
  )
}

export function entityNames(s: SqliteDb, projectIds: readonly ProjectId[]): string[] {
  // Asked on every recall; cached until this connection or another one writes (PRAGMA data_version).
  const version = `${s.writes}:${s.db.pragma('data_version', { simple: true }) as number}`
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
  const version = `${s.writes}:${s.db.pragma('data_version', { simple: true }) as number}`
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
  given: Scope & { sessionId?: SessionId },
  limit: number,
): { entityId: number; docKey: number }[] {
  if (entityIds.length === 0) return []
  const scope = { ...whoMatters(s, given), ...(given.sessionId ? { sessionId: given.sessionId } : {}) }
  const ids = entityIds.map(() => '?').join(',')
  // Entities belong to one project, so the project scope is already applied; a session scope needs the observation join.
  if (scope.sessionId) {
    const inScope = scopeWhere({ ...scope, projectIds: [] }, onTable('o'))
    return s
      .stmt(
        `SELECT m.entity_id AS entityId, m.doc_key AS docKey FROM entity_mentions m JOIN observations o ON o.rowid = m.doc_key
       WHERE m.entity_id IN (${ids}) AND o.session_id = ?${inScope.sql} LIMIT ?`,
      )
      .all(...entityIds, scope.sessionId, ...inScope.params, limit) as { entityId: number; docKey: number }[]
  }
  if (scope.user !== undefined || scope.agent !== undefined) {
    const inScope = scopeWhere({ ...scope, projectIds: [] }, onEither)
    return s
      .stmt(
        `SELECT x.entity_id AS entityId, x.doc_key AS docKey FROM entity_mentions x
       ${docJoin('x.doc_key')}
       WHERE x.entity_id IN (${ids})${inScope.sql} LIMIT ?`,
      )
      .all(...entityIds, ...inScope.params, limit) as { entityId: number; docKey: number }[]
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

export function countDocs(s: SqliteDb, scope: Scope): number {
  // Asked on every graph recall; cached until this connection or another one writes (PRAGMA data_version).
  const version = `${s.writes}:${s.db.pragma('data_version', { simple: true }) as number}`
  const key = JSON.stringify([scope.projectIds ?? [], scope.user, scope.agent])
  const hit = s.countCache.get(key)
  if (hit && hit.version === version) return hit.count
  const count = countScope(s, scope)
  if (s.countCache.size > 100) s.countCache.clear()
  s.countCache.set(key, { version, count })
  return count
}

function countScope(s: SqliteDb, scope: Scope): number {
  const inO = scopeWhere(scope, onTable('observations'))
  const inM = scopeWhere(scope, onTable('memories'))
  const obs = s
    .stmt(`SELECT COUNT(*) FROM observations WHERE 1 = 1${inO.sql}`)
    .pluck()
    .get(...inO.params) as number
  const mem = s
    .stmt(`SELECT COUNT(*) FROM memories WHERE 1 = 1${inM.sql}`)
    .pluck()
    .get(...inM.params) as number
  return obs + mem
}

export function docsInTimeRange(
  s: SqliteDb,
  options: Scope & { sessionId?: SessionId; from: number; to: number; limit: number; newestFirst?: boolean },
): number[] {
  return s.guard('time range', () => {
    const inO = scopeWhere(options, onTable('observations'))
    const inM = scopeWhere(options, onTable('memories'))
    const obs = s
      .stmt(
        `SELECT rowid FROM observations WHERE ts >= ? AND ts < ?${inO.sql}${options.sessionId ? ' AND session_id = ?' : ''} ORDER BY ${options.newestFirst ? 'ts DESC, rowid DESC' : 'ts, rowid'} LIMIT ?`,
      )
      .pluck()
      .all(options.from, options.to, ...inO.params, ...(options.sessionId ? [options.sessionId] : []), options.limit) as number[]
    if (options.sessionId) return obs
    const mems = s
      .stmt(
        `SELECT -rowid FROM memories WHERE created_at >= ? AND created_at < ?${inM.sql} ORDER BY ${options.newestFirst ? 'created_at DESC, rowid DESC' : 'created_at, rowid'} LIMIT ?`,
      )
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
      const rows = s
        // The columns a SearchDoc holds only: recall reads hundreds of documents per query.
        .stmt(
          `SELECT rowid AS doc_key, id, kind, role, project_id, session_id, ts, text, source_ref, flags FROM observations WHERE rowid IN (${chunk.map(() => '?').join(',')})`,
        )
        .all(...chunk) as (Pick<
        ObservationRow,
        'id' | 'kind' | 'role' | 'project_id' | 'session_id' | 'ts' | 'text' | 'source_ref' | 'flags'
      > & {
        doc_key: number
      })[]
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
          text: observationText(o.text),
          sourceRef: o.source_ref ?? undefined,
          flags: splitFlags(o.flags),
        })
      }
    }
    for (let i = 0; i < memKeys.length; i += 500) {
      const chunk = memKeys.slice(i, i + 500)
      const rows = s
        .stmt(`SELECT rowid AS row_id, * FROM memories WHERE rowid IN (${chunk.map(() => '?').join(',')})`)
        .all(...chunk) as (MemoryRow & { row_id: number })[]
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

export function neighbors(
  s: SqliteDb,
  docs: readonly { docKey: number; sessionId: SessionId | undefined; ts: number }[],
  span: number,
): Map<number, { prev: number[]; next: number[] }> {
  return s.guard('neighbors', () => {
    const out = new Map<number, { prev: number[]; next: number[] }>()
    for (const d of docs) {
      if (d.docKey <= 0 || d.sessionId === undefined) continue
      const prev = s
        .stmt('SELECT rowid FROM observations WHERE session_id = ? AND (ts, rowid) < (?, ?) ORDER BY ts DESC, rowid DESC LIMIT ?')
        .pluck()
        .all(d.sessionId, d.ts, d.docKey, span) as number[]
      const next = s
        .stmt('SELECT rowid FROM observations WHERE session_id = ? AND (ts, rowid) > (?, ?) ORDER BY ts, rowid LIMIT ?')
        .pluck()
        .all(d.sessionId, d.ts, d.docKey, span) as number[]
      out.set(d.docKey, { prev, next })
    }
    return out
  })
}

/**
 * Documents of the scope matching `match` (current memories only), counted up to `limit`. The FTS5 index gives the
 * keys of every match without touching a table; they are counted against the keys of the scope's documents (read once
 * per scope and data version, through the scope indexes, see `scopeDocKeys`). Joining each match to its observation
 * row instead reads one wide row per match: at 100k observations, 12 prompt terms with 1k–30k matches each took
 * ~700 ms that way against ~80 ms so (docs/prompt-recall.md).
 */
export function matchCount(s: SqliteDb, options: Scope & { match: string; limit: number }): number {
  return s.guard('match count', () => {
    const inScope = scopeDocKeys(s, options)
    let count = 0
    for (const key of s.stmt('SELECT rowid FROM search_fts WHERE search_fts MATCH ?').pluck().all(options.match) as number[])
      if (inScope.has(key) && ++count >= options.limit) break
    return count
  })
}

/** Keys (search_fts rowids) of the scope's observations and current memories, cached until a write (see `countDocs`). */
function scopeDocKeys(s: SqliteDb, scope: Scope): Set<number> {
  const version = `${s.writes}:${s.db.pragma('data_version', { simple: true }) as number}`
  const key = JSON.stringify([scope.projectIds ?? [], scope.user, scope.agent])
  const hit = s.scopeDocsCache.get(key)
  if (hit && hit.version === version) return hit.keys
  const inO = scopeWhere(scope, onTable('observations'))
  const inM = scopeWhere(scope, onTable('memories'))
  const keys = new Set<number>(
    s
      .stmt(`SELECT rowid FROM observations WHERE 1 = 1${inO.sql}`)
      .pluck()
      .all(...inO.params) as number[],
  )
  for (const rowid of s
    .stmt(`SELECT rowid FROM memories WHERE valid_to IS NULL AND archived_at IS NULL${inM.sql}`)
    .pluck()
    .all(...inM.params) as number[])
    keys.add(-rowid)
  // A few scopes at a time (a hook asks for one): each holds a key per document.
  if (s.scopeDocsCache.size >= 4) s.scopeDocsCache.clear()
  s.scopeDocsCache.set(key, { version, keys })
  return keys
}

export function recordInjections(
  s: SqliteDb,
  key: InjectionKey,
  rows: readonly { itemId: string; what: InjectionWhat }[],
  at: number,
): void {
  if (rows.length === 0) return
  s.guard('record injections', () => {
    s.db
      .transaction(() => {
        const insert = s.stmt(
          'INSERT OR IGNORE INTO context_injections (agent, session_key, user, item_id, what, at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        for (const r of rows) insert.run(key.agent, key.sessionKey, key.user, r.itemId, r.what, at)
      })
      .immediate()
  })
}

export function injections(s: SqliteDb, key: InjectionKey): { itemId: string; what: InjectionWhat; at: number }[] {
  return s.guard(
    'injections',
    () =>
      s
        .stmt(
          'SELECT item_id AS itemId, what, at FROM context_injections WHERE agent = ? AND session_key = ? AND user = ? ORDER BY at, item_id',
        )
        .all(key.agent, key.sessionKey, key.user) as { itemId: string; what: InjectionWhat; at: number }[],
  )
}
