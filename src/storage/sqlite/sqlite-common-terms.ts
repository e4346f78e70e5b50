import type { SqliteDb } from './sqlite-db.js'
import { readVarints } from './sqlite-fts.js'

// The phrases of a MATCH expression that FTS5's bm25 gives no weight, found cheaply, so that searchText can leave them
// out of the match: they add nothing to any score but make FTS5 find and score every document holding them.

/**
 * The prefilter: a phrase is counted over the store only when `SAMPLE_MATCHES` of its matches are among the
 * `SAMPLE_DOCS` oldest observations (a share of 0.4 there). Finding its first matches costs ~40 µs a phrase at 100k
 * observations; counting all of them, ~0.05 µs a match.
 */
const SAMPLE_MATCHES = 100
const SAMPLE_DOCS = 250
/** Phrases whose sample or count is kept (see `isCommonInOldest`, `phraseCount`). */
const MAX_CACHED_PHRASES = 2000

/** One phrase of the `"…" OR "…"*` form `toMatchExpression` writes: a quoted string ("" inside), maybe a prefix. */
const PHRASE = /"(?:[^"]|"")*"\*?/y

/**
 * The phrases of `match` (a MATCH expression of the form `toMatchExpression` writes, `"a" OR "b c" OR "認"*`),
 * in order; undefined when `match` is not of that form (then nothing is left out of it).
 */
export function matchPhrases(match: string): string[] | undefined {
  const phrases: string[] = []
  let at = 0
  for (;;) {
    PHRASE.lastIndex = at
    const found = PHRASE.exec(match)
    if (found === null) return undefined
    phrases.push(found[0])
    at = PHRASE.lastIndex
    if (at === match.length) return phrases
    if (!match.startsWith(' OR ', at)) return undefined
    at += 4
  }
}

/**
 * `match` split into the phrases FTS5's bm25 weighs and those to which it gives an idf of 1e-6: the phrases in at least
 * half of the index's rows.
 *
 * FTS5 (fts5_aux.c, fts5Bm25GetData) weighs phrase i by idf = log((N − nᵢ + 0.5) / (nᵢ + 0.5)), N the index's rows
 * and nᵢ the rows holding the phrase, and sets it to 1e-6 when that is ≤ 0, i.e. when 2nᵢ ≥ N. Such a phrase adds at
 * most 1e-6 × (k1 + 1) = 2.2e-6 to a document's score, yet FTS5 visits and scores every row holding it. The
 * other phrases' weights do not depend on it (each idf is its own phrase's; the length normalisation is the row's),
 * so the match without it ranks the documents holding another phrase as the full match does, each score lower by
 * its ≤ 2.2e-6 share. The documents holding only dropped phrases are not matched at all: when the shorter match finds
 * fewer documents than the caller asked for, they fill its tail, found by `(dropped) NOT (kept)` (every phrase once,
 * so bm25 scores them as the full match does).
 *
 * A phrase is counted over the store (cached per data version) only when it is in at least 40% of the 250 oldest
 * observations (that sample is cached per phrase: old observations do not change); one as common over the store but
 * rarer among the oldest is kept, which costs time, never a ranking.
 *
 * @param match - A MATCH expression; one not of the form `toMatchExpression` writes comes back unchanged.
 * @returns The phrases kept and those dropped, each joined with OR; undefined when none is dropped or every phrase
 *   would be (then `match` is searched as it is).
 */
export function zeroIdfSplit(s: SqliteDb, match: string): { kept: string; dropped: string } | undefined {
  const phrases = matchPhrases(match)
  if (phrases === undefined || phrases.length < 2) return undefined
  const rows = indexRows(s)
  if (rows === 0) return undefined
  const sampled = rows >= 4 * SAMPLE_DOCS
  const zero = phrases.map((p) => !((sampled && !isCommonInOldest(s, p)) || 2 * phraseCount(s, p) < rows))
  const kept = phrases.filter((_, i) => !zero[i])
  if (kept.length === 0 || kept.length === phrases.length) return undefined
  return { kept: kept.join(' OR '), dropped: phrases.filter((_, i) => zero[i]).join(' OR ') }
}

/**
 * `match` without the phrases no row of the index holds, or undefined when it holds none of them (nothing matches).
 *
 * bm25 gives such a phrase no share of any score: its term is idf × 0 where it is absent, and the other phrases'
 * idf and the length normalisation do not depend on it, so the scores are the same doubles and the matches the
 * same rows. FTS5 still checks it on every match (the OR's children, the instances bm25 reads), and recall writes
 * many: the joined forms of a prompt's words (`cartreleasechange`), 403 of the bench's 1,082 phrases at 100k
 * observations (docs/RECALL-LATENCY.md). A phrase is looked up once per data version (~20 µs at 100k).
 *
 * @param match - A MATCH expression; one not of the form `toMatchExpression` writes comes back unchanged.
 */
export function matchedOnly(s: SqliteDb, match: string): string | undefined {
  const phrases = matchPhrases(match)
  if (phrases === undefined) return match
  const version = s.dataVersion()
  const held = phrases.filter((p) => {
    const hit = s.matchedPhraseCache.get(p)
    if (hit && hit.version === version) return hit.matched
    const matched = s.stmt('SELECT EXISTS (SELECT 1 FROM search_fts WHERE search_fts MATCH ?)').pluck().get(p) === 1
    if (s.matchedPhraseCache.size >= MAX_CACHED_PHRASES) s.matchedPhraseCache.clear()
    s.matchedPhraseCache.set(p, { version, matched })
    return matched
  })
  if (held.length === phrases.length) return match
  return held.length > 0 ? held.join(' OR ') : undefined
}

/** N of FTS5's bm25: the row count its "averages" record holds (`search_fts_data` id 1, the first varint). */
function indexRows(s: SqliteDb): number {
  const averages = s.stmt('SELECT block FROM search_fts_data WHERE id = 1').pluck().get() as Buffer | undefined
  return averages === undefined || averages.length === 0 ? 0 : (readVarints(averages)[0] ?? 0)
}

/** Whether phrase `p` is in at least `SAMPLE_MATCHES` of the `SAMPLE_DOCS` oldest observations; cached per phrase. */
function isCommonInOldest(s: SqliteDb, p: string): boolean {
  const hit = s.commonPhraseCache.get(p)
  if (hit !== undefined) return hit
  const last = s
    .stmt(`SELECT rowid FROM observations ORDER BY rowid LIMIT 1 OFFSET ${SAMPLE_DOCS - 1}`)
    .pluck()
    .get() as number | undefined
  const nth = s
    .stmt(`SELECT rowid FROM search_fts WHERE search_fts MATCH ? AND rowid > 0 ORDER BY rowid LIMIT 1 OFFSET ${SAMPLE_MATCHES - 1}`)
    .pluck()
    .get(p) as number | undefined
  // Too few observations for the sample (a store of memories): count the phrase, and ask again later.
  if (last === undefined) return true
  const common = nth !== undefined && nth <= last
  if (s.commonPhraseCache.size >= MAX_CACHED_PHRASES) s.commonPhraseCache.clear()
  s.commonPhraseCache.set(p, common)
  return common
}

/** nᵢ of FTS5's bm25 (the rows matching phrase `p`, as its xQueryPhrase counts them), cached until a write (see `countDocs`). */
function phraseCount(s: SqliteDb, p: string): number {
  const version = s.dataVersion()
  const hit = s.phraseCountCache.get(p)
  if (hit && hit.version === version) return hit.count
  const count = s.stmt('SELECT COUNT(*) FROM search_fts WHERE search_fts MATCH ?').pluck().get(p) as number
  if (s.phraseCountCache.size >= MAX_CACHED_PHRASES) s.phraseCountCache.clear()
  s.phraseCountCache.set(p, { version, count })
  return count
}
