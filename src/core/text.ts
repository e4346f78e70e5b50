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

const DATA_URI = /data:([\w.+-]+\/[\w.+-]+)(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=]{16,}/g

/**
 * The placeholder inline binary is stored as, naming its type and decoded size: `[image: image/png, 12,000 B]`
 * for images, `[binary: application/pdf, 3,100 B]` for other known types, `[binary: 9,000 B]` when the type
 * is unknown.
 *
 * @param bytes - Decoded size in bytes (see `base64Bytes`).
 */
export function binaryPlaceholder(mime: string | undefined, bytes: number): string {
  const size = `${String(bytes).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} B`
  const type = mime?.toLowerCase()
  if (type === undefined || type === '') return `[binary: ${size}]`
  return type.startsWith('image/') ? `[image: ${type}, ${size}]` : `[binary: ${type}, ${size}]`
}

/** Placeholders `binaryPlaceholder` and `replaceBinary` write (so a second pass keeps them). */
export const BINARY_PLACEHOLDER = /^\[(?:image|binary|binary data): [^\]]*\]$/

const SIGNATURE_START = /^(?:iVBORw0KGgo|\/9j\/|R0lGOD|UklGR|SUkq|TU0AK|JVBERi0|UEsDB|H4sI|AAAA)/

/**
 * The type a base64 text's first bytes announce (file signatures: PNG, JPEG, GIF, WebP, TIFF, AVIF/HEIC,
 * PDF, ZIP, gzip), or undefined. Signatures from each format's specification (PNG §5.2, JFIF SOI marker,
 * GIF89a header, RIFF/WebP container, TIFF 6.0 header, ISO BMFF `ftyp` box, PDF 1.7 §7.5.2, ZIP APPNOTE
 * 4.3.7, RFC 1952 §2.3.1).
 */
export function base64Mime(run: string): string | undefined {
  // A cheap gate before decoding: how each signature starts in base64 (ISO BMFF's size field mostly "AAAA").
  if (run.length < 16 || !SIGNATURE_START.test(run)) return undefined
  const head = Buffer.from(run.slice(0, 24), 'base64')
  const at = (i: number, ...bytes: number[]): boolean => bytes.every((b, j) => head[i + j] === b)
  const ascii = (i: number, text: string): boolean => head.subarray(i, i + text.length).toString('latin1') === text
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png'
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg'
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif'
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp'
  if (at(0, 0x49, 0x49, 0x2a, 0x00) || at(0, 0x4d, 0x4d, 0x00, 0x2a)) return 'image/tiff'
  if (ascii(4, 'ftypavif')) return 'image/avif'
  if (ascii(4, 'ftypheic') || ascii(4, 'ftypmif1')) return 'image/heic'
  if (ascii(0, '%PDF-')) return 'application/pdf'
  if (at(0, 0x50, 0x4b, 0x03, 0x04)) return 'application/zip'
  if (at(0, 0x1f, 0x8b)) return 'application/gzip'
  return undefined
}

/**
 * Replaces inline binary with placeholders naming its type and size (see `binaryPlaceholder`): data URIs,
 * base64 runs that start with a file signature (any length from 16 characters), other base64 runs of
 * 1,024+ characters with 16+ different characters, and those of 512+ that mix cases and digits like a blob; a string that is mostly
 * control characters (binary output read as text) becomes `[binary data: N chars]`.
 */
export function replaceBinary(text: string): string {
  if (text.length >= 64 && looksBinary(text)) return `[binary data: ${text.length.toLocaleString('en-US')} chars]`
  let out = text
  if (out.includes('base64,')) {
    out = out.replace(DATA_URI, (m, mime: string) => binaryPlaceholder(mime, base64Bytes(m.slice(m.indexOf(',') + 1))))
  }
  if (out.length >= 16) out = replaceLongBase64Runs(out)
  return out
}

function isBase64Char(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47
}

/**
 * Replaces base64 runs that are blobs (see `replaceBinary`) with their placeholder. A linear scan, not a
 * regex: a regex over a multi-megabyte run overflows V8's stack.
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
    // A run inside a word (`key=iVBOR…` keeps `key=`) starts at a non-alphabet character. Under 16 characters a
    // run is no blob by any of the rules: it is not even cut out of the text (most runs are words).
    if (j - i >= 16) {
      const run = text.slice(i, j)
      const mime = base64Mime(run)
      if (mime !== undefined || (j - i >= 1024 && distinctAtLeast(run, 16)) || (j - i >= 512 && isLikelyBase64Blob(run))) {
        out += `${text.slice(last, i)}${binaryPlaceholder(mime, base64Bytes(text.slice(i, end)))}`
        last = end
      }
    }
    i = Math.max(end, j)
  }
  return last === 0 ? text : out + text.slice(last)
}

/** Whether `run` holds at least `n` different characters (a run of one repeated letter is no blob). */
function distinctAtLeast(run: string, n: number): boolean {
  const seen = new Set<number>()
  for (let k = 0; k < run.length && seen.size < n; k++) seen.add(run.charCodeAt(k))
  return seen.size >= n
}

/** Decoded size of a base64 text in bytes (RFC 4648 §4: 3 bytes per 4 characters, padding not counted). */
export function base64Bytes(b64: string): number {
  let chars = 0
  let pad = 0
  for (let k = 0; k < b64.length; k++) {
    const c = b64.charCodeAt(k)
    if (c === 61) pad++
    else if (isBase64Char(c) || c === 45 || c === 95) chars++
  }
  return Math.floor(((chars + pad) * 3) / 4) - pad
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
 * Sanitises every string inside a JSON-like value: Unicode repair, binary placeholders, terminal controls
 * stripped (`stripTerminalControls`), per-field caps. Returns a new value; never mutates the input.
 * Image and file content blocks keep their shape with the data replaced by a placeholder naming type and
 * size, whatever the data looks like: a `data` / `base64` / `bytes` / `b64_json` / `blob` string beside a
 * type field (`media_type`, `mimeType`, `mime_type`, `mime`, `contentType`, `content_type`, or `type` holding a
 * MIME type) — Anthropic `{type:'image', source:{media_type, data}}`, MCP `{type:'image', data, mimeType}`,
 * Gemini `{inlineData:{mimeType, data}}`, Claude Code's Read result `{type:'image', file:{base64, type}}`.
 */
export function sanitizeValue(value: unknown, limits: CapLimits = DEFAULT_CAPS, depth = 0): unknown {
  // Binary first (it is told by its control characters), then the controls go, then what is left is repaired.
  if (typeof value === 'string') return capText(repairUnicode(stripTerminalControls(replaceBinary(value))), limits.fieldChars)
  if (value === null || typeof value !== 'object') {
    return typeof value === 'number' && !Number.isFinite(value) ? null : value
  }
  if (depth >= limits.depth) return '[mnemo: nesting too deep]'
  if (Array.isArray(value)) {
    const kept = value.slice(0, limits.arrayItems).map((v) => sanitizeValue(v, limits, depth + 1))
    if (value.length > limits.arrayItems) kept.push(`[mnemo: ${value.length - limits.arrayItems} more items cut]`)
    return kept
  }
  const record = value as Record<string, unknown>
  const mime = blobMime(record)
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(record)) {
    const blob = typeof v === 'string' && BLOB_KEYS.has(key) ? blobPlaceholder(v, mime, record['type'] === 'image') : undefined
    // defineProperty, not assignment: a key named __proto__ is data here.
    Object.defineProperty(out, repairUnicode(key), {
      value: blob ?? sanitizeValue(v, limits, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return out
}

/** Fields content blocks carry encoded bytes in. */
const BLOB_KEYS = new Set(['data', 'base64', 'bytes', 'b64_json', 'blob'])
const MIME_KEYS = ['media_type', 'mimeType', 'mime_type', 'mime', 'contentType', 'content_type', 'type']
const MIME = /^[a-z]+\/[\w.+-]+$/i

/** The MIME type an object names for its encoded bytes, if any. */
function blobMime(record: Record<string, unknown>): string | undefined {
  for (const k of MIME_KEYS) {
    const v = record[k]
    if (typeof v === 'string' && MIME.test(v)) return v
  }
  return undefined
}

/** The placeholder for an encoded field: when the object names a type, the bytes announce one, or the block is an image. */
function blobPlaceholder(v: string, mime: string | undefined, image: boolean): string | undefined {
  if (!isBase64Text(v)) return undefined
  const type = mime ?? base64Mime(v.replace(/\s+/g, '')) ?? (image ? 'image/*' : undefined)
  return type === undefined ? undefined : binaryPlaceholder(type, base64Bytes(v))
}

/** At least 16 characters, all base64 (standard or URL-safe alphabet, padding, line breaks). */
function isBase64Text(v: string): boolean {
  return v.length >= 16 && /^[A-Za-z0-9+/_\-\r\n]+={0,2}\s*$/.test(v) && !BINARY_PLACEHOLDER.test(v)
}

/**
 * Terminal control sequences and control characters (ECMA-48): CSI (`ESC [` … final byte, and the 8-bit
 * CSI U+009B), OSC (`ESC ]` … BEL or ST, e.g. `\x1b]0;title\x07` which retitles a terminal), DCS/SOS/PM/APC
 * strings (`ESC P|X|^|_` … ST; an unterminated string ends at its line), two-character escapes (`ESC c` resets the terminal), and the remaining C0
 * and C1 controls and DEL. Tab and line feed are text; NUL is left to `repairUnicode` (U+FFFD, so an id made of
 * one never becomes empty).
 */
const TERMINAL_SEQUENCE =
  /\x1b\[[0-?]*[ -/]*[@-~]?|\x9b[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?|\x9d[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?|\x1b[PX^_][^\x1b\x9c\n]*(?:\x1b\\|\x9c)?|[\x90\x98\x9e\x9f][^\x1b\x9c\n]*(?:\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?|[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g
const HAS_CONTROL = /[\x01-\x08\x0b-\x1f\x7f-\x9f]/

/**
 * `text` with terminal control sequences and control characters removed (see TERMINAL_SEQUENCE): what
 * a program printed in colour reads as its words, and stored text cannot retitle, clear or move the
 * cursor of the terminal it is shown in. `\r\n` and a lone `\r` become `\n`; tab and line feed stay.
 * Capture applies it to every stored string, and every output path applies it again (text stored
 * before this rule). Linear in the text length.
 */
export function stripTerminalControls(text: string): string {
  if (!HAS_CONTROL.test(text)) return text
  return text.replace(/\r\n?/g, '\n').replace(TERMINAL_SEQUENCE, '')
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
  // surrogates, joiners or variation selectors), so every code unit is its own grapheme
  // but CR LF, which is one (UAX #29, GB3): a cut between them keeps neither.
  const cut = Math.max(0, maxChars - 1)
  let simple = true
  for (let i = Math.max(0, cut - 2); i < Math.min(text.length, cut + 2); i++) if (text.charCodeAt(i) >= 0x300) simple = false
  if (simple) return `${text.slice(0, cut > 0 && text.charCodeAt(cut - 1) === 0x0d && text.charCodeAt(cut) === 0x0a ? cut - 1 : cut)}…`
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
  // Without CJK every code point counts a quarter: the code points are the units less the surrogate pairs. (A loop over
  // the code points here was hot enough for TurboFan in every prompt hook, and the blocks' `·` is not ASCII.)
  if (ASCII_ONLY.test(text)) return Math.ceil(text.length / 4)
  if (!CJK_CODE_POINT.test(text)) return Math.ceil((text.length - (text.match(SURROGATE_PAIR)?.length ?? 0)) / 4)
  let cjk = 0
  let other = 0
  for (const ch of text) {
    if (isCjkCodePoint(ch.codePointAt(0) ?? 0)) cjk++
    else other++
  }
  return cjk + Math.ceil(other / 4)
}

const ASCII_ONLY = /^[\x00-\x7F]*$/
/** A code point `isCjkCodePoint` accepts (the same ranges). */
const CJK_CODE_POINT = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u{20000}-\u{2fa1f}]/u
/** A high surrogate followed by a low one: one code point, as `for…of` reads a string. */
const SURROGATE_PAIR = /[\ud800-\udbff][\udc00-\udfff]/g

/** Collapses whitespace runs to single spaces and trims. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/**
 * Longest session title, in UTF-16 units: a session is titled `oneLine(text, SESSION_TITLE_CHARS)` of its first prompt
 * (by the store, see `Derivation`), or of the name its agent gave it (Cursor, OpenCode).
 */
export const SESSION_TITLE_CHARS = 160

/** A one-line form of `text` for titles and summaries: whitespace runs squashed, cut to `maxChars` with `…`. */
export function oneLine(text: string, maxChars: number): string {
  const s = squash(text)
  return s.length <= maxChars ? s : `${s.slice(0, maxChars - 1)}…`
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

/**
 * Neutralises anything in stored text that could close or reopen the
 * context block or pose as another speaker: `<mnemo-context` /
 * `</mnemo-context` and every tag of the `<mnemo-…>` family (`<mnemo-recall`; any case, any spacing) and `<system>`-style tags get
 * their `<` replaced with `‹` (U+2039), chat-template tokens (`<|im_start|>`)
 * become `‹|im_start|›`, and a role label opening a line (`System:`,
 * `Assistant:`) gets a ratio colon `∶` (U+2236). Stored text is data; it must
 * not be able to end the block and speak as instructions.
 */
export function escapeForBlock(text: string): string {
  // The tags need a `<`, a role label a `:` and its word: text without them is returned as it is, without running
  // the expressions (compiling their case-insensitive classes was most of the cost of a prompt hook's block).
  let out = text
  if (out.includes('<'))
    out = out
      .replace(/<(\s*\/?\s*mnemo-[a-z-]*)/gi, '‹$1')
      // Chat-template and role markers cannot open a turn of their own inside the block.
      .replace(/<(\|[a-z_]+\|)>/gi, '‹$1›')
      .replace(/<(\s*\/?\s*(?:system|assistant|user|human|instructions?)\b)/gi, '‹$1')
  if (out.includes(':') && hasRoleWord(out)) out = out.replace(/(^|\n)(\s*)(system|assistant|user|human|developer)(\s*):/gi, '$1$2$3$4∶')
  return out
}

/** Role words a line of stored text could open with (`escapeForBlock`), lowercase. */
const ROLE_WORDS = ['system', 'assistant', 'user', 'human', 'developer']

/** Whether `text` holds a role word in any case (the expression matches ASCII letters only, so lowercasing finds each). */
function hasRoleWord(text: string): boolean {
  const lower = text.toLowerCase()
  return ROLE_WORDS.some((w) => lower.includes(w))
}
