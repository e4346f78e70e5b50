import { makeId, type ProjectId } from '../../core/ids.js'
import type { EventInput } from '../../core/types.js'
import { valueAfterSubject } from '../rows.js'
import type { Derivation } from '../store.js'
import { docInsert, mention } from './pg-docs.js'
import { changes, first, one, Params, type Queryable, rows, same } from './pg-sql.js'
import type { PgWriteParts } from './pg-write.js'

// Memories on PostgreSQL: the write guard (seen again, or a new memory that may supersede one and flag those quoting
// it for review) and the lifecycle operations, as sqlite-write.ts applies them.

/**
 * The write guard (sqlite-write.ts `applyMemory`): the same content as a current memory of the project and user (and
 * agent under agent isolation) raises its seen count; otherwise a new memory, which supersedes the one it names or the
 * current one of the same kind and subject, and flags for review current memories quoting the superseded value.
 */
export async function applyMemory(
  c: Queryable,
  parts: PgWriteParts,
  event: EventInput,
  seq: number,
  projectId: ProjectId,
  m: NonNullable<Derivation['memory']>,
) {
  const user = event.user ?? null
  const agent = m.agent ?? (event.agent === 'mnemo' ? null : event.agent)
  // The guard's scope: the event's user, and under agent isolation the memory's agent.
  const mine = (p: Params): string =>
    m.guardByAgent ? `${same('user_id', user, p)} AND ${same('agent', agent, p)}` : same('user_id', user, p)
  const pick = async (where: (p: Params) => string): Promise<{ rowid: number; id: string } | undefined> => {
    const p = new Params()
    const sql = `SELECT rowid, id FROM memories WHERE ${where(p)}`
    return first(c, sql, p.values)
  }
  const same_ =
    (m.sameAs
      ? await pick((p) => `id = ${p.add(m.sameAs)} AND project_id = ${p.add(projectId)} AND ${mine(p)} AND valid_to IS NULL`)
      : undefined) ??
    (await pick((p) => `project_id = ${p.add(projectId)} AND ${mine(p)} AND content_key = ${p.add(m.contentKey)} AND valid_to IS NULL`))
  if (same_) {
    // Seen again: a stated memory stays stated (NULL); a derived one keeps the surest extraction.
    await c.query(
      `UPDATE memories SET seen_count = seen_count + 1, last_seen_at = GREATEST(last_seen_at, $1), archived_at = NULL,
       confidence = CASE WHEN confidence IS NULL OR $2::double precision IS NULL THEN NULL ELSE GREATEST(confidence, $2::double precision) END
       WHERE rowid = $3`,
      [event.ts, m.confidence ?? null, same_.rowid],
    )
    // Stated again as the replacement of another memory (`--supersedes`): that one ends here, superseded by this one.
    if (m.supersedes !== undefined && m.supersedes !== same_.id) {
      const p = new Params()
      const sql = `UPDATE memories SET valid_to = ${p.add(event.ts)}, superseded_by = ${p.add(same_.id)}
        WHERE id = ${p.add(m.supersedes)} AND project_id = ${p.add(projectId)} AND ${mine(p)} AND valid_to IS NULL`
      if ((await changes(c, sql, p.values)) > 0)
        await c.query('UPDATE memories SET supersedes = $1 WHERE rowid = $2 AND supersedes IS NULL', [m.supersedes, same_.rowid])
    }
    return
  }
  const id = makeId('mem', event.ts, event.idemKey)
  const flags = m.flags && m.flags.length > 0 ? m.flags.join(',') : null
  const p = new Params()
  const v = {
    id: p.add(id),
    kind: p.add(m.kind),
    projectId: p.add(projectId),
    user: p.add(user),
    agent: p.add(agent),
    ts: p.add(event.ts),
    flags: p.add(flags),
  }
  const values = [
    v.id,
    p.add(seq),
    v.projectId,
    v.kind,
    p.add(m.text),
    v.ts,
    v.flags,
    p.add(m.contentKey),
    p.add(m.subjectKey ?? null),
    v.ts,
    v.ts,
    p.add(m.sources && m.sources.length > 0 ? JSON.stringify(m.sources) : null),
    p.add(m.confidence ?? null),
    v.user,
    v.agent,
  ]
  // The memory and its search document in one statement.
  const made = await one<{ doc_key: number }>(
    c,
    `WITH m AS (
       INSERT INTO memories (id, event_seq, project_id, kind, text, created_at, flags, content_key, subject_key, last_seen_at, valid_from, sources, confidence, user_id, agent)
       VALUES (${values.join(', ')}) RETURNING rowid
     )
     ${docInsert(p, parts, m.index, '-m.rowid', 'memory', { ...v, role: v.kind, sessionId: 'NULL' })} FROM m RETURNING doc_key`,
    p.values,
  )
  const rowid = -made.doc_key
  await mention(c, projectId, -rowid, m.entities)
  const q = new Params()
  const old: { rowid: number; id: string; text: string; subject_key: string | null }[] = m.supersedes
    ? await rows(
        c,
        `SELECT rowid, id, text, subject_key FROM memories WHERE id = ${q.add(m.supersedes)} AND project_id = ${q.add(projectId)} AND ${mine(q)} AND valid_to IS NULL`,
        q.values,
      )
    : m.subjectKey
      ? await rows(
          c,
          `SELECT rowid, id, text, subject_key FROM memories WHERE project_id = ${q.add(projectId)} AND ${mine(q)} AND kind = ${q.add(m.kind)}
           AND subject_key = ${q.add(m.subjectKey)} AND valid_to IS NULL AND rowid <> ${q.add(rowid)} ORDER BY rowid`,
          q.values,
        )
      : []
  for (const o of old) {
    await c.query('UPDATE memories SET valid_to = $1, superseded_by = $2 WHERE rowid = $3', [event.ts, id, o.rowid])
    await c.query('UPDATE memories SET supersedes = $1 WHERE rowid = $2', [o.id, rowid])
    // A current memory that quotes the replaced memory's value may rest on it.
    const value = valueAfterSubject(o.text, o.subject_key)
    if (value && value.length >= 4) {
      const r = new Params()
      const sql = `UPDATE memories SET review = ${r.add(`depends-on-superseded:${o.id}`)} WHERE project_id = ${r.add(projectId)} AND ${mine(r)}
        AND valid_to IS NULL AND rowid <> ${r.add(rowid)} AND strpos(lower(text), ${r.add(value.toLowerCase())}) > 0`
      await c.query(sql, r.values)
    }
  }
}

/** A pin, unpin, archive or restore: applied only to a memory of the event's user (none: a shared memory). */
export async function applyMemoryOp(
  c: Queryable,
  op: NonNullable<Derivation['memoryOps']>[number],
  ts: number,
  user: string | null,
): Promise<void> {
  const p = new Params()
  if (op.op === 'pin' || op.op === 'unpin') {
    const sql = `UPDATE memories SET pinned = ${p.add(op.op === 'pin' ? 1 : 0)} WHERE id = ${p.add(op.id)} AND ${same('user_id', user, p)}`
    await c.query(sql, p.values)
  } else if (op.op === 'archive') {
    const sql = `UPDATE memories SET archived_at = ${p.add(ts)} WHERE id = ${p.add(op.id)} AND ${same('user_id', user, p)} AND pinned = 0`
    await c.query(sql, p.values)
  } else {
    await c.query(`UPDATE memories SET archived_at = NULL WHERE id = ${p.add(op.id)} AND ${same('user_id', user, p)}`, p.values)
  }
}
