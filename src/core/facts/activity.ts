import type { CollectionSpec } from './fact-types.js'

/**
 * The agent's own activity as collections (docs/FACTS.md "The agent's own activity is a ledger too"): views over the
 * rows derived from the event log (sessions, observations), so they are rebuilt, forgotten, exported and imported with
 * it. Pure: the specs and the parsers the views use (test runner output, commands, file actions).
 */

const t = (
  name: string,
  type: CollectionSpec['fields'][number]['type'],
  extra: Partial<CollectionSpec['fields'][number]> = {},
): CollectionSpec['fields'][number] => ({ name, type, ...extra })

/** The activity collections, by name; their names are reserved (a declaration or record under one is refused). */
export const ACTIVITY_SPECS: readonly CollectionSpec[] = [
  {
    name: 'sessions',
    description: "The agent's sessions in this project: when, how long, how much happened.",
    fields: [
      t('session', 'string'),
      t('agent', 'string'),
      t('title', 'string'),
      t('started', 'datetime'),
      t('ended', 'datetime'),
      t('duration_min', 'number'),
      t('prompts', 'integer'),
      t('tool_calls', 'integer'),
      t('errors', 'integer'),
    ],
    identity: ['session'],
    timeField: 'started',
  },
  {
    name: 'tool_calls',
    description: 'Every tool call of the agent: the tool, its command or target, whether it failed.',
    fields: [
      t('tool', 'string'),
      t('command', 'string'),
      t('failed', 'boolean'),
      t('files', 'list', { items: 'string' }),
      t('session', 'string'),
      t('agent', 'string'),
      t('at', 'datetime'),
    ],
    identity: [],
    timeField: 'at',
  },
  {
    name: 'file_touches',
    description: 'Every file a tool call read, edited or wrote (paths as the agent wrote them).',
    fields: [
      t('path', 'string'),
      t('action', 'enum', { values: ['read', 'edit', 'write', 'other'] }),
      t('tool', 'string'),
      t('session', 'string'),
      t('agent', 'string'),
      t('at', 'datetime'),
    ],
    identity: [],
    timeField: 'at',
  },
  {
    name: 'test_runs',
    description: 'Test runs (vitest, jest, mocha, pytest, go test, cargo test) with their counts, parsed from the tool output.',
    fields: [
      t('runner', 'enum', { values: ['vitest', 'jest', 'mocha', 'pytest', 'go', 'cargo'] }),
      t('command', 'string'),
      t('passed', 'integer'),
      t('failed', 'integer'),
      t('skipped', 'integer'),
      t('ok', 'boolean'),
      t('session', 'string'),
      t('agent', 'string'),
      t('at', 'datetime'),
    ],
    identity: [],
    timeField: 'at',
  },
  {
    name: 'errors',
    description: 'Failed tool calls and error results.',
    fields: [t('tool', 'string'), t('message', 'string'), t('session', 'string'), t('agent', 'string'), t('at', 'datetime')],
    identity: [],
    timeField: 'at',
  },
  {
    name: 'commits',
    description: 'git commit commands the agent ran, with their message.',
    fields: [t('message', 'string'), t('failed', 'boolean'), t('session', 'string'), t('agent', 'string'), t('at', 'datetime')],
    identity: [],
    timeField: 'at',
  },
]

/** Whether a collection name is one of the activity collections. */
export function isActivityCollection(name: string): boolean {
  return ACTIVITY_SPECS.some((s) => s.name === name)
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: an ANSI escape sequence starts with ESC
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g

/** The command line of a tool observation's text (`Bash: npm test\n→ …`): its first line after the tool name. */
export function commandOf(text: string): string {
  const first = text.split('\n', 1)[0] ?? ''
  const colon = first.indexOf(': ')
  return (colon >= 0 ? first.slice(colon + 2) : first).trim()
}

/** The output part of a tool observation's text (after `\n→ `), or '' when it has none. */
export function outputOf(text: string): string {
  const at = text.indexOf('\n→ ')
  return at < 0 ? '' : text.slice(at + 3)
}

interface TestRunCounts {
  runner: 'vitest' | 'jest' | 'mocha' | 'pytest' | 'go' | 'cargo'
  passed: number
  failed: number
  skipped: number
}

const num = (m: RegExpMatchArray | null | undefined, i = 1): number => (m && m[i] !== undefined ? Number(m[i]) : 0)

/**
 * The counts of a test run from its output, recognised by each runner's summary line (ANSI colours removed):
 * vitest `Tests  1 failed | 12 passed | 2 skipped (15)`; jest `Tests:  1 failed, 2 skipped, 10 passed, 13 total`;
 * mocha `10 passing` / `2 failing` / `1 pending`; pytest `== 2 failed, 10 passed, 1 skipped in 0.12s ==`; go test
 * `--- PASS:` / `--- FAIL:` / `--- SKIP:` lines (else `ok` / `FAIL` package lines); cargo test `test result: … 3 passed;
 * 1 failed; 2 ignored` (summed over its binaries). Undefined when the output is no runner's.
 */
export function parseTestOutput(output: string, command = ''): TestRunCounts | undefined {
  const text = output.replace(ANSI, '')
  const vitest = /^\s*Tests\s+((?:\d+ (?:failed|passed|skipped|todo)(?:\s*\|\s*)?)+)\s*\(\d+\)/m.exec(text)
  if (vitest && !/Tests:/.test(text)) {
    const part = vitest[1]!
    return {
      runner: 'vitest',
      passed: num(/(\d+) passed/.exec(part)),
      failed: num(/(\d+) failed/.exec(part)),
      skipped: num(/(\d+) skipped/.exec(part)) + num(/(\d+) todo/.exec(part)),
    }
  }
  const jest = /^\s*Tests:\s+(.*\d+ total)/m.exec(text)
  if (jest) {
    const part = jest[1]!
    return {
      runner: 'jest',
      passed: num(/(\d+) passed/.exec(part)),
      failed: num(/(\d+) failed/.exec(part)),
      skipped: num(/(\d+) skipped/.exec(part)) + num(/(\d+) todo/.exec(part)),
    }
  }
  const cargo = [...text.matchAll(/test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored/g)]
  if (cargo.length > 0) {
    return {
      runner: 'cargo',
      passed: cargo.reduce((a, m) => a + Number(m[1]), 0),
      failed: cargo.reduce((a, m) => a + Number(m[2]), 0),
      skipped: cargo.reduce((a, m) => a + Number(m[3]), 0),
    }
  }
  const pytest =
    /^=+ (.*?(?:passed|failed|skipped|error|errors)[^=]*?) in [\d.]+s(?: \([^)]*\))? =+\s*$/m.exec(text) ??
    /^(\d+ (?:passed|failed)[^\n]*) in [\d.]+s\s*$/m.exec(text)
  if (pytest) {
    const part = pytest[1]!
    return {
      runner: 'pytest',
      passed: num(/(\d+) passed/.exec(part)),
      failed: num(/(\d+) failed/.exec(part)) + num(/(\d+) errors?/.exec(part)),
      skipped: num(/(\d+) skipped/.exec(part)),
    }
  }
  const mochaPassing = /^\s*(\d+) passing \(/m.exec(text)
  if (mochaPassing)
    return {
      runner: 'mocha',
      passed: num(mochaPassing),
      failed: num(/^\s*(\d+) failing/m.exec(text)),
      skipped: num(/^\s*(\d+) pending/m.exec(text)),
    }
  const goPass = (text.match(/^\s*--- PASS: /gm) ?? []).length
  const goFail = (text.match(/^\s*--- FAIL: /gm) ?? []).length
  const goSkip = (text.match(/^\s*--- SKIP: /gm) ?? []).length
  if (goPass + goFail + goSkip > 0) return { runner: 'go', passed: goPass, failed: goFail, skipped: goSkip }
  if (/\bgo test\b/.test(command)) {
    const ok = (text.match(/^ok\s+\S+/gm) ?? []).length
    const fail = (text.match(/^FAIL\s+\S+/gm) ?? []).length
    if (ok + fail > 0)
      return { runner: 'go', passed: ok, failed: fail, skipped: (text.match(/^\?\s+\S+\s+\[no test files\]/gm) ?? []).length }
  }
  return undefined
}

/** Whether a tool call read, edited or wrote its files, by the tool's name (Claude Code, Codex, Gemini CLI, OpenCode, Cursor). */
export function fileAction(tool: string): 'read' | 'edit' | 'write' | 'other' {
  const t = tool.toLowerCase()
  if (/^(read|view|read_file|readfile|read_many_files|cat|glob|grep|ls|list_directory|search)/.test(t)) return 'read'
  if (/(multiedit|edit|str_replace|replace|apply_patch|patch)/.test(t)) return 'edit'
  if (/(write|create)/.test(t)) return 'write'
  return 'other'
}

/** The message of a `git commit -m "…"` command (the first `-m`), or undefined for any other command. */
export function commitMessage(command: string): string | undefined {
  if (!/\bgit\s+(?:-C\s+\S+\s+)?commit\b/.test(command)) return undefined
  const m = /\s(?:-[A-Za-z]*m|--message)(?:=|\s+)(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))/.exec(command)
  return m ? (m[1] ?? m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1') : ''
}
