/**
 * `mnemo connect cursor` / `mnemo disconnect cursor`: registers mnemo's MCP
 * server and agent hooks with Cursor.
 *
 * - MCP: `mcp.json`, `mcpServers.mnemo` = `{ command, args, env? }` — user
 *   scope `~/.cursor/mcp.json`, project scope `<projectDir>/.cursor/mcp.json`
 *   (https://cursor.com/docs/mcp). Cursor interpolates `${env:NAME}`,
 *   `${userHome}`, `${workspaceFolder}` and the like in these strings, so
 *   paths containing `${` are refused.
 * - Hooks: `hooks.json`, `{ "version": 1, "hooks": { "<event>": [{
 *   "command": "…" }] } }` — user scope `~/.cursor/hooks.json`, project
 *   scope `<projectDir>/.cursor/hooks.json` (https://cursor.com/docs/agent/hooks).
 *   Each hook is a command that gets the event JSON on stdin
 *   (`conversation_id`, `generation_id`, `hook_event_name`,
 *   `workspace_roots`, … — not Claude Code's field names: `mnemo hook`
 *   needs a Cursor normaliser before these events are stored; until then it
 *   keeps them aside as unreadable input and still exits 0).
 *
 * Both files may hold comments; mnemo edits only its own keys and keeps
 * everything else byte for byte.
 */
import { join } from 'node:path'
import { shellQuote } from './claude-code.js'
import {
  agentHookCommand,
  describeJson,
  editJsonText,
  isJsonObject,
  isMnemoAgentHookCommand,
  parseJsonConfig,
  parseJsonQuiet,
  planFileOf,
  removeIfEmptied,
  readConfigText,
  refuseSubstitution,
  resolveAgentCommand,
  resolveHome,
  resolveProject,
  resolveScope,
  summarizeItems,
  jsonEqual,
  type AgentConnectOptions,
  type AgentConnectPlan,
  type AgentDisconnectOptions,
  type AgentHooksDescription,
  type AgentLocation,
  type AgentPlanFile,
  type ConnectScope,
  type Json,
  type JsonEdit,
  type JsonObject,
  type ResolvedCommand,
} from './config-files.js'
import { invalidInput } from '../../core/errors.js'

import { CURSOR_HOOK_EVENTS } from '../../capture/agent-hook-events.js'
export { CURSOR_HOOK_EVENTS }

/** `${…}` as Cursor interpolates it in mcp.json. */
const CURSOR_SUBSTITUTION = /\$\{/

/** Which hook events connect registers for Cursor and what `mnemo hook` receives for each. */
export function describeCursorHooks(): AgentHooksDescription {
  return {
    agent: 'cursor',
    supported: true,
    events: CURSOR_HOOK_EVENTS,
    note:
      'hooks.json command hooks, payload JSON on stdin with Cursor field names (conversation_id, generation_id, hook_event_name, workspace_roots; ' +
      'beforeSubmitPrompt: prompt; postToolUse: tool_name, tool_input, tool_output; afterAgentResponse: text) — mapped onto the Claude Code field names by mnemo hook --agent cursor; ' +
      'command `"<node>" "<cli>" hook <mnemoEvent> --agent cursor`. afterAgentResponse stands in for Stop because it carries the reply text. ' +
      'Not registered: preToolUse, before*/after* Shell/MCP/ReadFile/FileEdit (per-call latency; postToolUse covers them), preCompact (mnemo prints plain text there), stop, subagentStart, afterAgentThought, Tab hooks.',
  }
}

/**
 * The two files for a scope: `<base>/.cursor/mcp.json` and
 * `<base>/.cursor/hooks.json`, base = home (user) or project directory.
 * @throws MnemoError INVALID_INPUT (details.path `scope`) for an unknown scope.
 */
export function cursorPaths(options: AgentLocation = {}): { scope: ConnectScope; mcpPath: string; hooksPath: string } {
  const scope = resolveScope(options.scope)
  const dir = join(scope === 'project' ? resolveProject(options) : resolveHome(options), '.cursor')
  return { scope, mcpPath: join(dir, 'mcp.json'), hooksPath: join(dir, 'hooks.json') }
}

/** `mcpServers.mnemo`: `{ command: node, args: [cli, "mcp"], env?: { MNEMO_HOME } }`. */
export function cursorMcpEntry(cmd: ResolvedCommand): JsonObject {
  const entry: JsonObject = { command: cmd.nodePath, args: [cmd.cliPath, 'mcp', '--agent', 'cursor'] }
  if (cmd.mnemoHome !== undefined) entry.env = { MNEMO_HOME: cmd.mnemoHome }
  return entry
}

const mcpItems = (config: JsonObject): Map<string, string> =>
  new Map(
    isJsonObject(config.mcpServers) && Object.hasOwn(config.mcpServers, 'mnemo')
      ? [['mnemo', JSON.stringify(config.mcpServers.mnemo)]]
      : [],
  )

function planMcp(path: string, entry: JsonObject | undefined, skipMissing: boolean): AgentPlanFile | undefined {
  const before = readConfigText(path)
  if (before === undefined && skipMissing) return undefined
  const config = parseJsonConfig(path, before, true)
  const raw = config.mcpServers
  if (raw !== undefined && !isJsonObject(raw))
    throw invalidInput(path, `${path}: "mcpServers" must be an object, found ${describeJson(raw)}; mnemo will not overwrite it`)
  const edits: JsonEdit[] =
    entry !== undefined
      ? [{ path: ['mcpServers', 'mnemo'], value: entry }]
      : raw !== undefined && Object.hasOwn(raw, 'mnemo')
        ? [{ path: Object.keys(raw).length === 1 ? ['mcpServers'] : ['mcpServers', 'mnemo'], value: undefined }]
        : []
  const after = editJsonText(before, config, edits)
  return planFileOf(path, 'mcp', before, after, summarizeItems('mcp servers', mcpItems(config), mcpItems(parseJsonQuiet(after))))
}

const isMine = (h: Json, mine: (c: string) => boolean): boolean => isJsonObject(h) && typeof h.command === 'string' && mine(h.command)

function hookItems(config: JsonObject, mine: (c: string) => boolean): Map<string, string> {
  const out = new Map<string, string>()
  for (const [event, list] of Object.entries(isJsonObject(config.hooks) ? config.hooks : {})) {
    const found = (Array.isArray(list) ? list : []).filter((h) => isMine(h, mine))
    if (found.length > 0) out.set(event, JSON.stringify(found))
  }
  return out
}

function planHooks(
  path: string,
  mine: (c: string) => boolean,
  add: ((event: string) => JsonObject) | undefined,
  skipMissing: boolean,
): AgentPlanFile | undefined {
  const before = readConfigText(path)
  if (before === undefined && skipMissing) return undefined
  const config = parseJsonConfig(path, before, true)
  const raw = config.hooks
  if (raw !== undefined && !isJsonObject(raw))
    throw invalidInput(path, `${path}: "hooks" must be an object, found ${describeJson(raw)}; mnemo will not overwrite it`)
  const ours = new Set(add === undefined ? [] : CURSOR_HOOK_EVENTS.map((e) => e.agentEvent))
  const edits: JsonEdit[] = []
  if (add !== undefined && config.version === undefined) edits.push({ path: ['version'], value: 1 })
  let kept = 0
  let removedAny = false
  for (const [event, list] of Object.entries(raw ?? {})) {
    if (!Array.isArray(list)) {
      if (ours.has(event))
        throw invalidInput(path, `${path}: "hooks.${event}" must be an array, found ${describeJson(list)}; mnemo will not overwrite it`)
      kept++
      continue
    }
    const slot = list.findIndex((h) => isMine(h, mine))
    const next: Json[] = list.filter((h) => !isMine(h, mine))
    if (slot >= 0) removedAny = true
    if (add !== undefined && ours.has(event)) next.splice(slot < 0 ? next.length : slot, 0, add(event))
    if (next.length === 0 && slot >= 0) {
      edits.push({ path: ['hooks', event], value: undefined })
      continue
    }
    kept++
    if (!jsonEqual(next, list)) edits.push({ path: ['hooks', event], value: next })
  }
  if (add !== undefined)
    for (const { agentEvent } of CURSOR_HOOK_EVENTS)
      if (!Object.hasOwn(raw ?? {}, agentEvent)) edits.push({ path: ['hooks', agentEvent], value: [add(agentEvent)] })
  const finalEdits = add === undefined && removedAny && kept === 0 ? [{ path: ['hooks'], value: undefined }] : edits
  const after = editJsonText(before, config, finalEdits)
  return planFileOf(
    path,
    'settings',
    before,
    after,
    summarizeItems('hooks', hookItems(config, mine), hookItems(parseJsonQuiet(after), mine)),
  )
}

/**
 * Plans `mnemo connect cursor`; reads files, writes nothing. `mcp.json` gets
 * `mcpServers.mnemo` ({@link cursorMcpEntry}); `hooks.json` gets `"version":
 * 1` when it has none and one `{ "command": "[MNEMO_HOME=\"…\" ]\"<node>\"
 * \"<cli>\" hook <mnemoEvent> --agent cursor" }` per {@link CURSOR_HOOK_EVENTS}
 * event, replacing earlier mnemo commands in place. Written in that order
 * (MCP first, then hooks). A file needing no change keeps its bytes.
 * @throws MnemoError INVALID_INPUT (details.path = the file) for invalid JSON
 *   or wrong types; INVALID_INPUT (details.path = the option) for bad
 *   options, including a path containing `${`.
 */
export function planCursorConnect(options: AgentConnectOptions = {}): AgentConnectPlan {
  const { scope, mcpPath, hooksPath } = cursorPaths(options)
  const cmd = resolveAgentCommand(options)
  refuseSubstitution(cmd, CURSOR_SUBSTITUTION, 'Cursor', '"${"')
  const mine = (c: string): boolean => isMnemoAgentHookCommand(c, 'cursor', shellQuote(cmd.cliPath))
  const mnemoEvent = new Map(CURSOR_HOOK_EVENTS.map((e) => [e.agentEvent, e.mnemoEvent]))
  const hook = (event: string): JsonObject => ({ command: agentHookCommand('cursor', mnemoEvent.get(event) ?? 'Stop', cmd, shellQuote) })
  const files = [planMcp(mcpPath, cursorMcpEntry(cmd), false), planHooks(hooksPath, mine, hook, false)].filter(
    (f): f is AgentPlanFile => f !== undefined,
  )
  return { client: 'cursor', action: 'connect', scope, files, notes: [] }
}

/**
 * Plans `mnemo disconnect cursor`; reads files, writes nothing. Removes
 * `mcpServers.mnemo` and every mnemo hook command, nothing else; event lists,
 * `hooks` and `mcpServers` emptied by that are removed (`version` stays).
 * Missing files are left out of the plan; a file left empty (or `hooks.json`
 * with only `version`) is deleted ({@link removeIfEmptied}).
 * @throws MnemoError INVALID_INPUT (details.path = the file) as {@link planCursorConnect}.
 */
export function planCursorDisconnect(options: AgentDisconnectOptions = {}): AgentConnectPlan {
  const { scope, mcpPath, hooksPath } = cursorPaths(options)
  const quoted = options.cliPath === undefined ? undefined : shellQuote(options.cliPath)
  const mine = (c: string): boolean => isMnemoAgentHookCommand(c, 'cursor', quoted)
  const files = [
    removeIfEmptied(planMcp(mcpPath, undefined, true), 'json'),
    removeIfEmptied(planHooks(hooksPath, mine, undefined, true), 'json', [{}, { version: 1 }]),
  ].filter((f): f is AgentPlanFile => f !== undefined)
  return { client: 'cursor', action: 'disconnect', scope, files, notes: [] }
}
