import type { z } from 'zod'
import { toIso } from '../core/clock.js'
import type { Memory, Observation, Project, RecallHit, Session } from '../core/types.js'
import type { ImportReport } from './mnemo.js'
import type { hitJson, importJson, listedObservationJson, memoryJson, observationJson, sessionJson } from './views.js'

/**
 * The mappers from mnemo's records to the JSON every surface returns, each typed by its schema in `views.ts` (a type
 * import only: the CLI prints this JSON without loading zod or building the schemas).
 */

export function toHitJson(h: RecallHit, explain = false): z.output<typeof hitJson> {
  return {
    ...(explain
      ? {
          channels: h.channels ?? {},
          viaNeighbor: h.viaNeighbor ?? false,
          ...(h.fusedRank !== undefined ? { fusedRank: h.fusedRank } : {}),
        }
      : {}),
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
    flags: h.flags ?? [],
  }
}

/** A hit read back from its JSON (a team server's recall), for the CLI's printers. */
export function fromHitJson(h: z.output<typeof hitJson>): RecallHit {
  return {
    id: h.id as RecallHit['id'],
    type: h.type,
    kind: h.kind as RecallHit['kind'],
    projectId: h.projectId as RecallHit['projectId'],
    project: h.project,
    sessionId: (h.sessionId ?? undefined) as RecallHit['sessionId'],
    ts: Date.parse(h.time),
    score: h.score,
    snippet: h.snippet,
    sourceRef: h.sourceRef ?? undefined,
    ...(h.channels ? { channels: h.channels as NonNullable<RecallHit['channels']> } : {}),
    ...(h.viaNeighbor !== undefined ? { viaNeighbor: h.viaNeighbor } : {}),
    ...(h.fusedRank !== undefined ? { fusedRank: h.fusedRank } : {}),
    ...(h.flags.length > 0 ? { flags: h.flags } : {}),
  }
}

export function toMemoryJson(m: Memory, project: Project | undefined): z.output<typeof memoryJson> {
  return {
    id: m.id,
    kind: m.kind,
    project: project?.name ?? null,
    projectId: m.projectId,
    createdAt: toIso(m.createdAt),
    seenCount: m.seenCount,
    flags: m.flags,
    text: m.text,
    validFrom: toIso(m.validFrom),
    validTo: m.validTo === undefined ? null : toIso(m.validTo),
    supersedes: m.supersedes ?? null,
    supersededBy: m.supersededBy ?? null,
    review: m.review ?? null,
    pinned: m.pinned,
    archivedAt: m.archivedAt === undefined ? null : toIso(m.archivedAt),
    sources: m.sources,
    confidence: m.confidence ?? null,
  }
}

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
    flags: o.flags,
    text: o.text,
  }
}

export function toSessionJson(s: Session, project: Project | undefined): z.output<typeof sessionJson> {
  return {
    id: s.id,
    project: project?.name ?? null,
    projectId: s.projectId,
    agent: s.agent,
    sessionKey: s.sessionKey,
    user: s.user ?? null,
    startedAt: toIso(s.startedAt),
    lastEventAt: toIso(s.lastEventAt),
    endedAt: s.endedAt === undefined ? null : toIso(s.endedAt),
    title: s.title ?? null,
    observations: s.observationCount,
  }
}

export function toImportJson(r: ImportReport): z.output<typeof importJson> {
  return {
    ...r,
    files: r.files.map((f) => ({ ...f, format: f.format ?? null, error: f.error ?? null })),
  }
}

export function toListedObservationJson(
  o: Observation & { agent: string },
  project: Project | undefined,
): z.output<typeof listedObservationJson> {
  return { ...toObservationJson(o, project), agent: o.agent, seq: o.eventSeq }
}
