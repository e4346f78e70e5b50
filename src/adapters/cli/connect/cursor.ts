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
import { CURSOR_HOOK_EVENTS } from '../../../core/hook-events.js'
import { invalidInput } from '../../../core/errors.js'
import {
  type AgentLocation,
  agentHookCommand,
  type ConnectScope,
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
  describeJson,
  isJsonObject,
  type Json,
  type JsonEdit,
  type JsonObject,
  jsonEqual,
  mcpServerEdits,
  mcpServerItems,
} from './json-config.js'
import { planJsonFile } from './json-edit.js'

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

function planMcp(path: string, entry: JsonObject | undefined, skipMissing: boolean): ConnectPlanFile | undefined {
  return planJsonFile(path, skipMissing, {
    kind: 'mcp',
    comments: true,
    edits: (config) => mcpServerEdits(path, config, entry),
    items: { 'mcp servers': mcpServerItems },
  })
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
): ConnectPlanFile | undefined {
  return planJsonFile(path, skipMissing, {
    kind: 'settings',
    comments: true,
    edits: (config) => hookEdits(path, config, mine, add),
    items: { hooks: (config) => hookItems(config, mine) },
  })
}

/** Cursor's flat hook map (`hooks.<event>` = a list of `{ command }`): mnemo's commands replaced in place, or removed. */
function hookEdits(
  path: string,
  config: JsonObject,
  mine: (c: string) => boolean,
  add: ((event: string) => JsonObject) | undefined,
): JsonEdit[] {
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
  return add === undefined && removedAny && kept === 0 ? [{ path: ['hooks'], value: undefined }] : edits
}

/**
 * Plans `mnemo connect cursor`; reads files, writes nothing. `mcp.json` gets
 * `mcpServers.mnemo` ({@link stdioMcpEntry}); `hooks.json` gets `"version":
 * 1` when it has none and one `{ "command": "[MNEMO_HOME=\"…\" ]\"<node>\"
 * \"<cli>\" hook <mnemoEvent> --agent cursor" }` per {@link CURSOR_HOOK_EVENTS}
 * event, replacing earlier mnemo commands in place. Written in that order
 * (MCP first, then hooks). A file needing no change keeps its bytes.
 * @throws MnemoError INVALID_INPUT (details.path = the file) for invalid JSON
 *   or wrong types; INVALID_INPUT (details.path = the option) for bad
 *   options, including a path containing `${`.
 */
export function planCursorConnect(options: AgentConnectOptions = {}): ConnectPlan {
  const { scope, mcpPath, hooksPath } = cursorPaths(options)
  const cmd = resolveAgentCommand(options)
  refuseSubstitution(cmd, CURSOR_SUBSTITUTION, 'Cursor', '"${"')
  const mine = (c: string): boolean => isMnemoHookCommand(c, shellQuote(cmd.cliPath), 'cursor')
  const mnemoEvent = new Map(CURSOR_HOOK_EVENTS.map((e) => [e.agentEvent, e.mnemoEvent]))
  const hook = (event: string): JsonObject => ({ command: agentHookCommand(cmd, mnemoEvent.get(event) ?? 'Stop', 'cursor') })
  const files = [planMcp(mcpPath, stdioMcpEntry(cmd, 'cursor'), false), planHooks(hooksPath, mine, hook, false)].filter(
    (f): f is ConnectPlanFile => f !== undefined,
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
export function planCursorDisconnect(options: AgentDisconnectOptions = {}): ConnectPlan {
  const { scope, mcpPath, hooksPath } = cursorPaths(options)
  const quoted = options.cliPath === undefined ? undefined : shellQuote(options.cliPath)
  const mine = (c: string): boolean => isMnemoHookCommand(c, quoted, 'cursor')
  const files = [
    removeIfEmptied(planMcp(mcpPath, undefined, true), 'json'),
    removeIfEmptied(planHooks(hooksPath, mine, undefined, true), 'json', [{}, { version: 1 }]),
  ].filter((f): f is ConnectPlanFile => f !== undefined)
  return { client: 'cursor', action: 'disconnect', scope, files, notes: [] }
}
