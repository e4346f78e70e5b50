#!/usr/bin/env node
// The keyword floor (mnemo's FTS5 query: MATCH + bm25 with recall's column weights, best 200, ties by key) run whole
// and split into k rowid ranges, each range on its own connection, the range's best 200 merged by score then key:
// whether the split gives the same rows and scores, what it costs in CPU, and what it gives in wall time with the
// ranges on worker threads (the main thread runs the first). bm25's idf and average length are the whole table's
// whatever the rowid range, so the merge is exact; docs/RECALL-LATENCY.md has the figures.
//
//   npm run build && node scripts/bench/fts-split.mjs <mnemo.db> <bench-store.json> [k=2] [passes=2]
//
// <mnemo.db>: a copy of a bench store (.bench-cache/store-…-2000/mnemo.db, opened read-only); <bench-store.json>: its queries.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'

const SQL =
  'SELECT rowid AS k, -bm25(search_fts, 1, 0.5, 0.5) AS s FROM search_fts WHERE search_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY s DESC, rowid LIMIT 200'
const ALL = [-(2 ** 53), 2 ** 53]

if (!isMainThread) {
  const range = new Database(workerData.db, { readonly: true }).prepare(SQL)
  parentPort.on('message', ({ id, match, lo, hi }) => parentPort.postMessage({ id, rows: range.all(match, lo, hi) }))
} else {
  const [db, queriesFile, k = '2', passes = '2'] = process.argv.slice(2)
  if (!queriesFile) {
    console.error('usage: fts-split.mjs <mnemo.db> <bench-store.json> [k] [passes]')
    process.exit(2)
  }
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
  const { toSearchQuery } = await import(pathToFileURL(path.join(root, 'dist/retrieval/fts-query.js')).href)
  const queries = JSON.parse(readFileSync(queriesFile, 'utf8'))
    .queries.map((q) => toSearchQuery(q).match)
    .filter(Boolean)
  const conn = new Database(db, { readonly: true })
  const range = conn.prepare(SQL)
  // k ranges of as many index rows each.
  const keys = conn.prepare('SELECT id FROM search_fts_docsize ORDER BY id').pluck().all()
  const cuts = Array.from({ length: Number(k) - 1 }, (_, i) => keys[Math.floor((keys.length * (i + 1)) / Number(k))])
  const ranges = [ALL[0], ...cuts].map((lo, i) => [lo, i < cuts.length ? cuts[i] - 1 : ALL[1]])
  const merge = (parts) =>
    parts
      .flat()
      .sort((a, b) => b.s - a.s || a.k - b.k)
      .slice(0, 200)
  const workers = ranges.slice(1).map(() => new Worker(fileURLToPath(import.meta.url), { workerData: { db } }))
  const waiting = new Map()
  let next = 0
  for (const w of workers) w.on('message', ({ id, rows }) => waiting.get(id)(rows))
  const ask = (w, match, [lo, hi]) =>
    new Promise((resolve) => {
      const id = next++
      waiting.set(id, resolve)
      w.postMessage({ id, match, lo, hi })
    })
  const whole = (match) => range.all(match, ...ALL)
  const split = async (match) => {
    const others = workers.map((w, i) => ask(w, match, ranges[i + 1]))
    return merge([range.all(match, ...ranges[0]), ...(await Promise.all(others))])
  }
  const cpu = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  const stats = (ms) => {
    const s = [...ms].sort((a, b) => a - b)
    const q = (p) => s[Math.round((s.length - 1) * p)].toFixed(1)
    return `p50 ${q(0.5)} p95 ${q(0.95)} mean ${(s.reduce((a, b) => a + b, 0) / s.length).toFixed(1)}`
  }
  let same = 0
  for (const match of queries) if (JSON.stringify(whole(match)) === JSON.stringify(await split(match))) same++
  // CPU, one thread: the whole query, each range alone (their sum is the split's CPU, their max its best wall time).
  const cpuWhole = []
  const cpuSum = []
  const cpuMax = []
  const wallWhole = []
  const wallSplit = []
  for (let p = 0; p < Number(passes); p++)
    for (const match of queries) {
      let t = cpu()
      whole(match)
      cpuWhole.push(cpu() - t)
      const each = ranges.map((r) => {
        t = cpu()
        range.all(match, ...r)
        return cpu() - t
      })
      cpuSum.push(each.reduce((a, b) => a + b, 0))
      cpuMax.push(Math.max(...each))
      t = performance.now()
      whole(match)
      wallWhole.push(performance.now() - t)
      t = performance.now()
      await split(match)
      wallSplit.push(performance.now() - t)
    }
  console.log(`${queries.length} queries, ${k} ranges: same rows and scores ${same}/${queries.length}`)
  console.log(`CPU ms, whole query:           ${stats(cpuWhole)}`)
  console.log(`CPU ms, the ranges summed:     ${stats(cpuSum)}`)
  console.log(`CPU ms, the slowest range:     ${stats(cpuMax)}`)
  console.log(`wall ms, whole query:          ${stats(wallWhole)}`)
  console.log(`wall ms, split over threads:   ${stats(wallSplit)}`)
  for (const w of workers) await w.terminate()
}
