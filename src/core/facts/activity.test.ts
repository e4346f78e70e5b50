import { describe, expect, it } from 'vitest'
import { commandOf, commitMessage, fileAction, outputOf, parseTestOutput } from './activity.js'

describe('test runner output', () => {
  it('reads the summary line of each runner', () => {
    expect(
      parseTestOutput(
        '\u001b[2m      Tests \u001b[22m \u001b[1m\u001b[31m4 failed\u001b[39m\u001b[22m | \u001b[32m506 passed\u001b[39m | 7 skipped (517)',
      ),
    ).toEqual({ runner: 'vitest', passed: 506, failed: 4, skipped: 7 })
    expect(parseTestOutput(' Test Files  2 passed (2)\n      Tests  24 passed (24)\n')).toEqual({
      runner: 'vitest',
      passed: 24,
      failed: 0,
      skipped: 0,
    })
    expect(parseTestOutput('Tests:       1 failed, 2 skipped, 10 passed, 13 total')).toEqual({
      runner: 'jest',
      passed: 10,
      failed: 1,
      skipped: 2,
    })
    expect(parseTestOutput('  10 passing (2s)\n  2 failing\n  1 pending\n')).toEqual({ runner: 'mocha', passed: 10, failed: 2, skipped: 1 })
    expect(parseTestOutput('==== 2 failed, 10 passed, 1 skipped in 0.12s ====')).toEqual({
      runner: 'pytest',
      passed: 10,
      failed: 2,
      skipped: 1,
    })
    expect(parseTestOutput('5 passed in 0.01s')).toEqual({ runner: 'pytest', passed: 5, failed: 0, skipped: 0 })
    expect(parseTestOutput('--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.01s)\n--- SKIP: TestC\nFAIL')).toEqual({
      runner: 'go',
      passed: 1,
      failed: 1,
      skipped: 1,
    })
    expect(parseTestOutput('ok  \texample.com/a\t0.01s\nFAIL\texample.com/b\t0.02s\n', 'go test ./...')).toEqual({
      runner: 'go',
      passed: 1,
      failed: 1,
      skipped: 0,
    })
    expect(
      parseTestOutput(
        'test result: FAILED. 3 passed; 1 failed; 2 ignored; 0 measured\ntest result: ok. 4 passed; 0 failed; 0 ignored; 0 measured',
      ),
    ).toEqual({ runner: 'cargo', passed: 7, failed: 1, skipped: 2 })
    expect(parseTestOutput('compiled successfully')).toBeUndefined()
  })

  it('reads commands, outputs, file actions and commit messages', () => {
    expect(commandOf('Bash: npm test\nrun the tests\n→ ok')).toBe('npm test')
    expect(outputOf('Bash: npm test\n→ all good')).toBe('all good')
    expect([fileAction('Read'), fileAction('Edit'), fileAction('MultiEdit'), fileAction('Write'), fileAction('Bash')]).toEqual([
      'read',
      'edit',
      'edit',
      'write',
      'other',
    ])
    expect(commitMessage('git commit -am "fix \\"auth\\" check"')).toBe('fix "auth" check')
    expect(commitMessage("git commit -m 'one'")).toBe('one')
    expect(commitMessage('git status')).toBeUndefined()
  })
})
