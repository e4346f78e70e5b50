import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { makeDirectory } from './data-dir.js'
import path from 'node:path'
import { isHttpUrl, type MnemoEnv } from '../config/config.js'
import { MnemoError } from '../core/errors.js'
import { errorText, snippet, vendorMessage } from '../providers/http-errors.js'

// Team mode: the mnemo server hooks and the CLI send to when MNEMO_SERVER_URL is set.

/** A configured team server: `MNEMO_SERVER_URL`, with `MNEMO_SERVER_TOKEN` or the token file in the data directory. */
export interface RemoteServer {
  url: string
  token: string | undefined
  /** Set when `MNEMO_SERVER_URL` is not an http(s) URL. */
  invalid?: true
}

/** Time a request to a remote server may take by default (status, doctor), ms. */
const REMOTE_TIMEOUT_MS = 1200

/**
 * What a hook may spend on the team server in all, ms, by event: a capture event (PreToolUse, PostToolUse, a
 * prompt, Stop, …) runs on every tool call, so it gets 250 ms for the spool drain and its own post together; a
 * context event (SessionStart, PreCompact) 250 ms to post and 700 ms more for the block; a prompt or tool event
 * whose agent takes context there (per-prompt recall, file hints: `MNEMO_PROMPT_RECALL`) 300 ms more for its block,
 * past which nothing is printed (the event is already stored), and, once the block is printed, 250 ms more to confirm
 * it (POST /v1/injections/ack: past it the server has not recorded the block, and a later prompt may show it again).
 * Past the capture budget the event is spooled and the hook returns. A loopback or LAN server answers in single
 * milliseconds; the budget is for one that accepts and never answers (public reports claude-mem#2100,
 * agentmemory#221: hooks that wait on a stuck memory server stall the agent).
 */
export const REMOTE_BUDGET_MS = { capture: 250, context: 700, inject: 300, ack: 250 } as const

/** How long after a request to the server timed out or failed hooks spool without trying it, ms (30 s). */
export const REMOTE_BACKOFF_MS = 30_000

/** The file in the spool folder that records when the team server last failed to answer (epoch ms). */
function unreachableMarker(spoolDir: string): string {
  return path.join(spoolDir, 'remote-unreachable')
}

/**
 * When the team server last failed to answer a hook in time, if that was less than `REMOTE_BACKOFF_MS` before
 * `nowMs`: hooks then spool at once instead of each waiting out its budget (ten sessions starting together).
 */
export function recentlyUnreachable(spoolDir: string, url: string, nowMs: number): number | undefined {
  try {
    const [at, for_] = readFileSync(unreachableMarker(spoolDir), 'utf8').split('\n')
    const t = Number(at)
    return for_ === url && Number.isFinite(t) && nowMs - t >= 0 && nowMs - t < REMOTE_BACKOFF_MS ? t : undefined
  } catch {
    return undefined
  }
}

/** Records that the server at `url` failed to answer at `nowMs` (or, with `undefined`, that it answered again). */
export function markUnreachable(spoolDir: string, url: string, nowMs: number | undefined): void {
  try {
    if (nowMs === undefined) rmSync(unreachableMarker(spoolDir), { force: true })
    else {
      makeDirectory(spoolDir)
      writeFileSync(unreachableMarker(spoolDir), `${nowMs}\n${url}`, { mode: 0o600 })
    }
  } catch {
    // a marker that cannot be written only costs the next hook its budget
  }
}

/** The team server hooks send to: `MNEMO_SERVER_URL` with its token, or undefined when unset. */
export function remoteServer(env: MnemoEnv, home: string): RemoteServer | undefined {
  const url = env['MNEMO_SERVER_URL']
  if (!url) return undefined
  let token = env['MNEMO_SERVER_TOKEN']
  if (!token) {
    try {
      token = readFileSync(path.join(home, 'server-token'), 'utf8').trim()
    } catch {
      token = undefined
    }
  }
  // An invalid URL is a setting to fix, not bad input: events are spooled (and the error logged) until it is fixed,
  // keeping the token they were for.
  if (!isHttpUrl(url)) return { url, token, invalid: true }
  return { url: url.replace(/\/+$/, ''), token }
}

/**
 * One request to the team server with the bearer token and a timeout
 * (default {@link REMOTE_TIMEOUT_MS}). Any answer resolves, error statuses too
 * (see {@link settingProblem}).
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — `MNEMO_SERVER_URL` is not an http(s) URL, or the
 *   server is unreachable or timed out (the fetch error is the `cause`).
 */
export async function remoteFetch(
  remote: RemoteServer,
  route: string,
  init: { method: string; body?: string; timeoutMs?: number },
): Promise<Response> {
  if (remote.invalid) {
    throw new MnemoError(
      'STORE_UNAVAILABLE',
      `MNEMO_SERVER_URL is not an http(s) URL (got ${JSON.stringify(remote.url)}); fix it and the spooled events are sent by the next hook`,
      {
        details: { dialect: 'sqlite', operation: 'remote append' },
      },
    )
  }
  try {
    return await fetch(`${remote.url}${route}`, {
      method: init.method,
      headers: { 'content-type': 'application/json', ...(remote.token ? { authorization: `Bearer ${remote.token}` } : {}) },
      ...(init.body !== undefined ? { body: init.body } : {}),
      signal: AbortSignal.timeout(init.timeoutMs ?? REMOTE_TIMEOUT_MS),
    })
  } catch (cause) {
    throw new MnemoError('STORE_UNAVAILABLE', `server ${remote.url} unreachable: ${errorText(cause)}`, {
      details: { dialect: 'sqlite', operation: `${init.method} ${route}` },
      cause,
    })
  }
}

/**
 * What an error status from the team server says about the client's settings
 * (a refused token, a URL with no mnemo API behind it), or undefined when it
 * is not about them. Such events are spooled, never set aside as bad input.
 */
export function settingProblem(status: number): string | undefined {
  if (status === 401 || status === 403)
    return `token refused (${status}): MNEMO_SERVER_TOKEN must be your current user token (ask the server's operator: mnemo user add <you>) or the server's own token`
  if (status === 404 || status === 405) return 'no mnemo API at this URL (give the base URL, without /v1)'
  return undefined
}

/**
 * Whether hooks can deliver to the team server now: `GET /v1/status` with the
 * token, within the hook timeout. For `mnemo status`.
 *
 * @returns `ok`, or what is wrong (unreachable, token refused, no mnemo API at that URL).
 */
export async function checkRemote(remote: RemoteServer): Promise<{ url: string; ok: boolean; detail: string }> {
  try {
    const res = await remoteFetch(remote, '/v1/status', { method: 'GET' })
    if (res.ok) return { url: remote.url, ok: true, detail: 'reachable, token accepted' }
    return { url: remote.url, ok: false, detail: settingProblem(res.status) ?? `answered ${res.status}` }
  } catch (error) {
    return { url: remote.url, ok: false, detail: `unreachable: ${errorText((error as Error).cause ?? error)}` }
  }
}

/**
 * A JSON request to the team server for the CLI (not hooks: nothing is
 * spooled). Waits up to 10 s.
 *
 * @returns The parsed JSON body of a 2xx answer.
 * @throws {MnemoError} `STORE_UNAVAILABLE` — unreachable, timed out, 5xx, or the token refused;
 *   `INVALID_INPUT` — the server refused the input (its message is passed on).
 */
export async function remoteJson(remote: RemoteServer, method: string, route: string, body?: unknown): Promise<unknown> {
  const res = await remoteFetch(remote, route, { method, timeoutMs: 10_000, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
  const text = await res.text()
  if (res.ok) return text ? JSON.parse(text) : undefined
  // mnemo's own error body ({ error: { code, message, hint } }): the server's verdict, passed on as it is
  // (a 404 for an unknown project is not a wrong URL).
  const own = mnemoErrorBody(text)
  const hint = own?.hint ? { hint: own.hint } : {}
  if (own?.code === 'INVALID_INPUT')
    throw new MnemoError('INVALID_INPUT', `team server: ${own.message}`, { details: { path: 'body' }, ...hint })
  if (own?.code === 'NOT_FOUND' || own?.code === 'CONFLICT') {
    const kind = (/\b(memory|observation|session)\b/.exec(own.message)?.[1] ?? 'project') as
      | 'memory'
      | 'observation'
      | 'session'
      | 'project'
    throw new MnemoError(own.code, `team server: ${own.message}`, {
      details: { kind, id: /\b((?:mem|obs|ses)_[0-9a-z]+)\b/.exec(own.message)?.[1] ?? '' },
      ...hint,
    })
  }
  const message = vendorMessage(text) ?? snippet(text)
  const problem = settingProblem(res.status)
  if (res.status >= 400 && res.status < 500 && problem === undefined) {
    throw new MnemoError('INVALID_INPUT', `team server refused it: ${message}`, { details: { path: 'body' } })
  }
  throw new MnemoError('STORE_UNAVAILABLE', `team server ${remote.url} answered ${res.status}: ${problem ?? message}`, {
    details: { dialect: 'sqlite', operation: `${method} ${route}` },
  })
}

/** The `{ error: { code, message, hint } }` body of a mnemo server's error answer, if that is what `text` is. */
function mnemoErrorBody(text: string): { code: string; message: string; hint: string | null } | undefined {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; hint?: unknown } }
    const e = body.error
    if (e && typeof e.code === 'string' && typeof e.message === 'string')
      return { code: e.code, message: e.message, hint: typeof e.hint === 'string' ? e.hint : null }
  } catch {
    // not JSON
  }
  return undefined
}
