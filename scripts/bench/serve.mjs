// `mnemo serve` at the largest store asked for (a copy, since a server may write): resident memory idle and after
// 1000 REST recalls (POST /v1/recall, one client, the store's queries in turn, each in the project it is about), the peak, and REST recall latency.
// Floors: a bare node http server answering a small JSON body, driven the same way (RSS idle / after / peak);
// for latency, one round trip to that server plus mnemo's FTS5 query alone (recall.mjs) for the same query.
import { spawn } from 'node:child_process'
import { copyFileSync, readFileSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { PROJECT_NAMES } from './generate.mjs'
import { ftsFloor } from './recall.mjs'

const REQUESTS = 1000
// One client: the p95 is a request's latency, not a queue's (one server process answers one recall at a time).
const CLIENTS = 1
const BARE_SERVER = `const http = require('node:http')
const s = http.createServer((req, res) => { let b = ''; req.on('data', (c) => (b += c)); req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ query: JSON.parse(b).query, hits: [] })) }) })
s.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: 'http://127.0.0.1:' + s.address().port })))`

/** `{ rss, peak }` of a process, MiB (VmRSS, VmHWM of /proc/<pid>/status). */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN)
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 }
}

function start(args, env) {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (c) => (stderr += c))
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (c) => {
      out += c
      try {
        resolve({ child, url: JSON.parse(out).url })
      } catch {
        // not the whole document yet
      }
    })
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${stderr}`)))
  })
}

async function drive(url, headers, queries) {
  const latencies = []
  let next = 0
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (;;) {
        const i = next++
        if (i >= REQUESTS) return
        const t = performance.now()
        const res = await fetch(`${url}/v1/recall`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            query: queries[i % queries.length],
            project: PROJECT_NAMES[(i % queries.length) % PROJECT_NAMES.length],
            limit: 10,
          }),
        })
        const text = await res.text()
        if (res.status !== 200) throw new Error(`POST /v1/recall answered ${res.status}: ${text}`)
        latencies.push(performance.now() - t)
      }
    }),
  )
  return latencies
}

const settle = () => new Promise((r) => setTimeout(r, 1000))

export async function figures(ctx) {
  const size = ctx.sizes.at(-1)
  const store = await ctx.store(size)
  const home = ctx.tmp('serve-home')
  copyFileSync(store.db, path.join(home, 'mnemo.db'))

  const bare = await start(['-e', BARE_SERVER], {})
  await settle()
  const bareIdle = memory(bare.child.pid)
  const bareMs = await drive(bare.url, { 'content-type': 'application/json' }, store.queries)
  const bareAfter = memory(bare.child.pid)
  bare.child.kill()

  const { toMatchExpression } = await ctx.dist('retrieval/fts-query.js')
  const { searchForm } = await ctx.dist('retrieval/search-text.js')
  const db = new Database(path.join(home, 'mnemo.db'), { readonly: true })
  const raw = ftsFloor(db)
  const projectIds = new Map(
    db
      .prepare('SELECT name, id FROM projects')
      .all()
      .map((p) => [p.name, p.id]),
  )
  const floorOf = (q, i) => raw(toMatchExpression(searchForm(q)), projectIds.get(PROJECT_NAMES[i % PROJECT_NAMES.length]))
  store.queries.forEach(floorOf)
  const ftsMs = store.queries.map((q, i) => {
    const t = performance.now()
    floorOf(q, i)
    return performance.now() - t
  })
  db.close()

  const server = await start([ctx.cli, 'serve', '--port', '0', '--json'], { MNEMO_HOME: home })
  try {
    await settle()
    const idle = memory(server.child.pid)
    const token = readFileSync(path.join(home, 'server-token'), 'utf8').trim()
    const ms = await drive(server.url, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, store.queries)
    const after = memory(server.child.pid)
    return [
      ctx.row('serve RSS idle', size.label, idle.rss, 'MiB', bareIdle.rss),
      ctx.row(`serve RSS after ${REQUESTS} REST recalls`, size.label, after.rss, 'MiB', bareAfter.rss),
      ctx.row('serve RSS peak', size.label, after.peak, 'MiB', bareAfter.peak),
      ctx.row(
        `REST recall p95 (${CLIENTS} clients)`,
        size.label,
        ctx.quantile(ms, 0.95),
        'ms',
        ctx.quantile(bareMs, 0.95) + ctx.quantile(ftsMs, 0.95),
      ),
    ]
  } finally {
    server.child.kill()
  }
}
