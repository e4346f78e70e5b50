import { Hono, type Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { z } from 'zod'
import { redactSecrets } from '../../engine/capture-rules.js'
import { invalidInput, MnemoError } from '../../core/errors.js'
import { parseInput } from '../../core/schemas.js'
import { jsonSyntaxError } from '../../core/text.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import type { OpenedMnemo } from '../../runtime/open-mnemo.js'
import { errorJson, errorResponse } from './error-response.js'
import { handleMcpPost, mcpMethodNotAllowed } from './mcp-endpoint.js'
import { allowedHostNames, refusedHostOrOrigin } from './host-check.js'
import { DEFAULT_HOST } from '../../config/config.js'
import { buildOpenApiDocument } from './openapi.js'
import { REST_ROUTES, streamQuery, type AnyRestRoute, type RouteContext } from './rest-routes.js'
import type { jobJson } from '../../engine/views.js'
import { streamObservations } from './event-stream.js'
import { isViewerAsset, registerViewer } from './viewer-assets.js'
import { bearerMatches, serverTokenPath } from '../../runtime/server-token.js'
import { ServerUsers } from '../../runtime/server-users.js'

/** Default largest request body, bytes (1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

/** Options of `createHttpApp`. */
interface HttpAppOptions {
  mnemo: OpenedMnemo
  /** The bearer token every route but GET /v1/health requires. */
  token: string
  /** Largest request body, bytes; bigger ones get 413. */
  maxBodyBytes: number
  /** Epoch ms the server started (for /v1/status). */
  startedAt: number
  /** Called as each request arrives, before anything else (observability, tests). */
  onRequest?: (method: string, path: string) => void
  /** Where unexpected failures are reported, one line each. Default: nowhere (they go to the error log). */
  log?: (line: string) => void
  /** The server's background jobs, for /v1/status. Default: none. */
  jobs?: () => z.output<typeof jobJson>[]
  /** Aborted when the server shuts down: open event streams end. */
  closing?: AbortSignal
  /** How often GET /v1/stream reads the log for new rows, ms. Default 500. */
  streamPollMs?: number
  /** The built viewer's folder. Default `dist/viewer` of this package. */
  viewerDir?: string
  /** Host names the `Host` and `Origin` headers may name (see `allowedHostNames`). Default: the loopback names. */
  allowedHosts?: ReadonlySet<string>
  /**
   * Awaited before each authorised API and MCP request (what it throws is ignored): `mnemo serve` drains the hook spool
   * there, so the tool events this machine's hooks deferred (deferred capture) are read too. Default: nothing.
   */
  beforeRequest?: () => Promise<unknown>
}

/** The 413 answer, thrown as an HTTPException so that it ends the request from anywhere. */
function tooLarge(maxBodyBytes: number): HTTPException {
  const res = errorJson(
    413,
    'PAYLOAD_TOO_LARGE',
    `request body is larger than ${maxBodyBytes} bytes`,
    'send a smaller body: cap large fields, or import big transcripts with POST /v1/import',
  )
  return new HTTPException(413, { res })
}

/**
 * Reads the body as text, at most `maxBodyBytes` (a declared Content-Length
 * was already checked; this catches chunked bodies).
 *
 * @throws {HTTPException} 413 — the body is larger.
 */
async function readBodyText(request: Request, maxBodyBytes: number): Promise<string> {
  if (!request.body) return ''
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBodyBytes) {
      await reader.cancel()
      throw tooLarge(maxBodyBytes)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Deepest nesting kept in a request body; deeper values become a placeholder string. */
const MAX_BODY_DEPTH = 32

/**
 * `value` with everything nested deeper than `maxDepth` replaced by the
 * placeholder capture uses (`[mnemo: nesting too deep]`), so validation
 * never recurses without bound: a hook payload is then stored as `mnemo
 * hook` stores it (capture caps nesting at 20), and any other field fails
 * validation with a type error naming it.
 */
function capDepth(value: unknown, maxDepth = MAX_BODY_DEPTH, depth = 0): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (depth >= maxDepth) return '[mnemo: nesting too deep]'
  if (Array.isArray(value)) return value.map((v) => capDepth(v, maxDepth, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value))
    Object.defineProperty(out, k, { value: capDepth(v, maxDepth, depth + 1), enumerable: true, writable: true, configurable: true })
  return out
}

/** Reads the body as JSON, nesting capped (`capDepth`). @throws {MnemoError} `INVALID_INPUT` — empty or not JSON. @throws {HTTPException} 413. */
async function readJson(c: Context, maxBodyBytes: number): Promise<unknown> {
  const text = await readBodyText(c.req.raw, maxBodyBytes)
  if (text.trim().length === 0) throw invalidInput('body', 'body is empty (expected a JSON object)')
  try {
    return capDepth(JSON.parse(text) as unknown)
  } catch (error) {
    throw invalidInput(
      'body',
      `body is not valid JSON (${jsonSyntaxError(error)})`,
      'send Content-Type: application/json with a JSON object',
    )
  }
}

/**
 * The query string as an object for `schema`: one value per key; number fields converted from text.
 *
 * @throws {MnemoError} `INVALID_INPUT` — a key given twice, or one the route does not take (`?cursor=…` on a
 *   route paged by `before` was ignored and answered the first page, which reads as success).
 */
function queryObject(c: Context, schema: z.ZodObject): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  // Hono's queries() leaves out a parameter with no name (`?=1`); the URL keeps it.
  if (new URL(c.req.url).searchParams.has(''))
    throw invalidInput('query', 'a parameter with no name is not a query parameter of this route', 'write name=value pairs')
  for (const [key, values] of Object.entries(c.req.queries())) {
    if (!Object.hasOwn(schema.shape, key)) {
      const known = Object.keys(schema.shape)
      const paging =
        'before' in schema.shape
          ? "; pages are cut by before: pass the previous page's nextBefore"
          : 'offset' in schema.shape
            ? '; pages are cut by offset and limit'
            : ''
      // The value is not repeated: an unknown parameter may carry what should not be echoed (a token pasted in the wrong place).
      // Nor is a name that is no parameter name (a token pasted as `?ghp_…`).
      const name = /^[A-Za-z][\w-]{0,31}$/.test(key) && redactSecrets(key) === key ? key : 'a parameter whose name is not shown'
      throw invalidInput(
        key,
        `${name} is not a query parameter of this route`,
        `${known.length > 0 ? `it takes ${known.join(', ')}` : 'it takes no query parameters'}${paging}`,
      )
    }
    if (values.length > 1) throw invalidInput(key, `${key} is given more than once (${values.length} times)`)
    const value = values[0]
    const field = schema.shape[key]
    const inner = field instanceof z.ZodOptional ? field.unwrap() : field
    out[key] = inner instanceof z.ZodNumber && value !== undefined && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value
  }
  return out
}

const NO_QUERY = z.object({})

/** What the auth check learnt about a request: the user of a per-user token (undefined for the server token). */
type AuthVariables = { Variables: { user: string | undefined } }

async function runRoute(
  route: AnyRestRoute,
  c: Context<AuthVariables>,
  ctx: Omit<RouteContext, 'engine' | 'user'>,
  maxBodyBytes: number,
): Promise<Response> {
  const body = route.body ? parseInput(route.body as z.ZodType, await readJson(c, maxBodyBytes), 'body') : undefined
  // A route without query parameters refuses any: `DELETE /v1/observations/{id}?project=…` must not read as scoped.
  // queryObject throws on a parameter the schema does not name: against NO_QUERY, on any.
  const raw = queryObject(c, (route.query as z.ZodObject | undefined) ?? NO_QUERY)
  const query = route.query ? parseInput(route.query as z.ZodType, raw, 'query string') : undefined
  const reply = await route.handle({ body, query, params: c.req.param() }, { ...ctx, engine: engineFor(ctx.mnemo, c), user: c.get('user') })
  return c.json(reply.body, reply.status)
}

/** The engine a request works with: the server's, or scoped to the user of the request's token (their data and shared data only). */
function engineFor(mnemo: OpenedMnemo, c: Context<AuthVariables>): MnemoEngine {
  const user = c.get('user')
  return user === undefined ? mnemo.engine : mnemo.engine.scoped({ user })
}

/**
 * The Hono app of `mnemo serve`: REST routes from `REST_ROUTES` under /v1,
 * MCP at /mcp, bearer-token auth on everything but GET /v1/health, a body
 * size limit, and errors as `{ error: { code, message, hint } }` with the
 * status of `STATUS_BY_CODE`.
 */
export function createHttpApp(options: HttpAppOptions): Hono<AuthVariables> {
  const { mnemo, token, maxBodyBytes } = options
  let openApi: Record<string, unknown> | undefined
  const ctx: Omit<RouteContext, 'engine' | 'user'> = {
    mnemo,
    startedAt: options.startedAt,
    openApi: () => (openApi ??= buildOpenApiDocument()),
    jobs: options.jobs ?? (() => []),
  }
  const publicRoutes = new Set(REST_ROUTES.filter((r) => r.public).map((r) => `${r.method} ${r.path}`))
  const tokenHint = `send Authorization: Bearer <token>: your user token (mnemo user add <name> on the server), or the server token in ${serverTokenPath(mnemo.config.home)}`
  const app = new Hono<AuthVariables>()
  const users = new ServerUsers(mnemo.config.home)

  app.use('*', async (c, next) => {
    options.onRequest?.(c.req.method, c.req.path)
    await next()
  })
  // Before the token: a page of another site that rebinds its name to this address must get nothing, not even a 401.
  const allowedHosts = options.allowedHosts ?? allowedHostNames(DEFAULT_HOST)
  app.use('*', async (c, next) => {
    const refused = refusedHostOrOrigin({ host: c.req.header('host'), origin: c.req.header('origin') }, allowedHosts)
    if (refused === undefined) return next()
    return errorJson(
      403,
      'FORBIDDEN',
      refused,
      `open the server by one of its names (${[...allowedHosts].slice(0, 4).join(', ')}${allowedHosts.size > 4 ? ', …' : ''}); a server reached by another DNS name needs it in mnemo serve --allowed-hosts`,
    )
  })
  app.use('*', async (c, next) => {
    if (publicRoutes.has(`${c.req.method} ${c.req.path}`) || isViewerAsset(c.req.method, c.req.path)) return next()
    const header = c.req.header('authorization')
    // The server token is the operator's (the server's own MNEMO_USER scope); a per-user token reads and writes as that user only.
    if (bearerMatches(header, token)) {
      c.set('user', undefined)
      return next()
    }
    const user = users.userFor(header)
    if (user !== undefined) {
      c.set('user', user)
      return next()
    }
    const res = errorJson(401, 'UNAUTHORIZED', header === undefined ? 'missing bearer token' : 'wrong bearer token', tokenHint)
    res.headers.set('www-authenticate', 'Bearer realm="mnemo"')
    return res
  })
  const before = options.beforeRequest
  if (before)
    app.use('*', async (c, next) => {
      if (c.req.path.startsWith('/v1/') || c.req.path === '/mcp') {
        try {
          await before()
        } catch {
          // Answered from what is stored; the spool waits for the next drain.
        }
      }
      await next()
    })
  app.use('*', async (c, next) => {
    // A declared size is refused before reading; chunked bodies are capped as they are read.
    const declared = Number(c.req.header('content-length') ?? 0)
    if (declared > maxBodyBytes) throw tooLarge(maxBodyBytes)
    await next()
  })

  registerViewer(app, options.viewerDir)
  const closing = options.closing ?? new AbortController().signal
  app.get('/v1/stream', (c) =>
    streamObservations(c, parseInput(streamQuery, queryObject(c, streamQuery), 'query string'), {
      engine: engineFor(mnemo, c),
      // A user's token revoked while the stream is open ends it (the server token is not revocable here).
      authorized: () => {
        const user = c.get('user')
        if (user === undefined) return true
        try {
          return users.userFor(c.req.header('authorization')) === user
        } catch {
          return false
        }
      },
      pollMs: options.streamPollMs ?? 500,
      heartbeatMs: 15_000,
      closing,
    }),
  )
  for (const route of REST_ROUTES) app.on(route.method, route.path, (c) => runRoute(route, c, ctx, maxBodyBytes))
  app.post('/mcp', async (c) => {
    const text = await readBodyText(c.req.raw, maxBodyBytes)
    const request = new Request(c.req.url, { method: 'POST', headers: c.req.raw.headers, body: text })
    return handleMcpPost(request, engineFor(mnemo, c), maxBodyBytes)
  })
  app.on(['GET', 'DELETE'], '/mcp', () => mcpMethodNotAllowed())

  app.notFound((c) =>
    errorJson(404, 'NOT_FOUND', `no route ${c.req.method} ${c.req.path}`, 'the routes are listed by GET /v1/openapi.json'),
  )
  app.onError((error, c) => {
    if (error instanceof HTTPException) return error.getResponse()
    if (!MnemoError.is(error)) {
      const where = `http ${c.req.method} ${c.req.path}`
      const message = error instanceof Error ? error.message : String(error)
      mnemo.errors.append({ at: new Date().toISOString(), where, code: 'INTERNAL', message })
      options.log?.(`mnemo serve: ${where} failed: ${error instanceof Error && error.stack ? error.stack : message}`)
    }
    return errorResponse(error)
  })
  return app
}
