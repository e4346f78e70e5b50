/**
 * TOML configuration (Codex's `config.toml`): parsing with `smol-toml`, and
 * one table owned by mnemo set or removed by editing only that table's
 * lines; everything else keeps its bytes.
 */
import { parse as parseToml, TomlError } from 'smol-toml'
import { invalidInput } from '../../../core/errors.js'
import { scanTomlHeaders } from './toml-scan.js'

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
function tomlString(value: string): string {
  const named: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: TOML escapes these control characters, so the class names them
  return `"${value.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`
}

/** A bare key when it may be one, else a quoted key. */
const tomlKey = (key: string): string => (/^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key))

/** A string, string array or string→string table as a TOML value. */
export type TomlScalar = string | readonly string[] | Readonly<Record<string, string>>

function tomlValue(v: TomlScalar): string {
  if (typeof v === 'string') return tomlString(v)
  if (Array.isArray(v)) return `[${(v as readonly string[]).map((x) => tomlString(x)).join(', ')}]`
  const entries = Object.entries(v as Readonly<Record<string, string>>)
  return entries.length === 0 ? '{}' : `{ ${entries.map(([k, x]) => `${tomlKey(k)} = ${tomlString(x)}`).join(', ')} }`
}

/** The lines of `[<key>]` with one `k = v` line per entry. */
function renderTomlTable(key: readonly string[], entry: Readonly<Record<string, TomlScalar>>): string[] {
  return [`[${key.map(tomlKey).join('.')}]`, ...Object.entries(entry).map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`)]
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
