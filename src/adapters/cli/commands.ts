import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { toIso } from '../../core/clock.js'
import { invalidInput, MnemoError } from '../../core/errors.js'
import { SURFACE_AGENTS, type AgentName, type MemoryKind, type Project, type ProjectRef } from '../../core/types.js'
import type { z } from 'zod'
import { fromHitJson, toMemoryJson, toObservationJson, toSessionJson, type hitJson, type sessionJson } from '../shared/views.js'
import type { RemoteServer } from '../../runtime/remote-server.js'
import { MIN_CONTEXT_BUDGET } from '../../context/context-block.js'
import { CHANNEL_NAMES, type ChannelName } from '../../retrieval/fusion.js'
import { toImportFormat } from '../../engine/import-files.js'
import { openMnemo, type OpenedMnemo } from '../../runtime/open-mnemo.js'
import { applyConnectPlan, disconnectClaudeCode, planClaudeCodeConnect, renderPlanDiff, type ConnectPlan } from '../connect/claude-code.js'
import { planCodexConnect, planCodexDisconnect } from '../connect/codex.js'
import { applyAgentConnectPlan, renderAgentPlanDiff, type AgentConnectPlan, type AgentConnectOptions, type AgentDisconnectOptions } from '../connect/config-files.js'
import { planCursorConnect, planCursorDisconnect } from '../connect/cursor.js'
import { checkAgents } from '../connect/doctor.js'
import { planGeminiConnect, planGeminiDisconnect } from '../connect/gemini.js'
import { planOpenCodeConnect, planOpenCodeDisconnect } from '../connect/opencode.js'
import type { CliIo, GlobalOptions } from './program.js'
import {
  formatHits,
  formatImport,
  hitToJson,
  printJson,
  type Out,
} from './output.js'

// The built CLI, whether this module runs from dist/ or (in tests) from src/: both are three levels below the package root.
const CLI_PATH = fileURLToPath(new URL('../../../dist/adapters/cli/main.js', import.meta.url))
const DEMO_SESSION = fileURLToPath(new URL('../../../fixtures/demo/claude-code-session.jsonl', import.meta.url))

/**
 * Opens mnemo for one command, drains the hook spool, runs `fn`, closes. In
 * team mode (`MNEMO_SERVER_URL`) the spool holds events for the server, and
 * only the next hook sends them there: never drained into the local store.
 */
async function withMnemo<T>(io: CliIo, o: GlobalOptions, fn: (m: OpenedMnemo) => T | Promise<T>): Promise<T> {
  const m = openMnemo({ env: io.env, cwd: io.cwd, ...(o.home ? { home: o.home } : {}), ...(o.allUsers ? { allUsers: true } : {}) })
  try {
    if (!io.env['MNEMO_SERVER_URL']) m.drainSpool()
    return await fn(m)
  } finally {
    m.close()
  }
}

function parseIntOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isInteger(n) || n < min || n > max) {
    throw invalidInput(name, `--${name} must be an integer ${min}–${max} (got ${JSON.stringify(value)})`)
  }
  return n
}

/** Parses `--channels bm25,vector` into channel names. */
function parseChannels(value: string | undefined): ChannelName[] | undefined {
  if (value === undefined) return undefined
  const names = value.split(',').map((s) => s.trim()).filter((s) => s.length > 0)
  const bad = names.filter((n) => !(CHANNEL_NAMES as readonly string[]).includes(n))
  if (names.length === 0 || bad.length > 0) {
    throw invalidInput('channels', `--channels takes a comma-separated list of ${CHANNEL_NAMES.join(', ')} (got ${JSON.stringify(value)})`)
  }
  return names as ChannelName[]
}

function projectIds(m: OpenedMnemo, project: string | undefined): string[] | undefined {
  return project === undefined ? undefined : m.engine.resolveProjects(project).map((p) => p.id)
}

export async function recall(
  io: CliIo,
  out: Out,
  query: string,
  o: GlobalOptions & { project?: string; session?: string; limit?: string; channels?: string; explain?: boolean; asOf?: string; includeArchived?: boolean },
): Promise<void> {
  const limit = parseIntOption('limit', o.limit, 1, 100) ?? 10
  const channels = parseChannels(o.channels)
  const asOf = parseTimeOption('as-of', o.asOf)
  const team = await teamTarget(io, o)
  if (team) {
    // The team's memory is on the server: recall there, as agents do.
    if (asOf !== undefined || o.includeArchived) throw invalidInput(asOf !== undefined ? 'as-of' : 'include-archived', `--${asOf !== undefined ? 'as-of' : 'include-archived'} is not available in team mode (the server's recall route has no such option)`)
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
    const ids = projectIds(m, o.project)
    // A session that does not exist is an error, not an empty result.
    if (o.session !== undefined && m.engine.show(o.session).type !== 'session') throw invalidInput('session', `--session needs a session id (ses_…) (got ${JSON.stringify(o.session)})`)
    const hits = await m.engine.recall(query, {
      limit,
      ...(ids ? { projectIds: ids as never } : {}),
      ...(o.session ? { sessionId: o.session as never } : {}),
      ...(channels ? { channels } : {}),
      ...(asOf !== undefined ? { asOf } : {}),
      ...(o.includeArchived ? { includeArchived: true } : {}),
    })
    if (out.json) printJson(out, { query, hits: hits.map((h) => hitToJson(h, o.explain === true)), warnings: m.engine.warnings })
    else out.stdout(formatHits(hits, o.explain === true))
    for (const w of m.engine.warnings) out.stderr(`warning: ${w}\n`)
  })
}

export async function remember(io: CliIo, out: Out, text: string, o: GlobalOptions & { project?: string; kind?: string; supersedes?: string }): Promise<void> {
  if (io.env['MNEMO_SERVER_URL']) {
    await rememberRemote(io, out, text, o)
    return
  }
  await withMnemo(io, o, (m) => {
    const project: ProjectRef | undefined = o.project === undefined ? undefined : m.engine.projectForWrite(o.project)
    const { memory, created } = m.engine.remember(text, { kind: (o.kind ?? 'fact') as MemoryKind, ...(project ? { project } : {}), ...(o.supersedes ? { supersedes: o.supersedes } : {}) })
    if (out.json) printJson(out, { created, memory: toMemoryJson(memory, m.engine.listProjects().find((p) => p.id === memory.projectId)) })
    else out.stdout(`${created ? 'remembered' : 'already remembered'} ${memory.id} [${memory.kind}]${memory.supersedes ? `, superseding ${memory.supersedes}` : ''}${memory.seenCount > 1 ? ` (seen ${memory.seenCount}×)` : ''}\n`)
  })
}

/**
 * `remember` in team mode: `POST /v1/memories` on the server, for the project
 * given or the project of the working directory (its git top-level folder).
 * Nothing is stored locally; an unreachable server is an error (exit 1), not
 * spooled: the user is there to see it.
 */
/**
 * Team mode (`MNEMO_SERVER_URL` set): the server this CLI reads from and
 * writes to, and the project a command means — `--project`, else the
 * working directory's project root, sent as an absolute path as hooks do.
 */
async function teamTarget(io: CliIo, o: GlobalOptions & { project?: string }): Promise<{ remote: RemoteServer; project: string; remoteJson: typeof import('../../runtime/remote-server.js').remoteJson } | undefined> {
  if (!io.env['MNEMO_SERVER_URL']) return undefined
  if (o.allUsers) throw invalidInput('all-users', '--all-users is not available in team mode: the server reads for the user of your token (MNEMO_SERVER_TOKEN)')
  const { resolveConfig } = await import('../../config/config.js')
  const { remoteServer, remoteJson } = await import('../../runtime/remote-server.js')
  const { resolveProjectRoot } = await import('../../capture/project.js')
  const config = resolveConfig(o.home ? { ...io.env, MNEMO_HOME: o.home } : io.env)
  const remote = remoteServer(io.env, config.home)!
  return { remote, project: o.project ?? resolveProjectRoot(io.cwd).root, remoteJson }
}

async function rememberRemote(io: CliIo, out: Out, text: string, o: GlobalOptions & { project?: string; kind?: string; supersedes?: string }): Promise<void> {
  if (o.supersedes) throw invalidInput('supersedes', '--supersedes is not available in team mode (the server API has no supersedes); the server supersedes by subject on its own')
  const { remote, project, remoteJson } = (await teamTarget(io, o))!
  const r = (await remoteJson(remote, 'POST', '/v1/memories', { text, kind: o.kind ?? 'fact', project })) as { created: boolean; memory: { id: string; kind: string; project: string | null; supersedes: string | null; seenCount: number } }
  if (out.json) printJson(out, r)
  else out.stdout(`${r.created ? 'remembered' : 'already remembered'} ${r.memory.id} [${r.memory.kind}] on ${remote.url} (project ${r.memory.project ?? project})${r.memory.supersedes ? `, superseding ${r.memory.supersedes}` : ''}${r.memory.seenCount > 1 ? ` (seen ${r.memory.seenCount}×)` : ''}\n`)
}

/** Parses an ISO-8601 time option into epoch ms. */
function parseTimeOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const ms = Date.parse(value)
  const date = /^(\d{4})-(\d{2})-(\d{2})/.exec(value)
  // Date.parse rolls an impossible day over (2026-02-30 → 2026-03-02): the calendar date must exist as written.
  const exists = date !== null && new Date(Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]))).getUTCDate() === Number(date[3])
  if (!date || !exists || Number.isNaN(ms)) throw invalidInput(name, `--${name} must be an ISO-8601 time like 2026-05-01 or 2026-05-01T12:00:00Z (got ${JSON.stringify(value)})`)
  return ms
}

export async function forget(io: CliIo, out: Out, id: string | undefined, o: GlobalOptions & { project?: string; session?: string; before?: string; yes?: boolean }): Promise<void> {
  const before = parseTimeOption('before', o.before)
  if (id !== undefined && (o.project !== undefined || o.session !== undefined || before !== undefined)) {
    throw invalidInput('id', 'give either an id or a scope (--project with --session/--before), not both')
  }
  if (id === undefined && o.project === undefined) throw invalidInput('project', 'forget needs an id (obs_…/mem_…) or --project')
  await withMnemo(io, o, (m) => {
    if (id !== undefined) {
      const r = m.engine.forget(id, 'cli')
      if (out.json) printJson(out, { forgotten: r })
      else out.stdout(`forgot ${r.type} ${r.id}\n`)
      return
    }
    const projects = m.engine.resolveProjects(o.project!)
    if (projects.length !== 1) throw invalidInput('project', `--project ${JSON.stringify(o.project)} matches ${projects.length} projects; give its path`)
    const project = projects[0]!
    if (o.session !== undefined) {
      const shown = m.engine.show(o.session)
      if (shown.type !== 'session' || shown.detail.session.projectId !== project.id) throw invalidInput('session', `${o.session} is not a session of ${project.name}`)
    }
    if (!o.yes) throw invalidInput('yes', `this deletes ${o.session !== undefined ? 'a session' : before !== undefined ? 'everything before that time' : 'everything'} in ${project.name} for good; add --yes to confirm`)
    const r = m.engine.deleteScope({ project, ...(o.session !== undefined ? { session: o.session } : {}), ...(before !== undefined ? { before } : {}) }, 'cli')
    if (out.json) printJson(out, { deleted: { project: project.name, ...r } })
    else out.stdout(`deleted ${r.events} event(s) from ${project.name} (audit record written)\n`)
  })
}

export async function memoryState(io: CliIo, out: Out, id: string, op: 'pin' | 'unpin' | 'archive' | 'restore', o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, (m) => {
    const memory = m.engine.setMemoryState(id, op)
    if (out.json) printJson(out, { memory: toMemoryJson(memory, m.engine.listProjects().find((p) => p.id === memory.projectId)) })
    else out.stdout(`${op}: ${memory.id}${memory.pinned ? ' (pinned)' : ''}${memory.archivedAt ? ' (archived)' : ''}\n`)
  })
}

export async function history(io: CliIo, out: Out, id: string, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, (m) => {
    const chain = m.engine.history(id)
    if (out.json) {
      const projects = m.engine.listProjects()
      printJson(out, { versions: chain.map((v) => toMemoryJson(v, projects.find((p) => p.id === v.projectId))) })
      return
    }
    for (const v of chain) out.stdout(`${v.id}  ${toIso(v.validFrom)} → ${v.validTo === undefined ? 'current' : toIso(v.validTo)}  [${v.kind}]  ${v.text}\n`)
  })
}

export async function sessions(io: CliIo, out: Out, o: GlobalOptions & { project?: string; limit?: string }): Promise<void> {
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
        out.stdout(`${s.id}  ${s.startedAt}  ${s.project ?? s.projectId}  ${s.agent}${s.user ? `  user ${s.user}` : ''}  ${s.observations} obs${s.endedAt ? '  ended' : ''}\n`)
        if (s.title) out.stdout(`    ${s.title}\n`)
      }
    }
    return
  }
  await withMnemo(io, o, (m) => {
    const ids = projectIds(m, o.project)
    const list = m.engine.sessions({ limit, ...(ids ? { projectIds: ids as never } : {}) })
    const names = new Map(m.engine.listProjects().map((p) => [p.id as string, p.name]))
    if (out.json) {
      const projects = m.engine.listProjects()
      printJson(out, { sessions: list.map((s) => toSessionJson(s, projects.find((p) => p.id === s.projectId))) })
      return
    }
    if (list.length === 0) out.stdout('no sessions\n')
    for (const s of list) {
      out.stdout(`${s.id}  ${toIso(s.startedAt)}  ${names.get(s.projectId) ?? s.projectId}  ${s.agent}${s.user !== undefined ? `  user ${s.user}` : ''}  ${s.observationCount} obs${s.endedAt ? '  ended' : ''}\n`)
      if (s.title) out.stdout(`    ${s.title}\n`)
    }
  })
}

export async function show(io: CliIo, out: Out, id: string, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, (m) => {
    const r = m.engine.show(id)
    if (r.type === 'observation') {
      if (out.json) printJson(out, { type: r.type, project: r.project?.name ?? null, observation: toObservationJson(r.observation, r.project) })
      else {
        const ob = r.observation
        out.stdout(`${ob.id}  ${ob.kind}  ${ob.role}${ob.tool ? `  ${ob.tool}` : ''}  ${toIso(ob.ts)}\nproject ${r.project?.name ?? ob.projectId} · session ${ob.sessionId}${ob.sourceRef ? ` · ref ${ob.sourceRef}` : ''}\n`)
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
        out.stdout(`${m.id}  [${m.kind}]  ${toIso(m.createdAt)}  project ${r.project?.name ?? m.projectId}${facts.length > 0 ? `  (${facts.join(', ')})` : ''}\n\n${m.text}\n`)
      }
    } else {
      const d = r.detail
      if (out.json) {
        printJson(out, { type: r.type, session: toSessionJson(d.session, d.project), observations: d.observations.map((o) => toObservationJson(o, d.project)) })
        return
      }
      out.stdout(`${d.session.id}  ${d.session.agent}  project ${d.project?.name ?? d.session.projectId}  ${toIso(d.session.startedAt)} → ${toIso(d.session.lastEventAt)}\n`)
      for (const ob of d.observations) {
        const line = ob.text.replace(/\s+/g, ' ').slice(0, 160)
        out.stdout(`  ${toIso(ob.ts)}  ${ob.id}  ${ob.kind.padEnd(11)} ${line}\n`)
      }
    }
  })
}

/** A read names a known project (NOT_FOUND otherwise) or a folder, which may have nothing captured yet. */
function contextProject(m: OpenedMnemo, arg: string): ProjectRef {
  if (/[\\/]/.test(arg) || arg === '.' || arg === '..') return m.engine.projectForWrite(arg)
  const [found] = m.engine.resolveProjects(arg)
  return { root: found!.root, name: found!.name }
}

export async function context(io: CliIo, out: Out, o: GlobalOptions & { project?: string; budget?: string }): Promise<void> {
  const budget = parseIntOption('budget', o.budget, MIN_CONTEXT_BUDGET, 100_000)
  const team = await teamTarget(io, o)
  if (team) {
    const query = new URLSearchParams({ project: team.project, ...(budget !== undefined ? { budget: String(budget) } : {}) })
    const block = (await team.remoteJson(team.remote, 'GET', `/v1/context?${query}`)) as { text: string; tokens: number; budgetTokens: number; memoryIds: string[]; sessionIds: string[]; omitted: number }
    if (out.json) printJson(out, block)
    else {
      out.stdout(`${block.text}\n`)
      out.stderr(`(${block.tokens} of ${block.budgetTokens} tokens; ${block.memoryIds.length} memories, ${block.sessionIds.length} sessions, ${block.omitted} omitted; from ${team.remote.url})\n`)
    }
    return
  }
  await withMnemo(io, o, (m) => {
    const project = o.project === undefined ? undefined : contextProject(m, o.project)
    const block = m.engine.context({ ...(project ? { project } : {}), ...(budget !== undefined ? { budgetTokens: budget } : {}) })
    if (out.json) printJson(out, block)
    else out.stdout(`${block.text}\n`)
    if (!out.json) out.stderr(`(${block.tokens} of ${block.budgetTokens} tokens; ${block.memoryIds.length} memories, ${block.sessionIds.length} sessions, ${block.omitted} omitted)\n`)
  })
}

export async function importCmd(io: CliIo, out: Out, target: string, o: GlobalOptions & { format?: string; project?: string }): Promise<void> {
  const format = toImportFormat(o.format)
  const resolved = path.resolve(io.cwd, target)
  await withMnemo(io, o, async (m) => {
    const project = o.project === undefined ? undefined : m.engine.projectForWrite(o.project)
    const report = await m.engine.importPath(resolved, { format, ...(project ? { project } : {}) })
    if (out.json) printJson(out, report)
    else out.stdout(formatImport(report))
  })
}

export async function status(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const { remoteServer, checkRemote } = await import('../../runtime/remote-server.js')
    const remote = remoteServer(io.env, m.config.home)
    const server = remote ? await checkRemote(remote) : null
    const stats = m.engine.stats()
    const errors = m.errors.tail(5)
    const doc = {
      home: m.config.home,
      database: m.config.dbPath,
      counts: { events: stats.events, projects: stats.projects, sessions: stats.sessions, observations: stats.observations, memories: stats.memories },
      bytes: stats.bytes,
      lastCaptureAt: stats.lastEventAt === undefined ? null : toIso(stats.lastEventAt),
      spool: { pending: m.spool.count(), bad: m.spool.badCount(), dir: m.config.spoolDir },
      /** Team mode: where hooks send events, and whether they can now. */
      server,
      errors,
    }
    if (out.json) {
      printJson(out, doc)
      return
    }
    const c = doc.counts
    out.stdout(
      [
        `data directory  ${doc.home}`,
        `database        ${doc.database} (${(doc.bytes / 1024).toFixed(0)} KiB)`,
        `counts          ${c.events} events · ${c.projects} projects · ${c.sessions} sessions · ${c.observations} observations · ${c.memories} memories`,
        `last capture    ${doc.lastCaptureAt ?? 'never'}`,
        `spool           ${doc.spool.pending} pending · ${doc.spool.bad} unreadable (${doc.spool.dir})`,
        ...(server ? [`team server     ${server.url}: ${server.detail}${server.ok ? '' : ' (hooks spool until this is fixed)'}`] : []),
        `recent errors   ${errors.length === 0 ? 'none' : ''}`,
        ...errors.map((e) => `  ${e.at}  ${e.where}  ${e.code}: ${e.message}`),
      ].join('\n') + '\n',
    )
  })
}

export async function rebuild(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, (m) => {
    const r = m.engine.rebuild()
    if (out.json) printJson(out, r)
    else out.stdout(`rebuilt ${r.observations} observations from ${r.events} events\n`)
  })
}

/**
 * `mnemo compact --before <time>`: folds agent capture events older than the
 * time into what they derived (see `MnemoEngine.compact`), then vacuums.
 *
 * @throws {MnemoError} `INVALID_INPUT` — no or a bad `--before`, a `--project` matching several projects.
 */
export async function compact(io: CliIo, out: Out, o: GlobalOptions & { before?: string; project?: string; vacuum?: boolean }): Promise<void> {
  const before = parseTimeOption('before', o.before)
  if (before === undefined) throw invalidInput('before', 'compact needs --before <time>: events older than it are folded (e.g. --before 2026-01-01)')
  await withMnemo(io, o, (m) => {
    let project: Project | undefined
    if (o.project !== undefined) {
      const projects = m.engine.resolveProjects(o.project)
      if (projects.length !== 1) throw invalidInput('project', `--project ${JSON.stringify(o.project)} matches ${projects.length} projects; give its path`)
      project = projects[0]!
    }
    const r = m.engine.compact({ before, ...(project ? { project } : {}), vacuum: o.vacuum !== false }, 'cli')
    if (out.json) printJson(out, r)
    else {
      const kb = (n: number): string => `${(n / 1024).toFixed(1)} KiB`
      out.stdout(
        `folded ${r.events} event(s) before ${new Date(before).toISOString()}${project ? ` in ${project.name}` : ''}: payloads ${kb(r.payloadBytesBefore)} → ${kb(r.payloadBytesAfter)}; ` +
          `database ${kb(r.fileBytesBefore)} → ${kb(r.fileBytesAfter)}\n`,
      )
    }
  })
}

export async function consolidate(io: CliIo, out: Out, o: GlobalOptions & { idleMinutes?: string }): Promise<void> {
  const idle = parseIntOption('idle-minutes', o.idleMinutes, 0, 525_600) ?? 30
  await withMnemo(io, o, async (m) => {
    const r = await m.engine.consolidate({ idleMs: idle * 60_000 })
    if (out.json) printJson(out, r)
    else {
      out.stdout(
        `consolidated ${r.sessions} finished session(s): ${r.summaries} summary(ies), ${r.lessons} lesson(s), ${r.procedures} procedure version(s), ${r.memories} other memory(ies) ` +
          `(model: ${r.via.llm}, deterministic: ${r.via.deterministic}); archived ${r.archived} decayed memory(ies)\n`,
      )
      for (const e of r.errors) out.stderr(`warning: model fell back to the deterministic path for ${e}\n`)
    }
  })
}

export async function exportCmd(io: CliIo, out: Out, o: GlobalOptions & { project?: string; format?: string; out?: string }): Promise<void> {
  if (o.format === 'markdown' && o.out === undefined) throw invalidInput('out', 'a Markdown export needs --out <folder>')
  await withMnemo(io, o, (m) => {
    const projects = o.project === undefined ? undefined : m.engine.resolveProjects(o.project)
    if (projects && projects.length !== 1) throw invalidInput('project', `--project ${JSON.stringify(o.project)} matches ${projects.length} projects; give its path`)
    const project = projects?.[0]
    if (o.format === 'markdown') {
      const dir = path.resolve(io.cwd, o.out!)
      if (existsSync(dir) && !statSync(dir).isDirectory()) throw invalidInput('out', `--out ${JSON.stringify(o.out)} is a file; a Markdown export needs a folder`)
      mkdirSync(dir, { recursive: true })
      const files = m.engine.exportMarkdown(project ? { project } : {})
      for (const [name, text] of files) writeFileSync(path.join(dir, name), text)
      if (out.json) printJson(out, { folder: dir, files: [...files.keys()] })
      else out.stdout(`wrote ${files.size} Markdown file(s) to ${dir}\n`)
      return
    }
    if (o.out === undefined) {
      if (out.json) throw invalidInput('json', '--json cannot be combined with an export to stdout; add --out <file>')
      m.engine.exportJsonl((line) => out.stdout(`${line}\n`), project ? { project } : {})
      return
    }
    const file = path.resolve(io.cwd, o.out)
    mkdirSync(path.dirname(file), { recursive: true })
    if (existsSync(file) && !statSync(file).isFile()) throw invalidInput('out', `--out ${JSON.stringify(o.out)} is a folder; give a file name`)
    const tmp = `${file}.tmp-${process.pid}`
    const fd = openSync(tmp, 'w', 0o600)
    let manifest
    try {
      manifest = m.engine.exportJsonl((line) => writeSync(fd, `${line}\n`), project ? { project } : {})
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
    if (out.json) printJson(out, { file, manifest })
    else out.stdout(`exported ${manifest.counts.events} events, ${manifest.counts.tombstones} tombstones, ${manifest.counts.audit} audit records to ${file}\n`)
  })
}

export async function redact(io: CliIo, out: Out, o: GlobalOptions & { rescan?: boolean }): Promise<void> {
  if (!o.rescan) throw invalidInput('rescan', 'mnemo redact needs --rescan (rewrites stored events in place)')
  await withMnemo(io, o, (m) => {
    const r = m.engine.rescanSecrets('cli')
    if (out.json) printJson(out, r)
    else out.stdout(`redacted ${r.eventsChanged} event(s); rebuilt ${r.observations} observations from ${r.events} events (audit record written)\n`)
  })
}

export async function reindex(io: CliIo, out: Out, o: GlobalOptions & { project?: string }): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const ids = projectIds(m, o.project)
    let last = ''
    const r = await m.engine.reindex({
      ...(ids ? { projectIds: ids as never } : {}),
      onProgress: (stage, done, total) => {
        const line = `${stage}: ${done}/${total}`
        if (line !== last) io.stderr(`\r${line}`)
        last = line
      },
    })
    if (last) io.stderr('\n')
    if (out.json) printJson(out, r)
    else out.stdout(`builtin model refitted for ${r.builtinProjects} project(s)${r.space ? `; ${r.embedded} document(s) embedded into ${r.space}` : '; no neural embedder configured (MNEMO_EMBEDDER)'}\n`)
  })
}

export async function mcp(io: CliIo, o: GlobalOptions & { agent?: string }): Promise<void> {
  const { serveMcpStdio } = await import('../mcp/server.js')
  if (o.agent !== undefined && !(SURFACE_AGENTS as readonly string[]).includes(o.agent)) {
    throw invalidInput('agent', `--agent must be one of ${SURFACE_AGENTS.join(', ')} (got ${JSON.stringify(o.agent)})`)
  }
  await serveMcpStdio({ env: io.env, cwd: io.cwd, ...(o.home ? { home: o.home } : {}), ...(o.agent !== undefined ? { agent: o.agent as AgentName } : {}) })
}

/** Agents `connect` and `disconnect` know, with their planners. */
const AGENT_PLANNERS: Record<string, { connect: (o: AgentConnectOptions) => AgentConnectPlan; disconnect: (o: AgentDisconnectOptions) => AgentConnectPlan }> = {
  codex: { connect: planCodexConnect, disconnect: planCodexDisconnect },
  gemini: { connect: planGeminiConnect, disconnect: planGeminiDisconnect },
  cursor: { connect: planCursorConnect, disconnect: planCursorDisconnect },
  opencode: { connect: planOpenCodeConnect, disconnect: planOpenCodeDisconnect },
}
export const CONNECT_AGENTS = ['claude-code', ...Object.keys(AGENT_PLANNERS)]

type AnyPlan = { kind: 'claude'; plan: ConnectPlan } | { kind: 'agent'; plan: AgentConnectPlan }

function connectPlan(agent: string, scope: string | undefined, io: CliIo, disconnecting: boolean): AnyPlan {
  if (!CONNECT_AGENTS.includes(agent)) throw invalidInput('agent', `unknown agent ${JSON.stringify(agent)}; supported: ${CONNECT_AGENTS.join(', ')}`)
  const location = { scope: (scope ?? 'user') as 'user' | 'project', projectDir: io.cwd, env: io.env, ...(io.env['HOME'] ? { homeDir: io.env['HOME'] } : {}) }
  const command = { cliPath: CLI_PATH, nodePath: process.execPath, ...(io.env['MNEMO_HOME'] ? { mnemoHome: io.env['MNEMO_HOME'] } : {}) }
  if (agent === 'claude-code') {
    return { kind: 'claude', plan: disconnecting ? disconnectClaudeCode({ ...location, cliPath: CLI_PATH }) : planClaudeCodeConnect({ ...location, ...command }) }
  }
  const planners = AGENT_PLANNERS[agent]!
  return { kind: 'agent', plan: disconnecting ? planners.disconnect({ ...location, cliPath: CLI_PATH }) : planners.connect({ ...location, ...command }) }
}

function reportPlans(out: Out, plans: readonly AnyPlan[], dryRun: boolean): void {
  const docs: Record<string, unknown>[] = []
  for (const p of plans) {
    const written = dryRun ? [] : p.kind === 'claude' ? applyConnectPlan(p.plan) : applyAgentConnectPlan(p.plan)
    const notes = p.kind === 'agent' ? p.plan.notes : []
    docs.push({ agent: p.plan.client, dryRun, files: p.plan.files.map((f) => ({ path: f.path, kind: f.kind, changed: f.changed, ...(dryRun ? { after: f.after } : {}) })), written, notes })
    if (out.json) continue
    out.stdout(p.kind === 'claude' ? renderPlanDiff(p.plan) : `${renderAgentPlanDiff(p.plan)}\n`)
    out.stdout(dryRun ? '(dry run: nothing written)\n' : written.length > 0 ? `wrote ${written.join(', ')}\n` : 'already up to date\n')
  }
  if (out.json) printJson(out, plans.length === 1 ? docs[0] : { agents: docs })
}

function agentsOf(agent: string | undefined, all: boolean | undefined): string[] {
  if (all) return CONNECT_AGENTS
  if (agent === undefined) throw invalidInput('agent', `name an agent (${CONNECT_AGENTS.join(', ')}) or use --all`)
  return [agent]
}

export async function connect(io: CliIo, out: Out, agent: string | undefined, o: GlobalOptions & { scope?: string; dryRun?: boolean; all?: boolean }): Promise<void> {
  reportPlans(out, agentsOf(agent, o.all).map((a) => connectPlan(a, o.scope, io, false)), o.dryRun === true)
}

export async function disconnect(io: CliIo, out: Out, agent: string | undefined, o: GlobalOptions & { scope?: string; dryRun?: boolean; all?: boolean }): Promise<void> {
  reportPlans(out, agentsOf(agent, o.all).map((a) => connectPlan(a, o.scope, io, true)), o.dryRun === true)
}

/**
 * Checks each agent's configuration, the data directory, the database, the
 * spool and the error log, and says what to fix. Exit 1 when something is broken.
 */
export async function doctor(io: CliIo, out: Out, o: GlobalOptions): Promise<number> {
  const agents = checkAgents({
    cliPath: CLI_PATH,
    nodePath: process.execPath,
    projectDir: io.cwd,
    env: io.env,
    ...(io.env['HOME'] ? { homeDir: io.env['HOME'] } : {}),
    ...(io.env['MNEMO_HOME'] ? { mnemoHome: io.env['MNEMO_HOME'] } : {}),
  })
  type Check = { check: string; status: string; detail: string; fix: string }
  let store: Check[]
  try {
    store = await withMnemo(io, o, async (m) => {
      const integrity = m.engine.integrityCheck()
      const spool = { pending: m.spool.count(), bad: m.spool.badCount() }
      const errors = m.errors.tail(5)
      const { remoteServer, checkRemote } = await import('../../runtime/remote-server.js')
      const remote = remoteServer(io.env, m.config.home)
      const server = remote ? await checkRemote(remote) : undefined
      const team = remote !== undefined
      return [
        ...(server
          ? [{ check: 'team server', status: server.ok ? 'ok' : 'broken', detail: `${server.url}: ${server.detail}`, fix: server.ok ? '' : 'start mnemo serve there, or fix MNEMO_SERVER_URL / MNEMO_SERVER_TOKEN; hooks spool until then' }]
          : []),
        { check: 'data directory', status: 'ok', detail: m.config.home, fix: '' },
        { check: 'database', status: integrity === 'ok' ? 'ok' : 'broken', detail: integrity === 'ok' ? m.config.dbPath : integrity, fix: integrity === 'ok' ? '' : 'restore from an export (mnemo import), or move the file aside' },
        { check: 'spool', status: spool.pending > 0 ? 'stale' : 'ok', detail: `${spool.pending} pending, ${spool.bad} unreadable`, fix: spool.pending > 0 ? (team ? 'the next hook sends it to the team server once that is reachable' : 'run any mnemo command to drain it; if it stays, see mnemo status errors') : '' },
        { check: 'recent errors', status: errors.length > 0 ? 'stale' : 'ok', detail: errors.length > 0 ? `${errors.length} (last: ${errors.at(-1)!.message})` : 'none', fix: errors.length > 0 ? `see ${m.config.errorLogPath}` : '' },
      ]
    })
  } catch (error) {
    // A store that cannot even be opened is what doctor is for: report it, keep the agent checks.
    const message = error instanceof Error ? error.message : String(error)
    store = [{ check: 'data directory / database', status: 'broken', detail: message, fix: 'check MNEMO_HOME points to a folder; restore the database from an export (mnemo import) or move the file aside' }]
  }
  const broken = agents.some((a) => a.status === 'broken') || store.some((s) => s.status === 'broken')
  if (out.json) printJson(out, { ok: !broken, agents, store })
  else {
    for (const a of agents) out.stdout(`${a.status.padEnd(8)} ${a.agent} (${a.scope}): ${a.detail}${a.fix ? `\n         fix: ${a.fix}` : ''}\n`)
    for (const s of store) out.stdout(`${s.status.padEnd(8)} ${s.check}: ${s.detail}${s.fix ? `\n         fix: ${s.fix}` : ''}\n`)
  }
  return broken ? 1 : 0
}

export async function benchLocomo(io: CliIo, out: Out, file: string, o: GlobalOptions & { limitQuestions?: string; channels?: string; conversations?: string }): Promise<void> {
  const limitQuestions = parseIntOption('limit-questions', o.limitQuestions, 1, 100_000)
  const channels = parseChannels(o.channels)
  const conversations = o.conversations?.split(',').map((c) => c.trim()).filter((c) => c.length > 0)
  if (conversations !== undefined && conversations.length === 0) throw invalidInput('conversations', `--conversations needs at least one sample_id (got ${JSON.stringify(o.conversations)})`)
  if (!existsSync(path.resolve(io.cwd, file))) throw new MnemoError('NOT_FOUND', `no file at ${path.resolve(io.cwd, file)}`, { details: { kind: 'file', id: file } })
  const { runLocomoBench, formatLocomoReport } = await import('../../bench/locomo.js')
  // A configured embedder (MNEMO_EMBEDDER) is measured too: every turn is embedded before the questions of its conversation.
  const { resolveConfig } = await import('../../config/config.js')
  const { createEmbedder } = await import('../../runtime/open-mnemo.js')
  const configured = resolveConfig(io.env).embedder
  const report = await runLocomoBench(path.resolve(io.cwd, file), {
    ...(limitQuestions === undefined ? {} : { limitQuestions }),
    ...(channels ? { channels } : {}),
    ...(conversations ? { conversations } : {}),
    ...(configured ? { embedder: createEmbedder(configured) } : {}),
  })
  if (out.json) printJson(out, report)
  else out.stdout(`${formatLocomoReport(report)}\n`)
}

export async function benchLongMemEval(io: CliIo, out: Out, file: string, o: GlobalOptions & { limitQuestions?: string; channels?: string }): Promise<void> {
  const limitQuestions = parseIntOption('limit-questions', o.limitQuestions, 1, 100_000)
  const channels = parseChannels(o.channels)
  if (!existsSync(path.resolve(io.cwd, file))) throw new MnemoError('NOT_FOUND', `no file at ${path.resolve(io.cwd, file)}`, { details: { kind: 'file', id: file } })
  const { runLongMemEvalBench, formatLongMemEvalReport } = await import('../../bench/longmemeval.js')
  let report
  try {
    report = await runLongMemEvalBench(path.resolve(io.cwd, file), { ...(limitQuestions === undefined ? {} : { limitQuestions }), ...(channels ? { channels } : {}) })
  } catch (error) {
    if (error instanceof Error && !MnemoError.is(error)) throw invalidInput('file', error.message)
    throw error
  }
  if (out.json) printJson(out, report)
  else out.stdout(`${formatLongMemEvalReport(report)}\n`)
}

/**
 * The demo: in a fresh data directory (or `--home`), plays a recorded Claude
 * Code session through `mnemo hook` one process per event, exactly as Claude
 * Code calls it, then shows recall and the context block the next session gets.
 */
export async function demo(io: CliIo, out: Out, o: GlobalOptions & { keep?: boolean }): Promise<void> {
  const home = o.home ?? mkdtempSync(path.join(os.tmpdir(), 'mnemo-demo-'))
  const env = { ...io.env, MNEMO_HOME: home }
  const lines = readFileSync(DEMO_SESSION, 'utf8').split('\n').filter((l) => l.trim().length > 0)
  const say = (t: string): void => {
    if (!out.json) out.stdout(t)
  }
  say(`mnemo demo — data directory ${home}\n\n1. Session 1: ${lines.length} Claude Code hook events, one \`mnemo hook <event>\` process each\n`)
  let nextContext = ''
  for (const line of lines) {
    const { event, payload } = JSON.parse(line) as { event: string; payload: unknown }
    const r = spawnSync(process.execPath, [CLI_PATH, 'hook', event], { input: JSON.stringify(payload), env, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`hook ${event} exited with ${r.status}: ${r.stderr}`)
    say(`   ${event.padEnd(18)} ok\n`)
    if (event === 'SessionStart') nextContext = r.stdout
  }
  const m = openMnemo({ env, cwd: io.cwd, home })
  try {
    const queries = ['validateToken', 'how do we rate-limit the API?', 'src/middleware/auth.ts']
    const results = await Promise.all(queries.map(async (q) => ({ query: q, hits: await m.engine.recall(q, { limit: 3 }) })))
    const project = m.engine.listProjects()[0]
    const block = project ? m.engine.context({ project: { root: project.root, name: project.name } }) : undefined
    if (out.json) {
      printJson(out, { home, events: lines.length, stats: m.engine.stats(), recall: results.map((r) => ({ query: r.query, hits: r.hits.map((h) => hitToJson(h)) })), context: block, sessionStartOutput: nextContext.trim() })
    } else {
      results.forEach((r, i) => say(`\n2${'abc'[i] ?? ''}. mnemo recall ${JSON.stringify(r.query)}\n${formatHits(r.hits)}`))
      say(`\n3. The next session's context block (mnemo context; ${block?.tokens ?? 0} tokens):\n\n${block?.text ?? ''}\n`)
      if (nextContext) say(`\n4. What the SessionStart hook printed for Claude Code to inject (first 300 chars):\n${nextContext.slice(0, 300)}…\n`)
    }
  } finally {
    m.close()
    if (!o.keep && !o.home && existsSync(home)) rmSync(home, { recursive: true, force: true })
    else say(`\n(kept data directory ${home})\n`)
  }
}

/** The port of `mnemo serve`: `--port`, else `MNEMO_PORT`, else 7077. @throws {MnemoError} `INVALID_INPUT` (bad --port), `CONFIG_INVALID` (bad MNEMO_PORT). */
async function servePort(io: CliIo, option: string | undefined): Promise<number> {
  const { DEFAULT_PORT } = await import('../http/server.js')
  const port = parseIntOption('port', option, 0, 65_535)
  if (port !== undefined) return port
  const envPort = io.env['MNEMO_PORT']
  if (envPort === undefined || envPort === '') return DEFAULT_PORT
  const n = Number(envPort)
  if (!/^\s*\d+\s*$/.test(envPort) || n > 65_535) {
    throw new MnemoError('CONFIG_INVALID', `MNEMO_PORT must be an integer 0–65535 (got ${JSON.stringify(envPort)})`, { details: { keys: ['MNEMO_PORT'] } })
  }
  return n
}

/**
 * `mnemo viewer`: prints the address of the viewer of the server on this
 * machine (`http://127.0.0.1:<port>/#token=<token>`; the fragment is never
 * sent to the server) and says whether that server answers.
 *
 * @throws {MnemoError} `NOT_FOUND` — no server token yet (the server never ran with this data directory).
 */
/** The data directory the server of these options uses (for its token files). */
async function serverHome(io: CliIo, o: GlobalOptions): Promise<string> {
  const { resolveConfig } = await import('../../config/config.js')
  return resolveConfig(o.home ? { ...io.env, MNEMO_HOME: o.home } : io.env).home
}

export async function userAdd(io: CliIo, out: Out, name: string, o: GlobalOptions & { replace?: boolean }): Promise<void> {
  const { addServerUser, serverUsersPath } = await import('../http/server-users.js')
  const home = await serverHome(io, o)
  const token = addServerUser(home, name, Date.now(), { replace: o.replace === true })
  if (out.json) printJson(out, { user: name, token, file: serverUsersPath(home) })
  else {
    out.stdout(`user ${name}: token ${token}\n`)
    out.stderr(`the token is shown once; ${name} sets MNEMO_SERVER_TOKEN to it (with MNEMO_SERVER_URL) and reads and writes only their data and shared data\n`)
  }
}

export async function userRemove(io: CliIo, out: Out, name: string, o: GlobalOptions): Promise<void> {
  const { removeServerUser } = await import('../http/server-users.js')
  const removed = removeServerUser(await serverHome(io, o), name)
  if (!removed) throw new MnemoError('NOT_FOUND', `no user ${JSON.stringify(name)} has a token`, { details: { kind: 'user', id: name }, hint: 'mnemo user list shows who has one' })
  if (out.json) printJson(out, { user: name, removed })
  else out.stdout(`user ${name}: token revoked (their data stays)\n`)
}

export async function userList(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  const { listServerUsers } = await import('../http/server-users.js')
  const users = listServerUsers(await serverHome(io, o))
  if (out.json) printJson(out, { users })
  else out.stdout(users.length === 0 ? 'no users (only the server token; add one with mnemo user add <name>)\n' : users.map((u) => `${u.user}\t${u.createdAt}\n`).join(''))
}

export async function viewer(io: CliIo, out: Out, o: GlobalOptions & { port?: string; host?: string }): Promise<void> {
  const { readServerToken, serverTokenPath } = await import('../http/server.js')
  const { resolveConfig } = await import('../../config/config.js')
  const config = resolveConfig(o.home ? { ...io.env, MNEMO_HOME: o.home } : io.env)
  const token = readServerToken(config.home)
  if (token === undefined) {
    throw new MnemoError('NOT_FOUND', `no server token in ${serverTokenPath(config.home)}: the server has not run with this data directory`, {
      details: { kind: 'file', id: serverTokenPath(config.home) },
      hint: 'start it with mnemo serve (it prints the viewer address)',
    })
  }
  const port = await servePort(io, o.port)
  const host = o.host ?? '127.0.0.1'
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  const url = `${base}/#token=${encodeURIComponent(token)}`
  // Whether a server answers there, and whether it takes this data directory's token (another server's would refuse it).
  const status = await fetch(`${base}/v1/status`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(1000) }).then(
    (r) => r.status,
    () => 0,
  )
  const running = status !== 0
  const tokenAccepted = status >= 200 && status < 300
  if (out.json) printJson(out, { url, running, tokenAccepted })
  else {
    const note = !running
      ? `(no server answers at ${base}: start it with mnemo serve${port === 7077 || port === 0 ? '' : ` --port ${port}`})\n`
      : status === 404 || status === 405
        ? `(something answers at ${base}, but not a mnemo server (HTTP ${status}): check --port)\n`
        : !tokenAccepted
        ? `(the server at ${base} refuses this token (HTTP ${status}): it serves another data directory; pass that one's --home)\n`
        : ''
    out.stdout(`${url}\n${note}`)
  }
}

/**
 * `mnemo serve`: runs the HTTP server (REST under /v1, MCP at /mcp) until
 * SIGINT or SIGTERM, then stops gracefully (in-flight requests finish, the
 * store is closed) and returns, so the process exits 0. Port: `--port`, else
 * `MNEMO_PORT`, else 7077.
 *
 * @throws {MnemoError} `INVALID_INPUT` — a bad `--port`. `CONFIG_INVALID` — a bad `MNEMO_PORT`.
 * @throws {MnemoError} `CONFLICT` — the port is in use: `port 7077 is already in use (--port or MNEMO_PORT to choose another)`.
 */
export async function serve(io: CliIo, out: Out, o: GlobalOptions & { port?: string; host?: string }): Promise<void> {
  const { startServer } = await import('../http/server.js')
  const host = o.host ?? '127.0.0.1'
  const server = await startServer({
    env: io.env,
    host,
    port: await servePort(io, o.port),
    log: (line) => io.stderr(`${line}\n`),
    ...(o.home ? { home: o.home } : {}),
  })
  if (out.json) printJson(out, { url: server.url, viewerUrl: server.viewerUrl, home: server.home, tokenPath: server.tokenPath, pid: process.pid })
  else {
    out.stdout(`mnemo serve: listening on ${server.url} (REST ${server.url}/v1, MCP ${server.url}/mcp); data ${server.home}; bearer token in ${server.tokenPath}\n`)
    out.stdout(`viewer: ${server.viewerUrl}\n`)
  }
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') {
    io.stderr(`warning: bound to ${host}: anyone who can reach this address and holds the token can read and change these memories\n`)
  }
  await new Promise<void>((resolve, reject) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      io.stderr(`mnemo serve: ${signal}, finishing in-flight requests\n`)
      server.close().then(resolve, reject)
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  io.stderr('mnemo serve: stopped\n')
}
