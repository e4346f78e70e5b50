import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createManualClock } from '../core/clock.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import { createTestEngine, T0, tempDir } from '../testing/test-mnemo.js'
import { IMPORT_BATCH_EVENTS } from './import-files.js'
import { MnemoEngine } from './mnemo.js'
import { dumpTables } from '../testing/sqlite-dump.js'

// A worker runs JavaScript: the import's derive pool is tested with the build's worker script (npm run build makes it).
const BUILT = new URL('../../dist/engine/derive-worker.js', import.meta.url)
/**
 * Whether imports in this file start a derive pool (one thread, the built worker, whatever the files' size), and how
 * many derivations, encoded payloads and compressed observation texts the pools' workers gave.
 */
const forcePool = vi.hoisted(() => ({ on: false, derived: 0, payloads: 0, texts: 0 }))
vi.mock('./derive-pool.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./derive-pool.js')>()
  return {
    ...real,
    get DERIVE_POOL_MIN_IMPORT_BYTES() {
      return forcePool.on ? 0 : real.DERIVE_POOL_MIN_IMPORT_BYTES
    },
    deriveThreadsNow: async () => (forcePool.on ? 1 : real.deriveThreadsNow()),
    openDerivePool: (options: Parameters<typeof real.openDerivePool>[0]) => {
      const pool = real.openDerivePool(forcePool.on ? { ...options, script: BUILT } : options)
      if (pool === undefined) return undefined
      return {
        ...pool,
        shiftWithPayloads: () => {
          const got = pool.shiftWithPayloads()
          forcePool.derived += got.derived.filter((d) => d !== undefined).length
          forcePool.payloads += got.payloads?.filter((p) => p !== undefined).length ?? 0
          for (const texts of got.texts ?? []) forcePool.texts += texts?.filter((t) => t !== undefined).length ?? 0
          return got
        },
      }
    },
  }
})

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  forcePool.on = false
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** A Claude Code transcript of `turns` prompt + answer pairs (2 lines each) in session `id`. */
function transcript(id: string, turns: number): string {
  const lines: string[] = []
  for (let t = 0; t < turns; t++) {
    const at = (k: number) => new Date(Date.UTC(2025, 5, 1, 10, 0, 2 * t + k)).toISOString()
    const common = { sessionId: id, cwd: '/work/shop', version: '2.0.14', isSidechain: false, userType: 'external' }
    lines.push(
      JSON.stringify({
        ...common,
        type: 'user',
        uuid: `${id}-u${t}`,
        timestamp: at(0),
        message: { role: 'user', content: `fix the cart total ${id} ${t}` },
      }),
      JSON.stringify({
        ...common,
        type: 'assistant',
        uuid: `${id}-a${t}`,
        timestamp: at(1),
        message: {
          id: `msg_${id}_${t}`,
          role: 'assistant',
          content: [{ type: 'text', text: `The totalPrice in src/cart.ts rounds twice (${t}).` }],
        },
      }),
    )
  }
  return `${lines.join('\n')}\n`
}

/** A Claude Code transcript of `calls` Bash calls, each with an output of 4,000+ characters (2 lines each), in session `id`. */
function longToolOutputs(id: string, calls: number): string {
  const lines: string[] = []
  for (let t = 0; t < calls; t++) {
    const at = (k: number) => new Date(Date.UTC(2025, 5, 2, 10, 0, 2 * t + k)).toISOString()
    const common = { sessionId: id, cwd: '/work/shop', version: '2.0.14', isSidechain: false, userType: 'external' }
    const output = Array.from({ length: 120 }, (_, k) => `PASS src/cart/total-${t}-${k}.test.ts (${k} ms) checkout rounding`).join('\n')
    lines.push(
      JSON.stringify({
        ...common,
        type: 'assistant',
        uuid: `${id}-a${t}`,
        timestamp: at(0),
        message: {
          id: `msg_${id}_${t}`,
          role: 'assistant',
          content: [{ type: 'tool_use', id: `toolu_${id}_${t}`, name: 'Bash', input: { command: `npm test -- cart ${t}` } }],
        },
      }),
      JSON.stringify({
        ...common,
        type: 'user',
        uuid: `${id}-u${t}`,
        timestamp: at(1),
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${id}_${t}`, content: output }] },
      }),
    )
  }
  return `${lines.join('\n')}\n`
}

describe('import in batches', () => {
  it('appends the events of many small files in batches of IMPORT_BATCH_EVENTS and still reports each file its own counts', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    mkdirSync(path.join(t.dir, 'p'))
    // 31 files of 20 events: 620 events, so 2 batches (500 + 120) instead of one per file.
    for (let f = 0; f < 31; f++) writeFileSync(path.join(t.dir, 'p', `s${String(f).padStart(2, '0')}.jsonl`), transcript(`s${f}`, 10))
    const { engine, store } = createTestEngine()
    const append = vi.spyOn(store, 'append')
    const report = await engine.importPath(t.dir)
    expect(append.mock.calls.map(([batch]) => batch.length)).toEqual([IMPORT_BATCH_EVENTS, 620 - IMPORT_BATCH_EVENTS])
    expect(report.files).toHaveLength(31)
    for (const f of report.files) expect(f).toMatchObject({ read: 20, imported: 20, duplicates: 0, observations: 20, covered: 0 })
    expect(report).toMatchObject({ read: 620, imported: 620, duplicates: 0, observations: 620 })

    // The file whose events straddle the two batches is counted in both; a re-import finds every event stored.
    const one = createTestEngine()
    const alone = await one.engine.importPath(path.join(t.dir, 'p', 's25.jsonl'))
    expect(report.files[25]).toMatchObject({ imported: alone.imported, observations: alone.observations })
    const again = await engine.importPath(t.dir)
    for (const f of again.files) expect(f).toMatchObject({ imported: 0, duplicates: 20, observations: 0 })
    expect((await engine.stats()).events).toBe(620)
  })
})

/** Every table an import writes (the log, derived rows, the full-text index's rows and pages), as text. */
function dump(file: string): Record<string, string> {
  return dumpTables(file, [
    'events',
    'observations',
    'observation_copies',
    'sessions',
    'projects',
    'entities',
    'entity_mentions',
    'memories',
    'kept_ids',
    'search_fts',
    'search_fts_data',
    'search_fts_docsize',
  ])
}

describe.skipIf(!existsSync(fileURLToPath(BUILT)))('import with a derive pool (the built worker)', () => {
  it('stores what an import without workers stores (log, observations, full-text rows and pages, entities) and reports the same, a re-import included', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const src = path.join(t.dir, 'src')
    mkdirSync(src)
    // The repository's Claude Code and Codex fixtures, then 80 sessions of 20 events: 3 whole batches and a tail.
    const fixtures = fileURLToPath(new URL('../../fixtures/transcripts/', import.meta.url))
    copyFileSync(path.join(fixtures, 'claude-code', 'mixed-session.jsonl'), path.join(src, 'a-claude.jsonl'))
    copyFileSync(path.join(fixtures, 'codex', 'rollout-mixed.jsonl'), path.join(src, 'a-codex.jsonl'))
    for (let f = 0; f < 80; f++) writeFileSync(path.join(src, `s${String(f).padStart(2, '0')}.jsonl`), transcript(`s${f}`, 10))
    // Long tool outputs, which the store keeps compressed.
    writeFileSync(path.join(src, 't-long.jsonl'), longToolOutputs('t-long', 12))
    const reports: unknown[] = []
    const dumps: Record<string, string>[] = []
    for (const pool of [false, true]) {
      forcePool.on = pool
      const file = path.join(t.dir, `${pool ? 'pool' : 'plain'}.db`)
      const clock = createManualClock(T0)
      const store = openSqliteStore({ path: file }, () => clock.now())
      const engine = new MnemoEngine({ store, clock, cwd: '/work/demo-app', contextBudgetTokens: 2000, timeZone: 'Europe/Berlin' })
      const append = vi.spyOn(store, 'append')
      const first = await engine.importPath(src)
      const again = await engine.importPath(src)
      reports.push({ first, again, batches: append.mock.calls.map(([batch]) => batch.length) })
      await store.close()
      dumps.push(dump(file))
    }
    const [plain, pooled] = reports as { first: { imported: number }; again: { duplicates: number } }[]
    expect(plain!.first.imported).toBeGreaterThan(3 * IMPORT_BATCH_EVENTS)
    expect(plain!.again.duplicates).toBe(plain!.first.imported)
    // Every event of both imports was derived and its payload encoded by the worker (a re-import's duplicates too: they are derived before the
    // store finds them stored).
    expect(forcePool.derived).toBe(2 * plain!.first.imported)
    expect(forcePool.payloads).toBe(2 * plain!.first.imported)
    expect(forcePool.texts).toBe(2 * 12)
    expect(pooled).toEqual(plain)
    expect(dumps[1]).toEqual(dumps[0])
  })
})
