import { describe, expect, it } from 'vitest'
import { createTestEngine, hookPayload } from '../testing/test-mnemo.js'
import type { MnemoEngine } from './mnemo.js'

const A = { root: '/p/alpha', name: 'alpha' }
const B = { root: '/p/beta', name: 'beta' }

/** A store with every kind of record: events from hooks, memories with a version chain, pin and archive state, a forget (tombstone, audit). */
async function seeded() {
  const t = createTestEngine()
  const { engine, clock } = t
  await engine.captureHook(
    'UserPromptSubmit',
    hookPayload('UserPromptSubmit', { prompt: 'add rate limiting to validateToken' }, 's1', '/p/alpha'),
  )
  clock.advance(1000)
  await engine.captureHook(
    'PostToolUse',
    hookPayload(
      'PostToolUse',
      {
        tool_name: 'Edit',
        tool_use_id: 'e1',
        tool_input: { file_path: '/p/alpha/src/auth.ts', new_string: 'rateLimit()' },
        tool_response: {},
      },
      's1',
      '/p/alpha',
    ),
  )
  clock.advance(1000)
  await engine.remember('orders DB is PostgreSQL 14', { project: A })
  clock.advance(1000)
  await engine.remember('orders DB migrated to MySQL 8', { project: A })
  const pinned = (await engine.remember('never force-push to main', { project: A, kind: 'lesson' })).memory
  await engine.setMemoryState(pinned.id, 'pin')
  const archived = (await engine.remember('the old cron ran at 03:00', { project: A })).memory
  await engine.setMemoryState(archived.id, 'archive')
  const gone = (await engine.remember('temporary note to forget', { project: A })).memory
  await engine.forget(gone.id)
  await engine.remember('beta uses redis for sessions', { project: B })
  // Other agents' events (hooks with --agent) travel too.
  await engine.captureHook(
    'BeforeAgent',
    JSON.stringify({ session_id: 'g1', cwd: '/p/beta', hook_event_name: 'BeforeAgent', prompt: 'gemini prompt about redis' }),
    'gemini',
  )
  await engine.captureHook(
    'beforeSubmitPrompt',
    JSON.stringify({
      conversation_id: 'c1',
      workspace_roots: ['/p/beta'],
      hook_event_name: 'beforeSubmitPrompt',
      prompt: 'cursor prompt about redis',
    }),
    'cursor',
  )
  return t
}

async function snapshot(engine: MnemoEngine) {
  const projects = await engine.listProjects()
  return {
    projects,
    sessions: await engine.sessions(),
    memories: (
      await Promise.all(
        projects.map(async (p) =>
          [...(await engine.exportMarkdown({ project: p })).values()].map((md) => md.replace(/, exported [^.]+\.\d+Z\./, '')),
        ),
      )
    ).flat(),
    recall: (await engine.recall('orders DB', { includeArchived: true })).map((h) => [h.id, h.ts]),
    history: await engine.history((await engine.recall('orders DB'))[0]!.id),
    audit: await engine.auditLog(10),
    stats: await engine.stats(),
  }
}

describe('export and import', () => {
  it('an export imported into an empty store reproduces every record, with ids, times, versions, pins, archive and tombstones', async () => {
    const { engine } = await seeded()
    const lines: string[] = []
    const manifest = await engine.exportJsonl((l) => lines.push(l))
    expect(manifest).toMatchObject({ format: 'mnemo-export', version: 1, project: null, counts: { tombstones: 1, audit: 1 } })
    const fresh = createTestEngine().engine
    const r = await fresh.importExport(lines.join('\n'), 'export.jsonl')
    expect(r).toMatchObject({ events: manifest.counts.events, duplicates: 0, tombstones: 1, audit: 1 })
    const [a, b] = [await snapshot(engine), await snapshot(fresh)]
    expect({ ...b, audit: b.audit.slice(1), stats: { ...b.stats, lastEventAt: undefined } }).toEqual({
      ...a,
      stats: { ...a.stats, lastEventAt: undefined },
    })
    // The tombstone came along: re-capturing the forgotten memory's event is still refused.
    expect((await fresh.exportJsonl(() => undefined)).counts.tombstones).toBe(1)
  })

  it('redacts secrets in an imported export (hand-made or from before a detector existed) before storing them', async () => {
    const { engine } = await seeded()
    const lines: string[] = []
    await engine.exportJsonl((l) => lines.push(l))
    // Put a raw key into one event's payload, as an edited or foreign export could hold it.
    const i = lines.findIndex((l) => l.includes('"kind":"event"') && l.includes('UserPromptSubmit'))
    const rec = JSON.parse(lines[i]!) as { payload: { prompt: string } }
    rec.payload.prompt = 'deploy with AKIAIOSFODNN7EXAMPLE now'
    lines[i] = JSON.stringify(rec)
    const fresh = createTestEngine().engine
    await fresh.importExport(lines.join('\n'), 'export.jsonl')
    const out: string[] = []
    await fresh.exportJsonl((l) => out.push(l))
    expect(out.join('\n')).not.toContain('AKIAIOSFODNN7EXAMPLE')
    expect((await fresh.sessions()).map((s) => s.title ?? '').join(' ')).not.toContain('AKIAIOSFODNN7EXAMPLE')
    expect(out.join('\n')).toContain('[REDACTED:aws-access-key]')
  })

  it('a project export holds that project only', async () => {
    const { engine } = await seeded()
    const lines: string[] = []
    await engine.exportJsonl((l) => lines.push(l), { project: (await engine.resolveProjects('beta'))[0]! })
    const events = lines
      .slice(1)
      .map((l) => JSON.parse(l) as { kind: string; project?: { root: string } })
      .filter((r) => r.kind === 'event')
    expect(events.map((e) => e.project!.root)).toEqual(['/p/beta', '/p/beta', '/p/beta'])
  })

  it('refuses a malformed file without storing anything, naming the line', async () => {
    const { engine } = await seeded()
    const lines: string[] = []
    await engine.exportJsonl((l) => lines.push(l))
    lines[3] = '{"kind":"event","seq":"three"}'
    const fresh = createTestEngine().engine
    await expect(fresh.importExport(lines.join('\n'), 'bad.jsonl')).rejects.toMatchObject({
      code: 'IMPORT_FAILED',
      message: expect.stringContaining('bad.jsonl:4: invalid record'),
    })
    expect((await fresh.stats()).events).toBe(0)
    await expect(fresh.importExport(lines.slice(0, 3).join('\n'), 'cut.jsonl')).rejects.toMatchObject({
      message: expect.stringContaining('truncated?'),
    })
    const future = JSON.stringify({ ...(JSON.parse(lines[0]!) as object), version: 2 })
    await expect(fresh.importExport(future, 'new.jsonl')).rejects.toMatchObject({
      message: 'new.jsonl:1: export format version 2 is not supported (this mnemo reads version 1)',
    })
    expect((await fresh.stats()).events).toBe(0)
  })

  it('a field capture already cut is not cut again: export → import → export is byte for byte the same', async () => {
    const { engine } = createTestEngine()
    await engine.captureHook(
      'PostToolUse',
      hookPayload('PostToolUse', {
        tool_name: 'Bash',
        tool_use_id: 'big',
        tool_input: { command: 'cat big.log' },
        tool_response: { stdout: 'line of output\n'.repeat(2500) },
      }),
    )
    const first: string[] = []
    await engine.exportJsonl((l) => first.push(l))
    expect(first.join('\n')).toMatch(/chars cut/)
    const copy = createTestEngine().engine
    await copy.importExport(first.join('\n'), 'big.jsonl')
    const second: string[] = []
    await copy.exportJsonl((l) => second.push(l))
    const events = (lines: string[]) => lines.filter((l) => l.includes('"kind":"event"'))
    expect(events(second)).toEqual(events(first))
  })

  it('importing the same export twice adds nothing', async () => {
    const { engine } = await seeded()
    const lines: string[] = []
    await engine.exportJsonl((l) => lines.push(l))
    const fresh = createTestEngine().engine
    await fresh.importExport(lines.join('\n'), 'x')
    const again = await fresh.importExport(lines.join('\n'), 'x')
    expect(again.events).toBe(0)
    expect(again.duplicates).toBe(JSON.parse(lines[0]!).counts.events)
  })

  it('writes a Markdown file per project: memories by kind, superseded versions struck through', async () => {
    const { engine } = await seeded()
    const files = await engine.exportMarkdown()
    expect([...files.keys()]).toEqual(['alpha.md', 'beta.md'])
    const alpha = files.get('alpha.md')!
    expect(alpha).toContain('## Facts\n\n- orders DB migrated to MySQL 8')
    expect(alpha).toContain('## Lessons\n\n- 📌 never force-push to main')
    expect(alpha).toContain('- ~~orders DB is PostgreSQL 14~~')
    expect(alpha).toContain('the old cron ran at 03:00 _(since 2025-06-14, archived)_')
    expect(alpha).not.toContain('temporary note to forget')
  })
})
