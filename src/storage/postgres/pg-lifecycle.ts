import type { AgentName } from '../../core/types.js'
import type { AuditEntry, StoreStats } from '../store.js'
import type { PgDb } from './pg-db.js'
import { one, Params, scopeWhere } from './pg-sql.js'

// Lifecycle and administration on PostgreSQL: the audit log, counts, size and VACUUM FULL, the derivation version,
// and the integrity check of the derived rows against the log.

/** The tables mnemo's base schema makes (what `vacuum` rewrites and `stats` sizes, with the search and fact steps' own). */
const TABLES_SQL = `SELECT c.oid::regclass::text AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'r' AND n.nspname = current_schema()`

export async function audit(db: PgDb, entry: AuditEntry): Promise<void> {
  await db.query('audit', 'INSERT INTO audit_log (at, actor, action, target, count, details) VALUES ($1, $2, $3, $4, $5, $6)', [
    entry.at,
    entry.actor,
    entry.action,
    entry.target,
    entry.count,
    entry.details ? JSON.stringify(entry.details) : null,
  ])
}

export async function auditLog(db: PgDb, limit: number): Promise<AuditEntry[]> {
  const r = await db.query<Omit<AuditEntry, 'details'> & { details: string | null }>(
    'audit log',
    'SELECT at, actor, action, target, count, details FROM audit_log ORDER BY id DESC LIMIT $1',
    [limit],
  )
  return r.rows.map((row) => ({
    at: row.at,
    actor: row.actor,
    action: row.action,
    target: row.target,
    count: row.count,
    ...(row.details ? { details: JSON.parse(row.details) as Record<string, unknown> } : {}),
  }))
}

export async function scopeCounts(
  db: PgDb,
  projectRoot?: string,
  user?: string | null,
  agent?: AgentName,
): Promise<{ events: number; sessions: number; observations: number; memories: number }> {
  const p = new Params()
  const root = projectRoot === undefined ? undefined : p.add(projectRoot)
  const byUser = scopeWhere({ ...(user === undefined ? {} : { user }), ...(agent === undefined ? {} : { agent }) }, (column) => column, p)
  const inProject = root === undefined ? '' : ` AND project_id IN (SELECT id FROM projects WHERE root = ${root})`
  const r = await db.query<{ events: number; sessions: number; observations: number; memories: number }>(
    'scope counts',
    `SELECT
       (SELECT COUNT(*) FROM events WHERE 1 = 1${root === undefined ? '' : ` AND project_root = ${root}`}${byUser}) AS events,
       (SELECT COUNT(*) FROM sessions WHERE agent <> 'mnemo'${inProject}${byUser}) AS sessions,
       (SELECT COUNT(*) FROM observations WHERE 1 = 1${inProject}${byUser}) AS observations,
       (SELECT COUNT(*) FROM memories WHERE 1 = 1${inProject}${byUser}) AS memories`,
    p.values,
  )
  const row = r.rows[0]
  return { events: row?.events ?? 0, sessions: row?.sessions ?? 0, observations: row?.observations ?? 0, memories: row?.memories ?? 0 }
}

/** See `StoreAdmin.stats`; `bytes` is the total size of the schema's tables with their indexes and TOAST (`pg_total_relation_size`). */
export async function stats(db: PgDb): Promise<StoreStats> {
  const row = await db.read('stats', (c) =>
    one<Omit<StoreStats, 'lastEventAt'> & { lastEventAt: number | null }>(
      c,
      `SELECT (SELECT COUNT(*) FROM events) AS events, (SELECT COUNT(*) FROM projects) AS projects,
       (SELECT COUNT(*) FROM sessions WHERE agent <> 'mnemo') AS sessions, (SELECT COUNT(*) FROM observations) AS observations,
       (SELECT COUNT(*) FROM memories) AS memories, (SELECT MAX(received_at) FROM events) AS "lastEventAt",
       (SELECT COALESCE(SUM(pg_total_relation_size(t.name::regclass)), 0) FROM (${TABLES_SQL}) t) AS bytes`,
    ),
  )
  return { ...row, lastEventAt: row.lastEventAt ?? undefined }
}

/** See `StoreAdmin.vacuum`: VACUUM FULL of each of the schema's tables (each locked while it is rewritten); sizes as `stats` gives them. */
export async function vacuum(db: PgDb): Promise<{ bytesBefore: number; bytesAfter: number }> {
  const size = async (): Promise<number> =>
    (
      await db.query<{ n: number }>(
        'vacuum',
        `SELECT COALESCE(SUM(pg_total_relation_size(t.name::regclass)), 0) AS n FROM (${TABLES_SQL}) t`,
      )
    ).rows[0]?.n ?? 0
  const bytesBefore = await size()
  const tables = (await db.query<{ name: string }>('vacuum', `${TABLES_SQL} ORDER BY 1`)).rows
  // VACUUM cannot run in a transaction block: each one on its own, outside `transaction`.
  for (const t of tables) await db.query('vacuum', `VACUUM FULL ${t.name}`)
  return { bytesBefore, bytesAfter: await size() }
}

/** The derivation version recorded with the rows (`store_meta.derived_with`); a value that is no version reads as 1. */
export async function derivedWith(db: PgDb): Promise<number | undefined> {
  const r = await db.query<{ value: string }>('derived with', "SELECT value FROM store_meta WHERE key = 'derived_with'")
  const value = r.rows[0]?.value
  if (value === undefined) return undefined
  return /^[1-9]\d{0,5}$/.test(value) ? Number(value) : 1
}

/**
 * The derived rows checked against the log and against each other (PostgreSQL keeps its pages checked itself; this is
 * what a bug or a hand edit could break). Each check counts the rows that fail it:
 * - every observation and memory has an event in the log, and an observation's session is of its project;
 * - every observation and memory has exactly its search document (same id, kind, project, session, user, agent, time,
 *   flags; a memory's validity and archiving), and no search document is left without its row;
 * - entity mentions and vectors name existing documents; copies name an existing observation and event;
 * - version chains hold: a memory's `superseded_by` names a memory, and a current memory (`valid_to` NULL) is
 *   superseded by none;
 * - each project and session has the id kept for it (`kept_ids`), so a rebuild gives the same ids.
 * @returns 'ok', or the failed checks with their counts, separated by '; '.
 */
export async function integrityCheck(db: PgDb): Promise<string> {
  const checks: [string, string][] = [
    [
      'observations without their event',
      'SELECT COUNT(*) FROM observations o WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = o.event_seq)',
    ],
    ['memories without their event', 'SELECT COUNT(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = m.event_seq)'],
    [
      'observations whose session is of another project',
      'SELECT COUNT(*) FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.project_id <> o.project_id',
    ],
    [
      'observations without their search document',
      `SELECT COUNT(*) FROM observations o LEFT JOIN search_docs d ON d.doc_key = o.rowid
       WHERE d.doc_key IS NULL OR d.type <> 'observation' OR d.id <> o.id OR d.kind <> o.kind OR d.role <> o.role OR d.project_id <> o.project_id
          OR d.session_id IS DISTINCT FROM o.session_id OR d.user_id IS DISTINCT FROM o.user_id OR d.agent IS DISTINCT FROM o.agent
          OR d.ts <> o.ts OR d.flags IS DISTINCT FROM o.flags`,
    ],
    [
      'memories without their search document',
      `SELECT COUNT(*) FROM memories m LEFT JOIN search_docs d ON d.doc_key = -m.rowid
       WHERE d.doc_key IS NULL OR d.type <> 'memory' OR d.id <> m.id OR d.kind <> m.kind OR d.project_id <> m.project_id
          OR d.user_id IS DISTINCT FROM m.user_id OR d.agent IS DISTINCT FROM m.agent OR d.ts <> m.created_at
          OR d.flags IS DISTINCT FROM m.flags OR d.valid_to IS DISTINCT FROM m.valid_to OR d.archived_at IS DISTINCT FROM m.archived_at`,
    ],
    [
      'search documents without their observation or memory',
      `SELECT COUNT(*) FROM search_docs d WHERE (d.doc_key > 0 AND NOT EXISTS (SELECT 1 FROM observations o WHERE o.rowid = d.doc_key))
         OR (d.doc_key < 0 AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.rowid = -d.doc_key))`,
    ],
    [
      'entity mentions of missing documents',
      'SELECT COUNT(*) FROM entity_mentions x WHERE NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.doc_key = x.doc_key)',
    ],
    [
      'vectors of missing documents',
      'SELECT COUNT(*) FROM doc_vectors v WHERE NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.doc_key = v.doc_key)',
    ],
    [
      'copies of missing observations or events',
      `SELECT COUNT(*) FROM observation_copies c WHERE NOT EXISTS (SELECT 1 FROM observations o WHERE o.rowid = c.observation_rowid)
         OR NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = c.event_seq)`,
    ],
    [
      'memories superseded by a missing memory',
      'SELECT COUNT(*) FROM memories m WHERE m.superseded_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memories n WHERE n.id = m.superseded_by)',
    ],
    ['current memories marked superseded', 'SELECT COUNT(*) FROM memories WHERE valid_to IS NULL AND superseded_by IS NOT NULL'],
    [
      'projects without their kept id',
      `SELECT COUNT(*) FROM projects p WHERE NOT EXISTS (SELECT 1 FROM kept_ids k WHERE k.identity::jsonb = jsonb_build_array('project', p.root) AND k.id = p.id)`,
    ],
    [
      'sessions without their kept id',
      `SELECT COUNT(*) FROM sessions s JOIN projects p ON p.id = s.project_id WHERE NOT EXISTS (
         SELECT 1 FROM kept_ids k WHERE k.identity::jsonb = jsonb_build_array('session', s.agent, s.session_key, p.root) AND k.id = s.id)`,
    ],
  ]
  const problems: string[] = []
  await db.read('integrity check', async (c) => {
    for (const [name, sql] of checks) {
      const n = Number((await c.query<{ count: number }>(sql)).rows[0]?.count ?? 0)
      if (n > 0) problems.push(`${n} ${name}`)
    }
  })
  return problems.length === 0 ? 'ok' : problems.join('; ')
}
