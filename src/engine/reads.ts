import { invalidInput, MnemoError } from '../core/errors.js'
import { idPrefix, type ProjectId, type SessionId } from '../core/ids.js'
import {
  MIN_CONTEXT_BUDGET,
  type AgentName,
  type ContextBlock,
  type Memory,
  type Observation,
  type Project,
  type ProjectRef,
  type Session,
} from '../core/types.js'
import { assembleContext } from '../context/context-block.js'
import { digestSession, type SessionDigest } from '../lifecycle/session-summary.js'
import type { BrowseMemoriesOptions, BrowseObservationsOptions, Store, StoreStats } from '../storage/store.js'
import type { EngineContext } from './engine-context.js'
import type { FactDependencies } from './fact-dependencies.js'
import { noMemory, observationAgent } from './memory-writes.js'
import { listProjects, projectForPath, userProjectId, withUserProject } from './projects.js'
import { noteInjected, type ShownRow } from './prompt-recall.js'

// The bodies of MnemoEngine's reads (show, context, memories, sessions, observations, counts); the engine's methods
// carry their contracts.

/** A session with its observations, for `show`. */
export interface SessionDetail {
  session: Session
  project: Project | undefined
  observations: Observation[]
}

export type ShowResult =
  | { type: 'observation'; observation: Observation; project: Project | undefined }
  | { type: 'memory'; memory: Memory; project: Project | undefined }
  | { type: 'session'; detail: SessionDetail }

/** `MnemoEngine.show`. */
export async function show(ctx: EngineContext, id: string): Promise<ShowResult> {
  const prefix = idPrefix(id)
  if (prefix === 'obs') {
    const observation = await ctx.store.getObservation(id)
    if (observation && ctx.access.sees(observation, await observationAgent(ctx, observation)))
      return {
        type: 'observation',
        observation: ctx.redactObservation(observation),
        project: await ctx.store.getProject(observation.projectId),
      }
  } else if (prefix === 'mem') {
    const memory = await ctx.store.getMemory(id)
    if (memory && ctx.access.sees(memory)) {
      await ctx.store.recordUsage([memory.id], new Date(ctx.clock.now()).toISOString().slice(0, 10))
      return {
        type: 'memory',
        memory: { ...memory, text: ctx.readRedact(memory.text) },
        project: await ctx.store.getProject(memory.projectId),
      }
    }
  } else if (prefix === 'ses') {
    const session = await ctx.store.getSession(id)
    if (session && ctx.access.sees(session, session.agent)) {
      const observations = (await ctx.store.sessionObservations(session.id as SessionId, 500)).map((o) => ctx.redactObservation(o))
      return {
        type: 'session',
        detail: {
          session: { ...session, ...(session.title ? { title: ctx.readRedact(session.title) } : {}) },
          project: await ctx.store.getProject(session.projectId),
          observations,
        },
      }
    }
  } else throw invalidInput('id', `expected an id like obs_…, mem_… or ses_… (got ${JSON.stringify(id)})`)
  const kind = prefix === 'obs' ? 'observation' : prefix === 'mem' ? 'memory' : 'session'
  throw new MnemoError('NOT_FOUND', `no ${kind} with id ${id}`, { details: { kind, id } })
}

/** `MnemoEngine.currentMemories`. */
export async function currentMemories(ctx: EngineContext, projectId: ProjectId, limit: number): Promise<Memory[]> {
  return (await ctx.store.listMemories({ projectIds: [projectId], limit, ...ctx.access.who() })).map((m) => ({
    ...m,
    text: ctx.readRedact(m.text),
  }))
}

/** `MnemoEngine.history`. */
export async function history(ctx: EngineContext, id: string): Promise<Memory[]> {
  const chain = (await ctx.store.memoryHistory(id)).filter((m) => ctx.access.sees(m))
  if (chain.length === 0) throw noMemory(id)
  return chain.map((m) => ({ ...m, text: ctx.readRedact(m.text) }))
}

/** `MnemoEngine.sessions`. */
export async function sessions(
  ctx: EngineContext,
  options: { projectIds?: readonly ProjectId[]; limit?: number; offset?: number },
): Promise<Session[]> {
  const limit = options.limit ?? 50
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidInput('limit', `limit must be an integer 1–1000 (got ${limit})`)
  // mnemo's own operations (remember, consolidation) are logged under a bookkeeping session per project: not an agent's session.
  return (
    await ctx.store.listSessions({
      limit,
      offset: options.offset ?? 0,
      excludeAgent: 'mnemo',
      ...(options.projectIds ? { projectIds: options.projectIds } : {}),
      ...ctx.access.who(),
    })
  ).map((s) => (s.title !== undefined ? { ...s, title: ctx.readRedact(s.title) } : s))
}

/** `MnemoEngine.browseObservations`. */
export async function browseObservations(
  ctx: EngineContext,
  options: Omit<BrowseObservationsOptions, 'limit'> & { limit: number },
): Promise<(Observation & { agent: AgentName })[]> {
  if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > 500)
    throw invalidInput('limit', `limit must be an integer 1–500 (got ${options.limit})`)
  const { agent: only, ...who } = ctx.access.who()
  // Under agent isolation an agent's surface sees its own rows only, whatever agent filter it asks for.
  if (only !== undefined && options.agent !== undefined && options.agent !== only) return []
  return (await ctx.store.browseObservations({ ...options, ...who, ...(only !== undefined ? { agent: only } : {}) })).map((o) => ({
    ...o,
    text: ctx.readRedact(o.text),
  }))
}

/** `MnemoEngine.browseMemories`. */
export async function browseMemories(ctx: EngineContext, options: BrowseMemoriesOptions): Promise<{ memories: Memory[]; total: number }> {
  const page = await ctx.store.browseMemories({ ...options, ...ctx.access.who() })
  return { total: page.total, memories: page.memories.map((m) => ({ ...m, text: ctx.readRedact(m.text) })) }
}

/** `MnemoEngine.lastActivityAt`. */
export async function lastActivityAt(ctx: EngineContext, projectId: ProjectId): Promise<number | undefined> {
  return (await ctx.store.listSessions({ limit: 1, offset: 0, projectIds: [projectId], ...ctx.access.who() }))[0]?.lastEventAt
}

/** `MnemoEngine.stats`. */
export async function stats(ctx: EngineContext): Promise<StoreStats> {
  const all = await ctx.store.stats()
  const who = ctx.access.who()
  if ((ctx.access.user === undefined || ctx.access.allUsers) && who.agent === undefined) return all
  const counts = await ctx.store.scopeCounts(undefined, who.user, who.agent)
  const latest = (await sessions(ctx, { limit: 1 }))[0]
  return { ...counts, projects: (await listProjects(ctx)).length, lastEventAt: latest?.lastEventAt, bytes: all.bytes }
}

/** How many of a session's first and last observations its context digest reads (the rest of a long session is skipped). */
const DIGEST_HEAD = 50
const DIGEST_TAIL = 350

/**
 * A session's first `head` and last `tail` observations, in time order (all of them when it has no more): its goal
 * and where it stopped, for a digest or a consolidation that cannot read a long session whole.
 */
export async function sessionSample(store: Store, session: Session, head: number, tail: number): Promise<Observation[]> {
  return session.observationCount <= head + tail
    ? await store.sessionObservations(session.id, head + tail)
    : [
        ...(await store.sessionObservationsPage(session.id, 0, head)),
        ...(await store.sessionObservationsPage(session.id, session.observationCount - tail, tail)),
      ]
}

/**
 * How a context block depends on the project's session list, for a block kept to be shown again (runtime/context-cache.ts):
 * the agent session keys of the sessions it listed (the newest `SESSIONS_LISTED`), how many new sessions with nothing
 * recorded may join that list before the block changes (`slack`), whether the block shows facts now uncertain (each is
 * shown by one block only, so such a block is never shown twice), and whether leaving out the asking session changed it.
 */
export interface ContextListing {
  /** Whether the project is in the store (a project's first event makes it, and with it the user's own memories show). */
  known: boolean
  listedKeys: string[]
  slack: number
  uncertain: boolean
  excludedListed: boolean
}

/** `MnemoEngine.context`: the block, recorded for `recordFor`'s session when asked. */
export async function context(
  ctx: EngineContext,
  options: {
    project?: ProjectRef
    budgetTokens?: number
    excludeSessionKey?: string
    recordFor?: { agent: string; sessionKey: string; defer?: boolean }
    /** Adds `listing` (see `ContextListing`) to the result. */
    withListing?: boolean
    /** False: nothing is written (no use counted, no uncertain fact marked as shown, nothing recorded). Default true. */
    sideEffects?: boolean
  },
  dependencies?: FactDependencies,
): Promise<ContextBlock & { project: string; notRecorded?: MnemoError; shown?: ShownRow[]; listing?: ContextListing }> {
  const { sourceIds, listing, ...built } = await buildContext(ctx, options, dependencies)
  const block = options.withListing === true ? { ...built, listing, shown: shownRows({ ...built, sourceIds }) } : built
  if (options.recordFor && block.text !== '') {
    const rows = shownRows({ ...block, sourceIds })
    // Deferred: the caller records them with `recordShown` once the agent has the block (a team server's client).
    if (options.recordFor.defer === true || options.sideEffects === false) return { ...block, shown: rows }
    const session = { ...options.recordFor, project: options.project ?? (await projectForPath(ctx.store, ctx.cwd, { workingDir: true })) }
    try {
      // What SessionStart showed is never repeated by a later prompt, and is corrected when it changes.
      await ctx.store.withoutLockWait(() => noteInjected(ctx, session, rows))
    } catch (error) {
      // A session waits for its block, never for another process's write: the block goes out unrecorded.
      if (!MnemoError.is(error, 'STORE_UNAVAILABLE')) throw error
      return { ...block, notRecorded: error }
    }
  }
  return block
}

/** What a session shown `block` was shown: its memories, its sessions and the observations their digests quote. */
function shownRows(block: { memoryIds: readonly string[]; sessionIds: readonly string[]; sourceIds: readonly string[] }): ShownRow[] {
  return [...block.memoryIds, ...block.sessionIds, ...block.sourceIds].map((itemId) => ({ itemId, what: 'item' as const }))
}

/** Sessions of the project the block reads (newest first), of which it digests the first `SESSIONS_SHOWN` with observations. */
const SESSIONS_LISTED = 12
const SESSIONS_SHOWN = 5

/** The context block and the observations its digests quote (`context` records them with the block). */
async function buildContext(
  ctx: EngineContext,
  options: { project?: ProjectRef; budgetTokens?: number; excludeSessionKey?: string; sideEffects?: boolean },
  dependencies?: FactDependencies,
): Promise<ContextBlock & { project: string; sourceIds: string[]; listing: ContextListing }> {
  const ref = options.project ?? (await projectForPath(ctx.store, ctx.cwd, { workingDir: true }))
  const budget = options.budgetTokens ?? ctx.contextBudgetTokens
  if (!Number.isInteger(budget) || budget < MIN_CONTEXT_BUDGET || budget > 100_000) {
    throw invalidInput('budget', `budget must be an integer ${MIN_CONTEXT_BUDGET}–100000 tokens (got ${budget})`)
  }
  const project = (await ctx.store.listProjects()).find((p) => p.root === ref.root)
  const listing: ContextListing = {
    known: project !== undefined,
    listedKeys: [],
    slack: SESSIONS_LISTED,
    uncertain: false,
    excludedListed: false,
  }
  let memories: Memory[] = []
  const digests: SessionDigest[] = []
  if (project) {
    // Flagged text (reads like instructions to an agent) is never injected automatically.
    // The project's memories and the user's own that apply in every project, newest first.
    memories = (await ctx.store.listMemories({ projectIds: await withUserProject(ctx, [project.id]), limit: 40, ...ctx.access.who() }))
      .filter((m) => m.flags.length === 0 && m.kind !== 'summary')
      .slice(0, 20)
      .map((m) => ({ ...m, text: ctx.readRedact(m.text) }))
    const listed = await ctx.store.listSessions({ projectIds: [project.id], limit: SESSIONS_LISTED, ...ctx.access.who() })
    // The session asking is the one with its id, of its agent (when the caller said which) and of this reader's user.
    const asking = (s: Session): boolean =>
      s.sessionKey === options.excludeSessionKey &&
      (ctx.access.agent === undefined || s.agent === ctx.access.agent) &&
      s.user === ctx.access.user
    const digestible = (s: Session): boolean => s.agent !== 'mnemo' && s.observationCount > 0
    const sessions = listed.filter((s) => !asking(s) && digestible(s)).slice(0, SESSIONS_SHOWN)
    // A new session with nothing recorded pushes the oldest listed one out: the block stays as it is while every
    // session it digests is still listed.
    const lastShown = sessions.length === 0 ? -1 : listed.indexOf(sessions.at(-1)!)
    listing.listedKeys = listed.map((s) => s.sessionKey)
    listing.slack = SESSIONS_LISTED - 1 - lastShown
    listing.excludedListed = listed.some((s) => asking(s) && digestible(s))
    for (const s of sessions) {
      // A long session's digest is drawn from its first and last observations: its goal and where it stopped.
      const read = await sessionSample(ctx.store, s, DIGEST_HEAD, DIGEST_TAIL)
      // Each text redacted when the digest first reads it, not every text loaded: it never reads a tool output's, most
      // of what a session holds (~8 ms CPU a block at 100k).
      const redacted = new Map<Observation, string>()
      const textOf = (o: Observation): string => {
        const known = redacted.get(o)
        if (known !== undefined) return known
        const text = ctx.readRedact(o.text)
        redacted.set(o, text)
        return text
      }
      digests.push(
        digestSession(
          { ...s, ...(s.title ? { title: ctx.readRedact(s.title) } : {}) },
          read.filter((o) => o.flags.length === 0),
          project.root,
          Math.max(0, s.observationCount - read.length),
          textOf,
        ),
      )
    }
  }
  const mine = await userProjectId(ctx)
  const userWide = new Set(memories.filter((m) => m.projectId === mine).map((m) => m.id))
  // Facts made uncertain by a change they depended on, each shown by one block only.
  const uncertain = dependencies ? await dependencies.uncertainNotices({ project: ref }) : []
  const { uncertainKeys, ...block } = assembleContext({
    projectName: ref.name,
    uncertain,
    memories,
    sessions: digests,
    budgetTokens: budget,
    generatedAt: ctx.clock.now(),
    timeZone: ctx.timeZone,
    userWide,
  })
  const shownSessions = new Set(block.sessionIds)
  // The observations the shown digests quote: a later per-prompt block does not repeat them.
  const sourceIds = digests.filter((d) => shownSessions.has(d.sessionId)).flatMap((d) => d.sourceIds)
  listing.uncertain = uncertainKeys.length > 0
  if (options.sideEffects === false) return { ...block, project: ref.name, sourceIds, listing }
  // Injected memories are used memories: they are reinforced (once a day each).
  await ctx.store.recordUsage(block.memoryIds, usageDay(ctx.clock.now()))
  if (dependencies && uncertainKeys.length > 0) {
    const shown = new Set(uncertainKeys)
    try {
      // A block never waits for another process's write lock: unrecorded, the notices are shown again next time.
      await ctx.store.withoutLockWait(() =>
        dependencies.noteSurfaced(
          uncertain.filter((n) => shown.has(n.key)),
          { project: ref },
        ),
      )
    } catch (error) {
      if (!MnemoError.is(error, 'STORE_UNAVAILABLE')) throw error
    }
  }
  return { ...block, project: ref.name, sourceIds, listing }
}

/** The day a memory's use is counted under (`Store.recordUsage`): the UTC date of `at` (epoch ms), `YYYY-MM-DD`. */
function usageDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10)
}
