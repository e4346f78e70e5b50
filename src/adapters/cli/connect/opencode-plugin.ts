/**
 * The OpenCode plugin `mnemo connect opencode` writes: a small ES module
 * OpenCode loads in-process from `<config dir>/plugins/` (OpenCode 1.x scans
 * `{plugin,plugins}/*.{ts,js}` in each config folder and calls every
 * exported function with `{ directory, worktree, … }`, using the returned
 * hooks). It turns OpenCode's plugin hooks into the hook payloads mnemo reads
 * from the other agents (Claude Code field names) and runs `mnemo hook
 * <Event> --agent opencode` with each on stdin, one process per event, in
 * order per session, as the other agents' command hooks do:
 *
 * | OpenCode hook | mnemo event | payload |
 * | --- | --- | --- |
 * | first sight of a session (`session.created`, or its first prompt) | SessionStart | `source: "startup"` |
 * | `chat.message` (the user's message) | UserPromptSubmit | `prompt`: its text parts |
 * | `tool.execute.before` | PreToolUse | `tool_name`, `tool_input`, `tool_use_id` (the call id) |
 * | `tool.execute.after` | PostToolUse | the same plus `tool_response` (the tool's output text) |
 * | `session.idle` (the turn is over) | Stop | `last_assistant_message`: the last assistant text part |
 * | `session.deleted` | SessionEnd | |
 *
 * SessionStart's output (`hookSpecificOutput.additionalContext`, mnemo's
 * context block) is added to the system prompt of that session's model
 * calls through `experimental.chat.system.transform`, the hook OpenCode 1.x
 * gives plugins for that. UserPromptSubmit's output (per-prompt recall and
 * corrections) joins the user's message as a synthetic text part pushed onto
 * `chat.message`'s `output.parts` (OpenCode 1.x stores those parts with the
 * message and sends them to the model, so the system prompt, and the prompt
 * cache behind it, stays as it was); PostToolUse's (file hints) is appended to
 * `tool.execute.after`'s `output.output`, the tool result the model reads. Stop and SessionEnd start detached once the
 * session's earlier hooks are done, without waiting: OpenCode does not wait
 * for its event handlers before it exits. Failures never reach OpenCode: a hook that cannot
 * start, fails or outlives its 15 s timeout is dropped (mnemo itself spools
 * what it could not store). Paths are fixed when connect writes the file;
 * `mnemo connect opencode` rewrites it, `mnemo disconnect opencode` removes
 * it.
 */
import type { ResolvedCommand } from './agent-command.js'

/** The first line of every plugin mnemo writes; disconnect and doctor recognise the file by it. */
export const OPENCODE_PLUGIN_MARKER = '// mnemo OpenCode plugin: written by `mnemo connect opencode`'

/** The plugin's file name inside `<config dir>/plugins/`. */
export const OPENCODE_PLUGIN_FILE = 'mnemo.js'

/** True when a file's text is a plugin mnemo wrote. */
export const isMnemoOpenCodePlugin = (text: string | undefined): boolean => text?.startsWith(OPENCODE_PLUGIN_MARKER) === true

/**
 * The plugin's source for one install: `cmd`'s node binary, CLI script and
 * MNEMO_HOME (when set) written in as string literals. Deterministic: the
 * same command gives the same bytes, so a second connect changes nothing.
 */
export function openCodePluginSource(cmd: ResolvedCommand): string {
  const env = cmd.mnemoHome === undefined ? {} : { MNEMO_HOME: cmd.mnemoHome }
  return `${OPENCODE_PLUGIN_MARKER}; \`mnemo disconnect opencode\` removes it.
// It captures this OpenCode's sessions into mnemo and gives each new session mnemo's context block.
// Do not edit: connect rewrites this file.
import { spawn } from 'node:child_process'

const NODE = ${JSON.stringify(cmd.nodePath)}
const CLI = ${JSON.stringify(cmd.cliPath)}
const ENV = ${JSON.stringify(env)}
const TIMEOUT_MS = 15000

/**
 * Starts \`mnemo hook <event> --agent opencode\` detached, payload on stdin, and does not wait: for the
 * turn's last events, which OpenCode does not wait for before it exits (\`opencode run\`).
 */
function startHook(event, payload) {
  try {
    const child = spawn(NODE, [CLI, 'hook', event, '--agent', 'opencode'], { env: { ...process.env, ...ENV }, stdio: ['pipe', 'ignore', 'ignore'], detached: true })
    child.on('error', () => {})
    child.stdin.on('error', () => {})
    child.stdin.end(JSON.stringify(payload))
    child.unref()
  } catch {}
}

/** Runs \`mnemo hook <event> --agent opencode\` with the payload on stdin; resolves with its stdout ('' on any failure). */
function runHook(event, payload) {
  return new Promise((resolve) => {
    let out = ''
    let child
    try {
      child = spawn(NODE, [CLI, 'hook', event, '--agent', 'opencode'], { env: { ...process.env, ...ENV }, stdio: ['pipe', 'pipe', 'ignore'] })
    } catch {
      return resolve('')
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS)
    child.on('error', () => { clearTimeout(timer); resolve('') })
    child.stdout.on('data', (d) => { out += d })
    child.on('close', () => { clearTimeout(timer); resolve(out) })
    child.stdin.on('error', () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/**
 * A new part id as OpenCode writes them (\`prt_\` + 12 hex digits of ms × 4096 + counter, low 48 bits, + 14 base62
 * characters), after every id in \`parts\`: OpenCode orders a message's parts by id, and mnemo's block follows the user's words.
 */
function partIdAfter(parts) {
  let t = (BigInt(Date.now()) * 4096n + 4095n) & 0xffffffffffffn
  for (const p of parts) {
    const m = /^prt_([0-9a-f]{12})/.exec(typeof p?.id === 'string' ? p.id : '')
    if (m && BigInt('0x' + m[1]) >= t) t = BigInt('0x' + m[1]) + 1n
  }
  let tail = ''
  for (let i = 0; i < 14; i++) tail += B62[Math.floor(Math.random() * 62)]
  return 'prt_' + t.toString(16).padStart(12, '0').slice(-12) + tail
}

const contextOf = (stdout) => {
  try {
    const ctx = JSON.parse(stdout)?.hookSpecificOutput?.additionalContext
    return typeof ctx === 'string' && ctx !== '' ? ctx : undefined
  } catch {
    return undefined
  }
}

export const MnemoPlugin = async ({ directory, worktree }) => {
  const cwd = directory || worktree || process.cwd()
  /** sessionID -> { chain: Promise (hooks run in order), context: Promise<string|undefined>, last: string } */
  const sessions = new Map()
  /** messageID -> role, from message.updated */
  const roles = new Map()

  const session = (id) => {
    let s = sessions.get(id)
    if (s === undefined) {
      s = { chain: Promise.resolve(), context: undefined, last: '', ended: false }
      sessions.set(id, s)
      const started = send(s, id, 'SessionStart', { source: 'startup' })
      s.context = started.then(contextOf)
    }
    return s
  }
  function send(s, id, event, fields) {
    const payload = { session_id: id, cwd, hook_event_name: event, ...fields }
    const run = s.chain.then(() => runHook(event, payload))
    s.chain = run.then(() => undefined, () => undefined)
    return run
  }

  return {
    event: async ({ event }) => {
      const p = event?.properties ?? {}
      if (event?.type === 'session.created' && typeof p.info?.id === 'string') session(p.info.id)
      else if (event?.type === 'message.updated' && typeof p.info?.id === 'string') roles.set(p.info.id, p.info.role)
      else if (event?.type === 'message.part.updated' && p.part?.type === 'text' && roles.get(p.part.messageID) === 'assistant' && typeof p.part.text === 'string' && p.part.text !== '') {
        session(p.part.sessionID).last = p.part.text
      } else if (event?.type === 'session.idle' && typeof p.sessionID === 'string') {
        const s = session(p.sessionID)
        await s.chain
        startHook('Stop', { session_id: p.sessionID, cwd, hook_event_name: 'Stop', ...(s.last === '' ? {} : { last_assistant_message: s.last }) })
      } else if (event?.type === 'session.deleted' && typeof p.info?.id === 'string' && sessions.has(p.info.id)) {
        await session(p.info.id).chain
        startHook('SessionEnd', { session_id: p.info.id, cwd, hook_event_name: 'SessionEnd', reason: 'deleted' })
        sessions.delete(p.info.id)
      }
    },
    'chat.message': async (input, output) => {
      const text = (output?.parts ?? []).filter((x) => x?.type === 'text' && !x.synthetic && typeof x.text === 'string').map((x) => x.text).join('\\n')
      if (typeof input?.sessionID !== 'string' || text === '') return
      const recall = contextOf(await send(session(input.sessionID), input.sessionID, 'UserPromptSubmit', { prompt: text }))
      // mnemo's per-prompt block joins the user's message as a synthetic text part: OpenCode stores the parts this hook
      // leaves in output.parts and sends them to the model with the message (the TUI does not show synthetic parts).
      if (recall !== undefined && Array.isArray(output?.parts)) {
        const messageID = output.message?.id ?? output.parts.find((x) => typeof x?.messageID === 'string')?.messageID
        output.parts.push({ id: partIdAfter(output.parts), messageID, sessionID: input.sessionID, type: 'text', text: recall, synthetic: true })
      }
    },
    'tool.execute.before': async (input, output) => {
      if (typeof input?.sessionID !== 'string') return
      await send(session(input.sessionID), input.sessionID, 'PreToolUse', { tool_name: input.tool, tool_input: output?.args ?? {}, tool_use_id: input.callID })
    },
    'tool.execute.after': async (input, output) => {
      if (typeof input?.sessionID !== 'string') return
      const hints = contextOf(await send(session(input.sessionID), input.sessionID, 'PostToolUse', { tool_name: input.tool, tool_input: input.args ?? {}, tool_use_id: input.callID, tool_response: typeof output?.output === 'string' ? output.output : JSON.stringify(output?.output ?? null) }))
      // File hints follow the tool's output: output.output is the tool result the model reads next.
      if (hints !== undefined && typeof output?.output === 'string') output.output = output.output + '\\n\\n' + hints
    },
    'experimental.chat.system.transform': async (input, output) => {
      if (typeof input?.sessionID !== 'string' || !Array.isArray(output?.system)) return
      const context = await session(input.sessionID).context
      if (context !== undefined && !output.system.includes(context)) output.system.push(context)
    },
  }
}
`
}
