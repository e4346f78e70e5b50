import { isCjkCodePoint } from '../core/text.js'
import type { IndexedText } from '../core/types.js'
import { zonedDate } from './time-expressions.js'

/**
 * The form text is searched in: Unicode NFKC, so compatibility variants
 * match their plain letters (full-width `ｃｈｅｃｋｏｕｔ` → `checkout`,
 * half-width katakana → full-width, ligatures `ﬁ` → `fi`, `①` → `1`).
 * Applied to indexed text at derivation (`toIndexedText`, `lsaTerms`) and to
 * every query (`toQueryTerms`, recall), so either side may be written either
 * way. The stored text itself is kept as written. Idempotent.
 */
export function searchForm(text: string): string {
  // ASCII is already NFKC: skip the ICU call for the common case.
  return isAscii(text) ? text : text.normalize('NFKC')
}

/** True when every code unit of `text` is ASCII (U+0000–U+007F); true for ''. */
export function isAscii(text: string): boolean {
  return ASCII.test(text)
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is all of ASCII, NUL included
const ASCII = /^[\x00-\x7F]*$/

/*
 * Letters and numbers (`\p{L}`, `\p{N}`) of ASCII text need no Unicode tables: V8 builds a property class from ICU's
 * each time it compiles a regexp that holds one, once to bytecode and again to native code, ~0.5 ms CPU each, which
 * no code cache keeps. The scans below take ASCII classes for ASCII text, and for short text with other characters
 * look those up one by one (the punctuation and emoji blocks by range, the rest through one shared property regexp),
 * so that a prompt hook compiles a property class only for text holding letters or digits beyond ASCII; the same
 * answers as the property regexps (search-text.test.ts checks every code point; docs/prompt-recall.md).
 */
const LETTER_NUMBER_RUNS = /[\p{L}\p{N}]+/gu
const LETTER_NUMBER_UNDERSCORE_RUNS = /[\p{L}\p{N}_]+/gu
const ASCII_LETTER_NUMBER_RUNS = /[A-Za-z0-9]+/g
const ASCII_LETTER_NUMBER_UNDERSCORE_RUNS = /[A-Za-z0-9_]+/g
const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u
const EDGES = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu
const ASCII_EDGES = /^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g
/** Longest text scanned code point by code point; a longer one is matched by the property regexp. */
const SCAN_CHARS = 4096

/** Whether code point `cp` (or a lone surrogate) is a letter or a number (`\p{L}`, `\p{N}`). */
function letterOrNumberAt(cp: number): boolean {
  if (cp < 0x80) return (cp >= 0x61 && cp <= 0x7a) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x30 && cp <= 0x39)
  // Blocks with neither (checked on every code point): General Punctuation (– — ’ “ ” … ZWJ), Miscellaneous
  // Symbols (♀ ☀), variation selectors, and the emoji blocks.
  if ((cp >= 0x2000 && cp <= 0x206f) || (cp >= 0x2600 && cp <= 0x26ff) || (cp >= 0xfe00 && cp <= 0xfe0f)) return false
  if (cp >= 0x1f300 && cp <= 0x1faff) return false
  return LETTER_OR_NUMBER.test(String.fromCodePoint(cp))
}

/**
 * The runs of letters and numbers of `text` (`\p{L}`, `\p{N}`, and `_` with `underscore`), in order: the same as
 * `text.match(/[\p{L}\p{N}]+/gu) ?? []` (or `/[\p{L}\p{N}_]+/gu`).
 */
export function letterNumberRuns(text: string, underscore = false): string[] {
  if (isAscii(text)) return text.match(underscore ? ASCII_LETTER_NUMBER_UNDERSCORE_RUNS : ASCII_LETTER_NUMBER_RUNS) ?? []
  if (text.length > SCAN_CHARS) return text.match(underscore ? LETTER_NUMBER_UNDERSCORE_RUNS : LETTER_NUMBER_RUNS) ?? []
  const out: string[] = []
  let start = -1
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i)!
    const width = cp > 0xffff ? 2 : 1
    if ((underscore && cp === 0x5f) || letterOrNumberAt(cp)) {
      if (start < 0) start = i
    } else if (start >= 0) {
      out.push(text.slice(start, i))
      start = -1
    }
    i += width
  }
  if (start >= 0) out.push(text.slice(start))
  return out
}

/** Whether the character (or lone code unit) `ch` is a letter or a number: `/[\p{L}\p{N}]/u.test(ch)`. */
export function isLetterOrNumber(ch: string): boolean {
  return ch.length > 0 && ch.length <= 2 && ch.length === (ch.codePointAt(0)! > 0xffff ? 2 : 1)
    ? letterOrNumberAt(ch.codePointAt(0)!)
    : LETTER_OR_NUMBER.test(ch)
}

/** `word` without what is neither a letter nor a number at its two ends (`"auth.ts?"` → `auth.ts`); what is inside stays. */
export function trimToLettersAndNumbers(word: string): string {
  return word.replace(isAscii(word) ? ASCII_EDGES : EDGES, '')
}

/**
 * Rewrites runs of CJK characters as space-separated overlapping bigrams
 * (`数据库迁移` → `数据 据库 库迁 迁移`), the standard way to index text
 * written without spaces (Lucene's CJKBigramFilter does the same). A run of
 * one character stays a unigram. Any substring of two or more characters is
 * then a phrase of adjacent bigrams, which is what the query side searches.
 */
export function cjkBigrams(text: string): string {
  let out = ''
  let run: string[] = []
  const flush = (): void => {
    if (run.length === 0) return
    if (run.length === 1) out += ` ${run[0]} `
    else {
      const grams: string[] = []
      for (let i = 0; i + 1 < run.length; i++) grams.push(run[i]! + run[i + 1]!)
      out += ` ${grams.join(' ')} `
    }
    run = []
  }
  for (const ch of text) {
    if (isCjkCodePoint(ch.codePointAt(0) ?? 0)) run.push(ch)
    else {
      flush()
      out += ch
    }
  }
  flush()
  return out
}

/** True when `text` holds at least one CJK character. */
export function hasCjk(text: string): boolean {
  return CJK_CHAR.test(text)
}

/** A character `isCjkCodePoint` accepts (the same ranges, as one regex: a scan in the regex engine, not in a loop). */
const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u{20000}-\u{2fa1f}]/u

const IDENTIFIER = /[A-Za-z][A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z][A-Za-z0-9]*/g

/**
 * The answers of `splitIdentifier` kept, by identifier: a derivation splits the same identifiers over and over (a
 * project's names recur in every tool output), and splitting was 14% of deriving the 10k bench store's events. A
 * pure function's answers, so what is kept changes no result; emptied when full.
 */
const splitCache = new Map<string, readonly string[]>()
/** Most identifiers kept (a few MB at most). */
const SPLIT_CACHE_ENTRIES = 20_000
/** Longest identifier kept, in UTF-16 units (a longer one is split each time). */
const SPLIT_CACHE_CHARS = 64

/**
 * Splits camelCase, PascalCase and acronym-led identifiers into their words:
 * `validateToken` → `validate token`, `HTTPServerError` → `http server error`,
 * `getV2Api` → `get v2 api`. Words of snake_case, kebab-case and paths are
 * already separated by the tokenizer and need no help.
 *
 * @returns The words, lowercase, in order; a shared array (answers are kept, see `SPLIT_CACHE_ENTRIES`): do not change it.
 */
export function splitIdentifier(identifier: string): readonly string[] {
  const kept = splitCache.get(identifier)
  if (kept !== undefined) return kept
  const words = identifier
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(' ')
    .filter((w) => w.length > 0)
  if (identifier.length <= SPLIT_CACHE_CHARS) {
    if (splitCache.size >= SPLIT_CACHE_ENTRIES) splitCache.clear()
    splitCache.set(identifier, Object.freeze(words))
  }
  return words
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

/**
 * The calendar date of `ms` in words, as people write it in questions:
 * `8 May 2023 Monday`. Computed in `timeZone` (IANA name; default UTC).
 */
export function dateWords(ms: number, timeZone = 'UTC'): string {
  const { y, m, d, weekday } = zonedDate(ms, timeZone)
  return `${d} ${MONTHS[m - 1] ?? ''} ${y} ${WEEKDAYS[weekday] ?? ''}`
}

/**
 * Builds the indexed form of `text` (and optional file paths and tags), in
 * `searchForm` (NFKC).
 *
 * @param text - The observation or memory text.
 * @param extra - More strings to index as parts (file paths, tool name).
 * @param meta - Who/what/when words for the meta column (see `IndexedText.meta`).
 */
export function toIndexedText(rawText: string, rawExtra: readonly string[] = [], meta = ''): IndexedText {
  const text = searchForm(rawText)
  const extra = rawExtra.map(searchForm)
  const parts = new Set<string>()
  // An identifier seen before adds no word: its words are in `parts` already, in the order they first came.
  const seen = new Set<string>()
  for (const source of [text, ...extra]) {
    for (const m of source.matchAll(IDENTIFIER)) {
      if (seen.has(m[0])) continue
      seen.add(m[0])
      for (const w of splitIdentifier(m[0])) parts.add(w)
    }
  }
  const body = hasCjk(text) ? cjkBigrams(text) : text
  const extraText = extra.length > 0 ? ` ${extra.map((e) => (hasCjk(e) ? cjkBigrams(e) : e)).join(' ')}` : ''
  return { body, parts: `${[...parts].join(' ')}${extraText}`, meta }
}
