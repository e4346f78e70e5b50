import { ACTIVITY_SPECS, commandOf, commitMessage, fileAction, outputOf, parseTestOutput } from '../../core/facts/activity.js'
import type { FactScope } from '../fact-store.js'
import type { SqliteDb } from './sqlite-db.js'
import { observationText } from './sqlite-payload.js'

// The activity collections (core/facts/activity.ts) as SQL over the rows derived from the event log: each gives the
// query compiler the same shape as fact_records (rn, id, data as JSONB, status, recorded_at, provenance).

const ISO = (ms: string): string => `strftime('%Y-%m-%dT%H:%M:%fZ', ${ms} / 1000.0, 'unixepoch')`

/** Registers the functions the activity views call (pure, deterministic), once per connection. */
export function registerActivityFunctions(s: SqliteDb): void {
  const fn = { deterministic: true }
  // An observation's text, stored as text or (a long tool output) compressed: see encodeObservationText.
  const asText = (stored: unknown): unknown => (Buffer.isBuffer(stored) ? observationText(stored) : stored)
  s.db.function('mnemo_command', fn, (stored: unknown) => {
    const text = asText(stored)
    return typeof text === 'string' ? commandOf(text) : null
  })
  s.db.function('mnemo_file_action', fn, (tool: unknown) => (typeof tool === 'string' ? fileAction(tool) : 'other'))
  s.db.function('mnemo_test_run', fn, (stored: unknown, kind: unknown) => {
    const text = asText(stored)
    if (typeof text !== 'string') return null
    const command = commandOf(text)
    const counts = parseTestOutput(outputOf(text), command)
    if (counts === undefined) return null
    return JSON.stringify({ ...counts, command, ok: kind !== 'error' && counts.failed === 0 })
  })
  s.db.function('mnemo_commit_message', fn, (stored: unknown) => {
    const text = asText(stored)
    return typeof text === 'string' ? (commitMessage(commandOf(text)) ?? null) : null
  })
  s.db.function('mnemo_error_message', fn, (stored: unknown) => {
    const text = asText(stored)
    if (typeof text !== 'string') return null
    const out = outputOf(text) || text
    return (
      out
        .split('\n')
        .find((l) => l.trim().length > 0)
        ?.trim()
        .slice(0, 300) ?? ''
    )
  })
}

/**
 * The base rows of an activity collection in a scope, as SQL with named parameters (`p` binds a value).
 * @returns undefined for a name that is not an activity collection.
 */
export function activityBase(name: string, scope: FactScope, p: (value: unknown) => string): string | undefined {
  if (!ACTIVITY_SPECS.some((c) => c.name === name)) return undefined
  const project = `(SELECT id FROM projects WHERE root = ${p(scope.projectRoot)})`
  const user = p(scope.user)
  const root = p(scope.projectRoot)
  const calls = `FROM observations o WHERE o.project_id = ${project} AND o.user_id IS ${user} AND o.kind IN ('tool', 'error') AND o.tool IS NOT NULL`
  const common = `'session', o.session_id, 'agent', o.agent, 'at', ${ISO('o.ts')}`
  const rest = `'done' AS status, o.ts AS recorded_at, jsonb_object('source', 'activity') AS provenance`
  switch (name) {
    case 'sessions':
      return `SELECT s.rowid AS rn, s.id AS id, jsonb_object('session', s.id, 'agent', s.agent, 'title', s.title, 'started', ${ISO('s.started_at')}, 'ended', CASE WHEN s.ended_at IS NULL THEN NULL ELSE ${ISO('s.ended_at')} END, 'duration_min', round((coalesce(s.ended_at, s.last_event_at) - s.started_at) / 60000.0, 3), 'prompts', (SELECT count(*) FROM observations o WHERE o.session_id = s.id AND o.kind = 'prompt'), 'tool_calls', (SELECT count(*) FROM observations o WHERE o.session_id = s.id AND o.kind IN ('tool', 'error') AND o.tool IS NOT NULL), 'errors', (SELECT count(*) FROM observations o WHERE o.session_id = s.id AND o.kind = 'error')) AS data, 'done' AS status, s.started_at AS recorded_at, jsonb_object('source', 'activity') AS provenance FROM sessions s WHERE s.project_id = ${project} AND s.user_id IS ${user} AND s.agent <> 'mnemo'`
    case 'tool_calls':
      return `SELECT o.rowid AS rn, o.id AS id, jsonb_object('tool', o.tool, 'command', mnemo_command(o.text), 'failed', json(CASE WHEN o.kind = 'error' THEN 'true' ELSE 'false' END), 'files', json(coalesce(o.files, '[]')), ${common}) AS data, ${rest} ${calls}`
    case 'file_touches':
      // Paths inside the project relative to its root ("src/auth.ts"), others as the agent wrote them.
      return `SELECT o.rowid AS rn, o.id || '#' || j.key AS id, jsonb_object('path', CASE WHEN substr(j.value, 1, length(${root}) + 1) = ${root} || '/' THEN substr(j.value, length(${root}) + 2) ELSE j.value END, 'action', mnemo_file_action(o.tool), 'tool', o.tool, ${common}) AS data, ${rest} FROM observations o, json_each(o.files) j WHERE o.project_id = ${project} AND o.user_id IS ${user} AND o.kind IN ('tool', 'error') AND o.tool IS NOT NULL AND o.files IS NOT NULL`
    case 'test_runs':
      return `SELECT rn, id, jsonb_set(jsonb(tr), '$.session', session_id, '$.agent', agent, '$.at', ${ISO('ts')}) AS data, 'done' AS status, ts AS recorded_at, jsonb_object('source', 'activity') AS provenance FROM (SELECT o.rowid AS rn, o.id AS id, o.session_id, o.agent, o.ts, mnemo_test_run(o.text, o.kind) AS tr ${calls}) WHERE tr IS NOT NULL`
    case 'errors':
      return `SELECT o.rowid AS rn, o.id AS id, jsonb_object('tool', o.tool, 'message', mnemo_error_message(o.text), ${common}) AS data, ${rest} FROM observations o WHERE o.project_id = ${project} AND o.user_id IS ${user} AND o.kind = 'error'`
    case 'commits':
      return `SELECT rn, id, jsonb_object('message', msg, 'failed', json(CASE WHEN kind = 'error' THEN 'true' ELSE 'false' END), 'session', session_id, 'agent', agent, 'at', ${ISO('ts')}) AS data, 'done' AS status, ts AS recorded_at, jsonb_object('source', 'activity') AS provenance FROM (SELECT o.rowid AS rn, o.id AS id, o.kind, o.session_id, o.agent, o.ts, mnemo_commit_message(o.text) AS msg ${calls}) WHERE msg IS NOT NULL`
    default:
      return undefined
  }
}
