/**
 * Regex building blocks of the redaction table (key names, quoted and bare
 * values, word edges) and the PEM private-key walker, each written so a scan
 * stays linear in the text.
 */

/**
 * A key name starting at a word edge or right after a `\n`-style escape
 * (text holding JSON-escaped lines). The edge test sits after the first
 * character, which lets the regex engine skip non-letters fast.
 */
export const KEY = String.raw`(?<key>[A-Za-z_](?<!(?<!\\)[\w.$-].)[\w.-]{0,80})`
/**
 * A quoted literal: `"…"` (escapes inside stay whole), or `'…'` / JSON-escaped
 * `\"…\"` (no backslash inside). No raw `"` is ever inside the value, so a
 * span never crosses the structure of a JSON document the text may be.
 * The double-quoted body is the unrolled loop `[^\\"]*(?:\\.[^\\"]*)*` (Friedl, Mastering Regular
 * Expressions, ch. 6) rather than `(?:[^\\"]|\\.)*`: the same strings, but V8 recurses per
 * alternation, and a quoted value of ~10 million characters overflowed its stack.
 */
export const QUOTED = String.raw`(?:"(?<secret>[^\\"\r\n]*(?:\\.[^\\"\r\n]*)*)"|(?<q>\\*'|\\+")(?<secret2>[^\\"\r\n]*?)\k<q>)`
/** An unquoted shell/env value: stops at whitespace, quotes, backslashes, shell operators and brackets. */
export const BARE = String.raw`[^\s"'\x60\\;&|<>(){}\[\],]+`
export const BARE_END = String.raw`(?=[\s;&|"'\x60\\<>]|$)`
export const B64URL = '[A-Za-z0-9_-]'
/** A token starts outside any longer word, or right after a `\n`-style escape. */
export const W = String.raw`(?<!(?<!\\)[\w-])`

/** A regex from `source`, by default with the `d` and `g` flags every table entry needs. */
export function rx(source: string, flags = 'dg'): RegExp {
  return new RegExp(source, flags)
}

export const PEM_BEGIN = /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/dg
const PEM_END = /-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/y
const PEM_BODY_START = /(?:\s|\\+[nr])*(?:[A-Za-z0-9+/]{16}|[A-Za-z-]{3,30}: )/y

/** Base64, header (`Proc-Type: 4,ENCRYPTED`) and line-break characters of a PEM body. */
function isPemBodyChar(c: number): boolean {
  return (
    (c >= 48 && c <= 58) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    c === 43 ||
    c === 47 ||
    c === 61 ||
    c === 44 ||
    c === 45 ||
    isBlank(c)
  )
}

function isBlank(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13
}

/**
 * Finds the end of a PEM block that starts at `from` (just after its BEGIN
 * line): the end of its END line, or for an unclosed block the end of its
 * body. The body is walked once (`\n` escapes included, a raw quote stops it,
 * so a block never spans two JSON strings); -1 when no key body follows (a
 * marker in code or prose).
 */
export function pemEnd(text: string, from: number): number {
  PEM_BODY_START.lastIndex = from
  if (!PEM_BODY_START.test(text)) return -1
  let i = from
  let bodyEnd = from
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 45 && text.startsWith('-----END', i)) {
      PEM_END.lastIndex = i
      if (PEM_END.test(text)) return PEM_END.lastIndex
    }
    if (isPemBodyChar(c)) {
      i++
      if (!isBlank(c)) bodyEnd = i
    } else if (c === 92) {
      let j = i
      while (text.charCodeAt(j) === 92) j++
      if (!/[nrt]/.test(text[j] ?? '')) break
      i = j + 1
    } else break
  }
  return bodyEnd
}
