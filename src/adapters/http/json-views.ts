import { z } from 'zod'
import { toIso } from '../../core/clock.js'
import type { Memory, Observation, Project, RecallHit, Session } from '../../core/types.js'
import type { ImportReport } from '../../engine/mnemo.js'

/**
 * The JSON the REST API returns, as zod schemas (they become the OpenAPI
 * response schemas) and the mappers that produce it. Each mapper is typed by
 * its schema, so the document cannot promise a field the code does not send.
 * Times are ISO-8601 UTC; absent values are `null`, never missing.
 */

const iso = z.string().describe('ISO-8601 time, UTC.')
/** A count: a non-negative integer (declared as JSON Schema, without zod's safe-integer bounds in the document). */
const count = z.number().meta({ type: 'integer', minimum: 0 })

export const hitJson = z.object({
  id: z.string().describe('obs_… or mem_…'),
  type: z.enum(['observation', 'memory']),
  kind: z.string().describe('Observation kind (prompt, tool, error, …) or memory kind (decision, fact, …).'),
  project: z.string(),
  projectId: z.string(),
  sessionId: z.string().nullable(),
  time: iso,
  score: z.number().describe('Fused relevance, higher is better.'),
  snippet: z.string(),
  sourceRef: z.string().nullable(),
})

export function toHitJson(h: RecallHit): z.output<typeof hitJson> {
  return {
    id: h.id,
    type: h.type,
    kind: h.kind,
    project: h.project,
    projectId: h.projectId,
    sessionId: h.sessionId ?? null,
    time: toIso(h.ts),
    score: Number(h.score.toFixed(4)),
    snippet: h.snippet,
    sourceRef: h.sourceRef ?? null,
  }
}

export const recallJson = z.object({
  query: z.string(),
  hits: z.array(hitJson).describe('Best first.'),
  warnings: z.array(z.string()).describe('Problems recall worked around (a provider outage, missing vectors).'),
})

export const memoryJson = z.object({
  id: z.string(),
  kind: z.string(),
  project: z.string().nullable(),
  projectId: z.string(),
  createdAt: iso,
  seenCount: count,
  text: z.string(),
})

export function toMemoryJson(m: Memory, project: Project | undefined): z.output<typeof memoryJson> {
  return { id: m.id, kind: m.kind, project: project?.name ?? null, projectId: m.projectId, createdAt: toIso(m.createdAt), seenCount: m.seenCount, text: m.text }
}

export const rememberJson = z.object({ created: z.boolean().describe('False when the same text was already remembered.'), memory: memoryJson })

export const observationJson = z.object({
  id: z.string(),
  kind: z.string(),
  role: z.string(),
  project: z.string().nullable(),
  projectId: z.string(),
  sessionId: z.string(),
  time: iso,
  tool: z.string().nullable(),
  files: z.array(z.string()),
  sourceRef: z.string().nullable(),
  text: z.string(),
})

export function toObservationJson(o: Observation, project: Project | undefined): z.output<typeof observationJson> {
  return {
    id: o.id,
    kind: o.kind,
    role: o.role,
    project: project?.name ?? null,
    projectId: o.projectId,
    sessionId: o.sessionId,
    time: toIso(o.ts),
    tool: o.tool ?? null,
    files: o.files,
    sourceRef: o.sourceRef ?? null,
    text: o.text,
  }
}

export const sessionJson = z.object({
  id: z.string(),
  project: z.string().nullable(),
  projectId: z.string(),
  agent: z.string(),
  sessionKey: z.string().describe("The agent's own session id."),
  startedAt: iso,
  lastEventAt: iso,
  endedAt: iso.nullable(),
  title: z.string().nullable(),
  observations: count,
})

export function toSessionJson(s: Session, project: Project | undefined): z.output<typeof sessionJson> {
  return {
    id: s.id,
    project: project?.name ?? null,
    projectId: s.projectId,
    agent: s.agent,
    sessionKey: s.sessionKey,
    startedAt: toIso(s.startedAt),
    lastEventAt: toIso(s.lastEventAt),
    endedAt: s.endedAt === undefined ? null : toIso(s.endedAt),
    title: s.title ?? null,
    observations: s.observationCount,
  }
}

export const sessionsJson = z.object({ sessions: z.array(sessionJson).describe('Newest first.') })

export const sessionDetailJson = z.object({
  session: sessionJson,
  observations: z.array(observationJson).describe('Oldest first; the first 500.'),
})

export const contextJson = z.object({
  project: z.string(),
  text: z.string().describe('The delimited block, ready to inject.'),
  tokens: count,
  budgetTokens: count,
  memoryIds: z.array(z.string()),
  sessionIds: z.array(z.string()),
  omitted: count.describe('Items left out because the budget ran out.'),
})

export const forgottenJson = z.object({ forgotten: z.object({ id: z.string(), type: z.enum(['observation', 'memory']) }) })

export const eventAcceptedJson = z.object({ stored: z.boolean().describe('False for a duplicate delivery or an event mnemo deliberately skips (its own tool calls).') })

export const statusJson = z.object({
  home: z.string(),
  database: z.string(),
  counts: z.object({ events: count, projects: count, sessions: count, observations: count, memories: count }),
  bytes: count,
  lastCaptureAt: iso.nullable(),
  projects: z.array(z.object({ name: z.string(), root: z.string() })).describe('Every project, to name in `project`.'),
  spool: z.object({ pending: count, bad: count }),
  errors: z.array(z.object({ at: z.string(), where: z.string(), code: z.string(), message: z.string() })).describe('The last 5 failures.'),
  server: z.object({ version: z.string(), pid: count, startedAt: iso }),
})

export const healthJson = z.object({ ok: z.literal(true), name: z.literal('mnemo'), version: z.string() })

export const importJson = z.object({
  files: z.array(
    z.object({
      file: z.string(),
      format: z.string().nullable(),
      read: count,
      imported: count,
      duplicates: count,
      observations: count,
      skipped: z.array(z.object({ line: z.union([z.number(), z.string()]), reason: z.string() })),
      unknownTypes: z.record(z.string(), z.number()),
      error: z.string().nullable(),
    }),
  ),
  read: count,
  imported: count,
  duplicates: count,
  observations: count,
  skipped: count,
  unknown: count,
})

export function toImportJson(r: ImportReport): z.output<typeof importJson> {
  return {
    ...r,
    files: r.files.map((f) => ({ ...f, format: f.format ?? null, error: f.error ?? null })),
  }
}

export const openApiJson = z.object({ openapi: z.string() }).loose().describe('This document.')
