import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MnemoError } from '../../core/errors.js'
import type { ProjectId, SessionId } from '../../core/ids.js'
import { toMatchExpression } from '../../retrieval/fts-query.js'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import type { PgDb } from './pg-db.js'
import { countDocs, docs, docsInTimeRange, matchCount, neighbors, searchIntegrity, searchText } from './pg-search.js'
import { openSearchDb, putDocs } from '../../testing/pg-search-fixtures.js'

const pg = await withPostgres()
const P1 = 'p1' as ProjectId
const pg2 = pg && (await withPostgres())

// The corpus and the scores FTS5 gives it: SQLite's search_fts (porter unicode61 remove_diacritics 2) with these rows,
// `-bm25(search_fts, 1, 0.5, 0.5)` (and 2, 1, 0.25 for the last), computed once with better-sqlite3 12.11.1.
const CORPUS = [
  [
    'jwt',
    'We verified the JWT in src/middleware/auth.ts with jose.jwtVerify',
    'jwt verify src/middleware/auth.ts',
    'assistant message 8 May 2023 Monday',
  ],
  ['rate', 'Rate limiting was added to the login route; limiting bursts matters', 'rate limiting', 'user prompt 9 May 2023 Tuesday'],
  ['cjk', ' 数据 据库 库迁 迁移 を実行した', '', 'tool Bash 10 May 2023 Wednesday'],
  ['cafe', 'The café serves naïve coffee; running runners ran', 'cafe', 'Caroline 11 May 2023 Thursday'],
  ['auth', 'auth auth auth token refresh for the auth service', 'auth service', 'Melanie 12 May 2023 Friday'],
] as const
const FTS5: [string, [string, number][], [number, number, number]?][] = [
  [
    '"jwt verify" OR "auth.ts" OR "auth"',
    [
      ['jwt', 2.6284362705484],
      ['auth', 1.0191986695067163],
    ],
  ],
  ['"limiting" OR "rate"', [['rate', 3.330528869328751]]],
  ['"数据 据库" OR "迁"*', [['cjk', 2.9693837472195144]]],
  ['"cafe" OR "running"', [['cafe', 3.0156530796385477]]],
  [
    '"auth"',
    [
      ['auth', 1.0191986695067163],
      ['jwt', 0.61301104273724],
    ],
  ],
  ['"post"* OR "team server"', [['memory', 3.2525964548807504]]],
  [
    '"auth" OR "may"',
    [
      ['auth', 1.1399392537229969],
      ['jwt', 0.8317363263534445],
      ['cjk', 4.6798029556650246e-7],
      ['cafe', 4.0868204927649596e-7],
      ['rate', 3.3742331288343563e-7],
    ],
    [2, 1, 0.25],
  ],
]

describe.skipIf(!pg)(`PostgreSQL search channel${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  let db: PgDb
  const key = new Map<string, number>()
  beforeAll(async () => {
    db = await openSearchDb(pg!.url)
    const keys = await putDocs(db, [
      ...CORPUS.map(([, body, parts, meta], i) => ({ text: body, body, parts, meta, ts: 1000 + i })),
      {
        type: 'memory' as const,
        text: 'Decision: use PostgreSQL 15 for the team server',
        parts: 'postgre sql',
        meta: 'decision',
        ts: 2000,
      },
    ])
    CORPUS.forEach(([name], i) => {
      key.set(name, keys[i] ?? 0)
    })
    key.set('memory', keys[5]!)
  })
  afterAll(async () => {
    await db?.close()
    await pg?.drop()
  })

  it('ranks as FTS5 bm25() ranks: the same documents, order and scores', async () => {
    for (const [match, want, weights] of FTS5) {
      const got = await searchText(db, { match, limit: 10, ...(weights ? { weights } : {}) })
      expect(
        got.map((m) => m.docKey),
        match,
      ).toEqual(want.map(([name]) => key.get(name)))
      got.forEach((m, i) => {
        expect(m.score, `${match} #${i}`).toBeCloseTo(want[i]?.[1] ?? Number.NaN, 9)
      })
    }
  })

  it('keeps its counts (documents, tokens, per-lexeme documents) exact through deletes, updates and truncation', async () => {
    const recount = async (): Promise<unknown> =>
      (
        await db.query(
          'check',
          `SELECT (SELECT row(docs, tokens)::text FROM search_totals) AS totals,
             (SELECT row(count(*), coalesce(sum(token_count), 0))::text FROM search_docs) AS want_totals,
             (SELECT coalesce(json_agg(row(lexeme, docs) ORDER BY lexeme), '[]')::text FROM search_terms) AS terms,
             (SELECT coalesce(json_agg(row(lexeme, n) ORDER BY lexeme), '[]')::text FROM
               (SELECT u.lexeme, count(*) AS n FROM search_docs, unnest(tsv) u GROUP BY u.lexeme) x) AS want_terms`,
        )
      ).rows[0]
    const same = async (): Promise<void> => {
      const r = (await recount()) as { totals: string; want_totals: string; terms: string; want_terms: string }
      expect(r.totals).toBe(r.want_totals)
      expect(r.terms).toBe(r.want_terms)
    }
    await same()
    const [extra] = await putDocs(db, [{ text: 'a passing note about auth and zebras', project: 'p9' }])
    await same()
    await db.query('t', `UPDATE search_docs SET tsv = '''zebra'':1A'::tsvector WHERE doc_key = $1`, [extra])
    await db.query('t', 'UPDATE search_docs SET flags = $2 WHERE doc_key = $1', [extra, 'x'])
    await same()
    expect(await matchCount(db, { match: '"zebras"', limit: 10 })).toBe(1)
    await db.query('t', 'DELETE FROM search_docs WHERE doc_key = $1', [extra])
    await same()
    expect(await matchCount(db, { match: '"zebras"', limit: 10 })).toBe(0)
    const n = Number((await db.query('t', `SELECT count(*) AS n FROM search_terms WHERE lexeme = 'zebra'`)).rows[0]?.n)
    expect(n).toBe(0)
    // One transaction that adds, removes and re-indexes documents, its deferred count flushed early once midway.
    const [a, b] = await putDocs(db, [
      { text: 'okapi okapi notes', project: 'p9' },
      { text: 'another okapi', project: 'p9' },
    ])
    await db.transaction('t', async (c) => {
      await c.query('DELETE FROM search_docs WHERE doc_key = $1', [a])
      await c.query('SET CONSTRAINTS ALL IMMEDIATE')
      await c.query(`UPDATE search_docs SET tsv = '''okapi'':1A ''zebra'':2A'::tsvector WHERE doc_key = $1`, [b])
      await c.query('SET CONSTRAINTS ALL DEFERRED')
      await c.query('DELETE FROM search_docs WHERE doc_key = $1', [b])
    })
    await same()
    await db.query('t', 'TRUNCATE search_docs')
    await same()
    expect(await searchIntegrity(db)).toEqual([])
    await putDocs(db, [{ text: 'okapi herd', project: 'p9' }])
    expect(await searchIntegrity(db)).toEqual([])
    await db.query('t', `UPDATE search_terms SET docs = docs + 1 WHERE lexeme = 'herd'`)
    await db.query('t', 'UPDATE search_totals SET tokens = tokens + 5')
    expect(await searchIntegrity(db)).toEqual([
      expect.stringMatching(/search totals say 1 documents and 7 tokens; the documents hold 1 and 2/),
      '1 lexemes have a wrong document count in search_terms (first: "herd")',
    ])
  })

  it('refuses an expression outside the quoted-phrase subset, naming it', async () => {
    for (const bad of ['jwt', '"a" AND "b"', '"a" NOT "b"', '("a")', 'body:"a"', '"open', '', '"a" OR'])
      await expect(searchText(db, { match: bad, limit: 5 })).rejects.toSatisfy(
        (e) => MnemoError.is(e, 'INVALID_INPUT') && e.details.path === 'match' && e.message.includes('unsupported full-text expression'),
      )
    expect(await searchText(db, { match: '"..." OR "?"', limit: 5 })).toEqual([])
  })
})

describe.skipIf(!pg2)(`PostgreSQL search scopes and documents${pg2 ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  let db: PgDb
  let k: number[]
  beforeAll(async () => {
    db = await openSearchDb(pg2!.url)
    k = await putDocs(db, [
      /* 0 */ { text: 'deploy the billing service deploy deploy', project: 'other', ts: 10 },
      /* 1 */ { text: 'deploy the billing service', ts: 20, session: 's1' },
      /* 2 */ { text: 'billing retries', ts: 30, session: 's1', user: 'ann' },
      /* 3 */ { text: 'billing webhooks', ts: 40, session: 's1', user: 'bob' },
      /* 4 */ { text: 'billing by the codex agent', ts: 50, session: 's2', agent: 'codex' },
      /* 5 */ { type: 'memory', text: 'billing uses Stripe', ts: 60, agent: null },
      /* 6 */ { type: 'memory', text: 'billing used Braintree', ts: 5, validTo: 55 },
      /* 7 */ { type: 'memory', text: 'billing archived note', ts: 70, archivedAt: 80 },
      /* 8 */ { text: '数据库迁移を実行した src/billing/invoiceTotal.ts', ts: 90, session: 's1' },
    ])
  })
  afterAll(async () => {
    await db?.close()
    await pg2?.drop()
  })
  const found = async (options: Parameters<typeof searchText>[1]): Promise<number[]> =>
    (await searchText(db, options)).map((m) => m.docKey).sort((a, b) => a - b)
  const match = toMatchExpression('billing')!

  it('applies project, user, agent and session inside the query, before the limit', async () => {
    // Document 0 (another project) is the best match for "deploy": the limit counts the scope's documents only.
    expect(await searchText(db, { match: toMatchExpression('deploy')!, limit: 1, projectIds: [P1] })).toMatchObject([{ docKey: k[1] }])
    expect(await found({ match, limit: 50, projectIds: [P1], user: 'ann' })).toEqual([k[1], k[2], k[4], k[5], k[8]].sort((a, b) => a! - b!))
    expect(await found({ match, limit: 50, projectIds: [P1], user: null })).toEqual([k[1], k[4], k[5], k[8]].sort((a, b) => a! - b!))
    expect(await found({ match, limit: 50, projectIds: [P1], agent: 'claude-code' })).toEqual(
      [k[1], k[2], k[3], k[5], k[8]].sort((a, b) => a! - b!),
    )
    expect(await found({ match, limit: 50, sessionId: 's2' as SessionId })).toEqual([k[4]])
  })

  it('reads memories as of a time, and archived ones only when asked', async () => {
    expect(await found({ match, limit: 50, projectIds: [P1], asOf: 50 })).toEqual([k[1], k[2], k[3], k[4], k[6]].sort((a, b) => a! - b!))
    expect(await found({ match, limit: 50, projectIds: [P1], includeArchived: true })).toContain(k[7])
    expect(await found({ match, limit: 50, projectIds: [P1] })).not.toContain(k[7])
    // Document 8 matches through its path (src/billing/…).
    expect(await matchCount(db, { match, limit: 50, projectIds: [P1] })).toBe(6)
    expect(await matchCount(db, { match, limit: 2, projectIds: [P1] })).toBe(2)
  })

  it('finds CJK words and identifiers and paths as recall asks for them', async () => {
    for (const q of ['数据库', '迁移', 'invoiceTotal', 'invoice total', 'billing/invoiceTotal.ts', 'invoicetotal.ts'])
      expect(await found({ match: toMatchExpression(q)!, limit: 5 }), q).toEqual([k[8]])
  })

  it('reads the time channel over the whole store and the last capture time from indexes, with no sort of every row', async () => {
    // With sequential scans and full sorts priced out, the plan shows which index serves each query (on a table this small
    // the planner prefers a scan and a sort); without an index in ts order a Sort node stays in the plan.
    const plan = (sql: string, params: unknown[]): Promise<string> =>
      db.transaction('plan', async (c) => {
        await c.query('SET LOCAL enable_seqscan = off')
        await c.query('SET LOCAL enable_sort = off')
        return (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n')
      })
    // The time channel's query with no project and no user (docsInTimeRange): the first rows in time order.
    const time = await plan(
      'SELECT rowid FROM observations o WHERE ts >= $1 AND ts < $2 AND o.user_id IS NULL ORDER BY ts DESC, rowid DESC LIMIT $3',
      [0, 100, 10],
    )
    expect(time).toMatch(/Index Only Scan Backward using observations_unowned_time/)
    expect(time).not.toMatch(/^\s*(->\s*)?Sort\b/m)
    expect(await plan('SELECT MAX(received_at) FROM events', [])).toMatch(/Index Only Scan Backward using events_received_at/)
  })

  it('counts, time ranges, documents and neighbours', async () => {
    expect(await countDocs(db, {})).toBe(9)
    expect(await countDocs(db, { projectIds: [P1], user: null })).toBe(6)
    expect(await docsInTimeRange(db, { projectIds: [P1], from: 20, to: 61, limit: 10 })).toEqual([k[1], k[2], k[3], k[4], k[5]])
    expect(await docsInTimeRange(db, { projectIds: [P1], from: 0, to: 100, limit: 2, newestFirst: true })).toEqual([k[8], k[4]])
    expect(await docsInTimeRange(db, { sessionId: 's1' as SessionId, from: 0, to: 100, limit: 10 })).toEqual([k[1], k[2], k[3], k[8]])
    // The whole store under a named user: its rows and those of no user, merged in time order, either way, cut at the limit.
    const observations = async (o: Parameters<typeof docsInTimeRange>[1]): Promise<number[]> =>
      (await docsInTimeRange(db, o)).filter((key) => key > 0)
    expect(await observations({ user: 'ann', from: 0, to: 100, limit: 10 })).toEqual([k[0], k[1], k[2], k[4], k[8]])
    expect(await observations({ user: 'bob', from: 0, to: 100, limit: 10, newestFirst: true })).toEqual([k[8], k[4], k[3], k[1], k[0]])
    expect(await observations({ user: 'bob', from: 15, to: 100, limit: 3, newestFirst: true })).toEqual([k[8], k[4], k[3]])
    expect(await observations({ user: 'ann', from: 25, to: 60, limit: 2 })).toEqual([k[2], k[4]])
    expect(await observations({ user: 'ann', agent: 'codex', from: 0, to: 100, limit: 10 })).toEqual([k[4]])
    expect(await observations({ user: null, from: 0, to: 100, limit: 10 })).toEqual([k[0], k[1], k[4], k[8]])
    const got = await docs(db, [k[5]!, 999_999, k[1]!, k[6]!])
    expect(got.map((d) => [d.docKey, d.type, d.text])).toEqual([
      [k[5], 'memory', 'billing uses Stripe'],
      [k[1], 'observation', 'deploy the billing service'],
      [k[6], 'memory', 'billing used Braintree'],
    ])
    expect(got[2]).toMatchObject({ validTo: 55, sessionId: undefined, role: 'fact' })
    expect(got[1]).toMatchObject({ sessionId: 's1', ts: 20, projectId: 'p1' })
    const n = await neighbors(
      db,
      [
        { docKey: k[2]!, sessionId: 's1' as SessionId, ts: 30 },
        { docKey: k[5]!, sessionId: undefined, ts: 60 },
      ],
      2,
    )
    expect([...n.keys()]).toEqual([k[2]])
    expect(n.get(k[2]!)).toEqual({ prev: [k[1]], next: [k[3], k[8]] })
  })
})
