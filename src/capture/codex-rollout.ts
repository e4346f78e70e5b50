import path from 'node:path'
import { fnv1a64, stableStringify } from '../core/hash.js'
import { capText } from '../core/text.js'
import type { DerivedObservation, EventInput, ProjectRef } from '../core/types.js'
import type { CaptureDerivation, Deriver, ParseResult } from './derivation.js'
import { normalizeRoot, refOf, resolveProjectRoot } from './project.js'
import { sanitizePayload } from './sanitize.js'
import { describeToolResult, filesOfToolInput, isOwnServer, isOwnTool, OBSERVATION_CHARS, toolObservationText } from './tool-text.js'
import {
  asRecord,
  fileStem,
  readJsonLines,
  str,
  timeline,
  timestampOf,
  TOOL_NAME_FIELD,
  type JsonRecord,
  type TranscriptParseOptions,
} from './transcript-format.js'

/** Codex rollout record types; any other top-level `type` is counted in `unknownTypes` and skipped. */
const KNOWN_TYPES = new Set(['session_meta', 'turn_context', 'event_msg', 'response_item', 'compacted'])
const CALL_TYPES = new Set(['function_call', 'custom_tool_call', 'local_shell_call'])
const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output'])

/** mnemo's own tools as Codex names them: `mcp__mnemo__x`, the older `mnemo__x`, or 0.171's `{namespace: "mcp__mnemo", name: "x"}` (isOwnTool). */
function isOwnCodexTool(name: string, namespace?: string): boolean {
  return isOwnTool(name, namespace)
}

/** A call's tool name as the rest of mnemo sees it: `<namespace>__<name>` when Codex gives the namespace apart (0.171). */
function callName(payload: JsonRecord): string | undefined {
  const name = str(payload['name'])
  const namespace = str(payload['namespace'])
  if (!name) return undefined
  return namespace && !name.startsWith(`${namespace}__`) ? `${namespace}__${name}` : name
}

/**
 * Marks which record carries a message, on records that say the same thing as another: `false` on an
 * `event_msg` `user_message`/`agent_message` another record carries, `true` on an `item_completed`
 * `UserMessage`/`AgentMessage` or a `response_item` `message` that carries it. Absent, the first
 * derive and the others do not (which is how events stored before this field derive).
 */
const SAID_FIELD = '_mnemo_said'

/**
 * The three records Codex writes a message in, in order of preference: `event_msg`
 * `user_message`/`agent_message` (before 0.171), `event_msg` `item_completed` with a
 * `UserMessage`/`AgentMessage` item (0.171), `response_item` `message` role user/assistant (every
 * version; for the user it also holds Codex's own context, see CODEX_CONTEXT).
 */
type SaidForm = 0 | 1 | 2

/** User-role messages Codex writes itself (environment, AGENTS.md, hook and skill context, …): not the user's words. */
const CODEX_CONTEXT =
  /^\s*(?:<(?:environment_context|user_instructions|INSTRUCTIONS|user_shell_command|turn_aborted|codex_internal_context|startup_context|subagent_notification|skill|hook_prompt|agent_message_board_notification|realtime_delegation|proposed_plan|permissions instructions|collaboration_mode)\b|# AGENTS\.md instructions\b)/

/** The role and text of a message record, with the form it comes in; undefined for any other record. */
function saidOf(type: string, payload: JsonRecord): { form: SaidForm; role: 'user' | 'assistant'; text: string } | undefined {
  const subtype = payload['type']
  if (type === 'event_msg' && (subtype === 'user_message' || subtype === 'agent_message')) {
    const images = Array.isArray(payload['images']) && payload['images'].length > 0
    const text = str(payload['message'])?.trim() || (images ? '[image]' : '')
    return text ? { form: 0, role: subtype === 'user_message' ? 'user' : 'assistant', text } : undefined
  }
  if (type === 'event_msg' && subtype === 'item_completed') {
    const item = asRecord(payload['item'])
    const itemType = item?.['type']
    if (itemType !== 'UserMessage' && itemType !== 'AgentMessage') return undefined
    const text = partsText(item!['content'], false)
    return text ? { form: 1, role: itemType === 'UserMessage' ? 'user' : 'assistant', text } : undefined
  }
  if (type === 'response_item' && subtype === 'message' && (payload['role'] === 'user' || payload['role'] === 'assistant')) {
    const text = partsText(payload['content'], payload['role'] === 'user')
    return text ? { form: 2, role: payload['role'], text } : undefined
  }
  return undefined
}

/** The text of a content list (`input_text`, `output_text`, `text`, `Text` parts); with `userOnly`, parts that are Codex's own context are left out. */
function partsText(content: unknown, userOnly: boolean): string {
  if (typeof content === 'string') return userOnly && CODEX_CONTEXT.test(content) ? '' : content.trim()
  if (!Array.isArray(content)) return ''
  const texts: string[] = []
  let images = 0
  for (const part of content) {
    const p = asRecord(part)
    const text = p?.['text']
    if (typeof text === 'string' && text.trim()) {
      if (!(userOnly && CODEX_CONTEXT.test(text))) texts.push(text.trim())
    } else if (typeof p?.['type'] === 'string' && /image/i.test(p['type'])) images++
  }
  return texts.join('\n').trim() || (images > 0 && texts.length === 0 && !userOnly ? '[image]' : '')
}

/**
 * Which records carry each message, so a message Codex wrote in two or three forms is stored as one
 * observation. Messages are told apart by role and text: per (role, text), the form with the most
 * records carries it (a tie goes to the earlier form); records of the other forms are duplicates.
 * Returns the SAID_FIELD value to store per record index, where one is needed.
 */
function sayings(records: readonly { type: string; payload: JsonRecord }[]): Map<number, boolean> {
  const said = records.map((r) => saidOf(r.type, r.payload))
  const counts = new Map<string, [number, number, number]>()
  const keyOf = (s: { role: string; text: string }): string => `${s.role}\u0000${s.text.replace(/\s+/g, ' ')}`
  for (const s of said) {
    if (!s) continue
    const c = counts.get(keyOf(s)) ?? [0, 0, 0]
    c[s.form]++
    counts.set(keyOf(s), c)
  }
  const marks = new Map<number, boolean>()
  said.forEach((s, i) => {
    if (!s) return
    const c = counts.get(keyOf(s))!
    const best = c.indexOf(Math.max(...c)) as SaidForm
    if (s.form === 0 && best !== 0) marks.set(i, false)
    else if (s.form !== 0 && best === s.form) marks.set(i, true)
  })
  return marks
}

/**
 * Parses one Codex CLI rollout JSONL file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`,
 * records `{timestamp, type, payload}`) into events, one per valid `session_meta`,
 * `turn_context`, `event_msg`, `response_item` or `compacted` record.
 *
 * - `sessionKey`: the first `session_meta.payload.id`, else the file stem.
 * - `project`: `options.project`, else the git root of the latest `cwd` seen in `session_meta` /
 *   `turn_context` (records before any take the file's first `cwd`), else the file's folder.
 * - `ts`: the record's `timestamp`, else the previous record's, else the file's first, else 0.
 *   `sessionStartedAt`: the `session_meta` timestamp, on every event when known.
 * - `idemKey`: `codex:<sid>:call:<call_id>` for calls, `codex:<sid>:out:<call_id>` for their
 *   outputs, else `codex:<sid>:h:<fnv1a64 of the record>`.
 * - `payload`: the record, outputs annotated with {@link TOOL_NAME_FIELD}, messages Codex wrote in more than
 *   one record with {@link SAID_FIELD}, then `sanitizePayload`d.
 *
 * mnemo's own MCP calls, their outputs and their `mcp_tool_call_*` events are dropped silently.
 * Bad lines go to `skipped` (1-based line, reason); unknown record types to `unknownTypes`.
 */
export function parseCodexRollout(text: string, options: TranscriptParseOptions): ParseResult {
  const lines = readJsonLines(text)
  const result: ParseResult = { events: [], read: lines.length, skipped: [], unknownTypes: {} }
  const valid: { record: JsonRecord; type: string; payload: JsonRecord }[] = []
  for (const l of lines) {
    if ('error' in l) {
      result.skipped.push({ line: l.line, reason: l.error })
      continue
    }
    if (!KNOWN_TYPES.has(l.type)) {
      result.unknownTypes[l.type] = (result.unknownTypes[l.type] ?? 0) + 1
      continue
    }
    const payload = asRecord(l.record['payload'])
    if (!payload) result.skipped.push({ line: l.line, reason: 'payload is not an object' })
    else if ((l.type === 'event_msg' || l.type === 'response_item') && !str(payload['type'])) {
      result.skipped.push({ line: l.line, reason: `${l.type} without payload.type` })
    } else valid.push({ record: l.record, type: l.type, payload })
  }

  let sessionId: string | undefined
  let startedAt: number | undefined
  let firstCwd: string | undefined
  const callNames = new Map<string, string>()
  const ownCalls = new Set<string>()
  for (const { record, type, payload } of valid) {
    if (type === 'session_meta' && sessionId === undefined) {
      sessionId = str(payload['id'])
      startedAt = timestampOf(payload['timestamp']) ?? timestampOf(record['timestamp'])
    }
    if (type === 'session_meta' || type === 'turn_context') firstCwd ??= str(payload['cwd'])
    const callId = str(payload['call_id'])
    const name = callName(payload)
    if (type === 'response_item' && callId && name && CALL_TYPES.has(payload['type'] as string)) {
      callNames.set(callId, name)
      if (isOwnCodexTool(name, str(payload['namespace']))) ownCalls.add(callId)
    }
  }
  const sid = sessionId ?? fileStem(options.file)

  const projects = new Map<string, ProjectRef>()
  const projectOf = (cwd: string | undefined): ProjectRef => {
    if (options.project) return options.project
    let ref = projects.get(cwd ?? '')
    if (!ref) {
      ref = cwd ? resolveProjectRoot(cwd) : refOf(normalizeRoot(path.dirname(options.file)))
      projects.set(cwd ?? '', ref)
    }
    return ref
  }

  const times = timeline(valid.map((v) => timestampOf(v.record['timestamp'])))
  const marks = sayings(valid)
  let cwd = firstCwd
  valid.forEach(({ record, type, payload }, i) => {
    if (type === 'session_meta' || type === 'turn_context') cwd = str(payload['cwd']) ?? cwd
    if (isOwnRecord(type, payload, ownCalls)) return
    const subtype = str(payload['type']) ?? ''
    const callId = str(payload['call_id'])
    let key = `h:${fnv1a64(stableStringify(record))}`
    let stored = record
    if (type === 'response_item' && callId && CALL_TYPES.has(subtype)) key = `call:${callId}`
    else if (type === 'response_item' && callId && OUTPUT_TYPES.has(subtype)) {
      key = `out:${callId}`
      const name = callNames.get(callId)
      if (name) stored = { ...record, payload: { ...payload, [TOOL_NAME_FIELD]: name } }
    } else if (marks.has(i)) stored = { ...record, payload: { ...payload, [SAID_FIELD]: marks.get(i) } }
    const event: EventInput = {
      agent: 'codex',
      format: 'codex-rollout',
      type,
      sessionKey: sid,
      project: projectOf(cwd),
      ts: times[i] ?? 0,
      idemKey: `codex:${sid}:${key}`,
      payload: sanitizePayload(stored, options.redact),
      ...(startedAt !== undefined ? { sessionStartedAt: startedAt } : {}),
    }
    result.events.push(event)
  })
  return result
}

/** A call of mnemo's own tools, its output, or the `mcp_tool_call_begin/end` events around it. */
function isOwnRecord(type: string, payload: JsonRecord, ownCalls: ReadonlySet<string>): boolean {
  const subtype = payload['type']
  const callId = str(payload['call_id'])
  if (type === 'response_item') {
    if (typeof subtype === 'string' && CALL_TYPES.has(subtype)) {
      const name = str(payload['name'])
      return name !== undefined && isOwnCodexTool(name, str(payload['namespace']))
    }
    return typeof subtype === 'string' && OUTPUT_TYPES.has(subtype) && callId !== undefined && ownCalls.has(callId)
  }
  if (type === 'event_msg' && (subtype === 'mcp_tool_call_begin' || subtype === 'mcp_tool_call_end')) {
    const server = str(asRecord(payload['invocation'])?.['server'])
    return isOwnServer(server) || (callId !== undefined && ownCalls.has(callId))
  }
  if (type === 'event_msg' && (subtype === 'item_started' || subtype === 'item_completed' || subtype === 'item_updated')) {
    // 0.171 items: an MCP call names its server (and carries the result); its id is the call id.
    const item = asRecord(payload['item'])
    if (!item) return false
    const id = str(item['id']) ?? str(item['call_id'])
    return (
      isOwnServer(item['server']) ||
      isOwnServer(item['server_name']) ||
      isOwnTool(str(item['tool']) ?? '', str(item['namespace'])) ||
      (id !== undefined && ownCalls.has(id))
    )
  }
  return false
}

const capped = (text: string): string => capText(text, OBSERVATION_CHARS)

/**
 * Derives observations from one stored Codex rollout record:
 * - A message → `prompt`/`user` (`[image]` for an image-only message) or `message`/`assistant`,
 *   from the one record that carries it (see SAID_FIELD, `sayings`): `event_msg`
 *   `user_message`/`agent_message` unless marked `false`; `event_msg` `item_completed`
 *   `UserMessage`/`AgentMessage` (0.171) and `response_item` `message` only when marked `true`.
 *   Other `event_msg` subtypes → nothing.
 * - `response_item` `reasoning` → `reasoning`/`assistant` from its `summary_text` items only;
 *   `function_call`, `custom_tool_call`, `local_shell_call` → `tool` (input text, files,
 *   `sourceRef` = call_id); `function_call_output`, `custom_tool_call_output` → `tool_result`
 *   (`error` when `success: false` or a non-zero exit code; Codex's exec header taken off), role `tool`.
 * - `compacted` → `summary`/`assistant`; `session_meta`, `turn_context` → nothing.
 * Texts are capped at `OBSERVATION_CHARS`. Never throws on odd shapes.
 */
export const deriveCodexRollout: Deriver = (event) => {
  const out: CaptureDerivation = { observations: [] }
  const record = asRecord(event.payload)
  const payload = asRecord(record?.['payload'])
  if (!record || !payload) return out
  const type = str(record['type']) ?? event.type
  const subtype = payload['type']
  const push = (o: DerivedObservation | undefined): void => {
    if (o) out.observations.push(o)
  }
  const said = saidOf(type, payload)
  if (said) {
    const carries = said.form === 0 ? payload[SAID_FIELD] !== false : payload[SAID_FIELD] === true
    if (carries)
      push(
        said.role === 'user'
          ? { kind: 'prompt', role: 'user', text: capped(said.text) }
          : { kind: 'message', role: 'assistant', text: capped(said.text) },
      )
  } else if (type === 'response_item') {
    if (subtype === 'reasoning') push(reasoningObservation(payload))
    else if (subtype === 'function_call') push(callObservation({ ...payload, name: callName(payload) }, payload['arguments']))
    else if (subtype === 'custom_tool_call') push(callObservation(payload, payload['input']))
    else if (subtype === 'local_shell_call')
      push(callObservation({ ...payload, name: str(payload['name']) ?? 'local_shell_call' }, payload['action']))
    else if (typeof subtype === 'string' && OUTPUT_TYPES.has(subtype)) push(outputObservation(payload))
  } else if (type === 'compacted') {
    const message = str(payload['message'])?.trim()
    if (message) push({ kind: 'summary', role: 'assistant', text: capped(message) })
  }
  return out
}

function reasoningObservation(payload: JsonRecord): DerivedObservation | undefined {
  const summary = payload['summary']
  if (!Array.isArray(summary)) return undefined
  const texts: string[] = []
  for (const item of summary) {
    const s = asRecord(item)
    if (s?.['type'] === 'summary_text' && typeof s['text'] === 'string' && s['text'].trim()) texts.push(s['text'].trim())
  }
  return texts.length > 0 ? { kind: 'reasoning', role: 'assistant', text: capped(texts.join('\n\n')) } : undefined
}

function callObservation(payload: JsonRecord, input: unknown): DerivedObservation | undefined {
  const name = str(payload['name'])
  if (!name || isOwnCodexTool(name, str(payload['namespace']))) return undefined
  const ref = str(payload['call_id']) ?? str(payload['id'])
  return {
    kind: 'tool',
    role: 'assistant',
    tool: name,
    text: toolObservationText(name, input),
    files: filesOfToolInput(input),
    ...(ref ? { sourceRef: ref } : {}),
  }
}

function outputObservation(payload: JsonRecord): DerivedObservation {
  let output = payload['output']
  let failed = false
  const obj = asRecord(output)
  if (obj) {
    failed = obj['success'] === false
    if ('content' in obj) output = obj['content']
  }
  if (typeof output === 'string') failed ||= nonZeroExit(output)
  const tool = str(payload[TOOL_NAME_FIELD])
  const ref = str(payload['call_id'])
  return {
    kind: failed ? 'error' : 'tool_result',
    role: 'tool',
    text: capped(describeToolResult(output) || '(no output)'),
    ...(tool ? { tool } : {}),
    ...(ref ? { sourceRef: ref } : {}),
  }
}

/** Exit status of a shell output: `{"metadata":{"exit_code":N}}` JSON, or an `Exit code: N` / `Process exited with code N` line. */
function nonZeroExit(output: string): boolean {
  const t = output.trimStart()
  if (t.startsWith('{')) {
    try {
      const code = asRecord(asRecord(JSON.parse(t))?.['metadata'])?.['exit_code']
      if (typeof code === 'number') return code !== 0
    } catch {
      // not JSON: fall through to the text forms
    }
  }
  const m = /^(?:Exit code:|Process exited with code) (-?\d+)\s*$/m.exec(output)
  return m !== null && m[1] !== '0'
}
