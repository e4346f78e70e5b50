#!/usr/bin/env node
// Compares the keyword search (Store.searchText) of two builds on one store: per scope, how many queries give the same
// hits (ids, roles, scores), how many the same documents in the same order (top 10, all), the largest score difference,
// and the mean time of each build, the two alternating query by query in one process.
//
//   node scripts/bench/compare-search.mjs <dist-before> <dist-after> <mnemo.db> <bench-store.json> [queries per scope]
//
// <dist-*>: a build's dist/ folder (e.g. of a worktree at the older commit); <mnemo.db>: a store, opened read-only
// (the bench's cached 100k store: .bench-cache/store-…-2000/mnemo.db); <bench-store.json>: its queries (same folder).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const [before, after, db, queriesFile, perScope = '60'] = process.argv.slice(2)
if (!queriesFile) {
  console.error('usage: compare-search.mjs <dist-before> <dist-after> <mnemo.db> <bench-store.json> [queries per scope]')
  process.exit(2)
}
const load = (dist, rel) => import(pathToFileURL(path.resolve(dist, rel)).href)
const { toSearchQuery } = await load(after, 'retrieval/fts-query.js')
const queries = JSON.parse(readFileSync(queriesFile, 'utf8'))
  .queries.map((t) => toSearchQuery(t).match)
  .filter(Boolean)
  .slice(0, Number(perScope))
const a = (await load(before, 'storage/sqlite/sqlite-store.js')).openSqliteStore({ path: db, readonly: true })
const b = (await load(after, 'storage/sqlite/sqlite-store.js')).openSqliteStore({ path: db, readonly: true })
const projects = (await a.listProjects()).map((p) => p.id)
const sessions = (await a.listSessions({ projectIds: [projects[0]], limit: 5 })).map((s) => s.id)
const now = Date.now()
const scopes = {
  'whole store': {},
  'whole store, no user': { user: null },
  "one user's view": { user: 'alice' },
  'one project': { projectIds: [projects[0]] },
  'two projects': { projectIds: projects.slice(0, 2) },
  'one session': { projectIds: [projects[0]], sessionId: sessions[0] },
  'one project, as of 200 days ago': { projectIds: [projects[1]], asOf: now - 200 * 86_400_000 },
  'one project, archived included': { includeArchived: true, projectIds: [projects[2]] },
  'one agent, no user': { agent: 'codex', user: null },
  'kinds, whole store': { kinds: ['decision', 'error', 'tool'] },
}
console.log('| scope | before ms | after ms | identical | same order, top 10 | same order, all | max score difference |')
console.log('| --- | --- | --- | --- | --- | --- | --- |')
const keys = (hits, n) =>
  hits
    .slice(0, n)
    .map((h) => h.docKey)
    .join(',')
for (const [name, scope] of Object.entries(scopes)) {
  let same = 0
  let same10 = 0
  let sameAll = 0
  let maxDiff = 0
  let ta = 0
  let tb = 0
  for (const match of queries) {
    const options = { match, limit: 200, weights: [1, 0.5, 0.5], ...scope }
    let t0 = performance.now()
    const ra = await a.searchText(options)
    ta += performance.now() - t0
    t0 = performance.now()
    const rb = await b.searchText(options)
    tb += performance.now() - t0
    if (JSON.stringify(ra) === JSON.stringify(rb)) same++
    if (keys(ra, 10) === keys(rb, 10)) same10++
    if (keys(ra) === keys(rb)) sameAll++
    for (let i = 0; i < Math.min(ra.length, rb.length); i++) maxDiff = Math.max(maxDiff, Math.abs(ra[i].score - rb[i].score))
  }
  const n = queries.length
  console.log(
    `| ${name} | ${(ta / n).toFixed(1)} | ${(tb / n).toFixed(1)} | ${same}/${n} | ${same10}/${n} | ${sameAll}/${n} | ${maxDiff.toExponential(1)} |`,
  )
}
await a.close()
await b.close()
