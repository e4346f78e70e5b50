import type { ClientBase } from 'pg'
import type { FactOp } from '../../core/facts/fact-types.js'
import type { EventInput } from '../../core/types.js'
import { run } from './pg-fact-schema.js'

// Applying fact operations (Derivation.facts) to the fact tables as events are appended or replayed, and removing
// what a deleted event wrote: the PostgreSQL twin of sqlite-facts.ts's applyFacts / removeFactsOfEvent, statement for
// statement, so both dialects derive the same rows from the same log.

type Client = Pick<ClientBase, 'query'>

const SCOPE = 'project_root = $2 AND user_id IS NOT DISTINCT FROM $3'

/**
 * Applies one event's fact operations inside the caller's transaction (the append's or the rebuild's): a declaration
 * adds a schema row; an assert adds a version (superseding the latest) and makes it the record's current row; a
 * retract adds a version that ends the fact (`valid_to` = its `at`, `retracted_at` = the event's time); a delete
 * removes the record's versions and current row and leaves a tombstone. Operations apply only within the event's
 * project and user: an id another scope holds is left alone, as is a retract of an unknown record.
 * @param client - A client inside an open transaction (the caller commits or rolls back).
 * @param seq - The event's log sequence number (what a later event delete removes by).
 * @throws {MnemoError} `STORE_UNAVAILABLE` — a server error (the transaction is then the caller's to roll back).
 */
export async function applyFactOps(client: Client, event: EventInput, seq: number, ops: readonly FactOp[]): Promise<void> {
  const root = event.project.root
  const user = event.user ?? null
  const op_ = 'facts write'
  for (const op of ops) {
    if (op.action === 'declare') {
      await run(
        client,
        op_,
        'INSERT INTO fact_schema (project_root, user_id, collection, event_seq, spec) VALUES ($1, $2, $3, $4, $5::json)',
        [root, user, op.collection.name, seq, JSON.stringify(op.collection)],
      )
      continue
    }
    if (op.action === 'delete') {
      await run(client, op_, `DELETE FROM fact_versions WHERE record_id = $1 AND ${SCOPE}`, [op.id, root, user])
      await run(client, op_, `DELETE FROM fact_records WHERE id = $1 AND ${SCOPE}`, [op.id, root, user])
      await run(
        client,
        op_,
        'INSERT INTO fact_tombstones (record_id, project_root, user_id, collection, identity, deleted_at, event_seq) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [op.id, root, user, op.collection, op.identity ?? null, event.ts, seq],
      )
      continue
    }
    // The record's current version in this scope, and whether any scope holds a record with this id.
    const found = (
      await run<{ version: number | null; known: boolean }>(
        client,
        op_,
        `SELECT (SELECT version FROM fact_records WHERE id = $1 AND ${SCOPE}) AS version, EXISTS (SELECT 1 FROM fact_versions WHERE record_id = $1) AS known`,
        [op.id, root, user],
      )
    )[0]
    const current = found?.version ?? undefined
    // Another user's record (or another project's) with this id is not this event's to change.
    if (current === undefined && found?.known === true) continue
    if (op.action === 'retract' && current === undefined) continue
    const version = (current ?? 0) + 1
    // One statement each: the parts of a data-modifying WITH see the tables as they were before it, so the latest
    // version is superseded, the new one added and the current row replaced at once.
    const supersede = 'UPDATE fact_versions SET superseded_at = $2 WHERE record_id = $1 AND superseded_at IS NULL'
    if (op.action === 'assert') {
      await run(
        client,
        op_,
        `WITH superseded AS (${supersede}),
         added AS (
           INSERT INTO fact_versions (record_id, version, project_root, user_id, collection, action, data, status, valid_from, valid_to, recorded_at, provenance, event_seq)
           VALUES ($1, $3, $4, $5, $6, 'assert', $7::jsonb, $8, $9, $10, $2, $11::json, $12))
         INSERT INTO fact_records (id, project_root, user_id, collection, identity, data, status, valid_from, valid_to, retracted_at, recorded_at, version, provenance, event_seq)
         VALUES ($1, $4, $5, $6, $13, $7::jsonb, $8, $9, $10, NULL, $2, $3, $11::json, $12)
         ON CONFLICT (id) DO UPDATE SET identity = excluded.identity, data = excluded.data, status = excluded.status, valid_from = excluded.valid_from,
           valid_to = excluded.valid_to, retracted_at = NULL, recorded_at = excluded.recorded_at, version = excluded.version,
           provenance = excluded.provenance, event_seq = excluded.event_seq`,
        [
          op.id,
          event.ts,
          version,
          root,
          user,
          op.collection,
          JSON.stringify(op.values),
          op.status,
          op.validFrom ?? null,
          op.validTo ?? null,
          JSON.stringify(op.provenance),
          seq,
          op.identity ?? null,
        ],
      )
    } else {
      await run(
        client,
        op_,
        `WITH superseded AS (${supersede}),
         added AS (
           INSERT INTO fact_versions (record_id, version, project_root, user_id, collection, action, data, status, valid_from, valid_to, recorded_at, provenance, event_seq)
           SELECT id, $3, project_root, user_id, collection, 'retract', data, status, valid_from, $4, $2, provenance, $5 FROM fact_records WHERE id = $1)
         UPDATE fact_records SET valid_to = $4, retracted_at = $2, version = $3, recorded_at = $2, event_seq = $5 WHERE id = $1`,
        [op.id, event.ts, version, op.at, seq],
      )
    }
  }
}

interface VersionRow {
  record_id: string
  version: number
  project_root: string
  user_id: string | null
  collection: string
  action: 'assert' | 'retract'
  data: unknown
  status: string
  valid_from: number | null
  valid_to: number | null
  recorded_at: number
  provenance: unknown
  event_seq: number
}

/**
 * Removes what a deleted event wrote to the fact tables inside the caller's transaction, leaving them as a rebuild
 * without it would derive them: its declaration, its tombstone and its versions (each record they belong to is
 * re-read from its remaining versions, renumbered from 1; a record with none left is gone).
 * @throws {MnemoError} `STORE_UNAVAILABLE` — a server error.
 */
export async function removeFactsOfEvent(client: Client, seq: number): Promise<void> {
  const op_ = 'facts remove'
  const ids = (
    await run<{ record_id: string }>(client, op_, 'SELECT DISTINCT record_id FROM fact_versions WHERE event_seq = $1 ORDER BY 1', [seq])
  ).map((r) => r.record_id)
  await run(client, op_, 'DELETE FROM fact_schema WHERE event_seq = $1', [seq])
  await run(client, op_, 'DELETE FROM fact_tombstones WHERE event_seq = $1', [seq])
  if (ids.length === 0) return
  await run(client, op_, 'DELETE FROM fact_versions WHERE event_seq = $1', [seq])
  for (const id of ids) {
    const versions = await run<VersionRow>(client, op_, 'SELECT * FROM fact_versions WHERE record_id = $1 ORDER BY version', [id])
    const identity =
      (await run<{ identity: string | null }>(client, op_, 'SELECT identity FROM fact_records WHERE id = $1', [id]))[0]?.identity ?? null
    await run(client, op_, 'DELETE FROM fact_versions WHERE record_id = $1', [id])
    await run(client, op_, 'DELETE FROM fact_records WHERE id = $1', [id])
    for (const [i, v] of versions.entries()) {
      await run(
        client,
        op_,
        `INSERT INTO fact_versions (record_id, version, project_root, user_id, collection, action, data, status, valid_from, valid_to, recorded_at, superseded_at, provenance, event_seq)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $13::json, $14)`,
        [
          id,
          i + 1,
          v.project_root,
          v.user_id,
          v.collection,
          v.action,
          JSON.stringify(v.data),
          v.status,
          v.valid_from,
          v.valid_to,
          v.recorded_at,
          versions[i + 1]?.recorded_at ?? null,
          JSON.stringify(v.provenance),
          v.event_seq,
        ],
      )
    }
    const last = versions.at(-1)
    if (last === undefined) continue
    await run(
      client,
      op_,
      `INSERT INTO fact_records (id, project_root, user_id, collection, identity, data, status, valid_from, valid_to, retracted_at, recorded_at, version, provenance, event_seq)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12, $13::json, $14)`,
      [
        id,
        last.project_root,
        last.user_id,
        last.collection,
        identity,
        JSON.stringify(last.data),
        last.status,
        last.valid_from,
        last.valid_to,
        last.action === 'retract' ? last.recorded_at : null,
        last.recorded_at,
        versions.length,
        JSON.stringify(last.provenance),
        last.event_seq,
      ],
    )
  }
}
