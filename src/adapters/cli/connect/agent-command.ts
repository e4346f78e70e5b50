/**
 * What every `mnemo connect <agent>` planner shares before it touches a
 * file: the agents, where their configuration lives (scope, home, project,
 * environment), the command mnemo registers (node binary, CLI script,
 * `MNEMO_HOME`), the `mnemo hook` shell command built from it, and the test
 * that tells mnemo's hook commands from the user's.
 */
import { homedir } from 'node:os'
import { isAbsolute, resolve } from 'node:path'
import type { ClaudeHookEvent } from '../../../core/hook-events.js'
import { invalidInput } from '../../../core/errors.js'
import { CLI_PATH } from '../cli-kit.js'

/** Agents with a planner in this folder besides Claude Code. */
export type ConnectAgent = 'codex' | 'gemini' | 'cursor' | 'opencode'
/** Every agent `mnemo connect` writes configuration for. */
export type ConnectClient = 'claude-code' | ConnectAgent

/** Display names used in messages. */
export const AGENT_LABELS: Readonly<Record<ConnectClient, string>> = {
  'claude-code': 'Claude Code',
  codex: 'Codex CLI',
  gemini: 'Gemini CLI',
  cursor: 'Cursor',
  opencode: 'OpenCode',
}

/** Where to write: `user` (all projects) or `project` (one checkout). */
export type ConnectScope = 'user' | 'project'

/** Which agent configuration to touch. Every field has a default taken from the running process. */
export interface AgentLocation {
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
export interface AgentCommandOptions {
  /** Absolute node binary. Default `process.execPath`. */
  nodePath?: string | undefined
  /** Absolute path of the built CLI. Default `CLI_PATH` (dist/adapters/cli/main.js of this package). */
  cliPath?: string | undefined
  /** When given, hooks and the MCP server run with `MNEMO_HOME` set to it (made absolute). */
  mnemoHome?: string | undefined
}

/** Resolved command options. */
export interface ResolvedCommand {
  nodePath: string
  cliPath: string
  mnemoHome: string | undefined
}

/**
 * Defaults and checks the command options: absolute `nodePath` and
 * `cliPath`, non-empty `mnemoHome` (made absolute).
 * @throws MnemoError INVALID_INPUT (details.path = the option name).
 */
export function resolveAgentCommand(o: AgentCommandOptions): ResolvedCommand {
  const nodePath = o.nodePath ?? process.execPath
  const cliPath = o.cliPath ?? CLI_PATH
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
 * Refuses a command value the agent would rewrite when it loads the file
 * (`pattern` describes the agent's own substitution syntax), so what runs is
 * exactly what was planned.
 * @throws MnemoError INVALID_INPUT (details.path = the option name).
 */
export function refuseSubstitution(cmd: ResolvedCommand, pattern: RegExp, agentLabel: string, syntax: string): void {
  const values: Array<[string, string | undefined]> = [
    ['nodePath', cmd.nodePath],
    ['cliPath', cmd.cliPath],
    ['mnemoHome', cmd.mnemoHome],
  ]
  for (const [name, value] of values) {
    if (value !== undefined && pattern.test(value)) {
      throw invalidInput(
        name,
        `${name} "${value}" contains ${syntax}, which ${agentLabel} replaces when it reads its configuration; mnemo will not write it`,
        'Install mnemo (or point MNEMO_HOME) at a path without that sequence, then run again.',
      )
    }
  }
}

/** `scope` defaulted and checked. @throws MnemoError INVALID_INPUT (details.path `scope`). */
export function resolveScope(scope: ConnectScope | undefined): ConnectScope {
  const s = scope ?? 'user'
  if (s !== 'user' && s !== 'project') throw invalidInput('scope', `scope must be "user" or "project", got "${String(s)}"`)
  return s
}

export const resolveHome = (o: AgentLocation): string => resolve(o.homeDir ?? homedir())
export const resolveProject = (o: AgentLocation): string => resolve(o.projectDir ?? process.cwd())
/** A variable from `o.env` (default `process.env`) when set and non-empty, made absolute. */
export function envDir(o: AgentLocation, name: string): string | undefined {
  const v = (o.env ?? process.env)[name]
  return v === undefined || v === '' ? undefined : resolve(v)
}

/**
 * Quotes `value` for a POSIX shell: wraps it in double quotes and escapes
 * `"`, `\`, `$` and backticks, so the shell passes it through as one word.
 */
export function shellQuote(value: string): string {
  return `"${value.replace(/["\\$`]/g, '\\$&')}"`
}

/**
 * The `mnemo hook` shell command for an agent's hook:
 * `[MNEMO_HOME="<home>" ]"<node>" "<cli>" hook <mnemoEvent>[ --agent <agent>]`,
 * every path quoted by {@link shellQuote}. `--agent` (absent for Claude
 * Code, whose payload is the default) tells `mnemo hook` which payload field
 * names and event names to map (capture/claude-hook.ts, core/hook-events.ts).
 */
export function agentHookCommand(cmd: ResolvedCommand, mnemoEvent: ClaudeHookEvent, agent?: ConnectAgent): string {
  const prefix = cmd.mnemoHome === undefined ? '' : `MNEMO_HOME=${shellQuote(cmd.mnemoHome)} `
  const suffix = agent === undefined ? '' : ` --agent ${agent}`
  return `${prefix}${shellQuote(cmd.nodePath)} ${shellQuote(cmd.cliPath)} hook ${mnemoEvent}${suffix}`
}

const CLI_SCRIPT = /adapters[\\/]+cli[\\/]+(?:main\.js|bin\.cjs)/

/** The two scripts of one mnemo install that run its CLI alike: the one-file bin and the ES-module main.js. */
const CLI_ENTRY_NAMES = ['bin.cjs', 'main.js'] as const

/**
 * The scripts that run the same CLI as `cliPath`: itself and, when it is one of an install's two entry scripts
 * (dist/adapters/cli/bin.cjs, dist/adapters/cli/main.js), the other one beside it: hook commands and MCP entries
 * written by earlier builds name main.js, and run this same mnemo.
 */
export function sameCliPaths(cliPath: string): string[] {
  const at = Math.max(cliPath.lastIndexOf('/'), cliPath.lastIndexOf('\\'))
  const name = cliPath.slice(at + 1)
  if (!(CLI_ENTRY_NAMES as readonly string[]).includes(name)) return [cliPath]
  return [cliPath, ...CLI_ENTRY_NAMES.filter((n) => n !== name).map((n) => cliPath.slice(0, at + 1) + n)]
}

/**
 * True when `command` is a mnemo hook command: it ends in `hook <Event>`
 * (with `agent`, optionally followed by `--agent <agent>`) and mentions
 * `mnemo` (any case), the CLI script `adapters/cli/main.js` or `adapters/cli/bin.cjs`, or
 * `cliPathQuoted` when given. Matches commands from any install location as
 * well as `mnemo hook X` / `npx mnemo hook X` forms.
 */
export function isMnemoHookCommand(command: string, cliPathQuoted?: string, agent?: ConnectAgent): boolean {
  const agentFlag = agent === undefined ? '' : `(?:\\s+--agent(?:\\s+|=)["']?${agent}["']?)?`
  const tail = new RegExp(`(?:^|\\s)hook\\s+["']?[A-Za-z]+["']?${agentFlag}\\s*$`)
  if (!tail.test(command)) return false
  return (
    /mnemo/i.test(command) ||
    CLI_SCRIPT.test(command) ||
    (cliPathQuoted !== undefined && cliPathQuoted !== '' && command.includes(cliPathQuoted))
  )
}

/** mnemo's MCP server entry as most agents write it; the MCP server learns which agent it serves from `--agent`. A type, not an interface, so it fits the JSON and TOML value types. */
type StdioMcpEntry = {
  command: string
  args: string[]
  env?: { MNEMO_HOME: string }
}

/** `{ command: <node>, args: [<cli>, "mcp", "--agent", <agent>], env?: { MNEMO_HOME } }` (`env` only when `cmd.mnemoHome` is set). */
export function stdioMcpEntry(cmd: ResolvedCommand, agent: ConnectClient): StdioMcpEntry {
  const entry: StdioMcpEntry = { command: cmd.nodePath, args: [cmd.cliPath, 'mcp', '--agent', agent] }
  if (cmd.mnemoHome !== undefined) entry.env = { MNEMO_HOME: cmd.mnemoHome }
  return entry
}
