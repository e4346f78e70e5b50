import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { capText } from '../core/text.js'
import type { DerivedObservation, EventInput, ProjectRef } from '../core/types.js'
import type { CaptureDerivation, Deriver, ParseResult } from './derivation.js'
import { namedProject, resolveProjectRoot } from './project.js'
import { sanitizePayload } from './sanitize.js'
import { filesOfToolInput, isOwnTool, OBSERVATION_CHARS, oneLine, SESSION_TITLE_CHARS, toolObservationText } from './tool-text.js'
import { asRecord, str, timestampOf, type JsonRecord, type TranscriptParseOptions } from './transcript-format.js'

/**
 * OpenCode's JSON storage (OpenCode before 1.2; `$XDG_DATA_HOME/opencode/storage/`, by default
 * `~/.local/share/opencode/storage/`), one JSON file per record:
 *
 * - `project/<projectID>.json`: `{id, worktree, vcs, time}` (`global` for folders outside git);
 * - `session/<projectID>/<sessionID>.json`: `{id, projectID, directory, parentID?, title, version, time: {created, updated}}`;
 * - `message/<sessionID>/<messageID>.json`: `{id, sessionID, role: user|assistant, time: {created, completed?}, …}`;
 *   assistant messages add `modelID`, `providerID`, `mode`/`agent`, `path: {cwd, root}`, `error?: {name, data: {message}}`;
 * - `part/<messageID>/<partID>.json`: `{id, sessionID, messageID, type, …}`; `text` (`text`, `synthetic?`, `ignored?`),
 *   `reasoning`, `tool` (`tool`, `callID`, `state: {status: pending|running|completed|error, input, output?, error?, title?,
 *   metadata?, time?}`), `file`, `patch`, `snapshot`, `step-start`, `step-finish`, `agent`, `subtask`, `retry`, `compaction`.
 *
 * Ids are time-ordered (`ses_…`, `msg_…`, `prt_…`); like OpenCode's own JSON → SQLite migration, a record's
 * id and parent come from its path, not its content. Shapes from OpenCode's source
 * (packages/opencode/src/session/message-v2.ts, src/storage/storage.ts, src/storage/json-migration.ts).
 * OpenCode 1.2 and later keep the same records in a SQLite database (`opencode.db`), which is not read here.
 */
const PART_TYPES = new Set([
  'text',
  'reasoning',
  'tool',
  'file',
  'patch',
  'snapshot',
  'step-start',
  'step-finish',
  'agent',
  'subtask',
  'retry',
  'compaction',
])
const RECORD_DIRS = ['session', 'message', 'part'] as const
/** Titles OpenCode gives a session before it has named it: not worth keeping. */
const DEFAULT_TITLE = /^(New|Child) session - \d{4}-\d{2}-\d{2}T/

/** Field added to a stored part: the role of its message (a part alone does not say who wrote it). */
const OPENCODE_ROLE_FIELD = '_mnemo_role'
/** Field added to a stored part of a compaction summary message (`summary: true`). */
const OPENCODE_SUMMARY_FIELD = '_mnemo_summary'

/** Options of {@link parseOpenCodeStorage}: `file` is the storage folder. */
interface OpenCodeParseOptions extends TranscriptParseOptions {
  /** Read only this session file (`<storage>/session/<projectID>/<sessionID>.json`). Default: every session. */
  session?: string
}

const isDir = (p: string): boolean => {
  try {
    return statSync(p).isDirectory()
  } catch {
    return false
  }
}

/** Whether `dir` is an OpenCode JSON storage folder: it holds `session/`, `message/` and `part/` folders. */
export function isOpenCodeStorage(dir: string): boolean {
  return RECORD_DIRS.every((d) => isDir(path.join(dir, d)))
}

/**
 * Where a file sits in an OpenCode storage folder: `kind` is `session`, `message` or `part` when the file is
 * `<root>/<kind>/<folder>/<id>.json` and `<root>` is a storage folder; undefined otherwise.
 */
export function openCodeRecordOf(file: string): { root: string; kind: (typeof RECORD_DIRS)[number] } | undefined {
  if (!file.endsWith('.json')) return undefined
  const kindDir = path.dirname(path.dirname(file))
  const kind = RECORD_DIRS.find((k) => k === path.basename(kindDir))
  const root = path.dirname(kindDir)
  return kind && isOpenCodeStorage(root) ? { root, kind } : undefined
}

/** The SQLite database of OpenCode 1.2+ in or beside `dir` (`opencode.db`, `opencode-<channel>.db`), if there is one. */
export function openCodeDatabaseNear(dir: string): string | undefined {
  for (const folder of [dir, path.dirname(dir)]) {
    let names: string[]
    try {
      names = readdirSync(folder)
    } catch {
      continue
    }
    const db = names.filter(isOpenCodeDatabaseName).sort()[0]
    if (db) return path.join(folder, db)
  }
  return undefined
}

/** Whether a file name is OpenCode 1.2+'s SQLite database: `opencode.db` or `opencode-<channel>.db`. */
export function isOpenCodeDatabaseName(name: string): boolean {
  return /^opencode(-[\w.-]+)?\.db$/.test(name)
}

/** The sentence that says OpenCode's SQLite database is not read. */
export function openCodeSqliteMessage(db: string): string {
  return `OpenCode 1.2 and later keep sessions in a SQLite database (${db}), which mnemo does not read: only OpenCode's JSON storage layout (storage/ with session/, message/ and part/) is imported`
}

function listJson(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.json'))
      .map((e) => e.name)
      .sort()
  } catch {
    return []
  }
}

function listDirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort()
  } catch {
    return []
  }
}

/** A JSON object from a file, or why not. */
function readRecord(file: string): { record: JsonRecord } | { error: string } {
  let text: string
  try {
    text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '')
  } catch (cause) {
    return { error: `cannot read file: ${(cause as Error).message}` }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    return { error: `invalid JSON: ${(cause as Error).message}` }
  }
  const record = asRecord(value)
  return record ? { record } : { error: 'not a JSON object' }
}

const stem = (file: string): string => path.basename(file, '.json')
const createdOf = (r: JsonRecord): number | undefined => timestampOf(asRecord(r['time'])?.['created'])
const byTimeThenId = (a: { id: string; record: JsonRecord }, b: { id: string; record: JsonRecord }): number =>
  (createdOf(a.record) ?? Number.MAX_SAFE_INTEGER) - (createdOf(b.record) ?? Number.MAX_SAFE_INTEGER) ||
  (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

function fileTime(file: string): number | undefined {
  try {
    return Math.floor(statSync(file).mtimeMs)
  } catch {
    return undefined
  }
}

/** mnemo's own MCP tools as OpenCode names them (`<server>_<tool>`): never captured. */
function isOwnOpenCodeTool(name: string): boolean {
  return isOwnTool(name) || /^mnemo_/i.test(name)
}

/**
 * Parses an OpenCode storage folder (or one session of it) into events: one per session, message
 * and part file.
 *
 * - `sessionKey`: the session id (its file name); a subagent's child session is a session of its own.
 * - `project`: `options.project`; else the session's `directory`, filed under the worktree (the
 *   project's `worktree`, or an assistant message's `path.root`) when it lies inside it; else
 *   `opencode:<projectID>`.
 * - Order and `ts`: sessions by creation time, each followed by its messages (by `time.created`,
 *   then id) and each message by its parts (by id). A session's event is at `time.created`, a
 *   message's at its `time.created`, a part at its own `time.start` (tools: `state.time.start`),
 *   else its message's time.
 * - `idemKey`: `opencode:<sessionID>:session`, `opencode:<sessionID>:<messageID>`,
 *   `opencode:<sessionID>:<messageID>:<partID>`, so a re-import adds only new records.
 * - Parts are stored with {@link OPENCODE_ROLE_FIELD} (their message's role) and, in a compaction
 *   summary, {@link OPENCODE_SUMMARY_FIELD}.
 *
 * Skipped, with the file's path under the storage folder: files that are not JSON objects, parts
 * without `type`, and tool parts still `pending`/`running` (their result is not written yet: a
 * later import adds them). Messages with a role other than user/assistant and parts of unknown
 * type are counted in `unknownTypes` (`message:<role>`, `<part type>`); the parts of such a
 * message, and of a message whose file is unreadable, are not read. mnemo's own tool calls are
 * dropped. `read` counts session, message and part files.
 *
 * @throws never: an unreadable folder comes back with nothing read.
 */
export function parseOpenCodeStorage(options: OpenCodeParseOptions): ParseResult {
  const root = options.file
  const result: ParseResult = { events: [], read: 0, skipped: [], unknownTypes: {} }
  const rel = (file: string): string => path.relative(root, file).split(path.sep).join('/')
  const count = (type: string): void => {
    result.unknownTypes[type] = (result.unknownTypes[type] ?? 0) + 1
  }
  /** Reads record files, counting them; bad ones are skipped with their path. */
  const readAll = (files: string[]): { id: string; file: string; record: JsonRecord }[] => {
    const out: { id: string; file: string; record: JsonRecord }[] = []
    for (const file of files) {
      result.read++
      const r = readRecord(file)
      if ('error' in r) result.skipped.push({ line: rel(file), reason: r.error })
      else out.push({ id: stem(file), file, record: r.record })
    }
    return out
  }
  const projects = new Map<string, JsonRecord>()
  for (const name of listJson(path.join(root, 'project'))) {
    const r = readRecord(path.join(root, 'project', name))
    if ('record' in r) projects.set(stem(name), r.record)
  }
  const sessionFiles = options.session
    ? [options.session]
    : listDirs(path.join(root, 'session')).flatMap((p) =>
        listJson(path.join(root, 'session', p)).map((n) => path.join(root, 'session', p, n)),
      )
  const sessions = readAll(sessionFiles).sort(byTimeThenId)
  /** Counts the part files of `messageId` as read and skipped, with `why`. */
  const orphanParts = (messageId: string, why: string): void => {
    for (const name of listJson(path.join(root, 'part', messageId))) {
      result.read++
      result.skipped.push({ line: rel(path.join(root, 'part', messageId, name)), reason: `part skipped: ${why}` })
    }
  }
  if (!options.session) {
    // Messages of a session whose file is missing or unreadable (and their parts) are reported, not lost in silence.
    const known = new Set(sessions.map((s) => s.id))
    for (const sid of listDirs(path.join(root, 'message'))) {
      if (known.has(sid)) continue
      for (const name of listJson(path.join(root, 'message', sid))) {
        result.read++
        result.skipped.push({
          line: rel(path.join(root, 'message', sid, name)),
          reason: `message skipped: no readable session file for ${sid}`,
        })
        orphanParts(stem(name), `its session ${sid} has no readable session file`)
      }
    }
  }

  for (const session of sessions) {
    const sid = session.id
    const projectID = path.basename(path.dirname(session.file))
    const messageFiles = listJson(path.join(root, 'message', sid)).map((n) => path.join(root, 'message', sid, n))
    const messages = readAll(messageFiles).sort(byTimeThenId)
    // The parts of a message that could not be read have nothing to belong to: say so, do not drop them quietly.
    const readable = new Set(messages.map((m) => m.id))
    for (const file of messageFiles) if (!readable.has(stem(file))) orphanParts(stem(file), `its message ${rel(file)} could not be read`)
    const project = options.project ?? projectOf(session.record, messages, projects.get(projectID), projectID)
    const startedAt =
      createdOf(session.record) ?? messages.map((m) => createdOf(m.record)).find((t) => t !== undefined) ?? fileTime(session.file) ?? 0
    let last = startedAt
    const push = (type: string, key: string, ts: number, payload: unknown): void => {
      last = ts
      const event: EventInput = {
        agent: 'opencode',
        format: 'opencode-storage',
        type,
        sessionKey: sid,
        project,
        ts,
        idemKey: `opencode:${sid}:${key}`,
        payload: sanitizePayload(payload, options.redact),
        sessionStartedAt: startedAt,
      }
      result.events.push(event)
    }
    push('session', 'session', startedAt, session.record)
    for (const message of messages) {
      const role = str(message.record['role'])
      if (role !== 'user' && role !== 'assistant') {
        count(`message:${role ?? '(none)'}`)
        continue
      }
      const messageTs = createdOf(message.record) ?? last
      push('message', message.id, messageTs, message.record)
      const summary = message.record['summary'] === true && role === 'assistant'
      const parts = readAll(listJson(path.join(root, 'part', message.id)).map((n) => path.join(root, 'part', message.id, n)))
      for (const part of parts) {
        const type = str(part.record['type'])
        if (!type) {
          result.skipped.push({ line: rel(part.file), reason: 'part without type' })
          continue
        }
        if (!PART_TYPES.has(type)) {
          count(type)
          continue
        }
        const state = asRecord(part.record['state'])
        if (type === 'tool') {
          const tool = str(part.record['tool'])
          if (tool && isOwnOpenCodeTool(tool)) continue
          const status = str(state?.['status'])
          if (status === 'pending' || status === 'running') {
            result.skipped.push({ line: rel(part.file), reason: `tool call still ${status}: import again once it has finished` })
            continue
          }
        }
        const partTs =
          timestampOf(asRecord(part.record['time'])?.['start']) ?? timestampOf(asRecord(state?.['time'])?.['start']) ?? messageTs
        push('part', `${message.id}:${part.id}`, partTs, {
          ...part.record,
          [OPENCODE_ROLE_FIELD]: role,
          ...(summary ? { [OPENCODE_SUMMARY_FIELD]: true } : {}),
        })
      }
    }
  }
  return result
}

function projectOf(
  session: JsonRecord,
  messages: { record: JsonRecord }[],
  project: JsonRecord | undefined,
  projectID: string,
): ProjectRef {
  const paths = messages.map((m) => asRecord(m.record['path'])).filter((p): p is JsonRecord => p !== undefined)
  const dir = str(session['directory']) ?? paths.map((p) => str(p['cwd'])).find(Boolean)
  const worktree = str(project?.['worktree'])
  const root = (worktree !== '/' ? worktree : undefined) ?? paths.map((p) => str(p['root'])).find((r) => r !== undefined && r !== '/')
  if (dir && root && (dir === root || dir.startsWith(`${root.replace(/\/+$/, '')}/`))) return resolveProjectRoot(root)
  if (dir) return resolveProjectRoot(dir)
  if (root) return resolveProjectRoot(root)
  return namedProject('opencode', projectID)
}

const capped = (text: string): string => capText(text, OBSERVATION_CHARS)

/** OpenCode's tools name paths and edits in camelCase (`filePath`, `oldString`); the shared describers read snake_case. */
function toolInput(input: unknown): unknown {
  const r = asRecord(input)
  if (!r) return input
  const out: JsonRecord = { ...r }
  for (const [from, to] of [
    ['filePath', 'file_path'],
    ['oldString', 'old_string'],
    ['newString', 'new_string'],
  ] as const) {
    if (typeof r[from] === 'string' && out[to] === undefined) out[to] = r[from]
  }
  return out
}

/** `name: message` of an OpenCode error object (`{name, data: {message}}`). */
function errorText(error: JsonRecord): string {
  const name = str(error['name'])
  const message = str(asRecord(error['data'])?.['message']) ?? str(error['message'])
  return [name, message].filter(Boolean).join(': ')
}

function toolObservations(part: JsonRecord): DerivedObservation[] {
  const tool = str(part['tool'])
  if (!tool || isOwnOpenCodeTool(tool)) return []
  const state = asRecord(part['state']) ?? {}
  const ref = str(part['callID'])
  const input = toolInput(state['input'])
  const out: DerivedObservation[] = [
    {
      kind: 'tool',
      role: 'assistant',
      tool,
      text: toolObservationText(tool, input),
      files: filesOfToolInput(input),
      ...(ref ? { sourceRef: ref } : {}),
    },
  ]
  const status = str(state['status'])
  if (status === 'error') {
    out.push({ kind: 'error', role: 'tool', tool, text: capped(str(state['error']) ?? '(error)'), ...(ref ? { sourceRef: ref } : {}) })
  } else if (status === 'completed') {
    const output = str(state['output'])?.trim()
    if (output) out.push({ kind: 'tool_result', role: 'tool', tool, text: capped(output), ...(ref ? { sourceRef: ref } : {}) })
  }
  return out
}

/**
 * Derives observations from one stored OpenCode record:
 * - session → no observation; its `title` names the session (OpenCode's placeholder
 *   `New session - <time>` is ignored);
 * - message → an `error`/`assistant` observation when it failed (`error`, except the user's
 *   abort `MessageAbortedError`), else nothing (its content is in its parts);
 * - part `text` → `prompt`/`user` or `message`/`assistant` by the message's role (`summary` in
 *   a compaction summary); `synthetic` and `ignored` text (tool output OpenCode inserts) → nothing;
 * - part `reasoning` → `reasoning`/`assistant`;
 * - part `tool` → a `tool` observation (input, files; `sourceRef` = `callID`) and its result:
 *   `tool_result` (`output`) or `error` (`state.error`), role `tool`;
 * - part `subtask` → `prompt`/`user` (the task handed to a subagent); `retry` → `error`/`assistant`;
 * - other parts (`file`, `patch`, `snapshot`, `step-*`, `agent`, `compaction`) → nothing.
 * Texts are capped at `OBSERVATION_CHARS`. Never throws on odd shapes.
 */
export const deriveOpenCodeStorage: Deriver = (event) => {
  const out: CaptureDerivation = { observations: [] }
  const r = asRecord(event.payload)
  if (!r) return out
  if (event.type === 'session') {
    const title = str(r['title'])?.trim()
    if (title && !DEFAULT_TITLE.test(title)) out.session = { title: oneLine(title, SESSION_TITLE_CHARS) }
    return out
  }
  if (event.type === 'message') {
    const error = asRecord(r['error'])
    if (error && str(error['name']) !== 'MessageAbortedError') {
      const text = errorText(error)
      if (text) out.observations.push({ kind: 'error', role: 'assistant', text: capped(text) })
    }
    return out
  }
  if (event.type !== 'part') return out
  const user = r[OPENCODE_ROLE_FIELD] === 'user'
  const type = str(r['type'])
  if (type === 'text') {
    const text = str(r['text'])?.trim()
    if (!text || r['synthetic'] === true || r['ignored'] === true) return out
    if (r[OPENCODE_SUMMARY_FIELD] === true) out.observations.push({ kind: 'summary', role: 'assistant', text: capped(text) })
    else
      out.observations.push(
        user ? { kind: 'prompt', role: 'user', text: capped(text) } : { kind: 'message', role: 'assistant', text: capped(text) },
      )
  } else if (type === 'reasoning') {
    const text = str(r['text'])?.trim()
    if (text) out.observations.push({ kind: 'reasoning', role: 'assistant', text: capped(text) })
  } else if (type === 'tool') {
    out.observations.push(...toolObservations(r))
  } else if (type === 'subtask') {
    const text = [str(r['description']), str(r['prompt'])].filter(Boolean).join('\n').trim()
    if (text) out.observations.push({ kind: 'prompt', role: 'user', text: capped(text) })
  } else if (type === 'retry') {
    const error = asRecord(r['error'])
    const text = error ? errorText(error) : ''
    if (text) out.observations.push({ kind: 'error', role: 'assistant', text: capped(text) })
  }
  return out
}
