/**
 * The viewer's client for the REST API of `mnemo serve`: the bearer token and
 * one `api()` call that turns every failure into an `ApiError` with the
 * server's message and hint.
 */

/** sessionStorage key of the server token. */
const TOKEN_KEY = 'mnemo.token'

/** A failed API call: the server's `{ error: { code, message, hint } }`, or a network failure (`NETWORK`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint: string | null,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** The error as an `ApiError` (anything else becomes `INTERNAL` with its text). */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error
  return new ApiError(0, 'INTERNAL', error instanceof Error ? error.message : String(error), null)
}

/** True for an aborted fetch: not worth showing. */
export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError'
}

let token: string | null = null
const unauthorizedListeners = new Set<() => void>()

/** The token in use, or null when there is none. */
export function getToken(): string | null {
  if (token === null) {
    try {
      token = sessionStorage.getItem(TOKEN_KEY)
    } catch {
      token = null
    }
  }
  return token
}

/** Keeps `value` as the token for this tab (sessionStorage), or forgets it (null). */
export function setToken(value: string | null): void {
  token = value
  try {
    if (value === null) sessionStorage.removeItem(TOKEN_KEY)
    else sessionStorage.setItem(TOKEN_KEY, value)
  } catch {
    // Storage refused (privacy mode): the token lives in memory only.
  }
}

/**
 * Moves a `#token=…` in the address into sessionStorage and removes it from
 * the address (and so from the history), keeping the path and query.
 * @returns the token found, or null.
 */
export function takeTokenFromLocation(loc: Location = location, hist: History = history): string | null {
  const hash = loc.hash.replace(/^#/, '')
  if (hash === '') return null
  const params = new URLSearchParams(hash)
  const found = params.get('token')
  if (found === null) return null
  params.delete('token')
  const rest = params.toString()
  hist.replaceState(hist.state, '', loc.pathname + loc.search + (rest === '' ? '' : `#${rest}`))
  const trimmed = found.trim()
  if (trimmed === '') return null
  setToken(trimmed)
  return trimmed
}

/** Calls `listener` whenever the server refuses the token (401); returns the unsubscribe. */
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener)
  return () => unauthorizedListeners.delete(listener)
}

/** Tells every listener the token was refused. */
export function reportUnauthorized(): void {
  for (const l of unauthorizedListeners) l()
}

/** A query string from the defined, non-empty values (`?a=1&b=x`), or '' when there are none. */
export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue
    q.set(k, String(v))
  }
  const s = q.toString()
  return s === '' ? '' : `?${s}`
}

/** The headers every call sends: the bearer token, and any extra. */
export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  const t = getToken()
  return { ...(t === null ? {} : { Authorization: `Bearer ${t}` }), ...extra }
}

/** Reads an error response into an `ApiError`. */
export async function errorFromResponse(res: Response): Promise<ApiError> {
  let body: unknown
  try {
    body = await res.json()
  } catch {
    body = undefined
  }
  const e = (body as { error?: { code?: unknown; message?: unknown; hint?: unknown } } | undefined)?.error
  if (e && typeof e.message === 'string') {
    return new ApiError(
      res.status,
      typeof e.code === 'string' ? e.code : `HTTP_${res.status}`,
      e.message,
      typeof e.hint === 'string' ? e.hint : null,
    )
  }
  return new ApiError(
    res.status,
    `HTTP_${res.status}`,
    `the server answered ${res.status} ${res.statusText}`.trim(),
    res.status === 404 ? 'this server may be older than the viewer: update mnemo and restart `mnemo serve`' : null,
  )
}

interface ApiOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  body?: unknown
  signal?: AbortSignal
}

/**
 * Calls the API at `path` (`/v1/…`) with the token and returns the parsed JSON.
 * @throws ApiError with the server's code, message and hint; `UNAUTHORIZED`
 *   (after telling the `onUnauthorized` listeners) when the token is refused;
 *   `NETWORK` when the server cannot be reached. An abort rethrows the DOMException.
 */
export async function api<T>(path: string, options: ApiOptions = {}): Promise<T> {
  const init: RequestInit = {
    method: options.method ?? 'GET',
    headers: authHeaders(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    ...(options.signal ? { signal: options.signal } : {}),
  }
  let res: Response
  try {
    res = await fetch(path, init)
  } catch (error) {
    if (isAbort(error)) throw error
    throw new ApiError(0, 'NETWORK', 'cannot reach the mnemo server', 'is `mnemo serve` still running? Reload the page once it is.')
  }
  if (res.status === 401) {
    const err = await errorFromResponse(res)
    reportUnauthorized()
    throw err
  }
  if (!res.ok) throw await errorFromResponse(res)
  return (await res.json()) as T
}
