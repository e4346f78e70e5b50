/**
 * `mnemo doctor` for agent connections: for each agent mnemo can connect
 * (Claude Code, Codex CLI, Gemini CLI, Cursor, OpenCode), whether its config
 * files parse, whether mnemo's MCP entry (and hooks, where the agent has
 * them) are there, and whether they point at the node binary and CLI script
 * that exist and that this mnemo would write. Reads files only.
 */
import { existsSync } from 'node:fs'
import { MnemoError } from '../../../core/errors.js'
import { type ConnectScope, isMnemoHookCommand, sameCliPaths, shellQuote } from './agent-command.js'
import { CLAUDE_CODE_HOOK_EVENTS, claudeCodePaths } from './claude-code.js'
import { CODEX_HOOK_EVENTS, CODEX_MCP_KEY, codexMnemoHookTrust, codexPaths } from './codex.js'
import { readConfigText } from './connect-plan.js'
import { CURSOR_HOOK_EVENTS, cursorPaths } from './cursor.js'
import { GEMINI_HOOK_EVENTS, geminiPaths } from './gemini.js'
import { isJsonObject, type Json, type JsonObject, parseJsonConfig } from './json-config.js'
import { openCodePaths } from './opencode.js'
import { isMnemoOpenCodePlugin } from './opencode-plugin.js'
import { parseTomlConfig, tomlValueAt } from './toml-config.js'

/** Every agent `checkAgents` looks at, in report order. */
const DOCTOR_AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'opencode'] as const
export type DoctorAgent = (typeof DOCTOR_AGENTS)[number]

/**
 * One agent × scope. `ok`: entries present and current, or none at this scope
 * while mnemo's hooks are registered in the other one (connect refuses a second). `missing`: no mnemo
 * entry. `stale`: present but will not work as it is (node or CLI path gone
 * or not this install's, MNEMO_HOME different, hooks incomplete, or Codex
 * hooks not yet trusted). `broken`: a config file does not parse or has the
 * wrong shape. `fix` is the command (or action) that repairs it.
 */
export interface DoctorFinding {
  agent: DoctorAgent
  scope: ConnectScope
  status: 'ok' | 'missing' | 'stale' | 'broken'
  detail: string
  fix: string
}

/** What to check against. Paths must be absolute; defaults as in the connect planners. */
interface CheckAgentsOptions {
  homeDir?: string | undefined
  /** When given, agents with project-scope config files in it are reported too. */
  projectDir?: string | undefined
  env?: Readonly<Record<string, string | undefined>> | undefined
  cliPath: string
  nodePath: string
  mnemoHome?: string | undefined
}

interface McpFound {
  node: unknown
  cli: unknown
  mnemoHome: unknown
}

interface Inspection {
  files: string[]
  mcp: McpFound | undefined
  /** Expected hook events and the mnemo commands found per event; undefined when the agent has no hooks. */
  hooks: { expected: readonly string[]; found: Map<string, string[]> } | undefined
  /** Extra reasons the entries will not run (e.g. untrusted Codex hooks), with the fix for each. */
  problems: Array<[string, string]>
}

const json = (path: string): JsonObject | undefined => {
  const text = readConfigText(path)
  return text === undefined ? undefined : parseJsonConfig(path, text, true)
}
const obj = (v: Json | undefined): JsonObject => (isJsonObject(v) ? v : {})

function stdioEntry(servers: Json | undefined): McpFound | undefined {
  const e = obj(servers).mnemo
  if (e === undefined) return undefined
  const o = obj(e)
  return { node: o.command, cli: Array.isArray(o.args) ? o.args[0] : undefined, mnemoHome: obj(o.env).MNEMO_HOME }
}

function groupedHooks(config: JsonObject | undefined, mine: (c: string) => boolean): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const [event, groups] of Object.entries(obj(config?.hooks))) {
    const cmds = (Array.isArray(groups) ? groups : [])
      .flatMap((g) => (Array.isArray(obj(g).hooks) ? (obj(g).hooks as Json[]) : []))
      .map((h) => obj(h).command)
      .filter((c): c is string => typeof c === 'string' && mine(c))
    if (cmds.length > 0) out.set(event, cmds)
  }
  return out
}

function inspect(agent: DoctorAgent, scope: ConnectScope, o: CheckAgentsOptions): Inspection {
  const loc = { scope, homeDir: o.homeDir, projectDir: o.projectDir, env: o.env }
  switch (agent) {
    case 'claude-code': {
      const { settingsPath, mcpPath } = claudeCodePaths(loc)
      const settings = json(settingsPath)
      const mcp = json(mcpPath)
      return {
        files: [settingsPath, mcpPath].filter((p) => existsSync(p)),
        mcp: stdioEntry(mcp?.mcpServers),
        hooks: { expected: CLAUDE_CODE_HOOK_EVENTS, found: groupedHooks(settings, (c) => isMnemoHookCommand(c)) },
        problems: [],
      }
    }
    case 'codex': {
      const { configPath, hooksPath } = codexPaths(loc)
      const text = readConfigText(configPath)
      const doc = text === undefined ? {} : parseTomlConfig(configPath, text)
      const hooksText = readConfigText(hooksPath)
      const hooks = hooksText === undefined ? undefined : parseJsonConfig(hooksPath, hooksText, false)
      const e = tomlValueAt(doc, CODEX_MCP_KEY) as Record<string, unknown> | undefined
      const mcp =
        e === undefined
          ? undefined
          : {
              node: e.command,
              cli: Array.isArray(e.args) ? e.args[0] : undefined,
              mnemoHome: (e.env as Record<string, unknown> | undefined)?.MNEMO_HOME,
            }
      const mine = (c: string): boolean => isMnemoHookCommand(c, undefined, 'codex')
      const problems: Array<[string, string]> = []
      // Codex runs a hook only when config.toml holds its current hash under "<hooks.json>:<event>:<group>:<handler>" (codex.ts).
      const untrusted =
        hooks === undefined
          ? []
          : codexMnemoHookTrust(hooksPath, hooks, mine)
              .filter((t) => (tomlValueAt(doc, ['hooks', 'state', t.key]) as Record<string, unknown> | undefined)?.trusted_hash !== t.hash)
              .map((t) => t.event)
      if (untrusted.length > 0) {
        problems.push([
          `Codex has no current trust record for mnemo's hooks (${untrusted.join(', ')}), so it skips them`,
          scope === 'user' ? 'mnemo connect codex' : 'start `codex` in this project and trust the hooks in the review prompt (or /hooks)',
        ])
      }
      if (tomlValueAt(doc, ['features', 'hooks']) === false || tomlValueAt(doc, ['features', 'codex_hooks']) === false)
        problems.push([`hooks are turned off in ${configPath}`, `remove "hooks = false" from [features] in ${configPath}`])
      return {
        files: [configPath, hooksPath].filter((p) => existsSync(p)),
        mcp,
        hooks: { expected: CODEX_HOOK_EVENTS.map((x) => x.agentEvent), found: groupedHooks(hooks, mine) },
        problems,
      }
    }
    case 'gemini': {
      const { settingsPath } = geminiPaths(loc)
      const s = json(settingsPath)
      const problems: Array<[string, string]> = []
      if (obj(s?.hooksConfig).enabled === false || obj(s?.tools).enableHooks === false)
        problems.push([
          `the hooks system is turned off in ${settingsPath}`,
          'turn on "Enable Hooks System" in /settings (hooksConfig.enabled)',
        ])
      return {
        files: [settingsPath].filter((p) => existsSync(p)),
        mcp: stdioEntry(s?.mcpServers),
        hooks: {
          expected: GEMINI_HOOK_EVENTS.map((x) => x.agentEvent),
          found: groupedHooks(s, (c) => isMnemoHookCommand(c, undefined, 'gemini')),
        },
        problems,
      }
    }
    case 'cursor': {
      const { mcpPath, hooksPath } = cursorPaths(loc)
      const mcp = json(mcpPath)
      const hooks = json(hooksPath)
      const found = new Map<string, string[]>()
      for (const [event, list] of Object.entries(obj(hooks?.hooks))) {
        const cmds = (Array.isArray(list) ? list : [])
          .map((h) => obj(h).command)
          .filter((c): c is string => typeof c === 'string' && isMnemoHookCommand(c, undefined, 'cursor'))
        if (cmds.length > 0) found.set(event, cmds)
      }
      return {
        files: [mcpPath, hooksPath].filter((p) => existsSync(p)),
        mcp: stdioEntry(mcp?.mcpServers),
        hooks: { expected: CURSOR_HOOK_EVENTS.map((x) => x.agentEvent), found },
        problems: [],
      }
    }
    case 'opencode': {
      const { configPath, pluginPath } = openCodePaths(loc)
      const c = json(configPath)
      const m = obj(c?.mcp)
      const e = m.mnemo ?? obj(m.servers).mnemo
      const cmd = Array.isArray(obj(e).command) ? (obj(e).command as Json[]) : []
      const mcp = e === undefined ? undefined : { node: cmd[0], cli: cmd[1], mnemoHome: obj(obj(e).environment).MNEMO_HOME }
      const problems: Array<[string, string]> =
        obj(e).enabled === false || obj(e).disabled === true
          ? [[`mnemo's server is disabled in ${configPath}`, connectCommand('opencode', scope)]]
          : []
      // Capture runs through mnemo's plugin; it must be there and run this CLI.
      const plugin = readConfigText(pluginPath)
      if (!isMnemoOpenCodePlugin(plugin))
        problems.push([`mnemo's OpenCode plugin ${pluginPath} is missing, so nothing is captured`, connectCommand('opencode', scope)])
      else if (!sameCliPaths(o.cliPath).some((cli) => plugin!.includes(JSON.stringify(cli))))
        problems.push([`mnemo's OpenCode plugin ${pluginPath} runs another CLI than ${o.cliPath}`, connectCommand('opencode', scope)])
      return { files: [configPath, pluginPath].filter((p) => existsSync(p)), mcp, hooks: undefined, problems }
    }
  }
}

/** The command that (re)connects an agent at a scope, as doctor prints it. */
const connectCommand = (agent: DoctorAgent, scope: ConnectScope): string =>
  `mnemo connect ${agent}${scope === 'project' ? ' --scope project' : ''}`

function finding(agent: DoctorAgent, scope: ConnectScope, o: CheckAgentsOptions): DoctorFinding {
  const connect = connectCommand(agent, scope)
  const out = (status: DoctorFinding['status'], detail: string, fix: string): DoctorFinding => ({ agent, scope, status, detail, fix })
  let found: Inspection
  try {
    found = inspect(agent, scope, o)
  } catch (err) {
    if (!MnemoError.is(err, 'INVALID_INPUT')) throw err
    return out('broken', err.message, `fix or move aside ${err.details.path}, then run \`${connect}\``)
  }
  const hookCount = found.hooks === undefined ? 0 : [...found.hooks.found.values()].reduce((n, l) => n + l.length, 0)
  if (found.mcp === undefined && hookCount === 0) {
    return out('missing', found.files.length === 0 ? 'no configuration files' : `no mnemo entry in ${found.files.join(', ')}`, connect)
  }
  const stale: string[] = []
  const { mcp } = found
  if (mcp === undefined) stale.push('the mnemo MCP server entry is missing')
  else {
    if (typeof mcp.node !== 'string' || typeof mcp.cli !== 'string') stale.push('the mnemo MCP entry has no node/CLI path')
    else {
      if (!existsSync(mcp.node)) stale.push(`node ${mcp.node} does not exist`)
      if (!existsSync(mcp.cli)) stale.push(`CLI ${mcp.cli} does not exist`)
      else if (!sameCliPaths(o.cliPath).includes(mcp.cli)) stale.push(`MCP entry runs ${mcp.cli}, this mnemo is ${o.cliPath}`)
    }
    if (o.mnemoHome !== undefined && mcp.mnemoHome !== o.mnemoHome)
      stale.push(`MNEMO_HOME is ${typeof mcp.mnemoHome === 'string' ? mcp.mnemoHome : 'unset'} in the MCP entry, expected ${o.mnemoHome}`)
  }
  if (found.hooks !== undefined) {
    const missing = found.hooks.expected.filter((e) => !found.hooks!.found.has(e))
    if (missing.length > 0) stale.push(`hooks missing for ${missing.join(', ')}`)
    const quoted = sameCliPaths(o.cliPath).map(shellQuote)
    const other = [...found.hooks.found].filter(([, cmds]) => cmds.some((c) => !quoted.some((q) => c.includes(q)))).map(([e]) => e)
    if (other.length > 0) stale.push(`hooks for ${other.join(', ')} run another CLI than ${o.cliPath}`)
  }
  if (stale.length > 0) return out('stale', stale.join('; '), connect)
  const [problem] = found.problems
  if (problem !== undefined) return out('stale', found.problems.map(([d]) => d).join('; '), problem[1])
  const what = found.hooks === undefined ? 'MCP server' : `MCP server and ${hookCount} hook${hookCount === 1 ? '' : 's'}`
  return out('ok', `${what} registered in ${found.files.join(', ')}`, 'nothing to do')
}

const projectFilesOf = (agent: DoctorAgent, o: CheckAgentsOptions): string[] => {
  const loc = { scope: 'project' as const, homeDir: o.homeDir, projectDir: o.projectDir, env: o.env }
  switch (agent) {
    case 'claude-code': {
      const p = claudeCodePaths(loc)
      return [p.settingsPath, p.mcpPath]
    }
    case 'codex': {
      const p = codexPaths(loc)
      return [p.configPath, p.hooksPath]
    }
    case 'gemini':
      return [geminiPaths(loc).settingsPath]
    case 'cursor': {
      const p = cursorPaths(loc)
      return [p.mcpPath, p.hooksPath]
    }
    case 'opencode':
      return [openCodePaths(loc).configPath]
  }
}

/**
 * Checks every agent's user-scope configuration, plus its project-scope
 * configuration when `projectDir` is given and holds files for that agent.
 * Never writes; never throws for a bad config file (that is a `broken`
 * finding). Expected values: `cliPath` (the CLI the entries should run),
 * `mnemoHome` when given (the MCP entry's MNEMO_HOME must match).
 * `nodePath` is the node this mnemo would write; an entry with another,
 * existing node is still `ok`.
 */
export function checkAgents(options: CheckAgentsOptions): DoctorFinding[] {
  const out: DoctorFinding[] = []
  for (const agent of DOCTOR_AGENTS) {
    const hasProjectFiles = options.projectDir !== undefined && projectFilesOf(agent, options).some((p) => existsSync(p))
    out.push(hasProjectFiles ? connectedElsewhere(finding(agent, 'user', options), options) : finding(agent, 'user', options))
    if (hasProjectFiles) {
      const twice = doubleRegistration(agent, options)
      // The agent merges both scopes' hooks: each event would be captured twice, and the context injected twice.
      out.push(twice ?? connectedElsewhere(finding(agent, 'project', options), options))
    }
  }
  return out
}

/**
 * `connect` refuses a scope while mnemo's hooks are registered in the other one (they would run twice), so a finding
 * whose fix is connecting that scope says instead that the agent is connected in the other one: a `missing` one
 * becomes `ok` (nothing to do), a `stale` one (stray entries without the hooks) gets the disconnect of its scope.
 */
function connectedElsewhere(f: DoctorFinding, options: CheckAgentsOptions): DoctorFinding {
  if (f.fix !== connectCommand(f.agent, f.scope)) return f
  const other: ConnectScope = f.scope === 'user' ? 'project' : 'user'
  if (mnemoHookCount(f.agent, other, options) === 0) return f
  const where = other === 'project' ? `the project scope of ${options.projectDir}` : 'the user scope'
  if (f.status === 'missing')
    return {
      ...f,
      status: 'ok',
      detail: `not connected here; mnemo's hooks are registered in ${where}, which the agent runs`,
      fix: 'nothing to do',
    }
  return {
    ...f,
    detail: `${f.detail}; mnemo's hooks are registered in ${where}, so this scope needs none`,
    fix: `mnemo disconnect ${f.agent}${f.scope === 'project' ? ' --scope project' : ''}`,
  }
}

/** How many mnemo hook commands `agent`'s configuration of `scope` registers; 0 when none or unreadable. */
export function mnemoHookCount(agent: DoctorAgent, scope: ConnectScope, options: CheckAgentsOptions): number {
  try {
    const hooks = inspect(agent, scope, options).hooks
    return hooks === undefined ? 0 : [...hooks.found.values()].reduce((n, l) => n + l.length, 0)
  } catch {
    return 0
  }
}

/** A `broken` finding when mnemo's hooks are registered in both the user and the project scope of `agent`. */
function doubleRegistration(agent: DoctorAgent, options: CheckAgentsOptions): DoctorFinding | undefined {
  if (mnemoHookCount(agent, 'user', options) === 0 || mnemoHookCount(agent, 'project', options) === 0) return undefined
  return {
    agent,
    scope: 'project',
    status: 'broken',
    detail: `mnemo's hooks are registered in both the user and the project configuration (${projectFilesOf(agent, options)
      .filter((p) => existsSync(p))
      .join(', ')}): every event is captured twice and the context injected twice`,
    fix: `mnemo disconnect ${agent} --scope project (or --scope user: keep one)`,
  }
}
