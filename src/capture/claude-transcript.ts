import path from 'node:path'
import { fnv1a64, stableStringify } from '../core/hash.js'
import { capText } from '../core/text.js'
import type { DerivedObservation, EventInput, ProjectRef } from '../core/types.js'
import type { CaptureDerivation, Deriver, ParseResult } from './derivation.js'
import { normalizeRoot, refOf, resolveProjectRoot } from './project.js'
import { sanitizePayload } from './sanitize.js'
import { describeToolResult, imageText, filesOfToolInput, isOwnTool, OBSERVATION_CHARS, toolObservationText } from './tool-text.js'
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

/** Claude Code record types mnemo derives from; any other `type` is counted in `unknownTypes` and skipped. */
const KNOWN_TYPES = new Set(['user', 'assistant', 'summary'])

/**
 * Parses one Claude Code session JSONL file (`~/.claude/projects/<slug>/<session>.jsonl`)
 * into events, one per valid `user`, `assistant` or `summary` record.
 *
 * - `sessionKey`: the record's `sessionId`, else the file's most common `sessionId`, else the file stem.
 * - `project`: `options.project`, else the git root of the record's `cwd` (else the first `cwd` in
 *   the file, else the file's folder).
 * - `ts`: the record's `timestamp`, else the previous record's, else the file's first, else 0.
 * - `idemKey`: `claude-code:<sessionKey>:<uuid>`, or `claude-code:<sessionKey>:h:<fnv1a64 of the record>`.
 * - `payload`: the record after dropping mnemo's own MCP tool calls and their results, with
 *   `tool_result` blocks annotated with {@link TOOL_NAME_FIELD}, then `sanitizePayload`d.
 *
 * Bad lines go to `skipped` with their 1-based line number and a reason; other record types
 * (`system`, `file-history-snapshot`, …) are counted in `unknownTypes`. A record left empty
 * by dropping own tool calls is skipped silently. Blank lines are not counted in `read`.
 */
export function parseClaudeTranscript(text: string, options: TranscriptParseOptions): ParseResult {
  const lines = readJsonLines(text)
  const result: ParseResult = { events: [], read: lines.length, skipped: [], unknownTypes: {} }
  const valid: JsonRecord[] = []
  for (const l of lines) {
    if ('error' in l) result.skipped.push({ line: l.line, reason: l.error })
    else if (!KNOWN_TYPES.has(l.type)) result.unknownTypes[l.type] = (result.unknownTypes[l.type] ?? 0) + 1
    else {
      const reason = invalidReason(l.record, l.type)
      if (reason) result.skipped.push({ line: l.line, reason })
      else valid.push(l.record)
    }
  }

  const toolNames = new Map<string, string>()
  const ownIds = new Set<string>()
  const sessionCounts = new Map<string, number>()
  let fileCwd: string | undefined
  for (const record of valid) {
    const sid = str(record['sessionId'])
    if (sid) sessionCounts.set(sid, (sessionCounts.get(sid) ?? 0) + 1)
    fileCwd ??= str(record['cwd'])
    for (const block of contentBlocks(record)) {
      const b = asRecord(block)
      const id = str(b?.['id'])
      const name = str(b?.['name'])
      if (b?.['type'] !== 'tool_use' || !id || !name) continue
      toolNames.set(id, name)
      if (isOwnTool(name)) ownIds.add(id)
    }
  }
  let fileSession = fileStem(options.file)
  let best = 0
  for (const [sid, n] of sessionCounts) if (n > best) [fileSession, best] = [sid, n]

  const projects = new Map<string, ProjectRef>()
  const projectOf = (cwd: string | undefined): ProjectRef => {
    if (options.project) return options.project
    const key = cwd ?? ''
    let ref = projects.get(key)
    if (!ref) {
      ref = cwd ? resolveProjectRoot(cwd) : refOf(normalizeRoot(path.dirname(options.file)))
      projects.set(key, ref)
    }
    return ref
  }

  const times = timeline(valid.map((r) => timestampOf(r['timestamp'])))
  valid.forEach((record, i) => {
    const kept = dropOwnTools(record, ownIds, toolNames)
    if (!kept) return
    const sessionKey = str(record['sessionId']) ?? fileSession
    const uuid = str(record['uuid'])
    const event: EventInput = {
      agent: 'claude-code',
      format: 'claude-transcript',
      type: record['type'] as string,
      sessionKey,
      project: projectOf(str(record['cwd']) ?? fileCwd),
      ts: times[i] ?? 0,
      idemKey: `claude-code:${sessionKey}:${uuid ?? `h:${fnv1a64(stableStringify(record))}`}`,
      payload: sanitizePayload(kept, options.redact),
    }
    result.events.push(event)
  })
  return result
}

function invalidReason(record: JsonRecord, type: string): string | undefined {
  if (type === 'summary') return typeof record['summary'] === 'string' ? undefined : 'summary record without summary text'
  if (!('message' in record)) return `${type} record without message`
  const message = asRecord(record['message'])
  if (!message) return 'message is not an object'
  const content = message['content']
  if (typeof content !== 'string' && !Array.isArray(content)) return `${type} record without message.content`
  return undefined
}

function contentBlocks(record: JsonRecord): unknown[] {
  const content = asRecord(record['message'])?.['content']
  return Array.isArray(content) ? content : []
}

/**
 * The record without mnemo's own tool_use blocks and the tool_result blocks
 * answering them (and its `toolUseResult` when such a result was dropped);
 * undefined when nothing is left. Other tool_result blocks get the tool name.
 */
function dropOwnTools(record: JsonRecord, ownIds: ReadonlySet<string>, toolNames: ReadonlyMap<string, string>): JsonRecord | undefined {
  const message = asRecord(record['message'])
  const content = message?.['content']
  if (!message || !Array.isArray(content)) return record
  let droppedResult = false
  let changed = false
  const kept: unknown[] = []
  for (const block of content) {
    const b = asRecord(block)
    const type = b?.['type']
    const ref = str(type === 'tool_use' ? b?.['id'] : type === 'tool_result' ? b?.['tool_use_id'] : undefined)
    if (b && ref && ownIds.has(ref)) {
      changed = true
      if (type === 'tool_result') droppedResult = true
      continue
    }
    const name = ref && type === 'tool_result' ? toolNames.get(ref) : undefined
    if (b && name) {
      kept.push({ ...b, [TOOL_NAME_FIELD]: name })
      changed = true
    } else kept.push(block)
  }
  if (!changed) return record
  if (kept.length === 0 && content.length > 0) return undefined
  const out: JsonRecord = { ...record, message: { ...message, content: kept } }
  if (droppedResult) delete out['toolUseResult']
  return out
}

/** Texts Claude Code writes into user messages itself: the local-command caveat and slash-command wrappers. */
const SYSTEM_TEXT =
  /^\s*(?:Caveat: The messages below were generated by the user while running local commands|<(?:local-command-(?:stdout|stderr|caveat)|command-(?:name|message|args|contents)|system-reminder)>)/

const capped = (text: string): string => capText(text, OBSERVATION_CHARS)

/**
 * Derives observations from one stored Claude Code transcript record:
 * - `user`: each text (string content, text blocks, plain strings in the content array) →
 *   `prompt`/`user`, or `message`/`system` for Claude Code's own wrappers (local-command caveat,
 *   `<local-command-stdout>`, `<command-name>`, `isMeta` records); each `tool_result` →
 *   `tool_result` (`error` when `is_error`), role `tool`, `sourceRef` = `tool_use_id`.
 * - `assistant`: text → `message`/`assistant`; `tool_use` → `tool` with input text, files and
 *   `sourceRef` = block id; thinking blocks → nothing.
 * - `summary`: → `summary`/`assistant` (the session title is left alone).
 * Image blocks give their stored placeholder (`[image: image/png, 12,000 B]`, else `[image]`) when the record says nothing else. Texts are capped at
 * `OBSERVATION_CHARS`. Never throws: shapes it does not know derive nothing.
 */
export const deriveClaudeTranscript: Deriver = (event) => {
  const record = asRecord(event.payload)
  const out: CaptureDerivation = { observations: [] }
  if (!record) return out
  const type = str(record['type']) ?? event.type
  if (type === 'summary') {
    const summary = str(record['summary'])?.trim()
    if (summary) out.observations.push({ kind: 'summary', role: 'assistant', text: capped(summary) })
    return out
  }
  const content = asRecord(record['message'])?.['content']
  const blocks: unknown[] = typeof content === 'string' ? [content] : Array.isArray(content) ? content : []
  if (type === 'user') out.observations = deriveUser(blocks, record['isMeta'] === true)
  else if (type === 'assistant') out.observations = deriveAssistant(blocks, str(record['cwd']))
  return out
}

function textOf(block: unknown): string | undefined {
  if (typeof block === 'string') return block
  const b = asRecord(block)
  return b?.['type'] === 'text' && typeof b['text'] === 'string' ? b['text'] : undefined
}

function deriveUser(blocks: unknown[], isMeta: boolean): DerivedObservation[] {
  const obs: DerivedObservation[] = []
  const images: JsonRecord[] = []
  for (const block of blocks) {
    const text = textOf(block)
    if (text !== undefined) {
      if (text.trim().length === 0) continue
      const system = isMeta || SYSTEM_TEXT.test(text)
      obs.push(system ? { kind: 'message', role: 'system', text: capped(text) } : { kind: 'prompt', role: 'user', text: capped(text) })
      continue
    }
    const b = asRecord(block)
    if (b?.['type'] === 'image') images.push(b)
    else if (b?.['type'] === 'tool_result') obs.push(toolResultObservation(b))
  }
  if (obs.length === 0 && images.length > 0) obs.push({ kind: 'prompt', role: 'user', text: images.map(imageText).join(' ') })
  return obs
}

function toolResultObservation(block: JsonRecord): DerivedObservation {
  const text = describeToolResult(block['content']) || '(no output)'
  const tool = str(block[TOOL_NAME_FIELD])
  const ref = str(block['tool_use_id'])
  return {
    kind: block['is_error'] === true ? 'error' : 'tool_result',
    role: 'tool',
    text: capped(text),
    ...(tool ? { tool } : {}),
    ...(ref ? { sourceRef: ref } : {}),
  }
}

function deriveAssistant(blocks: unknown[], cwd: string | undefined): DerivedObservation[] {
  const obs: DerivedObservation[] = []
  const images: JsonRecord[] = []
  for (const block of blocks) {
    const text = textOf(block)
    if (text !== undefined) {
      if (text.trim().length > 0) obs.push({ kind: 'message', role: 'assistant', text: capped(text) })
      continue
    }
    const b = asRecord(block)
    if (b?.['type'] === 'image') images.push(b)
    if (b?.['type'] !== 'tool_use') continue
    const name = str(b['name'])
    if (!name || isOwnTool(name)) continue
    const ref = str(b['id'])
    obs.push({
      kind: 'tool',
      role: 'assistant',
      tool: name,
      text: toolObservationText(name, b['input']),
      files: filesOfToolInput(b['input'], cwd),
      ...(ref ? { sourceRef: ref } : {}),
    })
  }
  if (obs.length === 0 && images.length > 0) obs.push({ kind: 'message', role: 'assistant', text: images.map(imageText).join(' ') })
  return obs
}
