import { MnemoError, invalidInput } from '../core/errors.js'
import type { ProjectId } from '../core/ids.js'
import { truncateGraphemes } from '../core/text.js'
import type { Memory, Observation, Project, RecallHit, Session } from '../core/types.js'
import type { EntityRow, Scope } from '../storage/store.js'
import type { EngineContext } from './engine-context.js'
import { observationAgent } from './memory-writes.js'

/**
 * Reads for browsing a store (the viewer and the REST routes behind it):
 * session replay pages, provenance, the entity graph. Functions of the
 * engine's store, its reader's scope (`access`) and the read-side redaction
 * (`readRedact`, the second pass every text gets on its way out); the engine
 * exposes them as methods.
 */

/** What these reads use of the engine. */
type BrowseContext = Pick<EngineContext, 'store' | 'access' | 'readRedact'>

/** A page of a session's steps; see {@link sessionTimeline}. */
export interface SessionTimeline {
  session: Session
  project: Project | undefined
  observations: (Observation & { derivedMemories: string[] })[]
  /** With `at`: that observation's 0-based place in the session. */
  position?: number
}

/** The entity graph of {@link entityGraph}. */
export interface EntityGraph {
  center: EntityRow | undefined
  nodes: EntityRow[]
  edges: { source: number; target: number; weight: number }[]
  mentions: RecallHit[]
}

/**
 * A session's steps in order, from `offset` (0-based), at most `limit`
 * (1–500), each with the ids of the memories derived from it; with `at`
 * (an observation id), also that observation's 0-based `position` in the
 * session, so a client can open the page holding it. Texts and the title
 * are redacted; only memories the reader may see are named as derived from a step.
 *
 * @throws {MnemoError} `NOT_FOUND` — no such session in the reader's scope, or `at` is not one of its observations.
 */
export async function sessionTimeline(
  ctx: BrowseContext,
  id: string,
  offset: number,
  limit: number,
  at?: string,
): Promise<SessionTimeline> {
  const { store, readRedact: redact } = ctx
  const session = await store.getSession(id)
  if (!session || !ctx.access.sees(session, session.agent))
    throw new MnemoError('NOT_FOUND', `no session with id ${id}`, { details: { kind: 'session', id } })
  let position: number | undefined
  if (at !== undefined) {
    position = await store.observationPosition(session.id, at)
    if (position === undefined)
      throw new MnemoError('NOT_FOUND', `no observation ${at} in session ${id}`, { details: { kind: 'observation', id: at } })
  }
  const page = await store.sessionObservationsPage(session.id, offset, limit)
  const derived = await store.memoriesFromObservations(
    session.projectId,
    page.map((o) => o.id),
  )
  const result: SessionTimeline = {
    session: { ...session, ...(session.title ? { title: redact(session.title) } : {}) },
    project: await store.getProject(session.projectId),
    observations: page.map((o) => ({ ...o, text: redact(o.text), derivedMemories: derived.get(o.id) ?? [] })),
    ...(position !== undefined ? { position } : {}),
  }
  const observations: SessionTimeline['observations'] = []
  for (const o of result.observations) {
    const derivedMemories: string[] = []
    for (const m of o.derivedMemories) {
      const memory = await store.getMemory(m)
      if (memory !== undefined && ctx.access.sees(memory)) derivedMemories.push(m)
    }
    observations.push({ ...o, derivedMemories })
  }
  return { ...result, observations }
}

/**
 * The observations memories were derived from (provenance) that still
 * exist, each once, in time order, text redacted. Pass a version chain to
 * get the provenance of every version (a hand edit has none of its own).
 * Memories and observations the reader may not see are left out (an
 * imported statement may cite observations of another reader).
 */
export async function memorySources(ctx: BrowseContext, memories: readonly Memory[]): Promise<Observation[]> {
  const found: (Observation | undefined)[] = []
  const sources = memories.filter((m) => ctx.access.sees(m)).flatMap((m) => m.sources)
  for (const id of new Set(sources)) found.push(await ctx.store.getObservation(id))
  const visible = found
    .filter((o): o is Observation => o !== undefined)
    .sort((a, b) => a.ts - b.ts)
    .map((o) => ({ ...o, text: ctx.readRedact(o.text) }))
  const out: Observation[] = []
  for (const o of visible) if (ctx.access.sees(o, await observationAgent(ctx, o))) out.push(o)
  return out
}

/**
 * The entity graph around `entity` in some projects, drawn from a sample
 * so it stays fast on any store: the best-matching entity (exact name
 * first, then most mentioned), the entities mentioned most often in the
 * newest 1000 documents that mention it, the co-mention edges among all of
 * them within those documents (weight = documents shared), and the newest
 * 50 of those documents. Without `entity`: the entities most mentioned in
 * the newest 2000 observations, and their edges there. Bounded samples keep
 * the cost from growing with the store (scripts/bench-viewer.mjs). Node
 * `docs` counts every document that mentions the entity. Only documents in the reader's scope are sampled.
 *
 * @param limit - Neighbours at most, 1–100.
 * @throws {MnemoError} `INVALID_INPUT` — limit out of range.
 */
export async function entityGraph(
  ctx: BrowseContext,
  projectIds: readonly ProjectId[],
  entity: string | undefined,
  limit: number,
): Promise<EntityGraph> {
  const { store, readRedact: redact } = ctx
  const scope: Scope & { projectIds: readonly ProjectId[] } = { projectIds, ...ctx.access.who() }
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalidInput('limit', `limit must be an integer 1–100 (got ${limit})`)
  const asked = entity?.trim()
  const center = asked ? (await store.searchEntities(scope, asked, 1))[0] : undefined
  if (asked && !center) return { center: undefined, nodes: [], edges: [], mentions: [] }
  const sample = await store.sampleDocs(scope, center?.id, center ? 1000 : 2000)
  const ranked = (await store.entitiesInDocs(sample, limit + 1)).filter((e) => e.id !== center?.id).slice(0, limit)
  const nodes = await store.entitiesById([...(center ? [center.id] : []), ...ranked.map((e) => e.id)])
  const edges = await store.entityEdges(
    nodes.map((n) => n.id),
    sample,
  )
  const projects = new Map((await store.listProjects()).map((p) => [p.id as string, p.name]))
  const mentions = center
    ? (await store.docs(sample.slice(0, 50))).map(
        (d): RecallHit => ({
          id: d.id as RecallHit['id'],
          type: d.type,
          kind: d.kind as RecallHit['kind'],
          projectId: d.projectId,
          project: projects.get(d.projectId) ?? '',
          sessionId: d.sessionId,
          ts: d.ts,
          score: 0,
          snippet: truncateGraphemes(redact(d.text), 240),
          sourceRef: d.sourceRef,
          ...(d.flags.length > 0 ? { flags: d.flags } : {}),
        }),
      )
    : []
  return { center: nodes[0] && center ? nodes[0] : undefined, nodes, edges, mentions }
}
