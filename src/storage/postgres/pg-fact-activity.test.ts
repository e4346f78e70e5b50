import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MnemoError } from '../../core/errors.js'
import type { DerivedObservation, EventInput } from '../../core/types.js'
import { difference, FACT_TEST_PROJECT, FactDialects, withoutSql } from '../../testing/fact-dialects.js'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { T0 } from '../../testing/test-mnemo.js'

/** Two sessions of tool calls: tests that fail then pass, edits, reads, a commit, an error. */
const STEPS: { session: string; obs: DerivedObservation; at: number }[] = [
  { session: 's1', at: 0, obs: { kind: 'prompt', role: 'user', text: 'fix the login bug' } },
  {
    session: 's1',
    at: 1,
    obs: { kind: 'tool', role: 'assistant', tool: 'Read', text: 'Read: src/auth.ts', files: [`${FACT_TEST_PROJECT.root}/src/auth.ts`] },
  },
  {
    session: 's1',
    at: 2,
    obs: { kind: 'tool', role: 'assistant', tool: 'Bash', text: 'Bash: npx vitest run\n→ Tests  2 failed | 12 passed (14)' },
  },
  {
    session: 's1',
    at: 3,
    obs: {
      kind: 'tool',
      role: 'assistant',
      tool: 'Edit',
      text: 'Edit: src/auth.ts',
      files: [`${FACT_TEST_PROJECT.root}/src/auth.ts`, '/etc/hosts'],
    },
  },
  { session: 's1', at: 4, obs: { kind: 'tool', role: 'assistant', tool: 'Bash', text: 'Bash: npx vitest run\n→ Tests  14 passed (14)' } },
  {
    session: 's1',
    at: 5,
    obs: { kind: 'tool', role: 'assistant', tool: 'Bash', text: 'Bash: git commit -m "fix login"\n→ [main 1a2b3c] fix login' },
  },
  { session: 's2', at: 60, obs: { kind: 'prompt', role: 'user', text: 'add a test' } },
  {
    session: 's2',
    at: 61,
    obs: {
      kind: 'tool',
      role: 'assistant',
      tool: 'Write',
      text: 'Write: src/auth.test.ts',
      files: [`${FACT_TEST_PROJECT.root}/src/auth.test.ts`],
    },
  },
  {
    session: 's2',
    at: 62,
    obs: { kind: 'error', role: 'assistant', tool: 'Bash', text: 'Bash: pytest\n→ \n== 1 failed, 3 passed in 0.12s ==' },
  },
  { session: 's2', at: 63, obs: { kind: 'error', role: 'assistant', text: 'the hook timed out\nafter 10 s' } },
]

const QUERIES = [
  'from sessions count',
  'from sessions list',
  'from sessions sum tool_calls',
  'from sessions argmax errors return session',
  'from tool_calls count',
  'from tool_calls where failed = true count',
  'from tool_calls group by tool',
  'from tool_calls where files has "/work/demo-app/src/auth.ts" list tool, command',
  'from tool_calls list',
  'from file_touches group by path',
  'from file_touches where action = "edit" list path',
  'from file_touches list',
  'from test_runs sum failed',
  'from test_runs where ok = false count',
  'from test_runs group by runner',
  'from test_runs list',
  'from errors list message',
  'from errors count',
  'from commits list',
  'from commits list message',
  'from tool_calls group by day(at)',
  'from tool_calls argmax at return command',
]

const pg = await withPostgres()

describe.skipIf(!pg)(`PostgreSQL activity collections against SQLite's${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  let d: FactDialects

  beforeAll(async () => {
    d = await FactDialects.open(pg!.url, T0)
    // Both stores derive sessions and observations from the same events through their own write paths.
    for (const [i, s] of STEPS.entries()) {
      const event: EventInput = {
        agent: 'claude-code',
        format: 'claude-hook',
        type: 'step',
        sessionKey: s.session,
        project: FACT_TEST_PROJECT,
        ts: T0 + s.at * 60_000,
        idemKey: `step-${i}`,
        payload: {},
      }
      await d.append([
        { event, derive: () => ({ observations: [{ ...s.obs, index: { body: s.obs.text, parts: '', meta: '' }, entities: [] }] }) },
      ])
    }
  })
  afterAll(async () => {
    await d?.close()
    await pg?.drop()
  })

  it('derives the same activity records as SQLite and answers every query alike', async () => {
    const diffs: string[] = []
    for (const q of QUERIES) {
      const { sqlite, pg: p } = await d.query(q)
      const diff = difference(withoutSql(sqlite), withoutSql(p))
      if (diff !== undefined) diffs.push(`${q}: ${diff}`)
    }
    expect(diffs).toEqual([])
    const { pg: runs } = await d.query('from test_runs list')
    expect(runs.value).toHaveLength(3)
    expect((await d.query('from file_touches where action = "edit" list path')).pg.value).toEqual([
      { id: expect.stringMatching(/#0$/), path: 'src/auth.ts' },
      { id: expect.stringMatching(/#1$/), path: '/etc/hosts' },
    ])
  })

  it('pages a list with an offset (the viewer’s pages of an activity collection) as SQLite does', async () => {
    const { spec, query } = await d.resolve('from tool_calls list order by tool desc')
    const all = await d.pgFacts.query(d.scope, spec, query, { maxRows: 1000, timeoutMs: 1000 })
    const ids = all.records
    expect(ids.length).toBeGreaterThan(3)
    for (const offset of [0, 1, 3, ids.length]) {
      const page = { ...query, verb: { ...query.verb, limit: 2, offset } } as typeof query
      const [a, b] = await Promise.all(
        [d.sqlite.facts, d.pgFacts].map((f) => f.query(d.scope, spec, page, { maxRows: 1000, timeoutMs: 1000 })),
      )
      expect(difference(withoutSql(a!), withoutSql(b!)), `offset ${offset}`).toBeUndefined()
      expect(b!.records).toEqual(ids.slice(offset, offset + 2))
      // The coverage still counts every record, not the page.
      expect(b!.matched).toBe(ids.length)
    }
  })

  it('refuses "as of" on an activity collection, as SQLite does', async () => {
    const text = `from tool_calls as of ${new Date(T0).toISOString()} count`
    const { spec, query } = await d.resolve(text)
    const e = await d.pgFacts.query(d.scope, spec, query, { maxRows: 1000, timeoutMs: 1000 }).catch((x: unknown) => x)
    expect(MnemoError.is(e, 'INVALID_INPUT') && e.message).toBe(
      'query: "as of" is for recorded facts; tool_calls is the activity as it is in the log now',
    )
  })
})
