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
 * Codex runs a user-written hook only after the user trusts it (the
 * "Hooks need review" prompt at start-up, or `/hooks`); trust is stored per
 * hook as `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]
 * trusted_hash` in `config.toml` (codex-rs/hooks/src/engine/discovery.rs).
 * mnemo never writes trust records: the plan carries a note telling the user
 * to review the hooks.
 *
 * Codex's older `notify` setting is not used: it passes its JSON as a
 * command-line argument rather than on stdin, fires only at turn end, and
 * holds a single program (writing it would replace the user's own).
 *
 * `config.toml` is edited as text through {@link editTomlTable}: only the
 * `[mcp_servers.mnemo]` table's lines change; other tables, comments and
 * blank lines keep their bytes.
 */
import { join } from 'node:path'
import { shellQuote } from './claude-code.js'
import {
  agentHookCommand,
  editJsonText,
  editTomlTable,
  envDir,
  groupedHookItems,
  isMnemoAgentHookCommand,
  parseJsonConfig,
  parseJsonQuiet,
  parseTomlConfig,
  planFileOf,
  planGroupedHooks,
  readConfigText,
  resolveAgentCommand,
  resolveHome,
  resolveProject,
  resolveScope,
  summarizeItems,
  tomlValueAt,
  type AgentConnectOptions,
  type AgentConnectPlan,
  type AgentDisconnectOptions,
  type AgentHooksDescription,
  type AgentLocation,
  type AgentPlanFile,
  type ConnectScope,
  type JsonObject,
  type ResolvedCommand,
  type TomlScalar,
  type TomlTable,
} from './config-files.js'

import { CODEX_HOOK_EVENTS } from '../../capture/agent-hook-events.js'
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
    note: 'hooks.json command hooks, payload JSON on stdin (Claude Code field names: session_id, transcript_path, cwd, hook_event_name, plus turn_id and model); '
      + 'command `"<node>" "<cli>" hook <mnemoEvent> --agent codex`. Codex runs them only after the user trusts them in the hook review. '
      + 'Not registered: PreToolUse/PermissionRequest (per-call latency, log-only in mnemo), PreCompact/PostCompact (mnemo prints plain text there), SubagentStart, StopFailure.',
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
  const dir = scope === 'project' ? join(resolveProject(options), '.codex') : envDir(options, 'CODEX_HOME') ?? join(resolveHome(options), '.codex')
  return { scope, configPath: join(dir, 'config.toml'), hooksPath: join(dir, 'hooks.json') }
}

/** The `[mcp_servers.mnemo]` entry: `command` = node, `args` = [cli, "mcp"], `env` = { MNEMO_HOME } when set. */
export function codexMcpEntry(cmd: ResolvedCommand): Record<string, TomlScalar> {
  const entry: Record<string, TomlScalar> = { command: cmd.nodePath, args: [cmd.cliPath, 'mcp', '--agent', 'codex'] }
  if (cmd.mnemoHome !== undefined) entry.env = { MNEMO_HOME: cmd.mnemoHome }
  return entry
}

const mcpItems = (doc: TomlTable): Map<string, string> => {
  const v = tomlValueAt(doc, CODEX_MCP_KEY)
  return new Map(v === undefined ? [] : [['mnemo', JSON.stringify(v)]])
}

function planConfig(path: string, entry: Record<string, TomlScalar> | undefined, skipMissing: boolean): AgentPlanFile | undefined {
  const before = readConfigText(path)
  if (before === undefined && skipMissing) return undefined
  const after = editTomlTable(path, before, CODEX_MCP_KEY, entry)
  const summary = summarizeItems('mcp servers', mcpItems(parseTomlConfig(path, before)), mcpItems(parseTomlConfig(path, after)))
  return planFileOf(path, 'mcp', before, after, summary)
}

function planHooks(path: string, mine: (c: string) => boolean, add: ((event: string) => JsonObject) | undefined, skipMissing: boolean): AgentPlanFile | undefined {
  const before = readConfigText(path)
  if (before === undefined && skipMissing) return undefined
  const config = parseJsonConfig(path, before, false) // Codex reads hooks.json with a strict JSON parser
  const edits = planGroupedHooks(path, config, 'hooks', CODEX_HOOK_EVENTS.map((e) => e.agentEvent), mine, add)
  const after = editJsonText(before, config, edits)
  return planFileOf(path, 'settings', before, after, summarizeItems('hooks', groupedHookItems(config, 'hooks', mine), groupedHookItems(parseJsonQuiet(after), 'hooks', mine)))
}

const hooksDisabled = (doc: TomlTable): boolean =>
  tomlValueAt(doc, ['features', 'hooks']) === false || tomlValueAt(doc, ['features', 'codex_hooks']) === false

/**
 * Plans `mnemo connect codex`; reads files, writes nothing. `config.toml`
 * gets `[mcp_servers.mnemo]` ({@link codexMcpEntry}); `hooks.json` gets one
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
export function planCodexConnect(options: AgentConnectOptions = {}): AgentConnectPlan {
  const { scope, configPath, hooksPath } = codexPaths(options)
  const cmd = resolveAgentCommand(options)
  const mine = (c: string): boolean => isMnemoAgentHookCommand(c, 'codex', shellQuote(cmd.cliPath))
  const mnemoEvent = new Map(CODEX_HOOK_EVENTS.map((e) => [e.agentEvent, e.mnemoEvent]))
  const group = (event: string): JsonObject => ({
    hooks: [{ type: 'command', command: agentHookCommand('codex', mnemoEvent.get(event) ?? 'Stop', cmd, shellQuote), timeout: TIMEOUT_SECONDS[event] ?? DEFAULT_TIMEOUT_SECONDS }],
  })
  const files = [planConfig(configPath, codexMcpEntry(cmd), false), planHooks(hooksPath, mine, group, false)].filter((f): f is AgentPlanFile => f !== undefined)
  const notes: string[] = []
  if (files[1]?.changed === true) notes.push('Codex runs new or changed hooks only after you trust them: start `codex` and accept the hook review (or open /hooks).')
  const after = files[0] === undefined ? {} : parseTomlConfig(configPath, files[0].after)
  if (hooksDisabled(after)) notes.push(`hooks are turned off in ${configPath} ([features] hooks = false); mnemo's MCP server still works, capture does not.`)
  if (scope === 'project') notes.push('Codex reads .codex/ in a project only when you trust that project.')
  return { client: 'codex', action: 'connect', scope, files, notes }
}

/**
 * Plans `mnemo disconnect codex`; reads files, writes nothing. Removes
 * `[mcp_servers.mnemo]` (with its sub-tables) and every mnemo hook command
 * ({@link isMnemoAgentHookCommand}), nothing else; groups, event lists and a
 * `hooks` object emptied by that are removed. Missing files are left out of
 * the plan (files are never deleted).
 * @throws MnemoError INVALID_INPUT as {@link planCodexConnect}.
 */
export function planCodexDisconnect(options: AgentDisconnectOptions = {}): AgentConnectPlan {
  const { scope, configPath, hooksPath } = codexPaths(options)
  const quoted = options.cliPath === undefined ? undefined : shellQuote(options.cliPath)
  const mine = (c: string): boolean => isMnemoAgentHookCommand(c, 'codex', quoted)
  const files = [planConfig(configPath, undefined, true), planHooks(hooksPath, mine, undefined, true)].filter((f): f is AgentPlanFile => f !== undefined)
  return { client: 'codex', action: 'disconnect', scope, files, notes: [] }
}
