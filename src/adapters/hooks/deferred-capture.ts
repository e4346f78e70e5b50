import { toMnemoEvent } from '../../core/hook-events.js'
import { toHookAgent } from '../../core/types.js'
import { resolveConfig, type MnemoEnv } from '../../config/config.js'
import { redactSecrets } from '../../engine/capture-rules.js'
import { injectionRequest } from '../../engine/prompt-recall.js'
import { Spool } from '../../runtime/spool.js'
import { buildOf, serveKeptContext } from '../../runtime/context-cache.js'
import { fileURLToPath } from 'node:url'
import { MAX_HOOK_STDIN_BYTES, readStdin, STDIN_TIMEOUT_MS, type StdinRead } from './read-stdin.js'

/** The mnemo events (after each agent's names are mapped, `toMnemoEvent`) whose capture may be deferred. */
const DEFERRABLE_EVENTS = new Set(['PreToolUse', 'PostToolUse'])

/** What the deferred path read from stdin, handed to the full hook when it could not defer: the text, or why reading failed. */
export type StdinOutcome = { ok: true; read: StdinRead } | { ok: false; error: unknown; partial: string }

/** What `deferCapture` did: spooled the event (the hook is done), or left it to the full hook with what it read. */
export type DeferOutcome = { deferred: true; file: string } | { deferred: false; stdin: StdinOutcome }

/**
 * Deferred capture: the hook of a tool event that has nothing to print stores nothing itself. It reads the payload,
 * redacts its secrets and writes it to the spool (one file, temp then rename: `Spool.put`), and the next process that
 * opens the store drains it — the next prompt, file hint, Stop or SessionStart hook, any CLI command, the MCP server
 * before each request, `mnemo serve` before each API request. Such a hook loads neither the engine nor SQLite: about
 * 1.5× a bare `node -e 0` in CPU instead of 3.5× (docs/STARTUP.md), and tool events are most of a session's events.
 *
 * Deferred only when all of these hold, else the full hook (`runHook`) runs with what was read (`stdin`):
 * local mode (no `MNEMO_SERVER_URL`), valid settings, a known agent, a tool event (`PreToolUse`, `PostToolUse` after
 * the agent's names are mapped; a name mnemo knows, so the payload's `hook_event_name` cannot change it), a payload that
 * is a JSON object, no string cut for size, and nothing to inject (per-prompt recall off, or
 * `injectionRequest` asks for nothing: no channel at this event, or no file named). A spool that cannot be written
 * hands over too (the full hook then stores the event itself, or keeps it elsewhere).
 *
 * The spooled event is stored exactly as the full hook would have stored it: the drain runs the same `captureHook`
 * on the same (redacted) payload with the time the hook fired (`spooledAt`), the agent and `MNEMO_USER`.
 *
 * A SessionStart (given `io.stdout`) is printed from the context block kept beside the store when that block is still
 * the one the full hook would build, and spooled with what it showed (`serveKeptContext`, runtime/context-cache.ts);
 * else it goes to the full hook like any other event.
 *
 * @param eventName - The event named on the command line (`mnemo hook <event>`).
 * @param agentName - `--agent`, default `claude-code`.
 * @param io.now - Epoch ms clock (the event's time). Default `Date.now`.
 * @param io.stdout - Where a kept SessionStart block is printed; without it a SessionStart always goes to the full hook.
 */
export async function deferCapture(
  eventName: string,
  agentName: string,
  io: { stdin: NodeJS.ReadableStream; env: MnemoEnv; cwd: string; now?: () => number; stdout?: { write(text: string): unknown } },
): Promise<DeferOutcome> {
  const firedAt = (io.now ?? Date.now)()
  let stdin: StdinOutcome
  let partial = ''
  try {
    stdin = {
      ok: true,
      read: await readStdin(io.stdin, { timeoutMs: STDIN_TIMEOUT_MS, maxBytes: MAX_HOOK_STDIN_BYTES }, (p) => (partial = p)),
    }
  } catch (error) {
    return { deferred: false, stdin: { ok: false, error, partial } }
  }
  const handOver: DeferOutcome = { deferred: false, stdin }
  if (io.stdout !== undefined && eventName === 'SessionStart') {
    try {
      const file = serveKeptContext(eventName, agentName, stdin.read, { ...io, stdout: io.stdout, build: hookBuild(), firedAt })
      return file === undefined ? handOver : { deferred: true, file }
    } catch {
      // Anything unexpected: the full hook builds the block.
      return handOver
    }
  }
  try {
    const file = spoolIfDeferrable(eventName, agentName, stdin.read, io, firedAt)
    return file === undefined ? handOver : { deferred: true, file }
  } catch {
    // A spool that cannot be written (or any surprise): the full hook stores the event itself, or keeps it elsewhere.
    return handOver
  }
}

/** Spools the event when it may be deferred (see `deferCapture`) and returns the spool file's name; else undefined. */
function spoolIfDeferrable(
  eventName: string,
  agentName: string,
  read: StdinRead,
  io: { env: MnemoEnv; cwd: string },
  firedAt: number,
): string | undefined {
  const agent = toHookAgent(agentName)
  const event = toMnemoEvent(agent, eventName)
  if (io.env['MNEMO_SERVER_URL'] || agent !== agentName || !DEFERRABLE_EVENTS.has(event) || read.cutStrings > 0) return undefined
  // A bad setting or a payload that is no JSON throws: the full hook logs it and keeps the input where it belongs.
  const config = resolveConfig(io.env)
  const payload: unknown = JSON.parse(read.text)
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined
  if (config.promptRecallTokens !== undefined && injectionRequest(agent, event, payload) !== undefined) return undefined
  const user = io.env['MNEMO_USER'] ? { user: io.env['MNEMO_USER'] } : {}
  // Secrets never rest on disk, not even in the spool (redaction keeps JSON parseable).
  return new Spool(config.spoolDir).put({
    event: eventName,
    stdin: redactSecrets(read.text),
    cwd: io.cwd,
    spooledAt: firedAt,
    agent,
    ...user,
  })
}

/**
 * This mnemo's build, as a kept context block records it (`buildOf` of the entry point, main.js), so a block kept by
 * another build is never shown.
 */
export function hookBuild(): string {
  return buildOf(fileURLToPath(new URL('../cli/main.js', import.meta.url)))
}
