// Recall in-process on PostgreSQL beside SQLite: the same generated store (scripts/bench/stores.mjs) copied event by
// event into a fresh PostgreSQL database, then the recall benchmark's queries (limit 10, no user) through the engine on
// both dialects, warm, one after the other: fused over every project, fused in the project the query is about, and the
// keyword channel alone. Each PostgreSQL figure's floor is SQLite's same figure in the same run (ratio = PostgreSQL /
// SQLite).
//
// Needs a server: `--database postgres://…` (a role allowed to CREATE DATABASE; a database is made and dropped per
// size) or MNEMO_BENCH_DATABASE; without one the group prints nothing and says why.
import { PROJECT_NAMES } from './generate.mjs'

const BATCH = 200 // events per append on the PostgreSQL store while copying

function databaseUrl(args) {
  const i = args.indexOf('--database')
  if (i >= 0 && args[i + 1]) return args[i + 1]
  return process.env.MNEMO_BENCH_DATABASE || undefined
}

export async function figures(ctx) {
  const url = databaseUrl(ctx.args)
  if (!url) {
    ctx.log('recall-pg: skipped (no --database postgres://… and no MNEMO_BENCH_DATABASE)')
    return []
  }
  const { openMnemo } = await ctx.dist('runtime/open-mnemo.js')
  const { openScratchPostgres } = await ctx.dist('runtime/scratch-database.js')
  const { openSqliteStore } = await ctx.dist('storage/sqlite/sqlite-store.js')
  const rows = []
  for (const size of ctx.sizes) {
    const built = await ctx.store(size)
    const lite = openMnemo({ home: built.home, env: {}, timeZone: 'UTC', cwd: '/' })
    const scratch = await openScratchPostgres(url, Date.now)
    const pg = openMnemo({ home: ctx.tmp(`recall-pg-${size.label}`), store: scratch.store, env: {}, timeZone: 'UTC', cwd: '/' })
    try {
      // Copy: the SQLite store's log, in order, appended through the PostgreSQL engine (derived there as on capture).
      const source = openSqliteStore({ path: built.db, readonly: true })
      const t0 = performance.now()
      let copied = 0
      for (let after = 0; ; ) {
        const events = await source.readEvents(after, BATCH)
        if (events.length === 0) break
        after = events.at(-1).seq
        await pg.engine.append(events.map(({ seq: _seq, receivedAt: _at, ...event }) => event))
        copied += events.length
      }
      await source.close()
      ctx.log(`recall-pg: copied ${copied} events of the ${size.label} store in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

      const projectOf = async (m) => {
        const ids = new Map((await m.engine.listProjects()).map((p) => [p.name, p.id]))
        return new Map(built.queries.map((q, i) => [q, ids.get(PROJECT_NAMES[i % PROJECT_NAMES.length])]))
      }
      const measure = async (m) => {
        const inProject = await projectOf(m)
        const time = async (fn) => {
          const ms = []
          for (const q of built.queries) await fn(q) // warm-up
          for (const q of built.queries) {
            const t = performance.now()
            await fn(q)
            ms.push(performance.now() - t)
          }
          return ms
        }
        return {
          fused: await time((q) => m.engine.recall(q, { limit: 10 })),
          project: await time((q) => m.engine.recall(q, { limit: 10, projectIds: [inProject.get(q)] })),
          bm25: await time((q) => m.engine.recall(q, { limit: 10, channels: ['bm25'] })),
        }
      }
      const s = await measure(lite)
      const p = await measure(pg)
      for (const [key, label] of [
        ['fused', 'fused'],
        ['project', 'fused, one project'],
        ['bm25', 'bm25 channel only'],
      ])
        for (const q of [0.5, 0.95])
          rows.push(
            ctx.row(
              `recall p${q * 100}, ${label}, postgres (floor: sqlite)`,
              size.label,
              ctx.quantile(p[key], q),
              'ms',
              ctx.quantile(s[key], q),
            ),
          )
    } finally {
      await lite.close()
      await pg.close()
      await scratch.drop()
    }
  }
  return rows
}
