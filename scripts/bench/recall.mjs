// Recall in-process: each store's queries run warm through the engine (limit 10, no user), fused over every project,
// fused in the project the query is about, and the keyword channel alone. Floor: mnemo's own FTS5 query on the same text and scope without the pipeline — the match
// expression recall builds (toMatchExpression), MATCH + bm25, LIMIT 200 (in the project: joined to observations), on the
// same store.
// With two or more sizes, the growth of p95 from the smaller to the larger is fitted as value ∝ size^exponent.
import Database from 'better-sqlite3'
import { PROJECT_NAMES } from './generate.mjs'

/**
 * mnemo's FTS5 query alone on `db` (better-sqlite3, the store's file): `(match, projectId?) → rows`, MATCH + bm25 with
 * recall's column weights, LIMIT 200; with a project, joined to the observations to keep that project's only.
 */
export function ftsFloor(db) {
  const all = db.prepare(
    'SELECT rowid, bm25(search_fts, 1, 0.5, 0.5) AS score FROM search_fts WHERE search_fts MATCH ? ORDER BY score LIMIT 200',
  )
  const inProject = db.prepare(
    'SELECT f.rowid, bm25(search_fts, 1, 0.5, 0.5) AS score FROM search_fts f JOIN observations o ON o.rowid = f.rowid WHERE search_fts MATCH ? AND o.project_id = ? ORDER BY score LIMIT 200',
  )
  return (match, projectId) => (projectId === undefined ? all.all(match) : inProject.all(match, projectId))
}

const RUNS = 1 // measured passes over the queries (after one warm-up pass)

export async function figures(ctx) {
  const { openMnemo } = await ctx.dist('runtime/open-mnemo.js')
  const { toMatchExpression } = await ctx.dist('retrieval/fts-query.js')
  const { searchForm } = await ctx.dist('retrieval/search-text.js')
  const rows = []
  const p95s = []
  for (const size of ctx.sizes) {
    const store = await ctx.store(size)
    const m = openMnemo({ home: store.home, env: {}, timeZone: 'UTC', cwd: '/' })
    const db = new Database(store.db, { readonly: true })
    const raw = ftsFloor(db)
    const projectIds = new Map(
      db
        .prepare('SELECT name, id FROM projects')
        .all()
        .map((p) => [p.name, p.id]),
    )
    const projectOf = new Map(store.queries.map((q, i) => [q, projectIds.get(PROJECT_NAMES[i % PROJECT_NAMES.length])]))
    const time = async (fn) => {
      const ms = []
      for (const q of store.queries) await fn(q) // warm-up
      for (let r = 0; r < RUNS; r++)
        for (const q of store.queries) {
          const t = performance.now()
          await fn(q)
          ms.push(performance.now() - t)
        }
      return ms
    }
    try {
      const floor = await time((q) => raw(toMatchExpression(searchForm(q))))
      const projectFloor = await time((q) => raw(toMatchExpression(searchForm(q)), projectOf.get(q)))
      const inProject = await time((q) => m.engine.recall(q, { limit: 10, projectIds: [projectOf.get(q)] }))
      const fused = await time((q) => m.engine.recall(q, { limit: 10 }))
      const bm25 = await time((q) => m.engine.recall(q, { limit: 10, channels: ['bm25'] }))
      const f50 = ctx.quantile(floor, 0.5)
      const f95 = ctx.quantile(floor, 0.95)
      rows.push(ctx.row('recall in-process p50, fused', size.label, ctx.quantile(fused, 0.5), 'ms', f50))
      rows.push(ctx.row('recall in-process p95, fused', size.label, ctx.quantile(fused, 0.95), 'ms', f95))
      rows.push(ctx.row('recall in-process p95, bm25 channel only', size.label, ctx.quantile(bm25, 0.95), 'ms', f95))
      rows.push(
        ctx.row(
          'recall in-process p95, fused, one project',
          size.label,
          ctx.quantile(inProject, 0.95),
          'ms',
          ctx.quantile(projectFloor, 0.95),
        ),
      )
      p95s.push({ size, observations: store.observations, p95: ctx.quantile(fused, 0.95) })
    } finally {
      db.close()
      await m.close()
    }
  }
  if (p95s.length >= 2) {
    const [a, b] = [p95s.at(-2), p95s.at(-1)]
    const exponent = Math.log(b.p95 / a.p95) / Math.log(b.observations / a.observations)
    rows.push(ctx.row(`recall p95 growth exponent ${a.size.label}→${b.size.label} (1 = linear)`, b.size.label, exponent, 'exp', 1))
  }
  return rows
}
