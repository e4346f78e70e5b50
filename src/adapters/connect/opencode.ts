/**
 * `mnemo connect opencode` / `mnemo disconnect opencode`: registers mnemo's
 * MCP server with OpenCode. MCP only: OpenCode has no hook that runs a
 * command with the event on stdin — its plugins are JS/TS modules loaded
 * in-process, and its `experimental.hook` commands (`file_edited`,
 * `session_completed`) get no event payload.
 *
 * - File: user scope `$XDG_CONFIG_HOME/opencode/` (default
 *   `~/.config/opencode/`), project scope the project root; in that folder
 *   `opencode.json`, else an existing `opencode.jsonc`
 *   (https://opencode.ai/docs/config/).
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
import {
  describeJson,
  editJsonText,
  envDir,
  isJsonObject,
  parseJsonConfig,
  parseJsonQuiet,
  planFileOf,
  readConfigText,
  refuseSubstitution,
  resolveAgentCommand,
  resolveHome,
  resolveProject,
  resolveScope,
  summarizeItems,
  type AgentConnectOptions,
  type AgentConnectPlan,
  type AgentDisconnectOptions,
  type AgentHooksDescription,
  type AgentLocation,
  type ConnectScope,
  type JsonEdit,
  type JsonObject,
  type ResolvedCommand,
} from './config-files.js'
import { invalidInput } from '../../core/errors.js'

const OPENCODE_SUBSTITUTION = /\{(?:env|file):/
const SCHEMA = 'https://opencode.ai/config.json'

/** OpenCode gets no hooks (see the module comment). */
export function describeOpenCodeHooks(): AgentHooksDescription {
  return {
    agent: 'opencode',
    supported: false,
    events: [],
    note: 'MCP only: OpenCode has no command hook with the event on stdin (plugins are in-process JS/TS modules; experimental.hook commands receive no payload).',
  }
}

/**
 * The config file for a scope (see the module comment).
 * @throws MnemoError INVALID_INPUT (details.path `scope`) for an unknown scope.
 */
export function openCodePaths(options: AgentLocation = {}): { scope: ConnectScope; configPath: string } {
  const scope = resolveScope(options.scope)
  const dir = scope === 'project' ? resolveProject(options) : join(envDir(options, 'XDG_CONFIG_HOME') ?? join(resolveHome(options), '.config'), 'opencode')
  const json = join(dir, 'opencode.json')
  const jsonc = join(dir, 'opencode.jsonc')
  return { scope, configPath: !existsSync(json) && existsSync(jsonc) ? jsonc : json }
}

/** True when `mcp` is in OpenCode 2's native shape: `mcp.servers` is a map of servers, not a server named "servers". */
const isV2 = (mcp: JsonObject): boolean => isJsonObject(mcp.servers) && mcp.servers.type === undefined

/** The V1-shape entry (`enabled: true`), or with `v2` the native V2 entry. */
export function openCodeMcpEntry(cmd: ResolvedCommand, v2 = false): JsonObject {
  const entry: JsonObject = { type: 'local', command: [cmd.nodePath, cmd.cliPath, 'mcp', '--agent', 'opencode'] }
  if (!v2) entry.enabled = true
  if (cmd.mnemoHome !== undefined) entry.environment = { MNEMO_HOME: cmd.mnemoHome }
  return entry
}

function items(config: JsonObject): Map<string, string> {
  const mcp = isJsonObject(config.mcp) ? config.mcp : {}
  const out = new Map<string, string>()
  if (Object.hasOwn(mcp, 'mnemo')) out.set('mnemo', JSON.stringify(mcp.mnemo))
  if (isV2(mcp) && isJsonObject(mcp.servers) && Object.hasOwn(mcp.servers, 'mnemo')) out.set('servers.mnemo', JSON.stringify(mcp.servers.mnemo))
  return out
}

function plan(options: AgentLocation, cmd: ResolvedCommand | undefined, skipMissing: boolean): AgentConnectPlan['files'] {
  const { configPath: path } = openCodePaths(options)
  const before = readConfigText(path)
  if (before === undefined && skipMissing) return []
  const config = parseJsonConfig(path, before, true)
  const raw = config.mcp
  if (raw !== undefined && !isJsonObject(raw)) throw invalidInput(path, `${path}: "mcp" must be an object, found ${describeJson(raw)}; mnemo will not overwrite it`)
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
  const after = editJsonText(before, config, edits)
  return [planFileOf(path, 'mcp', before, after, summarizeItems('mcp servers', items(config), items(parseJsonQuiet(after))))]
}

/**
 * Plans `mnemo connect opencode`; reads the file, writes nothing. Sets
 * `mcp.mnemo` (or `mcp.servers.mnemo` in a V2-shaped file) to
 * {@link openCodeMcpEntry}; a new file also gets `"$schema"`. Everything
 * else keeps its text; a file needing no change keeps its bytes.
 * @throws MnemoError INVALID_INPUT (details.path = the file) for invalid JSON
 *   or a non-object `mcp`; INVALID_INPUT (details.path = the option) for bad
 *   options, including a path containing `{env:` or `{file:`.
 */
export function planOpenCodeConnect(options: AgentConnectOptions = {}): AgentConnectPlan {
  const { scope } = openCodePaths(options)
  const cmd = resolveAgentCommand(options)
  refuseSubstitution(cmd, OPENCODE_SUBSTITUTION, 'OpenCode', '"{env:" or "{file:"')
  return { client: 'opencode', action: 'connect', scope, files: plan(options, cmd, false), notes: [] }
}

/**
 * Plans `mnemo disconnect opencode`; reads the file, writes nothing. Removes
 * `mcp.mnemo` and `mcp.servers.mnemo`, nothing else; `mcp.servers` and
 * `mcp` emptied by that are removed. A missing file is left out of the plan.
 * @throws MnemoError INVALID_INPUT (details.path = the file) as {@link planOpenCodeConnect}.
 */
export function planOpenCodeDisconnect(options: AgentDisconnectOptions = {}): AgentConnectPlan {
  const { scope } = openCodePaths(options)
  return { client: 'opencode', action: 'disconnect', scope, files: plan(options, undefined, true), notes: [] }
}
