import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTestEngine, tempDir } from '../testing/test-mnemo.js'
import { IMPORT_BATCH_EVENTS } from './import-files.js'

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!()
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
