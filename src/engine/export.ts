import { z } from 'zod'
import { MnemoError } from '../core/errors.js'
import type { EventInput, Memory, Project } from '../core/types.js'
import type { AuditEntry, StoredEvent } from '../storage/store.js'

/** Identifies mnemo's export format in the manifest line. */
export const EXPORT_FORMAT = 'mnemo-export'
/** Version of the export format; bumped on any incompatible change. */
export const EXPORT_VERSION = 1

/**
 * mnemo's export format, version 1: UTF-8 JSON Lines.
 *
 * Line 1, the manifest:
 * `{"format":"mnemo-export","version":1,"exportedAt":ISO,"project":root|null,
 *   "counts":{"events":n,"tombstones":n,"audit":n,"sessions":n,"observations":n,"memories":n}}`
 * Then one record per line, `kind` first:
 * - `{"kind":"event","seq","idemKey","agent","format","type","sessionKey","project":{root,name},"ts","sessionStartedAt"?,"receivedAt","payload"}`
 *   every logged event, in log order: everything else (sessions,
 *   observations, memories with their versions, validity intervals,
 *   archive and pin state, graph mentions, vectors) derives from these, with
 *   the same ids, because ids are a function of event time and key;
 * - `{"kind":"tombstone","idemKey","at","projectRoot"}` deleted events' keys;
 * - `{"kind":"audit","at","actor","action","target","count","details"?}`.
 * `sessions`, `observations` and `memories` in the manifest are the derived
 * counts an import into an empty store must reproduce.
 */
export const exportManifestSchema = z.object({
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
  exportedAt: z.string(),
  project: z.string().nullable(),
  counts: z.object({
    events: z.number().int().nonnegative(),
    tombstones: z.number().int().nonnegative(),
    audit: z.number().int().nonnegative(),
    sessions: z.number().int().nonnegative(),
    observations: z.number().int().nonnegative(),
    memories: z.number().int().nonnegative(),
  }),
})
export type ExportManifest = z.infer<typeof exportManifestSchema>

const eventRecordSchema = z.object({
  kind: z.literal('event'),
  seq: z.number().int(),
  idemKey: z.string().min(1),
  agent: z.enum(['claude-code', 'codex', 'locomo', 'mnemo']),
  format: z.enum(['claude-hook', 'claude-transcript', 'codex-rollout', 'locomo-turn', 'mnemo']),
  type: z.string(),
  sessionKey: z.string(),
  project: z.object({ root: z.string().min(1), name: z.string() }),
  ts: z.number().int(),
  sessionStartedAt: z.number().int().optional(),
  receivedAt: z.number().int(),
  payload: z.unknown(),
})
const tombstoneRecordSchema = z.object({ kind: z.literal('tombstone'), idemKey: z.string().min(1), at: z.number().int(), projectRoot: z.string().nullable() })
const auditRecordSchema = z.object({
  kind: z.literal('audit'),
  at: z.number().int(),
  actor: z.string(),
  action: z.string(),
  target: z.string(),
  count: z.number().int(),
  details: z.record(z.string(), z.unknown()).optional(),
})
const recordSchema = z.discriminatedUnion('kind', [eventRecordSchema, tombstoneRecordSchema, auditRecordSchema])

export function eventRecord(e: StoredEvent): Record<string, unknown> {
  return {
    kind: 'event',
    seq: e.seq,
    idemKey: e.idemKey,
    agent: e.agent,
    format: e.format,
    type: e.type,
    sessionKey: e.sessionKey,
    project: e.project,
    ts: e.ts,
    ...(e.sessionStartedAt !== undefined ? { sessionStartedAt: e.sessionStartedAt } : {}),
    receivedAt: e.receivedAt,
    payload: e.payload,
  }
}

export function auditRecord(a: AuditEntry): Record<string, unknown> {
  return { kind: 'audit', at: a.at, actor: a.actor, action: a.action, target: a.target, count: a.count, ...(a.details ? { details: a.details } : {}) }
}

/** A parsed, validated export file, ready to apply. */
export interface ParsedExport {
  manifest: ExportManifest
  events: { event: EventInput; receivedAt: number }[]
  tombstones: { idemKey: string; at: number; projectRoot: string | undefined }[]
  audit: AuditEntry[]
}

/**
 * True when `text` starts with a mnemo export manifest.
 */
export function isMnemoExport(text: string): boolean {
  const first = text.slice(0, text.indexOf('\n') >= 0 ? text.indexOf('\n') : text.length)
  return first.includes(`"format":"${EXPORT_FORMAT}"`) || first.includes(`"format": "${EXPORT_FORMAT}"`)
}

/**
 * Parses and validates a whole export before anything is written: a bad
 * line makes the whole import fail, naming the line, and nothing is stored.
 *
 * @throws {MnemoError} `IMPORT_FAILED` — no manifest, a version this mnemo cannot read, a malformed record, or counts that disagree with the records.
 */
export function parseExport(text: string, file: string): ParsedExport {
  const lines = text.split('\n')
  const fail = (line: number, message: string): never => {
    throw new MnemoError('IMPORT_FAILED', `${file}:${line}: ${message}`, { details: { file, read: line, skipped: 0 } })
  }
  let manifestRaw: unknown
  try {
    manifestRaw = JSON.parse(lines[0] ?? '')
  } catch {
    fail(1, 'the first line is not a JSON manifest')
  }
  const m = exportManifestSchema.safeParse(manifestRaw)
  if (!m.success) {
    const version = (manifestRaw as { version?: unknown } | null)?.version
    fail(1, version !== undefined && version !== EXPORT_VERSION ? `export format version ${String(version)} is not supported (this mnemo reads version ${EXPORT_VERSION})` : `invalid manifest: ${m.error.issues[0]?.path.join('.')} ${m.error.issues[0]?.message}`)
  }
  const out: ParsedExport = { manifest: m.data!, events: [], tombstones: [], audit: [] }
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!
    if (line.trim().length === 0) continue
    let raw: unknown
    try {
      raw = JSON.parse(line)
    } catch {
      fail(i + 1, 'not valid JSON')
    }
    const r = recordSchema.safeParse(raw)
    if (!r.success) fail(i + 1, `invalid record: ${r.error.issues[0]?.path.join('.') || 'kind'} ${r.error.issues[0]?.message}`)
    const rec = r.data!
    if (rec.kind === 'event') {
      const event: EventInput = { agent: rec.agent, format: rec.format, type: rec.type, sessionKey: rec.sessionKey, project: rec.project, ts: rec.ts, idemKey: rec.idemKey, payload: rec.payload }
      if (rec.sessionStartedAt !== undefined) event.sessionStartedAt = rec.sessionStartedAt
      out.events.push({ event, receivedAt: rec.receivedAt })
    } else if (rec.kind === 'tombstone') out.tombstones.push({ idemKey: rec.idemKey, at: rec.at, projectRoot: rec.projectRoot ?? undefined })
    else out.audit.push({ at: rec.at, actor: rec.actor, action: rec.action, target: rec.target, count: rec.count, ...(rec.details ? { details: rec.details } : {}) })
  }
  const c = out.manifest.counts
  if (c.events !== out.events.length || c.tombstones !== out.tombstones.length || c.audit !== out.audit.length) {
    fail(lines.length, `the manifest counts ${c.events} events, ${c.tombstones} tombstones, ${c.audit} audit records; the file holds ${out.events.length}, ${out.tombstones.length}, ${out.audit.length} (truncated?)`)
  }
  return out
}

const KIND_TITLES: Record<string, string> = { decision: 'Decisions', fact: 'Facts', preference: 'Preferences', lesson: 'Lessons', summary: 'Session summaries' }

/**
 * A project's memories as Markdown a person can read: current memories by
 * kind (pinned first), then superseded versions with their validity intervals.
 */
export function memoriesMarkdown(project: Project, current: readonly Memory[], superseded: readonly Memory[], exportedAt: number): string {
  const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10)
  const lines = [`# ${project.name}`, '', `Memories recorded by mnemo for \`${project.root}\`, exported ${new Date(exportedAt).toISOString()}.`, '']
  for (const kind of Object.keys(KIND_TITLES)) {
    const items = current.filter((m) => m.kind === kind)
    if (items.length === 0) continue
    lines.push(`## ${KIND_TITLES[kind]}`, '')
    for (const m of items) lines.push(`- ${m.pinned ? '📌 ' : ''}${m.text.replace(/\s+/g, ' ')} _(since ${day(m.validFrom)}${m.seenCount > 1 ? `, seen ${m.seenCount}×` : ''}${m.archivedAt ? ', archived' : ''})_`)
    lines.push('')
  }
  if (superseded.length > 0) {
    lines.push('## Superseded', '')
    for (const m of superseded) lines.push(`- ~~${m.text.replace(/\s+/g, ' ')}~~ _(${day(m.validFrom)} – ${m.validTo !== undefined ? day(m.validTo) : '?'})_`)
    lines.push('')
  }
  if (current.length === 0 && superseded.length === 0) lines.push('_No memories yet._', '')
  return lines.join('\n')
}
