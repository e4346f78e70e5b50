import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { MnemoError } from '../../core/errors.js'

// How the event log stores a payload: its JSON text, or that text compressed. The log is the source of truth, so
// every encoding ever written stays readable: a stored BLOB says by its first byte how it was made.

/** Payloads whose JSON is shorter than this many characters are stored as text: compressing them gains little. */
const COMPRESS_PAYLOAD_FROM = 200

/**
 * zlib level of the payload encoding. Measured on 8,101 generated transcript records of the 100k benchmark store
 * (docs/STORAGE.md): with the dictionary, level 1 gives 949 B a record, 4 gives 902, 6 gives 881, at about the
 * same time (setting the dictionary costs more than the level).
 */
const PAYLOAD_LEVEL = 6

/**
 * First byte of a payload compressed with `PAYLOAD_DICTIONARY_V1` (the rest is raw DEFLATE). A raw DEFLATE stream
 * (RFC 1951 §3.2.3) never starts with block type 11 (bits 1–2 of its first byte), so this byte (0b110) never starts
 * one: BLOBs written before the dictionary (raw DEFLATE, no tag) read as before.
 */
const TAG_DICTIONARY_V1 = 0x06

/**
 * The preset dictionary (RFC 1951 §3.2, zlib's deflateSetDictionary) of the payload encoding: the JSON of the records
 * mnemo's capture paths log, emptied of their values — Claude Code transcript lines and hook payloads, Codex CLI
 * rollout lines, Gemini CLI and OpenCode messages. A record's keys, and the values every record repeats, then cost
 * a back-reference instead of their letters: a transcript record shrinks 15% more than without it. Commonest last
 * (DEFLATE codes nearer history with fewer bits). Never change it: stored payloads need it to be read; a new one
 * gets a new tag.
 */
const PAYLOAD_DICTIONARY_V1 = Buffer.from(
  [
    '{"sessionId":"","projectHash":"","startTime":"","lastUpdated":"","messages":[{"id":"","timestamp":"","type":"gemini","content":"","thoughts":[],"tokens":{"input":,"output":,"cached":,"thoughts":,"tool":,"total":},"model":"gemini-"}]}',
    '{"id":"","sessionID":"","messageID":"","type":"tool","callID":"","tool":"","state":{"status":"completed","input":{},"output":"","title":"","metadata":{},"time":{"start":,"end":}}}',
    '{"timestamp":"","type":"session_meta","payload":{"id":"","timestamp":"","cwd":"","originator":"codex_cli_rs","cli_version":"","instructions":null,"git":{"commit_hash":"","branch":"main","repository_url":""}}}',
    '{"timestamp":"","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":,"cached_input_tokens":,"output_tokens":,"reasoning_output_tokens":,"total_tokens":}},"rate_limits":null}}',
    '{"timestamp":"","type":"turn_context","payload":{"cwd":"","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write"},"model":"gpt-5-codex","effort":"medium","summary":"auto"}}',
    '{"timestamp":"","type":"response_item","payload":{"type":"function_call_output","call_id":"call_","output":"{\\"output\\":\\"\\",\\"metadata\\":{\\"exit_code\\":0,\\"duration_seconds\\":}}"}}',
    '{"timestamp":"","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\\"command\\":[\\"bash\\",\\"-lc\\",\\"\\"],\\"workdir\\":\\"\\"}","call_id":"call_"}}',
    '{"timestamp":"","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":""}],"content":null,"encrypted_content":""}}',
    '{"timestamp":"","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":""}]}}',
    '{"timestamp":"","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":""}]}}',
    '{"session_id":"","transcript_path":"/home/.claude/projects/.jsonl","cwd":"","permission_mode":"default","hook_event_name":"SessionStart","source":"startup"}',
    '{"session_id":"","transcript_path":"","cwd":"","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":""}',
    '{"session_id":"","transcript_path":"","cwd":"","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"","tool_input":{"command":"","description":""},"tool_response":{"stdout":"","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_"}',
    '{"type":"summary","summary":"","leafUuid":""}',
    '{"type":"file-history-snapshot","messageId":"","snapshot":{"messageId":"","trackedFileBackups":{},"timestamp":""},"isSnapshotUpdate":false}',
    '"toolUseResult":{"type":"text","file":{"filePath":"","content":"","numLines":,"startLine":1,"totalLines":}}',
    '"toolUseResult":{"filePath":"","oldString":"","newString":"","originalFile":"","structuredPatch":[{"oldStart":,"oldLines":,"newStart":,"newLines":,"lines":[]}],"userModified":false,"replaceAll":false}',
    '"toolUseResult":{"mode":"files_with_matches","filenames":[],"numFiles":}',
    '"toolUseResult":{"stdout":"","stderr":"","interrupted":false,"isImage":false}',
    '{"parentUuid":"","isSidechain":false,"userType":"external","cwd":"/home/","sessionId":"","version":"","gitBranch":"main","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_","type":"tool_result","content":"","is_error":false}]},"uuid":"","timestamp":""}',
    '{"parentUuid":"","isSidechain":false,"userType":"external","cwd":"/home/","sessionId":"","version":"","gitBranch":"main","type":"user","message":{"role":"user","content":""},"uuid":"","timestamp":"","thinkingMetadata":{"level":"high","disabled":false,"triggers":[]}}',
    '{"parentUuid":"","isSidechain":false,"userType":"external","cwd":"/home/","sessionId":"","version":"","gitBranch":"main","message":{"id":"msg_","type":"message","role":"assistant","model":"claude-sonnet-4-5-","content":[{"type":"thinking","thinking":"","signature":""},{"type":"text","text":""},{"type":"tool_use","id":"toolu_","name":"","input":{"file_path":"","old_string":"","new_string":"","pattern":"","path":"","content":"","command":"","description":""}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":,"cache_creation_input_tokens":,"cache_read_input_tokens":,"output_tokens":,"service_tier":"standard"}},"requestId":"req_","type":"assistant","uuid":"","timestamp":"2025-"}',
  ].join(''),
  'utf8',
)

/**
 * An event payload as the log stores it: its JSON text when shorter than `COMPRESS_PAYLOAD_FROM` characters, else a
 * BLOB: `TAG_DICTIONARY_V1`, then the text compressed with raw DEFLATE (RFC 1951, zlib level `PAYLOAD_LEVEL`) over
 * `PAYLOAD_DICTIONARY_V1`. A transcript record shrinks about 3.4× so; `payloadText` reads it back exactly.
 */
export function encodePayload(value: unknown): string | Buffer {
  const text = JSON.stringify(value ?? null)
  if (text.length < COMPRESS_PAYLOAD_FROM) return text
  const body = deflateRawSync(text, { level: PAYLOAD_LEVEL, dictionary: PAYLOAD_DICTIONARY_V1 })
  const stored = Buffer.allocUnsafe(body.length + 1)
  stored[0] = TAG_DICTIONARY_V1
  body.copy(stored, 1)
  return stored
}

/**
 * The JSON text of a stored payload: text as it is; a BLOB by its first byte — `TAG_DICTIONARY_V1` (written by
 * `encodePayload`), or raw DEFLATE without a dictionary (written by mnemo before the dictionary).
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — a BLOB in no encoding this mnemo knows (a newer one's, or damage).
 */
export function payloadText(stored: string | Buffer): string {
  if (typeof stored === 'string') return stored
  const first = stored[0] ?? 0
  if (first === TAG_DICTIONARY_V1) return inflateRawSync(stored.subarray(1), { dictionary: PAYLOAD_DICTIONARY_V1 }).toString('utf8')
  // Block type 11 is no DEFLATE stream: a tag this mnemo does not know.
  if ((first & 0x06) === 0x06)
    throw new MnemoError(
      'STORE_UNAVAILABLE',
      `an event payload is stored in an encoding this mnemo does not know (tag 0x${first.toString(16)})`,
      {
        details: { dialect: 'sqlite', operation: 'read payload' },
        hint: 'a newer mnemo wrote it: upgrade mnemo (npm install mnemo@latest)',
      },
    )
  return inflateRawSync(stored).toString('utf8')
}

/**
 * Tool outputs (observations of kind `tool_result` or `error`) this many characters long or longer are stored
 * compressed in `observations.text`. 9% of the 100k benchmark's observations, 351 B of its 785 B of text per
 * observation, 2.4× smaller so (docs/STORAGE.md); shorter texts, and prompts and messages (which the one-copy rule
 * matches by `text = ?`), stay text, so most documents recall reads need no decode.
 */
const COMPRESS_TEXT_FROM = 3000

/** An observation's text as `observations.text` stores it: see `COMPRESS_TEXT_FROM`; a BLOB is raw DEFLATE (zlib level 1). */
export function encodeObservationText(kind: string, text: string): string | Buffer {
  if (text.length < COMPRESS_TEXT_FROM || (kind !== 'tool_result' && kind !== 'error')) return text
  return deflateRawSync(text, { level: 1 })
}

/** The text of a stored `observations.text` (text, or a BLOB written by `encodeObservationText`). */
export function observationText(stored: string | Buffer): string {
  return typeof stored === 'string' ? stored : inflateRawSync(stored).toString('utf8')
}
