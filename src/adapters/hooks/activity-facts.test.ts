import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerValueText } from '../../core/facts/fact-answer.js'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { hookPayload } from '../../testing/test-mnemo.js'
import { runHook } from './run-hook.js'

// A scripted run of three sessions through the real hook path (`mnemo hook <event>` in-process, stdin and all),
// with known counts: every activity query answers exactly, and again after rebuild and after export → import.
const CWD = '/work/demo-app'
let dir: string
let home: string

async function hook(event: string, sessionId: string, at: string, fields: Record<string, unknown>): Promise<void> {
  const input = new PassThrough()
  const ts = Date.parse(at)
  const run = runHook(event, {
    stdin: input,
    stdout: { write: () => true },
    env: { MNEMO_HOME: home, HOME: home },
    cwd: CWD,
    exit: () => undefined,
    now: () => ts,
  })
  input.end(hookPayload(event, fields, sessionId, CWD))
  await run
}

const bash = (command: string, output: string) => ({
  tool_name: 'Bash',
  tool_input: { command },
  tool_response: { stdout: output, stderr: '', interrupted: false },
})
const edit = (file: string) => ({
  tool_name: 'Edit',
  tool_input: { file_path: `${CWD}/${file}`, old_string: 'a', new_string: 'b' },
  tool_response: { filePath: `${CWD}/${file}` },
})
const tool = (name: string, file: string) => ({
  tool_name: name,
  tool_input: { file_path: `${CWD}/${file}`, content: 'x' },
  tool_response: { filePath: `${CWD}/${file}` },
})

let n = 0
const id = () => `tu_${++n}`

async function script(): Promise<void> {
  // Session A, 2025-06-10 09:00–09:50: two test runs (one failing), a failed build, two edits, a commit.
  await hook('SessionStart', 'sa', '2025-06-10T09:00:00Z', { source: 'startup' })
  await hook('UserPromptSubmit', 'sa', '2025-06-10T09:01:00Z', { prompt: 'fix the login bug' })
  await hook('PostToolUse', 'sa', '2025-06-10T09:05:00Z', { ...edit('src/auth.ts'), tool_use_id: id() })
  await hook('PostToolUse', 'sa', '2025-06-10T09:10:00Z', {
    ...bash(
      'npx vitest run',
      ' ✓ a.test.ts (3)\n ❯ b.test.ts (9)\n\n Test Files  1 failed | 1 passed (2)\n      Tests  2 failed | 10 passed (12)\n',
    ),
    tool_use_id: id(),
  })
  await hook('PostToolUseFailure', 'sa', '2025-06-10T09:20:00Z', {
    tool_name: 'Bash',
    tool_input: { command: 'npm run build' },
    error: 'tsc: error TS2322',
    tool_use_id: id(),
  })
  await hook('PostToolUse', 'sa', '2025-06-10T09:30:00Z', { ...edit('src/auth.ts'), tool_use_id: id() })
  await hook('PostToolUse', 'sa', '2025-06-10T09:40:00Z', { ...bash('npx vitest run', '      Tests  12 passed (12)\n'), tool_use_id: id() })
  await hook('UserPromptSubmit', 'sa', '2025-06-10T09:45:00Z', { prompt: 'commit it' })
  await hook('PostToolUse', 'sa', '2025-06-10T09:46:00Z', {
    ...bash('git commit -am "fix login token check"', '[main 1a2b3c] fix login token check'),
    tool_use_id: id(),
  })
  await hook('SessionEnd', 'sa', '2025-06-10T09:50:00Z', { reason: 'exit' })
  // Session B, 2025-06-12 14:00–14:30: pytest and go test, each with a failure; a read and a write.
  await hook('UserPromptSubmit', 'sb', '2025-06-12T14:00:00Z', { prompt: 'port the db layer' })
  await hook('PostToolUse', 'sb', '2025-06-12T14:05:00Z', { ...tool('Read', 'src/auth.ts'), tool_use_id: id() })
  await hook('PostToolUse', 'sb', '2025-06-12T14:10:00Z', { ...tool('Write', 'src/db.ts'), tool_use_id: id() })
  await hook('PostToolUse', 'sb', '2025-06-12T14:20:00Z', {
    ...bash('pytest -q', '..F.....ss\n===== 1 failed, 5 passed, 2 skipped in 0.52s =====\n'),
    tool_use_id: id(),
  })
  await hook('PostToolUse', 'sb', '2025-06-12T14:25:00Z', {
    ...bash(
      'go test -v ./...',
      '=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.01s)\nFAIL\nFAIL\texample.com/db\t0.02s\n',
    ),
    tool_use_id: id(),
  })
  await hook('SessionEnd', 'sb', '2025-06-12T14:30:00Z', { reason: 'exit' })
  // Session C, 2025-06-13 08:00–08:20: cargo (passing), jest and mocha (one failure each), one more edit.
  await hook('UserPromptSubmit', 'sc', '2025-06-13T08:00:00Z', { prompt: 'run every suite' })
  await hook('PostToolUse', 'sc', '2025-06-13T08:05:00Z', {
    ...bash(
      'cargo test',
      'running 5 tests\ntest result: ok. 4 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s\n',
    ),
    tool_use_id: id(),
  })
  await hook('PostToolUse', 'sc', '2025-06-13T08:10:00Z', {
    ...bash('npx jest', 'Tests:       1 failed, 3 passed, 4 total\nSnapshots:   0 total\n'),
    tool_use_id: id(),
  })
  await hook('PostToolUse', 'sc', '2025-06-13T08:15:00Z', { ...bash('npx mocha', '  3 passing (20ms)\n  1 failing\n'), tool_use_id: id() })
  await hook('PostToolUse', 'sc', '2025-06-13T08:18:00Z', { ...edit('src/auth.ts'), tool_use_id: id() })
  await hook('SessionEnd', 'sc', '2025-06-13T08:20:00Z', { reason: 'exit' })
}

/** Each activity query with its known answer (bare value). */
const EXPECTED: [string, string][] = [
  ['from sessions count', '3'],
  ['from sessions sum duration_min', '100'],
  ['from sessions sum prompts', '4'],
  ['from sessions argmax duration_min return session', ''],
  ['from test_runs count', '7'],
  ['from test_runs where failed > 0 count', '5'],
  ['from test_runs where ok = false and at in 2025-06-10..2025-06-12 count', '3'],
  ['from test_runs sum passed', '38'],
  ['from test_runs sum failed', '6'],
  ['from test_runs sum skipped', '3'],
  ['from test_runs group by runner count', '["vitest","cargo","go","jest","mocha","pytest"]'],
  ['from test_runs where runner = "vitest" and failed = 0 count', '1'],
  ['from test_runs group by day(at) count top 1', '["2025-06-13"]'],
  ['from file_touches where action = "edit" group by path top 1', '["src/auth.ts"]'],
  ['from file_touches where action = "edit" count', '3'],
  ['from file_touches where path = "src/auth.ts" max at', '2025-06-13T08:18:00.000Z'],
  ['from file_touches where action = "write" list path', ''],
  ['from errors count', '1'],
  ['from tool_calls where tool = "Bash" count', '9'],
  ['from tool_calls where failed = true count', '1'],
  ['from commits count', '1'],
  ['from commits argmax at return message', 'fix login token check'],
]

async function answers(engine: ReturnType<typeof openMnemo>['engine']): Promise<string[]> {
  const out: string[] = []
  for (const [q] of EXPECTED) {
    const a = await engine.facts.query(q)
    out.push(
      a.kind === 'rows' ? JSON.stringify((a.value as Record<string, unknown>[]).map(({ id: _id, ...rest }) => rest)) : answerValueText(a),
    )
  }
  return out
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mnemo-activity-'))
  home = path.join(dir, 'home')
  await script()
})

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('the agent’s activity as fact collections', () => {
  it('answers every activity query of the scripted run exactly', async () => {
    const m = openMnemo({ env: { MNEMO_HOME: home }, cwd: CWD })
    try {
      const got = await answers(m.engine)
      const sessions = (await m.engine.sessions()).filter((s) => s.agent === 'claude-code')
      const longest = sessions.find((s) => s.sessionKey === 'sa')!.id
      const expected = EXPECTED.map(([q, v]) =>
        q.includes('argmax duration_min') ? longest : q.includes('action = "write" list') ? JSON.stringify([{ path: 'src/db.ts' }]) : v,
      )
      expect(EXPECTED.map(([q], i) => `${q} → ${got[i]}`)).toEqual(EXPECTED.map(([q], i) => `${q} → ${expected[i]}`))
      const schema = await m.engine.facts.schema()
      // Each activity collection's time range is its time field's, as queries answer it.
      for (const c of schema) {
        expect(c.from, c.name).toBe(answerValueText(await m.engine.facts.query(`from ${c.name} status any min ${c.timeField}`)))
        expect(c.to, c.name).toBe(answerValueText(await m.engine.facts.query(`from ${c.name} status any max ${c.timeField}`)))
      }
      expect(schema.find((c) => c.name === 'test_runs')?.from).toBe('2025-06-10T09:10:00.000Z')
      expect(schema.map((c) => `${c.name}:${c.records}`)).toEqual([
        'commits:1',
        'errors:1',
        'file_touches:5',
        'sessions:3',
        'test_runs:7',
        'tool_calls:14',
      ])
    } finally {
      await m.close()
    }
  })

  it('answers the same after rebuild, and after export → import into an empty store', async () => {
    const m = openMnemo({ env: { MNEMO_HOME: home }, cwd: CWD })
    const before = await answers(m.engine)
    await m.engine.rebuild()
    expect(await answers(m.engine)).toEqual(before)
    const lines: string[] = []
    await m.engine.exportJsonl((line) => lines.push(line))
    await m.close()
    const other = openMnemo({ env: { MNEMO_HOME: path.join(dir, 'other') }, cwd: CWD })
    try {
      await other.engine.importExport(lines.join('\n'), 'export.jsonl')
      expect(await answers(other.engine)).toEqual(before)
    } finally {
      await other.close()
    }
  })

  it("lists an activity collection's records, sorted and paged, each with its observation as provenance", async () => {
    const m = openMnemo({ env: { MNEMO_HOME: home }, cwd: CWD })
    try {
      const first = await m.engine.facts.list('test_runs', { sort: 'failed', order: 'desc', limit: 3 })
      expect(first.total).toBe(7)
      expect(first.records.map((r) => r.values['failed'])).toEqual([2, 1, 1])
      const rest = await m.engine.facts.list('test_runs', { sort: 'failed', order: 'desc', offset: 3, limit: 10 })
      expect(rest.records.map((r) => r.values['failed'])).toEqual([1, 1, 0, 0])
      const ids = [...first.records, ...rest.records].map((r) => r.id)
      expect(new Set(ids).size).toBe(7)
      const r = first.records[0]!
      expect(r.provenance).toMatchObject({ source: 'activity', observation: r.id, session: r.values['session'] })
      expect(r.recordedAt).toBe(Date.parse('2025-06-10T09:10:00Z'))
      const shown = await m.engine.show(r.id)
      expect(shown.type === 'observation' && shown.observation.sessionId).toBe(r.values['session'])
      // By record time (the default), newest first; derived records are never superseded, retracted or deleted.
      const touches = await m.engine.facts.list('file_touches', { order: 'desc' })
      expect(touches.records.map((t) => t.values['at'])).toEqual([...touches.records.map((t) => t.values['at'] as string)].sort().reverse())
      expect(touches.records[0]!.provenance['observation']).toBe(touches.records[0]!.id.split('#')[0])
      for (const state of ['superseded', 'retracted', 'deleted'] as const)
        expect(await m.engine.facts.list('tool_calls', { state })).toEqual({ records: [], deleted: [], total: 0 })
    } finally {
      await m.close()
    }
  })
})
