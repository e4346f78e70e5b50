import { BINARY_PLACEHOLDER, capText } from '../core/text.js'
import { unwrapToolOutput } from './agent-wrappers.js'

/** Largest observation text kept for a tool call's input part, in chars. */
const TOOL_INPUT_CHARS = 2_000
/** Largest observation text kept for a tool's result, in chars. */
const TOOL_RESULT_CHARS = 4_000
/** Largest text of any one observation, in chars. */
export const OBSERVATION_CHARS = 8_000

/**
 * mnemo's own MCP tools are never captured: recalling must not create memories. Each agent names
 * a server's tool its own way: `mcp__mnemo__memory_recall` (Claude Code, Codex), `mcp_mnemo_memory_recall`
 * (Gemini CLI, Cursor), `mnemo_memory_recall` (OpenCode), `mnemo__memory_recall` (older Codex),
 * `mnemo.memory_recall` / `mnemo:memory_recall`; Codex 0.171 also gives `{namespace: "mcp__mnemo",
 * name: "memory_recall"}`, which callers pass as `namespace`. The rule: an optional `mcp` prefix, the
 * server name `mnemo`, a separator (`__`, `_`, `.`, `:`, `/`, `-`) and a tool name.
 *
 * @param namespace - The tool's namespace when the agent gives it apart from the name.
 */
export function isOwnTool(toolName: string, namespace?: string): boolean {
  if (namespace !== undefined && namespace !== '' && OWN_SERVER.test(namespace)) return true
  return OWN_TOOL.test(toolName)
}

const OWN_TOOL = /^(?:mcp(?:__|[_.:/-]))?mnemo(?:__|[_.:/-])\w/i
/** A namespace naming mnemo's server: `mnemo`, `mcp__mnemo`, `mcp_mnemo`, `mcp.mnemo`. */
const OWN_SERVER = /^(?:mcp(?:__|[_.:/-]))?mnemo(?:__|[_.:/-])?$/i

/** Whether an agent's description of an MCP call names mnemo's server (Gemini CLI's `mcp_context.server_name`, Codex's `invocation.server`). */
export function isOwnServer(server: unknown): boolean {
  return typeof server === 'string' && OWN_SERVER.test(server)
}

const INPUT_KEYS = ['command', 'cmd', 'file_path', 'path', 'notebook_path', 'pattern', 'query', 'url', 'description', 'prompt', 'skill']

/**
 * One line describing a tool call's input: the field that says what the call
 * does (`command`, `file_path`, `pattern`, `url`, …) first, then edit content
 * (`new_string`, `content`) so identifiers written by the agent are searchable.
 * Inputs given as a JSON string (Codex `arguments`) are parsed first.
 */
function describeToolInput(input: unknown): string {
  const value = parseMaybeJson(input)
  if (typeof value === 'string') return capText(value, TOOL_INPUT_CHARS)
  if (value === null || typeof value !== 'object') return value === undefined ? '' : String(value)
  const record = value as Record<string, unknown>
  const parts: string[] = []
  for (const key of INPUT_KEYS) {
    const v = record[key]
    if (typeof v === 'string' && v.length > 0) parts.push(v)
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) parts.push(v.join(' '))
  }
  for (const key of ['old_string', 'new_string', 'content', 'input']) {
    const v = record[key]
    if (typeof v === 'string' && v.length > 0) parts.push(v)
  }
  if (Array.isArray(record['edits'])) {
    for (const e of record['edits'] as unknown[]) {
      if (e && typeof e === 'object' && typeof (e as Record<string, unknown>)['new_string'] === 'string')
        parts.push((e as Record<string, string>)['new_string']!)
    }
  }
  if (parts.length === 0) parts.push(JSON.stringify(record))
  return capText(parts.join('\n'), TOOL_INPUT_CHARS)
}

/**
 * The readable text of a tool result: strings as they are, content-block
 * arrays as their text blocks, objects as their string leaves (`stdout`,
 * `stderr`, `file.content`, …) joined by newlines. Capped at `maxChars`.
 */
export function describeToolResult(result: unknown, maxChars = TOOL_RESULT_CHARS): string {
  const out: string[] = []
  collectStrings(parseMaybeJson(result), out, 0)
  return capText(out.join('\n').trim(), maxChars)
}

function collectStrings(value: unknown, out: string[], depth: number): void {
  if (depth > 6 || value === null || value === undefined) return
  if (typeof value === 'string') {
    const text = unwrapToolOutput(value)
    if (text.trim().length > 0) out.push(text)
    return
  }
  if (typeof value === 'number' || typeof value === 'boolean') return
  if (Array.isArray(value)) {
    for (const v of value) collectStrings(v, out, depth + 1)
    return
  }
  const record = value as Record<string, unknown>
  if (record['type'] === 'image') {
    out.push(imageText(record))
    return
  }
  // Gemini CLI's tool result: `llmContent` is what the model saw, `returnDisplay` a copy for the screen.
  const display =
    'llmContent' in record && record['llmContent'] !== undefined && record['llmContent'] !== null && record['llmContent'] !== ''
  for (const [key, v] of Object.entries(record)) {
    if (display && key === 'returnDisplay') continue
    if (key === 'type' || key === 'tool_use_id' || key === 'interrupted' || key === 'isImage' || key === 'signature') continue
    collectStrings(v, out, depth + 1)
  }
}

/**
 * What an image content block reads as in an observation: the placeholder capture stored for its data
 * (`[image: image/png, 12,000 B]`, see `binaryPlaceholder`), else `[image]`.
 */
export function imageText(block: unknown): string {
  const found: string[] = []
  const walk = (v: unknown, depth: number): void => {
    if (found.length > 0 || depth > 3) return
    if (typeof v === 'string') {
      if (BINARY_PLACEHOLDER.test(v)) found.push(v)
    } else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1)
    else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) walk(x, depth + 1)
  }
  walk(block, 0)
  return found[0] ?? '[image]'
}

function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== 'string') return value
  const t = value.trim()
  if (!(t.startsWith('{') || t.startsWith('['))) return value
  try {
    return JSON.parse(t) as unknown
  } catch {
    return value
  }
}

/**
 * File paths a tool call touches, from its input: `file_path`, `path`,
 * `notebook_path`, `paths`, and the file headers of an `apply_patch` body
 * (`*** Add File: x`, `*** Update File: x`, `*** Delete File: x`).
 *
 * @param cwd - The agent's working directory when the call was made (absolute): a relative path is taken
 *   relative to it, so `a.ts` read from `src/` is `<cwd>/a.ts`, not a file at the project root.
 */
export function filesOfToolInput(input: unknown, cwd?: string): string[] {
  const files = filesNamed(input)
  if (cwd === undefined || !cwd.startsWith('/')) return files
  const base = cwd.replace(/\/+$/, '')
  return [...new Set(files.map((f) => (f.startsWith('/') || f.startsWith('~') || /^[A-Za-z]:[\\/]/.test(f) ? f : `${base}/${f}`)))]
}

function filesNamed(input: unknown): string[] {
  const value = parseMaybeJson(input)
  const files = new Set<string>()
  const addPatchFiles = (text: string): void => {
    for (const m of text.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)) files.add(m[1]!.trim())
  }
  if (typeof value === 'string') addPatchFiles(value)
  else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>
    // filePath: OpenCode's read, edit and write tools.
    for (const key of ['file_path', 'filePath', 'path', 'notebook_path']) {
      const v = record[key]
      if (typeof v === 'string' && v.length > 0 && v.length < 1024) files.add(v)
    }
    if (Array.isArray(record['paths'])) for (const p of record['paths']) if (typeof p === 'string') files.add(p)
    for (const key of ['input', 'patch']) if (typeof record[key] === 'string') addPatchFiles(record[key] as string)
  }
  return [...files]
}

/** The observation text of a tool call: `Tool: input` and, when known, `→ result`. */
export function toolObservationText(tool: string, input: unknown, result?: unknown): string {
  const head = `${tool}: ${describeToolInput(input)}`
  if (result === undefined) return capText(head, OBSERVATION_CHARS)
  const res = describeToolResult(result)
  return capText(res.length > 0 ? `${head}\n→ ${res}` : head, OBSERVATION_CHARS)
}

export { oneLine, SESSION_TITLE_CHARS } from '../core/text.js'
