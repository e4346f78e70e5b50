import { describe, expect, it } from 'vitest'
import type { Observation, ObservationKind } from '../core/types.js'
import { filePattern, isCheckCommand, normalizeCommand, readSessionSteps } from './procedure-steps.js'

const ROOT = '/work/app'
const T0 = Date.parse('2025-06-14T10:00:00Z')

function obs(i: number, kind: ObservationKind, text: string, extra: Partial<Observation> = {}): Observation {
  return {
    id: `obs_${i}`,
    sessionId: 'ses_1',
    projectId: 'prj_1',
    kind,
    role: 'assistant',
    text,
    tool: undefined,
    files: [],
    sourceRef: undefined,
    ts: T0 + i,
    eventSeq: i,
    flags: [],
    ...extra,
  } as Observation
}
const prompt = (i: number, text: string) => obs(i, 'prompt', text, { role: 'user' })
const bash = (i: number, command: string, result: string, kind: ObservationKind = 'tool') =>
  obs(i, kind, `Bash: ${command}\n→ ${result}`, { tool: 'Bash' })
const edit = (i: number, file: string, tool = 'Edit') =>
  obs(i, 'tool', `${tool}: ${ROOT}/${file}\n→ ok`, { tool, files: [`${ROOT}/${file}`] })
const read = (i: number, file: string) => obs(i, 'tool', `Read: ${ROOT}/${file}\n→ …`, { tool: 'Read', files: [`${ROOT}/${file}`] })

describe('normalizeCommand', () => {
  it.each([
    ['npm test -- orders', ['npm test']],
    ['cd api && npm test -- --watch=false | tail -5', ['npm test']],
    ['npm run build && npx vitest run src/a.test.ts', ['npm run build', 'npx vitest run']],
    ['CI=1 pnpm run test:unit', ['pnpm run test:unit']],
    ['pnpm exec tsc --noEmit', ['pnpm exec tsc']],
    ['python -m pytest -q tests/test_api.py', ['python -m pytest']],
    ['pytest tests/test_api.py -k slow', ['pytest']],
    ['node scripts/bench.mjs --days 3', ['node scripts/bench.mjs']],
    ['./scripts/check.sh', ['scripts/check.sh']],
    ["bash -lc 'go test ./...'", ['go test']],
    ['git status; git diff', []],
    ['git commit -m "fix: orders"', ['git commit']],
    ['cargo clippy --all-targets', ['cargo clippy']],
    ['ls -la && cat package.json', []],
    ['sudo make install', ['make install']],
  ])('%s → %j', (line, expected) => {
    expect(normalizeCommand(line)).toEqual(expected)
  })

  it('counts tests, builds, lints and type-checks as checks, and nothing else', () => {
    expect(
      [
        'npm test',
        'pnpm run test:unit',
        'npm run build',
        'npx vitest run',
        'cargo clippy',
        'go vet',
        'python -m pytest',
        'npx tsc',
        'make check',
      ].every(isCheckCommand),
    ).toBe(true)
    expect(['npm install', 'git commit', 'node scripts/seed.mjs', 'npm ci', 'docker compose'].some(isCheckCommand)).toBe(false)
  })
})

describe('filePattern', () => {
  it('keeps the folder and the extension, and names of root and extensionless files', () => {
    expect(filePattern(`${ROOT}/src/middleware/auth.ts`, ROOT)).toBe('src/middleware/*.ts')
    expect(filePattern('test/orders.test.ts')).toBe('test/*.test.ts')
    expect(filePattern('src/types.d.ts')).toBe('src/*.d.ts')
    expect(filePattern(`${ROOT}/package.json`, ROOT)).toBe('package.json')
    expect(filePattern('./docker/Dockerfile')).toBe('docker/Dockerfile')
  })
})

describe('readSessionSteps', () => {
  it('a session whose last check passed is successful: its steps run up to that check, failed calls and back-to-back repeats left out', () => {
    const s = readSessionSteps(
      'ses_1',
      T0,
      [
        prompt(0, 'Add a rate limiter'),
        read(1, 'src/app.ts'),
        edit(2, 'src/middleware/rate.ts', 'Write'),
        edit(3, 'src/middleware/rate.ts'),
        bash(4, 'npm test', 'FAIL test/rate.test.ts', 'error'),
        edit(5, 'src/app.ts'),
        bash(6, 'npm test -- rate', 'Tests: 12 passed, 0 failed'),
        bash(7, 'git commit -m "rate limiter"', '[main 1a2b3c] rate limiter'),
      ],
      ROOT,
    )
    expect(s).toMatchObject({ successful: true, check: 'npm test', prompts: ['Add a rate limiter'] })
    expect(s.steps.map((x) => [x.label, x.observationId])).toEqual([
      ['Read src/*.ts', 'obs_1'],
      ['Edit src/middleware/*.ts', 'obs_2'],
      ['Edit src/*.ts', 'obs_5'],
      ['Run npm test', 'obs_6'],
    ])
  })

  it('is not successful without a check, when the last check failed, or when a call failed after it', () => {
    expect(readSessionSteps('s', T0, [edit(1, 'src/a.ts'), bash(2, 'npm install', 'added 1 package')], ROOT)).toMatchObject({
      successful: false,
      failure: 'no check',
      steps: [],
    })
    expect(
      readSessionSteps('s', T0, [edit(1, 'src/a.ts'), bash(2, 'npm test', 'ok'), bash(3, 'npm test', 'failed', 'error')], ROOT),
    ).toMatchObject({ successful: false, failure: 'last check failed' })
    expect(
      readSessionSteps(
        's',
        T0,
        [
          edit(1, 'src/a.ts'),
          bash(2, 'npm test', 'ok'),
          obs(3, 'error', 'Edit: src/b.ts\n→ old_string not found', { tool: 'Edit', files: ['src/b.ts'] }),
        ],
        ROOT,
      ),
    ).toMatchObject({
      successful: false,
      failure: 'failure after the last check',
    })
  })

  it('reads a failure in the output of a call recorded as a success (non-zero exit, failing tests)', () => {
    expect(
      readSessionSteps('s', T0, [edit(1, 'src/a.ts'), bash(2, 'npm test', 'Tests: 3 failed, 9 passed\nExit code 1')], ROOT),
    ).toMatchObject({ successful: false, failure: 'last check failed' })
    expect(readSessionSteps('s', T0, [edit(1, 'src/a.ts'), bash(2, 'npm test', '0 failed, 12 passed')], ROOT).successful).toBe(true)
  })

  it('pairs calls with results recorded apart (transcripts, rollouts) by their reference', () => {
    const call = (i: number, command: string, ref: string) => obs(i, 'tool', `Bash: ${command}`, { tool: 'Bash', sourceRef: ref })
    const result = (i: number, kind: ObservationKind, text: string, ref: string) => obs(i, kind, text, { role: 'tool', sourceRef: ref })
    const failed = readSessionSteps('s', T0, [edit(1, 'src/a.ts'), call(2, 'npm test', 't1'), result(3, 'error', 'FAIL', 't1')], ROOT)
    expect(failed).toMatchObject({ successful: false, failure: 'last check failed' })
    const passed = readSessionSteps('s', T0, [edit(1, 'src/a.ts'), call(2, 'npm test', 't1'), result(3, 'tool_result', 'ok', 't1')], ROOT)
    expect(passed).toMatchObject({ successful: true, check: 'npm test' })
    expect(passed.steps.map((x) => x.observationId)).toEqual(['obs_1', 'obs_2'])
  })

  it('ends the steps at the check inside a command list', () => {
    const s = readSessionSteps('s', T0, [edit(1, 'src/a.ts'), bash(2, 'npm run build && npm test && git push', 'ok')], ROOT)
    expect(s.steps.map((x) => x.label)).toEqual(['Edit src/*.ts', 'Run npm run build', 'Run npm test'])
  })
})
