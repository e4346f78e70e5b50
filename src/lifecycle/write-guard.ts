import { fnv1a64 } from '../core/hash.js'
import { STOP_WORDS } from '../retrieval/fts-query.js'

/**
 * The write guard's keys, pure. Two memories with the same content key in a
 * project are the same memory; two of the same kind with the same subject
 * key but different content are two versions of one fact, the newer
 * superseding the older ("orders DB is PostgreSQL 14" → "orders DB migrated
 * to MySQL 8").
 */

function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s.!;,]+$/, '')
    .trim()
}

/** Key of a memory's content: kind + normalised text (case, spacing and final punctuation ignored). */
export function contentKey(kind: string, text: string): string {
  return fnv1a64(`${kind}\u0000${normalize(text)}`)
}

/** Verbs that separate a fact's subject from its value. */
const VERB =
  /\b(is|are|was|were|uses?|runs?(?: on)?|migrated to|moved to|switched to|changed to|became|now|lives in|lives at|defaults to|points to)\b|[=:]/i

/**
 * The subject of a fact-like sentence: the content words before its first
 * linking verb, lowercased (`"The orders DB is PostgreSQL 14"` → `"orders db"`).
 * `undefined` when there is no such verb, no content word before it, or the
 * subject is longer than five words (then it is not a short fact).
 */
export function subjectKey(text: string): string | undefined {
  const first = normalize(text).split(/(?<=[.!?])\s/)[0] ?? ''
  const m = VERB.exec(first)
  if (!m || m.index === 0) return undefined
  const words = (first.slice(0, m.index).match(/[\p{L}\p{N}_./-]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w))
  if (words.length === 0 || words.length > 5) return undefined
  return words.join(' ')
}

/** Jaccard similarity of two texts' word sets (0–1). */
export function jaccard(a: string, b: string): number {
  const wa = new Set(normalize(a).match(/[\p{L}\p{N}]+/gu) ?? [])
  const wb = new Set(normalize(b).match(/[\p{L}\p{N}]+/gu) ?? [])
  if (wa.size === 0 && wb.size === 0) return 1
  let inter = 0
  for (const w of wa) if (wb.has(w)) inter++
  return inter / (wa.size + wb.size - inter)
}

/** Word-set similarity at or above which a new memory is merged into an existing one of the same kind. */
const NEAR_DUPLICATE_JACCARD = 0.85

/**
 * True when `b` says the same as `a` in nearly the same words: Jaccard ≥
 * NEAR_DUPLICATE_JACCARD and the same numbers. Texts that differ in a number
 * ("PostgreSQL 14" / "PostgreSQL 15", "step 3" / "step 4") are never merged:
 * a changed number is a changed fact.
 */
export function isNearDuplicate(a: string, b: string): boolean {
  const numbers = (t: string): string => [...new Set(t.match(/\d+(?:[.,]\d+)*/g) ?? [])].sort().join(' ')
  return numbers(a) === numbers(b) && jaccard(a, b) >= NEAR_DUPLICATE_JACCARD
}

/** Why a new memory contradicts an older one, as `findContradicted` reports it. */
interface Contradiction {
  /** Id of the older memory the new one replaces. */
  id: string
  /** `replaced-value` (the new text names the old one's value as gone: "from X to", "no longer X", "never X", "instead of X") or `now-update` (the same sentence with one value swapped, marked "now"/"changed"/"anymore"). */
  rule: 'replaced-value' | 'now-update'
  /** The words of the old value that the new text retires. */
  value: string
}

/** Phrases that name a value as no longer current; group 1 is the value's first word. */
const RETIRED_VALUE: readonly RegExp[] = [
  /\b(?:migrated|moved|switched|changed|converted|upgraded|downgraded|ported|went|changing|moving|switching|migrating)\b(?:\s+[\p{L}\p{N}_'-]+){0,4}?\s+from\s+([\p{L}\p{N}_.+#-]+)/giu,
  /\bno\s+longer\s+(?:uses?\s+|using\s+|runs?\s+(?:on\s+)?|on\s+|in\s+|with\s+)?([\p{L}\p{N}_.+#-]+)/giu,
  /\b([\p{L}\p{N}_.+#-]+)\s+(?:is|are)\s+(?:no\s+longer|not)\s+(?:used|in\s+use|supported|needed|allowed)\b/giu,
  /\b(?:never|instead\s+of|rather\s+than|replac(?:es|ed|ing)|dropp(?:ed|ing)|stopped\s+using|no\s+more)\s+([\p{L}\p{N}_.+#-]+)/giu,
  /\bnot\s+([\p{L}\p{N}_.+#-]+)\s+any\s*more\b/giu,
  /\b([\p{L}\p{N}_.+#-]+)\s+(?:is|are)\s+deprecated\b/giu,
]

/** Words that mark a statement as an update of an earlier one ("now", "changed: …"). */
const UPDATE_CUE = /\b(?:now|changed|updated|anymore|any\s+more|from\s+now\s+on|these\s+days|as\s+of\s+today|going\s+forward|henceforth)\b/i

/** Words that say when or that something changed, never what it is about: skipped when finding a sentence's head word. */
const FILLER = new Set(
  'now changed change changes updated update updates anymore today yesterday week weeks month months year years currently recently lately since going forward henceforth actually correction note fyi please heads up'.split(
    ' ',
  ),
)

/** Lower-case word tokens of `text` (letters, digits, `_ . + # -` inside a word), edge punctuation trimmed. */
function tokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}_.+#-]+/gu) ?? []).map((w) => w.replace(/^[.+#-]+|[.-]+$/g, '')).filter((w) => w.length > 0)
}

/** Content words: tokens that are neither stop words nor fillers. */
function contentWords(text: string): string[] {
  return tokens(text).filter((w) => !STOP_WORDS.has(w) && !FILLER.has(w))
}

/** The values `text` names as retired (first words of "from X", "no longer X", …), lower-case. */
export function retiredValues(text: string): string[] {
  const out = new Set<string>()
  for (const re of RETIRED_VALUE) {
    for (const m of text.matchAll(re)) {
      const [v] = tokens(m[1] ?? '')
      if (v !== undefined && !STOP_WORDS.has(v) && !FILLER.has(v)) out.add(v)
    }
  }
  return [...out]
}

/**
 * Whether `newer` contradicts `older`, deterministically (no model): the two
 * must open on the same head word — the first content word of each, after
 * fillers such as "now" or "this week" — so statements about different
 * subjects ("the billing service …" / "the orders service …") never
 * supersede each other; then one of two rules must hold:
 *
 * - `replaced-value`: `newer` names a value as gone ("migrated from
 *   PostgreSQL to MySQL", "PostgreSQL is no longer used", "never tabs",
 *   "instead of npm") and that value is a word of `older`;
 * - `now-update`: `newer` carries an update cue ("now", "changed",
 *   "anymore") and, cue aside, says what `older` says with one to three
 *   words swapped ("we deploy on Fridays" → "we deploy on Thursdays now"),
 *   the two sharing at least two words and at least half of `older`'s.
 *
 * This is the UPDATE decision mem0 asks a model for (its update prompt
 * chooses ADD, UPDATE, DELETE or NONE against the most similar stored
 * memories) and Graphiti's edge invalidation, reduced to cue phrases so it
 * runs on every write without one.
 *
 * @returns The rule and the retired value, or undefined.
 */
export function contradiction(newer: string, older: string): Omit<Contradiction, 'id'> | undefined {
  const newWords = contentWords(newer)
  const oldWords = contentWords(older)
  if (newWords.length === 0 || oldWords.length === 0 || newWords[0] !== oldWords[0]) return undefined
  const oldSet = new Set(tokens(older))
  const retired = retiredValues(newer).find((v) => oldSet.has(v))
  if (retired !== undefined) return { rule: 'replaced-value', value: retired }
  if (!UPDATE_CUE.test(newer)) return undefined
  const a = new Set(tokens(older).filter((w) => !FILLER.has(w)))
  const b = new Set(tokens(newer.replace(new RegExp(UPDATE_CUE.source, 'gi'), ' ')).filter((w) => !FILLER.has(w)))
  const shared = [...a].filter((w) => b.has(w))
  const gone = [...a].filter((w) => !b.has(w))
  const added = [...b].filter((w) => !a.has(w))
  if (shared.length < 2 || shared.length * 2 < a.size) return undefined
  if (gone.length < 1 || gone.length > 3 || added.length < 1 || added.length > 3) return undefined
  // A swapped word must carry content: "on" → "at" alone is wording, not a new value.
  if (!gone.some((w) => !STOP_WORDS.has(w)) || !added.some((w) => !STOP_WORDS.has(w))) return undefined
  return { rule: 'now-update', value: gone.join(' ') }
}

/**
 * The first of `candidates` (best match first) that `text` contradicts (see
 * `contradiction`), or undefined.
 */
export function findContradicted(text: string, candidates: readonly { id: string; text: string }[]): Contradiction | undefined {
  for (const c of candidates) {
    const found = contradiction(text, c.text)
    if (found) return { id: c.id, ...found }
  }
  return undefined
}
