import type { ProjectId, SessionId } from '../../core/ids.js'
import type { InjectionKey, InjectionWhat, Scope, SearchDoc, SearchTextOptions, TextMatch } from '../store.js'
import { memoryVisibility, observationVisibility, type Visibility } from '../visibility.js'
import { matchedOnly, zeroIdfSplit } from './sqlite-common-terms.js'
import type { SqliteDb } from './sqlite-db.js'
import {
  DOC_VISIBILITY,
  docJoin,
  type MemoryRow,
  type ObservationRow,
  observationText,
  onEither,
  onTable,
  scopeWhere,
  splitFlags,
  visibleWhere,
} from './sqlite-rows.js'

// The retrieval primitives: BM25 search, vectors and LSA models, time ranges, documents and their neighbours (the graph
// channel's entity lookups are sqlite-graph.ts's, as pg-graph.ts holds PostgreSQL's).

/**
 * BM25 search with the scope and visibility (kinds, as of, archived: `visibleWhere`) applied inside the query: the
 * best `limit` documents of the scope matching `options.match`, best first (ties broken by key), each with its role
 * and score.
 *
 * A scope that is a small part of the store (a project of several, a session) is one condition per table,
 * `docKey IN (SELECT rowid FROM observations WHERE …) OR -docKey IN (SELECT rowid FROM memories WHERE …)`, each list
 * read through the scope indexes once per query: SQLite drops a match outside the scope before FTS5 computes its
 * bm25, and only the `limit` best are joined to their rows. A scope holding most of the store (no project named)
 * ranks the matches instead, cut at a window of the best, and joins only the window to its rows to apply the scope;
 * when the window holds fewer than `limit` documents of the scope and there are more matches, it grows (×8) and the
 * query runs again, up to every match: cheaper there than lists of nearly every key. Either way the result is
 * exactly the best `limit` documents of the scope, as one query joining every match would give, except that phrases
 * in half the index or more, to which bm25 gives no weight, are left out of the match, and searched only for the
 * documents the rest does not find when it finds fewer than `limit` (`zeroIdfSplit`; in a scope of a tenth of the
 * store or more): scores are then lower by at most 2.2e-6 per phrase left out, and documents tied on the other
 * phrases are ordered by key instead of by that share. Phrases no document holds are left out first (`matchedOnly`:
 * the same scores, bit for bit). Measured at 100k observations in docs/RECALL-LATENCY.md.
 */
export function searchText(s: SqliteDb, given: SearchTextOptions): TextMatch[] {
  return s.guard('search', () => {
    // The phrases no document holds weigh nothing in any score, but FTS5 checks them on every match.
    const match = matchedOnly(s, given.match)
    if (match === undefined) return []
    const options = match === given.match ? given : { ...given, match }
    // The phrases in half the index or more weigh 1e-6 in bm25: searched only for the tail, if the rest finds too few.
    // Not in a small scope (a session, under a tenth of the store): there the rest often finds too few, and the two
    // queries then cost more than the one (bm25 is computed for the scope's matches only: sparing it saves less).
    const total = countDocs(s, {})
    const share = options.sessionId ? 0 : countDocs(s, options) / Math.max(1, total)
    const split = share >= 0.1 ? zeroIdfSplit(s, options.match) : undefined
    if (split === undefined) return searchMatch(s, options, total, share)
    const found = searchMatch(s, { ...options, match: split.kept }, total, share)
    if (found.length >= options.limit) return found
    const rest = { ...options, match: `(${split.dropped}) NOT (${split.kept})`, limit: options.limit - found.length }
    const tail = searchMatch(s, rest, total, share)
    return [...found, ...tail].sort((a, b) => b.score - a.score || a.docKey - b.docKey)
  })
}

/**
 * `searchText` of `options.match` as it is.
 *
 * @param total - Documents in the store (`countDocs` of no scope). `share` - The scope's share of them, 0–1 (0 for a session).
 */
function searchMatch(s: SqliteDb, options: SearchTextOptions, total: number, share: number): TextMatch[] {
  const [wBody, wParts, wMeta] = options.weights ?? [1, 0.5, 0.5]
  const bm25 = `-bm25(search_fts, ${Number(wBody)}, ${Number(wParts)}, ${Number(wMeta)})`
  if (share * 2 < 1) {
    const inO = scopeWhere(options, onTable('observations'))
    const inM = scopeWhere(options, onTable('memories'))
    const seenO = visibleWhere(options, observationVisibility('observations'))
    const seenM = visibleWhere(options, memoryVisibility('memories'))
    // A session holds observations only.
    const session = options.sessionId ? ' AND observations.session_id = ?' : ''
    const memories = options.sessionId ? '0' : `1 = 1${inM.sql}${seenM.sql}`
    return s
      .stmt(
        `SELECT g.docKey, COALESCE(o.role, m.kind) AS role, g.score FROM (
            SELECT f.docKey, f.score FROM (
              SELECT rowid AS docKey, ${bm25} AS score FROM search_fts WHERE search_fts MATCH ?) f
            WHERE f.docKey IN (SELECT rowid FROM observations WHERE 1 = 1${inO.sql}${session}${seenO.sql})
               OR -f.docKey IN (SELECT rowid FROM memories WHERE ${memories})
            ORDER BY f.score DESC, f.docKey LIMIT ?) g
          ${docJoin('g.docKey')}
          ORDER BY g.score DESC, g.docKey`,
      )
      .all(
        options.match,
        ...inO.params,
        ...(options.sessionId ? [options.sessionId] : []),
        ...seenO.params,
        ...(options.sessionId ? [] : [...inM.params, ...seenM.params]),
        options.limit,
      ) as TextMatch[]
  }
  const inScope = scopeWhere(options, onEither)
  const visible = visibleWhere(options, DOC_VISIBILITY)
  const scope = inScope.sql + visible.sql
  const params: unknown[] = [...inScope.params, ...visible.params]
  const ranked = `SELECT rowid AS docKey, ${bm25} AS score FROM search_fts WHERE search_fts MATCH ? ORDER BY score DESC, rowid`
  const select = (inner: string): string =>
    `SELECT f.docKey, COALESCE(o.role, m.kind) AS role, f.score FROM (${inner}) f
       ${docJoin('f.docKey')}
       WHERE (o.id IS NOT NULL OR m.id IS NOT NULL)${scope}
       ORDER BY f.score DESC, f.docKey LIMIT ?`
  // The first window is sized to the scope's share of the store (1.5 × limit / share); a window over half the
  // store (a small store) goes straight to every match, as the window would.
  let window = Math.max(400, Math.ceil((options.limit * 1.5) / share))
  for (;;) {
    if (window * 2 >= total) return s.stmt(select(ranked)).all(options.match, ...params, options.limit) as TextMatch[]
    const found = s.stmt(select(`${ranked} LIMIT ?`)).all(options.match, window, ...params, options.limit) as TextMatch[]
    if (found.length >= options.limit) return found
    const matches = s
      .stmt('SELECT COUNT(*) FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT ?)')
      .pluck()
      .get(options.match, window + 1) as number
    if (matches <= window) return found
    window *= 8
  }
}

export function vectors(s: SqliteDb, space: string, scope: Scope, visible?: Visibility): { docKey: number; vec: Float32Array }[] {
  return s.guard('vectors', () => {
    const inScope = scopeWhere(scope, onEither)
    const shown = visible ? visibleWhere(visible, DOC_VISIBILITY) : { sql: '', params: [] }
    const rows = s
      .stmt(
        `SELECT v.doc_key AS docKey, v.vec AS vec FROM doc_vectors v
       ${docJoin('v.doc_key')}
       WHERE v.space = ? AND (o.id IS NOT NULL OR m.id IS NOT NULL)${inScope.sql}${shown.sql}`,
      )
      .all(space, ...inScope.params, ...shown.params) as { docKey: number; vec: Buffer }[]
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

export function countDocs(s: SqliteDb, scope: Scope): number {
  // Asked on every graph recall; cached until this connection or another one writes (PRAGMA data_version).
  const version = s.dataVersion()
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
  options: Scope & { sessionId?: SessionId; from: number; to: number; limit: number; newestFirst?: boolean; visible?: Visibility },
): number[] {
  return s.guard('time range', () => {
    const none = { sql: '', params: [] }
    const inO = scopeWhere(options, onTable('observations'))
    const inM = scopeWhere(options, onTable('memories'))
    const shownO = options.visible ? visibleWhere(options.visible, observationVisibility('observations')) : none
    const shownM = options.visible ? visibleWhere(options.visible, memoryVisibility('memories')) : none
    const obs = s
      .stmt(
        `SELECT rowid FROM observations WHERE ts >= ? AND ts < ?${inO.sql}${shownO.sql}${options.sessionId ? ' AND session_id = ?' : ''} ORDER BY ${options.newestFirst ? 'ts DESC, rowid DESC' : 'ts, rowid'} LIMIT ?`,
      )
      .pluck()
      .all(
        options.from,
        options.to,
        ...inO.params,
        ...shownO.params,
        ...(options.sessionId ? [options.sessionId] : []),
        options.limit,
      ) as number[]
    if (options.sessionId) return obs
    const mems = s
      .stmt(
        `SELECT -rowid FROM memories WHERE created_at >= ? AND created_at < ?${inM.sql}${shownM.sql} ORDER BY ${options.newestFirst ? 'created_at DESC, rowid DESC' : 'created_at, rowid'} LIMIT ?`,
      )
      .pluck()
      .all(options.from, options.to, ...inM.params, ...shownM.params, options.limit) as number[]
    return [...obs, ...mems].slice(0, options.limit)
  })
}

/** `Store.docRoles`: an observation's role, a memory's kind, by key; the text is not read (~0.1 against ~0.5 ms for 140 documents). */
export function docRoles(s: SqliteDb, docKeys: readonly number[]): Map<number, string> {
  return s.guard('doc roles', () => {
    const found = new Map<number, string>()
    const obsKeys = docKeys.filter((k) => k > 0)
    const memKeys = docKeys.filter((k) => k < 0).map((k) => -k)
    for (const [keys, sql, sign] of [
      [obsKeys, 'SELECT rowid AS k, role AS r FROM observations WHERE rowid IN', 1],
      [memKeys, 'SELECT rowid AS k, kind AS r FROM memories WHERE rowid IN', -1],
    ] as const)
      for (let i = 0; i < keys.length; i += 500) {
        const chunk = keys.slice(i, i + 500)
        const rows = s.stmt(`${sql} (${chunk.map(() => '?').join(',')})`).all(...chunk) as { k: number; r: string }[]
        for (const row of rows) found.set(sign * row.k, row.r)
      }
    return found
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

/** The documents `neighbors` is asked about, from its JSON parameter (`[[docKey, sessionId, ts], …]`), as rows `k, s, t`. */
const AS_DOCS = 'SELECT value ->> 0 AS k, value ->> 1 AS s, value ->> 2 AS t FROM json_each(?)'

/** Up to this `span`, `neighbors` asks for each neighbour by its own subquery (`nearest`); past it, for each side's list. */
const SCALAR_NEIGHBORS = 4

/**
 * `neighbors` for a small `span` (`json`: the documents, `[[docKey, sessionId, ts], …]`): each neighbour is one scalar subquery (the i-th before, the i-th after, by `OFFSET i`),
 * read from the session's (session_id, ts) index alone; the list form joins each neighbour back to its row for its
 * time, which cost 1.6–1.8× as much (50 documents, span 2, at 10k observations: 0.72–1.14 against 0.44–0.72 ms).
 * The same neighbours in the same order (the same condition and order, the list's i-th row).
 */
function nearest(
  s: SqliteDb,
  json: string,
  span: number,
  shown: { sql: string; params: unknown[] },
): Map<number, { prev: number[]; next: number[] }> {
  const side = (before: boolean, i: number): string =>
    `(SELECT rowid FROM observations WHERE session_id = d.s AND (ts, rowid) ${before ? '<' : '>'} (d.t, d.k)${shown.sql}
      ORDER BY ts ${before ? 'DESC' : 'ASC'}, rowid ${before ? 'DESC' : 'ASC'} LIMIT 1 OFFSET ${i})`
  const sides = Array.from({ length: span }, (_, i) => [side(true, i), side(false, i)]).flat()
  const rows = s
    .stmt(`SELECT ${['d.k', ...sides].join(', ')} FROM (${AS_DOCS}) d`)
    .raw()
    // The subqueries' parameters come first: they are written before the FROM.
    .all(...sides.flatMap(() => shown.params), json) as (number | null)[][]
  const out = new Map<number, { prev: number[]; next: number[] }>()
  for (const [key, ...near] of rows) {
    const prev: number[] = []
    const next: number[] = []
    near.forEach((k, j) => {
      if (k !== null) (j % 2 === 0 ? prev : next).push(k)
    })
    out.set(key!, { prev, next })
  }
  return out
}

export function neighbors(
  s: SqliteDb,
  docs: readonly { docKey: number; sessionId: SessionId | undefined; ts: number }[],
  span: number,
  visible?: Visibility,
): Map<number, { prev: number[]; next: number[] }> {
  return s.guard('neighbors', () => {
    const out = new Map<number, { prev: number[]; next: number[] }>()
    const asked = new Map<number, [number, string, number]>()
    for (const d of docs) if (d.docKey > 0 && d.sessionId !== undefined) asked.set(d.docKey, [d.docKey, d.sessionId, d.ts])
    if (asked.size === 0) return out
    const shown = visible ? visibleWhere(visible, observationVisibility('observations')) : { sql: '', params: [] }
    const json = JSON.stringify([...asked.values()])
    if (Number.isInteger(span) && span >= 0 && span <= SCALAR_NEIGHBORS) return nearest(s, json, span, shown)
    // Every document's both sides in one statement, the documents passed as JSON: a recall asks for 50 documents'
    // neighbours, and one statement each cost 2.4× as much (per-statement overhead, not SQLite's work: 1.7 against
    // 0.7 ms for 50 at 10k observations). A compound select keeps no order of its parts: each side is put in order here.
    const rows = s
      .stmt(
        // Starts with SELECT: SqliteDb.stmt counts any other statement as a write (which would clear the read caches).
        `SELECT d.k AS doc, 0 AS side, o.ts, o.rowid FROM (${AS_DOCS}) d JOIN observations o ON o.rowid IN (
           SELECT rowid FROM observations WHERE session_id = d.s AND (ts, rowid) < (d.t, d.k)${shown.sql} ORDER BY ts DESC, rowid DESC LIMIT ?)
         UNION ALL
         SELECT d.k AS doc, 1 AS side, o.ts, o.rowid FROM (${AS_DOCS}) d JOIN observations o ON o.rowid IN (
           SELECT rowid FROM observations WHERE session_id = d.s AND (ts, rowid) > (d.t, d.k)${shown.sql} ORDER BY ts, rowid LIMIT ?)`,
      )
      .all(json, ...shown.params, span, json, ...shown.params, span) as {
      doc: number
      side: number
      ts: number
      rowid: number
    }[]
    const near = (a: { ts: number; rowid: number }, b: { ts: number; rowid: number }): number => a.ts - b.ts || a.rowid - b.rowid
    const sides = new Map<number, { prev: { ts: number; rowid: number }[]; next: { ts: number; rowid: number }[] }>()
    for (const key of asked.keys()) sides.set(key, { prev: [], next: [] })
    for (const r of rows) sides.get(r.doc)?.[r.side === 0 ? 'prev' : 'next'].push(r)
    for (const [key, { prev, next }] of sides)
      out.set(key, { prev: prev.sort((a, b) => near(b, a)).map((r) => r.rowid), next: next.sort(near).map((r) => r.rowid) })
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
  const version = s.dataVersion()
  const key = JSON.stringify([scope.projectIds ?? [], scope.user, scope.agent])
  const hit = s.scopeDocsCache.get(key)
  if (hit && hit.version === version) return hit.keys
  const inO = scopeWhere(scope, onTable('observations'))
  const inM = scopeWhere(scope, onTable('memories'))
  // What recall returns by default (`visibleWhere` of no request): current, unarchived memories.
  const seenM = visibleWhere({}, memoryVisibility('memories'))
  const keys = new Set<number>(
    s
      .stmt(`SELECT rowid FROM observations WHERE 1 = 1${inO.sql}`)
      .pluck()
      .all(...inO.params) as number[],
  )
  for (const rowid of s
    .stmt(`SELECT rowid FROM memories WHERE 1 = 1${seenM.sql}${inM.sql}`)
    .pluck()
    .all(...seenM.params, ...inM.params) as number[])
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
