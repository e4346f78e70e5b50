import { statSync } from 'node:fs'
import type { MemoryId, ObservationId, ProjectId, SessionId } from '../../core/ids.js'
import type { AgentName, Memory, Observation, Project, Session } from '../../core/types.js'
import type { BrowseMemoriesOptions, BrowseObservationsOptions, Scope, StoreStats, StoredEvent } from '../store.js'
import {
  onTable,
  scopeWhere,
  SESSION_COLUMNS,
  toMemory,
  toObservation,
  toObservationInflatedOnRead,
  toSession,
  toStoredEvent,
  type EventRow,
  type MemoryRow,
  type ObservationRow,
  type SessionRow,
  withText,
} from './sqlite-rows.js'
import type { SqliteDb } from './sqlite-db.js'

// Reading rows: events, observations, memories and their versions and usage, sessions, projects, browse pages, counts.

export function readEvents(s: SqliteDb, afterSeq: number, limit: number): StoredEvent[] {
  return s.guard('read events', () =>
    (s.stmt('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit) as EventRow[]).map(toStoredEvent),
  )
}

export function getObservation(s: SqliteDb, id: ObservationId | string): Observation | undefined {
  const row = s.stmt('SELECT * FROM observations WHERE id = ?').get(id) as ObservationRow | undefined
  return row && toObservation(withText(row))
}

export function getMemory(s: SqliteDb, id: MemoryId | string): Memory | undefined {
  const row = s.stmt('SELECT * FROM memories WHERE id = ?').get(id) as MemoryRow | undefined
  return row && toMemory(row)
}

export function memoryByIdemKey(s: SqliteDb, idemKey: string): Memory | undefined {
  const row = s.stmt('SELECT m.* FROM memories m JOIN events e ON e.seq = m.event_seq WHERE e.idem_key = ?').get(idemKey) as
    | MemoryRow
    | undefined
  return row && toMemory(row)
}

export function currentMemoryByContent(
  s: SqliteDb,
  projectRoot: string,
  contentKey: string,
  user: string | undefined,
  agent?: AgentName | null,
): Memory | undefined {
  const byAgent = agent === undefined ? '' : ' AND m.agent IS ?'
  const row = s
    .stmt(
      `SELECT m.* FROM memories m JOIN projects p ON p.id = m.project_id WHERE p.root = ? AND m.content_key = ? AND m.user_id IS ? AND m.valid_to IS NULL${byAgent}`,
    )
    .get(projectRoot, contentKey, user ?? null, ...(agent === undefined ? [] : [agent])) as MemoryRow | undefined
  return row && toMemory(row)
}

export function recordUsage(s: SqliteDb, memoryIds: readonly string[], day: string): void {
  if (memoryIds.length === 0) return
  s.guard('record usage', () =>
    s.db
      .transaction(() => {
        for (const id of memoryIds) s.stmt('INSERT INTO memory_usage (memory_id, day) VALUES (?, ?) ON CONFLICT DO NOTHING').run(id, day)
      })
      .immediate(),
  )
}

export function usageCounts(s: SqliteDb, memoryIds: readonly string[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const id of memoryIds) out.set(id, s.stmt('SELECT COUNT(*) FROM memory_usage WHERE memory_id = ?').pluck().get(id) as number)
  return out
}

export function allMemories(s: SqliteDb, projectId: ProjectId): Memory[] {
  return (s.stmt('SELECT * FROM memories WHERE project_id = ? ORDER BY created_at, rowid').all(projectId) as MemoryRow[]).map(toMemory)
}

export function memoryHistory(s: SqliteDb, id: string): Memory[] {
  const start = getMemory(s, id)
  if (!start) return []
  const chain: Memory[] = [start]
  let back = start.supersedes
  while (back && chain.length < 1000) {
    const m = getMemory(s, back)
    if (!m) break
    chain.unshift(m)
    back = m.supersedes
  }
  let forward = start.supersededBy
  while (forward && chain.length < 2000) {
    const m = getMemory(s, forward)
    if (!m) break
    chain.push(m)
    forward = m.supersededBy
  }
  return chain
}

export function getSession(s: SqliteDb, id: SessionId | string): Session | undefined {
  const row = s.stmt(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = ?`).get(id) as SessionRow | undefined
  return row && toSession(row)
}

export function getProject(s: SqliteDb, id: ProjectId | string): Project | undefined {
  return s.stmt('SELECT id, name, root FROM projects WHERE id = ?').get(id) as Project | undefined
}

export function listProjects(s: SqliteDb, scope: Omit<Scope, 'projectIds'> = {}): Project[] {
  if (scope.user === undefined && scope.agent === undefined)
    return s.stmt('SELECT id, name, root FROM projects ORDER BY name, root').all() as Project[]
  const sessions = scopeWhere(scope, onTable('s'))
  const memories = scopeWhere(scope, onTable('m'))
  return s
    .stmt(
      `SELECT id, name, root FROM projects p
     WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.project_id = p.id AND s.agent <> 'mnemo'${sessions.sql})
        OR EXISTS (SELECT 1 FROM memories m WHERE m.project_id = p.id${memories.sql})
     ORDER BY name, root`,
    )
    .all(...sessions.params, ...memories.params) as Project[]
}

export function listSessions(s: SqliteDb, options: Scope & { limit: number; offset?: number; excludeAgent?: string }): Session[] {
  const inScope = scopeWhere(options, onTable('s'))
  const rows = s
    .stmt(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE 1 = 1${inScope.sql}${options.excludeAgent !== undefined ? ' AND s.agent <> ?' : ''} ORDER BY s.last_event_at DESC, s.id DESC LIMIT ? OFFSET ?`,
    )
    .all(
      ...inScope.params,
      ...(options.excludeAgent !== undefined ? [options.excludeAgent] : []),
      options.limit,
      options.offset ?? 0,
    ) as SessionRow[]
  return rows.map(toSession)
}

export function sessionObservations(s: SqliteDb, sessionId: SessionId, limit: number): Observation[] {
  const rows = s
    .stmt('SELECT * FROM observations WHERE session_id = ? ORDER BY ts, rowid LIMIT ?')
    .all(sessionId, limit) as ObservationRow[]
  return rows.map(toObservationInflatedOnRead)
}

export function listMemories(s: SqliteDb, options: Scope & { limit: number }): Memory[] {
  const inScope = scopeWhere(options, onTable('memories'))
  const rows = s
    .stmt(
      `SELECT * FROM memories WHERE valid_to IS NULL AND archived_at IS NULL${inScope.sql} ORDER BY pinned DESC, created_at DESC, rowid DESC LIMIT ?`,
    )
    .all(...inScope.params, options.limit) as MemoryRow[]
  return rows.map(toMemory)
}

export function browseObservations(s: SqliteDb, options: BrowseObservationsOptions): (Observation & { agent: AgentName })[] {
  return s.guard('browse observations', () => {
    if (options.projectIds.length === 0) return []
    // The agent filter below is the viewer's (one agent's rows exactly): an observation always has an agent.
    const inScope = scopeWhere(
      { projectIds: options.projectIds, ...(options.user !== undefined ? { user: options.user } : {}) },
      onTable('o'),
    )
    const where = [`1 = 1${inScope.sql}`]
    const params: unknown[] = [...inScope.params]
    if (options.sessionId !== undefined) {
      where.push('o.session_id = ?')
      params.push(options.sessionId)
    }
    if (options.kinds && options.kinds.length > 0) {
      where.push(`o.kind IN (${options.kinds.map(() => '?').join(',')})`)
      params.push(...options.kinds)
    }
    if (options.agent !== undefined) {
      // An agent with no session here would otherwise cost a scan of every row of the projects.
      const any = s
        .stmt(`SELECT 1 FROM sessions WHERE agent = ? AND project_id IN (${options.projectIds.map(() => '?').join(',')}) LIMIT 1`)
        .get(options.agent, ...options.projectIds)
      if (any === undefined) return []
      where.push('o.agent = ?')
      params.push(options.agent)
    }
    if (options.afterSeq !== undefined) {
      where.push('o.event_seq > ?')
      params.push(options.afterSeq)
    }
    if (options.beforeSeq !== undefined) {
      where.push('o.event_seq < ?')
      params.push(options.beforeSeq)
    }
    const dir = options.order === 'asc' ? 'ASC' : 'DESC'
    const rows = s
      .stmt(
        `SELECT o.*, s.agent AS agent FROM observations o JOIN sessions s ON s.id = o.session_id
       WHERE ${where.join(' AND ')} ORDER BY o.event_seq ${dir}, o.rowid ${dir} LIMIT ?`,
      )
      .all(...params, options.limit) as (ObservationRow & { agent: string })[]
    return rows.map((r) => ({ ...toObservation(withText(r)), agent: r.agent as AgentName }))
  })
}

export function lastEventSeq(s: SqliteDb): number {
  return (s.stmt('SELECT COALESCE(MAX(seq), 0) FROM events').pluck().get() as number) ?? 0
}

export function sessionObservationsPage(s: SqliteDb, sessionId: SessionId, offset: number, limit: number): Observation[] {
  const rows = s
    .stmt('SELECT * FROM observations WHERE session_id = ? ORDER BY ts, rowid LIMIT ? OFFSET ?')
    .all(sessionId, limit, offset) as ObservationRow[]
  return rows.map(toObservationInflatedOnRead)
}

export function observationPosition(s: SqliteDb, sessionId: SessionId, observationId: string): number | undefined {
  const at = s.stmt('SELECT ts, rowid FROM observations WHERE id = ? AND session_id = ?').get(observationId, sessionId) as
    | { ts: number; rowid: number }
    | undefined
  if (!at) return undefined
  return s
    .stmt('SELECT COUNT(*) FROM observations WHERE session_id = ? AND (ts, rowid) < (?, ?)')
    .pluck()
    .get(sessionId, at.ts, at.rowid) as number
}

export function browseMemories(s: SqliteDb, options: BrowseMemoriesOptions): { memories: Memory[]; total: number } {
  return s.guard('browse memories', () => {
    if (options.projectIds.length === 0) return { memories: [], total: 0 }
    const inScope = scopeWhere(options, onTable('memories'))
    const where = [`1 = 1${inScope.sql}`]
    const params: unknown[] = [...inScope.params]
    if (options.kinds && options.kinds.length > 0) {
      where.push(`kind IN (${options.kinds.map(() => '?').join(',')})`)
      params.push(...options.kinds)
    }
    if (options.state === 'current') where.push('valid_to IS NULL AND archived_at IS NULL')
    else if (options.state === 'archived') where.push('valid_to IS NULL AND archived_at IS NOT NULL')
    else if (options.state === 'superseded') where.push('valid_to IS NOT NULL')
    const clause = where.join(' AND ')
    const total = s
      .stmt(`SELECT COUNT(*) FROM memories WHERE ${clause}`)
      .pluck()
      .get(...params) as number
    const rows = s
      .stmt(`SELECT * FROM memories WHERE ${clause} ORDER BY pinned DESC, created_at DESC, rowid DESC LIMIT ? OFFSET ?`)
      .all(...params, options.limit, options.offset) as MemoryRow[]
    return { memories: rows.map(toMemory), total }
  })
}

export function memoriesFromObservations(s: SqliteDb, projectId: ProjectId, observationIds: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>()
  if (observationIds.length === 0) return out
  const rows = s
    .stmt(
      `SELECT j.value AS obs, m.id AS mem FROM memories m, json_each(m.sources) j
     WHERE m.project_id = ? AND m.sources IS NOT NULL AND j.value IN (SELECT value FROM json_each(?))
     ORDER BY m.created_at, m.rowid`,
    )
    .all(projectId, JSON.stringify(observationIds)) as { obs: string; mem: string }[]
  for (const r of rows) out.set(r.obs, [...(out.get(r.obs) ?? []), r.mem])
  return out
}

export function scopeCounts(
  s: SqliteDb,
  projectRoot?: string,
  user?: string | null,
  agent?: AgentName,
): { events: number; sessions: number; observations: number; memories: number } {
  const byUser = scopeWhere({ ...(user === undefined ? {} : { user }), ...(agent === undefined ? {} : { agent }) }, (column) => column)
  const n = (table: string, where: string, project: string): number =>
    s
      .stmt(`SELECT COUNT(*) FROM ${table} WHERE ${where}${projectRoot !== undefined ? ` AND ${project}` : ''}${byUser.sql}`)
      .pluck()
      .get(...(projectRoot !== undefined ? [projectRoot] : []), ...byUser.params) as number
  const inProject = 'project_id IN (SELECT id FROM projects WHERE root = ?)'
  return {
    events: n('events', '1 = 1', 'project_root = ?'),
    // Agents' sessions: mnemo's bookkeeping session of a project is shared by its users' statements.
    sessions: n('sessions', "agent <> 'mnemo'", inProject),
    observations: n('observations', '1 = 1', inProject),
    memories: n('memories', '1 = 1', inProject),
  }
}

export function readScopedEvents(
  s: SqliteDb,
  afterSeq: number,
  limit: number,
  scope: { projectRoot?: string; user?: string | null },
): StoredEvent[] {
  return s.guard('read events', () => {
    const where = ['seq > ?']
    const params: unknown[] = [afterSeq]
    if (scope.projectRoot !== undefined) {
      where.push('project_root = ?')
      params.push(scope.projectRoot)
    }
    const byUser = scopeWhere(scope.user === undefined ? {} : { user: scope.user }, (column) => column)
    return (
      s
        .stmt(`SELECT * FROM events WHERE ${where.join(' AND ')}${byUser.sql} ORDER BY seq LIMIT ?`)
        .all(...params, ...byUser.params, limit) as EventRow[]
    ).map(toStoredEvent)
  })
}

export function stats(s: SqliteDb): StoreStats {
  return s.guard('stats', () => {
    const count = (table: string): number => (s.stmt(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n
    const last = s.stmt('SELECT MAX(received_at) AS t FROM events').get() as { t: number | null }
    let bytes = 0
    if (s.path !== ':memory:') {
      for (const suffix of ['', '-wal']) {
        try {
          bytes += statSync(s.path + suffix).size
        } catch {
          // the WAL file may not exist between checkpoints
        }
      }
    }
    return {
      events: count('events'),
      projects: count('projects'),
      // Agents' sessions: mnemo's own bookkeeping session per project (remember, consolidation) is not one.
      sessions: s.stmt("SELECT COUNT(*) FROM sessions WHERE agent <> 'mnemo'").pluck().get() as number,
      observations: count('observations'),
      memories: count('memories'),
      lastEventAt: last.t ?? undefined,
      bytes,
    }
  })
}
