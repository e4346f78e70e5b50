import type { ClientBase } from 'pg'
import { commandOf, commitMessage, fileAction, outputOf, parseTestOutput } from '../../core/facts/activity.js'
import type { FactValue } from '../../core/facts/fact-types.js'
import type { FactScope } from '../fact-store.js'
import { run } from './pg-fact-schema.js'

// The activity collections (core/facts/activity.ts) on PostgreSQL: the rows of sessions and observations of a scope,
// turned into records by the same parsers SQLite's views call (commandOf, parseTestOutput, …), here in JavaScript, and
// handed to the query as one jsonb parameter with the shape of fact_records (rn, id, data, status, recorded_at,
// provenance). The same records, field for field and in the same key order, as sqlite-activity.ts derives.

/** One activity record in the shape the query compiler reads. */
export interface ActivityRow {
  /** The source row's insertion order (SQLite's rowid): a tie-breaker of list order. */
  rn: number
  id: string
  data: Record<string, FactValue>
  status: 'done'
  /** Epoch ms. */
  recorded_at: number
  provenance: { source: 'activity' }
}

/** The FROM item of a statement over activity rows passed as the jsonb parameter `param`. */
export function activityFrom(param: string): string {
  return `SELECT x.rn, x.id, x.data, x.status, x.recorded_at, x.provenance FROM jsonb_to_recordset(${param}) AS x(rn bigint, id text, data jsonb, status text, recorded_at bigint, provenance json)`
}

/** Epoch ms as SQLite's strftime('%Y-%m-%dT%H:%M:%fZ') writes it. */
const iso = (ms: number): string => new Date(ms).toISOString()

interface ObservationRow {
  rn: number
  id: string
  kind: string
  tool: string | null
  files: string | null
  text: string
  session_id: string
  agent: string | null
  ts: number
}

/** How many observations a scope holds: what the query's row limit counts for an activity collection, as on SQLite. */
export async function activitySize(db: Pick<ClientBase, 'query'>, scope: FactScope): Promise<number> {
  const rows = await run<{ n: number }>(
    db,
    'facts query',
    'SELECT count(*) AS n FROM observations WHERE project_id = (SELECT id FROM projects WHERE root = $1) AND user_id IS NOT DISTINCT FROM $2',
    [scope.projectRoot, scope.user],
  )
  return rows[0]?.n ?? 0
}

/**
 * The records of an activity collection in a scope, read from the sessions and observations tables.
 * @throws {MnemoError} `STORE_UNAVAILABLE` — a server error.
 */
export async function activityRows(db: Pick<ClientBase, 'query'>, name: string, scope: FactScope): Promise<ActivityRow[]> {
  const project = '(SELECT id FROM projects WHERE root = $1)'
  const params = [scope.projectRoot, scope.user]
  const row = (rn: number, id: string, data: Record<string, FactValue>, ts: number): ActivityRow => ({
    rn,
    id,
    data,
    status: 'done',
    recorded_at: ts,
    provenance: { source: 'activity' },
  })
  if (name === 'sessions') {
    const rows = await run<{
      rn: number
      id: string
      agent: string
      title: string | null
      started_at: number
      ended_at: number | null
      last_event_at: number
      prompts: number
      tool_calls: number
      errors: number
    }>(
      db,
      'facts query',
      `SELECT row_number() OVER (ORDER BY s.started_at, s.id) AS rn, s.id, s.agent, s.title, s.started_at, s.ended_at, s.last_event_at,
         (SELECT count(*) FROM observations o WHERE o.session_id = s.id AND o.kind = 'prompt') AS prompts,
         (SELECT count(*) FROM observations o WHERE o.session_id = s.id AND o.kind IN ('tool', 'error') AND o.tool IS NOT NULL) AS tool_calls,
         (SELECT count(*) FROM observations o WHERE o.session_id = s.id AND o.kind = 'error') AS errors
       FROM sessions s WHERE s.project_id = ${project} AND s.user_id IS NOT DISTINCT FROM $2 AND s.agent <> 'mnemo'`,
      params,
    )
    return rows.map((s) =>
      row(
        s.rn,
        s.id,
        {
          session: s.id,
          agent: s.agent,
          title: s.title,
          started: iso(s.started_at),
          ended: s.ended_at === null ? null : iso(s.ended_at),
          // SQLite's round(x, 3): the double rounded through its decimal text, as toFixed does.
          duration_min: Number((((s.ended_at ?? s.last_event_at) - s.started_at) / 60000).toFixed(3)),
          prompts: s.prompts,
          tool_calls: s.tool_calls,
          errors: s.errors,
        },
        s.started_at,
      ),
    )
  }
  const calls = name !== 'errors'
  const obs = await run<ObservationRow>(
    db,
    'facts query',
    `SELECT o.rowid AS rn, o.id, o.kind, o.tool, o.files, o.text, o.session_id, o.agent, o.ts FROM observations o
     WHERE o.project_id = ${project} AND o.user_id IS NOT DISTINCT FROM $2 AND ${calls ? "o.kind IN ('tool', 'error') AND o.tool IS NOT NULL" : "o.kind = 'error'"}
     ORDER BY o.rowid`,
    params,
  )
  const out: ActivityRow[] = []
  const root = scope.projectRoot
  for (const o of obs) {
    const common = { session: o.session_id, agent: o.agent, at: iso(o.ts) }
    switch (name) {
      case 'tool_calls':
        out.push(
          row(
            o.rn,
            o.id,
            { tool: o.tool, command: commandOf(o.text), failed: o.kind === 'error', files: filesOf(o.files), ...common },
            o.ts,
          ),
        )
        break
      case 'file_touches':
        if (o.files === null) break
        filesOf(o.files).forEach((file, i) => {
          // Paths inside the project relative to its root ("src/auth.ts"), others as the agent wrote them.
          const path = typeof file === 'string' && file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file
          out.push(row(o.rn, `${o.id}#${i}`, { path, action: fileAction(o.tool ?? ''), tool: o.tool, ...common }, o.ts))
        })
        break
      case 'test_runs': {
        const command = commandOf(o.text)
        const counts = parseTestOutput(outputOf(o.text), command)
        if (counts === undefined) break
        out.push(row(o.rn, o.id, { ...counts, command, ok: o.kind !== 'error' && counts.failed === 0, ...common }, o.ts))
        break
      }
      case 'errors': {
        const text = outputOf(o.text) || o.text
        const message =
          text
            .split('\n')
            .find((l) => l.trim().length > 0)
            ?.trim()
            .slice(0, 300) ?? ''
        out.push(row(o.rn, o.id, { tool: o.tool, message, ...common }, o.ts))
        break
      }
      case 'commits': {
        const message = commitMessage(commandOf(o.text))
        if (message === undefined) break
        out.push(row(o.rn, o.id, { message, failed: o.kind === 'error', ...common }, o.ts))
        break
      }
    }
  }
  return out
}

/** An observation's files (JSON text of an array of paths), as a list. */
function filesOf(files: string | null): (string | number | boolean)[] {
  if (files === null) return []
  try {
    const parsed = JSON.parse(files) as unknown
    return Array.isArray(parsed) ? (parsed as (string | number | boolean)[]) : []
  } catch {
    return []
  }
}
