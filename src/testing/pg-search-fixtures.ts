import { toIndexedText } from '../retrieval/search-text.js'
import { PgDb } from '../storage/postgres/pg-db.js'
import { migrate } from '../storage/postgres/pg-migrations.js'
import { BASE_MIGRATION, READ_INDEX_MIGRATION } from '../storage/postgres/pg-schema.js'
import { SEARCH_MIGRATION } from '../storage/postgres/pg-search-schema.js'
import { searchVector } from '../storage/postgres/pg-text.js'

// Test support for the search, graph and vector modules: documents written straight into the tables the derivation
// writes (pg-write.ts), so those modules are tested on a real server before and apart from the whole store.

/** A document to write: an observation (with a session) or a memory. Defaults: project `p1`, no user, agent `claude-code`. */
export interface FixtureDoc {
  type?: 'observation' | 'memory'
  project?: string
  session?: string
  user?: string | null
  agent?: string | null
  ts?: number
  role?: string
  kind?: string
  text: string
  /** IndexedText columns; default from `toIndexedText(text)` and an empty meta. */
  body?: string
  parts?: string
  meta?: string
  validTo?: number | null
  archivedAt?: number | null
}

/** A PgDb on `url` with the base and search steps applied. */
export async function openSearchDb(url: string): Promise<PgDb> {
  const db = PgDb.open(url)
  await migrate(db, [BASE_MIGRATION, SEARCH_MIGRATION, READ_INDEX_MIGRATION])
  return db
}

/** Writes documents (their event, project, session, row and search document) and returns their document keys, in order. */
export async function putDocs(db: PgDb, list: readonly FixtureDoc[]): Promise<number[]> {
  const keys: number[] = []
  await db.transaction('fixture', async (c) => {
    for (const d of list) {
      const project = d.project ?? 'p1'
      const user = d.user === undefined ? null : d.user
      const agent = d.agent === undefined ? 'claude-code' : d.agent
      const ts = d.ts ?? 1_700_000_000_000
      await c.query('INSERT INTO projects (id, root, name) VALUES ($1, $2, $1) ON CONFLICT DO NOTHING', [project, `/r/${project}`])
      const ev = await c.query<{ seq: number }>(
        `INSERT INTO events (idem_key, agent, format, type, session_key, project_root, project_name, ts, received_at, payload, user_id)
         VALUES ($1, $2, 'api', 'note', 's', $3, $4, $5, $5, '{}', $6) RETURNING seq`,
        [`k${Math.random()}`, agent ?? 'mnemo', `/r/${project}`, project, ts, user],
      )
      const seq = ev.rows[0]!.seq
      const index = toIndexedText(d.text)
      const body = d.body ?? index.body
      const parts = d.parts ?? index.parts
      const meta = d.meta ?? ''
      const tsv = searchVector({ body, parts, meta })
      if ((d.type ?? 'observation') === 'observation') {
        const session = d.session ?? `${project}-s1`
        await c.query(
          `INSERT INTO sessions (id, project_id, agent, session_key, started_at, last_event_at, user_id) VALUES ($1, $2, $3, $1, $4, $4, $5)
           ON CONFLICT DO NOTHING`,
          [session, project, agent ?? 'mnemo', ts, user],
        )
        const o = await c.query<{ rowid: number }>(
          `INSERT INTO observations (id, event_seq, session_id, project_id, kind, role, ts, text, user_id, agent)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING rowid`,
          [`obs_${seq}`, seq, session, project, d.kind ?? 'message', d.role ?? 'user', ts, d.text, user, agent],
        )
        const key = o.rows[0]!.rowid
        await c.query(
          `INSERT INTO search_docs (doc_key, type, id, kind, role, project_id, session_id, user_id, agent, ts, body, parts, meta, tsv)
           VALUES ($1, 'observation', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::tsvector)`,
          [key, `obs_${seq}`, d.kind ?? 'message', d.role ?? 'user', project, session, user, agent, ts, body, parts, meta, tsv],
        )
        keys.push(key)
      } else {
        const m = await c.query<{ rowid: number }>(
          `INSERT INTO memories (id, event_seq, project_id, kind, text, created_at, content_key, last_seen_at, valid_from, valid_to, archived_at, user_id, agent)
           VALUES ($1, $2, $3, $4, $5, $6, $1, $6, $6, $7, $8, $9, $10) RETURNING rowid`,
          [`mem_${seq}`, seq, project, d.kind ?? 'fact', d.text, ts, d.validTo ?? null, d.archivedAt ?? null, user, agent],
        )
        const key = -m.rows[0]!.rowid
        await c.query(
          `INSERT INTO search_docs (doc_key, type, id, kind, role, project_id, user_id, agent, ts, body, parts, meta, valid_to, archived_at, tsv)
           VALUES ($1, 'memory', $2, $3, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::tsvector)`,
          [key, `mem_${seq}`, d.kind ?? 'fact', project, user, agent, ts, body, parts, meta, d.validTo ?? null, d.archivedAt ?? null, tsv],
        )
        keys.push(key)
      }
    }
  })
  return keys
}
