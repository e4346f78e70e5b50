import { hasAnswerType, endsWithQuestion, type AnswerType } from './answer-type.js'
import { isLetterOrNumber } from './search-text.js'

/**
 * A linear feature-based re-ranker over the head of the fused list
 * (Metzler & Croft, "Linear feature-based models for information
 * retrieval", Information Retrieval 10(3), 2007): each of the first `depth`
 * fused candidates gets score Σ wᵢ·fᵢ over the features of
 * `RERANK_FEATURES`, and the head is reordered by it; the rest of the list
 * keeps its fused order. Every feature is generic (scores, ranks, channels,
 * speaker, answer type, question form, term coverage, session aggregates,
 * length), normalised per query, and cheap: about 0.4 ms for a head of 100
 * on the LoCoMo bench. See `DEFAULT_RERANK_WEIGHTS` for how the weights
 * were fitted.
 */

/** One fused candidate as the re-ranker sees it. */
export interface RerankCandidate {
  /** RRF score of the fused list (> 0). */
  fused: number
  /** Raw keyword (FTS5 BM25) score before spreading; 0 when the keyword search did not match it. */
  bm25: number
  /** Keyword score after neighbour spreading, before the text priors; 0 when absent. */
  spread: number
  /** Entered the keyword list only as a neighbour of a hit. */
  spreadOnly: boolean
  /** 1-based rank in the graph channel, when it found it. */
  graphRank?: number
  /** Found by the time channel (inside a time range the query names). */
  inTime: boolean
  text: string
  /** Speaker or role. */
  role: string
  /** Session id (or the document id for a document without one). */
  session: string
}

/** What the re-ranker knows about the query. */
export interface RerankQuery {
  /** The query's lowercased words. */
  words: ReadonlySet<string>
  /** The query's search terms (lowercased sources, stop words dropped). */
  terms: readonly string[]
  /** What the question asks for, if its form says. */
  asked?: AnswerType
}

/** Feature names, in the order of `rerankFeatures`' vectors and of the weights. */
export const RERANK_FEATURES = [
  'fused', // RRF score / max RRF score of the head, 0–1
  'logRank', // 1 − ln(rank) / ln(depth), 0–1 (1 = first)
  'bm25', // raw BM25 / max raw BM25 of the head, 0–1
  'spread', // spread keyword score / max of the head, 0–1
  'spreadOnly', // 0/1
  'graph', // 1 / (1 + ln(graph rank)), 0 when absent
  'time', // 0/1
  'speaker', // 0/1: the speaker is named in the query
  'answerType', // 0/1: the question asks for a type and the text holds one
  'question', // 0/1: ends with a question
  'coverage', // share of query terms in the text, weighted by rarity in the head, 0–1
  'sessionBest', // best fused score in its session / max fused, 0–1
  'sessionShare', // candidates of the head in its session / depth, 0–1
  'sessionOther', // best raw BM25 of another candidate of its session / max raw BM25, 0–1
  'sessionTop3', // among sessions ordered by their best candidate, 1 for the first three, else 0
  'length', // ln(1 + words) / ln(100), capped at 1 (99 words and more), 0–1
] as const

export type RerankFeature = (typeof RERANK_FEATURES)[number]

/** Crude suffix stripping so that "adopted" meets "adopt" and "paintings" "painting". */
function stem(word: string): string {
  const w = word.toLowerCase()
  if (w.length <= 4) return w
  return w.replace(/(?:ing|ed|es|s|ly|er)$/u, '')
}

/** Whether a word of `text` starts with `stem` (4+ characters) or is `stem` (shorter ones). No regex built per query: compiling one costs more than the scan. */
function hasWord(text: string, stem: string): boolean {
  for (let i = text.indexOf(stem); i >= 0; i = text.indexOf(stem, i + 1)) {
    if (i > 0 && isLetterOrNumber(text[i - 1]!)) continue
    const after = text[i + stem.length]
    if (stem.length < 4 && after !== undefined && isLetterOrNumber(after)) continue
    return true
  }
  return false
}

/** A run of non-space characters (JavaScript's `\s`: what `split(/\s+/)` splits on). */
const WORD = /\S+/g
/** Characters whose words `countWords` takes in one match (bounding the array a long text would make). */
const COUNT_HEAD_CHARS = 4096

/** Up to this `max`, `countWords` first tests for `max` words with one expression (cached per `max`). */
const MAX_TESTED = 1000
const AT_LEAST = new Map<number, RegExp>()

/**
 * An expression that holds for a text of at least `n` (≥ 1) runs of non-space characters: optional spaces, `n − 1`
 * runs each followed by spaces, then a non-space character. Linear in the text: `\S` and `\s` exclude each other,
 * so a run given back fails at once.
 */
function atLeastWords(n: number): RegExp {
  let re = AT_LEAST.get(n)
  if (!re) {
    re = new RegExp(`^\\s*(?:\\S+\\s+){${n - 1}}\\S`)
    AT_LEAST.set(n, re)
  }
  return re
}

/**
 * The number of runs of non-space characters in `text` (`text.split(/\s+/)` without its empty strings), counted up to
 * `max`: `Math.min(max, …)`. Counted by the regexp engine: a character loop here was hot enough in a prompt hook for
 * TurboFan to compile it, twice, and so was a loop over the matches.
 *
 * @param max - Most words counted, ≥ 0. Default: all of them.
 */
export function countWords(text: string, max = Number.POSITIVE_INFINITY): number {
  // A text of `max` words or more answers one test, with no array of its words (half the time of the match below
  // over the re-ranker's texts at 10k observations, a quarter of which reach 99 words).
  if (Number.isInteger(max) && max >= 1 && max <= MAX_TESTED && atLeastWords(max).test(text)) return max
  // The words that start in the first characters: all of them for a short text, and enough for `max` in most others
  // (no array of every word of a 12 MB tool output).
  const head = text.length <= COUNT_HEAD_CHARS ? text : text.slice(0, COUNT_HEAD_CHARS)
  const inHead = head.match(WORD)?.length ?? 0
  if (head === text || inHead >= max) return Math.min(max, inHead)
  WORD.lastIndex = 0
  let words = 0
  while (words < max && WORD.exec(text) !== null) words++
  return words
}

/**
 * The feature vectors of the candidates (in `RERANK_FEATURES` order), all
 * normalised per query so that one set of weights fits every query. Pure.
 *
 * @param head - The first fused candidates, best first.
 */
export function rerankFeatures(head: readonly RerankCandidate[], query: RerankQuery): number[][] {
  const n = head.length
  if (n === 0) return []
  const maxFused = Math.max(...head.map((c) => c.fused)) || 1
  const maxBm25 = Math.max(...head.map((c) => c.bm25)) || 1
  const maxSpread = Math.max(...head.map((c) => c.spread)) || 1
  const lnDepth = Math.log(Math.max(2, n))
  const roles = new Set(head.map((c) => c.role.toLowerCase()).filter((r) => r.length >= 3))

  // Term rarity inside the head: a term most candidates share says little about which one answers.
  const texts = head.map((c) => c.text.toLowerCase())
  const stems = [...new Set(query.terms.map(stem).filter((t) => t.length > 0 && !roles.has(t)))]
  const has = texts.map((text) => stems.map((t) => hasWord(text, t)))
  const termWeight = stems.map((_, j) => Math.log(1 + n / (1 + has.filter((row) => row[j]).length)))
  const totalWeight = termWeight.reduce((a, b) => a + b, 0) || 1

  // Per session: best fused score, candidate count, the two best raw BM25 scores, order of first appearance.
  const sessions = new Map<string, { best: number; count: number; bm25: [number, number]; order: number }>()
  for (const c of head) {
    let s = sessions.get(c.session)
    if (!s) {
      s = { best: 0, count: 0, bm25: [0, 0], order: sessions.size }
      sessions.set(c.session, s)
    }
    s.best = Math.max(s.best, c.fused)
    s.count++
    if (c.bm25 > s.bm25[0]) s.bm25 = [c.bm25, s.bm25[0]]
    else if (c.bm25 > s.bm25[1]) s.bm25[1] = c.bm25
  }
  const sessionOrder = [...sessions.entries()].sort((a, b) => b[1].best - a[1].best || a[1].order - b[1].order).map(([id]) => id)
  const topSessions = new Set(sessionOrder.slice(0, 3))

  return head.map((c, i) => {
    const s = sessions.get(c.session)!
    // The best raw BM25 among the other candidates of the session: the second best when this one is the best.
    const other = c.bm25 >= s.bm25[0] ? s.bm25[1] : s.bm25[0]
    const covered = has[i]!.reduce((sum, h, j) => sum + (h ? termWeight[j]! : 0), 0) / totalWeight
    const speaker = c.role.length >= 3 && query.words.has(c.role.toLowerCase())
    // The length feature is 1 from 99 words on: counting stops there.
    const words = countWords(c.text, LENGTH_SATURATES_AT)
    return [
      c.fused / maxFused,
      1 - Math.log(i + 1) / lnDepth,
      c.bm25 / maxBm25,
      c.spread / maxSpread,
      c.spreadOnly ? 1 : 0,
      c.graphRank !== undefined ? 1 / (1 + Math.log(c.graphRank)) : 0,
      c.inTime ? 1 : 0,
      speaker ? 1 : 0,
      query.asked !== undefined && hasAnswerType(c.text, query.asked) ? 1 : 0,
      endsWithQuestion(c.text) ? 1 : 0,
      stems.length > 0 ? covered : 0,
      s.best / maxFused,
      s.count / n,
      other / maxBm25,
      topSessions.has(c.session) ? 1 : 0,
      // Capped: the weights were fitted on chat turns; a long tool output must not ride on its length alone.
      Math.min(1, Math.log(1 + words) / Math.log(100)),
    ]
  })
}

/** Words from which the length feature, `min(1, ln(1 + words) / ln(100))`, is 1. */
const LENGTH_SATURATES_AT = 99

/** Weights of the features, by name; a missing one is 0. */
export type RerankWeights = Partial<Record<RerankFeature, number>>

/**
 * The fitted weights (`scripts/fit-rerank.mjs`, head of 100, 16 features).
 *
 * Fitted on the LoCoMo dev split's tuning half (conv-26/41/43, categories
 * 1–4) only, by pairwise logistic regression (a linear RankNet, Burges et
 * al., ICML 2005): loss mean log(1 + e^(−w·Δf)) + 0.001/2·|w|² over (evidence
 * turn, other turn) pairs of a question's head, 3000 full-batch gradient
 * steps of rate 3 from w = 0. Protocol, figures on both halves and the
 * coordinate-ascent fit that overfitted: docs/RECALL-TUNING.md ("Re-ranker").
 *
 * Only the ranking matters, not the scale. Reading them: the fused score
 * and its rank stay the main signal (fused, logRank), the raw and spread
 * keyword scores are added back (bm25, spread), and longer turns, turns by
 * the named speaker, turns covering the query's rarer terms and turns in a
 * session where other candidates also match are lifted; turns ending with
 * a question are lowered.
 */
export const DEFAULT_RERANK_WEIGHTS: RerankWeights = {
  fused: 0.937,
  logRank: 1.672,
  bm25: 0.987,
  spread: 1.549,
  spreadOnly: 0.462,
  graph: 0.726,
  time: 0.348,
  speaker: 1.668,
  answerType: 0.808,
  question: -0.603,
  coverage: 1.028,
  sessionBest: 0.568,
  sessionShare: -0.237,
  sessionOther: 0.775,
  sessionTop3: 0.423,
  length: 1.539,
}

/**
 * The order of the head by Σ wᵢ·fᵢ, best first, as indices into `features`
 * (ties keep the fused order). Pure.
 */
export function rerankOrder(features: readonly (readonly number[])[], weights: RerankWeights): number[] {
  const w = RERANK_FEATURES.map((name) => weights[name] ?? 0)
  const scores = features.map((f) => f.reduce((sum, x, j) => sum + x * w[j]!, 0))
  return scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b)
}
