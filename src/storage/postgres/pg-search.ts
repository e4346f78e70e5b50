import type { ProjectId, SessionId } from '../../core/ids.js'
import type { Scope, SearchDoc, SearchTextOptions, TextMatch } from '../store.js'
import { memoryVisibility, observationVisibility, type Visibility } from '../visibility.js'
import type { PgDb } from './pg-db.js'
import { docVisibility, onTable, Params, scopeWhere, visibleWhere } from './pg-sql.js'
import { anyTerm, type MatchTerm, parseMatch } from './pg-text.js'

// The keyword and time channels on PostgreSQL (the SearchIndex port): BM25 over search_docs' tsvector, time ranges,
// documents and their neighbours. The tables are pg-schema.ts's and pg-search-schema.ts's.

/**
 * BM25 term-frequency saturation and length normalisation: FTS5's bm25() constants (k1 = 1.2, b = 0.75), the usual
 * values of Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond" (2009).
 */
export const BM25_K1 = 1.2
export const BM25_B = 0.75

/** The idf of a term no worse than this: FTS5's floor for a term in more than half the documents (where log(…) ≤ 0). */
const MIN_IDF = 1e-6

const scopeOf = (alias: string) => onTable(alias)

/**
 * The document frequencies BM25 needs for `terms`: the store's documents and tokens (`search_totals`), and per term
 * the number of documents holding it — a word's from `search_terms`, a phrase's or prefix's counted through the GIN
 * index — over the whole store, as FTS5 counts them (so a scope ranks as the same documents rank in SQLite).
 */
async function termStats(db: PgDb, terms: readonly MatchTerm[]): Promise<{ docs: number; tokens: number; df: number[] }> {
  const p = new Params()
  const each = terms.map((t) =>
    t.lexemes.length === 1 && !t.prefix
      ? `(SELECT coalesce(max(docs), 0) FROM search_terms WHERE lexeme = ${p.add(t.lexemes[0])})`
      : `(SELECT count(*) FROM search_docs WHERE tsv @@ ${p.add(t.tsquery)}::tsquery)`,
  )
  const r = await db.query<{ docs: number; tokens: number; df: number[] }>(
    'search',
    `SELECT docs, tokens, ARRAY[${each.join(', ')}]::bigint[] AS df FROM search_totals`,
    p.values,
  )
  const row = r.rows[0]
  return { docs: Number(row?.docs ?? 0), tokens: Number(row?.tokens ?? 0), df: (row?.df ?? []).map(Number) }
}

/**
 * Full-text search ranked by BM25 with the scope and visibility (kinds, as of, archived: `visibleWhere`) applied inside the query: the best `limit` documents of the scope
 * that match `options.match` (see `parseMatch`), best first, ties by key — the documents and order FTS5's
 * `bm25(search_fts, body, parts, meta)` gives in SQLite, with its formula (fts5_aux.c): per term,
 * idf · f·(k1+1) / (f + k1·(1 − b + b·D/avgD)), where f is the term's column-weighted count in the document, D its
 * tokens in all columns, avgD the store's mean, idf = ln((N − n + 0.5)/(n + 0.5)) (at least 1e-6) over the N documents
 * of the store of which n hold the term. `score` is that sum (higher is better).
 * @throws {MnemoError} `INVALID_INPUT` (path `match`) — not a disjunction of quoted phrases; `STORE_UNAVAILABLE` — the
 *   server failed.
 */
export async function searchText(db: PgDb, options: SearchTextOptions): Promise<TextMatch[]> {
  const terms = parseMatch(options.match)
  const any = anyTerm(terms)
  if (any === undefined || options.limit <= 0) return []
  const stats = await termStats(db, terms)
  if (stats.docs <= 0) return []
  const [wBody, wParts, wMeta] = (options.weights ?? [1, 0.5, 0.5]).map(Number) as [number, number, number]
  const p = new Params()
  const w = [p.add(wBody), p.add(wParts), p.add(wMeta)].map((x) => `${x}::float8`)
  const counts = terms.map((t) =>
    t.lexemes.length === 1 && !t.prefix
      ? `coalesce((x.tc ->> ${p.add(t.lexemes[0])})::integer, 0)`
      : // A phrase is looked for in the tsvector only where the term counts hold all its whole words (a prefix's last is not whole).
        `CASE WHEN x.tc ?& ${p.add(t.prefix ? t.lexemes.slice(0, -1) : t.lexemes)}::text[] AND d.tsv @@ ${p.add(t.tsquery)}::tsquery
          THEN mnemo_phrase_counts(d.tsv, ${p.add(t.lexemes)}::text[], ${p.add(t.prefix)}) ELSE 0 END`,
  )
  const weighted = counts.map((_, i) => `((c${i} & 511) * ${w[0]} + ((c${i} >> 9) & 511) * ${w[1]} + (c${i} >> 18) * ${w[2]}) AS f${i}`)
  const norm = `${p.add(BM25_K1)}::float8 * (1 - ${p.add(BM25_B)}::float8 + ${p.add(BM25_B)}::float8 * token_count / ${p.add(stats.tokens / stats.docs)}::float8)`
  const score = terms
    .map((_, i) => {
      const n = stats.df[i] ?? 0
      const idf = Math.max(MIN_IDF, Math.log((stats.docs - n + 0.5) / (n + 0.5)))
      return `${p.add(idf)}::float8 * f${i} * ${BM25_K1 + 1} / (f${i} + nm)`
    })
    .join(' + ')
  let where = `d.tsv @@ ${p.add(any)}::tsquery${scopeWhere(options, scopeOf('d'), p)}`
  if (options.sessionId) where += ` AND d.session_id = ${p.add(options.sessionId)}`
  where += visibleWhere(options, docVisibility('d'), p)
  // In stages the planner keeps apart (MATERIALIZED): each term count is read once per matching document, not once
  // per use in the formula (inlined, the score expression evaluated every jsonb lookup six times); and a document's
  // counts are decompressed once (x.tc, a copy in memory), not once per term.
  const sql = `WITH hit AS MATERIALIZED (
      SELECT d.doc_key, d.role, d.token_count, ${counts.map((c, i) => `${c} AS c${i}`).join(', ')} FROM search_docs d
        CROSS JOIN LATERAL (SELECT d.term_counts || '{}'::jsonb AS tc OFFSET 0) x WHERE ${where}
    ), f AS MATERIALIZED (
      SELECT doc_key, role, ${weighted.join(', ')}, ${norm} AS nm FROM hit
    )
    SELECT doc_key AS "docKey", role, ${score} AS score FROM f ORDER BY score DESC, doc_key LIMIT ${p.add(Math.floor(options.limit))}`
  const r = await db.query<TextMatch>('search', sql, p.values)
  return r.rows.map((m) => ({ docKey: Number(m.docKey), role: m.role, score: Number(m.score) }))
}

/**
 * Documents of the scope matching `options.match` (current, unarchived memories only), counted up to `limit` (a
 * count of `limit` means at least that many); 0 for an expression without terms.
 * @throws {MnemoError} `INVALID_INPUT` (path `match`) — see `parseMatch`.
 */
export async function matchCount(db: PgDb, options: Scope & { match: string; limit: number }): Promise<number> {
  const any = anyTerm(parseMatch(options.match))
  if (any === undefined || options.limit <= 0) return 0
  const p = new Params()
  const r = await db.query<{ n: number }>(
    'match count',
    // What recall returns by default (`visibleWhere` of no request): observations, current and unarchived memories.
    `SELECT count(*) AS n FROM (SELECT 1 FROM search_docs d WHERE d.tsv @@ ${p.add(any)}::tsquery${scopeWhere(options, scopeOf('d'), p)}${visibleWhere({}, docVisibility('d'), p)}
       LIMIT ${p.add(Math.floor(options.limit))}) x`,
    p.values,
  )
  return Number(r.rows[0]?.n ?? 0)
}

/** Number of documents (observations and memories, every version) in the scope. */
export async function countDocs(db: PgDb, scope: Scope): Promise<number> {
  const p = new Params()
  const r = await db.query<{ n: number }>(
    'count docs',
    `SELECT count(*) AS n FROM search_docs d WHERE true${scopeWhere(scope, scopeOf('d'), p)}`,
    p.values,
  )
  return Number(r.rows[0]?.n ?? 0)
}

/**
 * Keys of the scope's documents whose time is in [from, to) (epoch ms; observation time, memory creation), oldest
 * first (newest first with `newestFirst`), observations then memories, at most `limit`; with `sessionId`, that
 * session's observations only; with `visible`, those it lets recall return only (`visibleWhere`).
 */
export async function docsInTimeRange(
  db: PgDb,
  options: Scope & { sessionId?: SessionId; from: number; to: number; limit: number; newestFirst?: boolean; visible?: Visibility },
): Promise<number[]> {
  const dir = options.newestFirst ? 'DESC' : ''
  const p = new Params()
  const shownO = options.visible ? visibleWhere(options.visible, observationVisibility('o'), p) : ''
  const where = (scope: Scope): string =>
    `ts >= ${p.add(options.from)} AND ts < ${p.add(options.to)}${scopeWhere(scope, scopeOf('o'), p)}${shownO}${
      options.sessionId ? ` AND session_id = ${p.add(options.sessionId)}` : ''
    }`
  const order = `ORDER BY ts ${dir}, rowid ${dir} LIMIT ${p.add(options.limit)}`
  // Over the whole store under a named user, `user_id IS NULL OR user_id = $u` reads every row of both and sorts them:
  // each side is read in order from its own index instead (observations_unowned_time, observations_user_time) and the
  // two first-n lists merged (Merge Append). A project or a session is served by its own (…, ts) index as written.
  const bothOwners = typeof options.user === 'string' && !options.projectIds?.length && !options.sessionId
  const obs = await db.query<{ k: number }>(
    'time range',
    bothOwners
      ? `SELECT k FROM ((SELECT rowid AS k, ts FROM observations o WHERE ${where({ ...options, user: null })} ${order})
           UNION ALL (SELECT rowid AS k, ts FROM observations o WHERE ${where({ ...(options.agent === undefined ? {} : { agent: options.agent }) })} AND o.user_id = ${p.add(options.user)} ${order})) x
         ORDER BY ts ${dir}, k ${dir} LIMIT ${p.add(options.limit)}`
      : `SELECT rowid AS k FROM observations o WHERE ${where(options)} ${order}`,
    p.values,
  )
  const keys = obs.rows.map((r) => Number(r.k))
  if (options.sessionId) return keys
  const q = new Params()
  const shownM = options.visible ? visibleWhere(options.visible, memoryVisibility('m'), q) : ''
  const mem = await db.query<{ k: number }>(
    'time range',
    `SELECT -rowid AS k FROM memories m WHERE created_at >= ${q.add(options.from)} AND created_at < ${q.add(options.to)}${scopeWhere(options, scopeOf('m'), q)}${shownM}
     ORDER BY created_at ${dir}, rowid ${dir} LIMIT ${q.add(options.limit)}`,
    q.values,
  )
  return [...keys, ...mem.rows.map((r) => Number(r.k))].slice(0, options.limit)
}

const splitFlags = (flags: string | null): string[] => (flags ? flags.split(',').filter((f) => f.length > 0) : [])

/** Documents by key, in the order asked; unknown keys are left out. */
/** `Store.docRoles`: an observation's role, a memory's kind, by key, without their text. */
export async function docRoles(db: PgDb, docKeys: readonly number[]): Promise<Map<number, string>> {
  const found = new Map<number, string>()
  const obsKeys = docKeys.filter((k) => k > 0)
  const memKeys = docKeys.filter((k) => k < 0).map((k) => -k)
  if (obsKeys.length > 0) {
    const r = await db.query<{ rowid: number; role: string }>(
      'doc roles',
      'SELECT rowid, role FROM observations WHERE rowid = ANY($1::bigint[])',
      [obsKeys],
    )
    for (const o of r.rows) found.set(Number(o.rowid), o.role)
  }
  if (memKeys.length > 0) {
    const r = await db.query<{ rowid: number; kind: string }>(
      'doc roles',
      'SELECT rowid, kind FROM memories WHERE rowid = ANY($1::bigint[])',
      [memKeys],
    )
    for (const m of r.rows) found.set(-Number(m.rowid), m.kind)
  }
  return found
}

export async function docs(db: PgDb, docKeys: readonly number[]): Promise<SearchDoc[]> {
  const obsKeys = docKeys.filter((k) => k > 0)
  const memKeys = docKeys.filter((k) => k < 0).map((k) => -k)
  const found = new Map<number, SearchDoc>()
  if (obsKeys.length > 0) {
    const r = await db.query<{
      rowid: number
      id: string
      kind: string
      role: string
      project_id: string
      session_id: string
      ts: number
      text: string
      source_ref: string | null
      flags: string | null
    }>(
      'docs',
      'SELECT rowid, id, kind, role, project_id, session_id, ts, text, source_ref, flags FROM observations WHERE rowid = ANY($1::bigint[])',
      [obsKeys],
    )
    for (const o of r.rows) {
      found.set(Number(o.rowid), {
        docKey: Number(o.rowid),
        type: 'observation',
        id: o.id,
        kind: o.kind,
        role: o.role,
        projectId: o.project_id as ProjectId,
        sessionId: o.session_id as SessionId,
        ts: Number(o.ts),
        text: o.text,
        sourceRef: o.source_ref ?? undefined,
        flags: splitFlags(o.flags),
      })
    }
  }
  if (memKeys.length > 0) {
    const r = await db.query<{
      rowid: number
      id: string
      kind: string
      project_id: string
      created_at: number
      text: string
      flags: string | null
      valid_to: number | null
      archived_at: number | null
    }>(
      'docs',
      'SELECT rowid, id, kind, project_id, created_at, text, flags, valid_to, archived_at FROM memories WHERE rowid = ANY($1::bigint[])',
      [memKeys],
    )
    for (const m of r.rows) {
      found.set(-Number(m.rowid), {
        docKey: -Number(m.rowid),
        type: 'memory',
        id: m.id,
        kind: m.kind,
        role: m.kind,
        projectId: m.project_id as ProjectId,
        sessionId: undefined,
        ts: Number(m.created_at),
        text: m.text,
        sourceRef: undefined,
        flags: splitFlags(m.flags),
        ...(m.valid_to !== null ? { validTo: Number(m.valid_to) } : {}),
        ...(m.archived_at !== null ? { archivedAt: Number(m.archived_at) } : {}),
      })
    }
  }
  return docKeys.map((k) => found.get(k)).filter((d): d is SearchDoc => d !== undefined)
}

/**
 * For each observation key, the keys of up to `span` observations before and after it in its session (time order,
 * then key; nearest first), in one query; with `visible`, of the observations it lets recall return only. Memory keys
 * and documents without a session get none.
 */
export async function neighbors(
  db: PgDb,
  given: readonly { docKey: number; sessionId: SessionId | undefined; ts: number }[],
  span: number,
  visible?: Visibility,
): Promise<Map<number, { prev: number[]; next: number[] }>> {
  const out = new Map<number, { prev: number[]; next: number[] }>()
  const asked = given.filter((d) => d.docKey > 0 && d.sessionId !== undefined)
  if (asked.length === 0) return out
  const p = new Params()
  const [keys, sessions, times, limit] = [
    p.add(asked.map((d) => d.docKey)),
    p.add(asked.map((d) => d.sessionId)),
    p.add(asked.map((d) => d.ts)),
    p.add(Math.max(0, Math.floor(span))),
  ]
  const shown = visible ? visibleWhere(visible, observationVisibility('o'), p) : ''
  const r = await db.query<{ k: number; prev: number[]; next: number[] }>(
    'neighbors',
    `SELECT q.k,
       ARRAY(SELECT o.rowid FROM observations o WHERE o.session_id = q.s AND (o.ts, o.rowid) < (q.t, q.k)${shown} ORDER BY o.ts DESC, o.rowid DESC LIMIT ${limit}) AS prev,
       ARRAY(SELECT o.rowid FROM observations o WHERE o.session_id = q.s AND (o.ts, o.rowid) > (q.t, q.k)${shown} ORDER BY o.ts, o.rowid LIMIT ${limit}) AS next
     FROM unnest(${keys}::bigint[], ${sessions}::text[], ${times}::bigint[]) AS q(k, s, t)`,
    p.values,
  )
  for (const row of r.rows) out.set(Number(row.k), { prev: row.prev.map(Number), next: row.next.map(Number) })
  return out
}

/**
 * The search index's own integrity (for `Store.integrityCheck`): BM25's statistics against a recount from the
 * documents' vectors — the totals of documents and tokens, and each lexeme's document count. Reads every vector.
 * @returns The problems found (empty when none), each a sentence naming what differs and by how much.
 */
export async function searchIntegrity(db: PgDb): Promise<string[]> {
  const r = await db.query<{ docs: number; tokens: number; want_docs: number; want_tokens: number; terms: number; example: string | null }>(
    'integrity check',
    `WITH want AS (SELECT u.lexeme, count(*) AS n FROM search_docs, unnest(tsv) u GROUP BY u.lexeme),
       wrong AS (SELECT coalesce(w.lexeme, t.lexeme) AS lexeme FROM want w FULL JOIN search_terms t ON t.lexeme = w.lexeme WHERE t.docs IS DISTINCT FROM w.n)
     SELECT (SELECT docs FROM search_totals) AS docs, (SELECT tokens FROM search_totals) AS tokens,
       (SELECT count(*) FROM search_docs) AS want_docs, (SELECT coalesce(sum(token_count), 0) FROM search_docs) AS want_tokens,
       (SELECT count(*) FROM wrong) AS terms, (SELECT min(lexeme) FROM wrong) AS example`,
  )
  const row = r.rows[0]
  if (!row) return ['search_totals has no row']
  const problems: string[] = []
  if (Number(row.docs) !== Number(row.want_docs) || Number(row.tokens) !== Number(row.want_tokens))
    problems.push(
      `search totals say ${row.docs} documents and ${row.tokens} tokens; the documents hold ${row.want_docs} and ${row.want_tokens}`,
    )
  if (Number(row.terms) > 0)
    problems.push(`${row.terms} lexemes have a wrong document count in search_terms (first: ${JSON.stringify(row.example)})`)
  return problems
}
