import { createRequire } from 'node:module'
import { MnemoError } from '../../core/errors.js'
import { jsonSyntaxError } from '../../core/text.js'
import { PRE_REDACTION_CHARS, redactSecrets, sanitizePayload } from '../../engine/capture-rules.js'
import { HOOK_AGENTS, toHookAgent, type HookAgent } from '../../core/types.js'
import { toMnemoEvent } from '../../core/hook-events.js'
import { injectionRequest } from '../../engine/prompt-recall.js'

export { toHookAgent }
import { openMnemo, type OpenedMnemo } from '../../runtime/open-mnemo.js'
import { ErrorLog } from '../../runtime/error-log.js'
import { Spool } from '../../runtime/spool.js'
import { dataDirError } from '../../runtime/data-dir.js'
import { resolveConfig, type MnemoEnv } from '../../config/config.js'
import {
  markUnreachable,
  recentlyUnreachable,
  REMOTE_BACKOFF_MS,
  REMOTE_BUDGET_MS,
  remoteFetch,
  remoteServer,
  settingProblem,
  type RemoteServer,
} from '../../runtime/remote-server.js'
import { MAX_HOOK_STDIN_BYTES, readStdin, STDIN_TIMEOUT_MS, type StdinRead } from './read-stdin.js'

export { MAX_HOOK_STDIN_BYTES, STDIN_TIMEOUT_MS }
import { hookBuild, type StdinOutcome } from './deferred-capture.js'
import { contextSettings, keepContext } from '../../runtime/context-cache.js'
import { resolveProjectRoot } from '../../engine/project-root.js'
import path from 'node:path'

/** node:crypto, loaded on first use: requiring it costs ~2.7 ms CPU of a hook's start-up, and most hooks never hash. */
const nodeCrypto = (): typeof import('node:crypto') => createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')

/** A hook gives up and spools its event after this long, ms (Claude Code must never wait on memory). */
export const HOOK_DEADLINE_MS = 2000
/** Lock wait for the hook's write, ms; leaves room under the deadline to spool. */
export const HOOK_BUSY_TIMEOUT_MS = 1000

/** Time kept back from the deadline to write the spool file, ms. */
const SPOOL_MARGIN_MS = 150

/** Events whose hook prints the context block. */
const CONTEXT_EVENTS = new Set(['SessionStart', 'PreCompact'])
/**
 * Events (mnemo's names) after which the hook keeps the project's context block for its next SessionStart: the end of
 * a session. Not Stop, the end of each turn: building the block there costs every turn ~30 ms CPU at 100k observations
 * (docs/STARTUP.md), for one SessionStart later.
 */
const KEEPING_EVENTS = new Set(['SessionEnd'])
/** Events whose hook may print per-prompt recall or file hints (`MNEMO_PROMPT_RECALL`; see `MnemoEngine.hookInjection`). */
const PROMPT_EVENTS = new Set(['UserPromptSubmit', 'PreToolUse', 'PostToolUse'])

export interface HookIo {
  stdin: NodeJS.ReadableStream
  stdout: { write(text: string): unknown }
  env: MnemoEnv
  cwd: string
  /** Ends the process; the runner calls it exactly once, always with 0. */
  exit: (code: 0) => void
  now?: () => number
  /** Largest payload kept as it is, bytes. Default: `MAX_HOOK_STDIN_BYTES` (tests set less). */
  maxStdinBytes?: number
  /** Team mode: what the hook may spend on the server, ms (see `REMOTE_BUDGET_MS`, the default; tests set less). */
  remoteBudgetMs?: { capture: number; context: number; inject?: number; ack?: number }
  /** Gets one line when the event could not be kept in the data directory (kept elsewhere, or lost). Default: `process.stderr`. */
  stderr?: { write(text: string): unknown }
  /** Stdin as `deferCapture` read it already (it could not defer the event): used instead of reading `stdin`. */
  stdinRead?: StdinOutcome
}

/**
 * Runs `mnemo hook <eventName>` as an agent calls it: reads the payload on
 * stdin, drains the spool, appends the event to the store, and for
 * SessionStart and PreCompact prints the context block. Exits 0 whatever
 * happens: on any failure, or when `HOOK_DEADLINE_MS` passes, the raw input
 * is written to the spool (the next run stores it) and the failure to the
 * error log that `mnemo status` shows.
 *
 * Output: SessionStart prints Claude Code's JSON form
 * `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":…}}`;
 * PreCompact prints the block as plain text.
 */
export async function runHook(
  givenEventName: string,
  io: HookIo,
  givenAgentName: HookAgent | (string & {}) = 'claude-code',
): Promise<void> {
  const now = io.now ?? Date.now
  // When the hook fired: the event's time wherever it ends up (stored now, spooled, sent to a server, retried), so a
  // retry keeps the idempotency key of a payload without an id (it names the second it fired).
  const firedAt = now()
  // Command-line words are logged and spooled: a secret pasted into one is redacted like any payload (and the
  // redacted name is then no identifier, so the event is refused rather than stored under it).
  const eventName = redactSecrets(givenEventName)
  const agentName = redactSecrets(givenAgentName)
  const agent = toHookAgent(agentName)
  let finished = false
  let config: ReturnType<typeof resolveConfig> | undefined
  // Set when the environment's settings are bad: the local store is then not opened (the event is spooled).
  let configError: unknown
  try {
    config = resolveConfig(io.env)
  } catch (error) {
    configError = error
    // A bad setting must not cost the event: spool it where MNEMO_HOME points (if usable), else the default home.
    try {
      config = resolveConfig({ HOME: io.env['HOME'], MNEMO_HOME: io.env['MNEMO_HOME'] })
    } catch {
      config = resolveConfig({ HOME: io.env['HOME'] })
    }
  }
  const spool = new Spool(config.spoolDir)
  const errors = new ErrorLog(config.errorLogPath)
  // Whose event this is, as set even when the setting is malformed: a spooled event never turns into a shared one
  // (a malformed name is refused when the spool is drained, and the event kept in spool/bad).
  const user = io.env['MNEMO_USER'] ? { user: io.env['MNEMO_USER'] } : {}
  const remote = remoteServer(io.env, config.home)
  // In team mode the token decides whose an event is: a spooled event records which token it was for (a digest
  // prefix, never the token), and a later hook sends it only with that token — never with another member's, even when
  // the server refused it (a revoked or mistyped token): it then waits in the spool, counted by `mnemo status`.
  const tokenId = remote?.token ? nodeCrypto().createHash('sha256').update(remote.token).digest('hex').slice(0, 16) : undefined
  // A team-mode event without a token is still the server's to take ('none'): it never lands in the local store.
  const owner = { ...user, ...(remote ? { tokenId: tokenId ?? 'none' } : {}) }
  // Under agent isolation an unknown agent cannot be filed under another agent's memory, nor be given its context.
  const unknownUnderIsolation = agent !== agentName && config.agentScope === 'own'
  if (agent !== agentName && !unknownUnderIsolation) {
    // The event is still stored (as Claude Code's field names), but the hook command line needs fixing.
    errors.append({
      at: new Date(now()).toISOString(),
      where: `hook ${eventName}`,
      code: 'INVALID_INPUT',
      message: `unknown --agent ${JSON.stringify(agentName)} (one of ${HOOK_AGENTS.join(', ')}); read as claude-code`,
    })
  }
  let stdin = ''
  const finish = (): void => {
    if (finished) return
    finished = true
    io.exit(0)
  }
  const logRecall = (error: unknown, suffix = ''): void => {
    errors.append({
      at: new Date(now()).toISOString(),
      where: `hook ${eventName} recall`,
      code: MnemoError.is(error) ? error.code : 'HOOK_FAILED',
      message: `${error instanceof Error ? error.message : String(error)}${suffix}`,
    })
  }
  /** Prints `output`, then confirms to the team server that it did (`confirm`, when it gave one); a failure is logged. */
  const printConfirmed = async (output: string, confirm: (() => Promise<void>) | undefined): Promise<void> => {
    try {
      io.stdout.write(output)
    } catch (error) {
      // Not printed, so not confirmed: a later prompt of the session may show its items.
      logRecall(error, ' (the block could not be printed)')
      return
    }
    try {
      await confirm?.()
    } catch (error) {
      logRecall(error, ' (the block was injected, but it is not recorded as shown: a later prompt of the session may show it again)')
    }
  }
  /**
   * Prints a per-prompt block or file hint on the agent's channel for it, when `compute` gives one before the hook
   * has finished; then, only when it was printed, calls its `confirm` (what it shows is recorded for the session only
   * then, by the local store or the team server).
   * The event is stored already (locally or by the server), so a failure is logged, never spooled.
   */
  const inject = async (
    compute: () => Promise<{ hookEventName: string; text: string; confirm?: () => Promise<void> } | undefined | null>,
  ): Promise<void> => {
    let extra: Awaited<ReturnType<typeof compute>>
    try {
      extra = await compute()
    } catch (error) {
      logRecall(error)
      return
    }
    if (!extra || finished) return
    await printConfirmed(
      `${JSON.stringify({ hookSpecificOutput: { hookEventName: extra.hookEventName, additionalContext: extra.text } })}\n`,
      extra.confirm,
    )
  }
  const giveUp = (where: string, error: unknown): void => {
    const code = MnemoError.is(error) ? error.code : 'HOOK_FAILED'
    const message = error instanceof Error ? error.message : String(error)
    try {
      if (code === 'INVALID_INPUT') {
        // Input that can never be stored is kept aside for inspection, not retried.
        const name = spool.putBad({ event: eventName, stdin: redactSecrets(stdin), cwd: io.cwd, spooledAt: firedAt, agent, ...owner })
        errors.append({ at: new Date(now()).toISOString(), where, code, message: `${message} (input kept as spool/bad/${name})` })
      } else {
        // Secrets never rest on disk, not even in the spool (redaction keeps JSON parseable).
        spool.put({ event: eventName, stdin: redactSecrets(stdin), cwd: io.cwd, spooledAt: firedAt, agent, ...owner })
        errors.append({
          at: new Date(now()).toISOString(),
          where,
          code,
          message: `${message} (event spooled for the next run)`,
          ...(MnemoError.is(error) && error.hint !== undefined ? { hint: error.hint } : {}),
        })
      }
    } catch (spoolError) {
      keepElsewhere(code, message, spoolError)
    }
  }
  /**
   * The data directory cannot take the event (not a directory, not writable): it goes to spool/bad/ of the default
   * data directory when that is another one (bad/: it is not drained into a store the user did not choose), and one
   * line on stderr says where; else the event is lost, and the line says that. Exit status stays 0.
   */
  const keepElsewhere = (code: string, message: string, spoolError: unknown): void => {
    const at = new Date(now()).toISOString()
    const where = `hook ${eventName}`
    const problem =
      dataDirError(config.home, spoolError)?.message ??
      `the spool ${config.spoolDir} cannot be written (${spoolError instanceof Error ? spoolError.message : String(spoolError)})`
    const failure = message === problem ? problem : `${message}; ${problem}`
    const stderr = io.stderr ?? process.stderr
    const fallback = resolveConfig({ HOME: io.env['HOME'] })
    if (fallback.home !== config.home) {
      try {
        // Kept for that data directory: its next drain, once it can be written again, stores it (see Spool.adoptFrom).
        const name = new Spool(fallback.spoolDir).putForElsewhere({
          event: eventName,
          stdin: redactSecrets(stdin),
          cwd: io.cwd,
          spooledAt: firedAt,
          agent,
          ...owner,
          home: config.home,
        })
        const file = path.join(fallback.spoolDir, 'elsewhere', name)
        new ErrorLog(fallback.errorLogPath).append({
          at,
          where,
          code,
          message: `${failure} (event kept as ${file}; stored in ${config.home} by its next command or hook once it can be written)`,
        })
        stderr.write(
          `mnemo ${where}: ${failure}; event kept as ${file} (stored in ${config.home} by its next command or hook once it can be written)\n`,
        )
        return
      } catch {
        // the default data directory cannot take it either
      }
    }
    errors.append({ at, where, code, message: `${failure}; the event was lost` })
    stderr.write(`mnemo ${where}: ${failure}; the event was lost (no data directory could keep it)\n`)
  }

  const timer = setTimeout(() => {
    if (finished) return
    giveUp(`hook ${eventName}`, new Error(`gave up after ${HOOK_DEADLINE_MS} ms`))
    finish()
  }, HOOK_DEADLINE_MS - SPOOL_MARGIN_MS)
  // Not unref'd: if a request hangs with nothing else keeping the process alive, this timer still
  // fires and spools the event (finish() exits the process, so it never delays a normal exit).

  let opened: OpenedMnemo | undefined
  try {
    const maxBytes = io.maxStdinBytes ?? MAX_HOOK_STDIN_BYTES
    const read = io.stdinRead
      ? readAlready(io.stdinRead, (partial) => {
          stdin = partial
        })
      : await readStdin(io.stdin, { timeoutMs: STDIN_TIMEOUT_MS, maxBytes }, (partial) => {
          stdin = partial
        })
    stdin = read.text
    if (finished) return
    if (read.cutStrings > 0) {
      // Stored all the same: only the middles of the longest strings are gone (the store would cut them anyway).
      errors.append({
        at: new Date(now()).toISOString(),
        where: `hook ${eventName}`,
        code: 'INVALID_INPUT',
        message: `hook stdin is ${read.bytes} bytes, over the ${maxBytes}-byte cap: ${read.cutStrings} string(s) cut to ${PRE_REDACTION_CHARS} characters (head and tail kept) before storing`,
      })
    }
    if (eventName.trim().length === 0)
      throw new MnemoError('INVALID_INPUT', 'mnemo hook needs an event name (mnemo hook <Event>)', { details: { path: 'event' } })
    if (unknownUnderIsolation) {
      throw new MnemoError(
        'INVALID_INPUT',
        `unknown --agent ${JSON.stringify(agentName)} (one of ${HOOK_AGENTS.join(', ')}): MNEMO_AGENT_SCOPE=own files every event under its agent`,
        { details: { path: 'agent' } },
      )
    }
    if (remote) {
      // Team mode: the server stores the event; anything spooled while it was unreachable goes first — within the
      // event's budget, past which the event is spooled and the hook returns (see REMOTE_BUDGET_MS).
      const budget = io.remoteBudgetMs ?? REMOTE_BUDGET_MS
      const down = recentlyUnreachable(config.spoolDir, remote.url, now())
      if (down !== undefined) {
        throw new MnemoError(
          'STORE_UNAVAILABLE',
          `server ${remote.url} did not answer a hook at ${new Date(down).toISOString()}: spooled without trying for ${REMOTE_BACKOFF_MS / 1000} s`,
          { details: { dialect: 'sqlite', operation: 'remote append' } },
        )
      }
      const deadline = Date.now() + budget.capture
      const left = (): number => Math.max(1, deadline - Date.now())
      try {
        await drainToRemote(spool, remote, errors, now, owner, left)
        await postEvent(remote, eventName, stdin, agent, io.cwd, firedAt, left())
      } catch (error) {
        if (MnemoError.is(error, 'STORE_UNAVAILABLE') && error.cause !== undefined) markUnreachable(config.spoolDir, remote.url, now())
        throw error
      }
      markUnreachable(config.spoolDir, remote.url, undefined)
      const promptEvent = toMnemoEvent(agent, eventName)
      if (PROMPT_EVENTS.has(promptEvent) && config.promptRecallTokens !== undefined && !finished) {
        // Per-prompt recall and file hints from the server, which keeps what this session was shown. The event is
        // stored already: a slow or failing answer means nothing is printed, and is logged, never spooled. Asked only
        // when the agent takes context at this event and the payload gives something to ask about (a session, the
        // user's words, a file): no round trip for the rest (Cursor, Claude Code's PostToolUse, a tool without a file).
        // The event was parsed and posted already: this parse cannot fail.
        const { payload, projectRoot } = eventPayload(eventName, stdin, io.cwd)
        const tokens = config.promptRecallTokens
        if (injectionRequest(agent, promptEvent, payload) !== undefined)
          await inject(() =>
            remoteInjection(remote, promptEvent, payload, projectRoot, agent, tokens, {
              answer: budget.inject ?? REMOTE_BUDGET_MS.inject,
              ack: budget.ack ?? REMOTE_BUDGET_MS.ack,
            }),
          )
      }
      if (CONTEXT_EVENTS.has(eventName) && !finished) {
        const block = await remoteContext(remote, stdin, io.cwd, agent, { answer: budget.context, ack: budget.ack ?? REMOTE_BUDGET_MS.ack })
        if (block !== undefined && block.text !== '')
          await printConfirmed(
            eventName === 'SessionStart'
              ? `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: block.text } })}\n`
              : `${block.text}\n`,
            block.confirm,
          )
      }
      return
    }
    if (configError !== undefined) throw configError
    // The configuration, spool and error log made above serve the store too: resolved and built once per hook.
    opened = openMnemo({ env: io.env, cwd: io.cwd, busyTimeoutMs: HOOK_BUSY_TIMEOUT_MS, config, spool, errors })
    const engine = opened.engine
    let result: Awaited<ReturnType<typeof engine.captureHook>> | undefined
    try {
      const drained = await opened.drainSpool()
      // Another process holds the write lock (the drain does not wait for it): this event waits in the spool too.
      if (drained.failed !== undefined) throw drained.failed
      // A context event does not wait for the lock either: its session waits for the block.
      result = CONTEXT_EVENTS.has(eventName)
        ? await opened.withoutLockWait(async () => await engine.captureHook(eventName, stdin, agent, firedAt))
        : await engine.captureHook(eventName, stdin, agent, firedAt)
    } catch (error) {
      // A session must still get its context while another process writes: readers need no lock (WAL).
      if (!CONTEXT_EVENTS.has(eventName) || !MnemoError.is(error, 'STORE_UNAVAILABLE')) throw error
      giveUp(`hook ${eventName}`, error)
    }
    if (result?.note !== undefined)
      errors.append({ at: new Date(now()).toISOString(), where: `hook ${eventName}`, code: 'INVALID_INPUT', message: result.note })
    // A misspelled event stored under the payload's name is answered as that event (a SessionStart still gets its context).
    const answered = result?.event ?? eventName
    if (CONTEXT_EVENTS.has(answered) && !finished) {
      // The session as capture read it (Cursor's conversation_id too); the payload again only when capture did not run.
      const sessionKey = result?.sessionKey ?? sessionIdOf(stdin)
      const project = result?.project ?? (await engine.projectForPath(cwdOf(stdin) ?? io.cwd, { workingDir: true }))
      // Under agent isolation (MNEMO_AGENT_SCOPE=own) the agent gets its own memory only.
      const scoped = engine.scoped({ agent })
      // A SessionStart's block is kept beside the store for the next one, which prints it without opening the store
      // while nothing it depends on changes (runtime/context-cache.ts); it is checked against other processes' writes
      // from here on.
      const keeping = answered === 'SessionStart' ? opened.keeping : undefined
      const since = keeping?.otherWrites()
      // What the block shows is recorded for the session once it is printed (deferred), never for a block that was not.
      const block = await scoped.context({
        project,
        ...(sessionKey ? { excludeSessionKey: sessionKey, recordFor: { agent, sessionKey, defer: true } } : {}),
        ...(keeping ? { withListing: true } : {}),
      })
      const shown = block.shown
      // Nothing recorded yet (a new project): nothing is injected.
      if (block.text !== '')
        await printConfirmed(
          answered === 'SessionStart'
            ? `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: block.text } })}\n`
            : `${block.text}\n`,
          sessionKey && shown
            ? async () => {
                try {
                  // A session waits for its block, never for another process's write: the record is then skipped.
                  await opened!.withoutLockWait(() => scoped.recordShown({ agent, sessionKey }, shown))
                } catch (error) {
                  if (!MnemoError.is(error, 'STORE_UNAVAILABLE')) throw error
                  errors.append({
                    at: new Date(now()).toISOString(),
                    where: `hook ${answered} context`,
                    code: error.code,
                    message: `${error.message} (the block was injected; what it showed is not recorded for the session's later prompts)`,
                  })
                }
              }
            : undefined,
        )
      if (keeping !== undefined && since !== undefined && !finished) {
        try {
          await keepContext(keeping, { ...keptFor(config, agent), since, project, block })
        } catch {
          // Only the next SessionStart's shortcut is lost: it builds its block itself.
        }
      }
    }
    if (result !== undefined && KEEPING_EVENTS.has(toMnemoEvent(agent, answered)) && opened.keeping !== undefined && !finished) {
      // The end of a session: the project's block is built and kept for its next SessionStart, which then prints it
      // without opening the store (runtime/context-cache.ts). Built as that SessionStart would, but writing nothing:
      // what it shows is recorded when it is shown.
      const keeping = opened.keeping
      try {
        const since = keeping.otherWrites()
        const block = await engine.scoped({ agent }).context({ project: result.project, withListing: true, sideEffects: false })
        await keepContext(keeping, { ...keptFor(config, agent), since, project: result.project, block })
      } catch {
        // Only the next SessionStart's shortcut is lost: it builds its block itself.
      }
    }
    if (result !== undefined && PROMPT_EVENTS.has(answered) && config.promptRecallTokens !== undefined && !finished) {
      // Per-prompt recall and file hints; the event is already stored, so a failure here is logged, never spooled.
      const { project } = result
      const tokens = config.promptRecallTokens
      const scoped = engine.scoped({ agent })
      // Recorded for the session once printed (`confirm`): a block computed after the deadline is never printed, so
      // never counted as shown, and a later prompt can still show its items.
      await inject(async () => {
        const injection = await scoped.hookInjection(answered, agent, stdin, project, tokens, { record: false })
        return (
          injection && {
            hookEventName: injection.hookEventName,
            text: injection.text,
            confirm: () => scoped.recordShown({ agent, sessionKey: injection.sessionKey }, injection.shown),
          }
        )
      })
    }
  } catch (error) {
    if (!finished) giveUp(`hook ${eventName}`, error)
  } finally {
    clearTimeout(timer)
    try {
      await opened?.close()
    } catch {
      // closing a failed store
    }
    finish()
  }
}

/**
 * Sends one hook event to the server, its strings capped and secrets
 * redacted as the store would (so a 12 MB tool output fits the server's body
 * limit). A network failure, a timeout, a 5xx, a refused token or a missing
 * route (a wrong URL) throws STORE_UNAVAILABLE: the caller spools it until the
 * setting or the server is fixed. Only 400/413/422 mean the input itself is
 * bad and throw INVALID_INPUT (kept in spool/bad). The server deduplicates by
 * idempotency key, so a retried event is never stored twice.
 *
 * @param at - When the hook fired (a spooled event's time), epoch ms; undefined for now.
 */
async function postEvent(
  remote: RemoteServer,
  event: string,
  stdin: string,
  agent: HookAgent,
  cwd: string,
  at: number | undefined,
  timeoutMs?: number,
): Promise<void> {
  const { payload, projectRoot } = eventPayload(event, stdin, cwd)
  const body = JSON.stringify({
    event,
    payload: sanitizePayload(payload),
    agent,
    ...(at !== undefined ? { at: new Date(at).toISOString() } : {}),
    ...(projectRoot ? { projectRoot } : {}),
  })
  const res = await remoteFetch(remote, '/v1/events', { method: 'POST', body, ...(timeoutMs !== undefined ? { timeoutMs } : {}) })
  if (res.status === 400 || res.status === 413 || res.status === 422) {
    throw new MnemoError('INVALID_INPUT', `server ${remote.url} refused the event: ${(await res.text()).slice(0, 200)}`, {
      details: { path: 'payload' },
    })
  }
  if (res.status >= 300) {
    const problem = settingProblem(res.status)
    throw new MnemoError('STORE_UNAVAILABLE', `server ${remote.url} answered ${res.status}${problem ? ` (${problem})` : ''}`, {
      details: { dialect: 'sqlite', operation: 'POST /v1/events' },
    })
  }
}

/**
 * The hook payload as the server gets it: parsed, with the hook's `cwd` when it names none (the server has no working
 * directory of its own), and the project root resolved here, where its folder exists (git top-level of cwd).
 *
 * @throws {MnemoError} `INVALID_INPUT` — stdin is not JSON.
 */
function eventPayload(event: string, stdin: string, cwd: string): { payload: unknown; projectRoot: string | undefined } {
  let payload: unknown
  try {
    payload = JSON.parse(stdin)
  } catch (cause) {
    throw new MnemoError('INVALID_INPUT', `hook ${event}: stdin is not valid JSON (${jsonSyntaxError(cause)})`, {
      details: { path: 'stdin' },
    })
  }
  // The server has no working directory of its own: a payload without cwd gets the hook's.
  if (
    payload !== null &&
    typeof payload === 'object' &&
    !Array.isArray(payload) &&
    typeof (payload as { cwd?: unknown }).cwd !== 'string'
  ) {
    payload = { ...payload, cwd }
  }
  // The project is resolved here, where its folder exists (git top-level of cwd); the server may not have it.
  const eventCwd = payload !== null && typeof payload === 'object' ? (payload as { cwd?: unknown }).cwd : undefined
  const projectRoot = typeof eventCwd === 'string' && path.isAbsolute(eventCwd) ? resolveProjectRoot(eventCwd).root : undefined
  return { payload, projectRoot }
}

/** The payload fields the server's injection reads (the session, the project's folder, the prompt, the tool's files). */
const INJECTION_FIELDS = ['session_id', 'cwd', 'hook_event_name', 'prompt', 'tool_name', 'tool_input', 'tool_args'] as const

/**
 * What the team server injects for this prompt or tool event (`POST /v1/injections`, asked with `ack: true`):
 * per-prompt recall and corrections, or file hints, with the agent's event name for them; undefined when there is
 * none. The server records what the block shows only when `confirm` posts its acknowledgement
 * (`POST /v1/injections/ack`), which the caller does once the block is printed: an answer that comes after the hook
 * stopped waiting is never printed, so never recorded, and a later prompt can still show it. An older server that
 * sends no `ack` has recorded the block already (`confirm` is then absent).
 *
 * @param payload - The hook payload, parsed, with its `cwd` (`eventPayload`).
 * @param timeoutMs.answer - Longest wait for the block, ms. `timeoutMs.ack` - for the acknowledgement, ms.
 * @throws {MnemoError} `STORE_UNAVAILABLE` — no answer within `timeoutMs.answer`, or an error status (named); from
 *   `confirm`, the same for the acknowledgement.
 */
async function remoteInjection(
  remote: RemoteServer,
  event: string,
  payload: unknown,
  projectRoot: string | undefined,
  agent: HookAgent,
  budgetTokens: number,
  timeoutMs: { answer: number; ack: number },
): Promise<{ hookEventName: string; text: string; confirm?: () => Promise<void> } | undefined> {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined
  // Only what the injection reads: a tool's output can be megabytes, and the event already carried it.
  const fields = Object.fromEntries(INJECTION_FIELDS.filter((k) => k in payload).map((k) => [k, (payload as Record<string, unknown>)[k]]))
  const body = JSON.stringify({
    event,
    payload: sanitizePayload(fields),
    agent,
    budget: budgetTokens,
    ack: true,
    ...(projectRoot ? { projectRoot } : {}),
  })
  const injection = (
    (await remotePost(remote, '/v1/injections', body, timeoutMs.answer)) as {
      injection?: { hookEventName?: unknown; text?: unknown; ack?: unknown } | null
    }
  ).injection
  if (typeof injection?.hookEventName !== 'string' || typeof injection.text !== 'string' || injection.text === '') return undefined
  const ack = injection.ack
  return {
    hookEventName: injection.hookEventName,
    text: injection.text,
    ...(ack !== null && typeof ack === 'object'
      ? {
          confirm: async () => {
            await remotePost(remote, '/v1/injections/ack', JSON.stringify(ack), timeoutMs.ack)
          },
        }
      : {}),
  }
}

/**
 * Posts `body` to `route` of the team server and returns its JSON answer.
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — no answer within `timeoutMs`, or an error status (named).
 */
async function remotePost(remote: RemoteServer, route: string, body: string, timeoutMs: number): Promise<unknown> {
  const res = await remoteFetch(remote, route, { method: 'POST', body, timeoutMs })
  const text = await res.text()
  if (!res.ok) {
    const problem = settingProblem(res.status)
    throw new MnemoError('STORE_UNAVAILABLE', `server ${remote.url} answered ${res.status} (${problem ?? text.slice(0, 200)})`, {
      details: { dialect: 'sqlite', operation: `POST ${route}` },
    })
  }
  return JSON.parse(text) as unknown
}

/**
 * Posts spooled events to the server, oldest first (at most 50 per hook run).
 * Stops at the first one the server cannot take now and rethrows that
 * STORE_UNAVAILABLE, so the current event is spooled behind it at once instead
 * of waiting out a second timeout.
 */
async function drainToRemote(
  spool: Spool,
  remote: RemoteServer,
  errors: ErrorLog,
  now: () => number,
  owner: { user?: string; tokenId?: string },
  left: () => number,
): Promise<void> {
  let sent = 0
  for (const file of spool.list()) {
    // At most 50 sent per run; files left for another token do not count.
    if (sent >= 50) break
    const item = spool.read(file)
    if (!item) continue
    // The server stores an event as the user of the token it comes with: an event spooled for another token (or by
    // another MNEMO_USER sharing this data directory) waits for a hook that has it.
    // An event spooled locally (no token) stays for the local store: it never takes on a member's identity.
    if (item.tokenId !== owner.tokenId) continue
    sent++
    try {
      await postEvent(remote, item.event, item.stdin, toHookAgent(item.agent), item.cwd, item.spooledAt, left())
      spool.remove(file)
    } catch (error) {
      if (MnemoError.is(error, 'INVALID_INPUT')) {
        spool.moveAside(file)
        errors.append({
          at: new Date(now()).toISOString(),
          where: `spool drain ${item.event}`,
          code: 'INVALID_INPUT',
          message: error.message,
        })
        continue
      }
      throw error
    }
  }
}

/**
 * The context block from the server for the project of the payload's cwd, or undefined when it cannot be had in
 * time. With a session id, the server records what the block shows for that session only when `confirm` posts the
 * answer's acknowledgement (`POST /v1/injections/ack`), which the caller does once the block is printed: a block
 * that comes after the hook stopped waiting is never printed, so never recorded, and the session's prompts can still
 * show its items. An older server that sends no `ack` has recorded the block already (`confirm` is then absent).
 *
 * @param timeoutMs.answer - Longest wait for the block, ms. `timeoutMs.ack` - for the acknowledgement, ms.
 */
async function remoteContext(
  remote: RemoteServer,
  stdin: string,
  defaultCwd: string,
  agent: HookAgent,
  timeoutMs: { answer: number; ack: number },
): Promise<{ text: string; confirm?: () => Promise<void> } | undefined> {
  let answer: { text?: unknown; ack?: unknown }
  try {
    const cwd = (JSON.parse(stdin) as { cwd?: unknown }).cwd
    const project = typeof cwd === 'string' && cwd.length > 0 ? cwd : defaultCwd
    const session = sessionIdOf(stdin)
    const res = await remoteFetch(
      remote,
      // recordSession: what the block shows is recorded for this session (once confirmed), so its prompts never repeat it.
      `/v1/context?project=${encodeURIComponent(project)}&agent=${agent}${session ? `&excludeSession=${encodeURIComponent(session)}&recordSession=${encodeURIComponent(session)}&ack=true` : ''}`,
      { method: 'GET', timeoutMs: timeoutMs.answer },
    )
    if (!res.ok) return undefined
    answer = (await res.json()) as { text?: unknown; ack?: unknown }
  } catch {
    return undefined
  }
  if (typeof answer.text !== 'string') return undefined
  const ack = answer.ack
  return {
    text: answer.text,
    ...(ack !== null && typeof ack === 'object'
      ? { confirm: async () => void (await remotePost(remote, '/v1/injections/ack', JSON.stringify(ack), timeoutMs.ack)) }
      : {}),
  }
}

/** What `deferCapture` read, as `readStdin` would give it: the read, or its failure thrown after `onPartial` got what arrived. */
function readAlready(outcome: StdinOutcome, onPartial: (partial: string) => void): StdinRead {
  if (outcome.ok) return outcome.read
  onPartial(outcome.partial)
  throw outcome.error
}

/** The payload's absolute `cwd`, if it has one. */
function cwdOf(stdin: string): string | undefined {
  try {
    const v = (JSON.parse(stdin) as { cwd?: unknown }).cwd
    return typeof v === 'string' && path.isAbsolute(v) ? v : undefined
  } catch {
    return undefined
  }
}

function sessionIdOf(stdin: string): string | undefined {
  try {
    const v = (JSON.parse(stdin) as { session_id?: unknown }).session_id
    return typeof v === 'string' ? v : undefined
  } catch {
    return undefined
  }
}

/** What a kept context block records of this hook (`keepContext`): the data directory, the build and the settings. */
function keptFor(
  config: ReturnType<typeof resolveConfig>,
  agent: string,
): { home: string; dbPath: string; build: string; settings: string } {
  return { home: config.home, dbPath: config.dbPath, build: hookBuild(), settings: contextSettings(config, agent) }
}
