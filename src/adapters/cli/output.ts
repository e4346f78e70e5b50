import { toIso } from '../../core/clock.js'
import type { Memory, Observation, RecallHit, Session } from '../../core/types.js'
import type { ImportReport } from '../../engine/mnemo.js'

/** Where a command writes. `json` selects one JSON document on stdout and nothing else there. */
export interface Out {
  json: boolean
  stdout: (text: string) => void
  stderr: (text: string) => void
}

/** Prints `value` as the command's one JSON document. */
export function printJson(out: Out, value: unknown): void {
  out.stdout(`${JSON.stringify(value, null, 2)}\n`)
}

/** How a hit was found: `bm25#3 vector#12` (channel and rank), `+neighbor` when it came in beside a match. */
export function explainHit(h: RecallHit): string {
  const parts = Object.entries(h.channels ?? {}).map(([c, e]) => `${c}#${e.rank}`)
  return `${parts.join(' ')}${h.viaNeighbor ? ' (neighbor of a match)' : ''}`
}

export function hitToJson(h: RecallHit, explain = false): Record<string, unknown> {
  return {
    ...(explain ? { channels: h.channels ?? {}, viaNeighbor: h.viaNeighbor ?? false } : {}),
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

export function formatHits(hits: readonly RecallHit[], explain = false): string {
  if (hits.length === 0) return 'no matches\n'
  return hits
    .map((h, i) => {
      const where = `${h.project}${h.sessionId ? ` · ${h.sessionId}` : ''}`
      const ref = h.sourceRef ? ` · ${h.sourceRef}` : ''
      const why = `${explain ? `\n    found by: ${explainHit(h)}` : ''}${h.flags && h.flags.length > 0 ? `\n    ⚠ flagged: ${h.flags.join(', ')}` : ''}`
      return `${String(i + 1).padStart(2)}. ${h.id}  ${h.kind}  ${toIso(h.ts)}  score ${h.score.toFixed(4)}\n    ${where}${ref}${why}\n    ${h.snippet}`
    })
    .join('\n')
    .concat('\n')
}

export function sessionToJson(s: Session, projectName: string | undefined): Record<string, unknown> {
  return {
    id: s.id,
    project: projectName ?? null,
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

export function observationToJson(o: Observation): Record<string, unknown> {
  return {
    id: o.id,
    kind: o.kind,
    role: o.role,
    sessionId: o.sessionId,
    projectId: o.projectId,
    time: toIso(o.ts),
    tool: o.tool ?? null,
    files: o.files,
    sourceRef: o.sourceRef ?? null,
    flags: o.flags,
    text: o.text,
  }
}

export function memoryToJson(m: Memory): Record<string, unknown> {
  return {
    id: m.id,
    kind: m.kind,
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
  }
}

export function formatImport(r: ImportReport): string {
  const lines: string[] = []
  for (const f of r.files) {
    const unknown = Object.entries(f.unknownTypes)
      .map(([t, n]) => `${t}×${n}`)
      .join(', ')
    lines.push(
      `${f.file}  [${f.format ?? 'unknown format'}]  read ${f.read} · imported ${f.imported} · already present ${f.duplicates} · observations ${f.observations} · skipped ${f.skipped.length}${unknown ? ` · unknown types: ${unknown}` : ''}`,
    )
    if (f.error) lines.push(`  ! ${f.error}`)
    for (const s of f.skipped.slice(0, 20)) lines.push(`  skipped line ${s.line}: ${s.reason}`)
    if (f.skipped.length > 20) lines.push(`  … ${f.skipped.length - 20} more skipped`)
  }
  lines.push(
    `total: ${r.files.length} file(s), read ${r.read}, imported ${r.imported}, already present ${r.duplicates}, observations ${r.observations}, skipped ${r.skipped}, unknown ${r.unknown}`,
  )
  return `${lines.join('\n')}\n`
}
