#!/usr/bin/env node
// Load test (a script, not a test): N parallel simulated agent sessions fire hook
// processes for a fixed time while recalls and exports run, then it reports events
// lost (must be 0), duplicates (must be 0), errors and p95 latencies.
//
//   node scripts/load.mjs [--sessions 16] [--seconds 300] [--users 2]
//
// Session n captures as MNEMO_USER=user<n % users>; the reader recalls as each user in
// turn and counts every hit that belongs to another user's session (leaks, must be 0).
//
// Each session is a loop of real `node dist/adapters/cli/main.js hook <Event>` processes
// (the command `mnemo connect` writes), so lock contention is real. A reader loop runs
// `mnemo recall` processes and an exporter runs `mnemo export` every 15 s.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CLI = path.join(ROOT, 'dist/adapters/cli/main.js')
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const SESSIONS = opt('sessions', 16)
const SECONDS = opt('seconds', 300)
const USERS = opt('users', 2)
const userOf = (n) => `user${n % USERS}`
const home = mkdtempSync(path.join(os.tmpdir(), 'mnemo-load-'))
// Exports go beside the data directory: mnemo refuses to write one inside it, among its own files.
const exports = mkdtempSync(path.join(os.tmpdir(), 'mnemo-load-exports-'))
const env = { PATH: process.env.PATH, MNEMO_HOME: home }
const deadline = Date.now() + SECONDS * 1000

function run(argv, input, user) {
  return new Promise((resolve) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, [CLI, ...argv], { env: user === undefined ? env : { ...env, MNEMO_USER: user } })
    let out = ''
    let err = ''
    child.stdout.on('data', (c) => (out += c))
    child.stderr.on('data', (c) => (err += c))
    child.on('close', (code, signal) => resolve({ code, signal, ms: performance.now() - t0, out, err }))
    if (input !== undefined) child.stdin.end(input)
    else child.stdin.end()
  })
}

const pct = (v, p) => {
  const s = [...v].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))] : NaN
}

const fired = new Set()
const hookMs = []
let hookFailures = 0
async function session(n) {
  const sid = `load-${n}`
  for (let i = 0; Date.now() < deadline; i++) {
    const id = `${sid}-${i}`
    const event = i % 3 === 0 ? 'UserPromptSubmit' : 'PostToolUse'
    const payload = { session_id: sid, cwd: `/work/load/project-${n % 4}`, hook_event_name: event }
    if (event === 'UserPromptSubmit') payload.prompt = `prompt ${id}: make the orders endpoint faster`
    else
      Object.assign(payload, {
        tool_name: 'Bash',
        tool_use_id: id,
        tool_input: { command: `npm test -- ${id}` },
        tool_response: { stdout: `ok ${id}` },
      })
    fired.add(id)
    const r = await run(['hook', event], JSON.stringify(payload), userOf(n))
    hookMs.push(r.ms)
    if (r.code !== 0) {
      hookFailures++
      console.log(`hook ${event} ${id} exited ${r.code ?? r.signal}: ${r.err.slice(0, 500)}`)
    }
  }
}

const recallMs = []
let recallFailures = 0
let recallHits = 0
let leaks = 0
let unattributed = 0
async function reader() {
  for (let turn = 0; Date.now() < deadline; turn++) {
    const user = `user${turn % USERS}`
    const r = await run(
      ['recall', 'orders endpoint faster npm test', '--project', '/work/load/project-1', '--limit', '50', '--json'],
      undefined,
      user,
    )
    recallMs.push(r.ms)
    if (r.code !== 0) {
      if (!r.out.includes('NOT_FOUND')) recallFailures++
      continue
    }
    // Every text names its session (load-<n>-<i>): a hit from a session of another user is a leak.
    for (const h of JSON.parse(r.out).hits) {
      recallHits++
      const n = /load-(\d+)-/.exec(h.snippet)?.[1]
      if (n === undefined) unattributed++
      else if (userOf(Number(n)) !== user) leaks++
    }
  }
}

const exportMs = []
let exportFailures = 0
async function exporter() {
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 15_000))
    const r = await run(['export', '--all-users', '--out', path.join(exports, `export-${exportMs.length}.jsonl`)])
    exportMs.push(r.ms)
    if (r.code !== 0) exportFailures++
  }
}

console.log(`load: ${SESSIONS} sessions, ${SECONDS} s, ${os.cpus().length} cores, data in ${home}`)
await Promise.all([...Array.from({ length: SESSIONS }, (_, n) => session(n)), reader(), exporter()])

// Drain anything spooled under contention, then count.
await run(['status', '--json'])
const status = JSON.parse((await run(['status', '--json'])).out)
const exported = (await run(['export', '--all-users', '--out', path.join(exports, 'final.jsonl')])).code
const lines = readFileSync(path.join(exports, 'final.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((l) => JSON.parse(l))
  .filter((r) => r.kind === 'event')
const stored = new Map()
for (const e of lines) {
  const p = e.payload
  const id = p.tool_use_id ?? /^prompt (\S+):/.exec(p.prompt ?? '')?.[1]
  if (id) stored.set(id, (stored.get(id) ?? 0) + 1)
}
const lost = [...fired].filter((id) => !stored.has(id))
const duplicates = [...stored.values()].filter((n) => n > 1).length
console.log(
  JSON.stringify(
    {
      fired: fired.size,
      stored: stored.size,
      lost: lost.length,
      duplicates,
      spoolPending: status.spool.pending,
      errorsLogged: status.errors.length,
      hookFailures,
      recallFailures,
      recallHits,
      leaks,
      unattributed,
      exportFailures: exportFailures + (exported === 0 ? 0 : 1),
      hook_ms: { p50: pct(hookMs, 0.5), p95: pct(hookMs, 0.95), n: hookMs.length },
      recall_ms: { p50: pct(recallMs, 0.5), p95: pct(recallMs, 0.95), n: recallMs.length },
      export_ms: { p50: pct(exportMs, 0.5), p95: pct(exportMs, 0.95), n: exportMs.length },
    },
    (_key, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v),
    2,
  ),
)
if (lost.length > 0) console.log('lost ids (first 10):', lost.slice(0, 10))
if (status.errors.length > 0) console.log('errors logged:', status.errors)
rmSync(exports, { recursive: true, force: true })
if (lost.length === 0 && duplicates === 0 && leaks === 0) rmSync(home, { recursive: true, force: true })
else console.log(`kept ${home} for inspection`)
process.exit(lost.length === 0 && duplicates === 0 && leaks === 0 ? 0 : 1)
