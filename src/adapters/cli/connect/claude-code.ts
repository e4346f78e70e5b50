/**
 * `mnemo connect claude-code`: writes mnemo's hook entries and its MCP
 * server entry into Claude Code's configuration files, idempotently, and
 * keeps every other key, hook and server in those files as it was.
 *
 * Planning is pure (reads files, writes nothing); {@link applyConnectPlan}
 * writes each changed file atomically. mnemo owns its own entries: a hook
 * command is mnemo's when it ends in `hook <Event>` and names mnemo or its
 * CLI script (see {@link isMnemoHookCommand}); the MCP server is the one
 * named `mnemo`. Claude Code reads strict JSON, and a changed file is
 * written back whole as 2-space JSON.
 */
import { join } from 'node:path'
import { CLAUDE_HOOK_EVENTS, type ClaudeHookEvent } from '../../../core/hook-events.js'
import {
  type AgentCommandOptions,
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
  type ConnectPlan,
  type ConnectPlanFile,
  removeIfEmptied,
} from './connect-plan.js'
import { groupedHookItems, type JsonObject, mcpServerEdits, mcpServerItems, planGroupedHooks } from './json-config.js'
import { planJsonFile } from './json-edit.js'

/** Claude Code hook events mnemo registers, in the order they are written (the events capture understands). */
export const CLAUDE_CODE_HOOK_EVENTS = CLAUDE_HOOK_EVENTS
/** One of {@link CLAUDE_CODE_HOOK_EVENTS}. */
type ClaudeCodeHookEvent = ClaudeHookEvent

const TOOL_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure'])
const TIMEOUT_SECONDS: Partial<Record<string, number>> = { SessionStart: 15 }
const DEFAULT_TIMEOUT_SECONDS = 10

/**
 * The shell command Claude Code runs for `event`:
 * `[MNEMO_HOME="<home>" ]"<nodePath>" "<cliPath>" hook <event>`, every path
 * quoted by {@link shellQuote}. Defaults as in {@link AgentCommandOptions}.
 * @throws MnemoError INVALID_INPUT (details.path `nodePath`/`cliPath`/`mnemoHome`) for a relative or empty path.
 */
export function claudeCodeHookCommand(event: ClaudeCodeHookEvent, options: AgentCommandOptions = {}): string {
  return agentHookCommand(resolveAgentCommand(options), event)
}

/**
 * The two files for a scope. User: `$CLAUDE_CONFIG_DIR/settings.json` and
 * `$CLAUDE_CONFIG_DIR/.claude.json` when that variable is set and non-empty,
 * else `<home>/.claude/settings.json` and `<home>/.claude.json`. Project:
 * `<projectDir>/.claude/settings.json` and `<projectDir>/.mcp.json`.
 * @throws MnemoError INVALID_INPUT (details.path `scope`) for an unknown scope.
 */
export function claudeCodePaths(options: AgentLocation = {}): { scope: ConnectScope; settingsPath: string; mcpPath: string } {
  const scope = resolveScope(options.scope)
  if (scope === 'project') {
    const dir = resolveProject(options)
    return { scope, settingsPath: join(dir, '.claude', 'settings.json'), mcpPath: join(dir, '.mcp.json') }
  }
  const configDir = envDir(options, 'CLAUDE_CONFIG_DIR')
  if (configDir !== undefined) return { scope, settingsPath: join(configDir, 'settings.json'), mcpPath: join(configDir, '.claude.json') }
  const home = resolveHome(options)
  return { scope, settingsPath: join(home, '.claude', 'settings.json'), mcpPath: join(home, '.claude.json') }
}

/** Claude Code reads strict JSON; a changed file is written back whole. Summaries count every mnemo hook command, whatever CLI path it runs. */
const CLAUDE_FILE = { comments: false, layout: 'rewrite' } as const
const settingsItems = { hooks: (c: JsonObject) => groupedHookItems(c, 'hooks', (command) => isMnemoHookCommand(command)) }
const mcpItems = { 'mcp servers': mcpServerItems }

/**
 * Plans `mnemo connect claude-code`; reads files, writes nothing. The
 * settings file gets one mnemo matcher group per event in
 * {@link CLAUDE_CODE_HOOK_EVENTS} (matcher `"*"` for tool events, none
 * otherwise; timeout 15 s for SessionStart, 10 s else) replacing any earlier
 * mnemo command; the MCP file gets `mcpServers.mnemo` = `{type: "stdio",
 * command: nodePath, args: [cliPath, "mcp", "--agent", "claude-code"],
 * env?: {MNEMO_HOME}}`. A changed file is written as 2-space JSON with a
 * trailing newline; a file whose content would not change keeps its exact
 * bytes. Defaults as in {@link AgentConnectOptions}.
 * @throws MnemoError INVALID_INPUT (details.path = the file) when a file is not
 *   a JSON object (including JSON with comments), `hooks`, `hooks.<our event>`
 *   or `mcpServers` has the wrong type, or a file cannot be read; INVALID_INPUT
 *   for bad options (details.path = the option name).
 */
export function planClaudeCodeConnect(options: AgentConnectOptions = {}): ConnectPlan {
  const { scope, settingsPath, mcpPath } = claudeCodePaths(options)
  const cmd = resolveAgentCommand(options)
  const mine = (c: string): boolean => isMnemoHookCommand(c, shellQuote(cmd.cliPath))
  const group = (event: string): JsonObject => {
    const hook: JsonObject = {
      type: 'command',
      command: agentHookCommand(cmd, event as ClaudeCodeHookEvent),
      timeout: TIMEOUT_SECONDS[event] ?? DEFAULT_TIMEOUT_SECONDS,
    }
    return TOOL_EVENTS.has(event) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] }
  }
  const entry: JsonObject = { type: 'stdio', ...stdioMcpEntry(cmd, 'claude-code') }
  const files = [
    planJsonFile(settingsPath, false, {
      ...CLAUDE_FILE,
      kind: 'settings',
      edits: (s) => planGroupedHooks(settingsPath, s, 'hooks', CLAUDE_CODE_HOOK_EVENTS, mine, group),
      items: settingsItems,
    }),
    planJsonFile(mcpPath, false, { ...CLAUDE_FILE, kind: 'mcp', edits: (c) => mcpServerEdits(mcpPath, c, entry), items: mcpItems }),
  ].filter((f): f is ConnectPlanFile => f !== undefined)
  return { client: 'claude-code', action: 'connect', scope, files, notes: [] }
}

/**
 * Plans `mnemo disconnect claude-code`; reads files, writes nothing. Removes
 * every mnemo hook command ({@link isMnemoHookCommand}) and `mcpServers.mnemo`,
 * nothing else. Matcher groups, event lists, `hooks` and `mcpServers` left
 * empty by that removal are deleted; containers that were already empty stay.
 * Missing files are left out of the plan; a file left holding nothing but `{}`
 * is deleted ({@link removeIfEmptied}), one holding anything else is kept.
 * @throws MnemoError INVALID_INPUT as {@link planClaudeCodeConnect}.
 */
export function disconnectClaudeCode(options: AgentDisconnectOptions = {}): ConnectPlan {
  const { scope, settingsPath, mcpPath } = claudeCodePaths(options)
  const quoted = options.cliPath === undefined ? undefined : shellQuote(options.cliPath)
  const mine = (c: string): boolean => isMnemoHookCommand(c, quoted)
  const files = [
    removeIfEmptied(
      planJsonFile(settingsPath, true, {
        ...CLAUDE_FILE,
        kind: 'settings',
        edits: (s) => planGroupedHooks(settingsPath, s, 'hooks', CLAUDE_CODE_HOOK_EVENTS, mine),
        items: settingsItems,
      }),
      'json',
    ),
    removeIfEmptied(
      planJsonFile(mcpPath, true, { ...CLAUDE_FILE, kind: 'mcp', edits: (c) => mcpServerEdits(mcpPath, c, undefined), items: mcpItems }),
      'json',
    ),
  ].filter((f): f is ConnectPlanFile => f !== undefined)
  return { client: 'claude-code', action: 'disconnect', scope, files, notes: [] }
}
