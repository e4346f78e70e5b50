/**
 * `mnemo connect claude-code`: writes mnemo's hook entries and its MCP
 * server entry into Claude Code's configuration files, idempotently, and
 * keeps every other key, hook and server in those files as it was.
 *
 * Planning is pure (reads files, writes nothing); applying writes each
 * changed file atomically. mnemo owns its own entries: a hook command is
 * mnemo's when it ends in `hook <Event>` and names mnemo or its CLI script
 * (see {@link isMnemoHookCommand}); the MCP server is the one named `mnemo`.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { invalidInput } from '../../core/errors.js'
import { CLAUDE_HOOK_EVENTS, type ClaudeHookEvent } from '../../capture/claude-hook.js'

/** Claude Code hook events mnemo registers, in the order they are written (the events capture understands). */
export const CLAUDE_CODE_HOOK_EVENTS = CLAUDE_HOOK_EVENTS
/** One of {@link CLAUDE_CODE_HOOK_EVENTS}. */
export type ClaudeCodeHookEvent = ClaudeHookEvent

const TOOL_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure'])
const TIMEOUT_SECONDS: Partial<Record<ClaudeCodeHookEvent, number>> = { SessionStart: 15 }
const DEFAULT_TIMEOUT_SECONDS = 10
const MCP_SERVER = 'mnemo'

/** Where to write: `user` (all projects) or `project` (one checkout). */
export type ConnectScope = 'user' | 'project'

/** Which agent configuration to touch (config-files.ts calls it AgentLocation). Every field has a default taken from the running process. */
export interface ClaudeCodeLocation {
  /** Default `'user'`. */
  scope?: ConnectScope | undefined
  /** Home directory for the user scope. Default `os.homedir()`. */
  homeDir?: string | undefined
  /** Project root for the project scope. Default `process.cwd()`. */
  projectDir?: string | undefined
  /** Environment read for the agent's config-dir variable (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, …). Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>> | undefined
}

/** What the hooks and the MCP entry run. */
export interface ClaudeCodeCommandOptions {
  /** Absolute node binary. Default `process.execPath`. */
  nodePath?: string | undefined
  /** Absolute path of the built CLI. Default `../cli/main.js` next to this module (dist/adapters/cli/main.js when built). */
  cliPath?: string | undefined
  /** When given, hooks and the MCP server run with `MNEMO_HOME` set to it (made absolute). */
  mnemoHome?: string | undefined
}

/** Options of {@link planClaudeCodeConnect}. */
export interface ClaudeCodeConnectOptions extends ClaudeCodeLocation, ClaudeCodeCommandOptions {}

/** Options of {@link disconnectClaudeCode}; `cliPath`, when given, also marks commands containing it as mnemo's. */
export interface ClaudeCodeDisconnectOptions extends ClaudeCodeLocation {
  cliPath?: string | undefined
}

/** One file a plan would write. `changed` is `after !== before`; `before` is undefined for a missing file. */
export interface ConnectPlanFile {
  path: string
  kind: 'settings' | 'mcp'
  before: string | undefined
  after: string
  changed: boolean
}

/** The result of planning: the files to write, in write order (settings first, then MCP). */
export interface ConnectPlan {
  client: 'claude-code'
  action: 'connect' | 'disconnect'
  scope: ConnectScope
  files: ConnectPlanFile[]
}

type Json = null | boolean | number | string | Json[] | JsonObject
type JsonObject = { [key: string]: Json }

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)
const describe = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`)
/** Own-property set that stays safe for a key named `__proto__`. */
const setKey = (o: JsonObject, k: string, v: Json): void => {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
}

/**
 * Quotes `value` for a POSIX shell: wraps it in double quotes and escapes
 * `"`, `\`, `$` and backticks, so the shell passes it through as one word.
 */
export function shellQuote(value: string): string {
  return `"${value.replace(/["\\$`]/g, '\\$&')}"`
}

function resolveCommand(o: ClaudeCodeCommandOptions): { nodePath: string; cliPath: string; mnemoHome: string | undefined } {
  const nodePath = o.nodePath ?? process.execPath
  const cliPath = o.cliPath ?? fileURLToPath(new URL('../cli/main.js', import.meta.url))
  for (const [name, p] of [
    ['nodePath', nodePath],
    ['cliPath', cliPath],
  ] as const) {
    if (!isAbsolute(p)) throw invalidInput(name, `${name} must be an absolute path, got "${p}"`)
  }
  if (o.mnemoHome === '') throw invalidInput('mnemoHome', 'mnemoHome must not be empty')
  return { nodePath, cliPath, mnemoHome: o.mnemoHome === undefined ? undefined : resolve(o.mnemoHome) }
}

/**
 * The shell command Claude Code runs for `event`:
 * `[MNEMO_HOME="<home>" ]"<nodePath>" "<cliPath>" hook <event>`, every path
 * quoted by {@link shellQuote}. Defaults as in {@link ClaudeCodeCommandOptions}.
 * @throws MnemoError INVALID_INPUT (details.path `nodePath`/`cliPath`/`mnemoHome`) for a relative or empty path.
 */
export function claudeCodeHookCommand(event: ClaudeCodeHookEvent, options: ClaudeCodeCommandOptions = {}): string {
  const { nodePath, cliPath, mnemoHome } = resolveCommand(options)
  const prefix = mnemoHome === undefined ? '' : `MNEMO_HOME=${shellQuote(mnemoHome)} `
  return `${prefix}${shellQuote(nodePath)} ${shellQuote(cliPath)} hook ${event}`
}

const HOOK_TAIL = /(?:^|\s)hook\s+["']?[A-Za-z]+["']?\s*$/
const CLI_SCRIPT = /adapters[\\/]+cli[\\/]+main\.js/

/**
 * True when `command` is a mnemo hook command: it ends in `hook <Event>` and
 * mentions `mnemo` (any case), the CLI script `adapters/cli/main.js`, or
 * `cliPath` when given. Matches this module's commands from any install
 * location as well as `mnemo hook X` / `npx mnemo hook X` forms.
 */
export function isMnemoHookCommand(command: string, cliPath?: string): boolean {
  if (!HOOK_TAIL.test(command)) return false
  return /mnemo/i.test(command) || CLI_SCRIPT.test(command) || (cliPath !== undefined && cliPath !== '' && command.includes(cliPath))
}

/**
 * The two files for a scope. User: `$CLAUDE_CONFIG_DIR/settings.json` and
 * `$CLAUDE_CONFIG_DIR/.claude.json` when that variable is set and non-empty,
 * else `<home>/.claude/settings.json` and `<home>/.claude.json`. Project:
 * `<projectDir>/.claude/settings.json` and `<projectDir>/.mcp.json`.
 * @throws MnemoError INVALID_INPUT (details.path `scope`) for an unknown scope.
 */
export function claudeCodePaths(options: ClaudeCodeLocation = {}): { scope: ConnectScope; settingsPath: string; mcpPath: string } {
  const scope = options.scope ?? 'user'
  if (scope === 'project') {
    const dir = resolve(options.projectDir ?? process.cwd())
    return { scope, settingsPath: join(dir, '.claude', 'settings.json'), mcpPath: join(dir, '.mcp.json') }
  }
  if (scope !== 'user') throw invalidInput('scope', `scope must be "user" or "project", got "${String(scope)}"`)
  const configDir = (options.env ?? process.env)['CLAUDE_CONFIG_DIR']
  if (configDir !== undefined && configDir !== '') {
    const dir = resolve(configDir)
    return { scope, settingsPath: join(dir, 'settings.json'), mcpPath: join(dir, '.claude.json') }
  }
  const home = resolve(options.homeDir ?? homedir())
  return { scope, settingsPath: join(home, '.claude', 'settings.json'), mcpPath: join(home, '.claude.json') }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw invalidInput(path, `cannot read ${path}: ${(err as Error).message}`)
  }
}

/** Parses a config file; a missing or blank file is `{}`. Anything else that is not a JSON object throws. */
function parseConfig(path: string, text: string | undefined): JsonObject {
  const body = (text ?? '').replace(/^\uFEFF/, '')
  if (body.trim() === '') return {}
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch (err) {
    throw invalidInput(
      path,
      `${path} is not valid JSON (${(err as Error).message}); mnemo will not overwrite it`,
      'Fix the file (comments and trailing commas are not allowed) or move it aside, then run again.',
    )
  }
  if (!isObject(value)) throw invalidInput(path, `${path} must hold a JSON object, found ${describe(value)}; mnemo will not overwrite it`)
  return value
}

function planFile(
  path: string,
  kind: ConnectPlanFile['kind'],
  mutate: (config: JsonObject) => void,
  skipMissing: boolean,
): ConnectPlanFile | undefined {
  const before = readText(path)
  if (before === undefined && skipMissing) return undefined
  const config = parseConfig(path, before)
  const original = JSON.stringify(config)
  mutate(config)
  // Semantically unchanged files keep their bytes, whatever their formatting.
  const after = before !== undefined && JSON.stringify(config) === original ? before : `${JSON.stringify(config, null, 2)}\n`
  return { path, kind, before, after, changed: after !== before }
}

/** Removes mnemo's commands from a matcher-group list; `slot` is where the first group emptied by that was. */
function stripGroups(groups: Json[], mine: (command: string) => boolean): { groups: Json[]; slot: number; removed: number } {
  const out: Json[] = []
  let slot = -1
  let removed = 0
  for (const group of groups) {
    if (!isObject(group) || !Array.isArray(group.hooks)) {
      out.push(group)
      continue
    }
    const kept = group.hooks.filter((h) => !(isObject(h) && typeof h.command === 'string' && mine(h.command)))
    if (kept.length === group.hooks.length) {
      out.push(group)
      continue
    }
    removed += group.hooks.length - kept.length
    if (kept.length > 0) out.push({ ...group, hooks: kept })
    else if (slot < 0) slot = out.length
  }
  return { groups: out, slot, removed }
}

/**
 * Rewrites `settings.hooks`: drops mnemo's commands everywhere, then (when
 * `add` is given) puts one fresh mnemo group per event where mnemo's old
 * group was, or at the end. Without `add`, event lists and a `hooks` object
 * emptied by the removal are deleted.
 */
function rewriteHooks(
  path: string,
  settings: JsonObject,
  mine: (c: string) => boolean,
  add?: (e: ClaudeCodeHookEvent) => JsonObject,
): void {
  const raw = settings.hooks
  if (raw === undefined && add === undefined) return
  if (raw !== undefined && !isObject(raw))
    throw invalidInput(path, `${path}: "hooks" must be an object, found ${describe(raw)}; mnemo will not overwrite it`)
  const next: JsonObject = {}
  let removedAny = false
  const ours = new Set<string>(add === undefined ? [] : CLAUDE_CODE_HOOK_EVENTS)
  for (const [event, value] of Object.entries(raw ?? {})) {
    if (!Array.isArray(value)) {
      if (ours.has(event))
        throw invalidInput(path, `${path}: "hooks.${event}" must be an array, found ${describe(value)}; mnemo will not overwrite it`)
      setKey(next, event, value)
      continue
    }
    const { groups, slot, removed } = stripGroups(value, mine)
    if (removed > 0) removedAny = true
    if (add !== undefined && ours.has(event)) groups.splice(slot < 0 ? groups.length : slot, 0, add(event as ClaudeCodeHookEvent))
    else if (groups.length === 0 && removed > 0) continue
    setKey(next, event, groups)
  }
  if (add !== undefined) for (const event of CLAUDE_CODE_HOOK_EVENTS) if (!Object.hasOwn(next, event)) setKey(next, event, [add(event)])
  if (add === undefined && removedAny && Object.keys(next).length === 0) delete settings.hooks
  else settings.hooks = next
}

function rewriteMcp(path: string, config: JsonObject, entry: JsonObject | undefined): void {
  const raw = config.mcpServers
  if (raw !== undefined && !isObject(raw))
    throw invalidInput(path, `${path}: "mcpServers" must be an object, found ${describe(raw)}; mnemo will not overwrite it`)
  if (entry !== undefined) {
    const servers = raw ?? {}
    setKey(servers, MCP_SERVER, entry)
    config.mcpServers = servers
  } else if (raw !== undefined && Object.hasOwn(raw, MCP_SERVER)) {
    delete raw[MCP_SERVER]
    if (Object.keys(raw).length === 0) delete config.mcpServers
  }
}

/**
 * Plans `mnemo connect claude-code`; reads files, writes nothing. The
 * settings file gets one mnemo matcher group per event in
 * {@link CLAUDE_CODE_HOOK_EVENTS} (matcher `"*"` for tool events, none
 * otherwise; timeout 15 s for SessionStart, 10 s else) replacing any earlier
 * mnemo command; the MCP file gets `mcpServers.mnemo` = `{type: "stdio",
 * command: nodePath, args: [cliPath, "mcp"], env?: {MNEMO_HOME}}`. Output
 * is 2-space JSON with a trailing newline; a file whose content would not
 * change keeps its exact bytes. Defaults as in {@link ClaudeCodeConnectOptions}.
 * @throws MnemoError INVALID_INPUT (details.path = the file) when a file is not
 *   a JSON object (including JSON with comments), `hooks`, `hooks.<our event>`
 *   or `mcpServers` has the wrong type, or a file cannot be read; INVALID_INPUT
 *   for bad options (details.path = the option name).
 */
export function planClaudeCodeConnect(options: ClaudeCodeConnectOptions = {}): ConnectPlan {
  const { scope, settingsPath, mcpPath } = claudeCodePaths(options)
  const cmd = resolveCommand(options)
  const mine = (c: string): boolean => isMnemoHookCommand(c, shellQuote(cmd.cliPath))
  const group = (event: ClaudeCodeHookEvent): JsonObject => {
    const hook: JsonObject = {
      type: 'command',
      command: claudeCodeHookCommand(event, cmd),
      timeout: TIMEOUT_SECONDS[event] ?? DEFAULT_TIMEOUT_SECONDS,
    }
    return TOOL_EVENTS.has(event) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] }
  }
  const entry: JsonObject = { type: 'stdio', command: cmd.nodePath, args: [cmd.cliPath, 'mcp', '--agent', 'claude-code'] }
  if (cmd.mnemoHome !== undefined) entry.env = { MNEMO_HOME: cmd.mnemoHome }
  const files = [
    planFile(settingsPath, 'settings', (s) => rewriteHooks(settingsPath, s, mine, group), false),
    planFile(mcpPath, 'mcp', (c) => rewriteMcp(mcpPath, c, entry), false),
  ].filter((f): f is ConnectPlanFile => f !== undefined)
  return { client: 'claude-code', action: 'connect', scope, files }
}

/**
 * Plans `mnemo disconnect claude-code`; reads files, writes nothing. Removes
 * every mnemo hook command ({@link isMnemoHookCommand}) and `mcpServers.mnemo`,
 * nothing else. Matcher groups, event lists, `hooks` and `mcpServers` left
 * empty by that removal are deleted; containers that were already empty stay.
 * Missing files are left out of the plan (files are never deleted).
 * @throws MnemoError INVALID_INPUT as {@link planClaudeCodeConnect}.
 */
export function disconnectClaudeCode(options: ClaudeCodeDisconnectOptions = {}): ConnectPlan {
  const { scope, settingsPath, mcpPath } = claudeCodePaths(options)
  const quoted = options.cliPath === undefined ? undefined : shellQuote(options.cliPath)
  const mine = (c: string): boolean => isMnemoHookCommand(c, quoted)
  const files = [
    planFile(settingsPath, 'settings', (s) => rewriteHooks(settingsPath, s, mine), true),
    planFile(mcpPath, 'mcp', (c) => rewriteMcp(mcpPath, c, undefined), true),
  ].filter((f): f is ConnectPlanFile => f !== undefined)
  return { client: 'claude-code', action: 'disconnect', scope, files }
}

function writeAtomic(path: string, text: string): void {
  const existing = readText(path) !== undefined
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
 * writing through a symlinked file to its target. Unchanged files are not
 * touched. Returns the paths written, in plan order.
 * @throws MnemoError INVALID_INPUT (details.path = the file) when a file no
 *   longer holds the plan's `before` text (changed since planning); files
 *   earlier in the plan are already written then. Filesystem errors pass through.
 */
export function applyConnectPlan(plan: ConnectPlan): string[] {
  const written: string[] = []
  for (const file of plan.files) {
    if (!file.changed) continue
    if (readText(file.path) !== file.before) {
      throw invalidInput(file.path, `${file.path} changed since the plan was made; nothing written to it`, 'Run the command again.')
    }
    writeAtomic(file.path, file.after)
    written.push(file.path)
  }
  return written
}

function parseQuiet(text: string | undefined): JsonObject {
  try {
    const v: unknown = text === undefined ? {} : JSON.parse(text)
    return isObject(v) ? v : {}
  } catch {
    return {}
  }
}

/** mnemo's items in a config text: event -> its mnemo hooks as JSON, or `mnemo` -> the MCP entry as JSON. */
function mnemoItems(kind: ConnectPlanFile['kind'], text: string | undefined): Map<string, string> {
  const config = parseQuiet(text)
  const out = new Map<string, string>()
  if (kind === 'mcp') {
    if (isObject(config.mcpServers) && Object.hasOwn(config.mcpServers, MCP_SERVER))
      out.set(MCP_SERVER, JSON.stringify(config.mcpServers[MCP_SERVER]))
    return out
  }
  for (const [event, groups] of Object.entries(isObject(config.hooks) ? config.hooks : {})) {
    const found = (Array.isArray(groups) ? groups : []).flatMap((g) =>
      (isObject(g) && Array.isArray(g.hooks) ? g.hooks : [])
        .filter((h) => isObject(h) && typeof h.command === 'string' && isMnemoHookCommand(h.command))
        .map((h) => [isObject(g) ? g.matcher : null, h]),
    )
    if (found.length > 0) out.set(event, JSON.stringify(found))
  }
  return out
}

function summarize(file: ConnectPlanFile): string[] {
  const [b, a] = [mnemoItems(file.kind, file.before), mnemoItems(file.kind, file.after)]
  const keys = [...new Set([...b.keys(), ...a.keys()])]
  const groups: Array<[string, (k: string) => boolean]> = [
    ['added', (k) => !b.has(k)],
    ['updated', (k) => b.has(k) && a.has(k) && b.get(k) !== a.get(k)],
    ['removed', (k) => !a.has(k)],
    ['unchanged', (k) => b.get(k) === a.get(k)],
  ]
  const label = file.kind === 'mcp' ? 'mcp servers' : 'hooks'
  return groups
    .map(([what, test]) => [what, keys.filter(test)] as const)
    .filter(([, list]) => list.length > 0)
    .map(([what, list]) => `  ${label} ${what}: ${list.join(', ')}`)
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
 * Renders a plan for `--dry-run`: per file a header (`create`, `update` or
 * `unchanged`), then `  hooks <added|updated|removed|unchanged>: <events>` or
 * `  mcp servers <...>: mnemo` for mnemo's own entries, then for a changed
 * file a line diff (`  @@ line N @@`, `  - old`, `  + new`, `    same`).
 * Pure; never throws.
 */
export function renderPlanDiff(plan: ConnectPlan): string {
  const out: string[] = []
  for (const file of plan.files) {
    const state = !file.changed ? 'unchanged' : file.before === undefined ? 'create' : 'update'
    out.push(`${file.path} (${state})`, ...summarize(file))
    if (file.changed) out.push(...lineDiff(file.before ?? '', file.after))
  }
  if (plan.files.length === 0) out.push('nothing to do: no Claude Code configuration files found')
  return `${out.join('\n')}\n`
}
