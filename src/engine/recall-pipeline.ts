import type { SessionId } from '../core/ids.js'
import { DEFAULT_SPREAD, type SpreadWeights } from '../retrieval/context-spread.js'
import type { ChannelName } from '../core/types.js'
import { reciprocalRankFusion, RRF_K, type ChannelEvidence, type ChannelList, type FusedCandidate } from '../retrieval/fusion.js'
import { makeSnippet } from '../retrieval/snippet.js'
import type { TimeRange } from '../retrieval/time-expressions.js'
import { DEFAULT_RERANK_WEIGHTS, rerankFeatures, rerankOrder, type RerankCandidate, type RerankWeights } from '../retrieval/rerank.js'
import type { Scope, SearchDoc, Store } from '../storage/store.js'
import {
  createDocCache,
  type DocCache,
  graphChannel,
  type KeywordChannel,
  keywordChannel,
  type PreparedRecall,
  prepareRecall,
  timeChannel,
} from './recall-channels.js'

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
interface RerankConfig {
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
  /**
   * Ranked lists computed outside (vector channels, which need the embedders), fused with the rest: each of the
   * scope's visible documents only (`isVisible` of the query's `Visibility`), filtered before its cut as the store's
   * channels filter inside their queries.
   */
  extraLists?: readonly ChannelList[]
  /** Recall as of this time (epoch ms): only what existed then, and memories current then. */
  asOf?: number
  /** Include archived memories. Default false. */
  includeArchived?: boolean
  /** Only documents of these kinds; default every kind. */
  kinds?: readonly string[]
}

/** A recall result before it is shaped for a surface. */
interface RankedDoc {
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
 * store's search primitives: the query is prepared once (`prepareRecall`),
 * each channel is one step (recall-channels.ts) that keeps to the scope and
 * its visible documents inside its own query (`PreparedRecall.visible`), then
 * fusion and re-ranking, and the cut (`orderFused`, `takeResults`).
 *
 * @param prepared - `q` prepared by `prepareRecall` (default: prepared here).
 * @throws {MnemoError} `INVALID_INPUT` — a query with no searchable words, or over 16 000 characters.
 */
export async function runRecall(
  store: Store,
  q: RecallQuery,
  config: RecallConfig = DEFAULT_RECALL_CONFIG,
  prepared: PreparedRecall = prepareRecall(q, config),
): Promise<RankedDoc[]> {
  const { enabled } = prepared
  const cache = createDocCache(store)
  const lists: ChannelList[] = []
  const keyword = enabled.has('bm25') ? await keywordChannel(store, prepared, q, config, cache) : undefined
  if (keyword) lists.push(keyword.list)
  const graph = enabled.has('graph') ? await graphChannel(store, prepared, q, config) : undefined
  if (graph) lists.push(graph)
  const time = enabled.has('time') ? await timeChannel(store, prepared, q, config, keyword?.list) : undefined
  if (time) lists.push(time)
  for (const list of q.extraLists ?? []) if (enabled.has(list.channel)) lists.push(list)
  await cache.hydrate(lists.flatMap((l) => l.hits.slice(0, Math.max(q.limit * 3, q.limit + 20)).map((h) => h.key)))
  const spreadOnly = keyword?.spreadOnly ?? new Set<number>()

  const { fused, fusedRanks } = await orderFused(reciprocalRankFusion(lists, config.rrfK), prepared, config, cache, keyword)
  return takeResults(fused, fusedRanks, prepared, q, config, cache, spreadOnly)
}

/**
 * The fused list in its final order: newest first for a time-only query, else with its head reordered by the
 * re-ranker (`config.rerank`); `fusedRanks` then holds each reordered key's 1-based fused rank.
 */
async function orderFused(
  fusedList: FusedCandidate[],
  { text, timeOnly }: PreparedRecall,
  config: RecallConfig,
  { docs, hydrate }: DocCache,
  keyword: KeywordChannel | undefined,
): Promise<{ fused: FusedCandidate[]; fusedRanks: Map<number, number> | undefined }> {
  const rawScores = keyword?.rawScores ?? new Map<number, number>()
  const spreadScores = keyword?.spreadScores ?? new Map<number, number>()
  const spreadOnly = keyword?.spreadOnly ?? new Set<number>()
  let fused = fusedList
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
    const features = rerankFeatures(candidates, {
      words: text.words,
      terms: text.terms.map((t) => t.source.toLowerCase()),
      ...(text.asked ? { asked: text.asked } : {}),
    })
    config.rerank.trace?.(
      known.map((c, i) => ({ doc: docs.get(c.key)!, features: features[i]! })),
      text.form,
    )
    // The head keeps its fused scores, position by position, so that scores still fall down the list.
    fusedRanks = new Map(known.map((c, i) => [c.key, i + 1]))
    const order = rerankOrder(features, config.rerank.weights)
    const reordered = order.map((i, pos) => ({ ...known[i]!, score: known[pos]!.score }))
    fused = [...reordered, ...fused.slice(config.rerank.depth)]
  }
  return { fused, fusedRanks }
}

/** The first `q.limit` of the fused list as results (at most `config.maxPerSession` per session before the rest), with snippets. */
async function takeResults(
  fused: FusedCandidate[],
  fusedRanks: Map<number, number> | undefined,
  { text }: PreparedRecall,
  q: RecallQuery,
  config: RecallConfig,
  { docs, hydrate }: DocCache,
  spreadOnly: ReadonlySet<number>,
): Promise<RankedDoc[]> {
  const cap = q.sessionId === undefined && config.maxPerSession > 0 ? config.maxPerSession : Infinity
  const out: RankedDoc[] = []
  const perSession = new Map<string, number>()
  const deferred: typeof fused = []
  const sources = text.terms.map((t) => t.source)
  const take = (c: (typeof fused)[number]): void => {
    const doc = docs.get(c.key)
    if (!doc) return
    const fusedRank = fusedRanks?.get(c.key)
    out.push({
      doc,
      score: c.score,
      channels: c.channels,
      viaNeighbor: spreadOnly.has(c.key),
      snippet: makeSnippet(doc.text, sources),
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
