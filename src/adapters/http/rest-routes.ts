import path from 'node:path'
import { z } from 'zod'
import { invalidInput } from '../../core/errors.js'
import { idPrefix, type SessionId } from '../../core/ids.js'
import {
  contextInput,
  describeValue,
  hookEventInput,
  idField,
  inputObject,
  integer,
  limited,
  parseInput,
  projectField,
  MAX_INPUT_TEXT_CHARS,
  recallInput,
  rememberInput,
  requireProject,
  sessionsInput,
  showInput,
} from '../../core/schemas.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import { IMPORT_FORMATS, type ImportFormat } from '../../engine/import-files.js'
import { ALL_MEMORY_KINDS, OBSERVATION_KINDS, tierOf } from '../../core/types.js'
import type { OpenedMnemo } from '../../runtime/open-mnemo.js'
import {
  contextJson,
  eventAcceptedJson,
  forgottenJson,
  graphJson,
  healthJson,
  jobJson,
  memoriesPageJson,
  memoryHistoryJson,
  memoryUpdatedJson,
  observationsPageJson,
  timelineJson,
  toListedObservationJson,
  importJson,
  memoryJson,
  observationJson,
  openApiJson,
  recallJson,
  rememberJson,
  sessionDetailJson,
  sessionsJson,
  statusJson,
  toHitJson,
  toImportJson,
  toMemoryJson,
  toObservationJson,
  toSessionJson,
} from '../shared/views.js'

/** mnemo's version, as the server reports it. */
export const SERVER_VERSION = '0.1.0'

/** What a route handler may use. */
export interface RouteContext {
  mnemo: OpenedMnemo
  /** Epoch ms the server started. */
  startedAt: number
  /** The OpenAPI document of this server. */
  openApi: () => Record<string, unknown>
  /** The server's background jobs, as /v1/status reports them. */
  jobs: () => z.output<typeof jobJson>[]
}

/** A success response: status and JSON body. */
export interface Reply {
  status: 200 | 201 | 202
  body: unknown
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined

/** What a handler receives: the parsed JSON body and query string, and the path parameters. */
export interface RouteInput<B, Q> {
  body: Parsed<B>
  query: Parsed<Q>
  params: Record<string, string>
}

/**
 * One REST route. The table of these (`REST_ROUTES`) is the single source of
 * the Hono routes (app.ts) and of the OpenAPI document (openapi.ts).
 */
export interface RestRoute<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** Hono path syntax: `/v1/memories/:id`. */
  path: string
  operationId: string
  summary: string
  description?: string
  /** True for the one route that needs no bearer token. */
  public?: true
  /** Schema of the JSON body (POST). */
  body?: B
  /** Schema of the query string (GET); number fields are converted from text. */
  query?: Q
  /** `project` (in the body or the query) must be given: it never defaults to every project. */
  projectRequired?: true
  /** Success responses by status. */
  responses: Partial<Record<200 | 201 | 202, { description: string; schema: z.ZodType }>>
  /** Error statuses this route can answer with besides 401 and 500. */
  errors: readonly (400 | 404 | 413 | 422)[]
  handle(input: RouteInput<B, Q>, ctx: RouteContext): Reply | Promise<Reply>
}

/** A route of any input types, as stored in the table. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRestRoute = RestRoute<any, any>

function defineRoute<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(route: RestRoute<B, Q>): AnyRestRoute {
  return route as AnyRestRoute
}

const ok = (body: unknown, status: Reply['status'] = 200): Reply => ({ status, body })

/** The project a scoped route works on; see `requireProject`. */
function needProject(engine: MnemoEngine, project: string | undefined, where: 'body' | 'query'): string {
  const how = where === 'body' ? 'pass "project" in the JSON body' : 'add ?project=<name> to the URL'
  return requireProject(project, () => engine.listProjects().map((p) => p.name), how)
}

/** A path id checked against the kind the route serves (`mem` for /v1/memories/:id). */
function idOfKind(params: Record<string, string>, prefix: 'obs' | 'mem' | 'ses', name = 'id'): string {
  const { id } = parseInput(showInput, { id: params[name] }, name === 'id' ? 'path' : 'query string')
  if (idPrefix(id) !== prefix) {
    const noun = prefix === 'obs' ? 'an observation' : prefix === 'mem' ? 'a memory' : 'a session'
    throw invalidInput(name, `${name} must be ${noun} id (${prefix}_…) (got ${describeValue(id)})`)
  }
  return id
}

/** Body of POST /v1/import. */
export const importInput = inputObject({
  path: limited(z.string(), { minLength: 1, maxLength: 4096 }).describe('A file or folder on the server machine, absolute.'),
  format: z.enum(IMPORT_FORMATS as readonly [ImportFormat, ...ImportFormat[]]).optional().describe('Default auto.'),
  project: projectField.optional().describe('File every session under this project (a name or an absolute path). Default: each record\'s own cwd.'),
})

/** A comma-separated list of enum values in a query string (`kind=prompt,tool`). */
function csvOf<T extends string>(values: readonly T[], what: string) {
  return limited(z.string(), { minLength: 1, maxLength: 200 })
    .describe(`${what}, comma-separated: ${values.join(', ')}.`)
    .transform((text, ctx) => {
      const parts = text.split(',').map((p) => p.trim()).filter((p) => p.length > 0)
      const bad = parts.filter((p) => !(values as readonly string[]).includes(p))
      if (bad.length > 0 || parts.length === 0) {
        ctx.addIssue({ code: 'custom', message: `must be one or more of ${values.join(', ')}` })
        return z.NEVER
      }
      return parts as T[]
    })
}

/** Query of GET /v1/observations. */
export const observationsQuery = inputObject({
  project: projectField.optional(),
  session: idField.optional().describe('Only this session (a ses_… id).'),
  kind: csvOf(OBSERVATION_KINDS, 'Only these observation kinds').optional(),
  agent: limited(z.string(), { minLength: 1, maxLength: 64 }).optional().describe('Only sessions of this agent (claude-code, codex, gemini, …).'),
  before: integer(1, Number.MAX_SAFE_INTEGER).optional().describe('Only rows older than this event sequence number (`nextBefore` of the previous page).'),
  limit: integer(1, 500).optional().describe('Most rows, 1–500. Default 100.'),
})

/** Query of GET /v1/stream. */
export const streamQuery = inputObject({
  project: projectField.optional(),
  kind: csvOf(OBSERVATION_KINDS, 'Only these observation kinds').optional(),
  agent: limited(z.string(), { minLength: 1, maxLength: 64 }).optional().describe('Only sessions of this agent.'),
})

/** Query of GET /v1/sessions (the sessions input, paginated). */
export const sessionsPageQuery = inputObject({
  ...sessionsInput.shape,
  offset: integer(0, 1_000_000).optional().describe('Sessions to skip (pagination). Default 0.'),
})

/** Query of GET /v1/sessions/:id/observations. */
export const timelineQuery = inputObject({
  offset: integer(0, 10_000_000).optional().describe('Steps to skip. Default 0.'),
  limit: integer(1, 500).optional().describe('Most steps, 1–500. Default 200.'),
  at: idField.optional().describe('An observation of this session (obs_…): the answer says its 0-based `position`, to open the page holding it.'),
})

/** Query of GET /v1/memories. */
export const memoriesQuery = inputObject({
  project: projectField.optional(),
  tier: z.enum(['episodic', 'semantic', 'procedural', 'all']).optional().describe('episodic (session summaries), semantic (facts, decisions, preferences, lessons), procedural (procedures) or all. Default all.'),
  kind: csvOf(ALL_MEMORY_KINDS, 'Only these memory kinds').optional(),
  state: z.enum(['current', 'archived', 'superseded', 'all']).optional().describe('current (default), archived, superseded (older versions) or all.'),
  offset: integer(0, 10_000_000).optional().describe('Memories to skip. Default 0.'),
  limit: integer(1, 200).optional().describe('Most memories, 1–200. Default 50.'),
})

/** Body of PATCH /v1/memories/:id: exactly one change. */
export const memoryPatchInput = inputObject({
  pinned: z.boolean().optional().describe('Pin (never decays or archives) or unpin.'),
  archived: z.boolean().optional().describe('Archive (out of default recall and context) or restore.'),
  text: limited(z.string(), { minLength: 1, maxLength: MAX_INPUT_TEXT_CHARS }).optional().describe('New text: stored as a new version that supersedes this one.'),
})

/** Query of GET /v1/graph. */
export const graphQuery = inputObject({
  project: projectField.optional(),
  entity: limited(z.string(), { minLength: 1, maxLength: 512 }).optional().describe('A name, file, symbol, tool or URL; the best match is the center. Without it: the most mentioned entities.'),
  limit: integer(1, 100).optional().describe('Most neighbours, 1–100. Default 30.'),
})

const idParam = 'id'

/** Every REST route of `mnemo serve`, in the order the OpenAPI document lists them. */
export const REST_ROUTES: readonly AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/v1/health',
    operationId: 'health',
    summary: 'Liveness check; needs no token',
    public: true,
    responses: { 200: { description: 'The server is up.', schema: healthJson } },
    errors: [],
    handle: () => ok({ ok: true, name: 'mnemo', version: SERVER_VERSION }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/status',
    operationId: 'status',
    summary: 'Data directory, counts, projects, spool and recent errors',
    responses: { 200: { description: 'What this server holds.', schema: statusJson } },
    errors: [],
    handle: (_input, { mnemo, startedAt, jobs }) => {
      const stats = mnemo.engine.stats()
      const body: z.output<typeof statusJson> = {
        home: mnemo.config.home,
        database: mnemo.config.dbPath,
        counts: { events: stats.events, projects: stats.projects, sessions: stats.sessions, observations: stats.observations, memories: stats.memories },
        bytes: stats.bytes,
        lastCaptureAt: stats.lastEventAt === undefined ? null : new Date(stats.lastEventAt).toISOString(),
        projects: mnemo.engine.listProjects().map((p) => ({ name: p.name, root: p.root })),
        spool: { pending: mnemo.spool.count(), bad: mnemo.spool.badCount() },
        errors: mnemo.errors.tail(5),
        server: { version: SERVER_VERSION, pid: process.pid, startedAt: new Date(startedAt).toISOString() },
        jobs: jobs(),
      }
      return ok(body)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/openapi.json',
    operationId: 'openapi',
    summary: 'This OpenAPI 3.1 document',
    responses: { 200: { description: 'The document (also checked in as docs/openapi.json).', schema: openApiJson } },
    errors: [],
    handle: (_input, { openApi }) => ok(openApi()),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/events',
    operationId: 'captureEvent',
    summary: 'Capture one Claude Code hook event (what `mnemo hook <event>` does)',
    description:
      'The payload is the hook JSON exactly as Claude Code writes it on stdin. Its `cwd` (absolute) names the project: the server has no working directory of its own. A duplicate delivery is accepted and not stored again.',
    body: hookEventInput,
    responses: { 202: { description: 'Accepted; `stored` says whether it was new.', schema: eventAcceptedJson } },
    errors: [400, 413],
    handle: ({ body }, { mnemo }) => {
      const cwd = body.payload['cwd']
      if (typeof cwd !== 'string' || !path.isAbsolute(cwd)) {
        throw invalidInput('payload.cwd', `payload.cwd must be an absolute path (got ${describeValue(cwd)})`, "the server has no working directory: the hook payload's cwd says which project the event belongs to")
      }
      const result = mnemo.engine.captureHook(body.event, JSON.stringify(body.payload), body.agent ?? 'claude-code', body.at === undefined ? undefined : Date.parse(body.at))
      return ok({ stored: result.stored }, 202)
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/recall',
    operationId: 'recall',
    summary: "Search a project's observations and memories, best first",
    body: recallInput,
    projectRequired: true,
    responses: { 200: { description: 'Hits, best first; empty when nothing matches.', schema: recallJson } },
    errors: [400, 404, 413],
    handle: async ({ body }, { mnemo }) => {
      const engine = mnemo.engine
      const projectIds = engine.resolveProjects(needProject(engine, body.project, 'body')).map((p) => p.id)
      const hits = await engine.recall(body.query, {
        projectIds,
        ...(body.limit !== undefined ? { limit: body.limit } : {}),
        ...(body.session !== undefined ? { sessionId: body.session as SessionId } : {}),
        ...(body.channels !== undefined ? { channels: body.channels } : {}),
      })
      return ok({ query: body.query, hits: hits.map((h) => toHitJson(h, body.explain ?? false)), warnings: [...engine.warnings] })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/memories',
    operationId: 'remember',
    summary: 'Store an explicit memory in a project',
    body: rememberInput,
    projectRequired: true,
    responses: {
      201: { description: 'Stored.', schema: rememberJson },
      200: { description: 'The same text was already remembered; the existing memory.', schema: rememberJson },
    },
    errors: [400, 404, 413],
    handle: ({ body }, { mnemo }) => {
      const engine = mnemo.engine
      const project = engine.projectForWrite(needProject(engine, body.project, 'body'))
      const { memory, created } = engine.remember(body.text, { kind: body.kind ?? 'fact', project })
      const stored = engine.listProjects().find((p) => p.id === memory.projectId)
      return ok({ created, memory: toMemoryJson(memory, stored) }, created ? 201 : 200)
    },
  }),
  defineRoute({
    method: 'GET',
    path: `/v1/memories/:${idParam}`,
    operationId: 'getMemory',
    summary: 'One memory by id',
    responses: { 200: { description: 'The memory.', schema: memoryJson } },
    errors: [400, 404],
    handle: ({ params }, { mnemo }) => {
      const r = mnemo.engine.show(idOfKind(params, 'mem'))
      if (r.type !== 'memory') throw new Error(`show returned a ${r.type} for a memory id`)
      return ok(toMemoryJson(r.memory, r.project))
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `/v1/memories/:${idParam}`,
    operationId: 'forgetMemory',
    summary: 'Forget a memory, from every index',
    responses: { 200: { description: 'Forgotten.', schema: forgottenJson } },
    errors: [400, 404],
    handle: ({ params }, { mnemo }) => {
      const r = mnemo.engine.forget(idOfKind(params, 'mem'), 'http')
      return ok({ forgotten: r })
    },
  }),
  defineRoute({
    method: 'GET',
    path: `/v1/observations/:${idParam}`,
    operationId: 'getObservation',
    summary: 'One observation by id',
    responses: { 200: { description: 'The observation.', schema: observationJson } },
    errors: [400, 404],
    handle: ({ params }, { mnemo }) => {
      const r = mnemo.engine.show(idOfKind(params, 'obs'))
      if (r.type !== 'observation') throw new Error(`show returned a ${r.type} for an observation id`)
      return ok(toObservationJson(r.observation, r.project))
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `/v1/observations/:${idParam}`,
    operationId: 'forgetObservation',
    summary: 'Forget an observation, from every index',
    responses: { 200: { description: 'Forgotten.', schema: forgottenJson } },
    errors: [400, 404],
    handle: ({ params }, { mnemo }) => {
      const r = mnemo.engine.forget(idOfKind(params, 'obs'), 'http')
      return ok({ forgotten: r })
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/sessions',
    operationId: 'listSessions',
    summary: "A project's sessions, newest first",
    query: sessionsPageQuery,
    projectRequired: true,
    responses: { 200: { description: 'Sessions, newest first.', schema: sessionsJson } },
    errors: [400, 404],
    handle: ({ query }, { mnemo }) => {
      const engine = mnemo.engine
      const projects = engine.resolveProjects(needProject(engine, query.project, 'query'))
      const byId = new Map(projects.map((p) => [p.id as string, p]))
      const sessions = engine.sessions({ projectIds: projects.map((p) => p.id), limit: query.limit ?? 20, offset: query.offset ?? 0 })
      return ok({ sessions: sessions.map((s) => toSessionJson(s, byId.get(s.projectId))) })
    },
  }),
  defineRoute({
    method: 'GET',
    path: `/v1/sessions/:${idParam}`,
    operationId: 'getSession',
    summary: 'One session with its observations (the first 500)',
    responses: { 200: { description: 'The session and its timeline.', schema: sessionDetailJson } },
    errors: [400, 404],
    handle: ({ params }, { mnemo }) => {
      const r = mnemo.engine.show(idOfKind(params, 'ses'))
      if (r.type !== 'session') throw new Error(`show returned a ${r.type} for a session id`)
      const { session, project, observations } = r.detail
      return ok({ session: toSessionJson(session, project), observations: observations.map((o) => toObservationJson(o, project)) })
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/context',
    operationId: 'context',
    summary: "The context block a new session of a project gets",
    query: contextInput,
    projectRequired: true,
    responses: { 200: { description: 'The block and what it holds.', schema: contextJson } },
    errors: [400, 404],
    handle: ({ query }, { mnemo }) => {
      const engine = mnemo.engine
      const project = engine.projectForWrite(needProject(engine, query.project, 'query'))
      const block = engine.context({
        project,
        ...(query.budget !== undefined ? { budgetTokens: query.budget } : {}),
        ...(query.excludeSession !== undefined ? { excludeSessionKey: query.excludeSession } : {}),
      })
      const body: z.output<typeof contextJson> = {
        project: block.project,
        text: block.text,
        tokens: block.tokens,
        budgetTokens: block.budgetTokens,
        memoryIds: block.memoryIds,
        sessionIds: block.sessionIds,
        omitted: block.omitted,
      }
      return ok(body)
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/import',
    operationId: 'importPath',
    summary: 'Import transcripts from a file or folder on the server machine',
    description: 'Claude Code session JSONL, Codex CLI rollouts or LoCoMo JSON, as `mnemo import`. Re-importing adds nothing.',
    body: importInput,
    responses: { 200: { description: 'What was read, imported and skipped, per file.', schema: importJson } },
    errors: [400, 404, 413, 422],
    handle: async ({ body }, { mnemo }) => {
      const engine = mnemo.engine
      if (!path.isAbsolute(body.path)) {
        throw invalidInput('path', `path must be absolute (got ${describeValue(body.path)})`, 'the server has no working directory; paths are read on the server machine')
      }
      const project = body.project === undefined ? undefined : engine.projectForWrite(needProject(engine, body.project, 'body'))
      const report = await engine.importPath(body.path, { ...(body.format ? { format: body.format } : {}), ...(project ? { project } : {}) })
      return ok(toImportJson(report))
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/observations',
    operationId: 'listObservations',
    summary: "A project's observations, newest first, by session, kind and agent",
    description: 'Pages are cut by event sequence number: pass `nextBefore` as `before` for older rows. For new rows as they arrive, use GET /v1/stream.',
    query: observationsQuery,
    projectRequired: true,
    responses: { 200: { description: 'A page of observations.', schema: observationsPageJson } },
    errors: [400, 404],
    handle: ({ query }, { mnemo }) => {
      const engine = mnemo.engine
      const projects = engine.resolveProjects(needProject(engine, query.project, 'query'))
      const byId = new Map(projects.map((p) => [p.id as string, p]))
      const limit = query.limit ?? 100
      const rows = engine.browseObservations({
        projectIds: projects.map((p) => p.id),
        order: 'desc',
        limit,
        ...(query.session !== undefined ? { sessionId: query.session as SessionId } : {}),
        ...(query.kind !== undefined ? { kinds: query.kind } : {}),
        ...(query.agent !== undefined ? { agent: query.agent } : {}),
        ...(query.before !== undefined ? { beforeSeq: query.before } : {}),
      })
      const last = rows.at(-1)
      return ok({ observations: rows.map((o) => toListedObservationJson(o, byId.get(o.projectId))), nextBefore: rows.length === limit && last ? last.eventSeq : null })
    },
  }),
  defineRoute({
    method: 'GET',
    path: `/v1/sessions/:${idParam}/observations`,
    operationId: 'sessionTimeline',
    summary: "A session's steps in order, paginated, with the memories derived from each",
    query: timelineQuery,
    responses: { 200: { description: 'The session and a page of its steps.', schema: timelineJson } },
    errors: [400, 404],
    handle: ({ params, query }, { mnemo }) => {
      const offset = query.offset ?? 0
      const at = query.at === undefined ? undefined : idOfKind({ at: query.at }, 'obs', 'at')
      const t = mnemo.engine.sessionTimeline(idOfKind(params, 'ses'), offset, query.limit ?? 200, at)
      return ok({
        session: toSessionJson(t.session, t.project),
        observations: t.observations.map((o) => ({ ...toObservationJson(o, t.project), derivedMemories: o.derivedMemories })),
        total: t.session.observationCount,
        offset,
        position: t.position ?? null,
      })
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/memories',
    operationId: 'listMemories',
    summary: "A project's memories by tier, kind and state, paginated",
    query: memoriesQuery,
    projectRequired: true,
    responses: { 200: { description: 'A page of memories and the total.', schema: memoriesPageJson } },
    errors: [400, 404],
    handle: ({ query }, { mnemo }) => {
      const engine = mnemo.engine
      const projects = engine.resolveProjects(needProject(engine, query.project, 'query'))
      const byId = new Map(projects.map((p) => [p.id as string, p]))
      const tier = query.tier ?? 'all'
      const kinds = (query.kind ?? ALL_MEMORY_KINDS).filter((k) => tier === 'all' || tierOf(k) === tier)
      if (kinds.length === 0) return ok({ memories: [], total: 0 })
      const page = engine.browseMemories({ projectIds: projects.map((p) => p.id), kinds, state: query.state ?? 'current', offset: query.offset ?? 0, limit: query.limit ?? 50 })
      return ok({ memories: page.memories.map((m) => toMemoryJson(m, byId.get(m.projectId))), total: page.total })
    },
  }),
  defineRoute({
    method: 'GET',
    path: `/v1/memories/:${idParam}/history`,
    operationId: 'memoryHistory',
    summary: "A memory's version chain and provenance",
    responses: { 200: { description: 'Every version, oldest first, and the observations the versions came from.', schema: memoryHistoryJson } },
    errors: [400, 404],
    handle: ({ params }, { mnemo }) => {
      const id = idOfKind(params, 'mem')
      const chain = mnemo.engine.history(id)
      const projects = new Map(mnemo.engine.listProjects().map((p) => [p.id as string, p]))
      return ok({
        chain: chain.map((m) => toMemoryJson(m, projects.get(m.projectId))),
        sources: mnemo.engine.memorySources(chain).map((o) => toObservationJson(o, projects.get(o.projectId))),
      })
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: `/v1/memories/:${idParam}`,
    operationId: 'updateMemory',
    summary: 'Pin, unpin, archive, restore or correct a memory',
    description: 'Exactly one of `pinned`, `archived`, `text`. A new text is stored as a new version that supersedes this one (the old one stays in its history); the answer is then the new version.',
    body: memoryPatchInput,
    responses: { 200: { description: 'The memory after the change.', schema: memoryUpdatedJson } },
    errors: [400, 404, 413],
    handle: ({ params, body }, { mnemo }) => {
      const id = idOfKind(params, 'mem')
      const given = (['pinned', 'archived', 'text'] as const).filter((k) => body[k] !== undefined)
      if (given.length !== 1) {
        throw invalidInput('body', `give exactly one of pinned, archived, text (got ${given.length === 0 ? 'none' : given.join(', ')})`)
      }
      const engine = mnemo.engine
      const memory =
        body.text !== undefined
          ? engine.editMemory(id, body.text, 'http')
          : engine.setMemoryState(id, body.pinned !== undefined ? (body.pinned ? 'pin' : 'unpin') : body.archived ? 'archive' : 'restore')
      const project = engine.listProjects().find((p) => p.id === memory.projectId)
      return ok({ memory: toMemoryJson(memory, project) })
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/graph',
    operationId: 'entityGraph',
    summary: 'The entity graph around a file, person or concept',
    query: graphQuery,
    projectRequired: true,
    responses: { 200: { description: 'The center, its neighbours, co-mention edges and the documents mentioning it.', schema: graphJson } },
    errors: [400, 404],
    handle: ({ query }, { mnemo }) => {
      const engine = mnemo.engine
      const projects = engine.resolveProjects(needProject(engine, query.project, 'query'))
      const g = engine.entityGraph(projects.map((p) => p.id), query.entity, query.limit ?? 30)
      return ok({ center: g.center ?? null, nodes: g.nodes, edges: g.edges, mentions: g.mentions.map((h) => toHitJson(h)) })
    },
  }),
]
