/**
 * Applies planned {@link JsonEdit}s to the text of a JSON(C) file, touching
 * only the edited values: `jsonc-parser` finds each value's text range, so
 * user comments, trailing commas, key order and formatting elsewhere survive.
 */
import { applyEdits, type FormattingOptions, findNodeAtLocation, type JSONPath, modify, type Node, parseTree } from 'jsonc-parser'
import { type ConnectPlanFile, planFileOf, readConfigText, summarizeItems } from './connect-plan.js'
import { isJsonObject, type Json, type JsonEdit, type JsonObject, jsonEqual, parseJsonConfig, parseJsonQuiet } from './json-config.js'

function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n'
  const indent = /\n([ \t]+)["}\]\w/]/.exec(text)?.[1]
  if (indent?.startsWith('\t')) return { tabSize: 1, insertSpaces: false, eol }
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
 * semantic change keeps its exact bytes. A missing or blank file, or any
 * changed file with `layout` `'rewrite'`, becomes `JSON.stringify(result,
 * null, 2)` plus a newline. Otherwise (`layout` `'keep'`, the default) only
 * the edited values' text changes: a replaced value is re-indented at its
 * line's indentation, a new key goes on its own line after the last key of
 * its object (trailing-comma style kept), a removed key takes its separator
 * with it; comments elsewhere and every other byte stay. A file left as an
 * empty object becomes `{}` plus a newline.
 */
function editJsonText(
  text: string | undefined,
  parsed: JsonObject,
  edits: readonly JsonEdit[],
  layout: 'keep' | 'rewrite' = 'keep',
): string {
  const needed = edits.filter((e) => !jsonEqual(valueAt(parsed, e.path), e.value))
  if (text !== undefined && needed.length === 0) return text
  if (text === undefined || layout === 'rewrite' || text.replace(/^\uFEFF/, '').trim() === '') {
    const root: JsonObject = structuredClone(parsed)
    for (const e of needed) setIn(root, e.path, e.value)
    return `${JSON.stringify(root, null, 2)}\n`
  }
  const fmt = formattingOf(text)
  let out = text
  for (const e of needed) out = e.value === undefined ? removeJsonText(out, e.path) : setJsonText(out, e.path, e.value, fmt)
  return /^\uFEFF?\s*\{\s*\}\s*$/.test(out) ? `{}${fmt.eol ?? '\n'}` : out
}

/** How {@link planJsonFile} plans one JSON config file. */
interface JsonFilePlan {
  kind: ConnectPlanFile['kind']
  /** True when the agent reads the file as JSON with comments and trailing commas; false for strict JSON. */
  comments: boolean
  /** How a changed file is written (see {@link editJsonText}). Default `'keep'`. */
  layout?: 'keep' | 'rewrite'
  /** mnemo's edits, from the parsed file and its text (undefined for a missing file). */
  edits: (config: JsonObject, text: string | undefined) => JsonEdit[]
  /** mnemo's entries in a parsed file, per summary label (`hooks`, `mcp servers`): name → entry as JSON. Compared before and after for the plan summary, in this order. */
  items: Readonly<Record<string, (config: JsonObject) => Map<string, string>>>
}

/**
 * Plans one JSON config file: reads it (a missing one is left out when
 * `skipMissing`, else planned as empty), parses it, applies `plan.edits`
 * with {@link editJsonText} and summarises mnemo's entries before and after.
 * Reads only; writes nothing.
 * @throws MnemoError INVALID_INPUT (details.path = `path`) when the file cannot be read or parsed, or an edit refuses its shape.
 */
export function planJsonFile(path: string, skipMissing: boolean, plan: JsonFilePlan): ConnectPlanFile | undefined {
  const before = readConfigText(path)
  if (before === undefined && skipMissing) return undefined
  const config = parseJsonConfig(path, before, plan.comments)
  const after = editJsonText(before, config, plan.edits(config, before), plan.layout)
  const next = parseJsonQuiet(after)
  const summary = Object.entries(plan.items).flatMap(([label, items]) => summarizeItems(label, items(config), items(next)))
  return planFileOf(path, plan.kind, before, after, summary)
}
