#!/usr/bin/env node
// Viewer API benchmark (a script, not a test): fills a store with ~100k observations
// (two projects, many sessions, through the engine's own capture path), consolidates,
// starts `mnemo serve` in-process and times every call the viewer makes — first and
// deep pages, replay pages, memory browse and history, graph, recall with explain,
// context, status, the Collections screen's schema, record pages (sorted, deep, superseded, an activity collection)
// and a record's history — and the delay from capture to arrival on the live stream.
//
//   npm run build && node scripts/bench-viewer.mjs [--observations 100000] [--runs 30] [--keep]
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const { openMnemo } = await import(path.join(ROOT, 'dist/runtime/open-mnemo.js'))
const { startServer } = await import(path.join(ROOT, 'dist/adapters/http/server.js'))
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const TARGET = opt('observations', 100_000)
const RUNS = opt('runs', 30)
const home = mkdtempSync(path.join(os.tmpdir(), 'mnemo-bench-viewer-'))
const files = [
  'src/orders.ts',
  'src/payments.ts',
  'src/auth.ts',
  'src/cache.ts',
  'test/orders.test.ts',
  'README.md',
  'src/api/routes.ts',
  'src/db/schema.sql',
]
const words = ['refund', 'invoice', 'retry', 'timeout', 'webhook', 'cursor', 'migration', 'index', 'token', 'rate limit', 'queue', 'cache']

// Fill: 20 events per session (prompt, 16 tool calls, an error now and then, stop, end).
let now = Date.parse('2026-03-01T09:00:00Z')
const m = openMnemo({ home, env: {}, clock: { now: () => now }, timeZone: 'UTC', cwd: '/work/shop' })
const fillStart = performance.now()
let sessions = 0
while ((await m.engine.stats()).observations < TARGET) {
  const cwd = sessions % 5 === 0 ? '/work/billing' : '/work/shop'
  const sid = `s${sessions}`
  const batch = []
  const hook = (event, fields) => {
    batch.push([event, JSON.stringify({ session_id: sid, cwd, hook_event_name: event, ...fields })])
    now += 15_000
  }
  const w = words[sessions % words.length]
  hook('SessionStart', { source: 'startup' })
  hook('UserPromptSubmit', { prompt: `session ${sessions}: fix the ${w} handling in ${files[sessions % files.length]}` })
  for (let k = 0; k < 16; k++) {
    const f = files[(sessions * 3 + k) % files.length]
    hook('PostToolUse', {
      tool_name: k % 3 ? 'Read' : 'Edit',
      tool_use_id: `${sid}-${k}`,
      tool_input: { file_path: `${cwd}/${f}` },
      tool_response: { content: `${w} ${k} in ${f}` },
    })
  }
  if (sessions % 4 === 0)
    hook('PostToolUseFailure', { tool_name: 'Bash', tool_use_id: `${sid}-t`, tool_input: { command: 'npm test' }, error: `FAIL ${w} test` })
  hook('Stop', { last_assistant_message: `fixed the ${w} handling` })
  hook('SessionEnd', { reason: 'exit' })
  for (const [event, payload] of batch) await m.engine.captureHook(event, payload)
  if (sessions % 200 === 1)
    await m.engine.remember(`the ${w} path is owned by team ${sessions % 7}`, {
      kind: 'fact',
      project: { root: cwd, name: path.basename(cwd) },
    })
  sessions++
  now += 3_600_000
}
// Typed facts for the Collections screen: 10,000 flights, every 10th updated once (a superseded version each).
const flights = Array.from({ length: 10_000 }, (_, i) => ({
  code: `F${i}`,
  day: new Date(Date.UTC(2024, 0, 1) + (i % 366) * 86_400_000).toISOString().slice(0, 10),
  to: words[i % words.length],
  fare: 100 + ((i * 37) % 1900),
}))
const shop = { root: '/work/shop', name: 'shop' }
await m.engine.facts.declare(
  {
    name: 'flights',
    fields: [
      { name: 'code', type: 'string' },
      { name: 'day', type: 'date' },
      { name: 'to', type: 'string' },
      { name: 'fare', type: 'money' },
    ],
    identity: ['code'],
    timeField: 'day',
  },
  { project: shop },
)
await m.engine.facts.add('flights', flights, { project: shop })
now += 60_000
await m.engine.facts.add(
  'flights',
  flights.filter((_, i) => i % 10 === 0).map((f) => ({ ...f, fare: f.fare + 1 })),
  { project: shop },
)
const fillSeconds = (performance.now() - fillStart) / 1000
const consolidateStart = performance.now()
await m.engine.consolidate({ idleMs: 0 })
const consolidateSeconds = (performance.now() - consolidateStart) / 1000
const stats = await m.engine.stats()
await m.close()
console.log(
  `store: ${stats.observations} observations, ${stats.sessions} sessions, ${stats.memories} memories, ${(stats.bytes / 1048576).toFixed(1)} MiB`,
)
console.log(
  `fill ${fillSeconds.toFixed(1)} s (${Math.round(stats.events / fillSeconds)} events/s), consolidate ${consolidateSeconds.toFixed(1)} s`,
)

const server = await startServer({ home, host: '127.0.0.1', port: 0, env: {}, consolidateEveryMinutes: 0, streamPollMs: 500 })
const auth = { authorization: `Bearer ${server.token}` }
const get = async (route) => {
  const res = await fetch(`${server.url}${route}`, { headers: auth })
  if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`)
  return res.json()
}
const post = async (route, body) => {
  const res = await fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`)
  return res.json()
}
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]
async function time(label, fn) {
  const ms = []
  let size = 0
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now()
    size = JSON.stringify(await fn(i)).length
    ms.push(performance.now() - t)
  }
  console.log(
    `${label.padEnd(44)} p50 ${pct(ms, 50).toFixed(2).padStart(7)} ms  p95 ${pct(ms, 95).toFixed(2).padStart(7)} ms  ${(size / 1024).toFixed(1).padStart(6)} KiB`,
  )
}

const P = 'shop'
const first = await get(`/v1/observations?project=${P}&limit=100`)
// The deepest page of at most 200 pages back.
let deep = first.nextBefore
for (let i = 0; i < 200; i++) {
  const older = (await get(`/v1/observations?project=${P}&limit=100&before=${deep}`)).nextBefore
  if (older === null) break
  deep = older
}
const sessionList = (await get(`/v1/sessions?project=${P}&limit=50`)).sessions
const memory = (await get(`/v1/memories?project=${P}&kind=fact`)).memories[0]
const firstFlight = (await get(`/v1/facts/collections/flights/records?project=${P}&state=superseded&limit=1`)).records[0].id
await time('live: first page (100 newest)', () => get(`/v1/observations?project=${P}&limit=100`))
await time('live: page 200 deep (before=)', () => get(`/v1/observations?project=${P}&limit=100&before=${deep}`))
await time('live: kind=error filter', () => get(`/v1/observations?project=${P}&kind=error&limit=100`))
await time('live: agent=codex filter (no match)', () => get(`/v1/observations?project=${P}&agent=codex&limit=100`))
await time('sessions: first page (50)', () => get(`/v1/sessions?project=${P}&limit=50`))
await time('sessions: offset 2000', () => get(`/v1/sessions?project=${P}&limit=50&offset=2000`))
await time('replay: timeline page (200 steps)', (i) => get(`/v1/sessions/${sessionList[i % sessionList.length].id}/observations?limit=200`))
await time('memories: current, first page', () => get(`/v1/memories?project=${P}&limit=50`))
await time('memories: episodic, offset 2000', () => get(`/v1/memories?project=${P}&tier=episodic&limit=50&offset=2000`))
await time('memory history', () => get(`/v1/memories/${memory.id}/history`))
await time('graph: top entities', () => get(`/v1/graph?project=${P}&limit=30`))
await time('graph: around src/orders.ts', () => get(`/v1/graph?project=${P}&entity=src/orders.ts&limit=30`))
await time('search: recall with explain', (i) =>
  post('/v1/recall', { query: `${words[i % words.length]} handling`, project: P, limit: 20, explain: true }),
)
await time('context preview', () => get(`/v1/context?project=${P}`))
await time('health: status', () => get('/v1/status'))
const F = `/v1/facts/collections/flights/records?project=${P}`
await time('collections: schema (with tool_calls etc.)', () => get(`/v1/facts/schema?project=${P}`))
await time('collections: flights, first page (25)', () => get(`${F}&limit=25`))
await time('collections: flights by fare desc, offset 9000', () => get(`${F}&sort=fare&order=desc&offset=9000&limit=25`))
await time('collections: flights, superseded versions', () => get(`${F}&state=superseded&sort=to&limit=25`))
await time('collections: flight history', () => get(`/v1/facts/records/${firstFlight}?project=${P}`))
await time('collections: tool_calls (activity) by tool', () =>
  get(`/v1/facts/collections/tool_calls/records?project=${P}&sort=tool&limit=25`),
)

// Live: from a capture (another writer, as a hook process would be) to its arrival on the stream.
const writer = openMnemo({ home, env: {}, timeZone: 'UTC', cwd: '/work/shop' })
const res = await fetch(`${server.url}/v1/stream?project=${P}`, { headers: auth })
const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
let buffer = ''
const next = async (event) => {
  for (;;) {
    const cut = buffer.indexOf('\n\n')
    if (cut >= 0) {
      const block = buffer.slice(0, cut)
      buffer = buffer.slice(cut + 2)
      if (block.includes(`event: ${event}`)) return block
      continue
    }
    const { value, done } = await reader.read()
    if (done) throw new Error('stream ended')
    buffer += value
  }
}
await next('ready')
const delays = []
for (let i = 0; i < 10; i++) {
  const t = performance.now()
  await writer.engine.captureHook('UserPromptSubmit', JSON.stringify({ session_id: `live-${i}`, cwd: '/work/shop', prompt: `live ${i}` }))
  await next('observation')
  delays.push(performance.now() - t)
}
await reader.cancel()
await writer.close()
console.log(
  `${'live: capture → stream arrival (poll 500 ms)'.padEnd(44)} p50 ${pct(delays, 50).toFixed(1).padStart(7)} ms  p95 ${pct(delays, 95).toFixed(1).padStart(7)} ms`,
)
await server.close()
if (args.includes('--keep')) console.log(`kept the store in ${home}`)
else rmSync(home, { recursive: true, force: true })
