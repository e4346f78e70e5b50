// Fact query latency on both dialects: the 60 hand-written queries of the UaC analytical dev split
// (../shared/datasets/uac-analytical; the group is skipped when it is absent), each answered through the engine
// (`engine.facts.query`: resolve against the collection, then the store's SQL) on an in-memory SQLite store and on a
// PostgreSQL store over the local server, interleaved query by query so load on a shared machine hits both alike.
// Figures: p50 and p95 per query over every query, and p95 over the 500-record collections (docs/FACTS.md: target
// p95 ≤ 5 ms at 500 records). The floor of a PostgreSQL figure is the same figure on SQLite in the same run; the floor
// of SQLite's is one `SELECT 1` round trip to the PostgreSQL server (the least a network store pays per statement).
//
// A group of the one benchmark (`npm run bench`, scripts/bench/run.mjs). Standalone:
//
//   node scripts/bench/facts.mjs [--runs 20] [--database postgres://user@host/postgres]
//
// The server: `--database` or MNEMO_BENCH_DATABASE_URL (a role that may CREATE DATABASE), else the local socket
// /var/run/postgresql as the OS user. A database of its own is created for the run and dropped after it.
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const dist = (rel) => import(pathToFileURL(path.join(ROOT, 'dist', rel)).href)

function quantile(values, p) {
  const s = [...values].sort((a, b) => a - b)
  if (s.length === 0) return Number.NaN
  const i = (s.length - 1) * p
  const lo = Math.floor(i)
  const hi = Math.ceil(i)
  return s[lo] + (s[hi] - s[lo]) * (i - lo)
}

const row = (figure, size, value, unit, floor = null) => ({ figure, size, value, unit, floor, ratio: floor ? value / floor : null })

function adminUrl(args) {
  const i = args.indexOf('--database')
  if (i >= 0) return args[i + 1]
  if (process.env.MNEMO_BENCH_DATABASE_URL) return process.env.MNEMO_BENCH_DATABASE_URL
  return `postgres://${encodeURIComponent(os.userInfo().username)}@localhost/postgres?host=${encodeURIComponent('/var/run/postgresql')}`
}

export async function figures(ctx) {
  const args = ctx?.args ?? process.argv.slice(2)
  const log = ctx?.log ?? ((m) => process.stderr.write(`bench: ${m}\n`))
  const runsAt = args.indexOf('--runs')
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 20
  const { findUacDir, readUac, ingestUac } = await dist('bench/uac-analytical.js')
  const { UAC_QUERIES } = await dist('bench/uac-queries.js')
  const dir = findUacDir(ROOT)
  if (dir === undefined) {
    log('facts: skipped, ../shared/datasets/uac-analytical is absent')
    return []
  }
  const { createManualClock } = await dist('core/clock.js')
  const { MnemoEngine } = await dist('engine/mnemo.js')
  const { openSqliteStore } = await dist('storage/sqlite/sqlite-store.js')
  const { openPostgresStoreWith } = await dist('storage/postgres/pg-store.js')
  const { PG_FACT_PART } = await dist('storage/postgres/pg-facts.js')
  // The fact part alone: the search channels play no part in a fact query (a call to one would fail the run).
  const parts = {
    migrations: PG_FACT_PART.migrations,
    write: { docColumns: [], facts: PG_FACT_PART.writes },
    channels: () =>
      new Proxy(
        {},
        {
          get: (_, name) => () => Promise.reject(new Error(`facts bench: a search channel was called (${String(name)})`)),
        },
      ),
    facts: PG_FACT_PART.facts,
  }
  const { createDatabase, dropDatabase, probe, withDatabase } = await dist('storage/postgres/pg-admin.js')
  const admin = adminUrl(args)
  const reached = await probe(admin)
  if (!reached.ok) {
    log(`facts: skipped, no PostgreSQL server at ${admin.replace(/:[^@/]*@/, ':***@')} (${reached.message})`)
    return []
  }
  const name = `mnemo_bench_facts_${process.pid}`
  await createDatabase(admin, name)
  const clock = createManualClock(Date.parse('2025-06-14T10:00:00Z'))
  const engineOn = (store) => new MnemoEngine({ store, clock, cwd: '/bench/uac', contextBudgetTokens: 2000, timeZone: 'UTC' })
  const sqliteStore = openSqliteStore({ path: ':memory:' }, () => clock.now())
  const pgStore = await openPostgresStoreWith(withDatabase(admin, name), parts, { now: () => clock.now() })
  const { default: pg } = await import('pg')
  const roundTrip = new pg.Pool({ connectionString: withDatabase(admin, name), max: 1 })
  try {
    const { users, questions } = readUac(dir)
    const sqlite = engineOn(sqliteStore)
    const postgres = engineOn(pgStore)
    let t = performance.now()
    await ingestUac(sqlite, users)
    const ingestSqlite = performance.now() - t
    t = performance.now()
    await ingestUac(postgres, users)
    const ingestPg = performance.now() - t
    const records = users.reduce((n, u) => n + u.records.length, 0)
    const times = { sqlite: [], postgres: [], sqlite500: [], postgres500: [], select1: [] }
    for (const q of questions) await Promise.all([sqlite.facts.query(UAC_QUERIES[q.case_id]), postgres.facts.query(UAC_QUERIES[q.case_id])])
    await roundTrip.query('SELECT 1')
    for (let r = 0; r < runs; r++) {
      for (const q of questions) {
        const text = UAC_QUERIES[q.case_id]
        const big = / from \S+_n500 /.test(` ${text} `)
        for (const [key, engine] of [
          ['sqlite', sqlite],
          ['postgres', postgres],
        ]) {
          const start = performance.now()
          await engine.facts.query(text)
          const ms = performance.now() - start
          times[key].push(ms)
          if (big) times[`${key}500`].push(ms)
        }
        const start = performance.now()
        await roundTrip.query('SELECT 1')
        times.select1.push(performance.now() - start)
      }
    }
    const s1 = quantile(times.select1, 0.95)
    const size = `${questions.length}q×${runs}`
    return [
      row('facts ingest UaC dev, SQLite', `${records} rec`, ingestSqlite, 'ms'),
      row('facts ingest UaC dev, PostgreSQL', `${records} rec`, ingestPg, 'ms', ingestSqlite),
      row('facts query p50, SQLite', size, quantile(times.sqlite, 0.5), 'ms'),
      row('facts query p50, PostgreSQL', size, quantile(times.postgres, 0.5), 'ms', quantile(times.sqlite, 0.5)),
      row('facts query p95, SQLite', size, quantile(times.sqlite, 0.95), 'ms', s1),
      row('facts query p95, PostgreSQL', size, quantile(times.postgres, 0.95), 'ms', quantile(times.sqlite, 0.95)),
      row('facts query p95 at 500 records, SQLite', '500 rec', quantile(times.sqlite500, 0.95), 'ms', s1),
      row(
        'facts query p95 at 500 records, PostgreSQL',
        '500 rec',
        quantile(times.postgres500, 0.95),
        'ms',
        quantile(times.sqlite500, 0.95),
      ),
      row('PostgreSQL SELECT 1 round trip p95', '', s1, 'ms'),
    ]
  } finally {
    await roundTrip.end()
    await sqliteStore.close()
    await pgStore.close()
    await dropDatabase(admin, name)
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!existsSync(path.join(ROOT, 'dist/engine/mnemo.js'))) {
    console.error('dist/ is missing: run `npm run build` first')
    process.exit(1)
  }
  const { printTable } = await import('./run.mjs')
  printTable(await figures(undefined), os.cpus().length)
}
