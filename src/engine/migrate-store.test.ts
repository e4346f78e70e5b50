import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../core/clock.js'
import { openPostgresStore } from '../storage/postgres/pg-store.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import type { Store } from '../storage/store.js'
import { whyNoPostgres, withPostgres } from '../testing/postgres.js'
import { hookPayload, T0 } from '../testing/test-mnemo.js'
import { MnemoEngine } from './mnemo.js'

// `migrateStore` (mnemo migrate): a store copied into an empty one of each dialect and back, counts checked store
// against store, answers the same; a target that holds data refused, or merged with force. PostgreSQL on a real server.
const TRIPS = fileURLToPath(new URL('../../fixtures/facts/trips.jsonl', import.meta.url))
const pg = await withPostgres()
const clock = createManualClock(T0)
const opened: Store[] = []
const databases = pg ? [pg] : []
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()))
  await Promise.all(databases.map((d) => d.drop()))
})

/** A PostgreSQL store on a database of its own. */
async function postgres(): Promise<Store> {
  const db = (await withPostgres())!
  databases.push(db)
  return openPostgresStore(db.url)
}

function engineOn(store: Store): MnemoEngine {
  opened.push(store)
  return new MnemoEngine({ store, clock, cwd: '/p/shop', contextBudgetTokens: 2000, timeZone: 'UTC', allUsers: true })
}
const sqlite = (): MnemoEngine => engineOn(openSqliteStore({ path: ':memory:' }, () => clock.now()))

/** A store with a bit of everything: two users' hook captures, a superseded memory, deletes (tombstones, audit), facts. */
async function populated(): Promise<MnemoEngine> {
  const engine = sqlite()
  const alice = engine.scoped({ user: 'alice', allUsers: false })
  const bob = engine.scoped({ user: 'bob', allUsers: false })
  for (let i = 0; i < 4; i++) {
    clock.advance(60_000)
    await alice.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: `fix the refund rounding in invoice ${i}` }, 'a-1', '/p/shop'),
    )
    await alice.captureHook(
      'PostToolUse',
      hookPayload(
        'PostToolUse',
        {
          tool_name: 'Bash',
          tool_use_id: `toolu_${i}`,
          tool_input: { command: 'npm test' },
          tool_response: { stdout: `PASS refund ${i}` },
        },
        'a-1',
        '/p/shop',
      ),
    )
    await bob.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: `tune the cache ttl of catalog ${i}` }, 'b-1', '/p/shop'),
    )
  }
  await alice.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'a throwaway session' }, 'a-2', '/p/shop'))
  await alice.remember('the orders database is PostgreSQL 14', { kind: 'fact', project: { root: '/p/shop', name: 'shop' } })
  clock.advance(60_000)
  await alice.remember('the orders database is PostgreSQL 15', { kind: 'fact', project: { root: '/p/shop', name: 'shop' } })
  const forgettable = await alice.remember('we deploy on Fridays', { kind: 'decision', project: { root: '/p/shop', name: 'shop' } })
  await alice.forget(forgettable.memory.id)
  const shop = (await engine.listProjects()).find((p) => p.root === '/p/shop')!
  const throwaway = (await engine.sessions({ limit: 50 })).find((s) => s.sessionKey.endsWith('a-2'))!
  await engine.deleteScope({ project: shop, session: throwaway.id })
  await alice.facts.importFile(TRIPS, 'trips')
  return engine
}

const recallIds = async (engine: MnemoEngine, query: string): Promise<string[]> =>
  (await engine.scoped({ user: 'alice', allUsers: false }).recall(query, { limit: 10 })).map((h) => h.id)

const dialects: [string, (() => Promise<MnemoEngine>) | undefined][] = [
  ['sqlite', async () => sqlite()],
  ['postgres', pg ? async () => engineOn(await postgres()) : undefined],
]

describe.each(dialects)('mnemo migrate into %s', (dialect, open) => {
  it.skipIf(!open)(`copies every kind losslessly, and back again${open ? '' : ` (skipped: ${whyNoPostgres()})`}`, async () => {
    const source = await populated()
    const target = await open!()
    const report = await source.migrateTo(target, { targetLabel: dialect })
    for (const kind of ['events', 'sessions', 'observations', 'memories', 'tombstones', 'audit', 'facts'] as const) {
      expect(report[kind].source, kind).toBeGreaterThan(0)
      expect(report[kind].target, kind).toBe(report[kind].source + (kind === 'audit' ? 1 : 0))
    }
    expect(report).toMatchObject({ merged: false, duplicates: 0 })
    for (const q of ['refund rounding', 'orders database']) expect(await recallIds(target, q)).toEqual(await recallIds(source, q))
    const history = async (e: MnemoEngine) => {
      const [hit] = (await e.scoped({ user: 'alice', allUsers: false }).recall('orders database PostgreSQL', { limit: 1 })).filter(
        (h) => h.type === 'memory',
      )
      return (await e.history(hit!.id)).map((m) => [m.id, m.text, m.validTo])
    }
    expect(await history(target)).toEqual(await history(source))
    expect((await history(target)).length).toBe(2)
    // And out again, into an empty embedded store.
    const back = sqlite()
    const again = await target.migrateTo(back, { targetLabel: 'back' })
    expect(again.events.target).toBe(report.events.source)
    expect(again.facts.target).toBe(report.facts.source)
    expect(await recallIds(back, 'refund rounding')).toEqual(await recallIds(source, 'refund rounding'))
  })

  it.skipIf(!open)('refuses a target that holds data, writing nothing, and merges into it with force', async () => {
    const source = await populated()
    const target = await open!()
    await target.remember('already here', { project: { root: '/p/other', name: 'other' } })
    const held = (await target.stats()).events
    await expect(source.migrateTo(target, { targetLabel: `${dialect} target` })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { path: 'to' },
      message: expect.stringMatching(new RegExp(`^${dialect} target is not empty \\(${held} events`)),
    })
    expect((await target.stats()).events).toBe(held)
    const merged = await source.migrateTo(target, { targetLabel: dialect, force: true })
    expect(merged.merged).toBe(true)
    expect(merged.events.target).toBe(merged.events.source + held)
    // A second merge finds every event there already.
    const twice = await source.migrateTo(target, { targetLabel: dialect, force: true })
    expect(twice.duplicates).toBe(merged.events.source)
    expect(twice.events.target).toBe(merged.events.target)
  })
})
