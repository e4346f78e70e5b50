import { statSync } from 'node:fs'
import { MnemoError } from '../../core/errors.js'
import type { EventFormat } from '../../core/types.js'
import type { AuditEntry, EventFilter, StepSession, StoredEvent } from '../store.js'
import { encodePayload, eventConditions, payloadText, toStoredEvent, type EventRow } from './sqlite-rows.js'
import type { SqliteDb } from './sqlite-db.js'
import { otherPathRecords, pruneKeptIds, removeDerived, sessionIdOf } from './sqlite-write.js'
import { removeFactsOfEvent } from './sqlite-facts.js'

// Governance of the event log: deletes with tombstones, payload rewrites and folding, vacuum, the audit log, the integrity check.

export function observationIdsOfEvents(s: SqliteDb, filter: EventFilter & { projectRoot: string }): string[] {
  const where = eventConditions(filter, 'e.')
  return s
    .stmt(`SELECT o.id FROM observations o JOIN events e ON e.seq = o.event_seq WHERE ${where.sql.join(' AND ')}`)
    .pluck()
    .all(...where.params) as string[]
}

export function eventsHaveCopies(s: SqliteDb, seqs: readonly number[]): boolean {
  if (seqs.length === 0) return false
  return (
    s
      .stmt(
        `SELECT 1 FROM observation_copies c JOIN observations o ON o.rowid = c.observation_rowid WHERE o.event_seq IN (${seqs.map(() => '?').join(',')}) LIMIT 1`,
      )
      .get(...seqs) !== undefined
  )
}

export function stepRecords(
  s: SqliteDb,
  session: StepSession,
  origin: string,
  step: { sourceRef?: string; kind: string; text: string; ts: number },
): string[] {
  const sessionId = sessionIdOf(s, session)
  if (sessionId === undefined) return []
  return otherPathRecords(s, sessionId, origin, step)
    .sort((a, b) => a.ts - b.ts || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((r) => r.id)
}

export function stepOf(s: SqliteDb, observationId: string): { origin: string | undefined; session: StepSession } | undefined {
  const row = s
    .stmt(
      'SELECT o.origin, p.root AS projectRoot, se.agent, se.session_key AS key FROM observations o JOIN sessions se ON se.id = o.session_id JOIN projects p ON p.id = se.project_id WHERE o.id = ?',
    )
    .get(observationId) as { origin: string | null; projectRoot: string; agent: string; key: string } | undefined
  return row ? { origin: row.origin ?? undefined, session: { projectRoot: row.projectRoot, agent: row.agent, key: row.key } } : undefined
}

export function sourceEventOf(s: SqliteDb, id: string): number | undefined {
  const o = s.stmt('SELECT event_seq FROM observations WHERE id = ?').pluck().get(id) as number | undefined
  if (o !== undefined) return o
  return s.stmt('SELECT event_seq FROM memories WHERE id = ?').pluck().get(id) as number | undefined
}

export function deleteEvents(s: SqliteDb, filter: EventFilter): number {
  return s.guard('delete', () => {
    if (filter.seqs && filter.seqs.length === 0) return 0
    const { sql: where, params } = eventConditions(filter)
    if (where.length === 0)
      throw new MnemoError('INVALID_INPUT', 'a delete needs a scope (ids, project, session or time)', { details: { path: 'scope' } })
    let deleted = 0
    s.db
      .transaction(() => {
        const rows = s.stmt(`SELECT seq, idem_key, project_root FROM events WHERE ${where.join(' AND ')}`).all(...params) as {
          seq: number
          idem_key: string
          project_root: string
        }[]
        for (const r of rows) {
          // Derived rows first (they reference the event), then the event; its key becomes a tombstone.
          for (const o of s.stmt('SELECT id FROM observations WHERE event_seq = ?').pluck().all(r.seq) as string[]) removeDerived(s, o)
          for (const m of s.stmt('SELECT id, superseded_by FROM memories WHERE event_seq = ?').all(r.seq) as {
            id: string
            superseded_by: string | null
          }[]) {
            removeDerived(s, m.id)
            const next = m.superseded_by
              ? (s.stmt('SELECT id, valid_from FROM memories WHERE id = ?').get(m.superseded_by) as
                  | { id: string; valid_from: number }
                  | undefined)
              : undefined
            if (next) {
              // A middle version goes: the one before it is now superseded by the one after it (as a rebuild would derive).
              s.stmt('UPDATE memories SET superseded_by = ?, valid_to = ? WHERE superseded_by = ?').run(next.id, next.valid_from, m.id)
              const before = s.stmt('SELECT id FROM memories WHERE superseded_by = ?').pluck().get(next.id) as string | undefined
              s.stmt('UPDATE memories SET supersedes = ? WHERE id = ?').run(before ?? null, next.id)
            } else {
              // The current version goes: the one it replaced is current again.
              s.stmt('UPDATE memories SET valid_to = NULL, superseded_by = NULL WHERE superseded_by = ?').run(m.id)
            }
          }
          s.stmt('DELETE FROM observation_copies WHERE event_seq = ?').run(r.seq)
          removeFactsOfEvent(s, r.seq)
          s.stmt('INSERT INTO tombstones (idem_key, at, project_root) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(
            r.idem_key,
            s.now(),
            r.project_root,
          )
          s.stmt('DELETE FROM events WHERE seq = ?').run(r.seq)
        }
        for (const root of new Set(rows.map((r) => r.project_root))) dropProjectIfEmpty(s, root)
        deleted = rows.length
      })
      .immediate()
    return deleted
  })
}

/**
 * A project none of whose events is left goes with what hangs on it (its sessions, entities, LSA model, kept ids),
 * as a rebuild would leave it: a project exists while one of its events does.
 */
function dropProjectIfEmpty(s: SqliteDb, root: string): void {
  if (s.stmt('SELECT 1 FROM events WHERE project_root = ? LIMIT 1').get(root) !== undefined) return
  // Not .pluck(): statements are cached by their text, and ensureProject reads this one as a row.
  const id = (s.stmt('SELECT id FROM projects WHERE root = ?').get(root) as { id: string } | undefined)?.id
  if (id === undefined) return
  const sessions = s.stmt('SELECT id FROM sessions WHERE project_id = ?').pluck().all(id) as string[]
  for (const session of sessions)
    for (const o of s.stmt('SELECT id FROM observations WHERE session_id = ?').pluck().all(session) as string[]) removeDerived(s, o)
  s.stmt('DELETE FROM sessions WHERE project_id = ?').run(id)
  s.stmt('DELETE FROM entity_mentions WHERE entity_id IN (SELECT id FROM entities WHERE project_id = ?)').run(id)
  s.stmt('DELETE FROM entities WHERE project_id = ?').run(id)
  s.forgetEntityIds()
  s.stmt('DELETE FROM lsa_models WHERE project_id = ?').run(id)
  s.stmt('DELETE FROM projects WHERE id = ?').run(id)
  pruneKeptIds(s)
}

export function rewritePayloads(s: SqliteDb, fn: (payload: unknown) => unknown): number {
  return s.guard('rewrite payloads', () => {
    let changed = 0
    s.db
      .transaction(() => {
        let after = 0
        for (;;) {
          const rows = s.stmt('SELECT seq, payload FROM events WHERE seq > ? ORDER BY seq LIMIT 1000').all(after) as {
            seq: number
            payload: string | Buffer
          }[]
          if (rows.length === 0) break
          for (const row of rows) {
            after = row.seq
            const before = payloadText(row.payload)
            const next = fn(JSON.parse(before) as unknown)
            if (next === undefined) continue
            if (JSON.stringify(next) === before) continue
            s.stmt('UPDATE events SET payload = ? WHERE seq = ?').run(encodePayload(next), row.seq)
            changed++
          }
        }
      })
      .immediate()
    return changed
  })
}

export function foldEvents(
  s: SqliteDb,
  options: { before: number; projectRoot?: string; user?: string | null },
  fold: (event: StoredEvent) => { format: EventFormat; payload: unknown } | undefined,
): { events: number; bytesBefore: number; bytesAfter: number } {
  return s.guard('fold events', () => {
    const out = { events: 0, bytesBefore: 0, bytesAfter: 0 }
    const scope = `${options.projectRoot !== undefined ? ' AND project_root = ?' : ''}${options.user === null ? ' AND user_id IS NULL' : options.user !== undefined ? ' AND user_id = ?' : ''}`
    s.db
      .transaction(() => {
        let after = 0
        for (;;) {
          const rows = s
            .stmt(`SELECT * FROM events WHERE seq > ? AND ts < ?${scope} ORDER BY seq LIMIT 1000`)
            .all(
              after,
              options.before,
              ...(options.projectRoot !== undefined ? [options.projectRoot] : []),
              ...(typeof options.user === 'string' ? [options.user] : []),
            ) as EventRow[]
          if (rows.length === 0) break
          for (const row of rows) {
            after = row.seq
            const next = fold(toStoredEvent(row))
            if (next === undefined) continue
            const stored = encodePayload(next.payload)
            // Payloads are stored compressed over a dictionary of the raw formats' keys, so a folded payload that is
            // shorter as JSON can still take more bytes than the raw one: fold only where the stored bytes shrink.
            if (Buffer.byteLength(stored) >= Buffer.byteLength(row.payload)) continue
            s.stmt('UPDATE events SET format = ?, payload = ? WHERE seq = ?').run(next.format, stored, row.seq)
            out.events++
            out.bytesBefore += Buffer.byteLength(row.payload)
            out.bytesAfter += Buffer.byteLength(stored)
          }
        }
      })
      .immediate()
    return out
  })
}

export function vacuum(s: SqliteDb): { bytesBefore: number; bytesAfter: number } {
  return s.guard('vacuum', () => {
    const size = (): number => (s.path === ':memory:' ? 0 : statSync(s.path).size)
    s.db.pragma('wal_checkpoint(TRUNCATE)')
    const bytesBefore = size()
    s.db.exec('VACUUM')
    s.db.pragma('wal_checkpoint(TRUNCATE)')
    return { bytesBefore, bytesAfter: size() }
  })
}

export function tombstones(s: SqliteDb, projectRoot?: string): { idemKey: string; at: number; projectRoot: string | undefined }[] {
  const rows = (
    projectRoot === undefined
      ? s.stmt('SELECT idem_key, at, project_root FROM tombstones ORDER BY at, idem_key').all()
      : s.stmt('SELECT idem_key, at, project_root FROM tombstones WHERE project_root = ? ORDER BY at, idem_key').all(projectRoot)
  ) as { idem_key: string; at: number; project_root: string | null }[]
  return rows.map((r) => ({ idemKey: r.idem_key, at: r.at, projectRoot: r.project_root ?? undefined }))
}

export function putTombstones(s: SqliteDb, rows: readonly { idemKey: string; at: number; projectRoot: string | undefined }[]): void {
  s.guard('put tombstones', () =>
    s.db
      .transaction(() => {
        for (const r of rows)
          s.stmt('INSERT INTO tombstones (idem_key, at, project_root) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(
            r.idemKey,
            r.at,
            r.projectRoot ?? null,
          )
      })
      .immediate(),
  )
}

export function audit(s: SqliteDb, entry: AuditEntry): void {
  s.guard('audit', () =>
    s
      .stmt('INSERT INTO audit_log (at, actor, action, target, count, details) VALUES (?, ?, ?, ?, ?, ?)')
      .run(entry.at, entry.actor, entry.action, entry.target, entry.count, entry.details ? JSON.stringify(entry.details) : null),
  )
}

export function auditLog(s: SqliteDb, limit: number): AuditEntry[] {
  const rows = s.stmt('SELECT at, actor, action, target, count, details FROM audit_log ORDER BY id DESC LIMIT ?').all(limit) as (Omit<
    AuditEntry,
    'details'
  > & { details: string | null })[]
  return rows.map((r) => ({
    at: r.at,
    actor: r.actor,
    action: r.action,
    target: r.target,
    count: r.count,
    ...(r.details ? { details: JSON.parse(r.details) as Record<string, unknown> } : {}),
  }))
}

export function integrityCheck(s: SqliteDb): string {
  const rows = s.db.pragma('integrity_check') as { integrity_check: string }[]
  return rows.map((r) => r.integrity_check).join('; ')
}
