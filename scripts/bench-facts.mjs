#!/usr/bin/env node
// Fact query benchmark (a script, not a test): every UaC analytical dev query, run against a 500-record collection of
// its record type, timed per query beside three floors measured in the same run on the same table: a raw SQL count of
// the collection's rows, a raw count with one json_extract filter, and the very SQL statements the query ran (from
// explain), executed raw on a second connection: what is left above it is the engine's own work. Types with fewer than 500 records in the dev
// split (meals, sleep, medical, purchases: 200 at most) are cycled up to 500 (ids renumbered): a latency load, not a
// scored run. Needs ../shared/datasets/uac-analytical (or MNEMO_SHARED_DIR).
//
//   node scripts/bench-facts.mjs [--runs 200] [--records 500]
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const { openMnemo } = await import(path.join(ROOT, 'dist/runtime/open-mnemo.js'))
const { findUacDir, readUac } = await import(path.join(ROOT, 'dist/bench/uac-analytical.js'))
const { UAC_QUERIES } = await import(path.join(ROOT, 'dist/bench/uac-queries.js'))
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const RUNS = opt('runs', 200)
const RECORDS = opt('records', 500)
const dir = findUacDir(ROOT)
if (!dir) {
  console.error('bench-facts: ../shared/datasets/uac-analytical is absent (set MNEMO_SHARED_DIR)')
  process.exit(2)
}
const { users, questions } = readUac(dir)
const home = mkdtempSync(path.join(os.tmpdir(), 'mnemo-facts-bench-'))
const m = openMnemo({ home, env: {}, timeZone: 'UTC', cwd: '/work/ledger' })
const e = m.engine
const byType = new Map()
for (const u of users) {
  const type = u.user_id.replace(/_n\d+$/, '')
  if ((byType.get(type)?.records.length ?? 0) < u.records.length) byType.set(type, u)
}
for (const [type, u] of byType) {
  const records = Array.from({ length: RECORDS }, (_, i) => ({ ...u.records[i % u.records.length], id: i + 1 }))
  e.facts.add(`${type}_bench`, records, { provenance: { source: 'import' } })
}
const raw = new Database(m.config.dbPath, { readonly: true })
// The statements call these SQL functions: the same ones, on the raw connection (the time limit's check as a no-op).
raw.function('fact_deadline', () => 1)
const { registerActivityFunctions } = await import(path.join(ROOT, 'dist/storage/sqlite/sqlite-activity.js'))
registerActivityFunctions({ db: raw })
const floorCount = raw.prepare('SELECT count(*) FROM fact_records WHERE project_root = ? AND collection = ? AND user_id IS NULL')
const floorFilter = raw.prepare(
  "SELECT count(*) FROM fact_records WHERE project_root = ? AND collection = ? AND user_id IS NULL AND json_extract(data, '$.date') >= ?",
)
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const time = async (fn) => {
  for (let i = 0; i < 10; i++) await fn()
  const ms = []
  for (let i = 0; i < RUNS; i++) {
    const t = process.hrtime.bigint()
    await fn()
    ms.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  return { p50: pct(ms, 50), p95: pct(ms, 95) }
}
const rows = []
for (const q of questions) {
  const type = q.user_id.replace(/_n\d+$/, '')
  const query = UAC_QUERIES[q.case_id].replace(/^from \S+/, `from ${type}_bench`)
  const t = await time(() => e.facts.query(query))
  const stmts = (await e.facts.query(query, { explain: true })).sql.map((x) => ({ st: raw.prepare(x.sql), params: x.params[0] }))
  const same = await time(() => {
    for (const x of stmts) x.st.all(x.params)
  })
  const fc = await time(() => floorCount.get('/work/ledger', `${type}_bench`))
  const ff = await time(() => floorFilter.get('/work/ledger', `${type}_bench`, '2024-01-01'))
  rows.push({ case: q.case_id, query, ...t, floorCount: fc.p95, floorFilter: ff.p95, sameP50: same.p50, sameP95: same.p95 })
}
for (const r of rows)
  console.log(
    `${r.p95.toFixed(3).padStart(7)} ms p95 (p50 ${r.p50.toFixed(3)})  same SQL raw p95 ${r.sameP95.toFixed(3)} (p50 ${r.sameP50.toFixed(3)})  floor count ${r.floorCount.toFixed(3)} / filter ${r.floorFilter.toFixed(3)}  ${r.query}`,
  )
const p95s = rows.map((r) => r.p95)
const worst = rows.reduce((a, b) => (a.p95 > b.p95 ? a : b))
const floorC = pct(
  rows.map((r) => r.floorCount),
  50,
)
const floorF = pct(
  rows.map((r) => r.floorFilter),
  50,
)
console.log(
  `\n${rows.length} queries at ${RECORDS} records, ${RUNS} runs each; load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} on ${os.cpus().length} cores`,
)
console.log(`per-query p95: median ${pct(p95s, 50).toFixed(3)} ms, max ${worst.p95.toFixed(3)} ms (${worst.case}); target ≤ 5 ms`)
console.log(
  `per-query p50: median ${pct(
    rows.map((r) => r.p50),
    50,
  ).toFixed(3)} ms, max ${Math.max(...rows.map((r) => r.p50)).toFixed(3)} ms`,
)
console.log(
  `floor (raw SQL on fact_records, median of per-query p95s): count ${floorC.toFixed(3)} ms, count with one json_extract filter ${floorF.toFixed(3)} ms`,
)
const sameMax = Math.max(...rows.map((r) => r.sameP95))
console.log(
  `floor (the same SQL statements run raw, no engine): p50 median ${pct(
    rows.map((r) => r.sameP50),
    50,
  ).toFixed(3)} ms, p95 median ${pct(
    rows.map((r) => r.sameP95),
    50,
  ).toFixed(3)} ms, p95 max ${sameMax.toFixed(3)} ms`,
)
console.log(
  `ratio to the same SQL raw: max p95 ${(worst.p95 / sameMax).toFixed(2)}×, median p50 ${(
    pct(
      rows.map((r) => r.p50),
      50,
    ) /
      pct(
        rows.map((r) => r.sameP50),
        50,
      )
  ).toFixed(2)}×`,
)
console.log(
  `ratio max p95 / filtered floor: ${(worst.p95 / floorF).toFixed(1)}×; median p95 / filtered floor: ${(pct(p95s, 50) / floorF).toFixed(1)}×`,
)
raw.close()
await m.close()
rmSync(home, { recursive: true, force: true })
