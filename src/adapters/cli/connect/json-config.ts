/**
 * Parsing and checking JSON configuration files (strict JSON or JSON with
 * comments, via `jsonc-parser`), and the edits mnemo plans inside them: its
 * MCP server entry in an `mcpServers` map and its handlers in a
 * Claude-style grouped hook map. The edits are applied to the text by
 * json-edit.ts.
 */
import { type JSONPath, type ParseError, parse, printParseErrorCode } from 'jsonc-parser'
import { invalidInput } from '../../../core/errors.js'

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

/** Parses a config text without throwing; `{}` for anything unusable. */
export function parseJsonQuiet(text: string | undefined): JsonObject {
  try {
    return parseJsonConfig('', text, true)
  } catch {
    return {}
  }
}

/** The name of mnemo's MCP server in every agent's configuration. */
const MCP_SERVER = 'mnemo'

/**
 * The edit that sets `mcpServers.mnemo` to `entry`, or with `entry`
 * undefined removes it (and `mcpServers` itself when mnemo's was its only
 * server). No edit when there is nothing to remove.
 * @throws MnemoError INVALID_INPUT (details.path = `path`) when `mcpServers` is not an object.
 */
export function mcpServerEdits(path: string, config: JsonObject, entry: JsonObject | undefined): JsonEdit[] {
  const raw = config.mcpServers
  if (raw !== undefined && !isJsonObject(raw))
    throw invalidInput(path, `${path}: "mcpServers" must be an object, found ${describeJson(raw)}; mnemo will not overwrite it`)
  if (entry !== undefined) return [{ path: ['mcpServers', MCP_SERVER], value: entry }]
  if (raw === undefined || !Object.hasOwn(raw, MCP_SERVER)) return []
  return [{ path: Object.keys(raw).length === 1 ? ['mcpServers'] : ['mcpServers', MCP_SERVER], value: undefined }]
}

/** mnemo's MCP server in a parsed config: `mnemo` → its entry as JSON, or an empty map. */
export const mcpServerItems = (config: JsonObject): Map<string, string> =>
  new Map(
    isJsonObject(config.mcpServers) && Object.hasOwn(config.mcpServers, MCP_SERVER)
      ? [[MCP_SERVER, JSON.stringify(config.mcpServers[MCP_SERVER])]]
      : [],
  )

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
