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
  return text.toLowerCase().replace(/\s+/g, ' ').replace(/[\s.!;,]+$/, '').trim()
}

/** Key of a memory's content: kind + normalised text (case, spacing and final punctuation ignored). */
export function contentKey(kind: string, text: string): string {
  return fnv1a64(`${kind}\u0000${normalize(text)}`)
}

/** Verbs that separate a fact's subject from its value. */
const VERB = /\b(is|are|was|were|uses?|runs?(?: on)?|migrated to|moved to|switched to|changed to|became|now|lives in|lives at|defaults to|points to)\b|[=:]/i

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
export const NEAR_DUPLICATE_JACCARD = 0.85

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
