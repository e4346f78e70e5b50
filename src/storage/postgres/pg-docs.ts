import type { ProjectId } from '../../core/ids.js'
import type { EntityRef, IndexedText } from '../../core/types.js'
import type { Params, Queryable } from './pg-sql.js'
import { first } from './pg-sql.js'
import type { PgWriteParts } from './pg-write.js'

// The searchable documents on PostgreSQL: a document's search row (search_docs) written with its observation or
// memory, its entity mentions, and what goes when it goes.

/**
 * A column of `search_docs` that another step of the schema adds and the derivation fills (the search step's `tsv`):
 * its name, the SQL type its parameter is cast to, and its value for a document's indexed text.
 */
export interface PgDocColumn {
  name: string
  cast: string
  value(index: IndexedText): unknown
}

/**
 * The `INSERT INTO search_docs … SELECT …` head of a document's search row (its FROM clause is the caller's): the scope
 * columns given as placeholders already in `p` (`docKey` an SQL expression over the row just inserted), its indexed
 * text, and the other parts' columns (`docColumns`).
 */
export function docInsert(
  p: Params,
  parts: PgWriteParts,
  index: IndexedText,
  docKey: string,
  type: 'observation' | 'memory',
  v: {
    id: string
    kind: string
    role: string
    projectId: string
    sessionId: string
    user: string
    agent: string
    ts: string
    flags: string
  },
): string {
  const extra = parts.docColumns.map((col) => ({ name: col.name, value: `${p.add(col.value(index))}::${col.cast}` }))
  const columns = [
    'doc_key, type, id, kind, role, project_id, session_id, user_id, agent, ts, body, parts, meta, flags',
    ...extra.map((e) => e.name),
  ]
  const values = [
    docKey,
    `'${type}'`,
    v.id,
    v.kind,
    v.role,
    v.projectId,
    v.sessionId,
    v.user,
    v.agent,
    v.ts,
    `${p.add(index.body)}::text`,
    `${p.add(index.parts)}::text`,
    `${p.add(index.meta)}::text`,
    v.flags,
    ...extra.map((e) => e.value),
  ]
  return `INSERT INTO search_docs (${columns.join(', ')}) SELECT ${values.join(', ')}`
}

export async function mention(c: Queryable, projectId: ProjectId, docKey: number, entities: readonly EntityRef[]): Promise<void> {
  if (entities.length === 0) return
  // One statement: new entities are made in the order given; the mentions take the new ones (RETURNING) and the ones
  // that existed (the statement's snapshot holds those, not the rows it inserts).
  await c.query(
    `WITH e AS (SELECT * FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(type, name, n)),
     made AS (
       INSERT INTO entities (project_id, type, name) SELECT $1, e.type, e.name FROM e ORDER BY e.n ON CONFLICT DO NOTHING RETURNING id
     )
     INSERT INTO entity_mentions (entity_id, doc_key)
     SELECT id, $4::bigint FROM made UNION SELECT x.id, $4::bigint FROM entities x JOIN e ON x.project_id = $1 AND x.type = e.type AND x.name = e.name
     ON CONFLICT DO NOTHING`,
    [projectId, entities.map((e) => e.type), entities.map((e) => e.name), docKey],
  )
}

/** Deletes an observation or memory and every row hanging on it (its search document, mentions, vectors, copies, usage). */
export async function removeDerived(c: Queryable, id: string): Promise<void> {
  const obs = await first<{ rowid: number }>(c, 'SELECT rowid FROM observations WHERE id = $1', [id])
  if (obs) {
    await c.query('DELETE FROM entity_mentions WHERE doc_key = $1', [obs.rowid])
    await c.query('DELETE FROM doc_vectors WHERE doc_key = $1', [obs.rowid])
    await c.query('DELETE FROM search_docs WHERE doc_key = $1', [obs.rowid])
    await c.query('DELETE FROM observation_copies WHERE observation_rowid = $1', [obs.rowid])
    await c.query('DELETE FROM observations WHERE rowid = $1', [obs.rowid])
    return
  }
  const mem = await first<{ rowid: number }>(c, 'SELECT rowid FROM memories WHERE id = $1', [id])
  if (mem) {
    await c.query('DELETE FROM entity_mentions WHERE doc_key = $1', [-mem.rowid])
    await c.query('DELETE FROM memory_usage WHERE memory_id = $1', [id])
    await c.query('DELETE FROM doc_vectors WHERE doc_key = $1', [-mem.rowid])
    await c.query('DELETE FROM search_docs WHERE doc_key = $1', [-mem.rowid])
    await c.query('DELETE FROM memories WHERE rowid = $1', [mem.rowid])
  }
}
