import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { estimateTokens } from '../core/text.js'
import { coverage, DEFAULT_GATE, gateTerms, opensGate, weighTerms } from '../context/relevance-gate.js'
import { openMnemo, type OpenedMnemo } from '../runtime/open-mnemo.js'
import { injectionChannel, injectionRequest } from './prompt-recall.js'
import { createTestEngine, hookPayload, tempDir } from '../testing/test-mnemo.js'

const P = { root: '/work/demo-app', name: 'demo-app' }
const NOW = { project: P, agent: 'claude-code', sessionKey: 'now' }
const RATE = 'We rate-limit the public API with a token bucket in src/middleware/rate-limit.ts: 100 requests per minute per key.'

/** A project with a few memories and some unrelated busy work in earlier sessions. */
async function seeded() {
  const t = createTestEngine()
  const { engine, clock } = t
  const rate = (await engine.remember(RATE, { project: P, kind: 'decision' })).memory
  clock.advance(1000)
  const db = (await engine.remember('The orders database is PostgreSQL 14, hosted on the staging cluster.', { project: P, kind: 'fact' }))
    .memory
  for (let i = 0; i < 30; i++) {
    clock.advance(1000)
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: `refactor module ${i} of the billing service and run the tests` }, `old-${i % 3}`),
    )
  }
  clock.advance(60_000)
  return { ...t, rate, db }
}

describe('per-prompt recall', () => {
  it('injects what the prompt is about, labelled and delimited, within the budget', async () => {
    const { engine, rate } = await seeded()
    const r = await engine.promptContext(NOW, 'how do we rate-limit the API?')
    expect(r.itemIds).toContain(rate.id)
    expect(r.text.startsWith('<mnemo-recall>\n')).toBe(true)
    expect(r.text).toContain(`- [decision · 2025-06-14] ${RATE}`)
    expect(r.text.endsWith('</mnemo-recall>')).toBe(true)
    expect(r.tokens).toBeLessThanOrEqual(300)
  })

  it('injects nothing when no candidate clears the gate: unknown words, fillers only, or words every document has', async () => {
    const { engine } = await seeded()
    // Words the project never saw weigh most and stay uncovered.
    expect((await engine.promptContext(NOW, 'what is the weather forecast for Lisbon tomorrow?')).text).toBe('')
    // Nothing to recall for.
    expect((await engine.promptContext(NOW, 'thanks, please continue')).text).toBe('')
    // "module", "billing" and "tests" are in every busy-work prompt: common words are no evidence (minTermIdf).
    const common = await engine.promptContext(NOW, 'billing module tests')
    expect(common.judged.length).toBeGreaterThan(0)
    expect(common.text).toBe('')
  })

  it('opens the gate exactly at the share threshold and not below it', () => {
    // Two terms of equal weight: a text holding one covers exactly half.
    const terms = weighTerms(gateTerms('zanzibar quokka'), 100, () => 1)
    expect(terms.map((t) => t.stems)).toEqual([['zanzibar'], ['quokka']])
    const half = coverage(terms, 'a zanzibar note')
    expect(half.share).toBeCloseTo(0.5, 10)
    expect(opensGate(terms, half, { ...DEFAULT_GATE, minShare: 0.5 })).toBe(true)
    expect(opensGate(terms, half, { ...DEFAULT_GATE, minShare: 0.5000001 })).toBe(false)
    // Covering the mass with common terms only does not open it.
    const common = weighTerms(gateTerms('zanzibar quokka'), 100, () => 90)
    expect(opensGate(common, coverage(common, 'zanzibar quokka'), DEFAULT_GATE)).toBe(false)
  })

  it('never injects what the session already has: its SessionStart block, an earlier prompt, its own observations', async () => {
    const { engine, rate, db } = await seeded()
    // SessionStart showed both memories: a prompt about one of them injects nothing new.
    const start = await engine.context({ project: P, excludeSessionKey: 'now', recordFor: { agent: 'claude-code', sessionKey: 'now' } })
    expect(start.memoryIds).toEqual(expect.arrayContaining([rate.id, db.id]))
    const r = await engine.promptContext(NOW, 'how do we rate-limit the API?')
    expect(r.judged.find((j) => j.id === rate.id)?.skipped).toBe('already-shown')
    expect(r.itemIds).not.toContain(rate.id)
    // Another session gets it once, then never again.
    const other = { ...NOW, sessionKey: 'other' }
    expect((await engine.promptContext(other, 'how do we rate-limit the API?')).itemIds).toContain(rate.id)
    expect((await engine.promptContext(other, 'rate-limit per key?')).itemIds).not.toContain(rate.id)
    // The session's own prompt is never recalled back to it.
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'the zanzibarquokka flag is set in config.yaml' }, 'third'),
    )
    const own = await engine.promptContext({ ...NOW, sessionKey: 'third' }, 'where is the zanzibarquokka flag?')
    expect(own.judged.every((j) => j.skipped === 'this-session')).toBe(true)
    expect(own.text).toBe('')
  })

  it('caps each item at a third of the budget and keeps the block well-formed with astral text', async () => {
    const { engine } = createTestEngine()
    const long = (await engine.remember(`zanzibarquokka deployment notes: ${'🔴 step 👨‍👩‍👧 done; '.repeat(400)}`, { project: P })).memory
    await engine.remember('zanzibarquokka is deployed by the release script', { project: P })
    const r = await engine.promptContext(NOW, 'how is zanzibarquokka deployed?', 300)
    expect(r.itemIds).toHaveLength(2)
    const line = r.text.split('\n').find((l) => l.includes(long.id))!
    expect(estimateTokens(line)).toBeLessThanOrEqual(100)
    expect(line).toMatch(/… \(cut; memory_show mem_\w+\)$/)
    expect(r.text.isWellFormed()).toBe(true)
    expect(r.tokens).toBeLessThanOrEqual(300)
  })

  it('with record: false returns what it shows without recording it; recordShown records it for that session only', async () => {
    const { engine, rate } = await seeded()
    const unrecorded = await engine.promptContext(NOW, 'how do we rate-limit the API?', 300, undefined, { record: false })
    expect(unrecorded.shown).toEqual([{ itemId: rate.id, what: 'item' }])
    // Not recorded: the same prompt is offered it again.
    expect((await engine.promptContext(NOW, 'how do we rate-limit the API?', 300, undefined, { record: false })).itemIds).toEqual(
      unrecorded.itemIds,
    )
    await engine.recordShown(NOW, unrecorded.shown)
    expect((await engine.promptContext(NOW, 'how do we rate-limit the API?')).itemIds).not.toContain(rate.id)
    expect((await engine.promptContext({ ...NOW, sessionKey: 'other' }, 'how do we rate-limit the API?')).itemIds).toContain(rate.id)
  })

  it('judges the hits recall ranks for the prompt, in its order, without working out the warnings nothing shows', async () => {
    const { engine, store } = await seeded()
    const prompt = 'what did we decide about the billing service rate-limit on 16 June 2023?'
    const projectIds = (await engine.resolveProjects(P.root)).map((p) => p.id)
    const ranked = await engine.recall(prompt, { projectIds, limit: 12, channels: ['bm25', 'graph', 'time'] })
    // The full recall probes the named day for one document to warn that it has none (the time channel reads its
    // candidates apart); the per-prompt one reads the same ranking and no more.
    expect(ranked.warnings).toContainEqual(expect.stringContaining('nothing was recorded in this scope for "on 16 June 2023"'))
    let probes = 0
    const inRange = store.docsInTimeRange.bind(store)
    store.docsInTimeRange = (q) => {
      if (q.limit === 1) probes++
      return inRange(q)
    }
    const judged = (await engine.promptContext(NOW, prompt)).judged
    expect(judged.map((j) => j.id)).toEqual(ranked.map((h) => h.id))
    expect(probes).toBe(0)
  })

  it('asks for an injection only where the agent has a channel and the payload has a session and words or a file', () => {
    const prompt = { session_id: 's', cwd: P.root, prompt: 'how do we rate-limit?' }
    expect(injectionRequest('claude-code', 'UserPromptSubmit', prompt)).toEqual({
      channel: 'UserPromptSubmit',
      sessionKey: 's',
      prompt: 'how do we rate-limit?',
    })
    expect(injectionRequest('gemini', 'UserPromptSubmit', prompt)).toMatchObject({ channel: 'BeforeAgent' })
    expect(injectionRequest('cursor', 'UserPromptSubmit', prompt)).toBeUndefined()
    // Own keys of the channel table only: `constructor` is no event.
    expect(injectionChannel('cursor', 'constructor')).toBeUndefined()
    expect(injectionRequest('claude-code', 'UserPromptSubmit', { ...prompt, session_id: '' })).toBeUndefined()
    expect(injectionRequest('claude-code', 'UserPromptSubmit', { ...prompt, prompt: ' ' })).toBeUndefined()
    expect(injectionRequest('claude-code', 'UserPromptSubmit', [prompt])).toBeUndefined()
    const read = { session_id: 's', cwd: P.root, tool_name: 'Read', tool_input: { file_path: `${P.root}/src/a.ts` } }
    expect(injectionRequest('claude-code', 'PreToolUse', read)).toEqual({
      channel: 'PreToolUse',
      sessionKey: 's',
      files: [`${P.root}/src/a.ts`],
    })
    expect(injectionRequest('claude-code', 'PostToolUse', read)).toBeUndefined()
    expect(injectionRequest('codex', 'PostToolUse', { ...read, tool_input: { command: 'ls' } })).toBeUndefined()
  })

  it('refuses a budget out of range, naming it', async () => {
    const { engine } = createTestEngine()
    await expect(engine.promptContext(NOW, 'x', 20)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: 'per-prompt budget must be an integer 100–4000 tokens (got 20)',
    })
  })
})

describe('corrections, not rewrites', () => {
  const opened: OpenedMnemo[] = []
  const cleanups: (() => void)[] = []
  afterEach(async () => {
    while (opened.length > 0) await opened.pop()!.close()
    while (cleanups.length > 0) cleanups.pop()!()
  })
  /** Two processes' worth of engines on one data directory: the session's and another one's. */
  function twoProcesses() {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const env = { MNEMO_HOME: t.dir, HOME: t.dir, MNEMO_TZ: 'UTC' }
    const a = openMnemo({ env, cwd: P.root })
    const b = openMnemo({ env, cwd: P.root })
    opened.push(a, b)
    return { a: a.engine, b: b.engine, home: t.dir }
  }

  it('a memory shown at SessionStart and superseded by another process is corrected once at the next prompt, the block never re-sent', async () => {
    const { a, b } = twoProcesses()
    const old = (await a.remember('The orders database is PostgreSQL 14.', { project: P })).memory
    const start = await a.context({ project: P, recordFor: { agent: 'claude-code', sessionKey: 'now' } })
    expect(start.memoryIds).toContain(old.id)
    const neu = (await b.remember('The orders database is MySQL 8 now.', { project: P, supersedes: old.id })).memory
    const r = await a.promptContext(NOW, 'thanks, continue')
    expect(r.corrections).toBe(1)
    expect(r.text).toContain(
      `- Correction: "The orders database is MySQL 8 now." (since ${new Date(neu.validFrom).toISOString().slice(0, 10)}); earlier this session said "The orders database is PostgreSQL 14." (${old.id}).`,
    )
    expect(r.text).not.toContain('<mnemo-context')
    // Once: the next prompt carries no correction, and the replacement counts as shown.
    const again = await a.promptContext(NOW, 'which database do the orders use?')
    expect(again.corrections).toBe(0)
    expect(again.itemIds).not.toContain(neu.id)
  })

  it('a memory injected by a prompt and then forgotten or archived by another process is corrected at the next prompt', async () => {
    const { a, b } = twoProcesses()
    const gone = (await a.remember('zanzibarquokka builds need the --legacy flag', { project: P })).memory
    const stale = (await a.remember('zanzibarquokka deploys go through the blue cluster', { project: P })).memory
    const first = await a.promptContext(NOW, 'zanzibarquokka builds and deploys?')
    expect(first.itemIds).toEqual(expect.arrayContaining([gone.id, stale.id]))
    await b.forget(gone.id)
    await b.setMemoryState(stale.id, 'archive')
    const r = await a.promptContext(NOW, 'ok')
    expect(r.corrections).toBe(2)
    expect(r.text).toContain(`- Correction: memory ${gone.id}, shown earlier in this session, was forgotten; disregard it.`)
    expect(r.text).toContain(
      `- Correction: "zanzibarquokka deploys go through the blue cluster" (${stale.id}), shown earlier in this session, was archived on`,
    )
    expect((await a.promptContext(NOW, 'ok')).text).toBe('')
    // Another session was never shown them: nothing to correct there.
    expect((await a.promptContext({ ...NOW, sessionKey: 'other' }, 'ok')).text).toBe('')
  })
})

describe('file hints', () => {
  it('brings past errors and decisions about a file once per file per session', async () => {
    const { engine, clock } = createTestEngine()
    const file = path.join(P.root, 'src/billing/invoice.ts')
    await engine.captureHook(
      'PostToolUseFailure',
      hookPayload(
        'PostToolUseFailure',
        {
          tool_name: 'Edit',
          tool_use_id: 't1',
          tool_input: { file_path: file, old_string: 'total: number', new_string: 'total: Money' },
          error: 'String to replace not found in file. TS2322 mismatch left in place.',
        },
        'earlier',
      ),
    )
    clock.advance(1000)
    const decision = (
      await engine.remember('src/billing/invoice.ts keeps amounts in integer cents, never floats', {
        project: P,
        kind: 'decision',
      })
    ).memory
    clock.advance(1000)
    const hints = await engine.fileHints(NOW, [file])
    expect(hints.files).toEqual(['src/billing/invoice.ts'])
    expect(hints.itemIds).toContain(decision.id)
    expect(hints.text).toContain('TS2322')
    expect(hints.text).toContain('[decision · src/billing/invoice.ts · 2025-06-14]')
    // Once per file per session; a new session gets them again.
    expect((await engine.fileHints(NOW, ['src/billing/invoice.ts'])).text).toBe('')
    expect((await engine.fileHints({ ...NOW, sessionKey: 'next' }, [file])).itemIds).toContain(decision.id)
    // A file with no history gives nothing.
    expect((await engine.fileHints(NOW, ['src/other.ts'])).text).toBe('')
  })
})
