import { invalidInput } from '../core/errors.js'
import { fnv1a64, stableStringify } from '../core/hash.js'
import type { DerivedObservation, EventInput, HookAgent, ProjectRef } from '../core/types.js'
import type { CaptureDerivation, Deriver } from './derivation.js'
import { resolveProjectRoot } from './project.js'
import { sanitizePayload, type Redactor } from './sanitize.js'
import { filesOfToolInput, isOwnServer, isOwnTool, OBSERVATION_CHARS, toolObservationText } from './tool-text.js'
import { capText, jsonSyntaxError } from '../core/text.js'
import { redactSecrets } from './redact.js'
import { agentHookEventNames, CLAUDE_HOOK_EVENTS, toMnemoEvent } from '../core/hook-events.js'
import { userWords } from './agent-wrappers.js'

/**
 * The fields of a Claude Code hook payload mnemo relies on. Every event
 * carries `session_id`, `transcript_path`, `cwd` and `hook_event_name`; the
 * rest depends on the event. Unknown fields are kept.
 */
interface ClaudeHookPayload {
  session_id: string
  cwd?: string
  hook_event_name?: string
  transcript_path?: string
  tool_name?: string
  tool_use_id?: string
  prompt?: string
  [key: string]: unknown
}

/** Field rules: [name, required, max length]. */
const HOOK_FIELDS: readonly [keyof ClaudeHookPayload & string, boolean, number][] = [
  ['session_id', true, 512],
  ['cwd', false, 4096],
  ['hook_event_name', false, 64],
  ['transcript_path', false, 4096],
  ['tool_name', false, 512],
  ['tool_use_id', false, 512],
]

/**
 * Checks a parsed hook payload. Hand-written rather than a zod schema on
 * purpose: this runs in a process an agent starts for every event, and
 * loading zod alone costs ~35 ms of a 150 ms budget (measured on Node 20).
 *
 * @throws {MnemoError} `INVALID_INPUT` — naming the first bad field.
 */
function validateHookPayload(eventName: string, raw: unknown): ClaudeHookPayload {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalidInput('stdin', `hook ${eventName}: stdin must be a JSON object`)
  const rec = raw as Record<string, unknown>
  for (const [field, required, max] of HOOK_FIELDS) {
    const v = rec[field]
    if (v === undefined || v === null) {
      if (required) throw invalidInput(field, `hook ${eventName}: ${field} is missing`)
      continue
    }
    if (typeof v !== 'string') throw invalidInput(field, `hook ${eventName}: ${field} must be a string (got ${typeof v})`)
    if ((required && v.length === 0) || v.length > max)
      throw invalidInput(field, `hook ${eventName}: ${field} must be 1–${max} characters (got ${v.length})`)
  }
  if (rec['prompt'] !== undefined && typeof rec['prompt'] !== 'string')
    throw invalidInput('prompt', `hook ${eventName}: prompt must be a string`)
  return rec as ClaudeHookPayload
}

/**
 * Field names other agents use for what Claude Code's hook payloads call
 * `session_id`, `cwd`, `prompt`, … (Codex and Gemini CLI follow Claude
 * Code's names closely; Cursor uses `conversation_id` and
 * `workspace_roots`). The first present alias wins; the original fields
 * are kept too.
 */
/**
 * Where agents put the final answer of a turn in their Stop-like hook: Claude Code and Codex
 * `last_assistant_message`, Gemini CLI's AfterAgent `prompt_response`, Cursor's afterAgentResponse `text`.
 */
const ANSWER_FIELDS = ['last_assistant_message', 'prompt_response', 'response', 'text'] as const

const FIELD_ALIASES: Readonly<Record<string, readonly string[]>> = {
  session_id: ['session_id', 'sessionId', 'conversation_id', 'conversationId', 'thread_id'],
  cwd: ['cwd', 'workspace_root', 'workspaceRoot'],
  prompt: ['prompt', 'user_prompt', 'userPrompt'],
  tool_name: ['tool_name', 'toolName'],
  tool_input: ['tool_input', 'toolInput', 'tool_args', 'args'],
  tool_response: ['tool_response', 'tool_output', 'toolResponse', 'toolOutput', 'output', 'result'],
  tool_use_id: ['tool_use_id', 'tool_call_id', 'toolCallId', 'call_id'],
  last_assistant_message: ANSWER_FIELDS,
}

/** Maps another agent's hook payload onto Claude Code's field names (see FIELD_ALIASES). */
function normalizeHookPayload(agent: string, raw: unknown): unknown {
  if (agent === 'claude-code' || typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw
  const rec = { ...(raw as Record<string, unknown>) }
  for (const [field, aliases] of Object.entries(FIELD_ALIASES)) {
    if (rec[field] !== undefined) continue
    const from = aliases.find((a) => rec[a] !== undefined && rec[a] !== null)
    if (from !== undefined) rec[field] = rec[from]
  }
  if (rec['cwd'] === undefined && Array.isArray(rec['workspace_roots']) && typeof rec['workspace_roots'][0] === 'string')
    rec['cwd'] = rec['workspace_roots'][0]
  if (
    typeof rec['tool_name'] !== 'string' &&
    rec['tool'] &&
    typeof rec['tool'] === 'object' &&
    typeof (rec['tool'] as { name?: unknown }).name === 'string'
  ) {
    rec['tool_name'] = (rec['tool'] as { name: string }).name
  }
  return rec
}

/**
 * Parsed hook input: either an event to append, or a reason it is deliberately not captured; `note` says, for the
 * caller's error log, that the event name given was not one mnemo knows (see `chooseHookEvent`).
 */
type HookCapture = ({ event: EventInput; sameAs?: string[] } | { skip: string }) & { note?: string }

/** Whether mnemo knows `name` as an event of `agent`: a Claude Code event, or the agent's own name for one. */
function isKnownEvent(agent: HookAgent, name: string): boolean {
  return (CLAUDE_HOOK_EVENTS as readonly string[]).includes(toMnemoEvent(agent, name))
}

/**
 * The event a hook delivery is stored as. The name given on the command line
 * wins when mnemo knows it. When it does not (a typo such as `PostTooluse` is
 * stored but never derived), the payload's own `hook_event_name` is used if
 * mnemo knows that, and a note says so. A name mnemo does not know that the
 * payload confirms is an event of the agent's that mnemo keeps raw (agents add
 * events over time): stored as is, no note. Otherwise the name is stored as is
 * and the note names it, with the known name it is closest to.
 *
 * @param given - The command-line name, already mapped by `toMnemoEvent`.
 */
export function chooseHookEvent(agent: HookAgent, given: string, payloadEvent: unknown): { event: string; note?: string } {
  if (isKnownEvent(agent, given)) return { event: given }
  const fromPayload = typeof payloadEvent === 'string' ? payloadEvent : undefined
  if (fromPayload !== undefined && isKnownEvent(agent, fromPayload)) {
    const event = toMnemoEvent(agent, fromPayload)
    return {
      event,
      note: `unknown hook event ${JSON.stringify(given)} for ${agent}: stored as ${event}, the payload's hook_event_name ${JSON.stringify(fromPayload)} (fix the event name in the hook command)`,
    }
  }
  if (fromPayload === given) return { event: given }
  const near = nearestKnownEvent(agent, given)
  return {
    event: given,
    note: `unknown hook event ${JSON.stringify(given)} for ${agent}: stored as is, not derived into observations${near ? ` (did you mean ${near}?)` : ''}`,
  }
}

/** The known event name (Claude Code's, or the agent's own) within two edits of `name`, case aside; undefined when none is. */
function nearestKnownEvent(agent: HookAgent, name: string): string | undefined {
  const lower = name.toLowerCase()
  let best: { name: string; distance: number } | undefined
  for (const known of [...CLAUDE_HOOK_EVENTS, ...agentHookEventNames(agent)]) {
    const distance = editDistance(lower, known.toLowerCase())
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name: known, distance }
  }
  return best?.name
}

/** Levenshtein distance (short names only). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = row
  }
  return prev[b.length]!
}

/**
 * Turns the stdin of `mnemo hook <eventName> [--agent <agent>]` into an event for the log, for every
 * agent whose hooks run that command: Claude Code (the default), Codex CLI, Gemini CLI and Cursor, and
 * OpenCode through mnemo's plugin. Another agent's payload fields and event names are first mapped
 * onto Claude Code's (`normalizeHookPayload`, `toMnemoEvent`), so one validation and one key scheme
 * serve them all; the stored event carries `agent`.
 *
 * The idempotency key says which event of the agent's session this is, never when it arrived, so a
 * payload delivered twice, retried from the spool, or replayed later (an import of the same session's
 * hooks, a re-run hook script) is stored once:
 * - a tool event: `<agent>:<session>:<event>:<tool_use_id>`;
 * - any other: `<agent>:<session>:<event>:h:<fnv1a64 of the sanitised payload>`. The payload holds
 *   whatever the agent gives to tell a turn from another, and that keeps genuinely repeated words
 *   apart: Claude Code's `prompt_id`, Codex's `turn_id`, Gemini CLI's `timestamp`, Cursor's
 *   `generation_id`. A payload with none of these (older Claude Code) saying the same words in the
 *   same session as an earlier one is the same event: without a position from the agent, a repeat
 *   cannot be told from a replay, and a replay storing a session's prompts again is the worse error.
 * `sameAs` names the keys an older mnemo gave the same delivery (the hash with the second it fired,
 * and the seconds either side), so an upgrade does not store a delivery in flight twice.
 * mnemo's own MCP tool calls are skipped.
 *
 * @param givenEvent - The event named on the command line (an agent's own name is mapped, see toMnemoEvent); wins over
 *   `hook_event_name` unless mnemo does not know it and does know the payload's (see chooseHookEvent; `note` then says so).
 * @param stdin - The raw JSON text the agent wrote to the hook's stdin.
 * @param nowMs - Receipt time, used as the event time (hook payloads have no timestamp); not part of the key.
 * @param options.agent - The agent that ran the hook (`--agent`). Default `claude-code`.
 * @param options.redact - Applied to every string of the payload before it is stored. Default: the secret redactor.
 * @param options.resolveProject - Maps `cwd` to a project. Default: git top-level lookup.
 * @param options.defaultCwd - The folder for a payload without `cwd`. Default `process.cwd()`.
 * @returns The event to append, or `skip` (mnemo's own MCP tool calls), with `note` when the event name was replaced.
 * @throws {MnemoError} `INVALID_INPUT` — stdin is not a JSON object with a `session_id`.
 */
export function captureClaudeHook(
  givenEvent: string,
  stdin: string,
  nowMs: number,
  options: { redact?: Redactor; resolveProject?: (cwd: string) => ProjectRef; defaultCwd?: string; agent?: HookAgent } = {},
): HookCapture {
  const agent = options.agent ?? 'claude-code'
  // An event name is an identifier (agents add events over time, so unknown names are kept); anything else is not an
  // event, and neither is a name a secret detector matches (it would be stored as the event's type and key).
  if (redactSecrets(givenEvent) !== givenEvent)
    throw invalidInput('event', 'hook event name looks like a secret (a token or key): not stored')
  if (!/^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(givenEvent)) {
    // The name itself is not echoed: it may hold anything, a secret included.
    const bad = [...givenEvent].find((c) => !/[A-Za-z0-9_-]/.test(c))
    const got =
      givenEvent.length === 0
        ? 'an empty name'
        : `a ${givenEvent.length}-character name${bad ? ` containing ${JSON.stringify(bad)}` : givenEvent.length > 64 ? '' : ' not starting with a letter'}`
    throw invalidInput(
      'event',
      `hook event name must be letters, digits, _ or -, starting with a letter, at most 64 characters (got ${got})`,
    )
  }
  // `mnemo hook beforeSubmitPrompt --agent cursor` means what connect writes as `mnemo hook UserPromptSubmit --agent cursor`.
  const namedEvent = toMnemoEvent(agent, givenEvent)
  let raw: unknown
  try {
    raw = JSON.parse(stdin)
  } catch (cause) {
    throw invalidInput('stdin', `hook ${namedEvent}: stdin is not valid JSON (${jsonSyntaxError(cause)})`)
  }
  const payload = validateHookPayload(namedEvent, normalizeHookPayload(agent, raw))
  // A name mnemo does not know (a typo) is replaced by the payload's own, when mnemo knows that one.
  const { event: eventName, note } = chooseHookEvent(agent, namedEvent, payload.hook_event_name)
  const noted = note !== undefined ? { note } : {}
  if (payload.tool_name !== undefined && isOwnHookTool(payload)) return { skip: `own tool ${payload.tool_name}`, ...noted }
  const cwd = payload.cwd || options.defaultCwd || process.cwd()
  const project = (options.resolveProject ?? resolveProjectRoot)(cwd)
  const clean = sanitizePayload(payload, options.redact) as ClaudeHookPayload
  const hash = `${agent}:${payload.session_id}:${eventName}:h:${fnv1a64(stableStringify(clean))}`
  const second = Math.floor(nowMs / 1000)
  return {
    // The keys mnemo gave this delivery before keys stopped naming the second it fired.
    ...(payload.tool_use_id === undefined ? { sameAs: [`${hash}:${second - 1}`, `${hash}:${second}`, `${hash}:${second + 1}`] } : {}),
    event: {
      agent,
      format: 'claude-hook',
      type: eventName,
      sessionKey: payload.session_id,
      project,
      ts: nowMs,
      idemKey: payload.tool_use_id !== undefined ? `${agent}:${payload.session_id}:${eventName}:${payload.tool_use_id}` : hash,
      payload: clean,
    },
    ...noted,
  }
}

/** A call of mnemo's own MCP tools: by its name, or by the server the agent says it went to (Gemini's `mcp_context`). */
function isOwnHookTool(payload: ClaudeHookPayload): boolean {
  const mcp = payload['mcp_context']
  const server = mcp && typeof mcp === 'object' ? (mcp as Record<string, unknown>)['server_name'] : undefined
  return (
    isOwnTool(payload.tool_name ?? '', typeof payload['tool_namespace'] === 'string' ? payload['tool_namespace'] : undefined) ||
    isOwnServer(server)
  )
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim().length > 0 ? value : undefined
}

/**
 * Derives observations from a stored Claude Code hook event:
 * UserPromptSubmit → prompt (the user's words only: see `userWords`); PostToolUse → tool (input and result);
 * PostToolUseFailure → error; Stop/SubagentStop with the answer (`last_assistant_message`,
 * Gemini's `prompt_response`, … see ANSWER_FIELDS) → message; SessionEnd ends the session. PreToolUse, SessionStart,
 * PreCompact, Notification and SubagentStart are kept in the log only (the
 * PostToolUse of the same call carries everything PreToolUse has).
 */
export const deriveClaudeHook: Deriver = (event) => {
  const p = (event.payload ?? {}) as Record<string, unknown>
  const observations: DerivedObservation[] = []
  const out: CaptureDerivation = { observations }
  const tool = str(p['tool_name'])
  const toolUseId = str(p['tool_use_id'])
  const cwd = str(p['cwd'])
  switch (event.type) {
    case 'UserPromptSubmit': {
      // What an agent put around the prompt (mnemo's own block, hook output) is not the user's words.
      const given = str(p['prompt'])
      const prompt = given === undefined ? undefined : str(userWords(given))
      if (prompt) {
        // The store titles the session with its first prompt (one rule for every capture path).
        observations.push({ kind: 'prompt', role: 'user', text: capText(prompt, OBSERVATION_CHARS) })
      }
      break
    }
    case 'PostToolUse':
      if (tool)
        observations.push(
          withRef(
            {
              kind: 'tool',
              role: 'assistant',
              tool,
              text: toolObservationText(tool, p['tool_input'], p['tool_response']),
              files: filesOfToolInput(p['tool_input'], cwd),
            },
            toolUseId,
          ),
        )
      break
    case 'PostToolUseFailure':
      if (tool) {
        const error = p['error'] ?? p['tool_response'] ?? 'failed'
        observations.push(
          withRef(
            {
              kind: 'error',
              role: 'assistant',
              tool,
              text: toolObservationText(tool, p['tool_input'], error),
              files: filesOfToolInput(p['tool_input'], cwd),
            },
            toolUseId,
          ),
        )
      }
      break
    case 'Stop':
    case 'SubagentStop': {
      const last = firstStr(p, ANSWER_FIELDS)
      const role = event.type === 'Stop' ? 'assistant' : (str(p['agent_type']) ?? 'subagent')
      if (last) observations.push({ kind: 'message', role, text: capText(last, OBSERVATION_CHARS) })
      break
    }
    case 'SessionEnd':
      out.session = { ended: true }
      break
    default:
      break
  }
  return out
}

function firstStr(p: Record<string, unknown>, fields: readonly string[]): string | undefined {
  for (const f of fields) {
    const v = str(p[f])
    if (v !== undefined) return v
  }
  return undefined
}

function withRef(o: DerivedObservation, ref: string | undefined): DerivedObservation {
  return ref === undefined ? o : { ...o, sourceRef: ref }
}
