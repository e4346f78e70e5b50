/**
 * Shared read-modify-write helpers for `mnemo connect <agent>` beyond Claude
 * Code: JSON / JSON-with-comments edits that touch only the keys mnemo owns
 * (every other byte, comment and key order stays), the MCP command mnemo
 * registers, hook-command recognition, and plan application / rendering on
 * top of {@link applyConnectPlan} and {@link renderPlanDiff} from
 * `claude-code.ts`.
 *
 * JSON edits go through `jsonc-parser` (`modify` + `applyEdits`), which
 * rewrites only the edited value's text range, so user comments, trailing
 * commas and formatting elsewhere survive.
 */
import { readFileSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  applyEdits,
  findNodeAtLocation,
  modify,
  parse,
  parseTree,
  printParseErrorCode,
  type FormattingOptions,
  type JSONPath,
  type Node,
  type ParseError,
} from 'jsonc-parser'
import { parse as parseToml, TomlError } from 'smol-toml'
import { invalidInput } from '../../core/errors.js'
import type { ClaudeHookEvent } from '../../capture/claude-hook.js'
import {
  applyConnectPlan,
  renderPlanDiff,
  type ClaudeCodeCommandOptions,
  type ClaudeCodeConnectOptions,
  type ClaudeCodeDisconnectOptions,
  type ClaudeCodeLocation,
  type ConnectPlanFile,
  type ConnectScope,
} from './claude-code.js'

export type { ConnectScope }

/** Agents with a planner in this folder besides Claude Code. */
export type ConnectAgent = 'codex' | 'gemini' | 'cursor' | 'opencode'

/** Display names used in messages. */
export const AGENT_LABELS: Readonly<Record<ConnectAgent, string>> = {
  codex: 'Codex CLI',
  gemini: 'Gemini CLI',
  cursor: 'Cursor',
  opencode: 'OpenCode',
}

/** One file of an agent plan: a {@link ConnectPlanFile} plus mnemo's own entries summarised (`  mcp servers added: mnemo`). */
export interface AgentPlanFile extends ConnectPlanFile {
  summary: string[]
  /** Applying the plan deletes the file: a file of mnemo's own (OpenCode's plugin), or one disconnect left empty ({@link removeIfEmptied}); `after` is then ''. */
  remove?: boolean
}

/**
 * The result of planning for one agent. Same shape as `ConnectPlan` from
 * claude-code.ts except `client` (that type's `client` is the literal
 * `'claude-code'`) and `notes`: things the user must still do (e.g. trust
 * hooks in Codex), to print after applying.
 */
export interface AgentConnectPlan {
  client: ConnectAgent
  action: 'connect' | 'disconnect'
  scope: ConnectScope
  files: AgentPlanFile[]
  notes: string[]
}

/** Where to write; every field defaults from the running process. The same options for every agent, Claude Code's included. */
export type AgentLocation = ClaudeCodeLocation
/** What the MCP entry and hooks run. */
export type AgentCommandOptions = ClaudeCodeCommandOptions
/** Options of every `plan<Agent>Connect`. */
export type AgentConnectOptions = ClaudeCodeConnectOptions
/** Options of every `plan<Agent>Disconnect`; `cliPath`, when given, also marks hook commands containing it as mnemo's. */
export type AgentDisconnectOptions = ClaudeCodeDisconnectOptions

import type { HookEventMapping } from '../../capture/agent-hook-events.js'
export type { HookEventMapping }

/** What `describe<Agent>Hooks()` returns. */
export interface AgentHooksDescription {
  agent: ConnectAgent
  /** True when connect registers hooks for this agent. */
  supported: boolean
  /** Registered events, in write order; empty when unsupported. */
  events: readonly HookEventMapping[]
  /** The command form, or why there are no hooks. */
  note: string
}

/** Resolved command options. */
export interface ResolvedCommand {
  nodePath: string
  cliPath: string
  mnemoHome: string | undefined
}

export type Json = null | boolean | number | string | Json[] | JsonObject
export type JsonObject = { [key: string]: Json }

export const isJsonObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)
export const describeJson = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`)

/** Structural equality of JSON-like values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return (
    ka.length === kb.length &&
    ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  )
}

/**
 * Defaults and checks the command options: absolute `nodePath` and
 * `cliPath`, non-empty `mnemoHome` (made absolute).
 * @throws MnemoError INVALID_INPUT (details.path = the option name).
 */
export function resolveAgentCommand(o: AgentCommandOptions): ResolvedCommand {
  const nodePath = o.nodePath ?? process.execPath
  const cliPath = o.cliPath ?? fileURLToPath(new URL('../cli/main.js', import.meta.url))
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
export const envOf = (o: AgentLocation): Readonly<Record<string, string | undefined>> => o.env ?? process.env
/** A variable from `env` when set and non-empty. */
export function envDir(o: AgentLocation, name: string): string | undefined {
  const v = envOf(o)[name]
  return v === undefined || v === '' ? undefined : resolve(v)
}

/**
 * The `mnemo hook` shell command for an agent's hook:
 * `[MNEMO_HOME="<home>" ]"<node>" "<cli>" hook <mnemoEvent> --agent <agent>`,
 * every path quoted by `shellQuote`. `--agent` tells `mnemo hook` which
 * payload field names and event names to map (capture/claude-hook.ts,
 * capture/agent-hook-events.ts).
 */
export function agentHookCommand(
  agent: ConnectAgent,
  mnemoEvent: ClaudeHookEvent,
  cmd: ResolvedCommand,
  quote: (s: string) => string,
): string {
  const prefix = cmd.mnemoHome === undefined ? '' : `MNEMO_HOME=${quote(cmd.mnemoHome)} `
  return `${prefix}${quote(cmd.nodePath)} ${quote(cmd.cliPath)} hook ${mnemoEvent} --agent ${agent}`
}

const CLI_SCRIPT = /adapters[\\/]+cli[\\/]+main\.js/

/**
 * True when `command` is a mnemo hook command for `agent`: it ends in
 * `hook <Event>` or `hook <Event> --agent <agent>` and mentions `mnemo` (any
 * case), the CLI script `adapters/cli/main.js`, or `cliPathQuoted` when given.
 */
export function isMnemoAgentHookCommand(command: string, agent: ConnectAgent, cliPathQuoted?: string): boolean {
  const tail = new RegExp(`(?:^|\\s)hook\\s+["']?[A-Za-z]+["']?(?:\\s+--agent(?:\\s+|=)["']?${agent}["']?)?\\s*$`)
  if (!tail.test(command)) return false
  return (
    /mnemo/i.test(command) ||
    CLI_SCRIPT.test(command) ||
    (cliPathQuoted !== undefined && cliPathQuoted !== '' && command.includes(cliPathQuoted))
  )
}

/** Reads a file; `undefined` when it does not exist. @throws MnemoError INVALID_INPUT (details.path = the file) when unreadable. */
export function readConfigText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw invalidInput(path, `cannot read ${path}: ${(err as Error).message}`)
  }
}

/**
 * Parses JSON (comments and trailing commas allowed when `allowComments`);
 * a missing or blank file is `{}`. Anything that is not a JSON object throws.
 * @throws MnemoError INVALID_INPUT (details.path = the file).
 */
export function parseJsonConfig(path: string, text: string | undefined, allowComments: boolean): JsonObject {
  const body = (text ?? '').replace(/^\uFEFF/, '')
  if (body.trim() === '') return {}
  const errors: ParseError[] = []
  const value: unknown = parse(body, errors, {
    allowTrailingComma: allowComments,
    disallowComments: !allowComments,
    allowEmptyContent: false,
  })
  const first = errors[0]
  if (first !== undefined) {
    const line = body.slice(0, first.offset).split('\n').length
    const what = allowComments ? 'valid JSON' : 'valid JSON (comments and trailing commas are not allowed in this file)'
    throw invalidInput(
      path,
      `${path} is not ${what}: ${printParseErrorCode(first.error)} at line ${line}; mnemo will not overwrite it`,
      'Fix the file or move it aside, then run again.',
    )
  }
  if (!isJsonObject(value))
    throw invalidInput(path, `${path} must hold a JSON object, found ${describeJson(value)}; mnemo will not overwrite it`)
  return value
}

/** One change to a JSON file: set `path` to `value`, or remove it when `value` is undefined. */
export interface JsonEdit {
  path: JSONPath
  value: Json | undefined
}

function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n'
  const indent = /\n([ \t]+)["}\]\w/]/.exec(text)?.[1]
  if (indent !== undefined && indent.startsWith('\t')) return { tabSize: 1, insertSpaces: false, eol }
  return { tabSize: indent === undefined ? 2 : Math.max(1, Math.min(8, indent.length)), insertSpaces: true, eol }
}

function valueAt(root: Json, path: JSONPath): Json | undefined {
  let cur: Json | undefined = root
  for (const seg of path) {
    if (typeof seg === 'number') cur = Array.isArray(cur) ? cur[seg] : undefined
    else cur = isJsonObject(cur) && Object.hasOwn(cur, seg) ? cur[seg] : undefined
    if (cur === undefined) return undefined
  }
  return cur
}

function setIn(root: JsonObject, path: JSONPath, value: Json | undefined): void {
  let cur: JsonObject = root
  for (const [i, seg] of path.entries()) {
    const key = String(seg)
    if (i === path.length - 1) {
      if (value === undefined) delete cur[key]
      else Object.defineProperty(cur, key, { value, enumerable: true, writable: true, configurable: true })
      return
    }
    const next = cur[key]
    if (!isJsonObject(next)) {
      if (value === undefined) return
      const fresh: JsonObject = {}
      Object.defineProperty(cur, key, { value: fresh, enumerable: true, writable: true, configurable: true })
      cur = fresh
    } else cur = next
  }
}

/** `value` as indented JSON whose continuation lines start with `baseIndent`. */
function pretty(value: Json, fmt: FormattingOptions, baseIndent: string): string {
  const unit = fmt.insertSpaces === false ? '\t' : ' '.repeat(fmt.tabSize ?? 2)
  return JSON.stringify(value, null, unit)
    .split('\n')
    .join(`${fmt.eol ?? '\n'}${baseIndent}`)
}

const lineIndent = (text: string, offset: number): string => {
  const start = text.lastIndexOf('\n', offset - 1) + 1
  return /^[ \t]*/.exec(text.slice(start))?.[0] ?? ''
}

/**
 * Sets `path` to `value` by rewriting only that value's text (or inserting
 * one property line after the last property of the deepest existing object),
 * in the file's own indentation; comments and the formatting of everything
 * else stay. Falls back to jsonc-parser's formatter for single-line objects.
 */
function setJsonText(text: string, path: JSONPath, value: Json, fmt: FormattingOptions): string {
  const eol = fmt.eol ?? '\n'
  const tree = parseTree(text, [], { allowTrailingComma: true })
  const fallback = (): string => applyEdits(text, modify(text, path, value, { formattingOptions: fmt }))
  if (tree === undefined) return fallback()
  const node = findNodeAtLocation(tree, path)
  if (node !== undefined)
    return `${text.slice(0, node.offset)}${pretty(value, fmt, lineIndent(text, node.offset))}${text.slice(node.offset + node.length)}`
  let depth = path.length - 1
  let parent: Node | undefined
  for (; depth >= 0; depth--) {
    parent = depth === 0 ? tree : findNodeAtLocation(tree, path.slice(0, depth))
    if (parent !== undefined) break
  }
  if (parent === undefined || parent.type !== 'object') return fallback()
  let nested: Json = value
  for (let i = path.length - 1; i > depth; i--) nested = { [String(path[i])]: nested }
  const key = String(path[depth])
  const props = parent.children ?? []
  const last = props[props.length - 1]
  if (last === undefined) {
    return `${text.slice(0, parent.offset)}${pretty({ [key]: nested }, fmt, lineIndent(text, parent.offset))}${text.slice(parent.offset + parent.length)}`
  }
  const valueEnd = last.offset + last.length
  const indent = lineIndent(text, last.offset)
  const lineStart = text.lastIndexOf('\n', last.offset - 1) + 1
  const tail = /^([ \t]*)(,?)([ \t]*(?:\/\/[^\n]*?)?)(\r?\n)/.exec(text.slice(valueEnd))
  if (tail === null || lineStart <= parent.offset || text.slice(lineStart, last.offset).trim() !== '') return fallback()
  const hadComma = tail[2] === ','
  const at = valueEnd + (tail[1] ?? '').length + (tail[2] ?? '').length + (tail[3] ?? '').replace(/\r$/, '').length
  const line = `${eol}${indent}${JSON.stringify(key)}: ${pretty(nested, fmt, indent)}${hadComma ? ',' : ''}`
  const withLine = `${text.slice(0, at)}${line}${text.slice(at)}`
  return hadComma ? withLine : `${withLine.slice(0, valueEnd)},${withLine.slice(valueEnd)}`
}

/**
 * Removes the property at `path`: its whole line(s) when it sits on lines of
 * its own (a comment after the previous property stays), plus the previous
 * property's comma when it was the last one without a trailing comma; else
 * jsonc-parser's removal.
 */
function removeJsonText(text: string, path: JSONPath): string {
  const tree = parseTree(text, [], { allowTrailingComma: true })
  const fallback = (): string => applyEdits(text, modify(text, path, undefined, {}))
  const node = tree === undefined ? undefined : findNodeAtLocation(tree, path)
  const prop = node?.parent
  const obj = prop?.parent
  if (node === undefined || prop?.type !== 'property' || obj?.type !== 'object') return fallback()
  const siblings = obj.children ?? []
  const idx = siblings.indexOf(prop)
  const lineStart = text.lastIndexOf('\n', prop.offset - 1) + 1
  const valueEnd = node.offset + node.length
  const tail = /^[ \t]*(,?)[ \t]*(?:\/\/[^\n]*)?\r?\n/.exec(text.slice(valueEnd))
  if (tail === null || lineStart <= obj.offset || text.slice(lineStart, prop.offset).trim() !== '') return fallback()
  let out = `${text.slice(0, lineStart)}${text.slice(valueEnd + tail[0].length)}`
  const prev = siblings[idx - 1]
  if (idx === siblings.length - 1 && tail[1] !== ',' && prev !== undefined) {
    const prevEnd = prev.offset + prev.length
    const comma = /^[ \t]*,/.exec(out.slice(prevEnd))
    if (comma !== null) out = `${out.slice(0, prevEnd + comma[0].length - 1)}${out.slice(prevEnd + comma[0].length)}`
  }
  return out
}

/**
 * Applies `edits` to a JSON(C) text and returns the new text. An edit whose
 * value already equals what is there is skipped, so a file needing no
 * semantic change keeps its exact bytes. A missing or blank file becomes
 * `JSON.stringify(result, null, 2)` plus a newline. Otherwise only the
 * edited values' text changes: a replaced value is re-indented at its line's
 * indentation, a new key goes on its own line after the last key of its
 * object (trailing-comma style kept), a removed key takes its separator with
 * it; comments elsewhere and every other byte stay. A file left as an empty
 * object becomes `{}` plus a newline.
 */
export function editJsonText(text: string | undefined, parsed: JsonObject, edits: readonly JsonEdit[]): string {
  const needed = edits.filter((e) => !jsonEqual(valueAt(parsed, e.path), e.value))
  if (text !== undefined && needed.length === 0) return text
  if (text === undefined || text.replace(/^\uFEFF/, '').trim() === '') {
    const root: JsonObject = structuredClone(parsed)
    for (const e of needed) setIn(root, e.path, e.value)
    return `${JSON.stringify(root, null, 2)}\n`
  }
  const fmt = formattingOf(text)
  let out = text
  for (const e of needed) out = e.value === undefined ? removeJsonText(out, e.path) : setJsonText(out, e.path, e.value, fmt)
  return /^\uFEFF?\s*\{\s*\}\s*$/.test(out) ? `{}${fmt.eol ?? '\n'}` : out
}

/** Lines like `  mcp servers added: mnemo` comparing mnemo's items (name → JSON) before and after. */
export function summarizeItems(label: string, before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const keys = [...new Set([...before.keys(), ...after.keys()])]
  const groups: Array<[string, (k: string) => boolean]> = [
    ['added', (k) => !before.has(k)],
    ['updated', (k) => before.has(k) && after.has(k) && before.get(k) !== after.get(k)],
    ['removed', (k) => !after.has(k)],
    ['unchanged', (k) => before.get(k) === after.get(k)],
  ]
  return groups
    .map(([what, test]) => [what, keys.filter(test)] as const)
    .filter(([, list]) => list.length > 0)
    .map(([what, list]) => `  ${label} ${what}: ${list.join(', ')}`)
}

/** A plan file from before/after texts. */
export function planFileOf(
  path: string,
  kind: ConnectPlanFile['kind'],
  before: string | undefined,
  after: string,
  summary: string[],
): AgentPlanFile {
  return { path, kind, before, after, changed: after !== before, summary }
}

/**
 * On disconnect: when removing mnemo's entries leaves `file` holding nothing
 * but what connect itself writes around them (`leftover`: for JSON the exact
 * objects, e.g. `{}` or Cursor's `{"version":1}`, compared without
 * whitespace, so a comment or any key of the user's keeps the file; for TOML
 * nothing but blank lines), the file is one connect created: the plan deletes
 * it instead of leaving an empty shell. A file mnemo did not change (no mnemo
 * entry in it) is never deleted. Returns `file` itself otherwise.
 */
export function removeIfEmptied(
  file: AgentPlanFile | undefined,
  format: 'json' | 'toml',
  leftover: readonly JsonObject[] = [{}],
): AgentPlanFile | undefined {
  if (file === undefined || !file.changed || file.before === undefined) return file
  const rest = file.after.replace(/\s+/g, '')
  const empty = format === 'toml' ? rest === '' : rest === '' || leftover.some((l) => rest === JSON.stringify(l))
  return empty ? { ...file, after: '', remove: true } : file
}

/**
 * Writes every changed file of `plan` exactly as {@link applyConnectPlan}
 * does (atomic rename, parents created, mode kept, symlinks followed, refuses
 * a file changed since planning). Returns the paths written, in plan order.
 * @throws MnemoError INVALID_INPUT (details.path = the file) as applyConnectPlan.
 */
export function applyAgentConnectPlan(plan: AgentConnectPlan): string[] {
  // applyConnectPlan reads only `files`; its ConnectPlan type still names claude-code as the only client.
  const written = applyConnectPlan({
    client: 'claude-code',
    action: plan.action,
    scope: plan.scope,
    files: plan.files.filter((f) => f.remove !== true),
  })
  for (const file of plan.files) {
    if (file.remove !== true || !file.changed) continue
    if (readConfigText(file.path) !== file.before)
      throw invalidInput(file.path, `${file.path} changed since the plan was made; not removed`, 'Run the command again.')
    rmSync(file.path, { force: true })
    written.push(file.path)
  }
  return written
}

const CLAUDE_SUMMARY = /^ {2}(?:hooks|mcp servers) (?:added|updated|removed|unchanged): /

/**
 * Renders a plan for `--dry-run` in the format of {@link renderPlanDiff}:
 * per file a header (`create`, `update`, `unchanged`), the file's summary
 * lines for mnemo's own entries, then for a changed file the line diff. Then
 * one `  note: …` line per plan note. Pure; never throws.
 */
export function renderAgentPlanDiff(plan: AgentConnectPlan): string {
  const out: string[] = []
  for (const file of plan.files) {
    if (file.remove === true) {
      out.push(`${file.changed ? 'remove' : 'unchanged'} ${file.path}`, ...file.summary)
      continue
    }
    const lines = renderPlanDiff({ client: 'claude-code', action: plan.action, scope: plan.scope, files: [file] })
      .replace(/\n$/, '')
      .split('\n')
    const [header, ...rest] = lines
    out.push(header ?? file.path, ...file.summary, ...rest.filter((l) => !CLAUDE_SUMMARY.test(l)))
  }
  if (plan.files.length === 0) out.push(`nothing to do: no ${AGENT_LABELS[plan.client]} configuration files found`)
  for (const note of plan.notes) out.push(`note: ${note}`)
  return `${out.join('\n')}\n`
}

/**
 * Plans edits to a Claude-style grouped hook map, `config[hooksKey]` =
 * `{ "<Event>": [ { "matcher"?: …, "hooks": [ { "command": … }, … ] }, … ] }`
 * (the shape Codex `hooks.json` and Gemini `settings.json` use). Drops every
 * handler `mine` recognises, under any event; with `add`, puts one fresh
 * group per event in `events` where mnemo's first old group was, or at the
 * end. Groups left empty by the removal are dropped; event lists (and, when
 * disconnecting, the whole map) emptied by it are removed. One edit per
 * changed event, so everything else in the map keeps its text.
 * @throws MnemoError INVALID_INPUT (details.path = `path`) when the map or one of `events`' lists has the wrong type.
 */
export function planGroupedHooks(
  path: string,
  config: JsonObject,
  hooksKey: string,
  events: readonly string[],
  mine: (command: string) => boolean,
  add?: (event: string) => JsonObject,
): JsonEdit[] {
  const raw = config[hooksKey]
  if (raw === undefined && add === undefined) return []
  if (raw !== undefined && !isJsonObject(raw))
    throw invalidInput(path, `${path}: "${hooksKey}" must be an object, found ${describeJson(raw)}; mnemo will not overwrite it`)
  const ours = new Set(add === undefined ? [] : events)
  const edits: JsonEdit[] = []
  let removedAny = false
  let kept = 0
  for (const [event, value] of Object.entries(raw ?? {})) {
    if (!Array.isArray(value)) {
      if (ours.has(event))
        throw invalidInput(
          path,
          `${path}: "${hooksKey}.${event}" must be an array, found ${describeJson(value)}; mnemo will not overwrite it`,
        )
      kept++
      continue
    }
    const out: Json[] = []
    let slot = -1
    let removed = 0
    for (const group of value) {
      if (!isJsonObject(group) || !Array.isArray(group.hooks)) {
        out.push(group)
        continue
      }
      const rest = group.hooks.filter((h) => !(isJsonObject(h) && typeof h.command === 'string' && mine(h.command)))
      if (rest.length === group.hooks.length) {
        out.push(group)
        continue
      }
      removed += group.hooks.length - rest.length
      if (rest.length > 0) out.push({ ...group, hooks: rest })
      else if (slot < 0) slot = out.length
    }
    if (removed > 0) removedAny = true
    if (add !== undefined && ours.has(event)) out.splice(slot < 0 ? out.length : slot, 0, add(event))
    if (out.length === 0 && removed > 0 && !ours.has(event)) {
      edits.push({ path: [hooksKey, event], value: undefined })
      continue
    }
    kept++
    if (!jsonEqual(out, value)) edits.push({ path: [hooksKey, event], value: out })
  }
  if (add !== undefined)
    for (const event of events) if (!Object.hasOwn(raw ?? {}, event)) edits.push({ path: [hooksKey, event], value: [add(event)] })
  if (add === undefined && removedAny && kept === 0) return [{ path: [hooksKey], value: undefined }]
  return edits
}

/** mnemo's handlers in a grouped hook map: event → JSON of `[matcher, handler]` pairs. */
export function groupedHookItems(config: JsonObject, hooksKey: string, mine: (command: string) => boolean): Map<string, string> {
  const out = new Map<string, string>()
  const raw = config[hooksKey]
  for (const [event, groups] of Object.entries(isJsonObject(raw) ? raw : {})) {
    const found = (Array.isArray(groups) ? groups : []).flatMap((g) =>
      (isJsonObject(g) && Array.isArray(g.hooks) ? g.hooks : [])
        .filter((h) => isJsonObject(h) && typeof h.command === 'string' && mine(h.command))
        .map((h) => [isJsonObject(g) ? (g.matcher ?? null) : null, h]),
    )
    if (found.length > 0) out.set(event, JSON.stringify(found))
  }
  return out
}

/** Parses a config text without throwing; `{}` for anything unusable. */
export function parseJsonQuiet(text: string | undefined): JsonObject {
  try {
    return parseJsonConfig('', text, true)
  } catch {
    return {}
  }
}

// ---------------------------------------------------------------------------
// TOML: one table owned by mnemo, edited as text; everything else byte for byte.

/** A parsed TOML document (smol-toml: plain objects, arrays, strings, numbers, booleans, dates). */
export type TomlTable = Record<string, unknown>

/**
 * Parses TOML; a missing or blank file is `{}`.
 * @throws MnemoError INVALID_INPUT (details.path = the file) for invalid TOML.
 */
export function parseTomlConfig(path: string, text: string | undefined): TomlTable {
  const body = (text ?? '').replace(/^\uFEFF/, '')
  if (body.trim() === '') return {}
  try {
    return parseToml(body) as TomlTable
  } catch (err) {
    const where = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : ''
    const first = ((err as Error).message.split('\n')[0] ?? '').trim()
    throw invalidInput(
      path,
      `${path} is not valid TOML${where} (${first}); mnemo will not overwrite it`,
      'Fix the file or move it aside, then run again.',
    )
  }
}

/** A TOML basic string: `"…"` with backslash, `"` and control characters escaped. */
export function tomlString(value: string): string {
  const named: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' }
  return `"${value.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`
}

/** A bare key when it may be one, else a quoted key. */
export const tomlKey = (key: string): string => (/^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key))

/** A string, string array or string→string table as a TOML value. */
export type TomlScalar = string | readonly string[] | Readonly<Record<string, string>>

function tomlValue(v: TomlScalar): string {
  if (typeof v === 'string') return tomlString(v)
  if (Array.isArray(v)) return `[${(v as readonly string[]).map((x) => tomlString(x)).join(', ')}]`
  const entries = Object.entries(v as Readonly<Record<string, string>>)
  return entries.length === 0 ? '{}' : `{ ${entries.map(([k, x]) => `${tomlKey(k)} = ${tomlString(x)}`).join(', ')} }`
}

/** The lines of `[<key>]` with one `k = v` line per entry. */
export function renderTomlTable(key: readonly string[], entry: Readonly<Record<string, TomlScalar>>): string[] {
  return [`[${key.map(tomlKey).join('.')}]`, ...Object.entries(entry).map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`)]
}

interface TomlHeader {
  line: number
  /** Key segments, or undefined when the header could not be read. */
  key: string[] | undefined
  array: boolean
  /** Last line of the table's own content (the header line when it has none); trailing blank and comment lines belong to what follows. */
  end: number
}

const KEY_ESCAPES: Readonly<Record<string, string>> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' }

function readTomlKey(src: string): string[] | undefined {
  const out: string[] = []
  let i = 0
  const skip = (): void => {
    while (src[i] === ' ' || src[i] === '\t') i++
  }
  for (;;) {
    skip()
    const c = src[i]
    if (c === '"') {
      let j = i + 1
      let seg = ''
      while (j < src.length && src[j] !== '"') {
        if (src[j] !== '\\') {
          seg += src[j]
          j++
          continue
        }
        const esc = src[j + 1] ?? ''
        if (esc === 'u' || esc === 'U') {
          const len = esc === 'u' ? 4 : 8
          const hex = src.slice(j + 2, j + 2 + len)
          if (hex.length !== len || !/^[0-9A-Fa-f]+$/.test(hex)) return undefined
          seg += String.fromCodePoint(parseInt(hex, 16))
          j += 2 + len
          continue
        }
        const simple = KEY_ESCAPES[esc]
        if (simple === undefined) return undefined
        seg += simple
        j += 2
      }
      if (src[j] !== '"') return undefined
      out.push(seg)
      i = j + 1
    } else if (c === "'") {
      const j = src.indexOf("'", i + 1)
      if (j < 0) return undefined
      out.push(src.slice(i + 1, j))
      i = j + 1
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(src.slice(i))
      if (m === null) return undefined
      out.push(m[0])
      i += m[0].length
    }
    skip()
    if (i >= src.length) return out
    if (src[i] !== '.') return undefined
    i++
  }
}

const ML_BASIC = '"""'
const ML_LITERAL = "'''"

/**
 * Finds the table headers of a TOML text (split on `\n`; a `\r` before it
 * stays part of the line), skipping anything inside strings, multi-line
 * strings, arrays and inline tables.
 */
function scanTomlHeaders(lines: readonly string[]): TomlHeader[] {
  const headers: TomlHeader[] = []
  let ml: string | undefined
  let depth = 0
  let lastContent = -1
  const close = (): void => {
    const h = headers[headers.length - 1]
    if (h !== undefined) h.end = Math.max(h.line, lastContent)
  }
  for (const [n, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, '')
    let content = ml !== undefined || depth > 0
    if (ml === undefined && depth === 0) {
      const m = /^[ \t]*(\[\[?)(.*?)(\]\]?)[ \t]*(?:#.*)?$/.exec(line)
      if (m !== null && (m[1] === '[[') === (m[3] === ']]')) {
        close()
        headers.push({ line: n, key: readTomlKey(m[2] ?? ''), array: m[1] === '[[', end: n })
        lastContent = n
        continue
      }
    }
    let i = 0
    while (i < line.length) {
      if (ml !== undefined) {
        const j = line.indexOf(ml, i)
        if (j < 0) break
        if (ml === ML_BASIC) {
          let back = 0
          for (let k = j - 1; k >= i && line[k] === '\\'; k--) back++
          if (back % 2 === 1) {
            i = j + 1
            continue
          }
        }
        i = j + 3
        while (line[i] === ml[0]) i++ // up to two more quotes belong to the string
        ml = undefined
        continue
      }
      const c = line[i]
      if (c === '#') break
      if (c !== ' ' && c !== '\t') content = true
      if (line.startsWith(ML_BASIC, i) || line.startsWith(ML_LITERAL, i)) {
        ml = line.startsWith(ML_BASIC, i) ? ML_BASIC : ML_LITERAL
        i += 3
        continue
      }
      if (c === '"') {
        let j = i + 1
        while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1
        i = j + 1
        continue
      }
      if (c === "'") {
        const j = line.indexOf("'", i + 1)
        i = j < 0 ? line.length : j + 1
        continue
      }
      if (c === '[' || c === '{') depth++
      else if (c === ']' || c === '}') depth = Math.max(0, depth - 1)
      i++
    }
    if (content) lastContent = n
  }
  close()
  return headers
}

const keyStartsWith = (key: readonly string[] | undefined, prefix: readonly string[]): boolean =>
  key !== undefined && key.length >= prefix.length && prefix.every((p, i) => key[i] === p)

/** Order-independent text of a parsed TOML value, dates and big integers included. */
function canonicalToml(v: unknown): string {
  return JSON.stringify(v ?? null, (_k, x: unknown) => {
    if (typeof x === 'bigint') return `${x}n`
    if (x instanceof Date) return `date:${String(x)}`
    if (typeof x === 'number' && !Number.isFinite(x)) return `num:${String(x)}`
    if (typeof x === 'object' && x !== null && !Array.isArray(x)) {
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, (x as Record<string, unknown>)[k]]),
      )
    }
    return x
  })
}

function withoutKey(doc: TomlTable, key: readonly string[]): unknown {
  const copy = structuredClone(doc) as Record<string, unknown>
  const parents: Array<[Record<string, unknown>, string]> = []
  let cur: Record<string, unknown> | undefined = copy
  for (const [i, seg] of key.entries()) {
    if (cur === undefined) break
    if (i === key.length - 1) {
      delete cur[seg]
      break
    }
    parents.push([cur, seg])
    const next: unknown = cur[seg]
    cur = typeof next === 'object' && next !== null && !Array.isArray(next) ? (next as Record<string, unknown>) : undefined
  }
  // A parent table left empty only by the removal vanishes from the text too.
  for (const [parent, seg] of parents.reverse()) {
    const v = parent[seg]
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) && Object.keys(v).length === 0) delete parent[seg]
  }
  return copy
}

/** The value at a key path of a parsed TOML document. */
export function tomlValueAt(doc: TomlTable, key: readonly string[]): unknown {
  let cur: unknown = doc
  for (const seg of key) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur) || !Object.hasOwn(cur, seg)) return undefined
    cur = (cur as Record<string, unknown>)[seg]
  }
  return cur
}

/**
 * Sets (or, with `entry` undefined, removes) the table at `key` in a TOML
 * text by editing only that table's lines: its `[key]` header and sub-table
 * headers (`[key.sub]`) with their key/value lines are replaced by one
 * freshly rendered table where the first of them was. A new table goes right
 * after the last table under `key`'s parent (e.g. after the last
 * `[mcp_servers.*]`), else at the end after one blank line. Comments, blank
 * lines and every other table keep their bytes; comment lines right after
 * the table stay (they usually describe what follows). When the table
 * already holds exactly `entry` the text is returned unchanged. The result
 * is parsed again and must equal the original with only `key` changed.
 * @throws MnemoError INVALID_INPUT (details.path = `path`) when the text is
 *   not valid TOML, or the table is defined in a form this edit cannot
 *   rewrite safely (inline table, dotted keys elsewhere).
 */
export function editTomlTable(
  path: string,
  text: string | undefined,
  key: readonly string[],
  entry: Readonly<Record<string, TomlScalar>> | undefined,
): string {
  const original = text ?? ''
  const doc = parseTomlConfig(path, text)
  const current = tomlValueAt(doc, key)
  const want: unknown = entry === undefined ? undefined : JSON.parse(JSON.stringify(entry))
  if (entry === undefined ? current === undefined : canonicalToml(current) === canonicalToml(want)) return original
  const cr = original.includes('\r\n') ? '\r' : ''
  const lines = original === '' ? [] : original.split('\n')
  const trailingNewline = lines.length > 0 && lines[lines.length - 1] === ''
  if (trailingNewline) lines.pop()
  const headers = scanTomlHeaders(lines)
  const name = `[${key.map(tomlKey).join('.')}]`
  const refuse = (why: string): never => {
    throw invalidInput(
      path,
      `${path}: ${why}; mnemo will not rewrite it`,
      `Move mnemo's settings into a plain ${name} table (or delete them), then run again.`,
    )
  }
  const mine = headers.filter((h) => !h.array && keyStartsWith(h.key, key))
  if (current !== undefined && mine.length === 0) refuse(`${name} is defined inline or with dotted keys`)
  const block = entry === undefined ? [] : renderTomlTable(key, entry).map((l) => `${l}${cr}`)
  const drop = new Set<number>()
  for (const h of mine) for (let n = h.line; n <= h.end; n++) drop.add(n)
  for (const [i, h] of headers.entries()) {
    const next = headers[i + 1]
    // Blank and comment lines between two of mnemo's own tables go with them.
    if (next !== undefined && mine.includes(h) && mine.includes(next)) for (let n = h.end + 1; n < next.line; n++) drop.add(n)
  }
  const first = mine[0]
  let insertAfter: number | undefined
  if (first === undefined && block.length > 0) {
    const siblings = headers.filter((h) => !h.array && keyStartsWith(h.key, key.slice(0, -1)) && (h.key?.length ?? 0) >= key.length)
    insertAfter = siblings[siblings.length - 1]?.end
  }
  const out: string[] = []
  let removedAt = -1
  for (const [n, line] of lines.entries()) {
    if (n === first?.line) {
      removedAt = out.length
      out.push(...block)
    }
    if (!drop.has(n)) out.push(line)
    if (n === insertAfter) out.push(cr, ...block)
  }
  if (first === undefined && insertAfter === undefined && block.length > 0) {
    if (out.length > 0 && out[out.length - 1]?.replace(/\r$/, '').trim() !== '') out.push(cr)
    out.push(...block)
  }
  if (entry === undefined && removedAt >= 0) {
    // Where a removed table was, keep at most one blank line, and none at the start or the end of the file.
    const blank = (i: number): boolean => out[i] !== undefined && out[i]!.replace(/\r$/, '').trim() === ''
    while (removedAt > 0 && blank(removedAt - 1) && (removedAt >= out.length || blank(removedAt))) out.splice(--removedAt, 1)
    while (removedAt === 0 && blank(0)) out.splice(0, 1)
  }
  const next = out.length === 0 ? '' : `${out.join('\n')}${trailingNewline || entry !== undefined ? '\n' : ''}`
  let after: TomlTable
  try {
    after = next.trim() === '' ? {} : (parseToml(next) as TomlTable)
  } catch {
    return refuse(`the edited text would not parse as TOML (is ${name} defined in more than one way?)`)
  }
  const got = tomlValueAt(after, key)
  const sameTarget = entry === undefined ? got === undefined : canonicalToml(got) === canonicalToml(want)
  if (!sameTarget || canonicalToml(withoutKey(after, key)) !== canonicalToml(withoutKey(doc, key)))
    refuse(`${name} could not be isolated from the rest of the file`)
  return next
}
