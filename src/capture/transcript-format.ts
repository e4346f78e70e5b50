import path from 'node:path'
import type { ProjectRef } from '../core/types.js'
import type { Redactor } from './sanitize.js'

/** Options shared by the transcript parsers (Claude Code session JSONL, Codex rollout JSONL). */
export interface TranscriptParseOptions {
  /** Path of the file the text came from: the fallback session key (basename) and project (dirname). */
  file: string
  /** Applied to every string of every payload before it is stored. Default: no redaction. */
  redact?: Redactor
  /** Project of every event; default: resolved from the records' `cwd`. */
  project?: ProjectRef
}

/**
 * Field the parsers add to a stored tool result (a Claude `tool_result` block, a Codex call
 * output payload): the name of the call it answers, when that call is in the same file.
 * Derivers see one event at a time, so this is how a result knows its tool.
 */
export const TOOL_NAME_FIELD = '_mnemo_tool'

/** A JSON object, as read from one JSONL line. */
export type JsonRecord = Record<string, unknown>

/** One non-blank JSONL line: a record with a string `type`, or why it is not one. */
type JsonLine = { line: number; record: JsonRecord; type: string } | { line: number; error: string }

/** The plain object `value` is, or undefined (arrays and null are not objects here). */
export function asRecord(value: unknown): JsonRecord | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonRecord) : undefined
}

/** `value` when it is a non-empty string, else undefined. */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

/**
 * Splits JSONL text into its non-blank lines (1-based line numbers; CRLF and
 * a leading BOM tolerated) and parses each. A line that is not JSON, not a
 * JSON object, or has no string `type` comes back with an error reason
 * (`invalid JSON`, `invalid JSON (truncated last line)`, `not a JSON object`,
 * `missing "type"`). Blank lines are not returned.
 */
export function readJsonLines(text: string): JsonLine[] {
  const raw = text.split('\n')
  const endsClean = text.endsWith('\n')
  let last = raw.length - 1
  while (last >= 0 && raw[last]!.trim().length === 0) last--
  const out: JsonLine[] = []
  for (let i = 0; i <= last; i++) {
    let source = raw[i]!
    if (i === 0 && source.charCodeAt(0) === 0xfeff) source = source.slice(1)
    if (source.trim().length === 0) continue
    const line = i + 1
    let value: unknown
    try {
      value = JSON.parse(source)
    } catch {
      out.push({ line, error: i === last && !endsClean ? 'invalid JSON (truncated last line)' : 'invalid JSON' })
      continue
    }
    const record = asRecord(value)
    if (!record) out.push({ line, error: 'not a JSON object' })
    else if (typeof record['type'] !== 'string' || record['type'].length === 0) out.push({ line, error: 'missing "type"' })
    else out.push({ line, record, type: record['type'] })
  }
  return out
}

/** 9999-12-31T23:59:59.999Z: the latest record time accepted (later ones break calendar arithmetic at the end of Date's range). */
const MAX_TIMESTAMP = 253_402_300_799_999

/** Epoch ms of an ISO timestamp string (or an epoch-ms number) from 1970 to 9999; undefined when missing, invalid or out of that range. */
export function timestampOf(value: unknown): number | undefined {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN
  return Number.isFinite(ms) && ms >= 0 && ms <= MAX_TIMESTAMP ? ms : undefined
}

/**
 * Event times for records in file order: a record's own timestamp, else the
 * previous timestamped record's, else the first timestamp in the file, else 0.
 */
export function timeline(timestamps: readonly (number | undefined)[]): number[] {
  const first = timestamps.find((t) => t !== undefined) ?? 0
  let previous: number | undefined
  return timestamps.map((t) => {
    if (t !== undefined) previous = t
    return t ?? previous ?? first
  })
}

/** The file name without folder and extension: the fallback session key. */
export function fileStem(file: string): string {
  return path.basename(file, path.extname(file)) || file
}

const CLAUDE_TYPES = new Set(['user', 'assistant', 'summary', 'system', 'file-history-snapshot', 'queue-operation'])
const CODEX_TYPES = new Set(['session_meta', 'turn_context', 'event_msg', 'response_item', 'compacted'])
const SNIFF_LINES = 20

/**
 * Guesses which agent wrote a session JSONL text from its first 20 parseable
 * JSON-object lines: Codex rollout records are `{timestamp, type, payload}`
 * with `session_meta`/`turn_context`/`event_msg`/`response_item` types;
 * Claude Code records have `user`/`assistant`/`summary`/`system`/… types or
 * carry `sessionId`/`uuid`/`message`. The format with more votes wins;
 * undefined when neither gets any or they tie. Only the head of `text` is read.
 */
export function detectTranscriptFormat(text: string): 'claude-code' | 'codex' | undefined {
  let claude = 0
  let codex = 0
  let seen = 0
  let start = 0
  while (seen < SNIFF_LINES && start < text.length) {
    let end = text.indexOf('\n', start)
    if (end < 0) end = text.length
    const line = text
      .slice(start, end)
      .trim()
      .replace(/^\uFEFF/, '')
    start = end + 1
    if (line.length === 0 || line[0] !== '{') continue
    let record: JsonRecord | undefined
    try {
      record = asRecord(JSON.parse(line))
    } catch {
      continue
    }
    if (!record) continue
    seen++
    const type = record['type']
    if (typeof type === 'string' && CODEX_TYPES.has(type) && asRecord(record['payload'])) codex++
    else if (typeof type === 'string' && CLAUDE_TYPES.has(type)) claude++
    else if ('sessionId' in record || 'uuid' in record || asRecord(record['message'])) claude++
  }
  if (claude === codex) return undefined
  return claude > codex ? 'claude-code' : 'codex'
}
