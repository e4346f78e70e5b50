import { cjkBigrams, hasCjk, searchForm, trimToLettersAndNumbers } from './search-text.js'

/**
 * English stop words dropped from queries: function words that carry no
 * topic. A compact list in the spirit of Lucene's EnglishAnalyzer set plus
 * common question words, so "when did we add rate limiting" searches for
 * `add rate limiting`.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be been being but by can could did do does doing done for from had has have having he her hers ' +
    'him his how i if in into is it its itself just me my myself no nor not of on or our ours she should so some such ' +
    'than that the their theirs them then there these they this those to too us was we were what when where which while ' +
    'who whom whose why will with would you your yours yourself also about any all am'
  ).split(' '),
)

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu

// Created on first use: building an ICU word segmenter (with its CJK dictionary) costs milliseconds at start-up.
let wordSegmenter: Intl.Segmenter | undefined
const segmenter = (): Intl.Segmenter => (wordSegmenter ??= new Intl.Segmenter(['zh', 'ja', 'ko'], { granularity: 'word' }))

/** A term of the query: a quoted FTS5 string (which the tokenizer turns into a phrase). */
interface QueryTerm {
  /** The FTS5 expression for this term, ready to join with OR. */
  expr: string
  /** The text it came from, for explanations. */
  source: string
}

function quote(text: string): string {
  // FTS5 reads a NUL as the end of the expression ("unterminated string"); stored text has U+FFFD there (repairUnicode).
  return `"${text.replaceAll('"', '""').replaceAll('\u0000', '\uFFFD')}"`
}

/**
 * Splits a free-text query into FTS5 terms.
 *
 * - The query is read in `searchForm` (NFKC), as the index is: `ｃｈｅｃｋｏｕｔ`
 *   searches for `checkout`.
 * - Words are lowercased by the tokenizer; English stop words are dropped
 *   unless nothing else is left; a trailing possessive `'s` is removed.
 * - Paths and dotted or namespaced identifiers (`src/middleware/auth.ts`,
 *   `jose.jwtVerify`) stay one term: FTS5 treats the quoted string as a phrase
 *   of its tokens, so the parts must appear in order.
 * - CJK text: each run of three or more characters is a phrase of its bigrams
 *   (matching how `cjkBigrams` indexed it), and the run is also split into
 *   words with `Intl.Segmenter`, each word a phrase of its bigrams, a
 *   one-character word a prefix query on the bigrams.
 */
export function toQueryTerms(query: string): QueryTerm[] {
  return termsOf(searchForm(query))
}

/** A query read once for search: what every recall channel needs of its text. */
export interface SearchQuery {
  /** The query in `searchForm` (NFKC), as the index holds text. */
  form: string
  /** Its terms (`toQueryTerms`). */
  terms: QueryTerm[]
  /** Its MATCH expression (`toMatchExpression`); undefined when it has no searchable term. */
  match: string | undefined
}

/** `query` normalised once (`searchForm`) into its terms and MATCH expression: the same as `toQueryTerms` and `toMatchExpression` give. */
export function toSearchQuery(query: string): SearchQuery {
  const form = searchForm(query)
  const terms = termsOf(form)
  return { form, terms, match: matchOf(form, terms) }
}

/** `toQueryTerms` of a query already in search form. */
function termsOf(form: string): QueryTerm[] {
  const terms: QueryTerm[] = []
  const stopped: QueryTerm[] = []
  const seen = new Set<string>()
  const add = (expr: string, source: string, isStop: boolean): void => {
    if (seen.has(expr)) return
    seen.add(expr)
    ;(isStop ? stopped : terms).push({ expr, source })
  }
  for (const chunk of form.split(/\s+/)) {
    if (chunk.length === 0) continue
    if (hasCjk(chunk)) {
      // The whole run as one phrase first (exact matches rank higher), then its words.
      for (const run of chunk.match(CJK_RUN) ?? []) if ([...run].length > 2) add(quote(cjkBigrams(run).trim()), run, false)
      for (const seg of segmenter().segment(chunk)) {
        if (!seg.isWordLike) continue
        addChunk(seg.segment, add)
      }
      continue
    }
    addChunk(chunk, add)
  }
  return terms.length > 0 ? terms : stopped
}

/** A word without the punctuation at its edges (`"auth.ts?"` → `auth.ts`); what is inside stays. */
const trimEdges = trimToLettersAndNumbers

function addChunk(raw: string, add: (expr: string, source: string, isStop: boolean) => void): void {
  // Trim punctuation at the edges ("auth.ts?" → "auth.ts"), keep it inside.
  const chunk = trimEdges(raw).replace(/['’]s$/i, '')
  if (chunk.length === 0) return
  if (hasCjk(chunk)) {
    // Mixed runs: split CJK from the rest.
    for (const piece of chunk.split(new RegExp(`(${CJK_RUN.source})`, 'u'))) {
      if (piece.length === 0) continue
      // hasCjk, not the first code point: a run by Unicode script may start with a character that is not CJK to the
      // indexer (halfwidth ｧ), and a piece recursed on unchanged never ends ("ｧァ").
      if (hasCjk(piece)) {
        const chars = [...piece]
        if (chars.length === 1) add(`${quote(piece)}*`, piece, false)
        else add(quote(cjkBigrams(piece).trim()), piece, false)
      } else addChunk(piece, add)
    }
    return
  }
  const lower = chunk.toLowerCase()
  const isStop = STOP_WORDS.has(lower)
  add(quote(chunk), chunk, isStop)
}

/**
 * Builds an FTS5 MATCH expression that finds documents containing any term
 * (OR), for BM25 to rank. Returns `undefined` when the query has no
 * searchable term (only punctuation).
 */
export function toMatchExpression(query: string): string | undefined {
  const form = searchForm(query)
  return matchOf(form, termsOf(form))
}

/** The MATCH expression of a query in search form and its terms. */
function matchOf(form: string, terms: readonly QueryTerm[]): string | undefined {
  if (terms.length === 0) return undefined
  const joined = joinedIdentifiers(form).filter((j) => !terms.some((t) => t.expr === j))
  return [...terms.map((t) => t.expr), ...joined].join(' OR ')
}

/** Most words of a query joined into one identifier term (`apply bulk discount` → `applybulkdiscount`). */
const MAX_JOINED_WORDS = 3

/**
 * Runs of 2–3 adjacent query words joined, as quoted terms: `apply discount`
 * also searches for `applydiscount`, the one token FTS5 makes of
 * `applyDiscount` (its parts are only in the half-weighted parts column).
 * Without it a hit holding `applyDiscount` ranked below hits holding only
 * `apply` (`apply_patch` tool calls, whose words are body tokens). Only
 * plain letter/digit words, no stop words and no CJK take part; a joined
 * term that matches nothing changes no score.
 */
function joinedIdentifiers(form: string): string[] {
  const words = form.split(/\s+/).map(trimEdges)
  const out: string[] = []
  for (let i = 0; i < words.length; i++) {
    for (let n = 2; n <= MAX_JOINED_WORDS && i + n <= words.length; n++) {
      const run = words.slice(i, i + n)
      if (!run.every((w) => /^[A-Za-z][A-Za-z0-9]*$/.test(w) && !STOP_WORDS.has(w.toLowerCase()))) break
      out.push(quote(run.join('')))
    }
  }
  return [...new Set(out)]
}
