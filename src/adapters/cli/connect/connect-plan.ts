/**
 * The plan every `mnemo connect <agent>` / `mnemo disconnect <agent>`
 * planner returns, and what is done with it: applying it (each changed file
 * written atomically, files of mnemo's own removed) and rendering it for
 * `--dry-run`. Planning is pure (reads files, writes nothing); only
 * {@link applyConnectPlan} writes.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { HookEventMapping } from '../../../core/hook-events.js'
import { invalidInput } from '../../../core/errors.js'
import {
  AGENT_LABELS,
  type AgentCommandOptions,
  type AgentLocation,
  type ConnectAgent,
  type ConnectClient,
  type ConnectScope,
} from './agent-command.js'
import type { JsonObject } from './json-config.js'

/** Options of every `plan<Agent>Connect`. */
export interface AgentConnectOptions extends AgentLocation, AgentCommandOptions {}

/** Options of every `plan<Agent>Disconnect`; `cliPath`, when given, also marks hook commands containing it as mnemo's. */
export interface AgentDisconnectOptions extends AgentLocation {
  cliPath?: string | undefined
}

/**
 * One file a plan would write. `changed` is `after !== before`; `before` is
 * undefined for a missing file; `summary` lists mnemo's own entries in it,
 * before against after (`  mcp servers added: mnemo`).
 */
export interface ConnectPlanFile {
  path: string
  kind: 'settings' | 'mcp'
  before: string | undefined
  after: string
  changed: boolean
  summary: string[]
  /** Applying the plan deletes the file: a file of mnemo's own (OpenCode's plugin), or one disconnect left empty ({@link removeIfEmptied}); `after` is then ''. */
  remove?: boolean
}

/**
 * The result of planning for one agent: the files to write, in write order,
 * and `notes`: things the user must still do (e.g. trust hooks in Codex),
 * to print after applying.
 */
export interface ConnectPlan {
  client: ConnectClient
  action: 'connect' | 'disconnect'
  scope: ConnectScope
  files: ConnectPlanFile[]
  notes: string[]
}

/** What `describe<Agent>Hooks()` returns. */
export interface AgentHooksDescription {
  agent: ConnectAgent
  /** True when connect registers hooks for this agent. */
  supported: boolean
  /** Registered events, in write order; empty when unsupported. */
  events: readonly HookEventMapping[]
  /** The command form, or why there are no hooks. */
  note: string
}

/** Reads a file; `undefined` when it does not exist. @throws MnemoError INVALID_INPUT (details.path = the file) when unreadable. */
export function readConfigText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw invalidInput(path, `cannot read ${path}: ${(err as Error).message}`)
  }
}

/** Lines like `  mcp servers added: mnemo` comparing mnemo's items (name → JSON) before and after. */
export function summarizeItems(label: string, before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const keys = [...new Set([...before.keys(), ...after.keys()])]
  const groups: Array<[string, (k: string) => boolean]> = [
    ['added', (k) => !before.has(k)],
    ['updated', (k) => before.has(k) && after.has(k) && before.get(k) !== after.get(k)],
    ['removed', (k) => !after.has(k)],
    ['unchanged', (k) => before.get(k) === after.get(k)],
  ]
  return groups
    .map(([what, test]) => [what, keys.filter(test)] as const)
    .filter(([, list]) => list.length > 0)
    .map(([what, list]) => `  ${label} ${what}: ${list.join(', ')}`)
}

/** A plan file from before/after texts. */
export function planFileOf(
  path: string,
  kind: ConnectPlanFile['kind'],
  before: string | undefined,
  after: string,
  summary: string[],
): ConnectPlanFile {
  return { path, kind, before, after, changed: after !== before, summary }
}

/**
 * On disconnect: when removing mnemo's entries leaves `file` holding nothing
 * but what connect itself writes around them (`leftover`: for JSON the exact
 * objects, e.g. `{}` or Cursor's `{"version":1}`, compared without
 * whitespace, so a comment or any key of the user's keeps the file; for TOML
 * nothing but blank lines), the file is one connect created: the plan deletes
 * it instead of leaving an empty shell. A file mnemo did not change (no mnemo
 * entry in it) is never deleted. Returns `file` itself otherwise.
 */
export function removeIfEmptied(
  file: ConnectPlanFile | undefined,
  format: 'json' | 'toml',
  leftover: readonly JsonObject[] = [{}],
): ConnectPlanFile | undefined {
  if (file === undefined || !file.changed || file.before === undefined) return file
  const rest = file.after.replace(/\s+/g, '')
  const empty = format === 'toml' ? rest === '' : rest === '' || leftover.some((l) => rest === JSON.stringify(l))
  return empty ? { ...file, after: '', remove: true } : file
}

function writeAtomic(path: string, text: string): void {
  const existing = readConfigText(path) !== undefined
  const target = existing ? realpathSync(path) : path // write through a symlinked file (dotfile setups)
  mkdirSync(dirname(target), { recursive: true })
  const mode = existing ? statSync(target).mode & 0o7777 : undefined
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    writeFileSync(tmp, text, { flag: 'wx', flush: true, ...(mode === undefined ? {} : { mode }) })
    if (mode !== undefined) chmodSync(tmp, mode) // the umask may have narrowed it
    renameSync(tmp, target)
  } catch (err) {
    rmSync(tmp, { force: true })
    throw err
  }
}

/**
 * Writes every changed file of `plan` (temp file in the same directory, then
 * rename), creating parent directories, keeping an existing file's mode and
 * writing through a symlinked file to its target; then deletes the files
 * the plan removes. Unchanged files are not touched. Returns the paths
 * written or removed, written ones first, each in plan order.
 * @throws MnemoError INVALID_INPUT (details.path = the file) when a file no
 *   longer holds the plan's `before` text (changed since planning); files
 *   earlier in the plan are already written then. Filesystem errors pass through.
 */
export function applyConnectPlan(plan: ConnectPlan): string[] {
  const written: string[] = []
  for (const file of plan.files) {
    if (!file.changed || file.remove === true) continue
    if (readConfigText(file.path) !== file.before) {
      throw invalidInput(file.path, `${file.path} changed since the plan was made; nothing written to it`, 'Run the command again.')
    }
    writeAtomic(file.path, file.after)
    written.push(file.path)
  }
  for (const file of plan.files) {
    if (file.remove !== true || !file.changed) continue
    if (readConfigText(file.path) !== file.before)
      throw invalidInput(file.path, `${file.path} changed since the plan was made; not removed`, 'Run the command again.')
    rmSync(file.path, { force: true })
    written.push(file.path)
  }
  return written
}

/** Line diff: common head and tail trimmed, LCS over the rest when small enough. */
function lineDiff(before: string, after: string): string[] {
  const a = before === '' ? [] : before.replace(/\n$/, '').split('\n')
  const b = after.replace(/\n$/, '').split('\n')
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let [ea, eb] = [a.length, b.length]
  while (ea > start && eb > start && a[ea - 1] === b[eb - 1]) {
    ea--
    eb--
  }
  const [x, y] = [a.slice(start, ea), b.slice(start, eb)]
  const out = [`  @@ line ${start + 1} @@`]
  if (x.length * y.length > 1_000_000) return [...out, ...x.map((l) => `  - ${l}`), ...y.map((l) => `  + ${l}`)]
  const lcs = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1))
  const at = (i: number, j: number): number => lcs[i]?.[j] ?? 0
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) lcs[i]![j] = x[i] === y[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1))
  }
  let [i, j] = [0, 0]
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      out.push(`    ${x[i]}`)
      i++
      j++
    } else if (j >= y.length || (i < x.length && at(i + 1, j) >= at(i, j + 1))) out.push(`  - ${x[i++]}`)
    else out.push(`  + ${y[j++]}`)
  }
  return out
}

/**

/**
 * Renders a plan for `--dry-run`: per file a header (`<path> (create)`,
 * `(update)` or `(unchanged)`; `remove <path>` for a file the plan deletes),
 * the file's summary lines for mnemo's own entries, then for a changed file
 * a line diff (`  @@ line N @@`, `  - old`, `  + new`, `    same`). Then one
 * `note: …` line per plan note. Pure; never throws.
 */
export function renderPlanDiff(plan: ConnectPlan): string {
  const out: string[] = []
  for (const file of plan.files) {
    if (file.remove === true) {
      out.push(`${file.changed ? 'remove' : 'unchanged'} ${file.path}`, ...file.summary)
      continue
    }
    const state = !file.changed ? 'unchanged' : file.before === undefined ? 'create' : 'update'
    out.push(`${file.path} (${state})`, ...file.summary)
    if (file.changed) out.push(...lineDiff(file.before ?? '', file.after))
  }
  if (plan.files.length === 0) out.push(`nothing to do: no ${AGENT_LABELS[plan.client]} configuration files found`)
  for (const note of plan.notes) out.push(`note: ${note}`)
  return `${out.join('\n')}\n`
}
