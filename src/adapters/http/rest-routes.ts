import path from 'node:path'
import { z } from 'zod'
import { describeValue, invalidInput, MnemoError } from '../../core/errors.js'
import type { SessionId } from '../../core/ids.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import {
  contextInput,
  hookEventInput,
  hookInjectionInput,
  injectionAckInput,
  inputObject,
  integer,
  limited,
  projectField,
  recallInput,
  rememberInput,
  sessionsInput,
} from '../../core/schemas.js'
import { IMPORT_FORMATS, type ImportFormat } from '../../engine/import-files.js'
import { resolveProjectRoot } from '../../engine/project-root.js'
import { clientProject } from '../../engine/projects.js'
import {
  contextJson,
  eventAcceptedJson,
  forgottenJson,
  healthJson,
  hookInjectionJson,
  importJson,
  injectionAckJson,
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
} from '../../engine/views.js'
import { defineRoute, idOfKind, idParam, needProject, ok, type AnyRestRoute } from './route-kit.js'
import { VIEWER_ROUTES } from './viewer-routes.js'
import { FACT_ROUTES } from './facts-routes.js'

export type { AnyRestRoute, Reply, RestRoute, RouteContext, RouteInput } from './route-kit.js'
export { streamQuery } from './viewer-routes.js'

/** mnemo's version, as the server reports it. */
export const SERVER_VERSION = '0.1.0'

/** Body of POST /v1/import. */
const importInput = inputObject({
  path: limited(z.string(), { minLength: 1, maxLength: 4096 }).describe('A file or folder on the server machine, absolute.'),
  format: z
    .enum(IMPORT_FORMATS as readonly [ImportFormat, ...ImportFormat[]])
    .optional()
    .describe('Default auto.'),
  project: projectField
    .optional()
    .describe("File every session under this project (a name or an absolute path). Default: each record's own cwd."),
})

/** Query of GET /v1/sessions (the sessions input, paginated). */
const sessionsPageQuery = inputObject({
  ...sessionsInput.shape,
  offset: integer(0, 1_000_000).optional().describe('Sessions to skip (pagination). Default 0.'),
})

/** Query of GET /v1/context: the context input, and the session a hook injects the block into. */
const contextQuery = inputObject({
  ...contextInput.shape,
  recordSession: limited(z.string(), { minLength: 1, maxLength: 512 })
    .optional()
    .describe(
      "The agent's session id the block is injected into (hooks send it with `agent`): what the block shows is recorded for that session and the token's user, so POST /v1/injections never repeats it and corrects it once it changes.",
    ),
  ack: z
    .enum(['true', 'false'])
    .optional()
    .describe(
      "true (with `recordSession`; what `mnemo hook` sends): what the block shows is recorded only when the client posts the answer's `ack` to POST /v1/injections/ack after injecting the block, so a block that came after the client stopped waiting is never counted as shown. Default false: recorded when the block is computed.",
    ),
})

/** Query of DELETE /v1/memories/:id and /v1/observations/:id: the project the item must belong to. */
const forgetQuery = inputObject({ project: projectField.optional() })

/**
 * The item `id` names, when it belongs to `project` (the rule MCP's memory_forget follows): a delete by id
 * names the project it acts in, so a client scoped to one project cannot delete another's by guessing ids.
 * @throws {MnemoError} `NOT_FOUND` — no such item, or one of another project (the hint names it).
 */
async function assertInProject(engine: MnemoEngine, id: string, project: string): Promise<void> {
  const r = await engine.show(id)
  const projectId =
    r.type === 'observation' ? r.observation.projectId : r.type === 'memory' ? r.memory.projectId : r.detail.session.projectId
  if ((await engine.resolveProjects(project)).some((p) => p.id === projectId)) return
  const owner = r.type === 'session' ? r.detail.project : r.project
  throw new MnemoError('NOT_FOUND', `no ${r.type} ${id} in project ${JSON.stringify(project)}`, {
    details: { kind: r.type, id },
    ...(owner
      ? { hint: `it belongs to project ${JSON.stringify(owner.name)}: add ?project=${encodeURIComponent(owner.name)} to reach it` }
      : {}),
  })
}

/** The core routes: health, status, OpenAPI, capture, recall, memories, observations, sessions, context, import. */
const CORE_ROUTES: readonly AnyRestRoute[] = [
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
    description:
      "With a member's token (`mnemo user add`): that user's counts and projects (their own and shared data), and no server errors.",
    responses: { 200: { description: 'What this server holds.', schema: statusJson } },
    errors: [],
    handle: async (_input, { mnemo, engine, startedAt, jobs, user }) => {
      const stats = await engine.stats()
      const projects: z.output<typeof statusJson>['projects'] = []
      for (const p of await engine.listProjects()) {
        const last = await engine.lastActivityAt(p.id)
        projects.push({ name: p.name, root: p.root, lastActivityAt: last === undefined ? null : new Date(last).toISOString() })
      }
      const body: z.output<typeof statusJson> = {
        home: mnemo.config.home,
        database: mnemo.config.dbPath,
        counts: {
          events: stats.events,
          projects: stats.projects,
          sessions: stats.sessions,
          observations: stats.observations,
          memories: stats.memories,
        },
        bytes: stats.bytes,
        lastCaptureAt: stats.lastEventAt === undefined ? null : new Date(stats.lastEventAt).toISOString(),
        projects: projects.sort((a, b) => (b.lastActivityAt ?? '').localeCompare(a.lastActivityAt ?? '')),
        channels: engine.recallChannels(),
        spool: { pending: mnemo.spool.count(), bad: mnemo.spool.badCount() },
        // The server's failures can name anyone's events: for the operator only.
        errors: user === undefined ? mnemo.errors.tail(5) : [],
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
    handle: async ({ body }, { engine, mnemo }) => {
      const cwd = body.payload['cwd']
      if (typeof cwd !== 'string' || !path.isAbsolute(cwd)) {
        throw invalidInput(
          'payload.cwd',
          `payload.cwd must be an absolute path (got ${describeValue(cwd)})`,
          "the server has no working directory: the hook payload's cwd says which project the event belongs to",
        )
      }
      const result = await engine.captureHook(
        body.event,
        JSON.stringify(body.payload),
        body.agent ?? 'claude-code',
        body.at === undefined ? undefined : Date.parse(body.at),
        body.projectRoot,
      )
      // A misnamed event (stored under the payload's own name, or kept raw) is logged where `mnemo status` shows it.
      if (result.note !== undefined)
        mnemo.errors.append({ at: new Date().toISOString(), where: 'http POST /v1/events', code: 'INVALID_INPUT', message: result.note })
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
    handle: async ({ body }, { engine }) => {
      const projectIds = (await engine.resolveProjects(await needProject(engine, body.project, 'body'))).map((p) => p.id)
      const hits = await engine.recall(body.query, {
        projectIds,
        ...(body.limit !== undefined ? { limit: body.limit } : {}),
        ...(body.session !== undefined ? { sessionId: body.session as SessionId } : {}),
        ...(body.channels !== undefined ? { channels: body.channels } : {}),
      })
      return ok({ query: body.query, hits: hits.map((h) => toHitJson(h, body.explain ?? false)), warnings: [...hits.warnings] })
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
    handle: async ({ body }, { engine }) => {
      // A user-wide memory names no project (it is recalled in all of this user's).
      const where =
        body.scope === 'user'
          ? { scope: 'user' as const }
          : { project: await engine.projectForWrite(await needProject(engine, body.project, 'body')) }
      const { memory, created } = await engine.remember(body.text, { kind: body.kind ?? 'fact', ...where })
      const stored = (await engine.listProjects()).find((p) => p.id === memory.projectId)
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
    handle: async ({ params }, { engine }) => {
      const r = await engine.show(idOfKind(params, 'mem'))
      if (r.type !== 'memory') throw new Error(`show returned a ${r.type} for a memory id`)
      return ok(toMemoryJson(r.memory, r.project))
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `/v1/memories/:${idParam}`,
    operationId: 'forgetMemory',
    summary: 'Forget a memory of a project, from every index (?chain=true: every version of it)',
    description: 'The memory must belong to `project` (404 naming its project otherwise), as MCP memory_forget.',
    query: inputObject({
      project: projectField.optional(),
      chain: z
        .enum(['true', 'false'])
        .optional()
        .describe(
          'true: forget every version of its chain; else only this one, and the previous version (returned as `restored`) is current again.',
        ),
    }),
    projectRequired: true,
    responses: { 200: { description: 'Forgotten.', schema: forgottenJson } },
    errors: [400, 404],
    handle: async ({ params, query }, { engine }) => {
      const id = idOfKind(params, 'mem')
      await assertInProject(engine, id, await needProject(engine, query.project, 'query'))
      return ok({ forgotten: await engine.forget(id, 'http', { chain: query.chain === 'true' }) })
    },
  }),
  defineRoute({
    method: 'GET',
    path: `/v1/observations/:${idParam}`,
    operationId: 'getObservation',
    summary: 'One observation by id',
    responses: { 200: { description: 'The observation.', schema: observationJson } },
    errors: [400, 404],
    handle: async ({ params }, { engine }) => {
      const r = await engine.show(idOfKind(params, 'obs'))
      if (r.type !== 'observation') throw new Error(`show returned a ${r.type} for an observation id`)
      return ok(toObservationJson(r.observation, r.project))
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `/v1/observations/:${idParam}`,
    operationId: 'forgetObservation',
    summary: 'Forget an observation of a project, from every index',
    description: 'The observation must belong to `project` (404 naming its project otherwise), as MCP memory_forget.',
    query: forgetQuery,
    projectRequired: true,
    responses: { 200: { description: 'Forgotten.', schema: forgottenJson } },
    errors: [400, 404],
    handle: async ({ params, query }, { engine }) => {
      const id = idOfKind(params, 'obs')
      await assertInProject(engine, id, await needProject(engine, query.project, 'query'))
      return ok({ forgotten: await engine.forget(id, 'http') })
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
    handle: async ({ query }, { engine }) => {
      const projects = await engine.resolveProjects(await needProject(engine, query.project, 'query'))
      const byId = new Map(projects.map((p) => [p.id as string, p]))
      const sessions = await engine.sessions({ projectIds: projects.map((p) => p.id), limit: query.limit ?? 20, offset: query.offset ?? 0 })
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
    handle: async ({ params }, { engine }) => {
      const r = await engine.show(idOfKind(params, 'ses'))
      if (r.type !== 'session') throw new Error(`show returned a ${r.type} for a session id`)
      const { session, project, observations } = r.detail
      return ok({ session: toSessionJson(session, project), observations: observations.map((o) => toObservationJson(o, project)) })
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/context',
    operationId: 'context',
    summary: 'The context block a new session of a project gets',
    query: contextQuery,
    projectRequired: true,
    responses: { 200: { description: 'The block and what it holds.', schema: contextJson } },
    errors: [400, 404],
    handle: async ({ query }, { engine, mnemo }) => {
      const project = await engine.projectForWrite(await needProject(engine, query.project, 'query'), { create: false })
      // Context is what an agent gets injected: under agent isolation it must say which agent it is for.
      if (engine.agentScope === 'own' && query.agent === undefined)
        throw invalidInput(
          'agent',
          'this server isolates agents (MNEMO_AGENT_SCOPE=own): add &agent=<claude-code|codex|gemini|cursor|opencode>',
        )
      const block = await (query.agent !== undefined ? engine.scoped({ agent: query.agent }) : engine).context({
        project,
        ...(query.budget !== undefined ? { budgetTokens: query.budget } : {}),
        ...(query.excludeSession !== undefined ? { excludeSessionKey: query.excludeSession } : {}),
        ...(query.recordSession !== undefined
          ? { recordFor: { agent: query.agent ?? 'claude-code', sessionKey: query.recordSession, defer: query.ack === 'true' } }
          : {}),
      })
      if (block.notRecorded !== undefined)
        mnemo.errors.append({
          at: new Date().toISOString(),
          where: 'http GET /v1/context',
          code: block.notRecorded.code,
          message: `${block.notRecorded.message} (the block was served; what it showed is not recorded for session ${JSON.stringify(query.recordSession)})`,
        })
      const body: z.output<typeof contextJson> = {
        project: block.project,
        text: block.text,
        tokens: block.tokens,
        budgetTokens: block.budgetTokens,
        memoryIds: block.memoryIds,
        sessionIds: block.sessionIds,
        omitted: block.omitted,
        ...(block.shown !== undefined && query.recordSession !== undefined
          ? { ack: { agent: query.agent ?? 'claude-code', session: query.recordSession, shown: block.shown } }
          : {}),
      }
      return ok(body)
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/injections',
    operationId: 'hookInjection',
    summary: 'What a hook injects for one event: per-prompt recall and corrections, or file hints (team mode)',
    description:
      "What `mnemo hook` prints locally beside an event, computed on the server: for UserPromptSubmit the per-prompt block (recalled items that clear the relevance gate, and one-line corrections of what the session was shown and has since been superseded, forgotten or archived), for PreToolUse/PostToolUse hints about the files the tool touches, once per file. Post the event to POST /v1/events first. The server keeps per agent session and per user of the token what it injected (GET /v1/context with `recordSession` included): nothing is injected twice in a session, and another user's session or memories never count. `injection` is null when the agent takes no context at that event (Cursor) or nothing clears the gate. When it is recorded: without `ack`, as the answer is computed, so a client that stops waiting for it leaves those items counted as shown and never gets them; with `ack: true` (what `mnemo hook` sends), only when the client posts the answer's `injection.ack` to POST /v1/injections/ack after injecting the block. The client decides, after the answer reached it, whether it injects and confirms: an answer that came too late is never confirmed, so it is never recorded; a lost confirmation leaves the items unrecorded, and a later prompt may show them again (a repeat, never a loss). Files looked up without hints are recorded at once (nothing is shown for them).",
    body: hookInjectionInput,
    responses: { 200: { description: 'The block and the hook event name to give it under, or null.', schema: hookInjectionJson } },
    errors: [400, 413],
    handle: async ({ body }, { engine }) => {
      const cwd = body.payload['cwd']
      if (typeof cwd !== 'string' || !path.isAbsolute(cwd))
        throw invalidInput('payload.cwd', `payload.cwd must be an absolute path (got ${describeValue(cwd)})`)
      // The project as POST /v1/events filed the event: the client's root, else the payload's folder.
      const project = body.projectRoot !== undefined ? clientProject(body.projectRoot, cwd) : resolveProjectRoot(cwd)
      const agent = body.agent ?? 'claude-code'
      const ack = body.ack === true
      const injection = await engine
        .scoped({ agent })
        .hookInjection(body.event, agent, JSON.stringify(body.payload), project, body.budget, { record: !ack })
      if (injection === undefined) return ok({ injection: null })
      return ok({
        injection: {
          hookEventName: injection.hookEventName,
          text: injection.text,
          ...(ack ? { ack: { agent, session: injection.sessionKey, shown: injection.shown } } : {}),
        },
      })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/injections/ack',
    operationId: 'acknowledgeInjection',
    summary: 'Confirm that a hook injected what POST /v1/injections answered (team mode)',
    description:
      "Records for the agent session, under the token's user, what a POST /v1/injections answer asked for with `ack: true` showed (the body is that answer's `injection.ack`, as it came), or a GET /v1/context block asked for with `recordSession` and `ack=true` (its `ack`). From then on the session's prompts do not repeat those items, and correct them when they change. Confirming twice records nothing more. A client can only mark items as shown for its own user's sessions, which only keeps them out of those sessions.",
    body: injectionAckInput,
    responses: { 200: { description: 'How many rows were recorded (those already recorded count too).', schema: injectionAckJson } },
    errors: [400, 413],
    handle: async ({ body }, { engine }) => {
      await engine.recordShown({ agent: body.agent, sessionKey: body.session }, body.shown)
      return ok({ recorded: body.shown.length })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/import',
    operationId: 'importPath',
    summary: 'Import transcripts from a file or folder on the server machine',
    description:
      "Claude Code session JSONL, Codex CLI rollouts or LoCoMo JSON, as `mnemo import`. Re-importing adds nothing; a mnemo export is restored with the users it names. Only with the server token: a user's token cannot make the server read its own files (403).",
    body: importInput,
    responses: { 200: { description: 'What was read, imported and skipped, per file.', schema: importJson } },
    errors: [400, 403, 404, 413, 422],
    handle: async ({ body }, { engine, user }) => {
      if (user !== undefined) {
        throw new MnemoError(
          'FORBIDDEN',
          "importing a path reads the server machine's files: only the server token may; a user sends events with POST /v1/events or imports on their own machine",
          {
            details: { action: 'import' },
          },
        )
      }
      if (!path.isAbsolute(body.path)) {
        throw invalidInput(
          'path',
          `path must be absolute (got ${describeValue(body.path)})`,
          'the server has no working directory; paths are read on the server machine',
        )
      }
      const project = body.project === undefined ? undefined : await engine.projectForWrite(await needProject(engine, body.project, 'body'))
      // The server token is the operator's: a mnemo export is restored with the users it names (as `import --all-users`).
      const report = await engine
        .scoped({ allUsers: true })
        .importPath(body.path, { ...(body.format ? { format: body.format } : {}), ...(project ? { project } : {}) })
      return ok(toImportJson(report))
    },
  }),
]

/** Every REST route of `mnemo serve`, in the order the OpenAPI document lists them. */
export const REST_ROUTES: readonly AnyRestRoute[] = [...CORE_ROUTES, ...VIEWER_ROUTES, ...FACT_ROUTES]
