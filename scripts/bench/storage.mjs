// Database bytes per observation of each cached store (the database file and its WAL), beside the floor of the
// input itself: the transcript JSONL bytes per observation. At the largest size, where the bytes go (SQLite's
// dbstat), grouped by what holds them.
import { existsSync, statSync } from 'node:fs'
import Database from 'better-sqlite3'

const GROUPS = [
  ['event log', /^(events|sqlite_autoindex_events_|events_)/],
  ['observations and their indexes', /^(observations|sqlite_autoindex_observations_|observation_)/],
  ['full-text index', /^search_fts/],
  ['entity graph', /^(entities|entity_|sqlite_autoindex_entities_)/],
]

export async function figures(ctx) {
  const rows = []
  let last
  for (const size of ctx.sizes) {
    const store = await ctx.store(size)
    const bytes = statSync(store.db).size + (existsSync(`${store.db}-wal`) ? statSync(`${store.db}-wal`).size : 0)
    rows.push(ctx.row('database bytes per observation', size.label, bytes / store.observations, 'B', store.inputBytes / store.observations))
    last = { size, store }
  }
  if (last) {
    const db = new Database(last.store.db, { readonly: true })
    try {
      const sums = new Map()
      for (const { name, bytes } of db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name').all()) {
        const group = GROUPS.find(([, re]) => re.test(name))?.[0] ?? 'other tables'
        sums.set(group, (sums.get(group) ?? 0) + bytes)
      }
      for (const [group, bytes] of sums) rows.push(ctx.row(`  of which ${group}`, last.size.label, bytes / last.store.observations, 'B'))
    } finally {
      db.close()
    }
  }
  return rows
}
