import { describe, expect, it } from 'vitest'
import { makeId, type ProjectId, type SessionId } from '../core/ids.js'
import type { Observation, ObservationKind, Session } from '../core/types.js'
import { digestParts, digestSession } from './session-summary.js'

const T0 = Date.parse('2025-06-14T10:00:00Z')
const ROOT = '/home/demo/billing'
const SESSION_ID = makeId('ses', T0, 'long') as SessionId
const PROJECT_ID = makeId('prj', T0, 'billing') as ProjectId

let n = 0
function obs(kind: ObservationKind, role: string, text: string, extra: Partial<Observation> = {}): Observation {
  const i = n++
  return {
    id: makeId('obs', T0 + i * 1000, `obs-${i}`),
    sessionId: SESSION_ID,
    projectId: PROJECT_ID,
    kind,
    role,
    text,
    tool: undefined,
    files: [],
    sourceRef: undefined,
    ts: T0 + i * 1000,
    eventSeq: i,
    flags: [],
    ...extra,
  }
}
const session = (observationCount: number): Session => ({
  id: SESSION_ID,
  projectId: PROJECT_ID,
  agent: 'claude-code',
  sessionKey: 'long-1',
  startedAt: T0,
  lastEventAt: T0 + n * 1000,
  endedAt: undefined,
  title: undefined,
  observationCount,
})

/** A 30-step session: each step a prompt, an edit of its own file, a test run; mod1.ts is edited twice, some runs fail. */
function longSession(): Observation[] {
  n = 0
  const out: Observation[] = []
  for (let i = 1; i <= 30; i++) {
    out.push(obs('prompt', 'user', `Step ${i}: refactor module ${i}`))
    out.push(obs('tool', 'assistant', `Edit: src/billing/mod${i}.ts`, { tool: 'Edit', files: [`${ROOT}/src/billing/mod${i}.ts`] }))
    if (i === 20) out.push(obs('tool', 'assistant', 'Edit: src/billing/mod1.ts', { tool: 'Edit', files: [`${ROOT}/src/billing/mod1.ts`] }))
    out.push(
      obs(i % 6 === 0 ? 'error' : 'tool', 'assistant', `Bash: npm test -- mod${i % 7}\n→ ${i % 6 === 0 ? 'FAIL' : 'ok'}`, { tool: 'Bash' }),
    )
  }
  out.push(obs('message', 'assistant', 'All 30 modules refactored; the suite passes.'))
  return out
}

describe('digestSession', () => {
  it('keeps the goal and where a long session stopped, and counts what each list leaves out', () => {
    const observations = longSession()
    const d = digestSession(session(observations.length), observations, ROOT)
    // The first prompt (the goal) and the last two (where it stopped): 27 in between are counted, not listed.
    expect(d.asked).toEqual(['Step 1: refactor module 1', 'Step 29: refactor module 29', 'Step 30: refactor module 30'])
    expect(d.askedMore).toBe(27)
    // Most touched first (mod1.ts twice), then the most recently touched.
    expect(d.files).toEqual([
      'src/billing/mod1.ts',
      'src/billing/mod30.ts',
      'src/billing/mod29.ts',
      'src/billing/mod28.ts',
      'src/billing/mod27.ts',
      'src/billing/mod26.ts',
      'src/billing/mod25.ts',
      'src/billing/mod24.ts',
    ])
    expect(d.filesMore).toBe(22)
    // Seven distinct commands that ran (a failed run is an error); a re-run moves to its latest place; the last five are kept.
    expect(d.commands).toEqual(['npm test -- mod4', 'npm test -- mod5', 'npm test -- mod6', 'npm test -- mod0', 'npm test -- mod1'])
    expect(d.commandsMore).toBe(2)
    // Errors at steps 6, 12, 18, 24, 30: the last three.
    expect(d.errors).toEqual(['Bash: npm test -- mod4 → FAIL', 'Bash: npm test -- mod3 → FAIL', 'Bash: npm test -- mod2 → FAIL'])
    expect(d.errorsMore).toBe(2)
    expect(d.outcome).toBe('All 30 modules refactored; the suite passes.')
    expect(digestParts(d)).toEqual({
      asked: 'Step 1: refactor module 1 | (27 more) | Step 29: refactor module 29 | Step 30: refactor module 30',
      files: `${d.files.join(', ')}, +22 more`,
      commands: '(+2 earlier) npm test -- mod4, npm test -- mod5, npm test -- mod6, npm test -- mod0, npm test -- mod1',
      errors: `(+2 earlier) ${d.errors.join(' | ')}`,
    })
  })

  it('lists everything in a short session, with nothing said to be left out', () => {
    n = 0
    const observations = [
      obs('prompt', 'user', 'Fix the login bug'),
      obs('tool', 'assistant', 'Read: src/login.ts', {
        tool: 'Read',
        files: [`${ROOT}/src/login.ts`, './src/login.ts', `${ROOT}/src//login.ts`],
      }),
      obs('tool', 'assistant', 'Bash: npm test', { tool: 'Bash' }),
      obs('prompt', 'user', 'Now add a test'),
      obs('message', 'assistant', 'Done.'),
    ]
    const d = digestSession(session(5), observations, ROOT)
    expect([d.asked, d.askedMore, d.commands, d.commandsMore, d.errorsMore, d.filesMore]).toEqual([
      ['Fix the login bug', 'Now add a test'],
      0,
      ['npm test'],
      0,
      0,
      0,
    ])
    expect(digestParts(d)).toEqual({ asked: 'Fix the login bug | Now add a test', files: 'src/login.ts', commands: 'npm test' })
  })

  it('lists a repeated prompt once and counts the repeats', () => {
    n = 0
    const same = Array.from({ length: 40 }, () => obs('prompt', 'user', 'please fix the thing'))
    expect(digestParts(digestSession(session(40), same, ROOT)).asked).toBe('please fix the thing | (39 more)')
    n = 0
    const observations = [obs('prompt', 'user', 'build the parser'), obs('prompt', 'user', 'continue'), obs('prompt', 'user', 'continue')]
    expect(digestParts(digestSession(session(3), observations, ROOT)).asked).toBe('build the parser | (1 more) | continue')
  })

  it('reports the session’s stored count when given only part of its observations', () => {
    const observations = longSession()
    const d = digestSession(session(5000), observations.slice(-10), ROOT)
    expect([d.observationCount, d.unread]).toEqual([5000, 4990])
    expect(digestParts(d).asked).toBe('Step 28: refactor module 28 | Step 29: refactor module 29 | Step 30: refactor module 30')
    expect(digestParts(digestSession(session(5000), observations, ROOT)).asked).toContain('| (27+ more) |')
  })

  it('reads texts through textOf, the same digest as from the texts themselves, and never a tool output', () => {
    const observations = longSession()
    n = 100
    observations.push(obs('tool_result', 'tool', 'a long test log '.repeat(500), { tool: 'Bash' }))
    const read: Observation['kind'][] = []
    const upper = digestSession(session(observations.length), observations, ROOT, undefined, (o) => {
      read.push(o.kind)
      return o.text.toUpperCase()
    })
    const plain = digestSession(session(observations.length), observations, ROOT)
    expect(upper.asked).toEqual(plain.asked.map((t) => t.toUpperCase()))
    expect(upper.commands).toEqual(plain.commands.map((t) => t.toUpperCase()))
    expect(upper.errors).toEqual(plain.errors.map((t) => t.toUpperCase()))
    expect(upper.outcome).toBe(plain.outcome?.toUpperCase())
    expect({ ...upper, asked: [], commands: [], errors: [], outcome: '' }).toEqual({
      ...plain,
      asked: [],
      commands: [],
      errors: [],
      outcome: '',
    })
    expect(new Set(read)).toEqual(new Set(['prompt', 'tool', 'error', 'message']))
  })
})
