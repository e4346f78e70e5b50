#!/usr/bin/env node
// Capture and recall latency benchmark (a benchmark, not a test: it prints figures).
//
//   node scripts/bench-capture.mjs [--events 200] [--locomo ../shared/datasets/locomo/locomo-dev.json]
//
// 1. Hook end to end: runs the exact command `mnemo connect claude-code` writes
//    (`"<node>" "<abs>/dist/adapters/cli/main.js" hook <Event>`) through /bin/sh,
//    one process per event as Claude Code does, with the payload on stdin; process
//    start included. Prints p50/p95/p99 ms over N events of a realistic mix.
// 2. Recall: imports the LoCoMo development split into a fresh store and times
//    every question as a warm recall scoped to its conversation. Skipped with a
//    message when the dataset is absent.
// Appends one JSON line per run to bench-results/history.jsonl.
import { spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CLI = path.join(ROOT, 'dist/adapters/cli/main.js')
if (!existsSync(CLI)) {
  console.error('dist/ is missing: run `npm run build` first')
  process.exit(1)
}
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback
}
const N = Number(opt('events', '200'))
const LOCOMO = path.resolve(opt('locomo', path.join(ROOT, '../shared/datasets/locomo/locomo-dev.json')))

const { claudeCodeHookCommand } = await import(path.join(ROOT, 'dist/adapters/connect/claude-code.js'))
const { openMnemo } = await import(path.join(ROOT, 'dist/runtime/open-mnemo.js'))

function pct(values, p) {
  const s = [...values].sort((a, b) => a - b)
  if (s.length === 0) return NaN
  const i = (s.length - 1) * p
  const lo = Math.floor(i)
  const hi = Math.ceil(i)
  return s[lo] + (s[hi] - s[lo]) * (i - lo)
}
const fmt = (v) => v.toFixed(1)

// --- 1. hook end to end -------------------------------------------------------
const home = mkdtempSync(path.join(os.tmpdir(), 'mnemo-bench-hook-'))
const cwd = '/home/bench/acme-api'
const mix = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUseFailure', 'Stop']
const tools = [
  ['Bash', { command: 'npm test -- orders' }, { stdout: 'PASS test/orders.test.ts\n  ✓ returns the list (41 ms)\nTests: 2 passed', stderr: '' }],
  ['Read', { file_path: `${cwd}/src/app.ts` }, { type: 'text', file: { filePath: `${cwd}/src/app.ts`, content: 'import express from "express"\n'.repeat(60) } }],
  ['Edit', { file_path: `${cwd}/src/middleware/auth.ts`, old_string: 'a', new_string: 'export async function validateToken() {}' }, { filePath: `${cwd}/src/middleware/auth.ts` }],
]
const latencies = []
const byEvent = {}
for (let i = 0; i < N; i++) {
  const session = `bench-${Math.floor(i / 40)}`
  const event = i % 40 === 0 ? 'SessionStart' : mix[i % mix.length]
  const [tool, input, response] = tools[i % tools.length]
  const payload = { session_id: session, transcript_path: `/tmp/${session}.jsonl`, cwd, hook_event_name: event }
  if (event === 'UserPromptSubmit') payload.prompt = `Step ${i}: add rate limiting next to validateToken in src/middleware`
  if (event.includes('ToolUse')) Object.assign(payload, { tool_name: tool, tool_input: input, tool_use_id: `toolu_${i}` })
  if (event === 'PostToolUse') payload.tool_response = response
  if (event === 'PostToolUseFailure') payload.error = 'Exit code 1\nFAIL test/orders.test.ts'
  if (event === 'Stop') payload.last_assistant_message = `Done with step ${i}.`
  if (event === 'SessionStart') payload.source = 'startup'
  const command = claudeCodeHookCommand(event, { nodePath: process.execPath, cliPath: CLI })
  const t0 = performance.now()
  const r = spawnSync('/bin/sh', ['-c', command], { input: JSON.stringify(payload), env: { PATH: process.env.PATH, MNEMO_HOME: home } })
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`hook ${event} exited ${r.status}: ${r.stderr}`)
  latencies.push(ms)
  ;(byEvent[event] ??= []).push(ms)
}
const m = openMnemo({ env: { MNEMO_HOME: home } })
const stats = m.engine.stats()
const spooled = m.spool.count()
m.close()
rmSync(home, { recursive: true, force: true })
const cores = os.cpus().length
const hook = { events: N, p50: pct(latencies, 0.5), p95: pct(latencies, 0.95), p99: pct(latencies, 0.99), stored: stats.events, spooled }
console.log(`machine: ${cores} cores, node ${process.version}`)
console.log(`hook end to end (sh + node + mnemo hook, process start included), N=${N}: p50 ${fmt(hook.p50)} ms · p95 ${fmt(hook.p95)} ms · p99 ${fmt(hook.p99)} ms · stored ${stats.events} events, ${spooled} spooled`)
for (const [event, v] of Object.entries(byEvent)) console.log(`  ${event.padEnd(19)} n=${String(v.length).padStart(3)}  p50 ${fmt(pct(v, 0.5))} ms  p95 ${fmt(pct(v, 0.95))} ms`)

// --- 2. recall after importing LoCoMo -------------------------------------------
let recall
if (!existsSync(LOCOMO)) {
  console.log(`recall: skipped, ${LOCOMO} not found (the LoCoMo data lives in ../shared/datasets)`)
} else {
  const rhome = mkdtempSync(path.join(os.tmpdir(), 'mnemo-bench-recall-'))
  const mm = openMnemo({ env: { MNEMO_HOME: rhome } })
  const t0 = performance.now()
  const report = await mm.engine.importPath(LOCOMO, { format: 'locomo' })
  const importMs = performance.now() - t0
  const samples = JSON.parse(readFileSync(LOCOMO, 'utf8'))
  const times = []
  for (const sample of samples) {
    const ids = mm.engine.resolveProjects(`locomo:${sample.sample_id}`).map((p) => p.id)
    for (const qa of sample.qa) {
      const q0 = performance.now()
      try {
        await mm.engine.recall(String(qa.question), { projectIds: ids, limit: 10 })
      } catch {
        continue
      }
      times.push(performance.now() - q0)
    }
  }
  mm.close()
  rmSync(rhome, { recursive: true, force: true })
  recall = { observations: report.observations, importMs, eventsPerSec: report.imported / (importMs / 1000), queries: times.length, p50: pct(times, 0.5), p95: pct(times, 0.95), p99: pct(times, 0.99) }
  console.log(`import LoCoMo dev: ${report.imported} events in ${fmt(importMs)} ms (${recall.eventsPerSec.toFixed(0)} events/s)`)
  console.log(`recall (warm, limit 10, scoped to its conversation), ${times.length} queries: p50 ${recall.p50.toFixed(2)} ms · p95 ${recall.p95.toFixed(2)} ms · p99 ${recall.p99.toFixed(2)} ms`)
}

mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true })
appendFileSync(path.join(ROOT, 'bench-results/history.jsonl'), `${JSON.stringify({ at: new Date().toISOString(), bench: 'capture', cores, node: process.version, hook, recall })}\n`)
