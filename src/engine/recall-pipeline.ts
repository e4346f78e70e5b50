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
 * The defaults of recall, chosen on the LoCoMo development split (turn-level
 * R@10, categories 1–4, `mnemo bench locomo` with MNEMO_RECALL_WEIGHTS
 * varied): each on the tuning half (conv-26/41/43), checked on the held-out
 * half (conv-30/42/44). Figures, and the alternatives measured and not
 * adopted: docs/RECALL-TUNING.md.
 * - weights: bm25 1, graph 0.1, time 0.5, embedding 1 (a configured neural
 *   embedder); the builtin LSA `vector` channel 0 (fusing it lowered R@10 on
 *   these small per-conversation corpora; `MNEMO_RECALL_WEIGHTS=vector=0.2`
 *   turns it on).
 * - namedRoleBoost 3, applied after spreading; answerTypeBoost 1.3 and
 *   questionFactor 0.8 on the best `priorTop` 50 keyword documents.
 * - maxPerSession 0: no cap.
 * - rerank: the first 100 fused candidates reordered by `DEFAULT_RERANK_WEIGHTS`.
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
export async function runRecall(store: Store, q: RecallQuery, config: RecallConfig = DEFAULT_RECALL_CONFIG): Promise<RankedDoc[]> {
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
  const hydrate = async (keys: Iterable<number>): Promise<void> => {
    const missing = [...keys].filter((k) => !docs.has(k))
    for (const d of await store.docs(missing)) docs.set(d.docKey, d)
  }

  if (enabled.has('bm25')) {
    const matches = await store.searchText({
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
    await hydrate(spreadKeys)
    const spreaders = spreadKeys.map((k) => docs.get(k)).filter((d): d is SearchDoc => d !== undefined)
    const spread = spreadToNeighbors(
      scores,
      await store.neighbors(spreaders, 2),
      config.spread,
      (key) => docs.get(key)?.text.includes('?') ?? false,
    )
    rawScores = scores
    spreadScores = new Map(spread)
    for (const key of spread.keys()) if (!scores.has(key)) spreadOnly.add(key)
    // The speaker prior goes on the spread scores: a turn by the named speaker that entered as the reply to the other's question is boosted too.
    const roles = new Map(matches.map((m) => [m.docKey, m.role]))
    await hydrate([...spreadOnly])
    for (const key of spreadOnly) roles.set(key, docs.get(key)?.role ?? '')
    boostNamedRoles(spread, roles, queryWords, config.namedRoleBoost)
    const asked = config.answerTypeBoost !== 1 ? answerTypeOf(query) : undefined
    if (asked !== undefined || config.questionFactor !== 1) {
      const best = [...spread.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, config.priorTop)
      await hydrate(best.map(([k]) => k))
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
    const total = await store.countDocs(scope)
    // An entity in more than a few percent of documents (a speaker's name, the project's main file) says little about which one is meant.
    // Paths inside a project searched are named relative to its root, as capture names them (fileEntityName).
    const roots = (
      projects.length > 0 ? await Promise.all(projects.map((id) => store.getProject(id))) : await store.listProjects()
    ).flatMap((p) => (p ? [p.root] : []))
    const maxDocs = Math.max(3, total * config.graphMaxDocShare)
    const seeds = (await store.findEntities(scope, queryEntities(query, await store.entityNames(projects), roots), maxDocs)).filter(
      (e) => e.docs <= maxDocs,
    )
    if (seeds.length > 0) {
      const seedIds = seeds.map((s) => s.id)
      const hops = await store.coMentioned(seedIds, scope, config.graphHops, maxDocs)
      const mentions = await store.entityMentions(
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
      for (const key of await store.docsInTimeRange({
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
  await hydrate(lists.flatMap((l) => l.hits.slice(0, Math.max(q.limit * 3, q.limit + 20)).map((h) => h.key)))

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
    await hydrate(list.hits.filter((h) => mayHide(h.key)).map((h) => h.key))
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
    await hydrate(fused.map((c) => c.key))
    fused = [...fused].sort((a, b) => (docs.get(b.key)?.ts ?? 0) - (docs.get(a.key)?.ts ?? 0) || b.key - a.key)
  } else if (config.rerank && config.rerank.depth > 1 && fused.length > 1) {
    const head = fused.slice(0, config.rerank.depth)
    await hydrate(head.map((c) => c.key))
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
  await hydrate(head.map((c) => c.key))
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
