#!/usr/bin/env node
// Load run of the team server on PostgreSQL (a benchmark script, not a test; issue 19's "Done means"):
//
//   npm run build && npm run bench:replicas -- [--minutes 5] [--clients 16] [--replicas 2] [--kill-at 0.5] [--no-kill]
//     [--think-ms 500] [--keep]
//
// Starts `--replicas` `mnemo serve` processes (the built CLI) on one fresh PostgreSQL database, each with a data
// directory of its own holding the same server token and users file (what every replica needs). `--clients` clients,
// spread over the replicas, play agent sessions for `--minutes`: hook payloads (SessionStart, UserPromptSubmit,
// PreToolUse, PostToolUse, Stop, SessionEnd) posted to POST /v1/events as hooks in team mode post them, each client
// pausing 0–2×`--think-ms` between two events (an agent's hooks fire between its model's turns; 0: no pause), as one of four
// users in one of two projects; every 7th event is delivered to every replica at once (the same delivery twice).
// After each turn a client recalls, through another replica than the one that took its writes, a marker word of the
// prompt it just had acknowledged (a write through one replica recalled through the other) plus words every user's
// sessions share, so that a recall that ignored its scope would return other users' or projects' rows.
//
// At `--kill-at` of the run one replica gets SIGKILL; clients whose replica stops answering fail over to another
// (retrying the same delivery: it is idempotent) and go on.
//
// Then it reports, from the database itself:
// - events acknowledged (a 202 from any replica) vs stored: lost (acknowledged, not in the log) and duplicated (an
//   event stored more than once), both must be 0;
// - scope leaks: every hit of every recall looked up in the database (its row's user and project) against the user
//   and project that asked; must be 0;
// - cross-replica read-your-writes: recalls that found the marker written through the other replica;
// - p50/p95 of capture and recall, beside floors sampled in the same run, while the load runs: a bare `SELECT 1`
//   round trip through the pg driver and a plain one-row INSERT (autocommit) into a table of its own;
// - what each replica served before and after the kill, failovers, and background consolidation runs per replica
//   (MNEMO_CONSOLIDATE_MINUTES=1: at most one run per minute across replicas).
//
// PostgreSQL: MNEMO_BENCH_DATABASE_URL (a role that may CREATE DATABASE), else the local socket
// /var/run/postgresql as the OS user, then as postgres. The database is dropped at the end (--keep keeps it).
import { spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import pg from 'pg'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const CLI = path.join(ROOT, 'dist/adapters/cli/main.js')
const args = process.argv.slice(2)
const flag = (name) => args.includes(`--${name}`)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  if (i < 0) return fallback
  const n = Number(args[i + 1])
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number (got ${JSON.stringify(args[i + 1])})`)
  return n
}
const MINUTES = opt('minutes', 5)
const CLIENTS = opt('clients', 16)
const REPLICAS = opt('replicas', 2)
const KILL_AT = flag('no-kill') ? undefined : opt('kill-at', 0.5)
/** Mean pause of a client between two events, ms (uniform in 0–2×): an agent's hooks fire between its model's turns. */
const THINK_MS = args.includes('--think-ms') ? Number(args[args.indexOf('--think-ms') + 1]) : 500
const USERS = ['alice', 'bob', 'carol', 'dave']
const DUPLICATE_EVERY = 7

const { createDatabase, dropDatabase, probe, withDatabase } = await import(
  pathToFileURL(path.join(ROOT, 'dist/storage/postgres/pg-admin.js')).href
)

// ---------------------------------------------------------------------------------------------------------------
// Set-up: the database, data directories with one token and users file, the replicas.

async function adminUrl() {
  const given = process.env.MNEMO_BENCH_DATABASE_URL
  const candidates = given
    ? [given]
    : [...new Set([os.userInfo().username, 'postgres'])].map((u) => `postgres://${u}@localhost/postgres?host=/var/run/postgresql`)
  for (const url of candidates) {
    const p = await probe(url)
    if (p.ok) return url
  }
  throw new Error(`no PostgreSQL server answers at ${candidates.join(' or ')}: set MNEMO_BENCH_DATABASE_URL`)
}

function run(argv, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...argv], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (c) => (out += c))
    child.stderr.on('data', (c) => (err += c))
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`mnemo ${argv.join(' ')} exited ${code}: ${err}`))))
  })
}

/** A replica: `mnemo serve --port 0 --json` on `home` and the database; resolves once it listens. */
function startReplica(n, home, databaseUrl) {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--json'], {
    env: { PATH: process.env.PATH, MNEMO_HOME: home, MNEMO_DATABASE_URL: databaseUrl, MNEMO_CONSOLIDATE_MINUTES: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const replica = { n, child, url: '', consolidated: 0, consolidateSkipped: 0, stderr: '', served: { before: 0, after: 0 }, killed: false }
  child.stderr.on('data', (c) => {
    const text = String(c)
    replica.stderr = (replica.stderr + text).slice(-4000)
    replica.consolidated += (text.match(/^consolidated:/gm) ?? []).length
    replica.consolidateSkipped += (text.match(/^consolidation skipped/gm) ?? []).length
  })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (c) => {
      out += c
      try {
        replica.url = JSON.parse(out).url
        resolve(replica)
      } catch {
        // not the whole document yet
      }
    })
    child.on('exit', (code, signal) => {
      if (!replica.url) reject(new Error(`replica ${n} exited (${code ?? signal}) before listening: ${replica.stderr}`))
    })
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Realistic hook payloads (seeded).

function mulberry32(seed) {
  let s = seed | 0
  return () => {
    s = (s + 0x6d2b79f5) | 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const NOUNS = `auth middleware token session cache migration schema invoice payment webhook queue retry timeout handler router
config logger test fixture release deploy index query cursor pagination upload bucket worker scheduler job lock ledger
refund customer order cart checkout coupon email template locale rate limit quota tenant role permission audit`.split(/\s+/)
const VERBS = `fix add refactor rename remove debug speed up document test validate migrate cache retry log split merge`.split(/\s+/)
const FILES = [
  'src/auth/middleware.ts',
  'src/db/migrations/0042_invoices.sql',
  'src/queue/worker.ts',
  'src/api/routes.ts',
  'src/billing/refund.ts',
  'tests/auth.test.ts',
  'src/cache/redis.ts',
  'src/config/index.ts',
  'README.md',
  'package.json',
]
/** Words every user's sessions use: the recall asks for them too, so an unscoped search would return others' rows. */
const SHARED_WORDS = 'auth middleware migration'

function textGen(rand) {
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  return {
    pick,
    prompt: (marker) =>
      `${pick(VERBS)} the ${pick(NOUNS)} ${pick(NOUNS)} in ${pick(FILES)}: the ${pick(NOUNS)} ${pick(VERBS)}s before the ${pick(NOUNS)} (${SHARED_WORDS}, ticket ${marker})`,
    answer: (marker) =>
      `Done: ${pick(VERBS)}ed the ${pick(NOUNS)} and the ${pick(NOUNS)} ${pick(NOUNS)}; tests pass. Follow-up for ${marker}: ${pick(VERBS)} the ${pick(NOUNS)}.`,
  }
}

/** One client's sessions: an endless stream of `{ event, payload, identity }` (identity: what the log row is checked by). */
function* sessionEvents(client, cwd) {
  const rand = mulberry32(1000 + client)
  const t = textGen(rand)
  for (let k = 0; ; k++) {
    const session = `bs${client}k${k}`
    const base = { session_id: session, cwd }
    yield {
      event: 'SessionStart',
      payload: { ...base, hook_event_name: 'SessionStart', source: 'startup' },
      identity: `${session}|SessionStart|`,
    }
    const turns = 3 + Math.floor(rand() * 4)
    for (let i = 0; i < turns; i++) {
      const marker = `mk${client}x${k}y${i}`
      yield {
        event: 'UserPromptSubmit',
        payload: { ...base, hook_event_name: 'UserPromptSubmit', prompt: t.prompt(marker), prompt_id: `p-${marker}` },
        identity: `${session}|UserPromptSubmit|${marker}`,
        marker,
      }
      const tools = 1 + Math.floor(rand() * 3)
      for (let j = 0; j < tools; j++) {
        const id = `toolu_${client}_${k}_${i}_${j}`
        const file = t.pick(FILES)
        const bash = rand() < 0.5
        const input = bash ? { command: `npm test -- ${file.replace(/^src\//, 'tests/')}` } : { file_path: path.join(cwd, file) }
        const name = bash ? 'Bash' : 'Read'
        yield {
          event: 'PreToolUse',
          payload: { ...base, hook_event_name: 'PreToolUse', tool_name: name, tool_input: input, tool_use_id: id },
          identity: `${session}|PreToolUse|${id}`,
        }
        const response = bash
          ? {
              stdout: `PASS ${file}\n  ✓ ${t.pick(VERBS)}s the ${t.pick(NOUNS)} (${Math.floor(rand() * 90)} ms)\nTests: ${Math.floor(rand() * 40)} passed`,
              stderr: '',
              interrupted: false,
            }
          : {
              type: 'text',
              file: {
                filePath: path.join(cwd, file),
                content: `export function ${t.pick(VERBS).replace(/ /g, '')}${t.pick(NOUNS)}() {\n  // ${marker}\n  return ${t.pick(NOUNS)}\n}\n`,
              },
            }
        yield {
          event: 'PostToolUse',
          payload: {
            ...base,
            hook_event_name: 'PostToolUse',
            tool_name: name,
            tool_input: input,
            tool_response: response,
            tool_use_id: id,
          },
          identity: `${session}|PostToolUse|${id}`,
        }
      }
      yield {
        event: 'Stop',
        payload: { ...base, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: t.answer(marker) },
        identity: `${session}|Stop|${marker}`,
        stop: true,
      }
    }
    yield { event: 'SessionEnd', payload: { ...base, hook_event_name: 'SessionEnd', reason: 'exit' }, identity: `${session}|SessionEnd|` }
  }
}

/** The identity of a stored event row (as `sessionEvents` names it), from its session key, type and payload. */
function storedIdentity(row) {
  const session = /bs\d+k\d+/.exec(row.session_key)?.[0] ?? row.session_key
  const p = JSON.parse(row.payload)
  const marker = /mk\d+x\d+y\d+/.exec(p.prompt ?? p.last_assistant_message ?? '')?.[0] ?? ''
  return `${session}|${row.type}|${p.tool_use_id ?? marker}`
}

// ---------------------------------------------------------------------------------------------------------------
// The run.

const q = (v, p) => {
  const s = [...v].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))] : Number.NaN
}
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')
const ms = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a')

async function main() {
  const admin = await adminUrl()
  const dbName = `mnemo_bench_replicas_${process.pid}`
  await createDatabase(admin, dbName)
  const databaseUrl = withDatabase(admin, dbName)
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'mnemo-replicas-'))
  const replicas = []
  try {
    // One token and one users file for every replica: made in the first home, copied to the others.
    const homes = Array.from({ length: REPLICAS }, (_, i) => path.join(tmp, `replica-${i + 1}`))
    for (const h of homes) mkdirSync(h, { recursive: true, mode: 0o700 })
    const tokens = {}
    for (const u of USERS) tokens[u] = JSON.parse(await run(['user', 'add', u, '--json'], { MNEMO_HOME: homes[0] })).token
    replicas.push(await startReplica(1, homes[0], databaseUrl))
    for (const f of ['server-token', 'server-users.json'])
      for (const h of homes.slice(1)) copyFileSync(path.join(homes[0], f), path.join(h, f))
    for (let i = 1; i < REPLICAS; i++) replicas.push(await startReplica(i + 1, homes[i], databaseUrl))

    const floorDb = new pg.Client({ connectionString: databaseUrl })
    await floorDb.connect()
    await floorDb.query(
      'CREATE TABLE bench_floor (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text NOT NULL, at bigint NOT NULL)',
    )

    const projects = ['api', 'web'].map((name) => path.join(tmp, 'src', name))
    const started = Date.now()
    const loadAtStart = load()
    const deadline = started + MINUTES * 60_000
    const killAt = KILL_AT === undefined ? undefined : started + KILL_AT * MINUTES * 60_000
    let killedAt
    const acked = new Map() // identity -> acknowledging replica
    const unacked = []
    const captureMs = []
    const recallMs = []
    const floorSelect = []
    const floorInsert = []
    const hits = [] // { id, user, root }
    const stats = {
      deliveries: 0,
      duplicateDeliveries: 0,
      failovers: 0,
      retries: 0,
      recalls: 0,
      crossReplicaFound: 0,
      crossReplicaMissed: 0,
      recallErrors: 0,
      errors: new Map(),
    }
    const noteError = (what) => stats.errors.set(what, (stats.errors.get(what) ?? 0) + 1)
    const alive = () => replicas.filter((r) => !r.killed)
    const served = (r) => (killedAt === undefined ? r.served.before++ : r.served.after++)

    async function post(replica, route, token, body) {
      const t0 = performance.now()
      const res = await fetch(`${replica.url}${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      })
      const json = await res.json().catch(() => undefined)
      return { status: res.status, json, ms: performance.now() - t0 }
    }

    /** The replicas to try for a request, `first` first: clients know the addresses, not which replica is up. */
    const orderFrom = (first) => [first, ...replicas.filter((r) => r !== first)]

    /**
     * Delivers one event to `primary`, and on a network error or a 5xx to the next replica in turn (the same delivery
     * again: it is idempotent), until one acknowledges it (202); returns that one, or undefined after 20 attempts.
     */
    async function deliver(primary, token, item) {
      const order = orderFrom(primary)
      for (let attempt = 0; attempt < 20; attempt++) {
        const r = order[attempt % order.length]
        if (attempt > 0) stats.retries++
        try {
          const res = await post(r, '/v1/events', token, {
            event: item.event,
            payload: item.payload,
            agent: 'claude-code',
            projectRoot: item.payload.cwd,
          })
          if (res.status === 202) {
            served(r)
            captureMs.push(res.ms)
            return r
          }
          noteError(`capture HTTP ${res.status} ${res.json?.error?.code ?? ''}`.trim())
        } catch (error) {
          noteError(`capture ${error.cause?.code ?? error.name}`)
        }
        if (attempt % order.length === order.length - 1) await new Promise((res) => setTimeout(res, 100))
      }
      return undefined
    }

    /** Recalls through `first` (falling over to the others like `deliver`); the reply and the replica that answered. */
    async function recall(first, token, body) {
      for (const [i, r] of orderFrom(first).entries()) {
        if (i > 0) stats.retries++
        try {
          const res = await post(r, '/v1/recall', token, body)
          if (res.status === 200) return { res, by: r }
          noteError(`recall HTTP ${res.status} ${res.json?.error?.code ?? ''}`.trim())
        } catch (error) {
          noteError(`recall ${error.cause?.code ?? error.name}`)
        }
      }
      stats.recallErrors++
      return undefined
    }

    async function client(c) {
      const user = USERS[c % USERS.length]
      const root = projects[Math.floor(c / USERS.length) % projects.length]
      const token = tokens[user]
      let home = replicas[c % replicas.length]
      let lastMarker
      const rand = mulberry32(7000 + c)
      for (const item of sessionEvents(c, root)) {
        if (THINK_MS > 0) await new Promise((res) => setTimeout(res, rand() * 2 * THINK_MS))
        if (Date.now() >= deadline) return
        stats.deliveries++
        let by
        if (stats.deliveries % DUPLICATE_EVERY === 0) {
          // The same delivery to every replica at once (a hook retrying on another replica after a timeout).
          stats.duplicateDeliveries++
          const all = await Promise.all(replicas.map((r) => deliver(r, token, item)))
          by = all.find((r) => r === home) ?? all.find((r) => r !== undefined)
        } else by = await deliver(home, token, item)
        if (by === undefined) {
          unacked.push(item.identity)
          continue
        }
        if (by !== home) {
          // The client's replica stopped answering: it stays with the one that did.
          stats.failovers++
          home = by
        }
        acked.set(item.identity, by.n)
        if (item.marker) lastMarker = { marker: item.marker, by }
        if (item.stop && lastMarker) {
          // Read through another replica than the one that took the write (falling over to it when the other is down).
          const other = replicas.find((r) => r !== lastMarker.by) ?? lastMarker.by
          const got = await recall(other, token, { query: `${lastMarker.marker} ${SHARED_WORDS}`, project: root, limit: 10 })
          if (!got) continue
          served(got.by)
          stats.recalls++
          recallMs.push(got.res.ms)
          for (const h of got.res.json.hits) hits.push({ id: h.id, user, root })
          if (got.by !== lastMarker.by) {
            if (got.res.json.hits.some((h) => h.snippet.includes(lastMarker.marker))) stats.crossReplicaFound++
            else stats.crossReplicaMissed++
          }
        }
      }
    }

    async function floors() {
      while (Date.now() < deadline) {
        let t = performance.now()
        await floorDb.query('SELECT 1')
        floorSelect.push(performance.now() - t)
        t = performance.now()
        await floorDb.query('INSERT INTO bench_floor (body, at) VALUES ($1, $2)', ['a hook payload of about this many bytes', Date.now()])
        floorInsert.push(performance.now() - t)
        await new Promise((res) => setTimeout(res, 250))
      }
    }

    async function killer() {
      if (killAt === undefined || replicas.length < 2) return
      while (Date.now() < killAt) await new Promise((res) => setTimeout(res, 200))
      const victim = replicas[replicas.length - 1]
      victim.killed = true
      killedAt = Date.now()
      victim.child.kill('SIGKILL')
    }

    await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c)), floors(), killer()])
    const seconds = (Date.now() - started) / 1000

    // What the log holds, checked against what was acknowledged.
    const rows = (await floorDb.query('SELECT session_key, type, payload FROM events WHERE format = $1', ['claude-hook'])).rows
    const storedCount = new Map()
    for (const row of rows) {
      const id = storedIdentity(row)
      storedCount.set(id, (storedCount.get(id) ?? 0) + 1)
    }
    const lost = [...acked.keys()].filter((id) => !storedCount.has(id))
    const duplicated = [...storedCount].filter(([, n]) => n > 1)

    // Every recall hit's row, by id: whose is it, and which project.
    const ids = [...new Set(hits.map((h) => h.id))]
    const owner = new Map()
    for (let i = 0; i < ids.length; i += 5000) {
      const chunk = ids.slice(i, i + 5000)
      const found = await floorDb.query(
        `SELECT o.id, o.user_id, p.root FROM observations o JOIN projects p ON p.id = o.project_id WHERE o.id = ANY($1)
         UNION ALL SELECT m.id, m.user_id, p.root FROM memories m JOIN projects p ON p.id = m.project_id WHERE m.id = ANY($1)`,
        [chunk],
      )
      for (const r of found.rows) owner.set(r.id, r)
    }
    const leaks = hits.filter((h) => {
      const o = owner.get(h.id)
      return o !== undefined && ((o.user_id !== null && o.user_id !== h.user) || o.root !== h.root)
    })
    const unknownHits = hits.filter((h) => !owner.has(h.id)).length
    const consolidation = (await floorDb.query(`SELECT key, value FROM store_meta WHERE key LIKE 'job:%'`)).rows
    await floorDb.end()

    const survivors = alive()
    const survivorAnswers = await Promise.all(
      survivors.map((r) =>
        fetch(`${r.url}/v1/status`, { headers: { authorization: `Bearer ${tokens.alice}` } }).then(
          (res) => res.status,
          () => 0,
        ),
      ),
    )

    const lines = []
    const say = (s = '') => lines.push(s)
    say(
      `mnemo team server load run: ${REPLICAS} replicas on one PostgreSQL database, ${CLIENTS} clients (pausing 0–${2 * THINK_MS} ms between events), ${USERS.length} users, ${projects.length} projects, ${(seconds / 60).toFixed(2)} min, ${os.cpus().length} cores (load average ${loadAtStart} at the start, ${load()} at the end: a shared machine)`,
    )
    say(
      `events: sent ${stats.deliveries} (${(stats.deliveries / seconds).toFixed(1)}/s; ${stats.duplicateDeliveries} delivered to every replica at once), acknowledged ${acked.size}, not acknowledged ${unacked.length}; stored ${rows.length} claude-hook rows`,
    )
    say(`  lost (acknowledged, not stored): ${lost.length}${lost.length ? ` e.g. ${lost.slice(0, 3).join(', ')}` : ''}`)
    say(
      `  duplicated (stored more than once): ${duplicated.length}${
        duplicated.length
          ? ` e.g. ${duplicated
              .slice(0, 3)
              .map(([id, n]) => `${id}×${n}`)
              .join(', ')}`
          : ''
      }`,
    )
    say(
      `recalls: ${stats.recalls} (${stats.recallErrors} answered by no replica), ${hits.length} hits checked against their rows: scope leaks ${leaks.length}${leaks.length ? ` e.g. ${JSON.stringify(leaks.slice(0, 2))}` : ''}; hits whose row is gone ${unknownHits}`,
    )
    say(`  written through one replica, recalled through another: found ${stats.crossReplicaFound}, missed ${stats.crossReplicaMissed}`)
    say(`latency, ms            p50      p95     (floor p50 / p95)          ratio p50 / p95`)
    const row = (name, v, f, fname) => {
      const figures = `  ${name.padEnd(20)} ${ms(q(v, 0.5)).padStart(7)}  ${ms(q(v, 0.95)).padStart(7)}     ${fname} ${ms(q(f, 0.5))} / ${ms(q(f, 0.95))}`
      say(`${figures.padEnd(70)}${(q(v, 0.5) / q(f, 0.5)).toFixed(1)}× / ${(q(v, 0.95) / q(f, 0.95)).toFixed(1)}×`)
    }
    row(`capture (n=${captureMs.length})`, captureMs, floorInsert, 'INSERT')
    row(`recall (n=${recallMs.length})`, recallMs, floorSelect, 'SELECT 1')
    say(`  floors sampled during the load: SELECT 1 n=${floorSelect.length}, INSERT n=${floorInsert.length}`)
    if (killedAt !== undefined) {
      const victim = replicas.find((r) => r.killed)
      say(
        `SIGKILL: replica ${victim.n} at ${((killedAt - started) / 1000).toFixed(0)} s; clients that failed over to another replica ${stats.failovers} (requests retried ${stats.retries}); acknowledged events lost ${lost.length}`,
      )
      for (const r of replicas)
        say(
          `  replica ${r.n}: served ${r.served.before} requests before the kill, ${r.served.after} after${r.killed ? ' (killed)' : `; answers /v1/status at the end: HTTP ${survivorAnswers[survivors.indexOf(r)]}`}`,
        )
    } else for (const r of replicas) say(`  replica ${r.n}: served ${r.served.before} requests`)
    say(
      `consolidation (every 1 min on each replica): runs ${replicas.map((r) => `replica ${r.n} ${r.consolidated}`).join(', ')}; skipped (another replica had run it) ${replicas.map((r) => `replica ${r.n} ${r.consolidateSkipped}`).join(', ')}; recorded ${consolidation.map((c) => `${c.key}=${c.value}`).join(' ') || 'none'}`,
    )
    if (stats.errors.size)
      say(`client-side errors (each retried on the next replica): ${[...stats.errors].map(([k, v]) => `${k} ×${v}`).join(', ')}`)
    console.log(lines.join('\n'))
    process.exitCode = lost.length === 0 && duplicated.length === 0 && leaks.length === 0 && survivorAnswers.every((s) => s === 200) ? 0 : 1
  } finally {
    for (const r of replicas) if (!r.killed) r.child.kill('SIGTERM')
    await Promise.all(
      replicas.map((r) =>
        r.child.exitCode !== null || r.child.signalCode !== null ? undefined : new Promise((res) => r.child.once('exit', res)),
      ),
    )
    if (!flag('keep')) await dropDatabase(admin, dbName).catch((e) => console.error(`could not drop ${dbName}: ${e.message}`))
    else console.log(`kept database ${dbName}`)
    rmSync(tmp, { recursive: true, force: true })
  }
}

await main()
