import { z } from 'zod'
import { USER_NAME_PATTERN } from '../core/user.js'
import { MAX_EVENT_TS } from '../core/types.js'
import { MnemoError } from '../core/errors.js'
import { AGENT_NAMES, type EventInput } from '../core/types.js'
import type { AuditEntry } from '../storage/store.js'
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportManifest } from './export.js'

/** Validation of mnemo's export format (described in export.ts); loaded only when an export is imported. */
const exportManifestSchema = z.object({
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

/** An event time: epoch ms within 1970–9999, as capture accepts. */
const eventTime = z.number().int().min(0).max(MAX_EVENT_TS)

// The envelope is capped like a capture's (a hook's session_id is at most 512 characters).
const eventRecordSchema = z.object({
  kind: z.literal('event'),
  seq: z.number().int(),
  idemKey: z.string().min(1).max(1024),
  agent: z.enum(AGENT_NAMES),
  format: z.enum([
    'claude-hook',
    'claude-transcript',
    'codex-rollout',
    'gemini-session',
    'opencode-storage',
    'cursor-state',
    'locomo-turn',
    'mnemo',
    'folded',
  ]),
  type: z.string().max(128),
  sessionKey: z.string().max(1024),
  project: z.object({ root: z.string().min(1).max(4096), name: z.string().max(512) }),
  ts: eventTime,
  sessionStartedAt: eventTime.optional(),
  user: z.string().regex(USER_NAME_PATTERN).optional(),
  receivedAt: eventTime,
  payload: z.unknown(),
})
const tombstoneRecordSchema = z.object({
  kind: z.literal('tombstone'),
  idemKey: z.string().min(1),
  at: z.number().int(),
  projectRoot: z.string().nullable(),
})
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

/** A parsed, validated export file, ready to apply. */
interface ParsedExport {
  manifest: ExportManifest
  events: { event: EventInput; receivedAt: number }[]
  tombstones: { idemKey: string; at: number; projectRoot: string | undefined }[]
  audit: AuditEntry[]
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
    fail(
      1,
      version !== undefined && version !== EXPORT_VERSION
        ? `export format version ${String(version)} is not supported (this mnemo reads version ${EXPORT_VERSION})`
        : `invalid manifest: ${m.error.issues[0]?.path.join('.')} ${m.error.issues[0]?.message}`,
    )
  }
  const out: ParsedExport = { manifest: m.data! as ExportManifest, events: [], tombstones: [], audit: [] }
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
      const event: EventInput = {
        agent: rec.agent,
        format: rec.format,
        type: rec.type,
        sessionKey: rec.sessionKey,
        project: rec.project,
        ts: rec.ts,
        idemKey: rec.idemKey,
        payload: rec.payload,
      }
      if (rec.sessionStartedAt !== undefined) event.sessionStartedAt = rec.sessionStartedAt
      if (rec.user !== undefined) event.user = rec.user
      out.events.push({ event, receivedAt: rec.receivedAt })
    } else if (rec.kind === 'tombstone')
      out.tombstones.push({ idemKey: rec.idemKey, at: rec.at, projectRoot: rec.projectRoot ?? undefined })
    else
      out.audit.push({
        at: rec.at,
        actor: rec.actor,
        action: rec.action,
        target: rec.target,
        count: rec.count,
        ...(rec.details ? { details: rec.details } : {}),
      })
  }
  const c = out.manifest.counts
  if (c.events !== out.events.length || c.tombstones !== out.tombstones.length || c.audit !== out.audit.length) {
    fail(
      lines.length,
      `the manifest counts ${c.events} events, ${c.tombstones} tombstones, ${c.audit} audit records; the file holds ${out.events.length}, ${out.tombstones.length}, ${out.audit.length} (truncated?)`,
    )
  }
  return out
}
