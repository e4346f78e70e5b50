import { invalidInput, MnemoError } from '../core/errors.js'
import { idPrefix, type SessionId } from '../core/ids.js'
import { repairUnicode, truncateGraphemes } from '../core/text.js'
import {
  MEMORY_KINDS,
  type AgentName,
  type Memory,
  type MemoryKind,
  type Observation,
  type Project,
  type ProjectRef,
  type Session,
} from '../core/types.js'
import { memoryOpEvent, rememberEvent } from '../capture/mnemo-ops.js'
import { resolveProjectRoot } from '../capture/project.js'
import { oneLine, SESSION_TITLE_CHARS } from '../capture/tool-text.js'
import { contentKey, findContradicted, isNearDuplicate, subjectKey } from '../lifecycle/write-guard.js'
import { toMatchExpression } from '../retrieval/fts-query.js'
import { searchForm } from '../retrieval/search-text.js'
import type { EngineContext } from './engine-context.js'
import { userProject } from './projects.js'
import { derivedMemoryIds, forgetMemoryEvents } from './forgetting.js'
import { runRecall } from './recall-pipeline.js'

// The bodies of MnemoEngine's memory writes (remember, edit, move, pin/archive) and deletes (forget, scoped
// delete); the engine's methods carry their contracts.

/** Longest memory text, in characters. */
const MAX_TEXT_CHARS = 16_000

/** `MnemoEngine.remember`: the write guard's front. */
export async function remember(
  ctx: EngineContext,
  text: string,
  options: { kind?: MemoryKind; project?: ProjectRef; supersedes?: string; agent?: AgentName; scope?: 'project' | 'user' } = {},
): Promise<{ memory: Memory; created: boolean }> {
  const kind = options.kind ?? 'fact'
  if (!MEMORY_KINDS.includes(kind))
    throw invalidInput('kind', `kind must be one of ${MEMORY_KINDS.join(', ')} (got ${JSON.stringify(kind)})`)
  if (typeof text !== 'string') throw invalidInput('text', `memory text must be a string (got ${text === null ? 'null' : typeof text})`)
  const clean = repairUnicode(text).trim()
  if (clean.length === 0) throw invalidInput('text', 'memory text is empty')
  if (clean.length > MAX_TEXT_CHARS)
    throw invalidInput('text', `memory text is longer than ${MAX_TEXT_CHARS} characters (got ${clean.length})`)
  // The rule recall applies to a query: a text with no word to search by (`🚀`, `?!`) could never be recalled.
  if (toMatchExpression(searchForm(clean)) === undefined)
    throw invalidInput(
      'text',
      `memory text has no searchable words: letters, digits or CJK text (got ${JSON.stringify(truncateGraphemes(clean, 40))})`,
    )
  if (options.scope !== undefined && options.scope !== 'project' && options.scope !== 'user')
    throw invalidInput('scope', `scope must be project or user (got ${JSON.stringify(options.scope)})`)
  // A user-wide memory lives in the user's own project, recalled beside every project's (see `userProject`).
  const project = options.scope === 'user' ? userProject(ctx.access.user) : (options.project ?? resolveProjectRoot(ctx.cwd))
  const old = options.supersedes !== undefined ? await ctx.store.getMemory(options.supersedes) : undefined
  if (options.supersedes !== undefined) {
    const oldProject = old && (await ctx.store.getProject(old.projectId))
    if (!old || oldProject?.root !== project.root || !ctx.access.sees(old)) {
      throw new MnemoError('NOT_FOUND', `no current memory ${options.supersedes} in project ${project.name} to supersede`, {
        details: { kind: 'memory', id: options.supersedes },
      })
    }
    await assertCurrent(ctx, old)
    ctx.access.assertOwn(old)
  }
  // A new version of an agent's memory is that agent's (so the write guard, per agent under isolation, replaces it).
  const agent = options.agent ?? old?.agent
  const sameAs = options.supersedes === undefined ? await nearDuplicate(ctx, clean, kind, project, agent) : undefined
  // A statement that retires an older one in natural words ("migrated from X to Y", "never X", "… now") supersedes it;
  // the choice is written into the event, so a rebuild derives the same.
  const supersedes = options.supersedes ?? (sameAs === undefined ? await contradicted(ctx, clean, kind, project, agent) : undefined)
  const now = ctx.clock.now()
  const event = rememberEvent(project, kind, clean, now, {
    ...(ctx.redact ? { redact: ctx.redact } : {}),
    ...(supersedes ? { supersedes } : {}),
    ...(sameAs ? { sameAs } : {}),
    ...(ctx.access.user !== undefined ? { user: ctx.access.user } : {}),
    ...(agent !== undefined ? { agent } : {}),
    // Under agent isolation the write guard, like every read, stays within one agent; recorded in the event, so a rebuild under another setting derives the same.
    ...(ctx.access.agentScope === 'own' ? { guardByAgent: true } : {}),
  })
  await ctx.append([event])
  const stored = (event.payload as { text: string }).text
  // The memory this event made, when it made one: read by the event, not by content, so a write that lands between the
  // append and this read (another request of the same server, another replica) cannot make it look unstored.
  const memory =
    (await ctx.store.memoryByIdemKey(event.idemKey)) ??
    (sameAs ? await ctx.store.getMemory(sameAs) : undefined) ??
    (await ctx.store.currentMemoryByContent(
      project.root,
      contentKey(kind, stored),
      ctx.access.user,
      ctx.access.agentScope === 'own' ? (agent ?? null) : undefined,
    ))
  if (!memory)
    throw new MnemoError('NOT_FOUND', `memory ${JSON.stringify(truncateGraphemes(clean, 40))} was not stored`, {
      details: { kind: 'memory', id: event.idemKey },
    })
  return { memory, created: memory.createdAt === now && memory.seenCount === 1 }
}

/** A current memory of the same kind in the project whose words nearly equal `text`, if any. */
async function nearDuplicate(
  ctx: EngineContext,
  text: string,
  kind: MemoryKind,
  project: ProjectRef,
  agent: AgentName | undefined,
): Promise<string | undefined> {
  const known = (await ctx.store.listProjects()).find((p) => p.root === project.root)
  if (!known || toMatchExpression(text) === undefined) return undefined
  // Only this user's own memories: a shared one is matched in the shared scope, another user's never.
  const hits = await runRecall(
    ctx.store,
    { query: text, limit: 10, projectIds: [known.id], channels: ['bm25'], ...ctx.access.who() },
    ctx.recallConfig,
  )
  const mine = (m: Memory | undefined): boolean =>
    m !== undefined && m.user === ctx.access.user && (ctx.access.agentScope !== 'own' || m.agent === agent)
  for (const h of hits) {
    if (h.doc.type === 'memory' && h.doc.kind === kind && isNearDuplicate(h.doc.text, text) && mine(await ctx.store.getMemory(h.doc.id)))
      return h.doc.id
  }
  return undefined
}

/**
 * The current memory `text` contradicts (see `findContradicted`), among this user's stated memories of the project
 * that share words with it, best BM25 match first; undefined when there is none, or when `text` is already stored.
 */
async function contradicted(
  ctx: EngineContext,
  text: string,
  kind: MemoryKind,
  project: ProjectRef,
  agent: AgentName | undefined,
): Promise<string | undefined> {
  const known = (await ctx.store.listProjects()).find((p) => p.root === project.root)
  if (!known || toMatchExpression(text) === undefined) return undefined
  const key = contentKey(kind, text)
  const subject = subjectKey(text)
  const hits = await runRecall(
    ctx.store,
    { query: text, limit: 10, projectIds: [known.id], channels: ['bm25'], ...ctx.access.who() },
    ctx.recallConfig,
  )
  const candidates: { id: string; text: string }[] = []
  for (const h of hits) {
    if (h.doc.type !== 'memory') continue
    const m = await ctx.store.getMemory(h.doc.id)
    // Stated kinds only (a summary or procedure is not a claim to retire), current, this user's (and agent's, under isolation).
    if (
      !m ||
      !MEMORY_KINDS.includes(m.kind) ||
      m.validTo !== undefined ||
      m.user !== ctx.access.user ||
      (ctx.access.agentScope === 'own' && m.agent !== agent)
    )
      continue
    // The store supersedes a memory of the same kind and subject key itself, at derivation, so that a forgotten middle
    // version relinks the chain as a rebuild would: an id written into the event would pin the link to that version.
    if (subject !== undefined && m.kind === kind && subjectKey(m.text) === subject) return undefined
    // The same text again is a duplicate, not a new version.
    if (contentKey(m.kind, m.text) === key) continue
    candidates.push({ id: m.id, text: m.text })
  }
  return findContradicted(text, candidates)?.id
}

/** `MnemoEngine.forget`. */
/** What `forget` did: the item, the events deleted, other records of the same step, and for a memory the version it brought back or the versions it took. */
export interface ForgetResult {
  id: string
  type: 'observation' | 'memory'
  events: number
  alsoRecorded: string[]
  /** The older version that is current again because the newest one was forgotten (without `chain`); absent when none. */
  restored?: { id: string; text: string }
  /** With `chain`: the ids of every version forgotten, oldest first. */
  versions?: string[]
}

export async function forget(ctx: EngineContext, id: string, actor: string, options: { chain?: boolean } = {}): Promise<ForgetResult> {
  const prefix = idPrefix(id)
  if (prefix !== 'obs' && prefix !== 'mem')
    throw invalidInput('id', `expected an observation (obs_…) or memory (mem_…) id (got ${JSON.stringify(id)})`)
  const kind = prefix === 'obs' ? 'observation' : 'memory'
  const seq = await ctx.store.sourceEventOf(id)
  const row = prefix === 'obs' ? await ctx.store.getObservation(id) : await ctx.store.getMemory(id)
  if (seq === undefined || !row || !ctx.access.sees(row, 'sessionId' in row ? await observationAgent(ctx, row) : undefined))
    throw new MnemoError('NOT_FOUND', `no ${kind} with id ${id}`, { details: { kind, id } })
  ctx.access.assertOwn(row)
  let events: number
  let alsoRecorded: string[] = []
  let restored: ForgetResult['restored']
  let versions: string[] | undefined
  if (prefix === 'mem') {
    const memory = row as Memory
    if (options.chain) {
      // Every version of its chain this engine sees, each one this engine's own to delete.
      const chain = (await ctx.store.memoryHistory(id)).filter((m) => ctx.access.sees(m))
      for (const m of chain) ctx.access.assertOwn(m)
      versions = chain.map((m) => m.id)
    }
    events = await forgetMemoryEvents(ctx.store, versions ?? [id])
    // The newest version gone, the one it superseded is current again: say so, rather than let it come back unseen.
    if (versions === undefined && memory.supersededBy === undefined && memory.supersedes !== undefined) {
      const previous = await ctx.store.getMemory(memory.supersedes)
      if (previous !== undefined && previous.supersededBy === undefined && ctx.access.sees(previous))
        restored = { id: previous.id, text: ctx.readRedact(previous.text) }
    }
  } else {
    // The memories derived from it (a session summary quoting it, a lesson, a procedure step) go too.
    const observation = row as Observation
    // Only the owner's: another user's statement citing this observation is theirs to keep.
    const derived: string[] = []
    for (const m of await derivedMemoryIds(ctx.store, observation.projectId, [id]))
      if ((await ctx.store.getMemory(m))?.user === observation.user) derived.push(m)
    // The step's session by its identity (project root, agent, key), which re-deriving keeps.
    const step = await ctx.store.stepOf(id)
    // Another capture path's copy of a step this record stood for comes in again once the record is gone, exactly as a
    // rebuild would derive it: re-derive its session (the other record may hold other steps, so it is not deleted with
    // this one; matching never crosses sessions, so the rest of the store stays as it is).
    const uncovers = await ctx.store.eventsHaveCopies([seq])
    // The session's title and start come from its first events: forgetting the prompt that titled it (or its first
    // event) re-derives it, so no trace of the forgotten text stays in session lists and context headers.
    const session = await ctx.store.getSession(observation.sessionId)
    const shapedSession =
      session !== undefined &&
      (observation.ts <= session.startedAt ||
        (observation.kind === 'prompt' && oneLine(observation.text, SESSION_TITLE_CHARS) === session.title))
    events = (await ctx.store.deleteEvents({ seqs: [seq] })) + (await forgetMemoryEvents(ctx.store, derived))
    if ((uncovers || shapedSession) && step !== undefined) await ctx.rederiveSession(step.session)
    // Say where else the step is recorded, so a person removing it everywhere can forget those too.
    if (step?.origin !== undefined) {
      alsoRecorded = (
        await ctx.store.stepRecords(step.session, step.origin, {
          ...(observation.sourceRef !== undefined ? { sourceRef: observation.sourceRef } : {}),
          kind: observation.kind,
          text: observation.text,
          ts: observation.ts,
        })
      ).filter((other) => other !== id)
    }
  }
  await ctx.store.audit({ at: ctx.clock.now(), actor, action: 'forget', target: id, count: events })
  return { id, type: kind, events, alsoRecorded, ...(restored ? { restored } : {}), ...(versions ? { versions } : {}) }
}

/** `MnemoEngine.deleteScope`. */
export async function deleteScope(
  ctx: EngineContext,
  scope: { project: Project; session?: string; before?: number },
  actor: string,
): Promise<{ events: number }> {
  let session: Session | undefined
  if (scope.session !== undefined) {
    session = await ctx.store.getSession(scope.session)
    if (!session || !ctx.access.sees(session, session.agent))
      throw new MnemoError('NOT_FOUND', `no session with id ${scope.session}`, { details: { kind: 'session', id: scope.session } })
    if (session.projectId !== scope.project.id) throw invalidInput('session', `${scope.session} is not a session of ${scope.project.name}`)
    ctx.access.assertOwn({ id: session.id, ...(session.user !== undefined ? { user: session.user } : {}) })
  }
  const filter = {
    projectRoot: scope.project.root,
    // A user deletes their own events (shared ones belong to everyone); a store without users, its shared ones; `allUsers`, all.
    // One session: exactly its events, of its agent and its user.
    ...(session
      ? { user: session.user ?? null, sessionKey: session.sessionKey, agent: session.agent }
      : ctx.access.allUsers
        ? {}
        : { user: ctx.access.user ?? null }),
    ...(scope.before !== undefined ? { before: scope.before } : {}),
  }
  // What was derived from the deleted observations (summaries, lessons, statements, procedures) goes with them;
  // a whole-project delete takes mnemo's own events of the project anyway.
  const partial = scope.session !== undefined || scope.before !== undefined
  // Only the memories of the users whose events go: another user's statement citing a deleted observation is theirs to keep.
  const derived: string[] = []
  if (partial) {
    for (const m of await derivedMemoryIds(ctx.store, scope.project.id, await ctx.store.observationIdsOfEvents(filter))) {
      const owner = (await ctx.store.getMemory(m))?.user
      if (session ? owner === session.user : ctx.access.allUsers || owner === ctx.access.user) derived.push(m)
    }
  }
  const events = (await ctx.store.deleteEvents(filter)) + (await forgetMemoryEvents(ctx.store, derived))
  if (events > 0) await ctx.rebuild()
  await ctx.store.audit({
    at: ctx.clock.now(),
    actor,
    action: 'delete',
    target: scope.project.root,
    count: events,
    details: {
      ...(session ? { session: session.id } : {}),
      ...(scope.before !== undefined ? { before: new Date(scope.before).toISOString() } : {}),
    },
  })
  return { events }
}

/**
 * The NOT_FOUND error for a memory id that names no memory this caller sees. An observation id (`obs_…`) gets its own
 * message: pin, archive, edit, move and history take memory ids (`mem_…`), and a user who passes one from recall's
 * hits should learn why it is refused rather than read that it does not exist.
 */
export function noMemory(id: string): MnemoError {
  const message =
    idPrefix(id) === 'obs'
      ? `${id} is an observation, not a memory: this takes a memory id (mem_…); remember the observation's text to make a memory of it`
      : `no memory with id ${id}`
  return new MnemoError('NOT_FOUND', message, { details: { kind: 'memory', id } })
}

/** `MnemoEngine.setMemoryState`. */
export async function setMemoryState(ctx: EngineContext, id: string, op: 'pin' | 'unpin' | 'archive' | 'restore'): Promise<Memory> {
  const memory = await ctx.store.getMemory(id)
  const project = memory && (await ctx.store.getProject(memory.projectId))
  if (!memory || !project || !ctx.access.sees(memory)) throw noMemory(id)
  await assertCurrent(ctx, memory)
  ctx.access.assertOwn(memory)
  if (op === 'archive' && memory.pinned) {
    throw new MnemoError('CONFLICT', `memory ${id} is pinned: pinned memories are never archived; unpin it first`, {
      details: { kind: 'memory', id },
    })
  }
  // Already so: nothing to log.
  const already =
    op === 'pin'
      ? memory.pinned
      : op === 'unpin'
        ? !memory.pinned
        : op === 'archive'
          ? memory.archivedAt !== undefined
          : memory.archivedAt === undefined
  if (already) return { ...memory, text: ctx.readRedact(memory.text) }
  await ctx.append([memoryOpEvent({ root: project.root, name: project.name }, op, id, ctx.clock.now(), memory.user)])
  const changed = (await ctx.store.getMemory(id))!
  return { ...changed, text: ctx.readRedact(changed.text) }
}

/** `MnemoEngine.editMemory`. */
export async function editMemory(ctx: EngineContext, id: string, text: string, actor: string): Promise<Memory> {
  const old = await ctx.store.getMemory(id)
  const project = old && (await ctx.store.getProject(old.projectId))
  if (!old || !project || !ctx.access.sees(old)) throw noMemory(id)
  if (repairUnicode(text).trim() === old.text && old.validTo === undefined) return { ...old, text: ctx.readRedact(old.text) }
  if (old.kind === 'summary' || old.kind === 'procedure') {
    throw invalidInput(
      'id',
      `${id} is a ${old.kind === 'summary' ? 'session summary' : 'procedure'}: consolidation rewrites it; edit a fact, decision, preference or lesson`,
    )
  }
  const { memory } = await remember(ctx, text, { kind: old.kind, project: { root: project.root, name: project.name }, supersedes: id })
  await ctx.store.audit({ at: ctx.clock.now(), actor, action: 'edit', target: id, count: 1, details: { newVersion: memory.id } })
  // A correction keeps what the person decided about the memory: pinned stays pinned.
  return old.pinned && !memory.pinned ? await setMemoryState(ctx, memory.id, 'pin') : { ...memory, text: ctx.readRedact(memory.text) }
}

/** `MnemoEngine.move`. */
export async function move(ctx: EngineContext, id: string, to: 'user' | ProjectRef): Promise<{ memory: Memory; from: string }> {
  const old = await ctx.store.getMemory(id)
  if (!old || !ctx.access.sees(old)) throw noMemory(id)
  if (old.validTo !== undefined)
    throw new MnemoError('CONFLICT', `${id} is not current (replaced by ${old.supersededBy ?? 'a newer version'}); move the current one`, {
      details: { kind: 'memory', id },
    })
  ctx.access.assertOwn(old)
  const target = to === 'user' ? userProject(ctx.access.user) : to
  if ((await ctx.store.getProject(old.projectId))?.root === target.root) throw invalidInput('to', `${id} is already in ${target.name}`)
  // The whole chain moves, oldest version first, each new copy superseding the one before it: forgetting the current
  // version alone would make the version it superseded current again where it was (a retired fact back in context).
  const chain = await ctx.store.memoryHistory(id)
  for (const version of chain) ctx.access.assertOwn(version)
  let memory: Memory | undefined
  for (const version of chain) {
    ;({ memory } = await remember(ctx, version.text, {
      kind: version.kind,
      ...(to === 'user' ? { scope: 'user' as const } : { project: to }),
      ...(version.agent !== undefined ? { agent: version.agent } : {}),
      ...(memory !== undefined ? { supersedes: memory.id } : {}),
    }))
  }
  await forget(ctx, id, 'move', { chain: true })
  // What the person decided about the memory moves with it: pinned stays pinned.
  if (old.pinned && !memory!.pinned) memory = await setMemoryState(ctx, memory!.id, 'pin')
  return { memory: memory!, from: id }
}

/** The agent of an observation's session (for the agent scope). */
export async function observationAgent(ctx: Pick<EngineContext, 'store'>, o: { sessionId: SessionId }): Promise<AgentName | undefined> {
  return (await ctx.store.getSession(o.sessionId))?.agent
}

/** @throws {MnemoError} `CONFLICT` — `memory` was superseded: the message names the current version. */
async function assertCurrent(ctx: Pick<EngineContext, 'store'>, memory: Memory): Promise<void> {
  if (memory.validTo === undefined) return
  const current = (await ctx.store.memoryHistory(memory.id)).find((m) => m.validTo === undefined)
  throw new MnemoError('CONFLICT', `memory ${memory.id} was superseded${current ? ` by ${current.id}` : ''}: change the current version`, {
    details: { kind: 'memory', id: current?.id ?? memory.id },
  })
}
