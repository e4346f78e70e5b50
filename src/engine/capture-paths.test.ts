import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestEngine, hookPayload, tempDir } from '../testing/test-mnemo.js'

// One Claude Code session seen through both capture paths: the hooks as it ran, and its transcript
// file imported afterwards (`mnemo import ~/.claude/projects/…`). Each step must be stored once.

const SESSION = 'sess-paths'
const CWD = '/nonexistent/mnemo-paths/app'
const at = (hms: string): number => Date.parse(`2026-03-01T${hms}.000Z`)

/** Real Claude Code transcript records (the shape of `~/.claude/projects/<slug>/<session>.jsonl`). */
function transcript(extra: object[] = []): string {
  const base = { sessionId: SESSION, cwd: CWD }
  const records = [
    {
      ...base,
      type: 'user',
      uuid: 'u-1',
      timestamp: '2026-03-01T10:00:00.000Z',
      message: { role: 'user', content: 'Fix the login bug in src/login.ts' },
    },
    {
      ...base,
      type: 'assistant',
      uuid: 'a-1',
      timestamp: '2026-03-01T10:00:05.000Z',
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me run the tests.' },
          { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'npm test' } },
        ],
      },
    },
    {
      ...base,
      type: 'user',
      uuid: 'u-2',
      timestamp: '2026-03-01T10:00:20.000Z',
      message: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: '1 failed: login throws' }],
      },
    },
    {
      ...base,
      type: 'assistant',
      uuid: 'a-2',
      timestamp: '2026-03-01T10:01:00.000Z',
      message: { role: 'assistant', content: [{ type: 'text', text: 'Fixed: login no longer throws.' }] },
    },
    ...extra,
  ]
  return records.map((r) => JSON.stringify(r)).join('\n')
}

/** The same steps as the hooks deliver them, a second or two after the transcript records. */
async function runHooks(engine: ReturnType<typeof createTestEngine>['engine']): Promise<void> {
  await engine.captureHook(
    'UserPromptSubmit',
    hookPayload('UserPromptSubmit', { prompt: 'Fix the login bug in src/login.ts' }, SESSION, CWD),
    'claude-code',
    at('10:00:01'),
  )
  await engine.captureHook(
    'PostToolUseFailure',
    hookPayload(
      'PostToolUseFailure',
      { tool_name: 'Bash', tool_use_id: 'toolu_1', tool_input: { command: 'npm test' }, error: '1 failed: login throws' },
      SESSION,
      CWD,
    ),
    'claude-code',
    at('10:00:21'),
  )
  await engine.captureHook(
    'Stop',
    hookPayload('Stop', { last_assistant_message: 'Fixed: login no longer throws.' }, SESSION, CWD),
    'claude-code',
    at('10:01:02'),
  )
}

/** Transcript records of the user typing "continue" at each time (hh:mm:ss). */
const continued = (...times: string[]): object[] =>
  times.map((t, i) => ({
    sessionId: SESSION,
    cwd: CWD,
    type: 'user',
    uuid: `u-continue-${i}`,
    timestamp: `2026-03-01T${t}.000Z`,
    message: { role: 'user', content: 'continue' },
  }))

/** The hook of the user typing "continue" at `time` (hh:mm:ss). */
async function hookContinue(engine: ReturnType<typeof createTestEngine>['engine'], time: string): Promise<void> {
  await engine.captureHook(
    'UserPromptSubmit',
    hookPayload('UserPromptSubmit', { prompt: 'continue' }, SESSION, CWD),
    'claude-code',
    at(time),
  )
}

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!()
})

function setup(text = transcript()) {
  const t = tempDir()
  cleanups.push(t.cleanup)
  const file = path.join(t.dir, `${SESSION}.jsonl`)
  writeFileSync(file, text)
  const { engine } = createTestEngine({ cwd: CWD })
  const rows = async () => {
    const projectIds = (await engine.listProjects()).map((p) => p.id)
    return (await engine.browseObservations({ projectIds, order: 'asc', limit: 100 })).map((o) => ({
      id: o.id,
      kind: o.kind,
      text: o.text,
      sessionId: o.sessionId,
    }))
  }
  return { engine, file, rows }
}

describe('a session captured by hooks and by its imported transcript', () => {
  it('hooks first: the import stores only the steps the hooks did not see, and says how many it left out', async () => {
    const { engine, file, rows } = setup()
    await runHooks(engine)
    expect(await rows()).toHaveLength(3)
    const report = await engine.importPath(file, { format: 'claude-code' })
    expect(report).toMatchObject({ imported: 4, covered: 4, observations: 1 })
    const after = await rows()
    expect(new Set(after.map((r) => r.sessionId)).size).toBe(1)
    // The prompt, the failed call (the hook's error holds input and output) and the last message once each; the
    // transcript adds the message only it has.
    expect(after.map((r) => r.kind).sort()).toEqual(['error', 'message', 'message', 'prompt'])
    expect(after.filter((r) => r.text.includes('login no longer throws'))).toHaveLength(1)
    expect(after.filter((r) => r.text.includes('1 failed'))).toHaveLength(1)
    // Recall finds the failure once, not twice.
    const hits = await engine.recall('login throws', { limit: 10 })
    expect(hits.filter((h) => h.snippet.includes('1 failed'))).toHaveLength(1)
  })

  it('transcript first: the hooks that fire afterwards (a resumed session, a replayed spool) add nothing new', async () => {
    const { engine, file, rows } = setup()
    const report = await engine.importPath(file, { format: 'claude-code' })
    expect(report).toMatchObject({ imported: 4, covered: 0, observations: 5 })
    await runHooks(engine)
    const after = await rows()
    expect(after.map((r) => r.kind).sort()).toEqual(['error', 'message', 'message', 'prompt', 'tool'])
    expect(after.filter((r) => r.text.includes('Fix the login bug'))).toHaveLength(1)
  })

  it('keeps a path’s own repeats, and the same text from the other path when it is far apart in time', async () => {
    const { engine, file, rows } = setup(transcript(continued('10:02:00', '10:03:00')))
    // A prompt with the same words, typed through the hook half an hour later: another step.
    await hookContinue(engine, '10:40:00')
    await engine.importPath(file, { format: 'claude-code' })
    expect((await rows()).filter((r) => r.text === 'continue')).toHaveLength(3)
  })

  it('matches one copy per stored prompt: two "continue" in the transcript against one from the hooks keeps two', async () => {
    const { engine, file, rows } = setup(transcript(continued('10:02:00', '10:05:00')))
    await hookContinue(engine, '10:05:01')
    const report = await engine.importPath(file, { format: 'claude-code' })
    expect(report.covered).toBe(1)
    expect((await rows()).filter((r) => r.text === 'continue')).toHaveLength(2)
  })

  it('a tool call the transcript caught still running keeps the result the hook brings afterwards', async () => {
    const running = [
      {
        sessionId: SESSION,
        cwd: CWD,
        type: 'user',
        uuid: 'u-1',
        timestamp: '2026-03-01T10:00:00.000Z',
        message: { role: 'user', content: 'migrate the orders table' },
      },
      {
        sessionId: SESSION,
        cwd: CWD,
        type: 'assistant',
        uuid: 'a-1',
        timestamp: '2026-03-01T10:00:05.000Z',
        message: {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_mig', name: 'Bash', input: { command: 'npm run migrate' } }],
        },
      },
    ]
    const { engine, file } = setup(running.map((r) => JSON.stringify(r)).join('\n'))
    await engine.importPath(file, { format: 'claude-code' })
    const failure = hookPayload(
      'PostToolUseFailure',
      {
        tool_name: 'Bash',
        tool_use_id: 'toolu_mig',
        tool_input: { command: 'npm run migrate' },
        error: 'ERROR: relation orders_v2 already exists',
      },
      SESSION,
      CWD,
    )
    expect((await engine.captureHook('PostToolUseFailure', failure, 'claude-code', at('10:00:30'))).stored).toBe(true)
    const hits = await engine.recall('orders_v2 already exists', { limit: 5 })
    expect(hits.some((h) => h.snippet.includes('already exists'))).toBe(true)
  })

  it('forgetting one record of a step lets the other path’s record in, as a rebuild would, and names it; forgetting both removes the step for good', async () => {
    const { engine, file, rows } = setup()
    await runHooks(engine)
    await engine.importPath(file, { format: 'claude-code' })
    const failure = (await rows()).find((r) => r.kind === 'error')!
    const first = await engine.forget(failure.id)
    // The transcript's record of the call (its input, in the record that also holds "Let me run the tests.") and of its result.
    const others = (await rows()).filter((r) => first.alsoRecorded.includes(r.id))
    expect(others.map((r) => r.kind).sort()).toEqual(['error', 'tool'])
    expect((await rows()).some((r) => r.text === 'Let me run the tests.')).toBe(true)
    const live = await rows()
    await engine.rebuild()
    expect(await rows()).toEqual(live)
    // Forgetting those too: the step is gone, the other steps of their records with them (a record is forgotten whole), and nothing brings it back.
    for (const id of first.alsoRecorded) if ((await rows()).some((r) => r.id === id)) await engine.forget(id)
    const left = await rows()
    expect(left.some((r) => r.text.includes('1 failed') || r.text.includes('npm test'))).toBe(false)
    expect((await engine.rebuild()).observations).toBe(left.length)
    expect(await rows()).toEqual(left)
    expect((await engine.rescanSecrets('test')).observations).toBe(left.length)
    const lines: string[] = []
    await engine.exportJsonl((line) => lines.push(line))
    const fresh = createTestEngine({ cwd: CWD }).engine
    const restored = await fresh.importExport(lines.join('\n'), 'export.jsonl')
    expect(restored.observations).toBe(left.length)
    expect((await fresh.recall('login throws', { limit: 10 })).some((h) => h.snippet.includes('1 failed'))).toBe(false)
  })

  it('names the other record of a forgotten first prompt, and the re-derived session keeps its id', async () => {
    const { engine, file, rows } = setup()
    await runHooks(engine)
    await engine.importPath(file, { format: 'claude-code' })
    const hookPrompt = (await rows()).find((r) => r.kind === 'prompt')!
    const before = hookPrompt.sessionId
    const r = await engine.forget(hookPrompt.id)
    const prompts = (await rows()).filter((x) => x.kind === 'prompt')
    expect(prompts).toHaveLength(1)
    expect(r.alsoRecorded).toEqual([prompts[0]!.id])
    expect(prompts[0]!.sessionId).toBe(before)
  })

  it('does the same for a named user’s session (its stored key is namespaced by the user)', async () => {
    const { engine: base, file } = setup()
    const alice = base.scoped({ user: 'alice' })
    await runHooks(alice)
    await alice.importPath(file, { format: 'claude-code' })
    const mine = async () =>
      (await alice.browseObservations({ projectIds: (await alice.listProjects()).map((p) => p.id), order: 'asc', limit: 100 })).map(
        (o) => ({ id: o.id, kind: o.kind, text: o.text }),
      )
    const failure = (await mine()).find((r) => r.kind === 'error')!
    const r = await alice.forget(failure.id)
    expect(r.alsoRecorded).toHaveLength(2)
    const live = await mine()
    await alice.rebuild()
    expect(await mine()).toEqual(live)
  })

  it('forgetting a transcript record that stood for a hook’s step brings the hook’s record in: live rows stay what a rebuild derives', async () => {
    const { engine, file, rows } = setup()
    await engine.importPath(file, { format: 'claude-code' })
    await runHooks(engine)
    // The record holding "Let me run the tests." also holds the tool call the hook's failure was matched against.
    await engine.forget((await rows()).find((r) => r.text === 'Let me run the tests.')!.id)
    const live = await rows()
    expect(live.some((r) => r.kind === 'error' && r.text.includes('npm test'))).toBe(true)
    await engine.rebuild()
    expect(await rows()).toEqual(live)
  })

  it('rebuild, and compaction followed by rebuild, derive exactly the rows capture stored', async () => {
    const { engine, file, rows } = setup()
    await runHooks(engine)
    await engine.importPath(file, { format: 'claude-code' })
    const stored = await rows()
    expect((await engine.rebuild()).observations).toBe(stored.length)
    expect(await rows()).toEqual(stored)
    // Folding keeps each event's whole derivation and its capture path, so the rule applies the same way again.
    expect((await engine.compact({ before: at('23:59:59'), vacuum: false })).events).toBeGreaterThan(0)
    await engine.rebuild()
    expect(await rows()).toEqual(stored)
  })
})
