/**
 * `mnemo connect opencode` / `mnemo disconnect opencode`: registers mnemo's
 * MCP server with OpenCode and installs mnemo's OpenCode plugin, which
 * captures sessions and injects the context block (opencode-plugin.ts):
 * OpenCode has no command hooks with the event on stdin, but loads JS/TS
 * plugins that receive session, message and tool events.
 *
 * - Files: user scope `$XDG_CONFIG_HOME/opencode/` (default
 *   `~/.config/opencode/`), project scope the project root (config) and its
 *   `.opencode/` folder (plugin); the config is `opencode.json`, else an
 *   existing `opencode.jsonc` (https://opencode.ai/docs/config/); the plugin
 *   is `plugins/mnemo.js` in the config folder (OpenCode loads
 *   `{plugin,plugins}/*.{ts,js}` there, https://opencode.ai/docs/plugins/).
 * - Entry (https://opencode.ai/docs/mcp-servers/): `mcp.mnemo` = `{ "type":
 *   "local", "command": [node, cli, "mcp"], "enabled": true, "environment"?:
 *   { MNEMO_HOME } }` — the V1 shape, which OpenCode 2 still reads. A file
 *   already in OpenCode 2's native shape (`mcp.servers` holding servers, no
 *   `type`) gets `mcp.servers.mnemo` = `{ type, command, environment? }`
 *   instead (V2 uses `disabled`, not `enabled`).
 * - OpenCode substitutes `{env:NAME}` and `{file:path}` anywhere in the
 *   file, so paths containing those are refused. Comments and trailing
 *   commas (JSONC) are kept; only mnemo's key is edited.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { invalidInput } from '../../../core/errors.js'
import {
  type AgentLocation,
  type ConnectScope,
  envDir,
  type ResolvedCommand,
  refuseSubstitution,
  resolveAgentCommand,
  resolveHome,
  resolveProject,
  resolveScope,
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
} from './connect-plan.js'
import { describeJson, isJsonObject, type JsonEdit, type JsonObject } from './json-config.js'
import { planJsonFile } from './json-edit.js'
import { isMnemoOpenCodePlugin, OPENCODE_PLUGIN_FILE, openCodePluginSource } from './opencode-plugin.js'

const OPENCODE_SUBSTITUTION = /\{(?:env|file):/
const SCHEMA = 'https://opencode.ai/config.json'

/** OpenCode's capture runs through mnemo's plugin, which passes these events to `mnemo hook` (see opencode-plugin.ts). */
export function describeOpenCodeHooks(): AgentHooksDescription {
  return {
    agent: 'opencode',
    supported: true,
    events: [
      { agentEvent: 'session.created', mnemoEvent: 'SessionStart' },
      { agentEvent: 'chat.message', mnemoEvent: 'UserPromptSubmit' },
      { agentEvent: 'tool.execute.before', mnemoEvent: 'PreToolUse' },
      { agentEvent: 'tool.execute.after', mnemoEvent: 'PostToolUse' },
      { agentEvent: 'session.idle', mnemoEvent: 'Stop' },
      { agentEvent: 'session.deleted', mnemoEvent: 'SessionEnd' },
    ],
    note:
      'an in-process plugin (plugins/mnemo.js in the OpenCode config folder) that runs `"<node>" "<cli>" hook <mnemoEvent> --agent opencode` with a Claude Code-shaped payload on stdin; ' +
      "SessionStart's context block goes into the system prompt (experimental.chat.system.transform).",
  }
}

/**
 * The config file for a scope (see the module comment).
 * @throws MnemoError INVALID_INPUT (details.path `scope`) for an unknown scope.
 */
export function openCodePaths(options: AgentLocation = {}): { scope: ConnectScope; configPath: string; pluginPath: string } {
  const scope = resolveScope(options.scope)
  const dir =
    scope === 'project'
      ? resolveProject(options)
      : join(envDir(options, 'XDG_CONFIG_HOME') ?? join(resolveHome(options), '.config'), 'opencode')
  const json = join(dir, 'opencode.json')
  const jsonc = join(dir, 'opencode.jsonc')
  const pluginDir = scope === 'project' ? join(dir, '.opencode', 'plugins') : join(dir, 'plugins')
  return { scope, configPath: !existsSync(json) && existsSync(jsonc) ? jsonc : json, pluginPath: join(pluginDir, OPENCODE_PLUGIN_FILE) }
}

/**
 * Plans the plugin file: with `cmd`, written with {@link openCodePluginSource};
 * without, removed when it is mnemo's (a file of that name that is not is
 * refused either way, never overwritten or deleted).
 * @throws MnemoError INVALID_INPUT (details.path = the file) for a `mnemo.js` there that mnemo did not write.
 */
function planPlugin(path: string, cmd: ResolvedCommand | undefined): ConnectPlanFile | undefined {
  const before = readConfigText(path)
  if (before !== undefined && !isMnemoOpenCodePlugin(before)) {
    throw invalidInput(
      path,
      `${path} exists and was not written by mnemo; mnemo will not ${cmd === undefined ? 'remove' : 'overwrite'} it`,
      'Move it aside (or rename it), then run again.',
    )
  }
  if (cmd === undefined) {
    if (before === undefined) return undefined
    return { ...planFileOf(path, 'settings', before, '', ['  plugin removed: mnemo']), remove: true }
  }
  const after = openCodePluginSource(cmd)
  return planFileOf(path, 'settings', before, after, [
    `  plugin ${before === undefined ? 'added' : before === after ? 'unchanged' : 'updated'}: mnemo`,
  ])
}

/** True when `mcp` is in OpenCode 2's native shape: `mcp.servers` is a map of servers, not a server named "servers". */
const isV2 = (mcp: JsonObject): boolean => isJsonObject(mcp.servers) && mcp.servers.type === undefined

/** The V1-shape entry (`enabled: true`), or with `v2` the native V2 entry. */
function openCodeMcpEntry(cmd: ResolvedCommand, v2 = false): JsonObject {
  const entry: JsonObject = { type: 'local', command: [cmd.nodePath, cmd.cliPath, 'mcp', '--agent', 'opencode'] }
  if (!v2) entry.enabled = true
  if (cmd.mnemoHome !== undefined) entry.environment = { MNEMO_HOME: cmd.mnemoHome }
  return entry
}

function items(config: JsonObject): Map<string, string> {
  const mcp = isJsonObject(config.mcp) ? config.mcp : {}
  const out = new Map<string, string>()
  if (Object.hasOwn(mcp, 'mnemo')) out.set('mnemo', JSON.stringify(mcp.mnemo))
  if (isV2(mcp) && isJsonObject(mcp.servers) && Object.hasOwn(mcp.servers, 'mnemo'))
    out.set('servers.mnemo', JSON.stringify(mcp.servers.mnemo))
  return out
}

function plan(options: AgentLocation, cmd: ResolvedCommand | undefined, skipMissing: boolean): ConnectPlan['files'] {
  const { configPath: path } = openCodePaths(options)
  const file = planJsonFile(path, skipMissing, {
    kind: 'mcp',
    comments: true,
    edits: (config, before) => mcpEdits(path, config, before, cmd),
    items: { 'mcp servers': items },
  })
  return file === undefined ? [] : [file]
}

/** `mcp.mnemo` (or `mcp.servers.mnemo` in a V2-shaped file) set to mnemo's entry, or with `cmd` undefined removed with what that empties. */
function mcpEdits(path: string, config: JsonObject, before: string | undefined, cmd: ResolvedCommand | undefined): JsonEdit[] {
  const raw = config.mcp
  if (raw !== undefined && !isJsonObject(raw))
    throw invalidInput(path, `${path}: "mcp" must be an object, found ${describeJson(raw)}; mnemo will not overwrite it`)
  const mcp = raw ?? {}
  const v2 = isV2(mcp)
  const edits: JsonEdit[] = []
  if (cmd !== undefined) {
    if (before === undefined || before.trim() === '') edits.push({ path: ['$schema'], value: SCHEMA })
    edits.push({ path: v2 ? ['mcp', 'servers', 'mnemo'] : ['mcp', 'mnemo'], value: openCodeMcpEntry(cmd, v2) })
    if (v2 && Object.hasOwn(mcp, 'mnemo')) edits.push({ path: ['mcp', 'mnemo'], value: undefined })
  } else {
    const servers = v2 && isJsonObject(mcp.servers) ? mcp.servers : undefined
    const inServers = servers !== undefined && Object.hasOwn(servers, 'mnemo')
    const top = Object.hasOwn(mcp, 'mnemo')
    const serversEmptied = inServers && Object.keys(servers).length === 1
    const remaining = Object.keys(mcp).filter((k) => !(k === 'mnemo' && top) && !(k === 'servers' && serversEmptied)).length
    if ((top || inServers) && remaining === 0) edits.push({ path: ['mcp'], value: undefined })
    else {
      if (top) edits.push({ path: ['mcp', 'mnemo'], value: undefined })
      if (inServers) edits.push({ path: serversEmptied ? ['mcp', 'servers'] : ['mcp', 'servers', 'mnemo'], value: undefined })
    }
  }
  return edits
}

/**
 * Plans `mnemo connect opencode`; reads the files, writes nothing. Sets
 * `mcp.mnemo` (or `mcp.servers.mnemo` in a V2-shaped file) to
 * {@link openCodeMcpEntry}; a new file also gets `"$schema"`. Everything
 * else keeps its text; a file needing no change keeps its bytes. Writes (or
 * rewrites) the plugin `plugins/mnemo.js` ({@link openCodePluginSource}).
 * @throws MnemoError INVALID_INPUT (details.path = the file) for invalid JSON
 *   or a non-object `mcp`; INVALID_INPUT (details.path = the option) for bad
 *   options, including a path containing `{env:` or `{file:`.
 */
export function planOpenCodeConnect(options: AgentConnectOptions = {}): ConnectPlan {
  const { scope } = openCodePaths(options)
  const cmd = resolveAgentCommand(options)
  refuseSubstitution(cmd, OPENCODE_SUBSTITUTION, 'OpenCode', '"{env:" or "{file:"')
  const { pluginPath } = openCodePaths(options)
  const files = [...plan(options, cmd, false), planPlugin(pluginPath, cmd)].filter((f): f is ConnectPlanFile => f !== undefined)
  return { client: 'opencode', action: 'connect', scope, files, notes: [] }
}

/**
 * Plans `mnemo disconnect opencode`; reads the files, writes nothing. Removes
 * `mcp.mnemo` and `mcp.servers.mnemo`, nothing else; `mcp.servers` and
 * `mcp` emptied by that are removed; deletes mnemo's plugin file. A missing
 * file is left out of the plan; a config left with only `$schema` is
 * deleted ({@link removeIfEmptied}).
 * @throws MnemoError INVALID_INPUT (details.path = the file) as {@link planOpenCodeConnect}.
 */
export function planOpenCodeDisconnect(options: AgentDisconnectOptions = {}): ConnectPlan {
  const { scope, pluginPath } = openCodePaths(options)
  const files = [
    ...plan(options, undefined, true).map((f) => removeIfEmptied(f, 'json', [{}, { $schema: SCHEMA }])),
    planPlugin(pluginPath, undefined),
  ].filter((f): f is ConnectPlanFile => f !== undefined)
  return { client: 'opencode', action: 'disconnect', scope, files, notes: [] }
}
