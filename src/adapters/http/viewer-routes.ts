import { z } from 'zod'
import { invalidInput } from '../../core/errors.js'
import type { SessionId } from '../../core/ids.js'
import { idField, inputObject, integer, limited, MAX_INPUT_TEXT_CHARS, projectField } from '../../core/schemas.js'
import { ALL_MEMORY_KINDS, OBSERVATION_KINDS, tierOf } from '../../core/types.js'
import {
  graphJson,
  memoriesPageJson,
  memoryHistoryJson,
  memoryUpdatedJson,
  observationsPageJson,
  timelineJson,
  toHitJson,
  toListedObservationJson,
  toMemoryJson,
  toObservationJson,
  toSessionJson,
} from '../../engine/views.js'
import { csvOf, defineRoute, idOfKind, idParam, needProject, ok, type AnyRestRoute } from './route-kit.js'

/**
 * The routes the viewer reads and writes besides the core ones (also open to
 * any client with the token): paged observations, replay pages, memories by
 * tier/kind/state with history and hand edits, and the entity graph. The
 * live stream (GET /v1/stream) is served apart, in event-stream.ts, with
 * its query schema here.
 */

/** Query of GET /v1/observations. */
const observationsQuery = inputObject({
  project: projectField.optional(),
  session: idField.optional().describe('Only this session (a ses_… id).'),
  kind: csvOf(OBSERVATION_KINDS, 'Only these observation kinds').optional(),
  agent: limited(z.string(), { minLength: 1, maxLength: 64 })
    .optional()
    .describe('Only sessions of this agent (claude-code, codex, gemini, …).'),
  before: integer(1, Number.MAX_SAFE_INTEGER)
    .optional()
    .describe('Only rows older than this event sequence number (`nextBefore` of the previous page).'),
  limit: integer(1, 500).optional().describe('Most rows, 1–500. Default 100.'),
})

/** Query of GET /v1/stream. */
export const streamQuery = inputObject({
  project: projectField.optional(),
  kind: csvOf(OBSERVATION_KINDS, 'Only these observation kinds').optional(),
  agent: limited(z.string(), { minLength: 1, maxLength: 64 }).optional().describe('Only sessions of this agent.'),
})

/** Query of GET /v1/sessions/:id/observations. */
const timelineQuery = inputObject({
  offset: integer(0, 10_000_000).optional().describe('Steps to skip. Default 0.'),
  limit: integer(1, 500).optional().describe('Most steps, 1–500. Default 200.'),
  at: idField
    .optional()
    .describe('An observation of this session (obs_…): the answer says its 0-based `position`, to open the page holding it.'),
})

/** Query of GET /v1/memories. */
const memoriesQuery = inputObject({
  project: projectField.optional(),
  tier: z
    .enum(['episodic', 'semantic', 'procedural', 'all'])
    .optional()
    .describe(
      'episodic (session summaries), semantic (facts, decisions, preferences, lessons), procedural (procedures) or all. Default all.',
    ),
  kind: csvOf(ALL_MEMORY_KINDS, 'Only these memory kinds').optional(),
  state: z
    .enum(['current', 'archived', 'superseded', 'all'])
    .optional()
    .describe('current (default), archived, superseded (older versions) or all.'),
  offset: integer(0, 10_000_000).optional().describe('Memories to skip. Default 0.'),
  limit: integer(1, 200).optional().describe('Most memories, 1–200. Default 50.'),
})

/** Body of PATCH /v1/memories/:id: exactly one change. */
const memoryPatchInput = inputObject({
  pinned: z.boolean().optional().describe('Pin (never decays or archives) or unpin.'),
  archived: z.boolean().optional().describe('Archive (out of default recall and context) or restore.'),
  text: limited(z.string(), { minLength: 1, maxLength: MAX_INPUT_TEXT_CHARS })
    .optional()
    .describe('New text: stored as a new version that supersedes this one.'),
})

/** Query of GET /v1/graph. */
const graphQuery = inputObject({
  project: projectField.optional(),
  entity: limited(z.string(), { minLength: 1, maxLength: 512 })
    .optional()
    .describe('A name, file, symbol, tool or URL; the best match is the center. Without it: the most mentioned entities.'),
  limit: integer(1, 100).optional().describe('Most neighbours, 1–100. Default 30.'),
})

/** The viewer's routes, in the order the OpenAPI document lists them (after the core ones). */
export const VIEWER_ROUTES: readonly AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/v1/observations',
    operationId: 'listObservations',
    summary: "A project's observations, newest first, by session, kind and agent",
    description:
      'Pages are cut by event sequence number: pass `nextBefore` as `before` for older rows. For new rows as they arrive, use GET /v1/stream.',
    query: observationsQuery,
    projectRequired: true,
    responses: { 200: { description: 'A page of observations.', schema: observationsPageJson } },
    errors: [400, 404],
    handle: async ({ query }, { engine }) => {
      const projects = await engine.resolveProjects(await needProject(engine, query.project, 'query'))
      const byId = new Map(projects.map((p) => [p.id as string, p]))
      const limit = query.limit ?? 100
      const rows = await engine.browseObservations({
        projectIds: projects.map((p) => p.id),
        order: 'desc',
        limit,
        ...(query.session !== undefined ? { sessionId: query.session as SessionId } : {}),
        ...(query.kind !== undefined ? { kinds: query.kind } : {}),
        ...(query.agent !== undefined ? { agent: query.agent } : {}),
        ...(query.before !== undefined ? { beforeSeq: query.before } : {}),
      })
      const last = rows.at(-1)
      return ok({
        observations: rows.map((o) => toListedObservationJson(o, byId.get(o.projectId))),
        nextBefore: rows.length === limit && last ? last.eventSeq : null,
      })
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
    handle: async ({ params, query }, { engine }) => {
      const offset = query.offset ?? 0
      const at = query.at === undefined ? undefined : idOfKind({ at: query.at }, 'obs', 'at')
      const t = await engine.sessionTimeline(idOfKind(params, 'ses'), offset, query.limit ?? 200, at)
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
    handle: async ({ query }, { engine }) => {
      const projects = await engine.resolveProjects(await needProject(engine, query.project, 'query'))
      const byId = new Map(projects.map((p) => [p.id as string, p]))
      const tier = query.tier ?? 'all'
      const kinds = (query.kind ?? ALL_MEMORY_KINDS).filter((k) => tier === 'all' || tierOf(k) === tier)
      if (kinds.length === 0) return ok({ memories: [], total: 0 })
      const page = await engine.browseMemories({
        projectIds: projects.map((p) => p.id),
        kinds,
        state: query.state ?? 'current',
        offset: query.offset ?? 0,
        limit: query.limit ?? 50,
      })
      return ok({ memories: page.memories.map((m) => toMemoryJson(m, byId.get(m.projectId))), total: page.total })
    },
  }),
  defineRoute({
    method: 'GET',
    path: `/v1/memories/:${idParam}/history`,
    operationId: 'memoryHistory',
    summary: "A memory's version chain and provenance",
    responses: {
      200: { description: 'Every version, oldest first, and the observations the versions came from.', schema: memoryHistoryJson },
    },
    errors: [400, 404],
    handle: async ({ params }, { engine }) => {
      const id = idOfKind(params, 'mem')
      const chain = await engine.history(id)
      const projects = new Map((await engine.listProjects()).map((p) => [p.id as string, p]))
      return ok({
        chain: chain.map((m) => toMemoryJson(m, projects.get(m.projectId))),
        sources: (await engine.memorySources(chain)).map((o) => toObservationJson(o, projects.get(o.projectId))),
      })
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: `/v1/memories/:${idParam}`,
    operationId: 'updateMemory',
    summary: 'Pin, unpin, archive, restore or correct a memory',
    description:
      'Exactly one of `pinned`, `archived`, `text`. A new text is stored as a new version that supersedes this one (the old one stays in its history); the answer is then the new version.',
    body: memoryPatchInput,
    responses: { 200: { description: 'The memory after the change.', schema: memoryUpdatedJson } },
    errors: [400, 404, 413],
    handle: async ({ params, body }, { engine }) => {
      const id = idOfKind(params, 'mem')
      const given = (['pinned', 'archived', 'text'] as const).filter((k) => body[k] !== undefined)
      if (given.length !== 1) {
        throw invalidInput('body', `give exactly one of pinned, archived, text (got ${given.length === 0 ? 'none' : given.join(', ')})`)
      }
      const memory =
        body.text !== undefined
          ? await engine.editMemory(id, body.text, 'http')
          : await engine.setMemoryState(
              id,
              body.pinned !== undefined ? (body.pinned ? 'pin' : 'unpin') : body.archived ? 'archive' : 'restore',
            )
      const project = (await engine.listProjects()).find((p) => p.id === memory.projectId)
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
    handle: async ({ query }, { engine }) => {
      const projects = await engine.resolveProjects(await needProject(engine, query.project, 'query'))
      const g = await engine.entityGraph(
        projects.map((p) => p.id),
        query.entity,
        query.limit ?? 30,
      )
      return ok({ center: g.center ?? null, nodes: g.nodes, edges: g.edges, mentions: g.mentions.map((h) => toHitJson(h)) })
    },
  }),
]
