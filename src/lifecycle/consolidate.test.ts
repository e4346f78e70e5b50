import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createTestEngine, hookPayload, T0 } from '../testing/test-mnemo.js'
import type { Observation } from '../core/types.js'
import { retention, statementsFromPrompts } from './consolidate.js'

const DEMO = path.resolve(import.meta.dirname, '../../fixtures/demo/claude-code-session.jsonl')
const DAY = 86_400_000

/** Plays the demo Claude Code session (hook payloads) into an engine, one event per second. */
async function playDemo() {
  const t = createTestEngine({ cwd: '/home/demo/acme-api' })
  for (const line of readFileSync(DEMO, 'utf8')
    .split('\n')
    .filter((l) => l.trim())) {
    const { event, payload } = JSON.parse(line) as { event: string; payload: unknown }
    await t.engine.captureHook(event, JSON.stringify(payload))
    t.clock.advance(1000)
  }
  return t
}

describe('consolidation (deterministic)', () => {
  it('summarises a finished session with provenance, and derives the lesson of a fixed failure', async () => {
    const { engine } = await playDemo()
    const r = await engine.consolidate()
    // The demo's second session only started: not finished, not idle.
    expect(r).toMatchObject({ sessions: 1, summaries: 1, lessons: 1 })
    const [summary] = await engine.recall('Session JWT authentication', { limit: 1 })
    const shown = await engine.show(summary!.id)
    if (shown.type !== 'memory') throw new Error('expected a memory')
    expect(shown.memory.kind).toBe('summary')
    expect(shown.memory.text).toMatch(/^Session 2025-06-14 \(claude-code, 11 observations\)\. Asked: Add JWT authentication/)
    expect(shown.memory.sources.length).toBeGreaterThanOrEqual(4)
    expect(shown.memory.sources.every((id) => id.startsWith('obs_'))).toBe(true)
    const [lesson] = await engine.recall('npm test orders failed passed after editing', { limit: 1 })
    const lessonShown = await engine.show(lesson!.id)
    if (lessonShown.type !== 'memory') throw new Error('expected a memory')
    expect(lessonShown.memory).toMatchObject({
      kind: 'lesson',
      text: '`npm test -- orders` failed (FAIL test/orders.test.ts expected 200 "OK", got 401 "Unauthorized" ReferenceError: validateToken is not defined in src/app.ts); it passed after editing src/app.ts, test/orders.test.ts.',
    })
    expect(lessonShown.memory.sources).toHaveLength(4)
  })

  it('summarises a session longer than it reads from its start and its end: the latest requests are in the summary', async () => {
    const { engine, clock } = createTestEngine()
    const hook = (event: string, fields: Record<string, unknown>) =>
      engine.captureHook(event, JSON.stringify({ session_id: 'long', cwd: '/work/demo-app', hook_event_name: event, ...fields }))
    for (let i = 1; i <= 2600; i++) {
      await hook('UserPromptSubmit', { prompt: `Step ${i}: tune module ${i}` })
      await hook('PostToolUse', {
        tool_name: 'Edit',
        tool_use_id: `e${i}`,
        tool_input: { file_path: `/work/demo-app/src/m${i}.ts`, old_string: 'a', new_string: 'b' },
        tool_response: {},
      })
      clock.advance(1000)
    }
    clock.advance(DAY)
    await engine.consolidate()
    const [summary] = (
      await engine.browseMemories({ projectIds: (await engine.listProjects()).map((p) => p.id), state: 'all', offset: 0, limit: 10 })
    ).memories.filter((m) => m.kind === 'summary')
    expect(summary!.text).toMatch(
      /^Session 2025-06-14 \(claude-code, 5200 observations\)\. Asked: Step 1: tune module 1 \| \(\d+\+ more\) \| Step 2599: tune module 2599 \| Step 2600: tune module 2600\./,
    )
  })

  it('stores the confidence of what it derived, keeps it through rebuild, and a stated memory has none', async () => {
    const { engine, clock } = await playDemo()
    await engine.consolidate()
    clock.advance(1000)
    const p = (await engine.resolveProjects('acme-api')).map((x) => x.id)
    const byKind = async (kind: string) =>
      (await engine.browseMemories({ projectIds: p, state: 'all', offset: 0, limit: 100 })).memories.filter((m) => m.kind === kind)
    // "Remember for later: rate limiting should go in the same middleware folder" — a cue phrase, 0.7; the fixed failure's lesson, 0.6.
    expect((await byKind('preference')).map((m) => m.confidence)).toEqual([0.7])
    expect((await byKind('lesson')).map((m) => m.confidence)).toEqual([0.6])
    expect((await byKind('summary')).map((m) => m.confidence)).toEqual([undefined])
    await engine.rebuild()
    expect((await byKind('preference')).map((m) => m.confidence)).toEqual([0.7])
    // Stating the same thing makes it a stated memory.
    const stated = (
      await engine.remember((await byKind('preference'))[0]!.text, {
        kind: 'preference',
        project: { root: '/home/demo/acme-api', name: 'acme-api' },
      })
    ).memory
    expect(stated).toMatchObject({ id: (await byKind('preference'))[0]!.id, confidence: undefined, seenCount: 2 })
  })

  it('forgetting an observation takes the memories derived from it; a session delete takes its summary and lesson', async () => {
    const { engine, clock } = await playDemo()
    await engine.consolidate()
    clock.advance(1000)
    const p = (await engine.resolveProjects('acme-api'))[0]!
    const derived = async (kind: string) =>
      (await engine.browseMemories({ projectIds: [p.id], state: 'all', offset: 0, limit: 100 })).memories.filter((m) => m.kind === kind)
    const summary = (await derived('summary'))[0]!
    const cited = summary.sources[1]!
    await engine.forget(cited, 'test')
    expect(await derived('summary')).toEqual([])
    // Consolidation writes the summary again from what remains, without the forgotten step.
    await engine.consolidate()
    const again = (await derived('summary'))[0]!
    expect(again.sources).not.toContain(cited)
    expect(again.sources.length).toBeGreaterThan(0)
    // Deleting the session takes its summary, its lesson and the preference stated in it.
    const session = (await engine.sessions({ projectIds: [p.id] })).find((s) => s.observationCount > 5)!
    await engine.deleteScope({ project: p, session: session.id }, 'test')
    for (const kind of ['summary', 'lesson', 'preference']) expect(await derived(kind), kind).toEqual([])
    await engine.rebuild()
    for (const kind of ['summary', 'lesson', 'preference']) expect(await derived(kind), kind).toEqual([])
  })

  it('is idempotent, and a resumed session gets a new summary that supersedes the old one', async () => {
    const { engine, clock } = await playDemo()
    await engine.consolidate()
    expect(await engine.consolidate()).toMatchObject({ summaries: 0, lessons: 0 })
    // An archived summary is not written again either.
    const [summary] = await engine.recall('Session JWT authentication', { limit: 1 })
    await engine.setMemoryState(summary!.id, 'archive')
    expect(await engine.consolidate()).toMatchObject({ summaries: 0 })
    await engine.setMemoryState(summary!.id, 'restore')
    // The session is resumed: one more prompt, then it ends again.
    await engine.captureHook(
      'UserPromptSubmit',
      JSON.stringify({ session_id: '4f1c2e7a-demo-0001', cwd: '/home/demo/acme-api', prompt: 'Also add a rateLimit middleware' }),
    )
    clock.advance(1000)
    await engine.captureHook('SessionEnd', JSON.stringify({ session_id: '4f1c2e7a-demo-0001', cwd: '/home/demo/acme-api', reason: 'exit' }))
    expect(await engine.consolidate()).toMatchObject({ summaries: 1 })
    const summaries = (await engine.exportMarkdown()).get('acme-api.md')!
    expect(summaries).toContain('~~Session 2025-06-14 (claude-code, 11 observations)')
    expect(summaries).toContain('Session 2025-06-14 (claude-code, 12 observations)')
    expect(summaries).toContain('Also add a rateLimit middleware')
  })

  it('archives what decayed (a fact drawn from a prompt), never a pinned memory', async () => {
    const { engine, clock } = createTestEngine({ cwd: '/p/a' })
    const P = { root: '/p/a', name: 'a' }
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'fyi we use the legacy VPN client for staging' }, 'sess-1', '/p/a'),
    )
    clock.advance(60 * 60_000)
    await engine.consolidate()
    const derived = (await engine.currentMemories((await engine.listProjects())[0]!.id)).filter((m) => m.sources.length > 0)
    const fact = derived.find((m) => m.kind === 'fact')!
    const summary = derived.find((m) => m.kind === 'summary')!
    expect([fact.text, summary.kind]).toEqual(['fyi we use the legacy VPN client for staging', 'summary'])
    const pinned = (await engine.remember('never force-push to main', { project: P, kind: 'lesson' })).memory
    await engine.setMemoryState(pinned.id, 'pin')
    clock.advance(60 * DAY)
    clock.advance(60 * DAY)
    const r = await engine.consolidate()
    expect((await engine.history(fact.id))[0]!.archivedAt).toBe(clock.now())
    expect((await engine.history(pinned.id))[0]!.archivedAt).toBeUndefined()
    expect(r.archived).toBeGreaterThanOrEqual(1)
  })

  it('never archives a memory a person stated, of any kind, nor a decision or preference drawn from a prompt: 22 months unused, still in recall and context', async () => {
    const { engine, clock } = createTestEngine({ cwd: '/p/a' })
    const P = { root: '/p/a', name: 'a' }
    const stated = [
      (await engine.remember('the staging VPN needs the legacy client', { project: P })).memory,
      (await engine.remember('deploys go through the release branch', { project: P, kind: 'decision' })).memory,
      (await engine.remember('answers in British English', { project: P, kind: 'preference' })).memory,
      (await engine.remember('run migrations before the seed script', { project: P, kind: 'lesson' })).memory,
    ]
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: "let's go with zod for validation" }, 'sess-1', '/p/a'),
    )
    clock.advance(60 * 60_000)
    await engine.consolidate()
    const decision = (await engine.currentMemories((await engine.listProjects())[0]!.id)).find(
      (m) => m.kind === 'decision' && m.sources.length > 0,
    )!
    expect(decision.text).toContain('zod')
    clock.advance(670 * DAY)
    await engine.consolidate()
    for (const m of [...stated, decision]) expect((await engine.history(m.id))[0]!.archivedAt).toBeUndefined()
    const block = (await engine.context({ project: P })).text
    for (const m of [...stated, decision]) expect(block).toContain(m.text)
    expect((await engine.recall('staging VPN legacy client')).map((h) => h.id)).toContain(stated[0]!.id)
  })
})

describe('retention', () => {
  it('halves every half-life and grows with use', async () => {
    const m = { kind: 'fact', createdAt: 0, lastSeenAt: 0, flags: [] as string[] } as unknown as Parameters<typeof retention>[0]
    expect(retention(m, 0, 0)).toBeCloseTo(0.8)
    expect(retention(m, 0, 30 * DAY)).toBeCloseTo(0.4)
    expect(retention(m, 1, 30 * DAY)).toBeCloseTo(0.4 * (1 + Math.log(2)))
  })
})

describe('statements from prompts', () => {
  const prompt = (id: string, text: string, kind: Observation['kind'] = 'prompt'): Observation =>
    ({ id, kind, role: 'user', text, files: [], flags: [], ts: T0, eventSeq: 0 }) as unknown as Observation

  it('keeps stated preferences, decisions and facts with their source, and nothing else', () => {
    const found = statementsFromPrompts([
      prompt('obs_1', 'Add JWT auth to the orders API. We always use pnpm here, never npm. Can you also check the tests?'),
      prompt('obs_2', "Great. Remember for later: rate limiting goes in src/middleware, next to auth. Let's see what breaks."),
      prompt('obs_3', "Never mind, that was wrong. Let's go with zod for validation. I prefer small commits with honest messages."),
      prompt('obs_4', 'Our CI runs on GitHub Actions. Would we always need this? Run the tests.'),
      prompt('obs_5', 'We always use pnpm here, never npm.'),
      prompt('obs_6', 'I prefer tabs over spaces in every file.', 'message'),
    ])
    expect(found).toEqual([
      { kind: 'preference', text: 'We always use pnpm here, never npm.', sources: ['obs_1'], confidence: 0.7 },
      {
        kind: 'preference',
        text: 'Remember for later: rate limiting goes in src/middleware, next to auth.',
        sources: ['obs_2'],
        confidence: 0.7,
      },
      { kind: 'decision', text: "Let's go with zod for validation.", sources: ['obs_3'], confidence: 0.6 },
      { kind: 'preference', text: 'I prefer small commits with honest messages.', sources: ['obs_3'], confidence: 0.7 },
      { kind: 'fact', text: 'Our CI runs on GitHub Actions.', sources: ['obs_4'], confidence: 0.5 },
    ])
  })

  it('consolidation stores them as memories of their kind, once, with provenance', async () => {
    const { engine } = await playDemo()
    const r = await engine.consolidate()
    expect(r.memories).toBe(1)
    const project = (await engine.sessions())[0]!.projectId
    const preferences = (await engine.currentMemories(project)).filter((m) => m.kind === 'preference')
    expect(preferences.map((m) => m.text)).toEqual([
      'Remember for later: rate limiting should go in the same middleware folder, next to auth.',
    ])
    const source = await engine.show(preferences[0]!.sources[0]!)
    if (source.type !== 'observation') throw new Error('expected an observation')
    expect(source.observation.kind).toBe('prompt')
    expect((await engine.consolidate()).memories).toBe(0)
  })
})
