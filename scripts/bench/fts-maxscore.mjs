#!/usr/bin/env node
// MaxScore over FTS5 (Turtle & Flood 1995): the keyword floor (MATCH + bm25 with recall's column weights, best 200,
// ties by key) found from the documents holding the query's rarest phrases, every other phrase bounded by its largest
// possible share of a score, idf × (k1 + 1) (FTS5's bm25, fts5_aux.c: k1 = 1.2), instead of scoring every match.
// Exact by construction, and checked against the plain query on every query; docs/RECALL-LATENCY.md has the figures.
//
//   npm run build && node scripts/bench/fts-maxscore.mjs <mnemo.db> <bench-store.json> [rare=5]
//
// Per query: the phrases by their document counts, rarest first; R = the fewest of them whose counts sum to at least
// rare × 200, C = the rest. Round 1 scores the documents holding R: `R` alone (their score when they hold no C) and
// `(R) AND (C)` (their whole score, every phrase once), the larger kept. A document holding only C scores at most
// UB(C) = Σ idf × 2.2, so when the 200th of round 1 is above it the best 200 are found. Otherwise, with 200 found,
// round 2 moves into R every phrase of C but the most common ones whose bound stays below that 200th score (a lower
// bound on the next); with fewer found, the rest come from `(C) NOT (R)`. No split (all rare or all common): the plain
// query. <mnemo.db>: a bench store (.bench-cache/store-…-2000/mnemo.db, opened read-only); <bench-store.json>: its queries.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'

const [dbFile, queriesFile, rareArg = '5'] = process.argv.slice(2)
if (!queriesFile) {
  console.error('usage: fts-maxscore.mjs <mnemo.db> <bench-store.json> [rare]')
  process.exit(2)
}
const rare = Number(rareArg)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const dist = (rel) => import(pathToFileURL(path.join(root, 'dist', rel)).href)
const { toMatchExpression } = await dist('retrieval/fts-query.js')
const { searchForm } = await dist('retrieval/search-text.js')
const { matchPhrases } = await dist('storage/sqlite/sqlite-common-terms.js')
const { queries } = JSON.parse(readFileSync(queriesFile, 'utf8'))
const db = new Database(dbFile, { readonly: true })
const N = db.prepare('SELECT COUNT(*) FROM search_fts').pluck().get()
const count = db.prepare('SELECT COUNT(*) FROM search_fts WHERE search_fts MATCH ?').pluck()
const BM25 = '-bm25(search_fts, 1, 0.5, 0.5)'
const plain = db.prepare(`SELECT rowid AS k, ${BM25} AS s FROM search_fts WHERE search_fts MATCH ? ORDER BY s DESC, rowid LIMIT 200`)
const both = db.prepare(
  `SELECT k, max(s) AS s FROM (SELECT rowid AS k, ${BM25} AS s FROM search_fts WHERE search_fts MATCH ?
     UNION ALL SELECT rowid, ${BM25} FROM search_fts WHERE search_fts MATCH ?) GROUP BY k ORDER BY s DESC, k LIMIT 200`,
)
const idf = (n) => Math.max(1e-6, Math.log((N - n + 0.5) / (n + 0.5)))
const or = (ps) => ps.join(' OR ')
const bound = (ps, df) => 2.2 * ps.reduce((sum, p) => sum + idf(df.get(p)), 0)
const byScore = (a, b) => b.s - a.s || a.k - b.k

function maxScore(phrases, df) {
  const sorted = [...phrases].sort((a, b) => df.get(a) - df.get(b))
  let k = 0
  for (let sum = 0; k < sorted.length && sum < rare * 200; k++) sum += df.get(sorted[k])
  const R = sorted.slice(0, k)
  const C = sorted.slice(k)
  if (C.length === 0) return { path: 'plain', rows: plain.all(or(phrases)) }
  const found = both.all(or(R), `(${or(R)}) AND (${or(C)})`)
  if (found.length === 200 && found[199].s > bound(C, df)) return { path: 'round 1', rows: found }
  if (found.length < 200) {
    const tail = plain.all(`(${or(C)}) NOT (${or(R)})`)
    return { path: 'tail', rows: [...found, ...tail].sort(byScore).slice(0, 200) }
  }
  const C2 = []
  for (const p of [...C].reverse()) {
    if (bound([...C2, p], df) >= found[199].s) break
    C2.push(p)
  }
  if (C2.length === 0) return { path: 'plain after round 1', rows: plain.all(or(phrases)) }
  const R2 = phrases.filter((p) => !C2.includes(p))
  return { path: 'round 2', rows: both.all(or(R2), `(${or(R2)}) AND (${or(C2)})`) }
}

const cpu = () => process.cpuUsage().user + process.cpuUsage().system
const paths = new Map()
const tPlain = []
const tSplit = []
let same = 0
let asked = 0
for (let pass = 0; pass < 2; pass++)
  for (const q of queries) {
    const phrases = (matchPhrases(toMatchExpression(searchForm(q)) ?? '') ?? []).filter((p) => count.get(p) > 0)
    if (phrases.length === 0) continue
    const df = new Map(phrases.map((p) => [p, count.get(p)])) // counted once, outside the timings (as if cached)
    let t = cpu()
    const want = plain.all(or(phrases))
    const a = (cpu() - t) / 1000
    t = cpu()
    const got = maxScore(phrases, df)
    const b = (cpu() - t) / 1000
    if (pass === 0) continue // warm-up
    asked++
    tPlain.push(a)
    tSplit.push(b)
    paths.set(got.path, (paths.get(got.path) ?? 0) + 1)
    if (got.rows.length === want.length && got.rows.every((r, i) => r.k === want[i].k && Math.abs(r.s - want[i].s) < 1e-9)) same++
  }
const q = (v, p) => [...v].sort((x, y) => x - y)[Math.round((v.length - 1) * p)].toFixed(2)
const mean = (v) => (v.reduce((x, y) => x + y, 0) / v.length).toFixed(2)
console.log(`${N} rows, ${asked} queries, rare = ${rare}: the same rows and scores for ${same}/${asked}`)
console.log(`paths: ${[...paths].map(([p, n]) => `${p} ${n}`).join(', ')}`)
console.log(`CPU ms, plain query: mean ${mean(tPlain)}, p50 ${q(tPlain, 0.5)}, p95 ${q(tPlain, 0.95)}`)
console.log(`CPU ms, MaxScore:    mean ${mean(tSplit)}, p50 ${q(tSplit, 0.5)}, p95 ${q(tSplit, 0.95)}`)
