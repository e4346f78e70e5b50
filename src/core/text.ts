/**
 * Text hygiene shared by capture and context assembly: Unicode repair,
 * size caps that keep head and tail, binary placeholders, grapheme-safe
 * truncation and token estimates. Pure functions.
 */

/**
 * Bidi embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069): they
 * reorder how the text around them is displayed (Trojan Source, CVE-2021-42574).
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g

/**
 * Replaces NUL bytes, lone UTF-16 surrogates and bidi embedding/override/isolate
 * controls (U+202A–U+202E, U+2066–U+2069) with U+FFFD, so stored text is
 * well-formed and displays in the order it is read: a prompt starting with a
 * right-to-left override cannot reverse what `sessions` or the context block
 * shows. The marks that only set direction (U+200E, U+200F, U+061C) stay.
 * Capture applies it before the event log, so `rebuild` derives the same text.
 */
export function repairUnicode(text: string): string {
  let out = text.isWellFormed() ? text : text.toWellFormed()
  if (out.includes('\u0000')) out = out.replaceAll('\u0000', '\uFFFD')
  return hasBidiControl(out) ? out.replace(BIDI_CONTROLS, '\uFFFD') : out
}

function hasBidiControl(text: string): boolean {
  BIDI_CONTROLS.lastIndex = 0
  return BIDI_CONTROLS.test(text)
}

const DATA_URI = /data:([\w.+-]+\/[\w.+-]+);base64,[A-Za-z0-9+/=]{16,}/g
/** A run of 512+ base64 characters with no spaces: an inline image or blob, never prose. */

/**
 * Replaces inline binary with short placeholders: data URIs become
 * `[binary image/png, ~N bytes]`, long base64 runs `[binary ~N bytes]`, and a
 * string that is mostly control characters `[binary data, N chars]`.
 */
export function replaceBinary(text: string): string {
  if (text.length >= 64 && looksBinary(text)) return `[binary data, ${text.length} chars]`
  let out = text
  if (out.includes('base64,')) {
    out = out.replace(DATA_URI, (m, mime: string) => `[binary ${mime}, ~${base64Bytes(m.length - m.indexOf(',') - 1)} bytes]`)
  }
  if (out.length >= 512) out = replaceLongBase64Runs(out)
  return out
}

function isBase64Char(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47
}

/**
 * Replaces runs of 512+ base64 characters (plus `=` padding) that look like
 * blobs with `[binary ~N bytes]`. A linear scan, not a regex: a regex over a
 * multi-megabyte run overflows V8's stack.
 */
function replaceLongBase64Runs(text: string): string {
  let out = ''
  let last = 0
  let i = 0
  while (i < text.length) {
    if (!isBase64Char(text.charCodeAt(i))) {
      i++
      continue
    }
    let j = i
    while (j < text.length && isBase64Char(text.charCodeAt(j))) j++
    let end = j
    while (end < text.length && end - j < 2 && text.charCodeAt(end) === 61) end++
    if (j - i >= 512 && isLikelyBase64Blob(text.slice(i, j))) {
      out += `${text.slice(last, i)}[binary ~${base64Bytes(end - i)} bytes]`
      last = end
    }
    i = end > j ? end : j
  }
  return last === 0 ? text : out + text.slice(last)
}

function base64Bytes(chars: number): number {
  return Math.floor((chars * 3) / 4)
}

/** Long identifiers and hex hashes are base64-alphabet too; blobs mix cases and digits evenly. */
function isLikelyBase64Blob(run: string): boolean {
  let upper = 0
  let lower = 0
  let digit = 0
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i)
    if (c >= 65 && c <= 90) upper++
    else if (c >= 97 && c <= 122) lower++
    else if (c >= 48 && c <= 57) digit++
  }
  return upper > run.length * 0.1 && lower > run.length * 0.1 && digit > run.length * 0.02
}

function looksBinary(text: string): boolean {
  const sample = text.length > 4096 ? text.slice(0, 4096) : text
  let control = 0
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i)
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 0xfffd) control++
  }
  return control > sample.length * 0.1
}

/**
 * Caps `text` at `maxChars` UTF-16 units, keeping the first 75% and the last
 * 25% of the budget and a marker with the original length between them:
 * `…[mnemo: 12345 chars cut, 20000 total]…`. Never splits a surrogate pair.
 *
 * @param maxChars - Largest length kept, >= 64. Text at or under it is returned as is.
 */
export function capText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text
  const { headLen, tailLen } = capSplit(maxChars)
  return joinCut(safeSlice(text, 0, headLen), safeSlice(text, text.length - tailLen, text.length), text.length)
}

/** How `capText` shares `maxChars` out: the first 75% (`headLen`) and the last 25% (`tailLen`). */
export function capSplit(maxChars: number): { headLen: number; tailLen: number } {
  const headLen = Math.floor(maxChars * 0.75)
  return { headLen, tailLen: maxChars - headLen }
}

/** A cut text as `capText` writes it: head, the marker with the original length, tail. */
export function joinCut(head: string, tail: string, total: number): string {
  return `${head}\n…[mnemo: ${total - head.length - tail.length} chars cut, ${total} total]…\n${tail}`
}

/** `text.slice(start, end)` moved inward so no surrogate pair is split. */
function safeSlice(text: string, start: number, end: number): string {
  let s = start
  let e = end
  if (s > 0 && isLowSurrogate(text.charCodeAt(s))) s++
  if (e < text.length && isLowSurrogate(text.charCodeAt(e))) e--
  return text.slice(s, e)
}

/** Whether a UTF-16 code unit is the second half of a surrogate pair. */
export function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff
}

/** Per-field caps, in UTF-16 units. */
export interface CapLimits {
  /** Cap for any single string field of a payload. Default 16 000. */
  fieldChars: number
  /** Most array items kept per array (the rest are dropped with a marker). Default 500. */
  arrayItems: number
  /** Deepest nesting kept; deeper values become a marker. Default 20. */
  depth: number
}

export const DEFAULT_CAPS: CapLimits = { fieldChars: 16_000, arrayItems: 500, depth: 20 }

/**
 * Sanitises every string inside a JSON-like value: Unicode repair, binary
 * placeholders, per-field caps. Returns a new value; never mutates the input.
 * Image content blocks (`{type: 'image', source: {data}}`) keep their shape
 * with the data replaced.
 */
export function sanitizeValue(value: unknown, limits: CapLimits = DEFAULT_CAPS, depth = 0): unknown {
  if (typeof value === 'string') return capText(replaceBinary(repairUnicode(value)), limits.fieldChars)
  if (value === null || typeof value !== 'object') {
    return typeof value === 'number' && !Number.isFinite(value) ? null : value
  }
  if (depth >= limits.depth) return '[mnemo: nesting too deep]'
  if (Array.isArray(value)) {
    const kept = value.slice(0, limits.arrayItems).map((v) => sanitizeValue(v, limits, depth + 1))
    if (value.length > limits.arrayItems) kept.push(`[mnemo: ${value.length - limits.arrayItems} more items cut]`)
    return kept
  }
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    // defineProperty, not assignment: a key named __proto__ is data here.
    Object.defineProperty(out, repairUnicode(key), { value: sanitizeValue(v, limits, depth + 1), enumerable: true, writable: true, configurable: true })
  }
  return out
}

// Created on first use (an ICU break iterator is not free at start-up).
let graphemeSegmenter: Intl.Segmenter | undefined
const graphemes = (): Intl.Segmenter => (graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' }))

/**
 * Shortens `text` to at most `maxChars` UTF-16 units without splitting a
 * grapheme (emoji, combining marks, surrogate pairs), adding `…` when cut.
 */
export function truncateGraphemes(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text
  // Fast path: around the cut only code points below U+0300 (no combining marks,
  // surrogates, joiners or variation selectors), so every code unit is its own grapheme.
  const cut = Math.max(0, maxChars - 1)
  let simple = true
  for (let i = Math.max(0, cut - 2); i < Math.min(text.length, cut + 2); i++) if (text.charCodeAt(i) >= 0x300) simple = false
  if (simple) return `${text.slice(0, cut)}…`
  let out = ''
  // Segment only a window: ICU prepares the whole string it is given, and no grapheme is 64 units long.
  for (const { segment } of graphemes().segment(text.slice(0, maxChars + 64))) {
    if (out.length + segment.length > maxChars - 1) break
    out += segment
  }
  return `${out}…`
}

/** True for Han, Hiragana, Katakana and Hangul code points (CJK scripts). */
export function isCjkCodePoint(cp: number): boolean {
  return (
    (cp >= 0x3040 && cp <= 0x30ff) || // Hiragana, Katakana
    (cp >= 0x3400 && cp <= 0x4dbf) || // CJK Ext A
    (cp >= 0x4e00 && cp <= 0x9fff) || // CJK Unified
    (cp >= 0xac00 && cp <= 0xd7af) || // Hangul syllables
    (cp >= 0xf900 && cp <= 0xfaff) || // CJK compatibility
    (cp >= 0x20000 && cp <= 0x2fa1f) // CJK Ext B–F, compatibility supplement
  )
}

/**
 * Estimates LLM tokens in `text` without a tokenizer: one token per CJK
 * character plus one per 4 other characters (the usual English ratio for
 * BPE tokenizers such as cl100k and Claude's). Over-counts slightly for
 * code, which keeps budgets safe.
 */
export function estimateTokens(text: string): number {
  let cjk = 0
  let other = 0
  for (const ch of text) {
    if (isCjkCodePoint(ch.codePointAt(0) ?? 0)) cjk++
    else other++
  }
  return cjk + Math.ceil(other / 4)
}

/** Collapses whitespace runs to single spaces and trims. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/**
 * The reason a `JSON.parse` failed, without the excerpt of the input V8
 * quotes in its message (`Unexpected token 'g', "ghp_aB3dE5"... is not valid
 * JSON`): the input may be a secret, and these reasons are logged and shown.
 * Positions stay (`… in JSON at position 12`).
 */
export function jsonSyntaxError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  if (/^Unexpected token/.test(message)) return 'unexpected character'
  return message.replace(/"(?:[^"\\]|\\.)*"(?:\.\.\.)?/gs, '…')
}
