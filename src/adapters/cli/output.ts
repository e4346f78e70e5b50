import { toIso } from '../../core/clock.js'
import type { RecallHit } from '../../core/types.js'
import { toHitJson } from '../../engine/view-mappers.js'
import type { ImportReport } from '../../engine/mnemo.js'

/** Where a command writes. `json` selects one JSON document on stdout and nothing else there. */
export interface Out {
  json: boolean
  stdout: (text: string) => void
  stderr: (text: string) => void
}

/** `1 project`, `2 projects`, `1 summary`, `6 summaries`: a count with its noun in the right number. */
export function counted(n: number, one: string, many: string = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`
}

/** Prints `value` as the command's one JSON document. */
export function printJson(out: Out, value: unknown): void {
  out.stdout(`${JSON.stringify(value, null, 2)}\n`)
}

/** How a hit was found: `bm25#3 vector#12` (channel and rank), whether it came in beside a match, and its fused rank when the re-ranker moved it. */
function explainHit(h: RecallHit, position?: number): string {
  const parts = Object.entries(h.channels ?? {}).map(([c, e]) => `${c}#${e.rank}`)
  const moved = h.fusedRank !== undefined && h.fusedRank !== position ? ` (re-ranked from fused #${h.fusedRank})` : ''
  return `${parts.join(' ')}${h.viaNeighbor ? ' (neighbor of a match)' : ''}${moved}`
}

/** A hit as JSON: the shared view every surface returns. */
export const hitToJson = toHitJson

export function formatHits(hits: readonly RecallHit[], explain = false): string {
  if (hits.length === 0) return 'no matches\n'
  return hits
    .map((h, i) => {
      const where = `${h.project}${h.sessionId ? ` · ${h.sessionId}` : ''}`
      const ref = h.sourceRef ? ` · ${h.sourceRef}` : ''
      const why = `${explain ? `\n    found by: ${explainHit(h, i + 1)}` : ''}${h.flags && h.flags.length > 0 ? `\n    ⚠ flagged: ${h.flags.join(', ')}` : ''}`
      return `${String(i + 1).padStart(2)}. ${h.id}  ${h.kind}  ${toIso(h.ts)}  score ${h.score.toFixed(4)}\n    ${where}${ref}${why}\n    ${h.snippet}`
    })
    .join('\n')
    .concat('\n')
}

export function formatImport(r: ImportReport): string {
  const lines: string[] = []
  for (const f of r.files) {
    const unknown = Object.entries(f.unknownTypes)
      .map(([t, n]) => `${t}×${n}`)
      .join(', ')
    lines.push(
      `${f.file}  [${f.format ?? 'unknown format'}]  read ${f.read} · imported ${f.imported} · already present ${f.duplicates} · observations ${f.observations}${f.covered > 0 ? ` (${f.covered} already captured through another path)` : ''} · skipped ${f.skipped.length}${unknown ? ` · unknown types: ${unknown}` : ''}`,
    )
    if (f.error) lines.push(`  ! ${f.error}`)
    for (const s of f.skipped.slice(0, 20)) lines.push(`  skipped ${typeof s.line === 'number' ? `line ${s.line}` : s.line}: ${s.reason}`)
    if (f.skipped.length > 20) lines.push(`  … ${f.skipped.length - 20} more skipped`)
  }
  lines.push(
    `total: ${counted(r.files.length, 'file')}, read ${r.read}, imported ${r.imported}, already present ${r.duplicates}, observations ${r.observations}${r.covered > 0 ? ` (${r.covered} already captured through another path)` : ''}, skipped ${r.skipped}, unknown ${r.unknown}`,
  )
  return `${lines.join('\n')}\n`
}
