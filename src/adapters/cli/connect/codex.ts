/**
 * `mnemo connect codex` / `mnemo disconnect codex`: registers mnemo's MCP
 * server and lifecycle hooks with the OpenAI Codex CLI.
 *
 * Files:
 * - MCP: `config.toml`, table `[mcp_servers.mnemo]` with `command`, `args`
 *   and `env` (inline table), as documented in
 *   https://github.com/openai/codex/blob/main/docs/config.md (section
 *   `mcp_servers`) and https://developers.openai.com/codex/mcp.
 * - Hooks: `hooks.json` next to it, `{"hooks": {"<Event>": [{"hooks":
 *   [{"type": "command", "command": …, "timeout": <seconds>}]}]}}`, event
 *   JSON on stdin, as documented in https://developers.openai.com/codex/hooks
 *   (hooks are on by default; `[features] hooks = false`, or the older alias
 *   `codex_hooks`, turns them off).
 * - User scope: `$CODEX_HOME` (default `~/.codex`). Project scope:
 *   `<project>/.codex/`, which Codex reads only for projects you trust.
 *
 * Codex runs a user-written hook only after it is trusted (the "Hooks need
 * review" prompt at start-up, or `/hooks`, writes the record); trust is
 * stored per hook as `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]
 * trusted_hash = "sha256:…"` in the user's `config.toml`, the hash being
 * {@link codexHookTrustHash} of the hook as written
 * (codex-rs/hooks/src/engine/discovery.rs, `command_hook_hash`;
 * codex-rs/config/src/fingerprint.rs, `version_for_toml`). Running `mnemo
 * connect codex` is the user's decision to run mnemo's hooks, so at user
 * scope connect records that trust for exactly the hooks it wrote (a hook
 * changed later by anyone no longer matches its hash, and Codex asks
 * again). At project scope it does not: a repository must not be able to
 * trust its own hooks, so the user trusts them in Codex.
 *
 * Codex's older `notify` setting is not used: it passes its JSON as a
 * command-line argument rather than on stdin, fires only at turn end, and
 * holds a single program (writing it would replace the user's own).
 *
 * `config.toml` is edited as text through {@link editTomlTable}: only the
 * `[mcp_servers.mnemo]` table's lines change; other tables, comments and
 * blank lines keep their bytes.
 */
import { createHash } from 'node:crypto'
import { join, resolve } from 'node:path'
import { CODEX_HOOK_EVENTS } from '../../../core/hook-events.js'
import {
  type AgentLocation,
  agentHookCommand,
  type ConnectScope,
  envDir,
  isMnemoHookCommand,
  resolveAgentCommand,
  resolveHome,
  resolveProject,
  resolveScope,
  shellQuote,
  stdioMcpEntry,
} from './agent-command.js'
import {
  type AgentConnectOptions,
  type AgentDisconnectOptions,
  type AgentHooksDescription,
  type ConnectPlan,
  type ConnectPlanFile,
  planFileOf,
  readConfigText,
  removeIfEmptied,
  summarizeItems,
} from './connect-plan.js'
import { groupedHookItems, type JsonObject, parseJsonQuiet, planGroupedHooks } from './json-config.js'
import { planJsonFile } from './json-edit.js'
import { editTomlTable, parseTomlConfig, type TomlScalar, type TomlTable, tomlValueAt } from './toml-config.js'

export { CODEX_HOOK_EVENTS }

/** The MCP server table mnemo owns. */
export const CODEX_MCP_KEY: readonly string[] = ['mcp_servers', 'mnemo']
const TIMEOUT_SECONDS: Readonly<Record<string, number>> = { SessionStart: 15 }
const DEFAULT_TIMEOUT_SECONDS = 10

/** Which hook events connect registers for Codex and what `mnemo hook` receives for each. */
export function describeCodexHooks(): AgentHooksDescription {
  return {
    agent: 'codex',
    supported: true,
    events: CODEX_HOOK_EVENTS,
    note:
      'hooks.json command hooks, payload JSON on stdin (Claude Code field names: session_id, transcript_path, cwd, hook_event_name, plus turn_id and model); ' +
      'command `"<node>" "<cli>" hook <mnemoEvent> --agent codex`. Codex runs a hook only once it is trusted: at user scope connect records that trust in config.toml ([hooks.state]); project-scope hooks are trusted in Codex\'s hook review. ' +
      'Not registered: PreToolUse/PermissionRequest (per-call latency, log-only in mnemo), PreCompact/PostCompact (mnemo prints plain text there), SubagentStart, StopFailure.',
  }
}

/**
 * The two files for a scope. User: `$CODEX_HOME/config.toml` and
 * `$CODEX_HOME/hooks.json` when that variable is set and non-empty, else
 * under `<home>/.codex/`. Project: under `<projectDir>/.codex/`.
 * @throws MnemoError INVALID_INPUT (details.path `scope`) for an unknown scope.
 */
export function codexPaths(options: AgentLocation = {}): { scope: ConnectScope; configPath: string; hooksPath: string } {
  const scope = resolveScope(options.scope)
  const dir =
    scope === 'project' ? join(resolveProject(options), '.codex') : (envDir(options, 'CODEX_HOME') ?? join(resolveHome(options), '.codex'))
  return { scope, configPath: join(dir, 'config.toml'), hooksPath: join(dir, 'hooks.json') }
}

const mcpItems = (doc: TomlTable): Map<string, string> => {
  const v = tomlValueAt(doc, CODEX_MCP_KEY)
  return new Map(v === undefined ? [] : [['mnemo', JSON.stringify(v)]])
}

/** The JSON text Codex hashes, with object keys sorted at every level (serde_json's compact form). */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  if (typeof v === 'object' && v !== null) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v)
}

/** Codex's label of a hook event in trust keys and hashes: `SessionStart` → `session_start`. */
export const codexEventLabel = (event: string): string => event.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase()

/** One command handler of a hooks.json group, as Codex reads it. */
interface CodexCommandHook {
  command: string
  /** Seconds; Codex's default is 600 (SessionEnd: 1, at most 3). */
  timeout?: number
  async?: boolean
  statusMessage?: string
}

/**
 * The hash Codex compares with a hook's `trusted_hash` before it runs it:
 * `sha256:` + hex SHA-256 of the compact JSON, keys sorted, of `{event_name:
 * <label>, matcher?, hooks: [{type: "command", command, timeout, async,
 * statusMessage?}]}` — the hook normalised as Codex normalises it (timeout
 * defaulted to 600 s and at least 1; SessionEnd's defaulted to 1 and kept in
 * 1–3; no matcher for UserPromptSubmit and Stop, which ignore it). Source:
 * codex-rs/hooks/src/engine/discovery.rs (`command_hook_hash`,
 * `NormalizedHookIdentity`) and codex-rs/config/src/fingerprint.rs
 * (`version_for_toml`), Codex CLI 0.171; checked against the real binary by
 * the agent suite (test/agents/).
 */
export function codexHookTrustHash(event: string, matcher: string | undefined, hook: CodexCommandHook): string {
  const timeout = event === 'SessionEnd' ? Math.min(3, Math.max(1, hook.timeout ?? 1)) : Math.max(1, hook.timeout ?? 600)
  const handler: Record<string, unknown> = { type: 'command', command: hook.command, timeout, async: hook.async ?? false }
  if (hook.statusMessage !== undefined) handler.statusMessage = hook.statusMessage
  const identity: Record<string, unknown> = { event_name: codexEventLabel(event), hooks: [handler] }
  if (matcher !== undefined && event !== 'UserPromptSubmit' && event !== 'Stop') identity.matcher = matcher
  return `sha256:${createHash('sha256').update(canonicalJson(identity), 'utf8').digest('hex')}`
}

/** A mnemo hook in a hooks.json: its trust key (`<hooks.json>:<event label>:<group>:<handler>`) and its hash. */
interface CodexTrustRecord {
  key: string
  event: string
  hash: string
}

/** mnemo's command hooks in a parsed hooks.json, with the trust key and hash Codex gives each. */
export function codexMnemoHookTrust(hooksPath: string, hooks: JsonObject, mine: (c: string) => boolean): CodexTrustRecord[] {
  const out: CodexTrustRecord[] = []
  const events = hooks.hooks
  if (typeof events !== 'object' || events === null || Array.isArray(events)) return out
  for (const [event, groups] of Object.entries(events)) {
    if (!Array.isArray(groups)) continue
    groups.forEach((g, gi) => {
      if (typeof g !== 'object' || g === null || Array.isArray(g) || !Array.isArray(g.hooks)) return
      const matcher = typeof g.matcher === 'string' ? g.matcher : undefined
      g.hooks.forEach((h, hi) => {
        if (
          typeof h !== 'object' ||
          h === null ||
          Array.isArray(h) ||
          h.type !== 'command' ||
          typeof h.command !== 'string' ||
          !mine(h.command)
        )
          return
        const hook: CodexCommandHook = { command: h.command }
        if (typeof h.timeout === 'number') hook.timeout = h.timeout
        if (typeof h.async === 'boolean') hook.async = h.async
        if (typeof h.statusMessage === 'string') hook.statusMessage = h.statusMessage
        out.push({
          key: `${resolve(hooksPath)}:${codexEventLabel(event)}:${gi}:${hi}`,
          event,
          hash: codexHookTrustHash(event, matcher, hook),
        })
      })
    })
  }
  return out
}

/** The trust records at `keys`, by the event label in each key (`session_start`), for the plan summary. */
const trustItems = (doc: TomlTable, keys: readonly string[]): Map<string, string> =>
  new Map(
    keys.flatMap((k) => {
      const v = tomlValueAt(doc, ['hooks', 'state', k])
      return v === undefined ? [] : [[k.split(':').slice(-3).join(':'), JSON.stringify(v)]]
    }),
  )

/**
 * Plans config.toml: the MCP table, then the trust records — `untrust` keys
 * removed (unless trusted again), each of `trust` set to `trusted_hash`.
 */
function planConfig(
  path: string,
  entry: Record<string, TomlScalar> | undefined,
  skipMissing: boolean,
  trust: readonly CodexTrustRecord[] = [],
  untrust: readonly string[] = [],
): ConnectPlanFile | undefined {
  const before = readConfigText(path)
  if (before === undefined && skipMissing) return undefined
  let after = editTomlTable(path, before, CODEX_MCP_KEY, entry)
  const wanted = new Set(trust.map((t) => t.key))
  for (const key of untrust) if (!wanted.has(key)) after = editTomlTable(path, after, ['hooks', 'state', key], undefined)
  for (const t of trust) {
    const state = tomlValueAt(parseTomlConfig(path, after), ['hooks', 'state', t.key]) as Record<string, unknown> | undefined
    // A record already trusting this hash, or one the user turned off (`enabled = false`, from /hooks), stays as it is.
    if (state?.trusted_hash === t.hash || state?.enabled === false) continue
    after = editTomlTable(path, after, ['hooks', 'state', t.key], { trusted_hash: t.hash })
  }
  const keys = [...new Set([...trust.map((t) => t.key), ...untrust])]
  const summary = [
    ...summarizeItems('mcp servers', mcpItems(parseTomlConfig(path, before)), mcpItems(parseTomlConfig(path, after))),
    ...summarizeItems(
      'hook trust records',
      trustItems(parseTomlConfig(path, before), keys),
      trustItems(parseTomlConfig(path, after), keys),
    ),
  ]
  return planFileOf(path, 'mcp', before, after, summary)
}

function planHooks(
  path: string,
  mine: (c: string) => boolean,
  add: ((event: string) => JsonObject) | undefined,
  skipMissing: boolean,
): ConnectPlanFile | undefined {
  const events = CODEX_HOOK_EVENTS.map((e) => e.agentEvent)
  return planJsonFile(path, skipMissing, {
    kind: 'settings',
    comments: false, // Codex reads hooks.json with a strict JSON parser
    edits: (config) => planGroupedHooks(path, config, 'hooks', events, mine, add),
    items: { hooks: (config) => groupedHookItems(config, 'hooks', mine) },
  })
}

const hooksDisabled = (doc: TomlTable): boolean =>
  tomlValueAt(doc, ['features', 'hooks']) === false || tomlValueAt(doc, ['features', 'codex_hooks']) === false

/**
 * Plans `mnemo connect codex`; reads files, writes nothing. `config.toml`
 * gets `[mcp_servers.mnemo]` ({@link stdioMcpEntry}); `hooks.json` gets one
 * group per {@link CODEX_HOOK_EVENTS} event running
 * `[MNEMO_HOME="…" ]"<node>" "<cli>" hook <Event> --agent codex` (timeout
 * 15 s for SessionStart, 10 s else), replacing earlier mnemo commands in
 * place. A file that needs no change keeps its bytes. Notes: hooks must be
 * trusted in Codex; hooks turned off by `[features]`; project trust.
 * @throws MnemoError INVALID_INPUT (details.path = the file) for invalid TOML
 *   or JSON (hooks.json must be strict JSON), wrong types, or a
 *   `[mcp_servers.mnemo]` defined inline / with dotted keys; INVALID_INPUT
 *   (details.path = the option) for bad options.
 */
export function planCodexConnect(options: AgentConnectOptions = {}): ConnectPlan {
  const { scope, configPath, hooksPath } = codexPaths(options)
  const cmd = resolveAgentCommand(options)
  const mine = (c: string): boolean => isMnemoHookCommand(c, shellQuote(cmd.cliPath), 'codex')
  const mnemoEvent = new Map(CODEX_HOOK_EVENTS.map((e) => [e.agentEvent, e.mnemoEvent]))
  const group = (event: string): JsonObject => ({
    hooks: [
      {
        type: 'command',
        command: agentHookCommand(cmd, mnemoEvent.get(event) ?? 'Stop', 'codex'),
        timeout: TIMEOUT_SECONDS[event] ?? DEFAULT_TIMEOUT_SECONDS,
      },
    ],
  })
  const hooksFile = planHooks(hooksPath, mine, group, false)
  // At user scope connect records Codex's trust in the hooks it wrote (see the module comment); never at project scope.
  const trust = scope === 'user' && hooksFile !== undefined ? codexMnemoHookTrust(hooksPath, parseJsonQuiet(hooksFile.after), mine) : []
  const untrust =
    scope === 'user' && hooksFile !== undefined
      ? codexMnemoHookTrust(hooksPath, parseJsonQuiet(hooksFile.before), mine).map((t) => t.key)
      : []
  const files = [planConfig(configPath, stdioMcpEntry(cmd, 'codex'), false, trust, untrust), hooksFile].filter(
    (f): f is ConnectPlanFile => f !== undefined,
  )
  const notes: string[] = []
  if (scope === 'project' && files[1]?.changed === true)
    notes.push(
      'Codex runs project hooks only after you trust them: start `codex` in this project and accept the hook review (or open /hooks).',
    )
  const after = files[0] === undefined ? {} : parseTomlConfig(configPath, files[0].after)
  if (hooksDisabled(after))
    notes.push(`hooks are turned off in ${configPath} ([features] hooks = false); mnemo's MCP server still works, capture does not.`)
  if (scope === 'project') notes.push('Codex reads .codex/ in a project only when you trust that project.')
  return { client: 'codex', action: 'connect', scope, files, notes }
}

/**
 * Plans `mnemo disconnect codex`; reads files, writes nothing. Removes
 * `[mcp_servers.mnemo]` (with its sub-tables) and every mnemo hook command
 * ({@link isMnemoHookCommand}), nothing else; groups, event lists and a
 * `hooks` object emptied by that are removed. Missing files are left out of
 * the plan; a file left empty by the removal is deleted ({@link removeIfEmptied}).
 * @throws MnemoError INVALID_INPUT as {@link planCodexConnect}.
 */
export function planCodexDisconnect(options: AgentDisconnectOptions = {}): ConnectPlan {
  const { scope, configPath, hooksPath } = codexPaths(options)
  const quoted = options.cliPath === undefined ? undefined : shellQuote(options.cliPath)
  const mine = (c: string): boolean => isMnemoHookCommand(c, quoted, 'codex')
  const hooksFile = planHooks(hooksPath, mine, undefined, true)
  // The trust records of the hooks being removed go with them.
  const untrust =
    scope === 'user' && hooksFile !== undefined
      ? codexMnemoHookTrust(hooksPath, parseJsonQuiet(hooksFile.before), mine).map((t) => t.key)
      : []
  const files = [removeIfEmptied(planConfig(configPath, undefined, true, [], untrust), 'toml'), removeIfEmptied(hooksFile, 'json')].filter(
    (f): f is ConnectPlanFile => f !== undefined,
  )
  return { client: 'codex', action: 'disconnect', scope, files, notes: [] }
}
