import { toIso } from '../../core/clock.js'
import { truncateGraphemes } from '../../core/text.js'
import { invalidInput, MnemoError } from '../../core/errors.js'
import {
  ALL_MEMORY_KINDS,
  MIN_CONTEXT_BUDGET,
  OBSERVATION_KINDS,
  tierOf,
  type Memory,
  type MemoryKind,
  type ProjectRef,
} from '../../core/types.js'
import type { z } from 'zod'
import { fromHitJson, toMemoryJson, toObservationJson, toSessionJson } from '../../engine/view-mappers.js'
import type { hitJson, sessionJson } from '../../engine/views.js'
import type { CliIo, GlobalOptions } from './program.js'
import { counted, formatHits, hitToJson, printJson, type Out } from './output.js'
import { parseChannels, parseIntOption, parseTimeOption, readTextArgument, readScope, teamTarget, withMnemo } from './cli-kit.js'

// CLI commands that read and change memory: recall, remember, forget, pin/archive, history, sessions, show, context.

export async function recall(
  io: CliIo,
  out: Out,
  query: string,
  o: GlobalOptions & {
    project?: string
    allProjects?: boolean
    kind?: string
    session?: string
    limit?: string
    channels?: string
    explain?: boolean
    asOf?: string
    includeArchived?: boolean
  },
): Promise<void> {
  const limit = parseIntOption('limit', o.limit, 1, 100) ?? 10
  const channels = parseChannels(o.channels)
  const kinds = parseKinds(o.kind, [...OBSERVATION_KINDS, ...ALL_MEMORY_KINDS])
  const asOf = parseTimeOption('as-of', o.asOf)
  const team = await teamTarget(io, o)
  if (team) {
    // The team's memory is on the server: recall there, as agents do.
    if (kinds !== undefined)
      throw invalidInput('kind', "--kind is not available in team mode (the server's recall route has no such option)")
    if (o.allProjects)
      throw invalidInput(
        'all-projects',
        "--all-projects is not available in team mode: the server recalls in one project (--project, or this folder's)",
      )
    if (asOf !== undefined || o.includeArchived)
      throw invalidInput(
        asOf !== undefined ? 'as-of' : 'include-archived',
        `--${asOf !== undefined ? 'as-of' : 'include-archived'} is not available in team mode (the server's recall route has no such option)`,
      )
    const r = (await team.remoteJson(team.remote, 'POST', '/v1/recall', {
      query,
      project: team.project,
      limit,
      explain: true,
      ...(o.session ? { session: o.session } : {}),
      ...(channels ? { channels } : {}),
    })) as { query: string; hits: z.output<typeof hitJson>[]; warnings: string[] }
    const hits = r.hits.map(fromHitJson)
    if (out.json) printJson(out, { query, hits: hits.map((h) => hitToJson(h, o.explain === true)), warnings: r.warnings })
    else out.stdout(formatHits(hits, o.explain === true))
    for (const w of r.warnings) out.stderr(`warning: ${w}\n`)
    return
  }
  await withMnemo(io, o, async (m) => {
    const scope = await readScope(m, io, o)
    const ids = scope.projectIds
    // A session that does not exist is an error, not an empty result.
    if (o.session !== undefined && (await m.engine.show(o.session)).type !== 'session')
      throw invalidInput('session', `--session needs a session id (ses_…) (got ${JSON.stringify(o.session)})`)
    const hits = await m.engine.recall(query, {
      limit,
      ...(ids ? { projectIds: ids as never } : {}),
      ...(o.session ? { sessionId: o.session as never } : {}),
      ...(channels ? { channels } : {}),
      ...(asOf !== undefined ? { asOf } : {}),
      ...(o.includeArchived ? { includeArchived: true } : {}),
      ...(kinds ? { kinds } : {}),
    })
    const warnings = [...hits.warnings, ...(scope.note ? [scope.note] : [])]
    if (out.json) printJson(out, { query, hits: hits.map((h) => hitToJson(h, o.explain === true)), warnings })
    else out.stdout(formatHits(hits, o.explain === true))
    for (const w of warnings) out.stderr(`warning: ${w}\n`)
  })
}

/**
 * `mnemo remember <words…>`: the words joined by spaces (`remember we deploy on Fridays`), or stdin for `-`
 * or no words. Says which project it used, and when the stored text differs from what was given: a secret
 * replaced by a placeholder, or text flagged as reading like instructions to an agent.
 */
export async function remember(
  io: CliIo,
  out: Out,
  words: readonly string[],
  o: GlobalOptions & { project?: string; kind?: string; supersedes?: string; scope?: string },
): Promise<void> {
  if (o.scope !== undefined && o.scope !== 'project' && o.scope !== 'user')
    throw invalidInput('scope', `--scope must be project or user (got ${JSON.stringify(o.scope)})`)
  if (o.scope === 'user' && o.project !== undefined)
    throw invalidInput('scope', '--scope user names no project: a user memory applies in every project (drop --project)')
  const text = await readTextArgument(io, words, 'remember')
  if (io.env['MNEMO_SERVER_URL']) {
    await rememberRemote(io, out, text, o)
    return
  }
  await withMnemo(io, o, async (m) => {
    const project: ProjectRef | undefined = o.project === undefined ? undefined : await m.engine.projectForWrite(o.project)
    const { memory, created } = await m.engine.remember(text, {
      kind: (o.kind ?? 'fact') as MemoryKind,
      ...(project ? { project } : {}),
      ...(o.supersedes ? { supersedes: o.supersedes } : {}),
      ...(o.scope === 'user' ? { scope: 'user' as const } : {}),
    })
    const stored = (await m.engine.listProjects()).find((p) => p.id === memory.projectId)
    if (out.json) printJson(out, { created, memory: toMemoryJson(memory, stored) })
    else {
      out.stdout(
        `${created ? 'remembered' : 'already remembered'} ${memory.id} [${memory.kind}] in project ${stored?.name ?? memory.projectId}${stored ? ` (${stored.root})` : ''}${memory.supersedes ? `, superseding ${memory.supersedes}` : ''}${memory.seenCount > 1 ? ` (seen ${memory.seenCount}×)` : ''}\n`,
      )
      for (const note of writeNotes(text, memory)) out.stderr(`${note}\n`)
    }
  })
}

const PLACEHOLDERS = /\[(?:REDACTED(?::[\w-]+)?|PRIVATE)\]/g

/** What a person should know about a memory as stored: secrets it no longer holds, flags it carries. */
function writeNotes(given: string, memory: Pick<Memory, 'text' | 'flags'>): string[] {
  const notes: string[] = []
  const added = (memory.text.match(PLACEHOLDERS)?.length ?? 0) - (given.match(PLACEHOLDERS)?.length ?? 0)
  if (added > 0)
    notes.push(
      `note: ${added} secret${added === 1 ? ' was' : 's were'} replaced by a placeholder before storing (${[...new Set(memory.text.match(PLACEHOLDERS))].join(', ')})`,
    )
  if (memory.flags.length > 0)
    notes.push(
      `warning: flagged ${memory.flags.join(', ')}: it reads like instructions to an agent, so it is searchable but never injected into context`,
    )
  return notes
}

/** Parses `--kind a,b` against the kinds allowed. */
function parseKinds<K extends string>(value: string | undefined, allowed: readonly K[]): K[] | undefined {
  if (value === undefined) return undefined
  const kinds = value
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k.length > 0)
  const bad = kinds.filter((k) => !(allowed as readonly string[]).includes(k))
  if (kinds.length === 0 || bad.length > 0)
    throw invalidInput('kind', `--kind takes a comma-separated list of ${[...new Set(allowed)].join(', ')} (got ${JSON.stringify(value)})`)
  return kinds as K[]
}

/** `mnemo memories`: a project's memories (or every project's) by tier, kind and state, as REST GET /v1/memories. */
export async function memories(
  io: CliIo,
  out: Out,
  o: GlobalOptions & { project?: string; allProjects?: boolean; kind?: string; tier?: string; state?: string; limit?: string },
): Promise<void> {
  const limit = parseIntOption('limit', o.limit, 1, 1000) ?? 50
  const tier = o.tier ?? 'all'
  const kinds = (parseKinds(o.kind, ALL_MEMORY_KINDS) ?? ALL_MEMORY_KINDS).filter((k) => tier === 'all' || tierOf(k) === tier)
  await withMnemo(io, o, async (m) => {
    const scope = await readScope(m, io, o)
    const projects = await m.engine.listProjects()
    const ids = scope.projectIds ?? projects.map((p) => p.id)
    const page =
      kinds.length === 0 || ids.length === 0
        ? { memories: [], total: 0 }
        : await m.engine.browseMemories({ projectIds: ids as never, kinds, state: (o.state ?? 'current') as 'current', offset: 0, limit })
    if (out.json) {
      printJson(out, {
        memories: page.memories.map((x) =>
          toMemoryJson(
            x,
            projects.find((p) => p.id === x.projectId),
          ),
        ),
        total: page.total,
      })
      return
    }
    if (scope.note) out.stderr(`warning: ${scope.note}\n`)
    if (page.memories.length === 0) out.stdout('no memories\n')
    for (const x of page.memories) {
      const facts = [
        x.pinned ? 'pinned' : '',
        x.archivedAt !== undefined ? 'archived' : '',
        x.validTo !== undefined ? `superseded by ${x.supersededBy ?? '?'}` : '',
        ...x.flags.map((f) => `flagged ${f}`),
      ].filter((f) => f !== '')
      out.stdout(
        `${x.id}  [${x.kind}]  ${toIso(x.createdAt)}  ${projects.find((p) => p.id === x.projectId)?.name ?? x.projectId}${facts.length > 0 ? `  (${facts.join(', ')})` : ''}\n    ${x.text.replace(/\s+/g, ' ').slice(0, 200)}\n`,
      )
    }
    if (page.total > page.memories.length) out.stdout(`… ${page.total - page.memories.length} more (--limit)\n`)
  })
}

/** `mnemo edit <id> <words…>`: a hand correction, stored as a new version that supersedes the memory (as REST PATCH). */
export async function edit(io: CliIo, out: Out, id: string, words: readonly string[], o: GlobalOptions): Promise<void> {
  const text = await readTextArgument(io, words, 'edit')
  await withMnemo(io, o, async (m) => {
    const memory = await m.engine.editMemory(id, text, 'cli')
    const project = (await m.engine.listProjects()).find((p) => p.id === memory.projectId)
    if (out.json) printJson(out, { memory: toMemoryJson(memory, project) })
    else if (memory.id === id) {
      // The same text as the current version: editMemory stored nothing.
      out.stdout(`${id} already says that: nothing changed\n`)
    } else {
      out.stdout(
        `edited ${id}: new version ${memory.id} [${memory.kind}] in project ${project?.name ?? memory.projectId} (mnemo history ${memory.id} shows both)\n`,
      )
      for (const note of writeNotes(text, memory)) out.stderr(`${note}\n`)
    }
  })
}

/**
 * `remember` in team mode: `POST /v1/memories` on the server, for the project
 * given or the project of the working directory (its git top-level folder).
 * Nothing is stored locally; an unreachable server is an error (exit 1), not
 * spooled: the user is there to see it.
 */
async function rememberRemote(
  io: CliIo,
  out: Out,
  text: string,
  o: GlobalOptions & { project?: string; kind?: string; supersedes?: string; scope?: string },
): Promise<void> {
  if (o.supersedes)
    throw invalidInput(
      'supersedes',
      '--supersedes is not available in team mode (the server API has no supersedes); the server supersedes by subject on its own',
    )
  const { remote, project, remoteJson } = (await teamTarget(io, o))!
  const r = (await remoteJson(remote, 'POST', '/v1/memories', {
    text,
    kind: o.kind ?? 'fact',
    ...(o.scope === 'user' ? { scope: 'user' } : { project }),
  })) as { created: boolean; memory: { id: string; kind: string; project: string | null; supersedes: string | null; seenCount: number } }
  if (out.json) printJson(out, r)
  else
    out.stdout(
      `${r.created ? 'remembered' : 'already remembered'} ${r.memory.id} [${r.memory.kind}] on ${remote.url} (project ${r.memory.project ?? project})${r.memory.supersedes ? `, superseding ${r.memory.supersedes}` : ''}${r.memory.seenCount > 1 ? ` (seen ${r.memory.seenCount}×)` : ''}\n`,
    )
}

export async function forget(
  io: CliIo,
  out: Out,
  id: string | undefined,
  o: GlobalOptions & { project?: string; session?: string; before?: string; yes?: boolean; chain?: boolean },
): Promise<void> {
  const before = parseTimeOption('before', o.before)
  if (id !== undefined && (o.project !== undefined || o.session !== undefined || before !== undefined)) {
    throw invalidInput('id', 'give either an id or a scope (--project with --session/--before), not both')
  }
  if (id === undefined && o.project === undefined) throw invalidInput('project', 'forget needs an id (obs_…/mem_…) or --project')
  await withMnemo(io, o, async (m) => {
    if (id !== undefined) {
      if (id.startsWith('ses_')) {
        // A session goes with the scoped delete, which says what it removes and asks for --yes.
        let project = '<project>'
        try {
          const shown = await m.engine.show(id)
          if (shown.type === 'session') project = shown.detail.project?.name ?? project
        } catch (error) {
          if (!MnemoError.is(error, 'NOT_FOUND')) throw error
        }
        throw invalidInput(
          'id',
          `forget <id> takes an observation (obs_…) or memory (mem_…) id; ${id} is a session`,
          `to delete the whole session: mnemo forget --project ${JSON.stringify(project)} --session ${id} --yes`,
        )
      }
      const r = await m.engine.forget(id, 'cli', { chain: o.chain === true })
      if (out.json) printJson(out, { forgotten: r })
      else {
        out.stdout(
          r.versions && r.versions.length > 1
            ? `forgot memory ${r.id} and every version of it: ${r.versions.join(', ')}\n`
            : `forgot ${r.type} ${r.id}\n`,
        )
        if (r.restored)
          out.stdout(
            `the previous version ${r.restored.id} is current again: ${JSON.stringify(truncateGraphemes(r.restored.text, 120))}\n(forget ${r.restored.id} too, or run mnemo forget ${r.id} --chain next time, to remove every version)\n`,
          )
        if (r.alsoRecorded.length > 0)
          out.stdout(
            `the same step is also recorded by another capture path: ${r.alsoRecorded.join(', ')} (forget ${r.alsoRecorded.length === 1 ? 'it' : 'them'} too to remove it everywhere)\n`,
          )
      }
      return
    }
    const projects = await m.engine.resolveProjects(o.project!)
    if (projects.length !== 1)
      throw invalidInput('project', `--project ${JSON.stringify(o.project)} matches ${projects.length} projects; give its path`)
    const project = projects[0]!
    if (o.session !== undefined) {
      const shown = await m.engine.show(o.session)
      if (shown.type !== 'session' || shown.detail.session.projectId !== project.id)
        throw invalidInput('session', `${o.session} is not a session of ${project.name}`)
    }
    if (!o.yes)
      throw invalidInput(
        'yes',
        `this deletes ${o.session !== undefined ? 'a session' : before !== undefined ? 'everything before that time' : 'everything'} in ${project.name} for good; add --yes to confirm`,
      )
    const r = await m.engine.deleteScope(
      { project, ...(o.session !== undefined ? { session: o.session } : {}), ...(before !== undefined ? { before } : {}) },
      'cli',
    )
    if (out.json) printJson(out, { deleted: { project: project.name, ...r } })
    else out.stdout(`deleted ${r.events} event(s) from ${project.name} (audit record written)\n`)
  })
}

export async function memoryState(
  io: CliIo,
  out: Out,
  id: string,
  op: 'pin' | 'unpin' | 'archive' | 'restore',
  o: GlobalOptions,
): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const memory = await m.engine.setMemoryState(id, op)
    if (out.json)
      printJson(out, {
        memory: toMemoryJson(
          memory,
          (await m.engine.listProjects()).find((p) => p.id === memory.projectId),
        ),
      })
    else out.stdout(`${op}: ${memory.id}${memory.pinned ? ' (pinned)' : ''}${memory.archivedAt ? ' (archived)' : ''}\n`)
  })
}

export async function history(io: CliIo, out: Out, id: string, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const chain = await m.engine.history(id)
    if (out.json) {
      const projects = await m.engine.listProjects()
      printJson(out, {
        versions: chain.map((v) =>
          toMemoryJson(
            v,
            projects.find((p) => p.id === v.projectId),
          ),
        ),
      })
      return
    }
    for (const v of chain)
      out.stdout(`${v.id}  ${toIso(v.validFrom)} → ${v.validTo === undefined ? 'current' : toIso(v.validTo)}  [${v.kind}]  ${v.text}\n`)
  })
}

/**
 * `mnemo sessions`: sessions newest first, of one project by the rule every read follows (`readScope`: `--project`,
 * else the working directory's project; `--all-projects` for every project), at most `--limit` (1–1000, default 50).
 */
export async function sessions(
  io: CliIo,
  out: Out,
  o: GlobalOptions & { project?: string; allProjects?: boolean; limit?: string },
): Promise<void> {
  const limit = parseIntOption('limit', o.limit, 1, 1000) ?? 50
  const team = await teamTarget(io, o)
  if (team) {
    if (limit > 200) throw invalidInput('limit', `--limit is at most 200 in team mode (got ${limit})`)
    const query = new URLSearchParams({ project: team.project, limit: String(limit) })
    const r = (await team.remoteJson(team.remote, 'GET', `/v1/sessions?${query}`)) as { sessions: z.output<typeof sessionJson>[] }
    if (out.json) printJson(out, r)
    else {
      if (r.sessions.length === 0) out.stdout('no sessions\n')
      for (const s of r.sessions) {
        out.stdout(
          `${s.id}  ${s.startedAt}  ${s.project ?? s.projectId}  ${s.agent}${s.user ? `  user ${s.user}` : ''}  ${s.observations} obs${s.endedAt ? '  ended' : ''}\n`,
        )
        if (s.title) out.stdout(`    ${s.title}\n`)
      }
    }
    return
  }
  await withMnemo(io, o, async (m) => {
    const scope = await readScope(m, io, o)
    const ids = scope.projectIds
    const list = await m.engine.sessions({ limit, ...(ids ? { projectIds: ids as never } : {}) })
    const names = new Map((await m.engine.listProjects()).map((p) => [p.id as string, p.name]))
    if (out.json) {
      const projects = await m.engine.listProjects()
      printJson(out, {
        sessions: list.map((s) =>
          toSessionJson(
            s,
            projects.find((p) => p.id === s.projectId),
          ),
        ),
      })
      return
    }
    if (scope.note) out.stderr(`warning: ${scope.note}\n`)
    if (list.length === 0) out.stdout('no sessions\n')
    for (const s of list) {
      out.stdout(
        `${s.id}  ${toIso(s.startedAt)}  ${names.get(s.projectId) ?? s.projectId}  ${s.agent}${s.user !== undefined ? `  user ${s.user}` : ''}  ${s.observationCount} obs${s.endedAt ? '  ended' : ''}\n`,
      )
      if (s.title) out.stdout(`    ${s.title}\n`)
    }
  })
}

export async function show(io: CliIo, out: Out, id: string, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const r = await m.engine.show(id)
    if (r.type === 'observation') {
      if (out.json)
        printJson(out, { type: r.type, project: r.project?.name ?? null, observation: toObservationJson(r.observation, r.project) })
      else {
        const ob = r.observation
        out.stdout(
          `${ob.id}  ${ob.kind}  ${ob.role}${ob.tool ? `  ${ob.tool}` : ''}  ${toIso(ob.ts)}\nproject ${r.project?.name ?? ob.projectId} · session ${ob.sessionId}${ob.sourceRef ? ` · ref ${ob.sourceRef}` : ''}\n`,
        )
        if (ob.files.length > 0) out.stdout(`files: ${ob.files.join(', ')}\n`)
        out.stdout(`\n${ob.text}\n`)
      }
    } else if (r.type === 'memory') {
      if (out.json) printJson(out, { type: r.type, project: r.project?.name ?? null, memory: toMemoryJson(r.memory, r.project) })
      else {
        const m = r.memory
        const facts = [
          m.confidence !== undefined ? `confidence ${m.confidence}` : m.kind === 'summary' || m.kind === 'procedure' ? '' : 'stated',
          m.pinned ? 'pinned' : '',
          m.archivedAt !== undefined ? `archived ${toIso(m.archivedAt)}` : '',
          m.validTo !== undefined ? `superseded ${toIso(m.validTo)} by ${m.supersededBy ?? '?'}` : '',
          m.sources.length > 0 ? `${m.sources.length} source(s)` : '',
        ].filter((f) => f !== '')
        out.stdout(
          `${m.id}  [${m.kind}]  ${toIso(m.createdAt)}  project ${r.project?.name ?? m.projectId}${facts.length > 0 ? `  (${facts.join(', ')})` : ''}\n\n${m.text}\n`,
        )
      }
    } else {
      const d = r.detail
      if (out.json) {
        printJson(out, {
          type: r.type,
          session: toSessionJson(d.session, d.project),
          observations: d.observations.map((o) => toObservationJson(o, d.project)),
        })
        return
      }
      out.stdout(
        `${d.session.id}  ${d.session.agent}  project ${d.project?.name ?? d.session.projectId}  ${toIso(d.session.startedAt)} → ${toIso(d.session.lastEventAt)}\n`,
      )
      for (const ob of d.observations) {
        const line = ob.text.replace(/\s+/g, ' ').slice(0, 160)
        out.stdout(`  ${toIso(ob.ts)}  ${ob.id}  ${ob.kind.padEnd(11)} ${line}\n`)
      }
    }
  })
}

export async function context(io: CliIo, out: Out, o: GlobalOptions & { project?: string; budget?: string }): Promise<void> {
  const budget = parseIntOption('budget', o.budget, MIN_CONTEXT_BUDGET, 100_000)
  const team = await teamTarget(io, o)
  if (team) {
    const query = new URLSearchParams({ project: team.project, ...(budget !== undefined ? { budget: String(budget) } : {}) })
    const block = (await team.remoteJson(team.remote, 'GET', `/v1/context?${query}`)) as {
      text: string
      tokens: number
      budgetTokens: number
      memoryIds: string[]
      sessionIds: string[]
      omitted: number
    }
    if (out.json) printJson(out, block)
    else {
      out.stdout(`${block.text}\n`)
      out.stderr(
        `(${block.tokens} of ${block.budgetTokens} tokens; ${counted(block.memoryIds.length, 'memory', 'memories')}, ${counted(block.sessionIds.length, 'session')}, ${block.omitted} omitted; from ${team.remote.url})\n`,
      )
    }
    return
  }
  await withMnemo(io, o, async (m) => {
    const project = o.project === undefined ? undefined : await m.engine.projectForWrite(o.project, { create: false })
    const block = await m.engine.context({ ...(project ? { project } : {}), ...(budget !== undefined ? { budgetTokens: budget } : {}) })
    if (out.json) printJson(out, block)
    else if (block.text === '') out.stderr(`(nothing recorded yet for project ${block.project}: no context block is injected)\n`)
    else out.stdout(`${block.text}\n`)
    if (!out.json && block.text !== '')
      out.stderr(
        `(${block.tokens} of ${block.budgetTokens} tokens; ${counted(block.memoryIds.length, 'memory', 'memories')}, ${counted(block.sessionIds.length, 'session')}, ${block.omitted} omitted)\n`,
      )
  })
}

/** `mnemo move <id> --to user|project [--project P]`: a memory becomes the user's own (every project) or a project's. */
export async function move(io: CliIo, out: Out, id: string, o: GlobalOptions & { to?: string; project?: string }): Promise<void> {
  if (o.to !== 'user' && o.to !== 'project') throw invalidInput('to', `--to must be user or project (got ${JSON.stringify(o.to)})`)
  if (o.to === 'user' && o.project !== undefined) throw invalidInput('project', '--to user names no project: drop --project')
  await withMnemo(io, o, async (m) => {
    const to = o.to === 'user' ? ('user' as const) : await m.engine.projectForWrite(o.project ?? '.')
    const r = await m.engine.move(id, to)
    const where = (await m.engine.listProjects()).find((p) => p.id === r.memory.projectId)
    if (out.json) printJson(out, { moved: r.from, memory: toMemoryJson(r.memory, where) })
    else out.stdout(`moved ${r.from} → ${r.memory.id} (${o.to === 'user' ? 'yours, every project' : `project ${where?.name ?? '?'}`})\n`)
  })
}
