import { SHELL_TOOLS } from './session-summary.js'
import { squash } from '../core/text.js'
import type { Observation } from '../core/types.js'

/**
 * A finished session read as the steps a procedure could be made of, and
 * whether it succeeded. Pure and deterministic: no model.
 *
 * A step is one successful tool call, generalised so that the same kind of
 * work looks the same in two sessions:
 * - `Edit <pattern>` for a file changed by an edit tool (Edit, Write,
 *   MultiEdit, apply_patch, str_replace…, write_file, replace),
 * - `Read <pattern>` for a file read by a read tool (Read, read_file, view),
 * - `Run <program subcommand>` for a shell command (`npm test -- orders` →
 *   `npm test`; see {@link normalizeCommand}).
 * File paths become patterns: the folder and the extension
 * (`src/middleware/auth.ts` → `src/middleware/*.ts`, `test/a.test.ts` →
 * `test/*.test.ts`); files at the project root and files without an
 * extension keep their name (`package.json`, `docker/Dockerfile`).
 * Other tools (search, web, task lists, subagents) are not steps.
 */

export type StepAction = 'Read' | 'Edit' | 'Run'

export interface Step {
  action: StepAction
  /** File pattern (Read, Edit) or normalised command (Run). */
  target: string
  /** `Edit src/middleware/*.ts`, `Run npm test`. */
  label: string
  /** The observation of the call that did it. */
  observationId: string
  /** A Run step whose command is a check (test, build, lint, type-check; see {@link isCheckCommand}). */
  check: boolean
}

/** A finished session as steps, with its verdict. */
export interface SessionSteps {
  sessionId: string
  /** Epoch ms. */
  startedAt: number
  /** The user's first prompts (up to 3), whitespace squashed. */
  prompts: string[]
  /**
   * Successful steps, in order, up to and including the session's final
   * check; a step repeated back to back counts once (the first call is kept).
   * Empty unless the session succeeded.
   */
  steps: Step[]
  /** The final check's command (`npm test`), when the session succeeded. */
  check: string | undefined
  /** See {@link readSessionSteps}. */
  successful: boolean
  /** Why it did not succeed: `no check`, `last check failed`, `failure after the last check`. */
  failure?: string
}

const EDIT_TOOL = /^(?:edit|write|multiedit|multi_edit|apply_patch|str_replace\w*|notebookedit|write_file|edit_file|create_file|replace)$/i
const READ_TOOL = /^(?:read|read_file|view|notebookread)$/i

/** Commands that only look around (navigation, inspection, read-only git): not steps. */
const IGNORED_PROGRAMS = new Set([
  'cd',
  'ls',
  'cat',
  'echo',
  'pwd',
  'head',
  'tail',
  'grep',
  'rg',
  'ag',
  'find',
  'fd',
  'sed',
  'awk',
  'wc',
  'which',
  'type',
  'export',
  'source',
  '.',
  'true',
  'false',
  'sleep',
  'clear',
  'printf',
  'less',
  'more',
  'tree',
  'diff',
  'sort',
  'uniq',
  'cut',
  'test',
  '[',
  'file',
  'stat',
  'du',
  'df',
  'env',
  'set',
  'unset',
  'history',
  'date',
  'whoami',
  'jq',
  'xargs',
  'tee',
  'open',
  'code',
])
const READ_ONLY_GIT = new Set([
  'status',
  'diff',
  'log',
  'show',
  'blame',
  'rev-parse',
  'ls-files',
  'grep',
  'branch',
  'remote',
  'describe',
  'reflog',
  'shortlog',
])
/** Words that only wrap the real command. */
const WRAPPERS = new Set(['sudo', 'time', 'nohup', 'command', 'exec', 'nice'])
const PACKAGE_RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun'])
const PACKAGE_EXECUTORS = new Set(['npx', 'bunx', 'pnpx', 'uvx'])
const INTERPRETERS = new Set(['node', 'python', 'python3', 'deno', 'ruby', 'bash', 'sh', 'zsh', 'tsx', 'ts-node', 'perl', 'php'])
/** Tools whose first argument is a path or a pattern, never a subcommand. */
const NO_SUBCOMMAND = new Set([
  'pytest',
  'jest',
  'mocha',
  'tsc',
  'eslint',
  'prettier',
  'mypy',
  'black',
  'rspec',
  'phpunit',
  'ava',
  'flake8',
  'pylint',
  'biome',
  'stylelint',
  'tap',
])

function words(segment: string): string[] {
  return (segment.match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^(["'])(.*)\1$/, '$2'))
}

const isFlag = (w: string): boolean => w.startsWith('-')
const isSubcommand = (w: string): boolean => /^[a-z][\w:.-]*$/i.test(w) && !/\.[a-z0-9]{1,4}$/i.test(w)
const isScript = (w: string): boolean => !isFlag(w) && (w.includes('/') || /\.(?:[cm]?[jt]s|py|rb|sh|pl|php)$/i.test(w))

/** `npm test`, `npx vitest run`, `python -m pytest`, `node scripts/x.mjs`: one command without its arguments, or undefined when it is not a step. */
function normalizeWords(w: readonly string[]): string | undefined {
  let i = 0
  while (i < w.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w[i]!) || WRAPPERS.has(w[i]!))) i++
  const head = w[i]
  if (head === undefined) return undefined
  const program = head.includes('/') && !isScript(head) ? head.slice(head.lastIndexOf('/') + 1) : head.replace(/^\.\//, '')
  const rest = w.slice(i + 1)
  const firstArg = rest.find((x) => !isFlag(x))
  if (IGNORED_PROGRAMS.has(program)) return undefined
  if ((program === 'bash' || program === 'sh' || program === 'zsh') && /^-\w*c$/.test(rest[0] ?? '')) {
    return rest[1] === undefined ? undefined : normalizeCommand(rest.slice(1).join(' '))[0]
  }
  if (program === 'git') return firstArg === undefined || READ_ONLY_GIT.has(firstArg) ? undefined : `git ${firstArg}`
  if (PACKAGE_RUNNERS.has(program)) {
    if (firstArg === undefined) return program
    if (firstArg === 'run' || firstArg === 'run-script') {
      const script = rest.slice(rest.indexOf(firstArg) + 1).find((x) => !isFlag(x))
      return script === undefined ? `${program} run` : `${program} run ${script}`
    }
    if (firstArg === 'exec' || firstArg === 'dlx' || firstArg === 'x') {
      const inner = normalizeWords(rest.slice(rest.indexOf(firstArg) + 1))
      return inner === undefined ? undefined : `${program} ${firstArg} ${inner}`
    }
    return isSubcommand(firstArg) ? `${program} ${firstArg}` : program
  }
  if (PACKAGE_EXECUTORS.has(program)) {
    if (firstArg === undefined) return undefined
    const inner = normalizeWords(rest.slice(rest.indexOf(firstArg)))
    return inner === undefined ? undefined : `${program} ${inner}`
  }
  if (INTERPRETERS.has(program)) {
    const m = rest.indexOf('-m')
    if (m >= 0 && rest[m + 1] !== undefined) return `${program} -m ${rest[m + 1]}`
    return firstArg !== undefined && isScript(firstArg) ? `${program} ${firstArg.replace(/^\.\//, '')}` : program
  }
  if (NO_SUBCOMMAND.has(program) || firstArg === undefined || !isSubcommand(firstArg)) return program
  return `${program} ${firstArg}`
}

/**
 * The commands of a shell command line, each as program + subcommand
 * without arguments: `cd api && npm test -- orders | tail -5` → `['npm test']`,
 * `npm run build && npx vitest run src/a.test.ts` → `['npm run build', 'npx vitest run']`.
 * Only the first line counts (a heredoc's body is not a command). Lists
 * (`&&`, `||`, `;`) give one command each; a pipeline counts as its first
 * command. Leading `VAR=value`, `sudo`, `time` are skipped; `bash -c '…'`
 * is unwrapped; `npm run <script>`, `python -m <module>` and
 * `node <script path>` keep the word that says what runs. Navigation and
 * inspection (`cd`, `ls`, `cat`, `grep`, `git status`, …) give nothing.
 */
export function normalizeCommand(commandLine: string): string[] {
  const line = (commandLine.split('\n')[0] ?? '').trim()
  const out: string[] = []
  for (const segment of line.split(/\s*(?:&&|\|\||;)\s*/)) {
    const first = segment.split(/\s\|\s/)[0] ?? ''
    const command = normalizeWords(words(first))
    if (command !== undefined) out.push(command)
  }
  return out
}

const CHECK_WORD =
  /(?:^|[\s:])(?:test|tests|spec|specs|check|checks|lint|typecheck|type-check|tsc|build|vitest|jest|mocha|pytest|tox|nox|clippy|vet|ruff|mypy|eslint|ctest|phpunit|rspec|verify)(?=$|[\s:])/i

/** True when a normalised command is a check: it tests, builds, lints or type-checks (`npm test`, `npm run build`, `cargo clippy`, `go vet`, `pytest`). */
export function isCheckCommand(command: string): boolean {
  return CHECK_WORD.test(command)
}

/**
 * A file path as a pattern: relative to the project, folder + `*` + extension
 * (`src/middleware/auth.ts` → `src/middleware/*.ts`; test, spec, declaration
 * and config files keep their double extension: `test/*.test.ts`). A file at
 * the root or without an extension keeps its name.
 */
export function filePattern(file: string, projectRoot = ''): string {
  let rel = projectRoot && file.startsWith(`${projectRoot}/`) ? file.slice(projectRoot.length + 1) : file
  rel = rel.replace(/^\.\//, '')
  const slash = rel.lastIndexOf('/')
  if (slash < 0) return rel
  const base = rel.slice(slash + 1)
  const ext = /(?:\.(?:test|spec|d|stories|module|config|e2e))?\.[A-Za-z0-9]{1,8}$/.exec(base)?.[0]
  if (!ext || ext === base) return rel
  return `${rel.slice(0, slash)}/*${ext}`
}

/**
 * The text a failed shell command leaves in its result although the call
 * itself was recorded as a success (transcripts that do not mark errors):
 * a non-zero exit, npm/pnpm errors, failing tests, compiler errors, a
 * Python traceback, a command that does not exist.
 */
const FAILED_OUTPUT =
  /(?:exit(?:ed)?(?: with)?(?: code| status)[:= ]*[1-9]\d*|\bcommand not found\b|npm ERR!|ERR_PNPM_|^\s*FAIL\b|\b[1-9]\d* (?:failed|failing)\b|\bFound [1-9]\d* errors?\b|\berror TS\d+|Traceback \(most recent call last\)|BUILD FAILED|could not compile)/im

/** The input part of a tool observation's text (`Bash: npm test\n→ …` → `npm test`). */
function inputOf(o: Observation): string {
  const afterTool = o.text.slice(o.text.indexOf(':') + 1)
  const arrow = afterTool.indexOf('\n→ ')
  return (arrow >= 0 ? afterTool.slice(0, arrow) : afterTool).trim()
}

function resultOf(o: Observation): string | undefined {
  const arrow = o.text.indexOf('\n→ ')
  return arrow >= 0 ? o.text.slice(arrow + 3) : undefined
}

interface Call {
  steps: Step[]
  failed: boolean
}

function stepsOfCall(o: Observation, projectRoot: string): Step[] {
  const tool = o.tool ?? ''
  const make = (action: StepAction, target: string, check = false): Step => ({
    action,
    target,
    label: `${action} ${target}`,
    observationId: o.id,
    check,
  })
  if (SHELL_TOOLS.has(tool.toLowerCase())) return normalizeCommand(inputOf(o)).map((c) => make('Run', c, isCheckCommand(c)))
  const action: StepAction | undefined = EDIT_TOOL.test(tool) ? 'Edit' : READ_TOOL.test(tool) ? 'Read' : undefined
  if (action === undefined) return []
  return [...new Set(o.files.map((f) => filePattern(f, projectRoot)))].map((p) => make(action, p))
}

/**
 * Reads a session's observations (time order, flagged ones already left
 * out) as steps, and decides whether the session succeeded.
 *
 * A session is **successful** when it ran at least one check command (a
 * shell command that tests, builds, lints or type-checks; see
 * {@link isCheckCommand}), the last check it ran succeeded, and no tool
 * call failed after that check. A call failed when it was recorded as an
 * error (a PostToolUseFailure hook, an error result in a transcript or
 * rollout), or, for a shell command, when its output shows a failure
 * (non-zero exit, failing tests, compiler errors; see FAILED_OUTPUT).
 * A session that never ran a check has no evidence of success and does
 * not count. (Whether the session is finished is the caller's rule: the
 * same as for summaries.)
 *
 * @param projectRoot - File paths under it become relative patterns.
 */
export function readSessionSteps(
  sessionId: string,
  startedAt: number,
  observations: readonly Observation[],
  projectRoot: string,
): SessionSteps {
  const prompts = observations
    .filter((o) => o.kind === 'prompt' && o.role === 'user')
    .slice(0, 3)
    .map((o) => squash(o.text))
  // Results recorded apart from their call (transcripts, rollouts), by the call's reference.
  const resultByRef = new Map<string, Observation>()
  for (const o of observations)
    if ((o.kind === 'tool_result' || o.kind === 'error') && o.role === 'tool' && o.sourceRef) resultByRef.set(o.sourceRef, o)
  const calls: Call[] = []
  for (const o of observations) {
    if (o.kind === 'tool') {
      const paired = o.sourceRef ? resultByRef.get(o.sourceRef) : undefined
      const steps = stepsOfCall(o, projectRoot)
      const output = resultOf(o) ?? paired?.text ?? ''
      const failed = paired?.kind === 'error' || (steps.some((s) => s.action === 'Run') && FAILED_OUTPUT.test(output))
      calls.push({ steps, failed })
    } else if (o.kind === 'error' && o.role !== 'tool' && o.tool) {
      // A failed call recorded whole (PostToolUseFailure): its input is in the text.
      calls.push({ steps: stepsOfCall(o, projectRoot), failed: true })
    }
  }
  const base = { sessionId, startedAt, prompts }
  let last = -1
  calls.forEach((c, i) => {
    if (c.steps.some((s) => s.check)) last = i
  })
  if (last < 0) return { ...base, steps: [], check: undefined, successful: false, failure: 'no check' }
  if (calls[last]!.failed) return { ...base, steps: [], check: undefined, successful: false, failure: 'last check failed' }
  if (calls.slice(last + 1).some((c) => c.failed))
    return { ...base, steps: [], check: undefined, successful: false, failure: 'failure after the last check' }
  const finalCall = calls[last]!
  const finalCheck = finalCall.steps.reduce((k, s, j) => (s.check ? j : k), -1)
  const steps: Step[] = []
  for (const c of [...calls.slice(0, last).filter((x) => !x.failed), { steps: finalCall.steps.slice(0, finalCheck + 1), failed: false }]) {
    for (const s of c.steps) if (steps.at(-1)?.label !== s.label) steps.push(s)
  }
  return { ...base, steps, check: steps.at(-1)!.target, successful: true }
}
