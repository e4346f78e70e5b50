#!/usr/bin/env node
// Lifecycle benchmark (a script, not a test): simulates 6 months of daily use of one
// project through the engine (hook events, remembered facts that change over time),
// consolidating at the end of each day, then prints consolidation throughput and the
// effect of the lifecycle on store size and on recall, and the procedures distilled from
// sessions that did the same kind of work (edit, test, fix, test again) successfully.
//
//   node scripts/bench-lifecycle.mjs [--days 180] [--sessions-per-day 3]
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const { openMnemo } = await import(path.join(ROOT, 'dist/runtime/open-mnemo.js'))
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const DAYS = opt('days', 180)
const PER_DAY = opt('sessions-per-day', 3)
const DAY = 86_400_000
let now = Date.parse('2026-01-05T09:00:00Z')
const clock = { now: () => now }
const home = mkdtempSync(path.join(os.tmpdir(), 'mnemo-lifecycle-'))
const m = openMnemo({ home, env: {}, clock, timeZone: 'UTC', cwd: '/work/shop' })
const e = m.engine

// Facts that change: each subject gets a new value every ~30 days.
const subjects = ['orders DB', 'payments queue', 'auth provider', 'CI runner', 'log retention', 'cache TTL']
const values = (s, v) => `${s} is ${['PostgreSQL', 'Kafka', 'Auth0', 'GitHub Actions', '30 days', '5 minutes'][subjects.indexOf(s)]} v${v}`
const files = ['src/orders.ts', 'src/payments.ts', 'src/auth.ts', 'src/cache.ts', 'test/orders.test.ts', 'README.md']
let consolidateMs = 0
let consolidatedSessions = 0
let procedureMs = 0
let procedureWrites = 0
let events = 0
for (let day = 0; day < DAYS; day++) {
  for (let s = 0; s < PER_DAY; s++) {
    const sid = `d${day}s${s}`
    const hook = async (event, fields) => {
      await e.captureHook(event, JSON.stringify({ session_id: sid, cwd: '/work/shop', hook_event_name: event, ...fields }))
      events++
      now += 20_000
    }
    await hook('SessionStart', { source: 'startup' })
    await hook('UserPromptSubmit', {
      prompt: `day ${day}: improve ${files[(day + s) % files.length]} and keep ${subjects[(day + s) % subjects.length]} in mind`,
    })
    for (let k = 0; k < 8; k++) {
      const f = files[(day * 7 + s * 3 + k) % files.length]
      await hook('PostToolUse', {
        tool_name: k % 2 ? 'Edit' : 'Read',
        tool_use_id: `${sid}-${k}`,
        tool_input: { file_path: `/work/shop/${f}`, new_string: `change ${day}.${k}` },
        tool_response: { ok: true },
      })
    }
    if ((day + s) % 4 === 0) {
      await hook('PostToolUseFailure', {
        tool_name: 'Bash',
        tool_use_id: `${sid}-t1`,
        tool_input: { command: 'npm test' },
        error: `FAIL test/orders.test.ts: expected ${day}`,
      })
      await hook('PostToolUse', {
        tool_name: 'Edit',
        tool_use_id: `${sid}-fix`,
        tool_input: { file_path: '/work/shop/src/orders.ts', new_string: 'fix' },
        tool_response: {},
      })
      await hook('PostToolUse', {
        tool_name: 'Bash',
        tool_use_id: `${sid}-t2`,
        tool_input: { command: 'npm test' },
        tool_response: { stdout: 'PASS' },
      })
    }
    await hook('Stop', { last_assistant_message: `done with day ${day} session ${s}` })
    await hook('SessionEnd', { reason: 'exit' })
  }
  if (day % 30 === 0) for (const subject of subjects) await e.remember(values(subject, day / 30 + 1), { kind: 'fact' })
  if (day % 7 === 0) await e.context({}) // a new session's injected context reinforces what it shows
  now = Date.parse('2026-01-05T09:00:00Z') + (day + 1) * DAY
  const before = performance.now()
  const r = await e.consolidate({ idleMs: 60 * 60_000 })
  consolidateMs += performance.now() - before
  consolidatedSessions += r.summaries
  procedureMs += r.procedureMs
  procedureWrites += r.procedures
}

const stats = await e.stats()
const project = (await e.listProjects())[0]
const all = (await m.engine.exportMarkdown({ project })).get('shop.md') ?? ''
const versions = await e.history((await e.recall('orders DB is PostgreSQL', { limit: 5 })).find((h) => h.type === 'memory').id)
let correct = 0
for (const subject of subjects) {
  const top = (await e.recall(`${subject} is`, { limit: 3 })).find((h) => h.type === 'memory')
  if (top && top.snippet === values(subject, Math.floor((DAYS - 1) / 30) + 1)) correct++
}
const bytes =
  statSync(path.join(home, 'mnemo.db')).size +
  (() => {
    try {
      return statSync(path.join(home, 'mnemo.db-wal')).size
    } catch {
      return 0
    }
  })()
const archivedSummaries = (all.match(/, archived\)_/g) ?? []).length
console.log(`machine: ${os.cpus().length} cores, node ${process.version}`)
console.log(
  `simulated ${DAYS} days x ${PER_DAY} sessions: ${events} hook events, ${stats.observations} observations, ${stats.memories} memories (all versions, archived included)`,
)
console.log(
  `consolidation (deterministic): ${consolidatedSessions} sessions summarised in ${(consolidateMs / 1000).toFixed(2)} s over ${DAYS} runs = ${(consolidatedSessions / (consolidateMs / 1000)).toFixed(0)} sessions/s`,
)
const procedureVersions = await e.browseMemories({ projectIds: [project.id], kinds: ['procedure'], state: 'all', offset: 0, limit: 200 })
const currentProcedures = await e.browseMemories({
  projectIds: [project.id],
  kinds: ['procedure'],
  state: 'current',
  offset: 0,
  limit: 200,
})
console.log(
  `procedures: ${currentProcedures.total} distilled (${procedureVersions.total} versions, ${procedureWrites} writes incl. seen-again), ` +
    `${(procedureMs / 1000).toFixed(2)} s of the consolidation time (${(procedureMs / DAYS).toFixed(1)} ms per daily run, ${((100 * procedureMs) / consolidateMs).toFixed(0)}%)`,
)
for (const p of currentProcedures.memories) console.log(`  ${p.text.split('\n').join(' | ')}${p.archivedAt ? ' (archived)' : ''}`)
console.log(`store: ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${(bytes / stats.observations).toFixed(0)} bytes per observation`)
console.log(`history: 'orders DB' has ${versions.length} versions, ${versions.filter((v) => v.validTo === undefined).length} current`)
console.log(`recall of changed facts: ${correct}/${subjects.length} subjects return their current value first (superseded versions hidden)`)
console.log(
  `decay: ${archivedSummaries} of ${stats.memories} memories archived by retention (out of default recall and context, restorable)`,
)
await m.close()
rmSync(home, { recursive: true, force: true })
