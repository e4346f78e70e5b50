import { createRequire } from 'node:module'
import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fnv1a64, stableStringify } from '../core/hash.js'
import { capText } from '../core/text.js'
import type { DerivedObservation, ProjectRef } from '../core/types.js'
import type { CaptureDerivation, Deriver, ParseResult } from './derivation.js'
import { namedProject, resolveProjectRoot } from './project.js'
import { sanitizePayload } from './sanitize.js'
import { describeToolResult, filesOfToolInput, isOwnTool, OBSERVATION_CHARS, toolObservationText } from './tool-text.js'
import { asRecord, fileStem, str, timeline, timestampOf, type JsonRecord, type TranscriptParseOptions } from './transcript-format.js'

/** node:crypto, loaded on first use: requiring it costs ~2.7 ms CPU of a hook's start-up, and most hooks never hash. */
const nodeCrypto = (): typeof import('node:crypto') => createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')

/**
 * Gemini CLI session files: `~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json`,
 * one JSON object per session, `{sessionId, projectHash, startTime, lastUpdated, messages}`.
 * Each message is `{id, timestamp, type, content}`; `type` is `user`, `gemini` (with
 * optional `toolCalls`, `thoughts`, `tokens`, `model`), or `info` / `error` / `warning`
 * (CLI notices). `content` is a string, or (newer versions) a list of Gemini API parts.
 * Shape from gemini-cli's ChatRecordingService (packages/core/src/services/chatRecordingService.ts).
 */
const MESSAGE_TYPES = new Set(['user', 'gemini', 'info', 'error', 'warning'])

/** Whether `json` looks like a Gemini CLI session file: an object with a `sessionId` string and a `messages` array. */
export function isGeminiSession(json: unknown): boolean {
  const r = asRecord(json)
  return r !== undefined && typeof r['sessionId'] === 'string' && Array.isArray(r['messages'])
}

/**
 * Whether `text` looks like a Gemini CLI JSONL session (0.61 and later,
 * `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`): its first JSON line is the session header
 * (`sessionId` and `projectHash` strings), or a line is a `{"$set": …}` / `{"$rewindTo": …}` record.
 * Claude Code and Codex lines never have these.
 */
export function isGeminiJsonl(text: string): boolean {
  let start = 0
  for (let seen = 0; seen < 5 && start < text.length; ) {
    let end = text.indexOf('\n', start)
    if (end < 0) end = text.length
    const line = text
      .slice(start, end)
      .trim()
      .replace(/^\uFEFF/, '')
    start = end + 1
    if (!line.startsWith('{')) continue
    seen++
    if (line.startsWith('{"$set"') || line.startsWith('{"$rewindTo"')) return true
    try {
      const r = asRecord(JSON.parse(line))
      if (r && typeof r['sessionId'] === 'string' && typeof r['projectHash'] === 'string' && r['type'] === undefined) return true
    } catch {
      // a bad line: look at the next
    }
    if (seen === 1) return false
  }
  return false
}

/**
 * Folds a Gemini CLI JSONL session into the JSON session shape {@link parseGeminiSession} reads, the
 * way gemini-cli reads it back (chatRecordingService `loadConversationRecord`): a header line
 * `{sessionId, projectHash, startTime, lastUpdated, kind}` (its `messages`, if any, are messages); a
 * line with an `id` is a message, a later line with the same id replaces it in place (Gemini adds
 * tool calls to its last message this way); `{"$set": {…}}` merges session fields, and a `$set` of
 * `messages` replaces the whole list; `{"$rewindTo": id}` drops that message and all after it (all of
 * them when the id is unknown). Bad lines come back in `skipped` with their 1-based line number.
 */
function foldGeminiJsonl(text: string): { session: JsonRecord; read: number; skipped: { line: number; reason: string }[] } {
  const lines = text.split('\n')
  let last = lines.length - 1
  while (last >= 0 && lines[last]!.trim().length === 0) last--
  const meta: JsonRecord = {}
  const messages = new Map<string, JsonRecord>()
  const skipped: { line: number; reason: string }[] = []
  let read = 0
  const setMessages = (list: unknown): void => {
    if (!Array.isArray(list)) return
    messages.clear()
    for (const m of list) {
      const r = asRecord(m)
      if (r && typeof r['id'] === 'string') messages.set(r['id'], r)
    }
  }
  for (let i = 0; i <= last; i++) {
    const source = i === 0 ? lines[i]!.replace(/^\uFEFF/, '') : lines[i]!
    if (source.trim().length === 0) continue
    read++
    let record: JsonRecord | undefined
    try {
      record = asRecord(JSON.parse(source))
    } catch {
      skipped.push({ line: i + 1, reason: i === last && !text.endsWith('\n') ? 'invalid JSON (truncated last line)' : 'invalid JSON' })
      continue
    }
    if (!record) {
      skipped.push({ line: i + 1, reason: 'not a JSON object' })
      continue
    }
    if (typeof record['$rewindTo'] === 'string') {
      const ids = [...messages.keys()]
      const at = ids.indexOf(record['$rewindTo'])
      for (const id of at < 0 ? ids : ids.slice(at)) messages.delete(id)
    } else if (typeof record['id'] === 'string') {
      messages.set(record['id'], record)
    } else if (asRecord(record['$set'])) {
      const set = asRecord(record['$set'])!
      if (Array.isArray(set['messages'])) setMessages(set['messages'])
      const { messages: _m, ...rest } = set
      Object.assign(meta, rest)
    } else if (typeof record['sessionId'] === 'string') {
      const { messages: list, ...rest } = record
      Object.assign(meta, rest)
      if (Array.isArray(list))
        for (const m of list) {
          const r = asRecord(m)
          if (r && typeof r['id'] === 'string') messages.set(r['id'], r)
        }
    } else skipped.push({ line: i + 1, reason: 'not a Gemini CLI session record (no id, $set, $rewindTo or sessionId)' })
  }
  return { session: { ...meta, messages: [...messages.values()] }, read, skipped }
}

/** {@link parseGeminiSession} for a JSONL session file (see {@link foldGeminiJsonl}); `read` counts lines. */
export function parseGeminiJsonl(text: string, options: GeminiParseOptions): ParseResult {
  const folded = foldGeminiJsonl(text)
  if (typeof folded.session['sessionId'] !== 'string') {
    return {
      events: [],
      read: folded.read,
      skipped: [...folded.skipped, { line: 1, reason: 'no Gemini CLI session header (sessionId)' }],
      unknownTypes: {},
    }
  }
  const r = parseGeminiSession(folded.session, options)
  return { ...r, read: folded.read, skipped: [...folded.skipped, ...r.skipped] }
}

/** Options of {@link parseGeminiSession}: the transcript options plus folders the project might be. */
interface GeminiParseOptions extends TranscriptParseOptions {
  /**
   * Folders to match against the file's `projectHash` (SHA-256 of the project root, which is
   * all a Gemini session file says about its project). Default: the importing process's cwd.
   */
  candidateRoots?: readonly string[]
}

/**
 * Parses one Gemini CLI session file into events, one per message.
 *
 * - `sessionKey`: `sessionId`, else the file stem.
 * - `project`: `options.project`; else the first candidate root (or its git root) whose
 *   SHA-256 equals `projectHash`; else `gemini:<first 12 hex of projectHash>` — pass
 *   `--project` to file such sessions under their folder.
 * - Events: one per message (its `toolCalls` removed), then one `tool_call` event per call
 *   (mnemo's own calls dropped), because Gemini CLI adds calls to its last message in place.
 * - `ts`: the message's `timestamp`, else the previous one's, else `startTime`, else
 *   `lastUpdated`, else the file's modification time; a call's own `timestamp` when it has one.
 * - `idemKey`: `gemini:<sid>:<message id>` (a repeated id gets `#2`, `#3` …; an id-less message
 *   `i<index>:<fnv1a64 of it>`), and `<that>:call:<call id>` for calls, so a session file that
 *   grew since the last import adds only its new messages and calls.
 *
 * Messages that are not objects or have an unknown `type` are skipped with their 0-based
 * index as `message[i]`. mnemo's own MCP calls are removed from the stored payload.
 *
 * @throws never: a file that is not a session at all comes back with everything skipped.
 */
export function parseGeminiSession(json: unknown, options: GeminiParseOptions): ParseResult {
  const root = asRecord(json)
  const messages = Array.isArray(root?.['messages']) ? (root['messages'] as unknown[]) : []
  const result: ParseResult = { events: [], read: messages.length, skipped: [], unknownTypes: {} }
  if (!root || !isGeminiSession(root)) {
    result.read = 1
    result.skipped.push({ line: 1, reason: 'not a Gemini CLI session (needs sessionId and a messages array)' })
    return result
  }
  const sid = str(root['sessionId']) ?? fileStem(options.file)
  // A session without any time: its lastUpdated, else the file's modification time (never 1970).
  const startedAt = timestampOf(root['startTime']) ?? timestampOf(root['lastUpdated']) ?? fileTime(options.file)
  const project =
    options.project ??
    projectOfHash(
      str(root['projectHash']),
      [...projectRootMarker(options.file), ...(options.candidateRoots ?? [process.cwd()])],
      options.file,
    )
  const valid: { index: number; message: JsonRecord }[] = []
  messages.forEach((m, index) => {
    const message = asRecord(m)
    const type = str(message?.['type'])
    if (!message) result.skipped.push({ line: `message[${index}]`, reason: 'message is not an object' })
    else if (!type) result.skipped.push({ line: `message[${index}]`, reason: 'message without type' })
    else if (!MESSAGE_TYPES.has(type)) result.unknownTypes[type] = (result.unknownTypes[type] ?? 0) + 1
    else valid.push({ index, message })
  })
  const times = timeline([startedAt, ...valid.map((v) => timestampOf(v.message['timestamp']))]).slice(1)
  const seenIds = new Map<string, number>()
  const push = (type: string, key: string, ts: number, payload: unknown): void => {
    result.events.push({
      agent: 'gemini',
      format: 'gemini-session',
      type,
      sessionKey: sid,
      project,
      ts,
      idemKey: `gemini:${sid}:${key}`,
      payload: sanitizePayload(payload, options.redact),
      ...(startedAt !== undefined ? { sessionStartedAt: startedAt } : {}),
    })
  }
  valid.forEach(({ index, message }, i) => {
    const ts = times[i] ?? startedAt ?? 0
    // Message ids should be unique; a repeated one gets #2, #3 … so neither copy is lost. Id-less messages are keyed by position.
    let key = str(message['id'])
    if (key !== undefined) {
      const n = (seenIds.get(key) ?? 0) + 1
      seenIds.set(key, n)
      if (n > 1) key = `${key}#${n}`
    } else key = `i${index}:${fnv1a64(stableStringify(message))}`
    // Gemini CLI adds tool calls to its last message in place: each call is its own event, so a
    // re-import of the grown file adds the new calls (a key per message would hide them).
    const { toolCalls, ...rest } = message
    push(str(message['type'])!, key, ts, rest)
    if (!Array.isArray(toolCalls)) return
    toolCalls.forEach((c, j) => {
      const call = asRecord(c)
      const name = str(call?.['name'])
      if (!call || !name || isOwnGeminiTool(name)) return
      const callTs = timestampOf(call['timestamp'])
      push('tool_call', `${key}:call:${str(call['id']) ?? j}`, callTs !== undefined && callTs >= ts - 3_600_000 ? callTs : ts, {
        type: 'tool_call',
        messageId: key,
        ...call,
      })
    })
  })
  return result
}

function fileTime(file: string): number | undefined {
  try {
    return Math.floor(statSync(file).mtimeMs)
  } catch {
    return undefined
  }
}

/**
 * The project folder Gemini CLI 0.61 names for a session file: `~/.gemini/tmp/<project-name>/.project_root`
 * holds it (gemini-cli ProjectRegistry), two folders above `chats/session-….jsonl`. Empty when absent.
 */
function projectRootMarker(file: string): string[] {
  const dir = path.dirname(file)
  if (path.basename(dir) !== 'chats') return []
  try {
    const owner = readFileSync(path.join(path.dirname(dir), '.project_root'), 'utf8').trim()
    return owner.startsWith('/') || /^[A-Za-z]:[\\/]/.test(owner) ? [owner] : []
  } catch {
    return []
  }
}

function projectOfHash(hash: string | undefined, candidates: readonly string[], file: string): ProjectRef {
  if (!hash) return namedProject('gemini', 'unknown-project')
  for (const candidate of candidates) {
    const git = resolveProjectRoot(candidate)
    for (const root of [candidate, git.root]) {
      if (nodeCrypto().createHash('sha256').update(root).digest('hex') === hash) return resolveProjectRoot(root)
    }
  }
  // 0.61 names the folder after the project (`tmp/<project-name>/chats/`); older versions after the hash.
  const dir = path.dirname(file)
  const slug = path.basename(dir) === 'chats' ? path.basename(path.dirname(dir)) : ''
  return namedProject('gemini', slug && slug !== hash && /^[\w.-]{1,64}$/.test(slug) ? slug : hash.slice(0, 12))
}

function isOwnGeminiTool(name: string): boolean {
  return isOwnTool(name) || /^mnemo__/i.test(name)
}

const capped = (text: string): string => capText(text, OBSERVATION_CHARS)

/** The text of a message `content`: a string, or the `text` of each part of a part list. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content.trim()
  const parts = Array.isArray(content) ? content : content === undefined ? [] : [content]
  const texts: string[] = []
  for (const p of parts) {
    if (typeof p === 'string') texts.push(p)
    else if (typeof asRecord(p)?.['text'] === 'string' && asRecord(p)?.['thought'] !== true) texts.push(asRecord(p)!['text'] as string)
  }
  return texts.join('\n').trim()
}

/** A tool call's `tool` observation and its result (`error` when the call failed or was cancelled); none for mnemo's own tools. */
function callObservations(call: JsonRecord): DerivedObservation[] {
  const name = str(call['name'])
  if (!name || isOwnGeminiTool(name)) return []
  const ref = str(call['id'])
  const args = call['args']
  const out: DerivedObservation[] = [
    {
      kind: 'tool',
      role: 'assistant',
      tool: name,
      text: toolObservationText(name, args),
      files: filesOfToolInput(args),
      ...(ref ? { sourceRef: ref } : {}),
    },
  ]
  const status = str(call['status'])
  const output = callOutput(call)
  const failed = status === 'error' || status === 'cancelled'
  if (output || failed)
    out.push({
      kind: failed ? 'error' : 'tool_result',
      role: 'tool',
      tool: name,
      text: capped(output || `(${status})`),
      ...(ref ? { sourceRef: ref } : {}),
    })
  return out
}

/** A tool call's output: its `resultDisplay` when it is text, else the `functionResponse.response` of its result parts. */
function callOutput(call: JsonRecord): string {
  const display = call['resultDisplay']
  if (typeof display === 'string' && display.trim()) return display
  const parts = Array.isArray(call['result'])
    ? call['result']
    : call['result'] === undefined || call['result'] === null
      ? []
      : [call['result']]
  const responses = parts.map((p) => asRecord(asRecord(p)?.['functionResponse'])?.['response'] ?? p)
  return describeToolResult(responses)
}

/**
 * Derives observations from one stored Gemini CLI message:
 * - `user` → `prompt`/`user` from its text (not Gemini's own `<session_context>` message; hook output and
 *   mnemo's block in it are taken off by `deriveEvent`);
 * - `gemini` → `reasoning`/`assistant` from its `thoughts` (`subject: description`), then
 *   per tool call a `tool` observation (name, args, files; `sourceRef` = call id) and its
 *   result (`tool_result`, or `error` when `status` is `error`/`cancelled`; role `tool`),
 *   then `message`/`assistant` from its text;
 * - `error` → `error`/`assistant` (the CLI's notice of a failed request);
 * - `info`, `warning` → nothing.
 * Texts are capped at `OBSERVATION_CHARS`. Never throws on odd shapes.
 */
export const deriveGeminiSession: Deriver = (event) => {
  const out: CaptureDerivation = { observations: [] }
  const m = asRecord(event.payload)
  if (!m) return out
  const push = (o: DerivedObservation): void => {
    out.observations.push(o)
  }
  const type = str(m['type']) ?? event.type
  const text = contentText(m['content'])
  if (type === 'tool_call') {
    for (const o of callObservations(m)) push(o)
  } else if (type === 'user') {
    // `<session_context>` is Gemini CLI's own opening message (date, OS, folder tree), not the user's words.
    if (text && !text.startsWith('<session_context>')) push({ kind: 'prompt', role: 'user', text: capped(text) })
  } else if (type === 'gemini') {
    const thoughts = Array.isArray(m['thoughts']) ? m['thoughts'] : []
    const reasoning = thoughts
      .map((t) => {
        const r = asRecord(t)
        return [str(r?.['subject']), str(r?.['description'])].filter(Boolean).join(': ')
      })
      .filter((t) => t.length > 0)
    if (reasoning.length > 0) push({ kind: 'reasoning', role: 'assistant', text: capped(reasoning.join('\n\n')) })
    // Files written before tool calls were split into their own events still carry them here.
    for (const c of Array.isArray(m['toolCalls']) ? m['toolCalls'] : []) {
      const call = asRecord(c)
      if (call) for (const o of callObservations(call)) push(o)
    }
    if (text) push({ kind: 'message', role: 'assistant', text: capped(text) })
  } else if (type === 'error' && text) {
    push({ kind: 'error', role: 'assistant', text: capped(text) })
  }
  return out
}
