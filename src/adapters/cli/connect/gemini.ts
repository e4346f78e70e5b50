/**
 * `mnemo connect gemini` / `mnemo disconnect gemini`: registers mnemo's MCP
 * server and lifecycle hooks with Google's Gemini CLI, both in one file:
 * `settings.json`.
 *
 * - User scope: `<home>/.gemini/settings.json`, where `<home>` is
 *   `$GEMINI_CLI_HOME` when set (Gemini CLI's own home override), else the
 *   home directory. Project scope: `<projectDir>/.gemini/settings.json`.
 * - MCP: `mcpServers.mnemo` = `{ command, args, env? }`
 *   (https://geminicli.com/docs/tools/mcp-server/).
 * - Hooks: `hooks.<Event>` = `[{ hooks: [{ name, type: "command", command,
 *   timeout }] }]`, timeout in milliseconds, event JSON on stdin with
 *   `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`
 *   (https://geminicli.com/docs/hooks/reference/). The hooks system is on by
 *   default (`hooksConfig.enabled`, formerly `tools.enableHooks`); connect
 *   adds a note when either is set to false.
 *
 * Gemini CLI replaces `$NAME` and `${NAME}` in every string of
 * settings.json with the environment variable's value when it is set
 * (packages/cli/src/utils/envVarResolver.ts), with no escape syntax, so
 * paths containing `$` followed by a letter, digit, `_` or `{` are refused.
 * The file may contain comments (Gemini CLI strips them); mnemo edits only
 * its own keys and keeps them.
 */
import { join } from 'node:path'
import { GEMINI_HOOK_EVENTS } from '../../../core/hook-events.js'
import {
  type AgentLocation,
  agentHookCommand,
  type ConnectScope,
  envDir,
  isMnemoHookCommand,
  refuseSubstitution,
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
  removeIfEmptied,
} from './connect-plan.js'
import {
  groupedHookItems,
  isJsonObject,
  type JsonObject,
  mcpServerEdits,
  mcpServerItems,
  parseJsonQuiet,
  planGroupedHooks,
} from './json-config.js'
import { planJsonFile } from './json-edit.js'

export { GEMINI_HOOK_EVENTS }

const TIMEOUT_MS: Readonly<Record<string, number>> = { SessionStart: 15_000 }
const DEFAULT_TIMEOUT_MS = 10_000
/** `$NAME` / `${NAME}` as Gemini CLI's settings loader substitutes them. */
const GEMINI_SUBSTITUTION = /\$(?:\w|\{)/

/** Which hook events connect registers for Gemini CLI and what `mnemo hook` receives for each. */
export function describeGeminiHooks(): AgentHooksDescription {
  return {
    agent: 'gemini',
    supported: true,
    events: GEMINI_HOOK_EVENTS,
    note:
      'settings.json command hooks, payload JSON on stdin (session_id, transcript_path, cwd, hook_event_name, timestamp; BeforeAgent: prompt; ' +
      'AfterTool: tool_name, tool_input, tool_response; AfterAgent: prompt, prompt_response; SessionEnd: reason); ' +
      'command `"<node>" "<cli>" hook <mnemoEvent> --agent gemini`. stdout must be JSON or empty. ' +
      'Not registered: BeforeTool, BeforeModel/AfterModel/BeforeToolSelection (per-call latency), PreCompress (mnemo prints plain text there), Notification.',
  }
}

/**
 * The settings file for a scope (see the module comment).
 * @throws MnemoError INVALID_INPUT (details.path `scope`) for an unknown scope.
 */
export function geminiPaths(options: AgentLocation = {}): { scope: ConnectScope; settingsPath: string } {
  const scope = resolveScope(options.scope)
  const root = scope === 'project' ? resolveProject(options) : (envDir(options, 'GEMINI_CLI_HOME') ?? resolveHome(options))
  return { scope, settingsPath: join(root, '.gemini', 'settings.json') }
}

function plan(
  path: string,
  mine: (c: string) => boolean,
  entry: JsonObject | undefined,
  add: ((event: string) => JsonObject) | undefined,
  skipMissing: boolean,
): ConnectPlanFile | undefined {
  const events = GEMINI_HOOK_EVENTS.map((e) => e.agentEvent)
  return planJsonFile(path, skipMissing, {
    kind: 'settings',
    comments: true,
    edits: (config) => [...mcpServerEdits(path, config, entry), ...planGroupedHooks(path, config, 'hooks', events, mine, add)],
    items: { 'mcp servers': mcpServerItems, hooks: (config) => groupedHookItems(config, 'hooks', mine) },
  })
}

/**
 * Plans `mnemo connect gemini`; reads the file, writes nothing. Sets
 * `mcpServers.mnemo` ({@link stdioMcpEntry}) and one hook group per
 * {@link GEMINI_HOOK_EVENTS} event: `{ name: "mnemo-<Event>", type:
 * "command", command: [MNEMO_HOME="…" ]"<node>" "<cli>" hook <mnemoEvent>
 * --agent gemini, timeout: 15000 for SessionStart, 10000 else }`, replacing
 * earlier mnemo commands in place. Everything else in the file keeps its
 * text; a file needing no change keeps its bytes.
 * @throws MnemoError INVALID_INPUT (details.path = the file) for invalid JSON
 *   or wrong types of `mcpServers`, `hooks`, `hooks.<our event>`;
 *   INVALID_INPUT (details.path = the option) for bad options, including a
 *   path Gemini CLI would rewrite (`$NAME`, `${NAME}`).
 */
export function planGeminiConnect(options: AgentConnectOptions = {}): ConnectPlan {
  const { scope, settingsPath } = geminiPaths(options)
  const cmd = resolveAgentCommand(options)
  refuseSubstitution(cmd, GEMINI_SUBSTITUTION, 'Gemini CLI', '"$" followed by a name or "{"')
  const mine = (c: string): boolean => isMnemoHookCommand(c, shellQuote(cmd.cliPath), 'gemini')
  const mnemoEvent = new Map(GEMINI_HOOK_EVENTS.map((e) => [e.agentEvent, e.mnemoEvent]))
  const group = (event: string): JsonObject => ({
    hooks: [
      {
        name: `mnemo-${event}`,
        type: 'command',
        command: agentHookCommand(cmd, mnemoEvent.get(event) ?? 'Stop', 'gemini'),
        timeout: TIMEOUT_MS[event] ?? DEFAULT_TIMEOUT_MS,
      },
    ],
  })
  const file = plan(settingsPath, mine, stdioMcpEntry(cmd, 'gemini'), group, false)
  const files = file === undefined ? [] : [file]
  const notes: string[] = []
  const after = parseJsonQuiet(file?.after)
  const off =
    (isJsonObject(after.hooksConfig) && after.hooksConfig.enabled === false) ||
    (isJsonObject(after.tools) && after.tools.enableHooks === false)
  if (off)
    notes.push(
      `the hooks system is turned off in ${settingsPath} (hooksConfig.enabled or tools.enableHooks is false); mnemo's MCP server still works, capture does not.`,
    )
  if (scope === 'project') notes.push('Gemini CLI ignores project settings in a folder you have not trusted when folder trust is on.')
  return { client: 'gemini', action: 'connect', scope, files, notes }
}

/**
 * Plans `mnemo disconnect gemini`; reads the file, writes nothing. Removes
 * `mcpServers.mnemo` and every mnemo hook command, nothing else; groups,
 * event lists, `hooks` and `mcpServers` emptied by that are removed. A
 * missing file is left out of the plan; a file left empty is deleted
 * ({@link removeIfEmptied}).
 * @throws MnemoError INVALID_INPUT as {@link planGeminiConnect} (file errors only).
 */
export function planGeminiDisconnect(options: AgentDisconnectOptions = {}): ConnectPlan {
  const { scope, settingsPath } = geminiPaths(options)
  const quoted = options.cliPath === undefined ? undefined : shellQuote(options.cliPath)
  const file = removeIfEmptied(
    plan(settingsPath, (c) => isMnemoHookCommand(c, quoted, 'gemini'), undefined, undefined, true),
    'json',
  )
  return { client: 'gemini', action: 'disconnect', scope, files: file === undefined ? [] : [file], notes: [] }
}
