import { afterEach, describe, expect, it } from 'vitest'
import type { ServerResponse } from 'node:http'
import { createManualClock } from '../core/clock.js'
import type { Memory } from '../core/types.js'
import { MnemoEngine } from '../engine/mnemo.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import { closeFakeChats, fakeChat, llmAt, reply, replyError, type ChatRequest } from '../testing/fake-chat.js'
import { createTestEngine, hookPayload, T0 } from '../testing/test-mnemo.js'
import { createLlmConsolidator } from './llm-consolidator.js'
import type { SessionSteps } from './procedure-steps.js'
import { parseProcedureText, procedureHeadline, procedureText } from './procedure-text.js'
import { distillProcedures, lcs, parseStepLabel, verifySteps } from './procedures.js'

afterEach(closeFakeChats)

const CWD = '/work/demo-app'
const MIN = 60_000

// ---------------------------------------------------------------------------
// Sessions played through the hooks, as Claude Code calls them
// ---------------------------------------------------------------------------

type Call = { read: string } | { write: string } | { edit: string } | { bash: string; out?: string; fail?: string } | { grep: string }

type Engine = MnemoEngine
type Clock = { advance: (ms: number) => void }

/** Plays one session (prompt, tool calls, a last word, SessionEnd), one event per second. */
async function play(engine: Engine, clock: Clock, id: string, prompt: string, calls: readonly Call[]): Promise<void> {
  const hook = async (event: string, fields: Record<string, unknown>) => {
    await engine.captureHook(event, hookPayload(event, fields, id, CWD))
    clock.advance(1000)
  }
  await hook('SessionStart', { source: 'startup' })
  await hook('UserPromptSubmit', { prompt })
  for (const [i, c] of calls.entries()) {
    const tool_use_id = `${id}-${i}`
    if ('bash' in c) {
      if (c.fail) await hook('PostToolUseFailure', { tool_name: 'Bash', tool_use_id, tool_input: { command: c.bash }, error: c.fail })
      else
        await hook('PostToolUse', {
          tool_name: 'Bash',
          tool_use_id,
          tool_input: { command: c.bash },
          tool_response: { stdout: c.out ?? 'ok', stderr: '' },
        })
    } else if ('grep' in c)
      await hook('PostToolUse', { tool_name: 'Grep', tool_use_id, tool_input: { pattern: c.grep }, tool_response: 'src/app.ts' })
    else {
      const [tool, file] = 'read' in c ? ['Read', c.read] : 'write' in c ? ['Write', c.write] : ['Edit', c.edit]
      await hook('PostToolUse', {
        tool_name: tool,
        tool_use_id,
        tool_input: { file_path: `${CWD}/${file}`, new_string: 'x' },
        tool_response: { ok: true },
      })
    }
  }
  await hook('Stop', { last_assistant_message: 'Done.' })
  await hook('SessionEnd', { reason: 'exit' })
  clock.advance(10 * MIN)
}

const RATE_LIMIT: readonly Call[] = [
  { read: 'src/app.ts' },
  { write: 'src/middleware/rate-limit.ts' },
  { edit: 'src/app.ts' },
  { bash: 'npm test', fail: 'FAIL test/app.test.ts: expected 429' },
  { edit: 'src/middleware/rate-limit.ts' },
  { bash: 'npm test -- middleware', out: 'Tests: 14 passed' },
]
/** Same kind of work, with extra steps the other session does not have (git status, a search, an install). */
const CORS: readonly Call[] = [
  { bash: 'git status', out: 'clean' },
  { read: 'src/app.ts' },
  { grep: 'app.use' },
  { write: 'src/middleware/cors.ts' },
  { bash: 'npm install cors', out: 'added 1 package' },
  { edit: 'src/app.ts' },
  { bash: 'npm test', out: 'Tests: 15 passed' },
]
/** Same kind of work, but its last test run failed: not a successful session. */
const AUTH_FAILED: readonly Call[] = [
  { read: 'src/app.ts' },
  { write: 'src/middleware/auth.ts' },
  { edit: 'src/app.ts' },
  { bash: 'npm test', out: 'Tests: 15 passed' },
  { edit: 'src/middleware/auth.ts' },
  { bash: 'npm test', fail: 'FAIL test/auth.test.ts: expected 401, got 500' },
]
const GZIP: readonly Call[] = [
  { read: 'src/app.ts' },
  { write: 'src/middleware/gzip.ts' },
  { edit: 'src/app.ts' },
  { bash: 'npm test', out: 'Tests: 16 passed' },
]

/** The project's procedures (current ones, or every version), oldest first. */
const procedures = async (engine: Engine, current = true): Promise<Memory[]> => {
  const project = (await engine.listProjects())[0]
  if (!project) return []
  return (
    await engine.browseMemories({
      projectIds: [project.id],
      kinds: ['procedure'],
      state: current ? 'current' : 'all',
      offset: 0,
      limit: 50,
    })
  ).memories.sort((a, b) => a.createdAt - b.createdAt)
}

const EXPECTED_TEXT = [
  'Procedure: add middleware api',
  'When: tasks like "Add rate limiting middleware to the API" or "Add CORS middleware to the API"',
  'Steps:',
  '1. Read src/*.ts',
  '2. Edit src/middleware/*.ts',
  '3. Edit src/*.ts',
  '4. Run npm test',
  'Files: src/*.ts, src/middleware/*.ts',
  'Check: npm test, passed at the end of each of 2 successful sessions',
].join('\n')

describe('procedures through consolidation (deterministic)', () => {
  it('two successful sessions doing the same work give one procedure with the common steps, the check, and the attesting observations as sources', async () => {
    const { engine, clock } = createTestEngine({ cwd: CWD })
    await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
    await play(engine, clock, 'cors', 'Add CORS middleware to the API', CORS)
    const r = await engine.consolidate()
    expect(r).toMatchObject({ summaries: 2, procedures: 1 })
    const [procedure, ...more] = await procedures(engine)
    expect(more).toEqual([])
    // `npm install cors`, `git status` and the search are not in the rate-limit session: not steps.
    expect(procedure!.text).toBe(EXPECTED_TEXT)
    // Sources: read, write, edit and the passing test of each session (not the failed run, not the repeated edit).
    const sources = await engine.memorySources([procedure!])
    expect(sources.map((o) => `${o.sessionId === sources[0]!.sessionId ? 'rate' : 'cors'} ${o.text.split('\n')[0]}`)).toEqual([
      `rate Read: ${CWD}/src/app.ts`,
      `rate Write: ${CWD}/src/middleware/rate-limit.ts`,
      `rate Edit: ${CWD}/src/app.ts`,
      'rate Bash: npm test -- middleware',
      `cors Read: ${CWD}/src/app.ts`,
      `cors Write: ${CWD}/src/middleware/cors.ts`,
      `cors Edit: ${CWD}/src/app.ts`,
      'cors Bash: npm test',
    ])
    expect(procedure!.kind).toBe('procedure')
  })

  it('one successful and one failed session of the same work give no procedure', async () => {
    const { engine, clock } = createTestEngine({ cwd: CWD })
    await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
    await play(engine, clock, 'auth', 'Add auth middleware to the API', AUTH_FAILED)
    expect(await engine.consolidate()).toMatchObject({ summaries: 2, procedures: 0 })
    expect(await procedures(engine)).toEqual([])
  })

  it('adds nothing when run again, and rebuild re-derives the same procedure ids', async () => {
    const { engine, clock } = createTestEngine({ cwd: CWD })
    await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
    await play(engine, clock, 'cors', 'Add CORS middleware to the API', CORS)
    await engine.consolidate()
    const before = await procedures(engine, false)
    const seq = await engine.lastEventSeq()
    expect(await engine.consolidate()).toMatchObject({ summaries: 0, procedures: 0 })
    // Other successful work runs the pass again: the procedure is checked against the same sessions, nothing is written.
    await play(engine, clock, 'docs', 'Fix a typo in the README', [{ edit: 'README.md' }, { bash: 'npm test' }])
    expect(await engine.consolidate()).toMatchObject({ summaries: 1, procedures: 0 })
    expect(await engine.lastEventSeq()).toBe(seq + 7) // the docs session's 6 events and its summary
    await engine.rebuild()
    const after = await procedures(engine, false)
    expect(after.map((m) => [m.id, m.text, m.sources, m.validTo])).toEqual(before.map((m) => [m.id, m.text, m.sources, m.validTo]))
  })

  it('a new supporting session updates the procedure (a new version supersedes it) instead of adding one', async () => {
    const { engine, clock } = createTestEngine({ cwd: CWD })
    await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
    await play(engine, clock, 'cors', 'Add CORS middleware to the API', CORS)
    await engine.consolidate()
    const [first] = await procedures(engine)
    await play(engine, clock, 'gzip', 'Add gzip middleware to the API', GZIP)
    expect(await engine.consolidate()).toMatchObject({ procedures: 1 })
    const current = await procedures(engine)
    expect(current).toHaveLength(1)
    expect(current[0]!.supersedes).toBe(first!.id)
    expect((await engine.history(first!.id)).map((m) => m.id)).toEqual([first!.id, current[0]!.id])
    expect(current[0]!.text).toBe(EXPECTED_TEXT.replace('each of 2', 'each of 3'))
    expect(new Set((await engine.memorySources([current[0]!])).map((o) => o.sessionId)).size).toBe(3)
  })

  it('an archived procedure stays archived when another supporting session comes', async () => {
    const { engine, clock } = createTestEngine({ cwd: CWD })
    await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
    await play(engine, clock, 'cors', 'Add CORS middleware to the API', CORS)
    await engine.consolidate()
    const [first] = await procedures(engine)
    await engine.setMemoryState(first!.id, 'archive')
    await play(engine, clock, 'gzip', 'Add gzip middleware to the API', GZIP)
    expect(await engine.consolidate()).toMatchObject({ procedures: 0 })
    expect(await engine.history(first!.id)).toEqual([
      expect.objectContaining({ id: first!.id, archivedAt: expect.any(Number), seenCount: 1 }),
    ])
    expect((await engine.context({ project: { root: CWD, name: 'demo-app' } })).text).not.toContain('Procedures')
  })

  it('is recalled like any memory, listed by name and trigger in the context block, and exported', async () => {
    const { engine, clock } = createTestEngine({ cwd: CWD })
    await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
    await play(engine, clock, 'cors', 'Add CORS middleware to the API', CORS)
    await engine.consolidate()
    const [procedure] = await procedures(engine)
    const hits = await engine.recall('procedure add middleware', { limit: 5 })
    expect(hits[0]).toMatchObject({ id: procedure!.id, type: 'memory', kind: 'procedure' })
    const block = await engine.context({ project: { root: CWD, name: 'demo-app' } })
    expect(block.text).toContain('## Procedures')
    expect(block.text).toContain(
      '\n- add middleware api — when: tasks like "Add rate limiting middleware to the API" or "Add CORS middleware to the API"\n',
    )
    expect(block.text).not.toContain('Steps:')
    expect(block.memoryIds).toContain(procedure!.id)
    const md = (await engine.exportMarkdown()).get('demo-app.md')!
    expect(md).toContain('## Procedures')
    // Each step on its own line under the procedure's item, as the memory writes them.
    expect(md).toMatch(/\n- \*\*.+\*\* _\(since \d{4}-\d{2}-\d{2}\)_\n {2}When: .+\n {2}Steps:\n {2}1\. .+\n {2}2\. /)
  })

  it('needs as many successful sessions as configured', async () => {
    const { engine, clock } = createTestEngine({ cwd: CWD })
    await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
    await play(engine, clock, 'cors', 'Add CORS middleware to the API', CORS)
    expect(await engine.consolidate({ procedures: { minSessions: 3 } })).toMatchObject({ procedures: 0 })
    await play(engine, clock, 'gzip', 'Add gzip middleware to the API', GZIP)
    expect(await engine.consolidate({ procedures: { minSessions: 3 } })).toMatchObject({ procedures: 1 })
  })
})

// ---------------------------------------------------------------------------
// Verification, common steps, text
// ---------------------------------------------------------------------------

function session(id: string, labels: string[], prompt = 'do the thing'): SessionSteps {
  const steps = labels.map((label, i) => {
    const [action, ...target] = label.split(' ')
    return {
      action: action as 'Read' | 'Edit' | 'Run',
      target: target.join(' '),
      label,
      observationId: `${id}-o${i}`,
      check: label === 'Run npm test',
    }
  })
  return { sessionId: id, startedAt: T0, prompts: [prompt], steps, check: 'npm test', successful: true }
}

describe('verifySteps', () => {
  const a = session('a', ['Read src/*.ts', 'Edit src/lib/*.ts', 'Edit src/*.ts', 'Run npm test'])
  const b = session('b', ['Edit src/lib/*.ts', 'Read src/*.ts', 'Edit src/*.ts', 'Run npm test'])

  it('keeps steps attested in order in every session, with their observations, and drops the others', () => {
    const v = verifySteps(
      [
        { label: 'Read src/*.ts' },
        { label: 'Edit src/lib/*.ts' },
        { label: 'Edit src/*.ts' },
        { label: 'Run npm run deploy' },
        { label: 'Run npm test' },
      ],
      [a, b],
    )
    // Read comes after the lib edit in b: once Read is matched there, the lib edit is out of order.
    expect(v.steps.map((s) => s.label)).toEqual(['Read src/*.ts', 'Edit src/*.ts', 'Run npm test'])
    expect(v.dropped).toEqual(['Edit src/lib/*.ts', 'Run npm run deploy'])
    expect(v.sources).toEqual(['a-o0', 'a-o2', 'a-o3', 'b-o1', 'b-o2', 'b-o3'])
    expect(v.usable).toBe(true)
  })

  it('leaves a candidate unusable when fewer than two steps or no edit is attested', () => {
    expect(verifySteps([{ label: 'Edit src/other/*.ts' }, { label: 'Run npm test' }], [a, b])).toMatchObject({
      usable: false,
      steps: [{ label: 'Run npm test' }],
    })
    expect(verifySteps([{ label: 'Read src/*.ts' }, { label: 'Run npm test' }], [a, b]).usable).toBe(false)
  })

  it('compares steps as written by a model in the normalised form (commands without arguments, paths as patterns)', () => {
    expect(parseStepLabel('Run `npm test -- --watch=false`')).toBe('Run npm test')
    expect(parseStepLabel('edit src/lib/parse.ts')).toBe('Edit src/lib/*.ts')
    expect(parseStepLabel('Deploy to production')).toBeUndefined()
    for (const label of [
      'Read src/*.ts',
      'Edit package.json',
      'Run npx vitest run',
      'Run python -m pytest',
      'Run node scripts/x.mjs',
      'Run pnpm exec tsc',
    ])
      expect(parseStepLabel(label)).toBe(label)
  })
})

describe('distillProcedures', () => {
  it('takes the longest common ordered steps: a step absent from one session is not in the procedure', () => {
    const a = session(
      'a',
      ['Read src/*.ts', 'Edit src/lib/*.ts', 'Run npm install', 'Edit src/*.ts', 'Run npm test'],
      'Add the parser to lib',
    )
    const b = session('b', ['Edit src/lib/*.ts', 'Edit src/*.ts', 'Run npm run lint', 'Run npm test'], 'Add the formatter to lib')
    const [c, ...more] = distillProcedures([b, a])
    expect(more).toEqual([])
    expect(c!.parts).toMatchObject({
      name: 'add lib',
      steps: [{ label: 'Edit src/lib/*.ts' }, { label: 'Edit src/*.ts' }, { label: 'Run npm test' }],
      files: ['src/*.ts', 'src/lib/*.ts'],
      check: 'npm test',
      sessions: 2,
    })
    expect(c!.sources).toEqual(['a-o1', 'a-o3', 'a-o4', 'b-o0', 'b-o1', 'b-o3'])
  })

  it('keeps a step repeated back to back in the common steps once', () => {
    const a = session('a', ['Edit src/*.ts', 'Read docs/*.md', 'Edit src/*.ts', 'Run npm test'])
    const b = session('b', ['Edit src/*.ts', 'Run npm run lint', 'Edit src/*.ts', 'Run npm test'])
    expect(distillProcedures([a, b])[0]!.parts.steps).toEqual([{ label: 'Edit src/*.ts' }, { label: 'Run npm test' }])
  })

  it('groups only sessions with the same check and the same edited files, and skips unsuccessful ones', () => {
    const a = session('a', ['Edit src/lib/*.ts', 'Run npm test'])
    const other = session('b', ['Edit src/*.ts', 'Run npm test'])
    const failed = { ...session('c', ['Edit src/lib/*.ts', 'Run npm test']), successful: false }
    expect(distillProcedures([a, other, failed])).toEqual([])
    expect(lcs(['x', 'y', 'z'], ['y', 'x', 'z'])).toEqual(['x', 'z'])
  })
})

describe('procedure text', () => {
  it('parses back what it writes, and gives a one-line headline', () => {
    const parts = {
      name: 'add lib',
      trigger: 'tasks like "x"',
      steps: [{ label: 'Edit src/lib/*.ts', detail: 'export it — from index' }, { label: 'Run npm test' }],
      files: ['src/lib/*.ts'],
      check: 'npm test',
      sessions: 2,
    }
    expect(parseProcedureText(procedureText(parts))).toEqual(parts)
    expect(parseProcedureText('orders DB is PostgreSQL 14')).toBeUndefined()
    expect(procedureHeadline(procedureText(parts))).toBe('add lib — when: tasks like "x"')
    // With the check, for two procedures of the same name in one context block.
    expect(procedureHeadline(procedureText(parts), true)).toBe(`add lib (checked by ${parts.check}) — when: tasks like "x"`)
  })
})

// ---------------------------------------------------------------------------
// The model path (a fake OpenAI-compatible server on loopback)
// ---------------------------------------------------------------------------

function llmEngine(baseUrl: string) {
  const clock = createManualClock(T0)
  const store = openSqliteStore({ path: ':memory:' }, () => clock.now())
  const engine = new MnemoEngine({
    store,
    clock,
    cwd: CWD,
    contextBudgetTokens: 2000,
    timeZone: 'UTC',
    consolidator: createLlmConsolidator(llmAt(baseUrl)),
  })
  return { engine, clock }
}

/** Answers session consolidation with a plain summary, fact extraction with no records, and procedure requests with `procedure`. */
function chat(procedure: (res: ServerResponse) => void) {
  return (body: ChatRequest, res: ServerResponse) => {
    if (body.response_format.json_schema?.name === 'procedure') procedure(res)
    else if (body.response_format.json_schema?.name === 'fact_records') reply(res, { new_collections: [], records: [] })
    else reply(res, { summary: 'Middleware was added and the tests passed.', summarySources: ['o1'], memories: [] })
  }
}

const MODEL_PROCEDURE = {
  name: 'Add an Express middleware',
  trigger: 'When a new cross-cutting HTTP concern (rate limits, CORS, auth) is needed.',
  steps: [
    { action: 'Read src/*.ts', detail: 'see how app.ts mounts middleware' },
    { action: 'Edit src/middleware/rate-limit.ts', detail: 'write the middleware in its own file' },
    { action: 'Run npm run deploy', detail: 'ship it' },
    { action: 'Edit src/*.ts', detail: 'mount it in app.ts' },
    { action: 'Run `npm test`', detail: '' },
  ],
}

describe('procedures through consolidation with a model', () => {
  it('stores the model’s name, trigger and wording, without steps the sessions do not attest', async () => {
    const { baseUrl, seen } = await fakeChat(chat((res) => reply(res, MODEL_PROCEDURE)))
    const { engine, clock } = llmEngine(baseUrl)
    await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
    await play(engine, clock, 'cors', 'Add CORS middleware to the API', CORS)
    const r = await engine.consolidate()
    expect(r).toMatchObject({ procedures: 1, errors: [] })
    const [procedure] = await procedures(engine)
    expect(procedure!.text).toBe(
      [
        'Procedure: Add an Express middleware',
        'When: When a new cross-cutting HTTP concern (rate limits, CORS, auth) is needed.',
        'Steps:',
        '1. Read src/*.ts — see how app.ts mounts middleware',
        '2. Edit src/middleware/*.ts — write the middleware in its own file',
        '3. Edit src/*.ts — mount it in app.ts',
        '4. Run npm test',
        'Files: src/*.ts, src/middleware/*.ts',
        'Check: npm test, passed at the end of each of 2 successful sessions',
      ].join('\n'),
    )
    expect(procedure!.sources).toHaveLength(8)
    const asked = seen.find((b) => b.response_format.json_schema?.name === 'procedure')!
    expect(asked.messages[0]!.content).toMatch(/untrusted data/)
    expect(asked.messages[1]!.content).toContain('{"step":"Edit src/middleware/*.ts"}')
    expect(asked.messages[1]!.content).toContain('{"task":"Add CORS middleware to the API"}')
    // A new supporting session whose steps still attest the stored wording keeps it, without asking the model again.
    const asks = seen.length
    await play(engine, clock, 'gzip', 'Add gzip middleware to the API', GZIP)
    expect(await engine.consolidate()).toMatchObject({ procedures: 1 })
    expect(seen.filter((b) => b.response_format.json_schema?.name === 'procedure')).toHaveLength(1)
    expect(seen.length).toBe(asks + 2) // the new session's summary and its fact extraction only
    expect((await procedures(engine))[0]!.text).toContain('1. Read src/*.ts — see how app.ts mounts middleware')
    expect((await procedures(engine))[0]!.text).toContain('each of 3 successful sessions')
  })

  it('falls back to the deterministic procedure when none of the model’s steps is attested', async () => {
    const invented = {
      ...MODEL_PROCEDURE,
      steps: [
        { action: 'Edit src/routes/*.ts', detail: '' },
        { action: 'Run npm run deploy', detail: '' },
      ],
    }
    const { baseUrl } = await fakeChat(chat((res) => reply(res, invented)))
    const { engine, clock } = llmEngine(baseUrl)
    await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
    await play(engine, clock, 'cors', 'Add CORS middleware to the API', CORS)
    const r = await engine.consolidate()
    expect(r.procedures).toBe(1)
    expect(r.errors).toEqual([
      expect.stringMatching(
        /^procedure "add middleware api": the model's steps are not attested in the source sessions \(kept 0, dropped 2/,
      ),
    ])
    expect((await procedures(engine))[0]!.text).toBe(EXPECTED_TEXT)
  })

  it('falls back to the deterministic procedure when the provider fails or the answer never validates', async () => {
    for (const answer of [
      (res: ServerResponse) => replyError(res, 503, 'model is loading'),
      (res: ServerResponse) => reply(res, { name: 'x', steps: 'none' }),
    ]) {
      const { baseUrl } = await fakeChat(chat(answer))
      const { engine, clock } = llmEngine(baseUrl)
      await play(engine, clock, 'rate', 'Add rate limiting middleware to the API', RATE_LIMIT)
      await play(engine, clock, 'cors', 'Add CORS middleware to the API', CORS)
      const r = await engine.consolidate()
      expect(r.procedures).toBe(1)
      expect(r.errors).toEqual([expect.stringMatching(/^procedure "add middleware api": .*(HTTP 503|does not match the schema)/)])
      expect((await procedures(engine))[0]!.text).toBe(EXPECTED_TEXT)
    }
  })
})
