import { stemmer } from 'stemmer'
import { STOP_WORDS, toQueryTerms } from '../retrieval/fts-query.js'
import { hasCjk, letterNumberRuns, searchForm, splitIdentifier } from '../retrieval/search-text.js'

/**
 * Words of a prompt that say nothing about what it is about, on top of the query stop words: politeness, fillers,
 * the verbs of asking ("can you tell me what we said about…") and the words that point at the past ("last time"). A prompt made only of them ("thanks, continue") has no
 * term to recall for.
 */
const PROMPT_FILLER: ReadonlySet<string> = new Set(
  (
    'please thanks thank ok okay yes yeah yep no nope hey hi hello let lets tell know think want need like just really now again ' +
    'still thing things something anything everything sure might maybe much many more most very well other another here go going ' +
    'get got make made say said says see look try continue proceed done fine good great cool right ' +
    // Words that ask about the past rather than name what it was: "what did we find out last time", "as before".
    'find found out last time times before earlier previous previously ago happened happen remember recall'
  ).split(' '),
)

/** Most prompt terms weighed (the rest of a long prompt adds little and costs a count each). */
const MAX_GATE_TERMS = 12

/** One term of the prompt with its document frequency in the project and its IDF. */
export interface GateTerm {
  /** FTS5 expression counting the documents that hold it (a quoted phrase). */
  expr: string
  /** Its word stems (Porter, as the index stems), all of which a text must hold to cover it; for CJK, the text itself. */
  stems: string[]
  cjk: boolean
  /** Documents of the project holding it (capped by the caller: a count at the cap means "at least"). */
  df: number
  idf: number
}

/**
 * IDF of a term, `ln(1 + N / (df + 0.5))`: the smoothed BM25-style weight (Robertson–Spärck Jones without the
 * negative part). A term no document holds gets the largest weight, so a prompt about something this project never
 * saw ("Caroline" asked of another conversation) leaves most of its mass uncovered.
 *
 * @param df - Documents holding the term, ≥ 0.
 * @param n - Documents in the project, ≥ 0.
 */
function inverseDocumentFrequency(df: number, n: number): number {
  return Math.log(1 + n / (df + 0.5))
}

/**
 * Lowercased Porter stems of the words of `text` (camelCase and snake_case identifiers also by their parts).
 *
 * @param initials - When given, only the stems starting with one of these characters (the others are not computed:
 *   a Porter stem starts with its word's first letter, so a word of another initial cannot give one of them).
 */
function stemsOf(text: string, initials?: ReadonlySet<string>): Set<string> {
  const out = new Set<string>()
  for (const raw of letterNumberRuns(searchForm(text), true)) {
    const parts = /[a-z][A-Z]|_/.test(raw) ? [raw, ...splitIdentifier(raw)] : [raw]
    for (const p of parts) {
      const w = p.toLowerCase()
      if (initials !== undefined && !initials.has(w[0]!)) continue
      out.add(/^[a-z]+$/.test(w) ? stemmer(w) : w)
    }
  }
  return out
}

/**
 * The prompt's content terms for the gate, in prompt order, without stop words and prompt fillers, at most
 * `MAX_GATE_TERMS`: each with the FTS5 expression that counts its documents and the stems a text must hold.
 * `df` and `idf` are left 0 for the caller to fill (see `weighTerms`).
 */
export function gateTerms(prompt: string): GateTerm[] {
  const out: GateTerm[] = []
  const seen = new Set<string>()
  for (const t of toQueryTerms(prompt)) {
    const words = letterNumberRuns(searchForm(t.source), true).map((w) => w.toLowerCase())
    const cjk = hasCjk(t.source)
    if (!cjk && words.every((w) => STOP_WORDS.has(w) || PROMPT_FILLER.has(w) || w.length < 2)) continue
    const stems = cjk ? [t.source] : [...stemsOf(t.source)].filter((s) => !STOP_WORDS.has(s) && !PROMPT_FILLER.has(s))
    const key = stems.join(' ')
    if (stems.length === 0 || seen.has(key)) continue
    seen.add(key)
    out.push({ expr: t.expr, stems, cjk, df: 0, idf: 0 })
    if (out.length >= MAX_GATE_TERMS) break
  }
  return out
}

/** `terms` with `df` from `count` and their IDF over `n` documents. */
export function weighTerms(terms: readonly GateTerm[], n: number, count: (expr: string) => number): GateTerm[] {
  return terms.map((t) => {
    const df = count(t.expr)
    return { ...t, df, idf: inverseDocumentFrequency(df, n) }
  })
}

/** How much of a prompt's weight a text covers. */
export interface Coverage {
  /** Σ idf of the terms the text holds ÷ Σ idf of all terms, 0–1 (0 when the prompt has no terms). */
  share: number
  /** Σ idf of the terms it holds. */
  mass: number
  /** Indexes (into the terms) of the terms it holds. */
  matched: number[]
}

/**
 * The share of the prompt's IDF mass that `text` covers: comparable across prompts and projects (0–1, unlike fused
 * RRF scores, whose scale depends on the query and the channels that answered), so one threshold can decide.
 */
export function coverage(terms: readonly GateTerm[], text: string): Coverage {
  const total = terms.reduce((s, t) => s + t.idf, 0)
  if (total <= 0) return { share: 0, mass: 0, matched: [] }
  // Only the stems a term can ask for: most words of a text are not stemmed at all.
  const stems = stemsOf(text, new Set(terms.flatMap((t) => (t.cjk ? [] : t.stems.map((x) => x[0]!)))))
  const lower = terms.some((t) => t.cjk) ? searchForm(text).toLowerCase() : ''
  const matched: number[] = []
  let mass = 0
  terms.forEach((t, i) => {
    const holds = t.cjk ? t.stems.every((s) => lower.includes(s.toLowerCase())) : t.stems.every((s) => stems.has(s))
    if (holds) {
      matched.push(i)
      mass += t.idf
    }
  })
  return { share: mass / total, mass, matched }
}

/** The gate's settings. */
export interface GateConfig {
  /**
   * Least share of the prompt's IDF mass (0–1) the best candidate must cover for the prompt to get any injection:
   * the prompt-level decision, which sets the false-injection rate.
   */
  minShare: number
  /** Least share a candidate must cover to be injected once the prompt cleared `minShare`, 0–1. */
  minItemShare: number
  /**
   * Least IDF of the rarest term the best candidate holds: a candidate holding only words common in the project (in
   * more than about a quarter of its documents) is no evidence, however much of a short prompt they make up.
   */
  minTermIdf: number
}

/**
 * Default gate, chosen on the LoCoMo development split with `npm run bench:prompt` (the curve is in
 * docs/prompt-recall.md): the best candidate covers 40% of the prompt's IDF mass and holds a term found in at most a
 * quarter of the project's documents (`ln(1 + 1/0.25) ≈ 1.61`); then every candidate covering 10% is injected.
 */
export const DEFAULT_GATE: GateConfig = { minShare: 0.4, minItemShare: 0.1, minTermIdf: Math.log(1 + 4) }

/**
 * True when the best candidate's coverage opens the gate for the prompt (see `GateConfig.minShare`).
 *
 * @param documents - Documents in the project; below `MIN_DOCS_FOR_IDF` the rarest-term rule is skipped. Default: many.
 */
export function opensGate(
  terms: readonly GateTerm[],
  best: Coverage,
  gate: GateConfig = DEFAULT_GATE,
  documents = Number.POSITIVE_INFINITY,
): boolean {
  if (best.share < gate.minShare || best.matched.length === 0) return false
  // In a project this small every word is in a quarter of the documents: frequencies tell nothing, the share decides.
  if (documents < MIN_DOCS_FOR_IDF) return true
  return best.matched.some((i) => (terms[i]?.idf ?? 0) >= gate.minTermIdf)
}

/** Fewest documents a project needs before the rarest-term rule (`GateConfig.minTermIdf`) applies. */
const MIN_DOCS_FOR_IDF = 20
