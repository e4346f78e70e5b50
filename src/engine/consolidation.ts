import type { Clock } from '../core/clock.js'
import type { EventInput, Project, Session } from '../core/types.js'
import { memoryOpEvent, rememberEvent } from '../capture/mnemo-ops.js'
import type { Redactor } from '../capture/sanitize.js'
import { decays, DEFAULT_RETENTION, retention, type RetentionConfig } from '../lifecycle/consolidate.js'
import type { LlmConsolidator } from '../lifecycle/llm-consolidator.js'
import type { ProcedureConfig } from '../lifecycle/procedures.js'
import type { AppendResult, Store } from '../storage/store.js'
import type { EngineFacts } from './facts.js'
import { sessionSample } from './reads.js'

/** A session's first and last observations a consolidation reads (a longer session's middle is skipped): 5000 in all. */
const CONSOLIDATION_HEAD = 1000
const CONSOLIDATION_TAIL = 4000

/** What a consolidation run needs from the engine: the store, and how it appends events (derived like any capture). */
interface ConsolidationContext {
  store: Store
  clock: Clock
  redact: Redactor | undefined
  consolidator: LlmConsolidator | undefined
  /** Under `own`, procedures are distilled per agent. */
  agentScope: 'shared' | 'own'
  append: (events: readonly EventInput[]) => Promise<AppendResult>
  /** The fact ledger as a user's (a session's records are its user's); with a consolidator, records are extracted into it. */
  facts?: (user: string | undefined) => EngineFacts
  /** IANA time zone of "today" for the extraction. Default UTC. */
  timeZone?: string
}

/** Options of a consolidation run. */
export interface ConsolidationOptions {
  /** Idle time after which a session counts as over, ms. Default 30 min. */
  idleMs?: number
  retention?: RetentionConfig
  /** Procedure tunables (`minSessions` default 2, …; see DEFAULT_PROCEDURE_CONFIG). */
  procedures?: Partial<ProcedureConfig>
}

/** What a consolidation run wrote and archived. */
export interface ConsolidationReport {
  sessions: number
  summaries: number
  lessons: number
  memories: number
  /** Procedure versions written (new, updated or seen again). */
  procedures: number
  /** Wall time spent on procedures, ms. */
  procedureMs: number
  archived: number
  via: { llm: number; deterministic: number }
  /**
   * Typed records the model extracted (none without one; engine/fact-extraction.ts): written, equal to a stored one,
   * skipped (written before from the same observation, or deleted at a person's request), refused; `problems` says
   * why each refused proposal was refused and why an extraction failed, one line each, prefixed with the session id.
   */
  facts: { created: number; updated: number; unchanged: number; skipped: number; rejected: number; problems: string[] }
  errors: string[]
}

/**
 * The slow path, deterministic (no model): for every session that ended
 * (SessionEnd) or has been idle for `idleMs`, writes or refreshes its
 * episodic summary (a resumed session gets a new version that supersedes
 * the old one, history kept) with provenance; derives lessons from
 * failures fixed in the same session; in each project where a session
 * just (re)summarised succeeded at work that edited files, distils
 * procedures from the kinds of work that succeeded in several of its
 * finished sessions, each checked step by step against those sessions
 * (lifecycle/procedures.ts); then archives
 * memories whose retention score fell below the threshold (pinned ones
 * never). Every result is a logged event, so rebuild and export reproduce
 * it. It reads every user's sessions and writes what it derives from a
 * session as that session's user's and agent's; procedures are distilled
 * per user (and per agent under `agentScope: 'own'`), never across. Never
 * runs on the hook path.
 *
 * @param options.idleMs - Idle time after which a session counts as over. Default 30 min.
 * @param options.procedures - Procedure tunables (`minSessions` default 2, …; see DEFAULT_PROCEDURE_CONFIG).
 * @returns What it wrote and archived; `procedures` counts procedure versions
 *   written (new, updated or seen again), `procedureMs` the wall time spent on them.
 */
export async function runConsolidation(ctx: ConsolidationContext, options: ConsolidationOptions = {}): Promise<ConsolidationReport> {
  const now = ctx.clock.now()
  const idleMs = options.idleMs ?? 30 * 60_000
  const events: EventInput[] = []
  let sessions = 0
  let summaries = 0
  let lessons = 0
  let memories = 0
  const via = { llm: 0, deterministic: 0 }
  const facts = { created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: 0, problems: [] as string[] }
  const errors: string[] = []
  const redact = ctx.redact ? { redact: ctx.redact } : {}
  // Under agent isolation what it writes is matched, superseded and flagged within its agent (recorded in each event).
  const isolate = ctx.agentScope === 'own' ? { guardByAgent: true } : {}
  // Loaded here, not at start-up: hooks never consolidate and should not pay for it.
  const { consolidateSession } = await import('../lifecycle/llm-consolidator.js')
  const { planProcedures, resolveProcedureConfig, workKey } = await import('../lifecycle/procedures.js')
  const { readSessionSteps } = await import('../lifecycle/procedure-steps.js')
  const finished = (s: Session): boolean =>
    s.agent !== 'mnemo' && s.observationCount > 0 && (s.endedAt !== undefined || s.lastEventAt <= now - idleMs)
  // Projects where a session just (re)summarised succeeded at work that edited files: only there can a kind of work have succeeded again.
  const changedProjects: Project[] = []
  const config = resolveProcedureConfig(options.procedures)
  // Each owner's most recent finished sessions, per project: users never share a procedure, nor (under agent
  // isolation) agents, and one owner's many sessions never crowd another's out of the window.
  const recent = new Map<string, Map<string, Session[]>>()
  for (const p of await ctx.store.listProjects()) {
    const groups = new Map<string, Session[]>()
    recent.set(p.id, groups)
    const ref = { root: p.root, name: p.name }
    // Current summaries, archived ones included: an archived summary is not a reason to write it again.
    const summaryOf = new Map(
      (await ctx.store.allMemories(p.id))
        .filter((m) => m.kind === 'summary' && m.validTo === undefined)
        .map((m) => [`${m.user ?? ''}\u0000${m.sources[0] ?? ''}`, m]),
    )
    for (const s of await ctx.store.listSessions({ projectIds: [p.id], limit: 100_000 })) {
      if (!finished(s)) continue
      sessions++
      const key = `${s.user ?? ''}\u0000${ctx.agentScope === 'own' ? s.agent : ''}`
      const group = groups.get(key) ?? []
      if (group.length < config.windowSessions) groups.set(key, [...group, s])
      // Flagged text (reads like instructions) never reaches a model or a summary.
      const observations = (await sessionSample(ctx.store, s, CONSOLIDATION_HEAD, CONSOLIDATION_TAIL)).filter((o) => o.flags.length === 0)
      if (observations.length === 0) continue
      const existing = summaryOf.get(`${s.user ?? ''}\u0000${observations[0]!.id}`)
      if (existing && existing.createdAt >= s.lastEventAt) continue
      const result = await consolidateSession(ctx.consolidator, { session: s, observations, projectRoot: p.root })
      via[result.via]++
      if (result.error) errors.push(`${s.id}: ${result.error}`)
      // What is derived from a session is its user's and its agent's.
      const owner = { ...(s.user !== undefined ? { user: s.user } : {}), agent: s.agent }
      events.push(
        rememberEvent(ref, 'summary', result.summary.text, now, {
          ...redact,
          ...owner,
          ...isolate,
          sources: result.summary.sources,
          subject: `session:${s.id}`,
        }),
      )
      summaries++
      if (ctx.consolidator && ctx.facts) {
        const { extractSessionFacts } = await import('./fact-extraction.js')
        const { calendarClock } = await import('./facts.js')
        const r = await extractSessionFacts(ctx.consolidator, ctx.facts(s.user), {
          project: ref,
          session: s,
          observations,
          today: calendarClock(now, ctx.timeZone ?? 'UTC').today,
        })
        facts.created += r.created
        facts.updated += r.updated
        facts.unchanged += r.unchanged
        facts.skipped += r.skipped
        facts.rejected += r.rejected.length
        facts.problems.push(...r.rejected, ...(r.error !== undefined ? [`${s.id}: fact extraction failed: ${r.error}`] : []))
      }
      if (changedProjects.at(-1) !== p && workKey(readSessionSteps(s.id, s.startedAt, observations, p.root)) !== undefined)
        changedProjects.push(p)
      for (const m of result.memories) {
        events.push(
          rememberEvent(ref, m.kind, m.text, now, { ...redact, ...owner, ...isolate, sources: m.sources, confidence: m.confidence }),
        )
        if (m.kind === 'lesson') lessons++
        else memories++
      }
    }
  }
  await ctx.append(events)
  // Semantic → procedural, where new successful work finished.
  const procedureStart = performance.now()
  let procedures = 0
  if (changedProjects.length > 0) {
    const writes: EventInput[] = []
    for (const p of changedProjects) {
      for (const group of recent.get(p.id)?.values() ?? []) {
        const sessionOf = new Map<string, string>()
        const steps: ReturnType<typeof readSessionSteps>[] = []
        for (const s of group.slice(0, config.windowSessions)) {
          // Flagged text never reaches a model or a memory (as for summaries).
          const observations = (await sessionSample(ctx.store, s, CONSOLIDATION_HEAD, CONSOLIDATION_TAIL)).filter(
            (o) => o.flags.length === 0,
          )
          for (const o of observations) sessionOf.set(o.id, s.id)
          steps.push(readSessionSteps(s.id, s.startedAt, observations, p.root))
        }
        const user = group[0]!.user
        const agents = new Set(group.slice(0, config.windowSessions).map((s) => s.agent))
        const owner = { ...(user !== undefined ? { user } : {}), ...(agents.size === 1 ? { agent: group[0]!.agent } : {}) }
        // Compared with the same owner's procedures only: another user's (or, isolated, another agent's) wording or archive never decides this one.
        const existing = (await ctx.store.allMemories(p.id)).filter(
          (m) =>
            m.kind === 'procedure' &&
            m.validTo === undefined &&
            m.user === user &&
            (ctx.agentScope !== 'own' || m.agent === group[0]!.agent),
        )
        const plan = await planProcedures(ctx.consolidator, {
          projectRoot: p.root,
          sessions: steps,
          existing,
          sessionOf: (id) => sessionOf.get(id),
          config,
        })
        errors.push(...plan.errors)
        for (const w of plan.writes)
          writes.push(
            rememberEvent({ root: p.root, name: p.name }, 'procedure', w.text, now, {
              ...redact,
              ...owner,
              ...isolate,
              sources: w.sources,
              subject: `procedure:${w.key}`,
            }),
          )
      }
    }
    procedures = writes.length
    await ctx.append(writes)
  }
  const procedureMs = performance.now() - procedureStart
  // Decay: archive what has not been used or seen for long enough.
  let archived = 0
  const archive: EventInput[] = []
  for (const p of await ctx.store.listProjects()) {
    const memories = (await ctx.store.listMemories({ projectIds: [p.id], limit: 100_000 })).filter(decays)
    const uses = await ctx.store.usageCounts(memories.map((m) => m.id))
    for (const m of memories) {
      if (retention(m, uses.get(m.id) ?? 0, now, options.retention) < (options.retention ?? DEFAULT_RETENTION).archiveBelow) {
        archive.push(memoryOpEvent({ root: p.root, name: p.name }, 'archive', m.id, now, m.user))
        archived++
      }
    }
  }
  await ctx.append(archive)
  return { sessions, summaries, lessons, memories, procedures, procedureMs, archived, via, facts, errors }
}
