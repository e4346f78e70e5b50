import { invalidInput } from '../core/errors.js'
import type { ProjectId, SessionId } from '../core/ids.js'
import type { ChannelName, RecallHit } from '../core/types.js'
import type { Embedder } from '../providers/embedder.js'
import type { ChannelList } from '../retrieval/fusion.js'
import { isTimeOnlyQuery, parseQueryTimes, unreadTimePhrases } from '../retrieval/query-time.js'
import type { TimeRange } from '../retrieval/time-expressions.js'
import { VectorMatrix } from '../retrieval/vector-index.js'
import { hidesObservations, isVisible } from '../storage/visibility.js'
import type { BuiltinVectors } from './builtin-vectors.js'
import type { EngineContext } from './engine-context.js'
import { withUserProject } from './projects.js'
import { prepareRecall, prepareText } from './recall-channels.js'
import { type RecallQuery, runRecall } from './recall-pipeline.js'

/** Options of `recall`. */
export interface RecallOptions {
  /** Projects to search (ids from `resolveProjects`); empty or omitted = every project. */
  projectIds?: readonly ProjectId[]
  /** Restrict to one session. */
  sessionId?: SessionId
  /** Most hits, 1–100. Default 10. */
  limit?: number
  /** Channels to use (for ablation); default every channel with a weight. */
  channels?: readonly ChannelName[]
  /** Recall as of a past time (epoch ms): what existed then, memories as they were then. */
  asOf?: number
  /** Include archived memories (left out by default). */
  includeArchived?: boolean
  /** Only documents of these kinds (observation kinds such as `prompt`, `error`; memory kinds such as `decision`); default every kind. */
  kinds?: readonly string[]
}

/**
 * The hits of one recall, best first, carrying what that recall worked around (a channel asked for that is off,
 * missing vectors, a provider failure) as `warnings`: they travel with the hits, so two recalls running at once on
 * one engine never see each other's warnings.
 */
export type RecallHits = RecallHit[] & { readonly warnings: readonly string[] }

/**
 * `MnemoEngine.recall`: the query's times, the vector channels (the builtin
 * LSA model, and a configured embedder whose outage degrades recall but never
 * breaks it), then `runRecall` and hits shaped for the surfaces.
 *
 * @param detail - `ranking`: the hits in the same order, for a caller that reads each hit's item itself (the
 *   per-prompt gate): no warnings are worked out (the probes of each time range, the scan for unread time phrases)
 *   and each `snippet` is '' (it is not redacted for display). Default `full`.
 * @returns The hits, and what recall worked around (a channel asked for that is off, missing vectors, a provider failure).
 */
export async function recall(
  ctx: EngineContext,
  vectors: { builtin: BuiltinVectors; embedder: Embedder | undefined },
  query: string,
  options: RecallOptions,
  detail: 'full' | 'ranking' = 'full',
): Promise<{ hits: RecallHit[]; warnings: string[] }> {
  if (typeof query !== 'string') throw invalidInput('query', `query must be a string (got ${query === null ? 'null' : typeof query})`)
  const limit = options.limit ?? 10
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalidInput('limit', `limit must be an integer 1–100 (got ${limit})`)
  const uses = (c: ChannelName): boolean => (options.channels ? options.channels.includes(c) : true) && ctx.recallConfig.weights[c] > 0
  // The query is read once (repaired, NFKC, its terms): its times are read in that form too (full-width `２０２３` is 2023).
  const text = prepareText(query)
  const timeRanges = uses('time') ? await parseQueryTimes(text.form, ctx.clock.now(), ctx.timeZone) : []
  // A query that is only a time ("last Tuesday", "past 7 days") lists what happened then; its words are no keywords.
  const timeOnly = isTimeOnlyQuery(text.form, timeRanges)
  // One read of the projects: the reader's own project, the roots the graph channel names files by, the hits' project names.
  const projects = await ctx.store.listProjects()
  // A read of projects also reads the user's own memories that apply in every project (`remember --scope user`).
  const projectIds = options.projectIds ? await withUserProject(ctx, options.projectIds, projects) : undefined
  const searched = projectIds && projectIds.length > 0 ? projects.filter((p) => projectIds.includes(p.id)) : projects
  const q: RecallQuery = {
    query,
    limit,
    timeRanges,
    ...(timeOnly ? { timeOnly: true } : {}),
    ...(options.asOf !== undefined ? { asOf: options.asOf } : {}),
    ...(options.includeArchived ? { includeArchived: true } : {}),
    ...(options.kinds && options.kinds.length > 0 ? { kinds: options.kinds } : {}),
    ...(projectIds ? { projectIds } : {}),
    ...ctx.access.who(),
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.channels ? { channels: options.channels } : {}),
  }
  const prepared = prepareRecall(
    q,
    ctx.recallConfig,
    text,
    searched.map((p) => p.root),
  )
  const { scope, visible } = prepared
  const extraLists: ChannelList[] = []
  const warnings: string[] = []
  // Channels asked for by name that cannot answer: say so rather than return nothing silently.
  for (const c of options.channels ?? []) {
    if (ctx.recallConfig.weights[c] <= 0) warnings.push(`channel ${c} is off (weight 0; set it in MNEMO_RECALL_WEIGHTS)`)
    else if (c === 'embedding' && !vectors.embedder) warnings.push('channel embedding has no embedder (set MNEMO_EMBEDDER)')
  }
  if (uses('vector') && query.trim().length > 0 && !timeOnly) {
    extraLists.push({
      channel: 'vector',
      weight: ctx.recallConfig.weights.vector,
      hits: await vectors.builtin.search(query, scope, ctx.recallConfig.candidates, async (keys) => {
        // The matrices hold every document of the scope: the recall's visibility is applied here, before the cut
        // (to memories only, negative keys, when it hides no observation).
        const all = hidesObservations(visible)
        const asked = all ? keys : keys.filter((key) => key < 0)
        const shown = new Set((await ctx.store.docs(asked)).filter((doc) => isVisible(visible, doc)).map((doc) => doc.docKey))
        return new Set(keys.filter((key) => shown.has(key) || (!all && key > 0)))
      }),
    })
  }
  if (uses('embedding') && vectors.embedder && !timeOnly) {
    try {
      // The query leaves the machine: redact it like anything stored.
      const [qv] = await vectors.embedder.embed([ctx.readRedact(query)], 'query')
      const matrix = new VectorMatrix(await ctx.store.vectors(vectors.embedder.spaceId, scope, visible), qv?.length ?? 0)
      if (qv && matrix.size > 0)
        extraLists.push({
          channel: 'embedding',
          weight: ctx.recallConfig.weights.embedding,
          hits: matrix.topK(qv, ctx.recallConfig.candidates),
        })
      const missing = (await ctx.store.docsWithoutVector(vectors.embedder.spaceId, scope, 1)).length
      if (missing > 0) warnings.push(`some documents have no ${vectors.embedder.spaceId} vector yet; run \`mnemo reindex\``)
    } catch (error) {
      // The other channels still answer: a provider outage degrades recall, it never breaks it.
      warnings.push(`embedding channel skipped: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const ranked = await runRecall(ctx.store, { ...q, extraLists }, ctx.recallConfig, prepared)
  // A time read but nothing in it, or a time-shaped phrase not read: say so rather than answer nothing silently.
  for (const r of detail === 'full' ? timeRanges : []) {
    const inRange = await ctx.store.docsInTimeRange({
      from: r.from,
      to: r.to,
      limit: 1,
      ...scope,
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    })
    if (inRange.length === 0) {
      warnings.push(`nothing was recorded in this scope for ${JSON.stringify(r.text)} (${describeRange(r, ctx.timeZone)})`)
    }
  }
  for (const phrase of detail === 'full' ? unreadTimePhrases(query, ranked.length > 0) : []) {
    warnings.push(
      `could not read ${JSON.stringify(phrase)} as a time (recall reads dates, weekdays, and numbers of hours, days, weeks, months or years): its words were searched instead`,
    )
  }
  const names = new Map(projects.map((p) => [p.id as string, p.name]))
  const hits = ranked.map(
    (r): RecallHit => ({
      id: r.doc.id as RecallHit['id'],
      type: r.doc.type,
      kind: r.doc.kind as RecallHit['kind'],
      projectId: r.doc.projectId,
      project: names.get(r.doc.projectId) ?? r.doc.projectId,
      sessionId: r.doc.sessionId,
      ts: r.doc.ts,
      score: r.score,
      snippet: detail === 'full' ? ctx.readRedact(r.snippet) : '',
      sourceRef: r.doc.sourceRef,
      channels: r.channels,
      viaNeighbor: r.viaNeighbor,
      ...(r.fusedRank !== undefined ? { fusedRank: r.fusedRank } : {}),
      ...(r.doc.flags.length > 0 ? { flags: r.doc.flags } : {}),
    }),
  )
  return { hits, warnings }
}

/** `2025-03-05 00:00 to 2025-03-06 00:00, Asia/Tokyo`: a range in the zone's local time; an open start is "the beginning". */
function describeRange(r: TimeRange, timeZone: string): string {
  const local = (ms: number): string =>
    new Intl.DateTimeFormat('sv-SE', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(new Date(ms))
  return `${r.from <= 0 ? 'the beginning' : local(r.from)} to ${local(r.to)}, ${timeZone}`
}
