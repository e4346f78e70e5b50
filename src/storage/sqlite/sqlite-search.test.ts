import path from 'node:path'
import { mulberry32 } from '../../core/random.js'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProjectId, SessionId } from '../../core/ids.js'
import type { ProjectRef } from '../../core/types.js'
import { tempDir } from '../../testing/test-mnemo.js'
import { appendEvents, memoryEvent, memoryId, memoryOp, promptEvent, T0 } from '../contract/contract.js'
import type { SearchTextOptions, Store, TextMatch } from '../store.js'
import { openSqliteStore } from './sqlite-store.js'

const WORDS = ['billing', 'ledger', 'refund', 'coupon', 'cache', 'retry', 'deploy', 'tenant', 'invoice', 'queue', 'shard', 'token']
const PROJECTS: ProjectRef[] = Array.from({ length: 6 }, (_, i) => ({ root: `/p/p${i}`, name: `p${i}` }))
const USERS = [undefined, 'alice', 'bob'] as const
const AGENTS = ['claude-code', 'codex'] as const

/**
 * The answer `searchText` must give, by the plainest query there is: every match ranked, joined to its row, the
 * scope's rules written out once more on the row, cut at `limit`.
 */
function reference(db: Database.Database, o: SearchTextOptions): TextMatch[] {
  const sql: string[] = []
  const params: unknown[] = []
  const doc = (name: string): string => `COALESCE(o.${name}, m.${name})`
  if (o.projectIds && o.projectIds.length > 0) {
    sql.push(`${doc('project_id')} IN (${o.projectIds.map(() => '?').join(',')})`)
    params.push(...o.projectIds)
  }
  if (o.user === null) sql.push(`${doc('user_id')} IS NULL`)
  else if (o.user !== undefined) {
    sql.push(`(${doc('user_id')} IS NULL OR ${doc('user_id')} = ?)`)
    params.push(o.user)
  }
  if (o.agent !== undefined) {
    sql.push(`(${doc('agent')} IS NULL OR ${doc('agent')} = ?)`)
    params.push(o.agent)
  }
  if (o.sessionId !== undefined) {
    sql.push('o.session_id = ?')
    params.push(o.sessionId)
  }
  if (o.asOf !== undefined) {
    sql.push('(o.rowid IS NULL OR o.ts <= ?)', '(m.rowid IS NULL OR (m.created_at <= ? AND (m.valid_to IS NULL OR m.valid_to > ?)))')
    params.push(o.asOf, o.asOf, o.asOf)
  } else sql.push('(m.rowid IS NULL OR m.valid_to IS NULL)')
  if (!o.includeArchived) sql.push('(m.rowid IS NULL OR m.archived_at IS NULL)')
  if (o.kinds && o.kinds.length > 0) {
    sql.push(`${doc('kind')} IN (${o.kinds.map(() => '?').join(',')})`)
    params.push(...o.kinds)
  }
  return db
    .prepare(
      `SELECT f.docKey, COALESCE(o.role, m.kind) AS role, f.score FROM (
         SELECT rowid AS docKey, -bm25(search_fts, 1, 0.5, 0.5) AS score FROM search_fts WHERE search_fts MATCH ?) f
       LEFT JOIN observations o ON f.docKey > 0 AND o.rowid = f.docKey
       LEFT JOIN memories m ON f.docKey < 0 AND m.rowid = -f.docKey
       WHERE (o.rowid IS NOT NULL OR m.rowid IS NOT NULL)${sql.map((c) => ` AND ${c}`).join('')}
       ORDER BY f.score DESC, f.docKey LIMIT ?`,
    )
    .all(o.match, ...params, o.limit) as TextMatch[]
}

describe('searchText', () => {
  let store: Store
  let db: Database.Database
  let projectIds: ProjectId[]
  let sessionIds: SessionId[]
  let cleanup: () => void
  const rand = mulberry32(16)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!

  beforeAll(async () => {
    const dir = tempDir('mnemo-search-')
    cleanup = dir.cleanup
    const file = path.join(dir.dir, 'mnemo.db')
    store = openSqliteStore({ path: file })
    // 1,500 prompts, most in project p0 (so one project is over half the store and the others a small part of it),
    // over users, agents and sessions; memories of each kind, some archived, some superseded.
    const events = Array.from({ length: 1500 }, (_, i) => {
      const project = i % 10 < 6 ? PROJECTS[0]! : pick(PROJECTS.slice(1))
      const text = Array.from({ length: 3 + Math.floor(rand() * 8) }, () => pick(WORDS)).join(' ')
      const user = pick(USERS)
      return promptEvent(`p${i}`, text, {
        project,
        agent: pick(AGENTS),
        session: `s${i % 23}`,
        ts: T0 + i * 60_000,
        ...(user === undefined ? {} : { user }),
      })
    })
    const memories = Array.from({ length: 60 }, (_, i) =>
      memoryEvent(`${pick(WORDS)} ${pick(WORDS)} memory ${i}`, {
        project: pick(PROJECTS),
        kind: pick(['fact', 'decision', 'lesson'] as const),
        ts: T0 + i * 3_600_000,
        ...(i % 7 === 0 ? { user: 'alice' } : {}),
      }),
    )
    const changes = [
      ...memories
        .filter((_, i) => i % 5 === 0)
        .map((m, i) => memoryOp('archive', memoryId(m), { ts: m.ts + 1, project: PROJECTS[i % 6]! })),
      ...memories
        .filter((_, i) => i % 9 === 1)
        .map((m, i) => memoryEvent(`${WORDS[i % WORDS.length]} superseding`, { supersedes: memoryId(m), ts: T0 + 400 * 3_600_000 + i })),
    ]
    await appendEvents(store, [...events, ...memories, ...changes])
    db = new Database(file, { readonly: true })
    projectIds = (await store.listProjects()).map((p) => p.id)
    sessionIds = (await store.listSessions({ limit: 50 })).map((s) => s.id)
  })
  afterAll(async () => {
    db.close()
    await store.close()
    cleanup()
  })

  it('reads a time range of one user’s whole store in time order from an index, and gives what a sort of every row gives', async () => {
    for (const user of [null, 'alice'] as const)
      for (const newestFirst of [false, true])
        for (const [from, to, limit] of [
          [T0, T0 + 1500 * 60_000, 50],
          [T0 + 300 * 60_000, T0 + 310 * 60_000, 5],
          [T0 + 700 * 60_000, T0 + 1400 * 60_000, 1000],
        ] as const) {
          const got = await store.docsInTimeRange({ user, from, to, limit, newestFirst })
          const rows = db
            .prepare(
              `SELECT rowid AS k, ts FROM observations WHERE ts >= ? AND ts < ? AND (user_id IS NULL${user === null ? '' : ' OR user_id = ?'})`,
            )
            .all(from, to, ...(user === null ? [] : [user])) as { k: number; ts: number }[]
          rows.sort((a, b) => (newestFirst ? b.ts - a.ts || b.k - a.k : a.ts - b.ts || a.k - b.k))
          expect(
            got.filter((k) => k > 0),
            `${user} ${newestFirst} ${from}`,
          ).toEqual(rows.slice(0, limit).map((r) => r.k))
        }
    // No user set (user_id IS NULL), no project: the index gives the first rows in order, with no sort of every row.
    const plan = db
      .prepare(
        'EXPLAIN QUERY PLAN SELECT rowid FROM observations WHERE ts >= ? AND ts < ? AND observations.user_id IS NULL ORDER BY ts DESC, rowid DESC LIMIT ?',
      )
      .all(T0, T0 + 1, 10) as { detail: string }[]
    expect(plan.map((r) => r.detail).join(' | ')).toMatch(/^SEARCH observations USING COVERING INDEX observations_user_time/)
  })

  it('gives exactly the best `limit` documents of the scope, best first, for scopes small and large', async () => {
    const p0 = projectIds.find((id) => db.prepare('SELECT root FROM projects WHERE id = ?').pluck().get(id) === '/p/p0')!
    const others = projectIds.filter((id) => id !== p0)
    const scopes: Omit<SearchTextOptions, 'match' | 'limit'>[] = [
      {},
      { user: null },
      { user: 'alice' },
      { projectIds: [p0] }, // over half the store: ranked in windows
      { projectIds: [others[0]!] }, // a small part: filtered by key lists before bm25
      { projectIds: others.slice(0, 3), user: 'bob', agent: 'codex' },
      { projectIds: [p0], sessionId: sessionIds[3]! },
      { sessionId: sessionIds[5]! },
      { projectIds: [others[1]!], asOf: T0 + 500 * 60_000 },
      { asOf: T0 + 200 * 3_600_000, user: null },
      { kinds: ['decision', 'lesson'] },
      { projectIds: [others[2]!], includeArchived: true, kinds: ['fact'] },
      { projectIds: [p0], includeArchived: true },
    ]
    let compared = 0
    for (const scope of scopes)
      for (const limit of [1, 5, 40, 700])
        for (let q = 0; q < 3; q++) {
          const match = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => `"${pick(WORDS)}"`).join(' OR ')
          const options = { ...scope, match, limit, weights: [1, 0.5, 0.5] as const }
          const got = await store.searchText(options)
          expect(got, JSON.stringify(options)).toEqual(reference(db, options))
          compared += got.length
        }
    // The comparisons are not of empty lists.
    expect(compared).toBeGreaterThan(5_000)
  })

  it('gives a small span of neighbours (one subquery each) as the first of the long list, under every visibility', async () => {
    const keys = db.prepare('SELECT rowid FROM observations WHERE rowid % 37 = 1').pluck().all() as number[]
    const docs = [...(await store.docs(keys)), ...(await store.docs([-1, -2]))]
    // A document at the same time as another of its session: the order falls back to keys.
    const tied = docs.find((d) => d.type === 'observation')!
    const twin = db
      .prepare('SELECT rowid FROM observations WHERE session_id = ? AND rowid <> ? LIMIT 1')
      .pluck()
      .get(tied.sessionId, tied.docKey) as number
    docs.push({ ...tied, docKey: twin })
    const visibilities = [undefined, {}, { kinds: ['prompt'] }, { kinds: ['decision'] }, { asOf: T0 + 700 * 60_000 }]
    let neighbours = 0
    for (const visible of visibilities) {
      const long = await store.neighbors(docs, 1000, visible)
      for (const span of [0, 1, 2, 4]) {
        const short = await store.neighbors(docs, span, visible)
        const cut = new Map([...long].map(([k, n]) => [k, { prev: n.prev.slice(0, span), next: n.next.slice(0, span) }]))
        expect(short, `span ${span}, ${JSON.stringify(visible)}`).toEqual(cut)
        for (const n of short.values()) neighbours += n.prev.length + n.next.length
      }
    }
    expect(neighbours).toBeGreaterThan(500)
  })
})
