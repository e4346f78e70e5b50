import { stemmer } from 'stemmer'
import { invalidInput } from '../../core/errors.js'
import type { IndexedText } from '../../core/types.js'

// The full-text tokenization of the PostgreSQL store, the same as SQLite's FTS5 table (tokenizer `porter unicode61
// remove_diacritics 2`, src/storage/sqlite/migrations.ts), done here rather than by a PostgreSQL text search
// configuration: the default parser keeps `src/auth.ts`, URLs, hosts and hyphenated words as tokens of their own and
// classifies letters by the database's locale, and its English stemmer is Porter2, not FTS5's Porter. The tsvector is
// therefore built from tokens made here (`searchVector`) and a query's lexemes are quoted as they are (`parseMatch`),
// so the same query finds the same documents on both dialects.

/** PostgreSQL's longest lexeme in bytes (2 KiB − 1): longer tokens (a blob of base64) are neither indexed nor searched. */
const MAX_LEXEME_BYTES = 2047
/** PostgreSQL keeps tsvector positions in 1–16383: later tokens share the last position. */
const MAX_POSITION = 16383
/** PostgreSQL keeps at most 256 positions per lexeme: term frequencies count up to it. */
export const MAX_POSITIONS_PER_LEXEME = 256
/** The tsvector weight letter of each indexed column: body, parts, meta (see `IndexedText`). */
const COLUMN_WEIGHTS = ['A', 'B', 'C'] as const

const utf8 = new TextEncoder()
const fromBytes = new TextDecoder()

/**
 * The tokens FTS5's `porter unicode61 remove_diacritics 2` makes of `text`, in order: runs of letters, digits and
 * private-use characters (Unicode categories L*, N*, Co; combining diacritics U+0300–U+036F belong to the token and
 * are dropped), lowercased, Latin letters without their diacritics (`café` → `cafe`), then Porter-stemmed (Porter
 * 1980, as FTS5's porter: tokens of 3–64 UTF-8 bytes, non-ASCII bytes counting as consonants). Measured against FTS5
 * on the LoCoMo development split (3,435 turns): the same tokens for every turn but one; FTS5's Unicode tables are
 * older than JavaScript's, so a character assigned since (a newer emoji) may be split differently.
 */
export function ftsTokens(text: string): string[] {
  const out: string[] = []
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: combining diacritics are token characters here, as in FTS5
  for (const m of text.matchAll(/[\p{L}\p{N}\p{Co}\u0300-\u036f]+/gu)) {
    let token = ''
    for (const ch of m[0]) token += fold(ch)
    if (token.length === 0) continue
    out.push(porter(token))
  }
  return out
}

function fold(ch: string): string {
  if (/[\u0300-\u036f]/.test(ch)) return ''
  const lower = ch.toLowerCase()
  if (lower.length === 1 && lower.charCodeAt(0) < 0x80) return lower
  if (!/\p{Script=Latin}/u.test(lower)) return lower
  const bare = lower.normalize('NFD').replace(/\p{M}/gu, '')
  return bare.length > 0 ? bare : lower
}

/** FTS5's porter step on one folded token: bytes, so a non-ASCII character is as many consonants as it has bytes. */
function porter(token: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII test
  if (/^[\x00-\x7f]*$/.test(token)) return token.length >= 3 && token.length <= 64 ? stemmer(token) : token
  const bytes = utf8.encode(token)
  if (bytes.length < 3 || bytes.length > 64) return token
  // Each byte ≥ 0x80 as one caseless character U+4E80–U+4EFF: not a vowel to the stemmer, mapped back byte for byte.
  let spelled = ''
  for (const b of bytes) spelled += String.fromCharCode(b < 0x80 ? b : 0x4e00 + b)
  const stemmed = stemmer(spelled)
  const back = new Uint8Array(stemmed.length)
  for (let i = 0; i < stemmed.length; i++) {
    const c = stemmed.charCodeAt(i)
    back[i] = c < 0x80 ? c : c - 0x4e00
  }
  return fromBytes.decode(back)
}

const fitsLexeme = (token: string): boolean => token.length * 3 <= MAX_LEXEME_BYTES || utf8.encode(token).length <= MAX_LEXEME_BYTES

/** A lexeme as a quoted tsvector/tsquery literal: `'it''s'`, backslashes doubled. */
function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`
}

/**
 * The tsvector of a document, as literal text to bind as `$n::tsvector`: the `ftsTokens` of its body, parts and meta
 * columns with positions (1-based, one empty position between columns so that no phrase spans two) and the weight
 * letter of their column (`COLUMN_WEIGHTS`): `'jwt':1A,7A 'verifi':2A 'auth':9B 'user':12C`. Positions over
 * `MAX_POSITION` share it; a lexeme keeps its first `MAX_POSITIONS_PER_LEXEME` positions; tokens longer than
 * `MAX_LEXEME_BYTES` are left out. The empty string for a document without tokens (an empty tsvector).
 */
export function searchVector(index: IndexedText): string {
  const positions = new Map<string, string[]>()
  let pos = 0
  for (const [column, text] of [index.body, index.parts, index.meta].entries()) {
    if (column > 0 && pos > 0) pos++
    const weight = COLUMN_WEIGHTS[column]!
    for (const token of ftsTokens(text)) {
      pos++
      if (!fitsLexeme(token)) continue
      let list = positions.get(token)
      if (!list) {
        list = []
        positions.set(token, list)
      }
      if (list.length < MAX_POSITIONS_PER_LEXEME) list.push(`${Math.min(pos, MAX_POSITION)}${weight}`)
    }
  }
  const parts: string[] = []
  for (const [lexeme, list] of positions) parts.push(`${quoteLexeme(lexeme)}:${[...new Set(list)].join(',')}`)
  return parts.join(' ')
}

/** One term of a match expression: a phrase of lexemes (one lexeme: a word), the last one a prefix when `prefix`. */
export interface MatchTerm {
  lexemes: string[]
  prefix: boolean
  /** The term as tsquery text: `'jwt' <-> 'verifi'`, `'認':*`. */
  tsquery: string
}

/**
 * Parses a match expression of `SearchTextOptions.match` — quoted phrases joined by OR, each optionally followed by
 * `*` (`"jwt verify" OR "auth.ts" OR "認"*`), the subset of FTS5 syntax that `toMatchExpression` writes — into its
 * terms, each phrase tokenized as `ftsTokens` tokenizes documents. A phrase without tokens (only punctuation) matches
 * nothing in FTS5 and is left out; the result may be empty.
 * @throws {MnemoError} `INVALID_INPUT` (path `match`) — anything else: a bare word, AND/NOT/NEAR, parentheses, a
 *   column filter, an unterminated quote, an empty expression.
 */
export function parseMatch(match: string): MatchTerm[] {
  const terms: MatchTerm[] = []
  let i = 0
  const fail = (why: string): never => {
    throw invalidInput(
      'match',
      `unsupported full-text expression ${JSON.stringify(match.length > 200 ? `${match.slice(0, 200)}…` : match)}: ${why}`,
      'write quoted phrases joined by OR, as toMatchExpression does: "a b" OR "c"*',
    )
  }
  const skipSpace = (): void => {
    while (i < match.length && /\s/.test(match[i]!)) i++
  }
  skipSpace()
  if (i >= match.length) fail('it is empty')
  for (;;) {
    if (match[i] !== '"') fail(`expected a quoted phrase at offset ${i}`)
    let text = ''
    i++
    for (;;) {
      if (i >= match.length) fail('a quote is not closed')
      if (match[i] === '"') {
        if (match[i + 1] === '"') {
          text += '"'
          i += 2
          continue
        }
        i++
        break
      }
      text += match[i]
      i++
    }
    const prefix = match[i] === '*'
    if (prefix) i++
    const lexemes = ftsTokens(text)
    if (lexemes.length > 0 && lexemes.every(fitsLexeme)) {
      const quoted = lexemes.map(quoteLexeme)
      if (prefix) quoted[quoted.length - 1] += ':*'
      terms.push({ lexemes, prefix, tsquery: quoted.join(' <-> ') })
    }
    skipSpace()
    if (i >= match.length) return terms
    if (match.slice(i, i + 2) !== 'OR' || !/\s/.test(match[i + 2] ?? '')) fail(`expected OR at offset ${i}`)
    i += 2
    skipSpace()
  }
}

/** The tsquery text matching any of `terms` (`(t1) | (t2)`); undefined for no terms. */
export function anyTerm(terms: readonly MatchTerm[]): string | undefined {
  return terms.length === 0 ? undefined : terms.map((t) => `(${t.tsquery})`).join(' | ')
}
