/**
 * The steps of recall before fusion: the query prepared once (normalised,
 * parsed, scoped) and one step per channel that ranks inside the store —
 * keyword (BM25 with neighbour spreading and text priors), graph and time —
 * each returning its ranked list of the scope's visible documents (`PreparedRecall.visible`, filtered inside the
 * store's queries: never after a channel's cut). The vector lists come from outside
 * (engine/recall.ts). Documents are read once per recall through a
 * {@link DocCache}.
 */
import { invalidInput } from '../core/errors.js'
import type { ProjectId } from '../core/ids.js'
import { repairUnicode, truncateGraphemes } from '../core/text.js'
import { CHANNEL_NAMES, type ChannelName } from '../core/types.js'
import { type AnswerType, answerTypeOf, endsWithQuestion, hasAnswerType } from '../retrieval/answer-type.js'
import { spreadToNeighbors } from '../retrieval/context-spread.js'
import { queryEntities } from '../retrieval/entities.js'
import { type SearchQuery, toSearchQuery } from '../retrieval/fts-query.js'
import { letterNumberRuns } from '../retrieval/search-text.js'
import type { ChannelList } from '../retrieval/fusion.js'
import { rankByEntities } from '../retrieval/graph-rank.js'
import type { Scope, SearchDoc, Store } from '../storage/store.js'
import type { Visibility } from '../storage/visibility.js'
import type { RecallConfig, RecallQuery } from './recall-pipeline.js'

/** A recall's query text, read once for every step: checked, repaired, in search form, with what the steps read of it. */
interface RecallText extends SearchQuery {
  /** The query's lowercased letter/digit words. */
  words: ReadonlySet<string>
  /** What the question asks for, if its form says (`answerTypeOf`). */
  asked: AnswerType | undefined
}

/**
 * Reads a recall's query once: `repairUnicode`, then `searchForm` (NFKC, as the index is: a full-width `ｃｈｅｃｋｏｕｔ`
 * is `checkout` to every channel), its terms, MATCH expression, words and answer type.
 * @throws {MnemoError} `INVALID_INPUT` — a query over 16 000 characters.
 */
export function prepareText(query: string): RecallText {
  if (query.length > 16_000) throw invalidInput('query', `query is longer than 16000 characters (got ${query.length})`)
  const read = toSearchQuery(repairUnicode(query))
  return { ...read, words: new Set(letterNumberRuns(read.form.toLowerCase())), asked: answerTypeOf(read.form) }
}

/** A recall's query, prepared once for every channel. */
export interface PreparedRecall {
  /** The query text, read once (`prepareText`). */
  text: RecallText
  /** Only a time (`RecallQuery.timeOnly`, with the time channel on): the time channel alone answers, newest first. */
  timeOnly: boolean
  /** The channels that run: those asked for (default all) with weight > 0; only `time` for a time-only query. */
  enabled: ReadonlySet<ChannelName>
  /** Whose documents every channel may return: the projects, and the user and agent when the query has them. */
  scope: Scope
  /** Which of them (kinds, as of, archived: `Visibility`), applied by every channel inside its own query, before its cut. */
  visible: Visibility
  /** Roots of the projects searched (every project when none is named), for file names relative to them; read by the graph channel when absent. */
  projectRoots?: readonly string[]
}

/**
 * Checks and prepares `q` for the channels.
 *
 * @param text - `q.query` already read by `prepareText` (default: read here).
 * @param projectRoots - See `PreparedRecall.projectRoots`.
 * @throws {MnemoError} `INVALID_INPUT` — a query with no searchable words, or over 16 000 characters.
 */
export function prepareRecall(
  q: RecallQuery,
  config: RecallConfig,
  text: RecallText = prepareText(q.query),
  projectRoots?: readonly string[],
): PreparedRecall {
  const timeOnly = q.timeOnly === true && (q.channels ?? CHANNEL_NAMES).includes('time') && config.weights.time > 0
  if (text.match === undefined && !timeOnly)
    throw invalidInput('query', `query has no searchable words (got ${JSON.stringify(truncateGraphemes(q.query, 40))})`)
  const enabled = new Set<ChannelName>(timeOnly ? ['time'] : (q.channels ?? CHANNEL_NAMES).filter((c) => config.weights[c] > 0))
  const scope: Scope = {
    ...(q.projectIds && q.projectIds.length > 0 ? { projectIds: q.projectIds } : {}),
    ...(q.user !== undefined ? { user: q.user } : {}),
    ...(q.agent !== undefined ? { agent: q.agent } : {}),
  }
  const visible: Visibility = {
    ...(q.asOf !== undefined ? { asOf: q.asOf } : {}),
    ...(q.includeArchived ? { includeArchived: true } : {}),
    ...(q.kinds && q.kinds.length > 0 ? { kinds: q.kinds } : {}),
  }
  return { text, timeOnly, enabled, scope, visible, ...(projectRoots ? { projectRoots } : {}) }
}

/** The documents one recall has read, by key; `hydrate` reads the missing ones in one store call. */
export interface DocCache {
  docs: Map<number, SearchDoc>
  hydrate(keys: Iterable<number>): Promise<void>
}

export function createDocCache(store: Store): DocCache {
  const docs = new Map<number, SearchDoc>()
  return {
    docs,
    async hydrate(keys) {
      const missing = [...keys].filter((k) => !docs.has(k))
      for (const d of await store.docs(missing)) docs.set(d.docKey, d)
    },
  }
}

/** The keyword channel's list, with the scores the re-ranker reads: raw BM25, after spreading, and the keys that entered only by spreading. */
export interface KeywordChannel {
  list: ChannelList
  rawScores: Map<number, number>
  spreadScores: Map<number, number>
  spreadOnly: Set<number>
}

/**
 * The keyword channel: FTS5 BM25 over the full-text index (column weights `config.columnWeights`), scores spread
 * to session neighbours, the named-speaker boost on the spread scores, then the text priors (answer type,
 * questions) on the best `config.priorTop`.
 */
export async function keywordChannel(
  store: Store,
  p: PreparedRecall,
  q: RecallQuery,
  config: RecallConfig,
  cache: DocCache,
): Promise<KeywordChannel> {
  const { text, scope, visible } = p
  const { docs, hydrate } = cache
  const spreadOnly = new Set<number>()
  const matches = await store.searchText({
    match: text.match!,
    limit: config.candidates,
    weights: config.columnWeights,
    ...visible,
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
    await store.neighbors(spreaders, 2, visible),
    config.spread,
    (key) => docs.get(key)?.text.includes('?') ?? false,
  )
  const rawScores = scores
  const spreadScores = new Map(spread)
  for (const key of spread.keys()) if (!scores.has(key)) spreadOnly.add(key)
  // The speaker prior goes on the spread scores: a turn by the named speaker that entered as the reply to the other's question is boosted too.
  // The neighbours that entered (~140 a recall) need only their roles here: their texts are read later for the few that reach the fused head.
  const roles = new Map(matches.map((m) => [m.docKey, m.role]))
  const spreadRoles = await store.docRoles([...spreadOnly])
  for (const key of spreadOnly) roles.set(key, spreadRoles.get(key) ?? '')
  boostNamedRoles(spread, roles, text.words, config.namedRoleBoost)
  const asked = config.answerTypeBoost !== 1 ? text.asked : undefined
  if (asked !== undefined || config.questionFactor !== 1) {
    const best = [...spread.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, config.priorTop)
    await hydrate(best.map(([k]) => k))
    for (const [key, score] of best) spread.set(key, score * textPrior(docs.get(key)?.text, asked, config))
  }
  const list: ChannelList = {
    channel: 'bm25',
    weight: config.weights.bm25,
    hits: [...spread.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([key, score]) => ({ key, score })),
  }
  return { list, rawScores, spreadScores, spreadOnly }
}

/**
 * The graph channel: the query's entities (those in more than `config.graphMaxDocShare` of the scope's documents
 * left out) and up to `config.graphHops` entities mentioned with them, documents ranked by their mentions
 * (`rankByEntities`). Undefined when the query names no usable entity.
 */
export async function graphChannel(
  store: Store,
  p: PreparedRecall,
  q: RecallQuery,
  config: RecallConfig,
): Promise<ChannelList | undefined> {
  const { text, scope, visible } = p
  const projects = scope.projectIds ?? []
  const total = await store.countDocs(scope)
  // An entity in more than a few percent of documents (a speaker's name, the project's main file) says little about which one is meant.
  // Paths inside a project searched are named relative to its root, as capture names them (fileEntityName).
  const roots = p.projectRoots ?? (await searchedRoots(store, projects))
  const maxDocs = Math.max(3, total * config.graphMaxDocShare)
  const seeds = (await store.findEntities(scope, queryEntities(text.form, await store.entityNames(projects), roots), maxDocs)).filter(
    (e) => e.docs <= maxDocs,
  )
  if (seeds.length > 0) {
    const seedIds = seeds.map((s) => s.id)
    const hops = await store.coMentioned(seedIds, scope, config.graphHops, maxDocs)
    const mentions = await store.entityMentions(
      [...seedIds, ...hops.map((h) => h.id)],
      { ...scope, ...(q.sessionId ? { sessionId: q.sessionId } : {}), visible },
      config.candidates * 10,
    )
    const ranked = rankByEntities(
      total,
      seeds,
      hops.filter((h) => h.docs <= maxDocs),
      mentions,
    ).slice(0, config.candidates)
    return { channel: 'graph', weight: config.weights.graph, hits: ranked }
  }
  return undefined
}

/** Roots of the projects `projectIds` (every project when empty), read from the store. */
async function searchedRoots(store: Store, projectIds: readonly ProjectId[]): Promise<string[]> {
  const projects = projectIds.length > 0 ? await Promise.all(projectIds.map((id) => store.getProject(id))) : await store.listProjects()
  return projects.flatMap((project) => (project ? [project.root] : []))
}

/**
 * The time channel: documents of the asked-for time ranges — those the keyword channel ranked, in its order, then
 * the rest by time (newest first for a time-only query). Undefined when the query names no time.
 */
export async function timeChannel(
  store: Store,
  p: PreparedRecall,
  q: RecallQuery,
  config: RecallConfig,
  keyword: ChannelList | undefined,
): Promise<ChannelList | undefined> {
  if (!q.timeRanges || q.timeRanges.length === 0) return undefined
  const { scope, visible, timeOnly } = p
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
      visible,
    }))
      inRange.add(key)
  }
  const keywordOrder = keyword?.hits.filter((h) => inRange.has(h.key)) ?? []
  const seen = new Set(keywordOrder.map((h) => h.key))
  const rest = [...inRange].filter((k) => !seen.has(k)).map((key) => ({ key, score: 0 }))
  return { channel: 'time', weight: config.weights.time, hits: [...keywordOrder, ...rest].slice(0, config.candidates) }
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
