import { expect, it } from 'vitest'
import type { MnemoEngine } from '../../engine/mnemo.js'
import type { Store } from '../store.js'
import { ALPHA, BETA, DAY, describeContract, editEvent, engineOver, HOUR, type ManualClock, MINUTE, promptEvent, T0 } from './contract.js'
import { DIALECTS } from './dialects.js'

/**
 * A store with every kind of record, written through the engine: captures of two users, shared ones and another
 * agent's, in two projects; a memory with a version chain, a pinned and an archived one, one forgotten (a tombstone
 * and an audit entry), a user's own memory.
 */
async function seed(engine: MnemoEngine, clock: ManualClock): Promise<void> {
  await engine.append([
    promptEvent('p1', 'add rate limiting to validateToken', { ts: T0 }),
    editEvent('e1', 'src/auth.ts', 'rateLimit(validateToken)', { ts: T0 + MINUTE }),
    promptEvent('p2', 'alice asks about the ledger export', { user: 'alice', session: 'al', ts: T0 + 2 * MINUTE }),
    promptEvent('p3', 'bob asks about the ledger export', { user: 'bob', session: 'bo', ts: T0 + 3 * MINUTE }),
    promptEvent('p4', 'codex prompt about redis', { agent: 'codex', project: BETA, session: 'cx', ts: T0 + 4 * MINUTE }),
  ])
  clock.advance(HOUR)
  const v1 = (await engine.remember('the orders DB is PostgreSQL 14', { project: ALPHA })).memory
  clock.advance(DAY)
  await engine.remember('the orders DB moved to MySQL 8', { project: ALPHA, supersedes: v1.id })
  const pinned = (await engine.remember('never force-push to main', { project: ALPHA, kind: 'lesson' })).memory
  await engine.setMemoryState(pinned.id, 'pin')
  clock.advance(MINUTE)
  const archived = (await engine.remember('the old cron ran at 03:00', { project: ALPHA })).memory
  await engine.setMemoryState(archived.id, 'archive')
  const gone = (await engine.remember('a temporary note to forget', { project: BETA })).memory
  clock.advance(MINUTE)
  await engine.forget(gone.id)
  await engine.scoped({ user: 'alice' }).remember('alice prefers tabs', { scope: 'user' })
}

/** Everything an export must carry over, read from the store: the log, tombstones, and every derived row a reader sees. */
async function contents(store: Store) {
  const projects = await store.listProjects()
  // Agents' sessions, as every surface lists them (a forget leaves mnemo's bookkeeping session of a project behind, which an import does not make).
  const sessions = await store.listSessions({ limit: 100, excludeAgent: 'mnemo' })
  return {
    events: (await store.readEvents(0, 1000)).map(({ seq: _seq, ...e }) => e),
    tombstones: await store.tombstones(),
    projects,
    sessions,
    observations: await Promise.all(sessions.map((s) => store.sessionObservations(s.id, 100))),
    memories: await Promise.all(projects.map((p) => store.allMemories(p.id))),
    counts: await store.scopeCounts(),
    alice: await store.scopeCounts(undefined, 'alice'),
    docs: await store.countDocs({}),
  }
}

async function exportAll(engine: MnemoEngine): Promise<{ text: string; counts: Record<string, number> }> {
  const lines: string[] = []
  const manifest = await engine.exportJsonl((line) => lines.push(line))
  return { text: lines.join('\n'), counts: manifest.counts }
}

describeContract('export and import', (t) => {
  it('the engine’s export imported into an empty store of every dialect reproduces the store, counts checked', async () => {
    const { store, clock } = t()
    const engine = engineOver(store, clock, { allUsers: true })
    await seed(engine, clock)
    const exported = await exportAll(engine)
    expect(exported.counts).toEqual({ events: 12, tombstones: 1, audit: 1, sessions: 4, observations: 5, memories: 5 })
    const before = await contents(store)
    expect(before.counts).toEqual({ events: 12, sessions: 4, observations: 5, memories: 5 })
    for (const target of DIALECTS.filter((d) => d.skip === undefined)) {
      const db = await target.create()
      try {
        const into = await db.open(() => clock.now())
        const importer = engineOver(into, clock, { allUsers: true })
        const imported = await importer.importExport(exported.text, 'export.jsonl')
        expect(imported, `into ${target.name}`).toMatchObject({ events: 12, duplicates: 0, observations: 5, tombstones: 1, audit: 1 })
        expect(await contents(into), `into ${target.name}`).toEqual(before)
        // The import is recorded in the audit log, and the export's own audit entry came along.
        expect((await into.auditLog(10)).map((a) => a.action)).toEqual(['import-export', 'forget'])
        // An export of the copy holds the same records as the original's (and the import's audit entry).
        const reexported = await exportAll(importer)
        expect(reexported.counts).toEqual({ ...exported.counts, audit: 2 })
        // Importing the same file again stores no event again.
        const again = await importer.importExport(exported.text, 'export.jsonl')
        expect(again, `again into ${target.name}`).toMatchObject({ events: 0, duplicates: 12 })
        expect(await into.scopeCounts()).toEqual(before.counts)
      } finally {
        await db.close()
      }
    }
  })

  it('a user’s export holds their events and shared ones only, and imports as that user’s', async () => {
    const { store, clock } = t()
    await seed(engineOver(store, clock, { allUsers: true }), clock)
    const alice = engineOver(store, clock, { user: 'alice' })
    const exported = await exportAll(alice)
    expect(exported.counts).toMatchObject({ events: 11, tombstones: 1 })
    expect(exported.text).not.toContain('bob asks')
    const db = await t().dialect.create()
    try {
      const into = await db.open(() => clock.now())
      const imported = await engineOver(into, clock, { user: 'carol' }).importExport(exported.text, 'alice.jsonl')
      expect(imported).toMatchObject({ events: 11, duplicates: 0 })
      // Whatever users the file names, what a user imports is theirs.
      expect((await into.readEvents(0, 100)).every((e) => e.user === 'carol')).toBe(true)
      expect(await into.scopeCounts(undefined, 'carol')).toMatchObject({ events: 11 })
    } finally {
      await db.close()
    }
  })
})
