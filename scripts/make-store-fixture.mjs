#!/usr/bin/env node
// Writes a store made by the built code (dist/) to fixtures/stores/schema-<version>.db, with what it reads back
// (schema-<version>.json): the export, every derived row, search results. The upgrade test
// (src/storage/sqlite/schema-upgrade.test.ts) opens a copy of such a file with the current code, which migrates it, and
// checks that everything reads back the same. Run it (after `npm run build`) at the commit that last changed the
// schema, before changing it again:  node scripts/make-store-fixture.mjs
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = (rel) => import(pathToFileURL(path.join(root, 'dist', rel)).href)
const { openMnemo } = await dist('runtime/open-mnemo.js')
const { createManualClock } = await dist('core/clock.js')
const { MIGRATIONS } = await dist('storage/sqlite/migrations.js')
const { openSqliteStore } = await dist('storage/sqlite/sqlite-store.js')
const version = MIGRATIONS.at(-1).version

/** The match expressions whose results are recorded (FTS5 syntax, as retrieval builds them). */
const SEARCHES = ['"deploy" OR "balancer"', '"test" OR "tests"', '"auth" OR "token"', '"rate" OR "limit"', '"error"', '"src"']

const tmp = mkdtempSync(path.join(os.tmpdir(), 'mnemo-fixture-'))
try {
  const home = path.join(tmp, 'home')
  const clock = createManualClock(Date.parse('2026-03-01T09:00:00Z'))
  const mnemo = openMnemo({ home, env: { MNEMO_HOME: home }, clock, cwd: '/work/demo-app', timeZone: 'UTC' })
  const { engine } = mnemo
  for (const f of ['claude-code/mixed-session.jsonl', 'codex/rollout-mixed.jsonl', 'gemini/session-2026-04-07T09-00-7c1e9a52.json'])
    await engine.importPath(path.join(root, 'fixtures/transcripts', f))
  for (const f of [
    's1-01-SessionStart',
    's1-02-UserPromptSubmit',
    's1-03-PreToolUse',
    's1-04-PostToolUse',
    's1-05-Stop',
    's1-06-SessionEnd',
  ]) {
    clock.advance(1_000)
    const event = JSON.parse(readFileSync(path.join(root, 'fixtures/agents/claude-code/suite-run', `${f}.json`), 'utf8'))
    await engine.captureHook(event.hook_event_name, JSON.stringify({ ...event, cwd: '/work/demo-app' }))
  }
  clock.advance(60_000)
  const project = { root: '/work/demo-app', name: 'demo-app' }
  await engine.remember('We deploy with blue-green releases behind the load balancer', { kind: 'decision', project })
  await engine.remember('Rate limit: 100 requests per minute per token', { kind: 'fact', project })
  clock.advance(60_000)
  await engine.remember('Rate limit: 250 requests per minute per token', { kind: 'fact', project })
  const lines = []
  await engine.exportJsonl((line) => lines.push(line))
  await mnemo.close()

  const out = path.join(root, 'fixtures/stores')
  mkdirSync(out, { recursive: true })
  const file = path.join(out, `schema-${version}.db`)
  copyFileSync(path.join(home, 'mnemo.db'), file)
  const db = new Database(file, { readonly: true })
  const rows = (sql) => db.prepare(sql).all()
  const derived = {
    projects: rows('SELECT * FROM projects ORDER BY id'),
    sessions: rows('SELECT * FROM sessions ORDER BY id'),
    observations: rows('SELECT * FROM observations ORDER BY rowid'),
    memories: rows('SELECT * FROM memories ORDER BY rowid'),
    entities: rows('SELECT * FROM entities ORDER BY id'),
    entityMentions: rows('SELECT * FROM entity_mentions ORDER BY entity_id, doc_key'),
  }
  db.close()
  const store = openSqliteStore({ path: file, readonly: true })
  const searches = {}
  for (const match of SEARCHES) searches[match] = await store.searchText({ match, limit: 50 })
  const events = await store.readEvents(0, 100_000)
  await store.close()
  writeFileSync(
    path.join(out, `schema-${version}.json`),
    `${JSON.stringify({ schema: version, madeBy: 'scripts/make-store-fixture.mjs', export: lines, events, derived, searches }, null, 1)}\n`,
  )
  console.log(`wrote ${path.relative(root, file)} (${events.length} events, ${derived.observations.length} observations)`)
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
