import { copyFileSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { createManualClock } from '../../core/clock.js'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { tempDir } from '../../testing/test-mnemo.js'
import type { StoredEvent, TextMatch } from '../store.js'
import { MIGRATIONS } from './migrations.js'
import { observationText } from './sqlite-payload.js'
import { openSqliteStore } from './sqlite-store.js'

// A store written by an older mnemo (fixtures/stores/schema-<n>.db, made by scripts/make-store-fixture.mjs with the
// code of the commit that last changed the schema), opened by this one: migrated, it reads back what the old code read.

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../fixtures/stores')

interface Recorded {
  schema: number
  export: string[]
  events: StoredEvent[]
  derived: Record<'projects' | 'sessions' | 'observations' | 'memories' | 'entities' | 'entityMentions', Record<string, unknown>[]>
  searches: Record<string, TextMatch[]>
}

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** A copy of the fixture store of schema `version`, and what the code that wrote it read back from it. */
function fixture(version: number): { home: string; file: string; recorded: Recorded } {
  const t = tempDir()
  cleanups.push(t.cleanup)
  const file = path.join(t.dir, 'mnemo.db')
  copyFileSync(path.join(FIXTURES, `schema-${version}.db`), file)
  const recorded = JSON.parse(readFileSync(path.join(FIXTURES, `schema-${version}.json`), 'utf8')) as Recorded
  return { home: t.dir, file, recorded }
}

/** The derived rows, as the fixture script reads them (only the columns the old schema had). */
function derivedRows(file: string, like: Recorded['derived']): Recorded['derived'] {
  const db = new Database(file, { readonly: true })
  try {
    const read = (sql: string, columns: Record<string, unknown> | undefined) =>
      (db.prepare(sql).all() as Record<string, unknown>[]).map((row) => {
        // A long tool output is stored compressed since schema 12's code (observationText reads it back).
        const read = Buffer.isBuffer(row.text) ? { ...row, text: observationText(row.text) } : row
        return columns ? Object.fromEntries(Object.keys(columns).map((k) => [k, read[k]])) : read
      })
    return {
      projects: read('SELECT * FROM projects ORDER BY id', like.projects[0]),
      sessions: read('SELECT * FROM sessions ORDER BY id', like.sessions[0]),
      observations: read('SELECT * FROM observations ORDER BY rowid', like.observations[0]),
      memories: read('SELECT * FROM memories ORDER BY rowid', like.memories[0]),
      entities: read('SELECT * FROM entities ORDER BY id', like.entities[0]),
      entityMentions: read('SELECT * FROM entity_mentions ORDER BY entity_id, doc_key', like.entityMentions[0]),
    }
  } finally {
    db.close()
  }
}

async function searches(file: string, recorded: Recorded): Promise<Record<string, TextMatch[]>> {
  const store = openSqliteStore({ path: file })
  try {
    const out: Record<string, TextMatch[]> = {}
    for (const match of Object.keys(recorded.searches)) out[match] = await store.searchText({ match, limit: 50 })
    return out
  } finally {
    await store.close()
  }
}

/** `matches` with scores to 9 significant digits: the same index gives the same BM25 up to float rounding. */
const rounded = (all: Record<string, TextMatch[]>) =>
  Object.fromEntries(Object.entries(all).map(([k, v]) => [k, v.map((m) => ({ ...m, score: Number(m.score.toPrecision(9)) }))]))

describe('a store written by schema 10 (before the contentless full-text index and the sessions’ capture paths)', () => {
  it('migrates to the current schema and reads back its log, export, derived rows and search results unchanged', async () => {
    const { home, file, recorded } = fixture(10)
    expect(recorded.schema).toBe(10)
    expect(recorded.derived.observations.length).toBeGreaterThan(30)
    const exportedAt = Date.parse((JSON.parse(recorded.export[0]!) as { exportedAt: string }).exportedAt)
    const mnemo = openMnemo({ home, env: { MNEMO_HOME: home }, dbPath: file, clock: createManualClock(exportedAt), timeZone: 'UTC' })
    const lines: string[] = []
    try {
      await mnemo.engine.exportJsonl((line) => lines.push(line))
    } finally {
      await mnemo.close()
    }
    expect(lines).toEqual(recorded.export)
    const db = new Database(file, { readonly: true })
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)!.version)
      // The text is no longer copied into the index: no content table, and a column reads as NULL.
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'search_fts_content'").get()).toBeUndefined()
      // Each session lists the capture paths of its observations (schema 12), and no index of them by path is left.
      const paths = db
        .prepare(
          'SELECT s.id, s.origins, (SELECT group_concat(DISTINCT o.origin) FROM observations o WHERE o.session_id = s.id) AS expected FROM sessions s',
        )
        .all() as { origins: string | null; expected: string | null }[]
      expect(paths.filter((p) => p.expected !== null).length).toBeGreaterThan(2)
      for (const p of paths) expect(p.origins?.split(',').sort() ?? null).toEqual(p.expected?.split(',').sort() ?? null)
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'observations_session_origin'").get()).toBeUndefined()
      expect(db.prepare('SELECT count(*) AS n, count(body) AS bodies FROM search_fts').get()).toEqual({
        n: recorded.derived.observations.length + recorded.derived.memories.length,
        bodies: 0,
      })
    } finally {
      db.close()
    }
    const store = openSqliteStore({ path: file })
    try {
      expect(await store.readEvents(0, 100_000)).toEqual(recorded.events)
    } finally {
      await store.close()
    }
    expect(derivedRows(file, recorded.derived)).toEqual(recorded.derived)
    const found = await searches(file, recorded)
    expect(Object.values(found).flat().length).toBeGreaterThan(10)
    expect(rounded(found)).toEqual(rounded(recorded.searches))
  })

  it('rebuilds from its log, once migrated, to the same derived rows and search results', async () => {
    const { home, file, recorded } = fixture(10)
    const mnemo = openMnemo({ home, env: { MNEMO_HOME: home }, dbPath: file, clock: createManualClock(Date.parse('2026-03-02T00:00:00Z')) })
    try {
      const rebuilt = await mnemo.engine.rebuild()
      expect(rebuilt.events).toBe(recorded.events.length)
    } finally {
      await mnemo.close()
    }
    expect(derivedRows(file, recorded.derived)).toEqual(recorded.derived)
    expect(rounded(await searches(file, recorded))).toEqual(rounded(recorded.searches))
  })
})
