import type { MemoryId, ObservationId, ProjectId, SessionId } from '../../core/ids.js'
import type { AgentName, Memory, Observation, Project, Session } from '../../core/types.js'
import { type MemoryRow, type ObservationRow, SESSION_COLUMNS, type SessionRow, toMemory, toObservation, toSession } from '../rows.js'
import type { BrowseMemoriesOptions, BrowseObservationsOptions, InjectionKey, InjectionWhat, Scope } from '../store.js'
import { type PgDb, WRITE_LOCK } from './pg-db.js'
import { onTable, Params, same, scopeWhere } from './pg-sql.js'

// Reads of the derived rows on PostgreSQL: observations, memories and their versions and usage, sessions, projects,
// browse pages, and what was shown to agent sessions. The same answers, in the same order, as sqlite-read.ts.

export async function getObservation(db: PgDb, id: ObservationId | string): Promise<Observation | undefined> {
  const row = (await db.query<ObservationRow>('get observation', 'SELECT * FROM observations WHERE id = $1', [id])).rows[0]
  return row && toObservation(row)
}

export async function getMemory(db: PgDb, id: MemoryId | string): Promise<Memory | undefined> {
  const row = (await db.query<MemoryRow>('get memory', 'SELECT * FROM memories WHERE id = $1', [id])).rows[0]
  return row && toMemory(row)
}

export async function memoryByIdemKey(db: PgDb, idemKey: string): Promise<Memory | undefined> {
  const r = await db.query<MemoryRow>(
    'memory by key',
    'SELECT m.* FROM memories m JOIN events e ON e.seq = m.event_seq WHERE e.idem_key = $1',
    [idemKey],
  )
  return r.rows[0] && toMemory(r.rows[0])
}

export async function currentMemoryByContent(
  db: PgDb,
  projectRoot: string,
  contentKey: string,
  user: string | undefined,
  agent?: AgentName | null,
): Promise<Memory | undefined> {
  const p = new Params()
  let where = `p.root = ${p.add(projectRoot)} AND m.content_key = ${p.add(contentKey)} AND ${same('m.user_id', user ?? null, p)} AND m.valid_to IS NULL`
  if (agent !== undefined) where += ` AND ${same('m.agent', agent, p)}`
  const r = await db.query<MemoryRow>(
    'memory by content',
    `SELECT m.* FROM memories m JOIN projects p ON p.id = m.project_id WHERE ${where} ORDER BY m.rowid LIMIT 1`,
    p.values,
  )
  return r.rows[0] && toMemory(r.rows[0])
}

/**
 * See `DerivedReads.recordUsage`: once per memory per day, best effort — when another transaction holds the store's
 * write lock it records nothing (`pg_try_advisory_xact_lock`) rather than make the read wait.
 */
export async function recordUsage(db: PgDb, memoryIds: readonly string[], day: string): Promise<void> {
  if (memoryIds.length === 0) return
  await db.transaction(
    'record usage',
    async (c) => {
      const got = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [WRITE_LOCK.toString()])
      if (!got.rows[0]?.ok) return
      await c.query('INSERT INTO memory_usage (memory_id, day) SELECT id, $2 FROM unnest($1::text[]) AS id ON CONFLICT DO NOTHING', [
        memoryIds,
        day,
      ])
    },
    { writeLock: false },
  )
}

export async function usageCounts(db: PgDb, memoryIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  for (const id of memoryIds) out.set(id, 0)
  if (memoryIds.length === 0) return out
  const r = await db.query<{ id: string; n: number }>(
    'usage counts',
    'SELECT memory_id AS id, COUNT(*) AS n FROM memory_usage WHERE memory_id = ANY($1::text[]) GROUP BY memory_id',
    [memoryIds],
  )
  for (const row of r.rows) out.set(row.id, row.n)
  return out
}

export async function allMemories(db: PgDb, projectId: ProjectId): Promise<Memory[]> {
  const r = await db.query<MemoryRow>('all memories', 'SELECT * FROM memories WHERE project_id = $1 ORDER BY created_at, rowid', [
    projectId,
  ])
  return r.rows.map(toMemory)
}

/** A memory and its versions before and after it, oldest first (at most 1000 back and 2000 in all, as in SQLite). */
export async function memoryHistory(db: PgDb, id: string): Promise<Memory[]> {
  const start = await getMemory(db, id)
  if (!start) return []
  const chain: Memory[] = [start]
  let back = start.supersedes
  while (back && chain.length < 1000) {
    const m = await getMemory(db, back)
    if (!m) break
    chain.unshift(m)
    back = m.supersedes
  }
  let forward = start.supersededBy
  while (forward && chain.length < 2000) {
    const m = await getMemory(db, forward)
    if (!m) break
    chain.push(m)
    forward = m.supersededBy
  }
  return chain
}

export async function getSession(db: PgDb, id: SessionId | string): Promise<Session | undefined> {
  const row = (await db.query<SessionRow>('get session', `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = $1`, [id])).rows[0]
  return row && toSession(row)
}

export async function getProject(db: PgDb, id: ProjectId | string): Promise<Project | undefined> {
  return (await db.query<Project>('get project', 'SELECT id, name, root FROM projects WHERE id = $1', [id])).rows[0]
}

export async function listProjects(db: PgDb, scope: Omit<Scope, 'projectIds'> = {}): Promise<Project[]> {
  if (scope.user === undefined && scope.agent === undefined)
    return (await db.query<Project>('list projects', 'SELECT id, name, root FROM projects ORDER BY name, root')).rows
  const p = new Params()
  const sessions = scopeWhere(scope, onTable('s'), p)
  const memories = scopeWhere(scope, onTable('m'), p)
  const r = await db.query<Project>(
    'list projects',
    `SELECT id, name, root FROM projects p
     WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.project_id = p.id AND s.agent <> 'mnemo'${sessions})
        OR EXISTS (SELECT 1 FROM memories m WHERE m.project_id = p.id${memories})
     ORDER BY name, root`,
    p.values,
  )
  return r.rows
}

export async function listSessions(
  db: PgDb,
  options: Scope & { limit: number; offset?: number; excludeAgent?: string },
): Promise<Session[]> {
  const p = new Params()
  let where = `1 = 1${scopeWhere(options, onTable('s'), p)}`
  if (options.excludeAgent !== undefined) where += ` AND s.agent <> ${p.add(options.excludeAgent)}`
  const r = await db.query<SessionRow>(
    'list sessions',
    `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE ${where} ORDER BY s.last_event_at DESC, s.id DESC LIMIT ${p.add(options.limit)} OFFSET ${p.add(options.offset ?? 0)}`,
    p.values,
  )
  return r.rows.map(toSession)
}

export async function sessionObservationsPage(db: PgDb, sessionId: SessionId, offset: number, limit: number): Promise<Observation[]> {
  const r = await db.query<ObservationRow>(
    'session observations',
    'SELECT * FROM observations WHERE session_id = $1 ORDER BY ts, rowid LIMIT $2 OFFSET $3',
    [sessionId, limit, offset],
  )
  return r.rows.map(toObservation)
}

export async function observationPosition(db: PgDb, sessionId: SessionId, observationId: string): Promise<number | undefined> {
  const r = await db.query<{ n: number | null }>(
    'observation position',
    `SELECT (SELECT COUNT(*) FROM observations x WHERE x.session_id = o.session_id AND (x.ts, x.rowid) < (o.ts, o.rowid)) AS n
     FROM observations o WHERE o.id = $1 AND o.session_id = $2`,
    [observationId, sessionId],
  )
  return r.rows[0]?.n ?? undefined
}

export async function listMemories(db: PgDb, options: Scope & { limit: number }): Promise<Memory[]> {
  const p = new Params()
  const r = await db.query<MemoryRow>(
    'list memories',
    `SELECT * FROM memories WHERE valid_to IS NULL AND archived_at IS NULL${scopeWhere(options, onTable('memories'), p)}
     ORDER BY pinned DESC, created_at DESC, rowid DESC LIMIT ${p.add(options.limit)}`,
    p.values,
  )
  return r.rows.map(toMemory)
}

export async function browseObservations(db: PgDb, options: BrowseObservationsOptions): Promise<(Observation & { agent: AgentName })[]> {
  if (options.projectIds.length === 0) return []
  const p = new Params()
  // The agent filter below is the viewer's (one agent's rows exactly): an observation always has an agent.
  const where = [
    `1 = 1${scopeWhere({ projectIds: options.projectIds, ...(options.user !== undefined ? { user: options.user } : {}) }, onTable('o'), p)}`,
  ]
  if (options.sessionId !== undefined) where.push(`o.session_id = ${p.add(options.sessionId)}`)
  if (options.kinds && options.kinds.length > 0) where.push(`o.kind = ANY(${p.add(options.kinds)}::text[])`)
  if (options.agent !== undefined) where.push(`o.agent = ${p.add(options.agent)}`)
  if (options.afterSeq !== undefined) where.push(`o.event_seq > ${p.add(options.afterSeq)}`)
  if (options.beforeSeq !== undefined) where.push(`o.event_seq < ${p.add(options.beforeSeq)}`)
  const dir = options.order === 'asc' ? 'ASC' : 'DESC'
  const r = await db.query<ObservationRow & { agent: string }>(
    'browse observations',
    `SELECT o.*, s.agent AS agent FROM observations o JOIN sessions s ON s.id = o.session_id
     WHERE ${where.join(' AND ')} ORDER BY o.event_seq ${dir}, o.rowid ${dir} LIMIT ${p.add(options.limit)}`,
    p.values,
  )
  return r.rows.map((row) => ({ ...toObservation(row), agent: row.agent as AgentName }))
}

export async function browseMemories(db: PgDb, options: BrowseMemoriesOptions): Promise<{ memories: Memory[]; total: number }> {
  if (options.projectIds.length === 0) return { memories: [], total: 0 }
  const p = new Params()
  const where = [`1 = 1${scopeWhere(options, onTable('memories'), p)}`]
  if (options.kinds && options.kinds.length > 0) where.push(`kind = ANY(${p.add(options.kinds)}::text[])`)
  if (options.state === 'current') where.push('valid_to IS NULL AND archived_at IS NULL')
  else if (options.state === 'archived') where.push('valid_to IS NULL AND archived_at IS NOT NULL')
  else if (options.state === 'superseded') where.push('valid_to IS NOT NULL')
  const clause = where.join(' AND ')
  const total =
    (await db.query<{ n: number }>('browse memories', `SELECT COUNT(*) AS n FROM memories WHERE ${clause}`, p.values)).rows[0]?.n ?? 0
  const r = await db.query<MemoryRow>(
    'browse memories',
    `SELECT * FROM memories WHERE ${clause} ORDER BY pinned DESC, created_at DESC, rowid DESC LIMIT ${p.add(options.limit)} OFFSET ${p.add(options.offset)}`,
    p.values,
  )
  return { memories: r.rows.map(toMemory), total }
}

export async function memoriesFromObservations(
  db: PgDb,
  projectId: ProjectId,
  observationIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  if (observationIds.length === 0) return out
  const r = await db.query<{ obs: string; mem: string }>(
    'memories from observations',
    `SELECT j.obs, m.id AS mem FROM memories m CROSS JOIN LATERAL jsonb_array_elements_text(m.sources::jsonb) WITH ORDINALITY AS j(obs, n)
     WHERE m.project_id = $1 AND m.sources IS NOT NULL AND j.obs = ANY($2::text[])
     ORDER BY m.created_at, m.rowid, j.n`,
    [projectId, observationIds],
  )
  for (const row of r.rows) out.set(row.obs, [...(out.get(row.obs) ?? []), row.mem])
  return out
}

export async function recordInjections(
  db: PgDb,
  key: InjectionKey,
  list: readonly { itemId: string; what: InjectionWhat }[],
  at: number,
): Promise<void> {
  if (list.length === 0) return
  // Not derived from the log and not read by the derivation: no need to wait for the store's write lock.
  await db.transaction(
    'record injections',
    (c) =>
      c.query(
        `INSERT INTO context_injections (agent, session_key, "user", item_id, what, at)
         SELECT $1, $2, $3, i, w, $4 FROM unnest($5::text[], $6::text[]) AS t(i, w) ON CONFLICT DO NOTHING`,
        [key.agent, key.sessionKey, key.user, at, list.map((r) => r.itemId), list.map((r) => r.what)],
      ),
    { writeLock: false },
  )
}

export async function injections(db: PgDb, key: InjectionKey): Promise<{ itemId: string; what: InjectionWhat; at: number }[]> {
  const r = await db.query<{ itemId: string; what: InjectionWhat; at: number }>(
    'injections',
    `SELECT item_id AS "itemId", what, at FROM context_injections WHERE agent = $1 AND session_key = $2 AND "user" = $3 ORDER BY at, item_id`,
    [key.agent, key.sessionKey, key.user],
  )
  return r.rows
}
