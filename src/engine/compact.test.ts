import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createTestEngine, hookPayload, T0 } from '../testing/test-mnemo.js'
import type { MnemoEngine } from './mnemo.js'

const ROOT = path.resolve(import.meta.dirname, '../..')
const CUT = Date.parse('2029-01-01T00:00:00Z')
const NEW_SESSION_AT = Date.parse('2030-01-01T00:00:00Z')

/** Everything a query can see: every row, every recall, every context block and graph, in a comparable form. */
async function snapshot(engine: MnemoEngine): Promise<unknown> {
  const projects = await engine.listProjects()
  const ids = projects.map((p) => p.id)
  const observations = []
  for (let before: number | undefined; ; ) {
    const page = await engine.browseObservations({
      projectIds: ids,
      order: 'desc',
      limit: 500,
      ...(before !== undefined ? { beforeSeq: before } : {}),
    })
    observations.push(...page.map(({ eventSeq: _seq, ...o }) => o))
    if (page.length < 500) break
    before = page.at(-1)!.eventSeq
  }
  const recalls = []
  for (const q of ['decorators', 'JWT middleware auth', 'what did Caroline research', 'npm test failed', 'rate limiting', 'yesterday']) {
    recalls.push((await engine.recall(q, { limit: 20 })).map((h) => [h.id, h.score, h.snippet]))
  }
  return {
    projects,
    observations: observations.sort((a, b) => a.id.localeCompare(b.id)),
    sessions: await engine.sessions({ limit: 1000 }),
    memories: await engine.browseMemories({ projectIds: ids, state: 'all', offset: 0, limit: 10_000 }),
    recalls,
    contexts: await Promise.all(projects.map(async (p) => (await engine.context({ project: p, budgetTokens: 4000 })).text)),
    graphs: await Promise.all(projects.map((p) => engine.entityGraph([p.id], undefined, 30))),
  }
}

/** A store with every capture format, mnemo's own operations, and events on both sides of the cut. */
async function seeded() {
  const t = createTestEngine()
  const { engine, clock } = t
  await engine.importPath(path.join(ROOT, 'fixtures/transcripts'))
  await engine.importPath(path.join(ROOT, 'fixtures/locomo/mini-locomo.json'))
  const hook = async (event: string, fields: Record<string, unknown>, session: string): Promise<void> => {
    await engine.captureHook(event, hookPayload(event, fields, session))
    clock.advance(1000)
  }
  await hook('UserPromptSubmit', { prompt: 'add JWT middleware to the auth routes' }, 'old')
  await hook(
    'PostToolUse',
    {
      tool_name: 'Edit',
      tool_use_id: 'e1',
      tool_input: { file_path: '/work/demo-app/src/auth.ts', new_string: 'verify()' },
      tool_response: { ok: true },
    },
    'old',
  )
  await hook(
    'PostToolUseFailure',
    { tool_name: 'Bash', tool_use_id: 'b1', tool_input: { command: 'npm test' }, error: 'npm test failed: 2 failing' },
    'old',
  )
  await hook('SessionEnd', { reason: 'exit' }, 'old')
  await engine.remember('rate limiting goes in src/middleware next to auth', { kind: 'decision' })
  await engine.consolidate({ idleMs: 0 })
  // The fixtures' transcripts are from 2026; the cut falls after them, and one session comes after the cut.
  clock.set(NEW_SESSION_AT)
  await hook('UserPromptSubmit', { prompt: 'now add rate limiting' }, 'new')
  return t
}

describe('mnemo compact: folding old capture events into what they derived', () => {
  it('changes no answer — rows, ids, recall, context, graph — now, after a rebuild, and after export and import', async () => {
    const { engine, clock } = await seeded()
    const before = await snapshot(engine)
    const cut = CUT
    const newest = (
      await engine.browseObservations({ projectIds: (await engine.listProjects()).map((p) => p.id), order: 'desc', limit: 1 })
    )[0]!

    const r = await engine.compact({ before: cut })
    expect(r.events).toBeGreaterThan(20)
    expect(r.payloadBytesAfter).toBeLessThan(r.payloadBytesBefore)
    expect(await snapshot(engine)).toEqual(before)

    // Newer events and mnemo's own operations are kept as they were.
    const formats = new Map<string, string[]>()
    const lines: string[] = []
    await engine.exportJsonl((l) => lines.push(l))
    for (const rec of lines.map((l) => JSON.parse(l) as { kind: string; format?: string; ts?: number; idemKey?: string })) {
      if (rec.kind !== 'event') continue
      const key = rec.ts! < cut ? 'old' : 'new'
      formats.set(key, [...(formats.get(key) ?? []), rec.format!])
    }
    expect(formats.get('old')).toContain('folded')
    expect(formats.get('old')).toContain('mnemo')
    expect(formats.get('new')).not.toContain('folded')
    expect(await engine.show(newest.id)).toMatchObject({ type: 'observation' })

    await engine.rebuild()
    expect(await snapshot(engine)).toEqual(before)

    const other = createTestEngine()
    other.clock.set(clock.now()) // the context block names the time it was generated
    const fresh = other.engine
    const imported = await fresh.importExport(lines.join('\n'), 'export.jsonl')
    expect(imported.events).toBe(lines.filter((l) => l.includes('"kind":"event"')).length)
    expect(await snapshot(fresh)).toEqual(before)
    expect((await engine.auditLog(1))[0]).toMatchObject({ action: 'compact', actor: 'cli', count: r.events })
  })

  it('is idempotent, and can be limited to one project', async () => {
    const { engine } = await seeded()
    const demo = (await engine.resolveProjects('demo-app'))[0]!
    // Of the old session's four hook events, the two whose stored payload (compressed, schema 11) takes more bytes than
    // what they derived would: a third is longer as JSON but compresses better raw, so folding it would grow the log.
    expect((await engine.compact({ before: CUT, project: demo, vacuum: false })).events).toBe(2)
    expect((await engine.compact({ before: CUT, project: demo, vacuum: false })).events).toBe(0)
    // The other projects' events were not folded: a compaction of everything still finds them.
    expect((await engine.compact({ before: CUT, vacuum: false })).events).toBeGreaterThan(20)
    expect((await engine.compact({ before: CUT, vacuum: false })).events).toBe(0)
  })

  it('refuses a time that is not one', async () => {
    const { engine } = createTestEngine()
    await expect(engine.compact({ before: Number.NaN })).rejects.toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
    expect((await engine.compact({ before: T0 })).events).toBe(0)
  })
})
