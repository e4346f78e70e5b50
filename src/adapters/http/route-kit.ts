import { z } from 'zod'
import { describeValue, invalidInput } from '../../core/errors.js'
import { idPrefix } from '../../core/ids.js'
import { limited, parseInput, showInput } from '../../core/schemas.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import type { OpenedMnemo } from '../../runtime/open-mnemo.js'
import type { jobJson } from '../../engine/views.js'
import { requireKnownProject } from '../../engine/projects.js'

/**
 * What every REST route is made of: the route type the table (REST_ROUTES)
 * holds, and the helpers handlers share (scope, ids, replies, list params).
 */

/** What a route handler may use. */
export interface RouteContext {
  mnemo: OpenedMnemo
  /** The engine for this request: scoped to the user of a per-user token (see server-users.ts), else the server's. */
  engine: MnemoEngine
  /** The user of the request's per-user token; undefined for the server token (the operator). */
  user: string | undefined
  /** Epoch ms the server started. */
  startedAt: number
  /** The OpenAPI document of this server. */
  openApi: () => Record<string, unknown>
  /** The server's background jobs, as /v1/status reports them. */
  jobs: () => z.output<typeof jobJson>[]
}

/** A success response: status and JSON body. */
export interface Reply {
  status: 200 | 201 | 202
  body: unknown
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined

/** What a handler receives: the parsed JSON body and query string, and the path parameters. */
export interface RouteInput<B, Q> {
  body: Parsed<B>
  query: Parsed<Q>
  params: Record<string, string>
}

/**
 * One REST route. The table of these (`REST_ROUTES`) is the single source of
 * the Hono routes (app.ts) and of the OpenAPI document (openapi.ts).
 */
export interface RestRoute<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** Hono path syntax: `/v1/memories/:id`. */
  path: string
  operationId: string
  summary: string
  description?: string
  /** True for the one route that needs no bearer token. */
  public?: true
  /** Schema of the JSON body (POST). */
  body?: B
  /** Schema of the query string (GET); number fields are converted from text. */
  query?: Q
  /** `project` (in the body or the query) must be given: it never defaults to every project. */
  projectRequired?: true
  /** Success responses by status. */
  responses: Partial<Record<200 | 201 | 202, { description: string; schema: z.ZodType }>>
  /** Error statuses this route can answer with besides 401 and 500. */
  errors: readonly (400 | 403 | 404 | 413 | 422)[]
  handle(input: RouteInput<B, Q>, ctx: RouteContext): Reply | Promise<Reply>
}

/** A route of any input types, as stored in the table. */
export type AnyRestRoute = RestRoute<z.ZodType | undefined, z.ZodType | undefined>

export function defineRoute<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
  route: RestRoute<B, Q>,
): AnyRestRoute {
  return route as AnyRestRoute
}

export const ok = (body: unknown, status: Reply['status'] = 200): Reply => ({ status, body })

/** The project a scoped route works on; see `requireProject`. */
export function needProject(engine: MnemoEngine, project: string | undefined, where: 'body' | 'query'): Promise<string> {
  const how = where === 'body' ? 'pass "project" in the JSON body' : 'add ?project=<name> to the URL'
  return requireKnownProject(engine, project, how)
}

/** A path id checked against the kind the route serves (`mem` for /v1/memories/:id). */
export function idOfKind(params: Record<string, string>, prefix: 'obs' | 'mem' | 'ses', name = 'id'): string {
  const { id } = parseInput(showInput, { id: params[name] }, name === 'id' ? 'path' : 'query string')
  if (idPrefix(id) !== prefix) {
    const noun = prefix === 'obs' ? 'an observation' : prefix === 'mem' ? 'a memory' : 'a session'
    throw invalidInput(name, `${name} must be ${noun} id (${prefix}_…) (got ${describeValue(id)})`)
  }
  return id
}

/** A comma-separated list of enum values in a query string (`kind=prompt,tool`). */
export function csvOf<T extends string>(values: readonly T[], what: string) {
  return limited(z.string(), { minLength: 1, maxLength: 200 })
    .describe(`${what}, comma-separated: ${values.join(', ')}.`)
    .transform((text, ctx) => {
      const parts = text
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p.length > 0)
      const bad = parts.filter((p) => !(values as readonly string[]).includes(p))
      if (bad.length > 0 || parts.length === 0) {
        ctx.addIssue({ code: 'custom', message: `must be one or more of ${values.join(', ')}` })
        return z.NEVER
      }
      return parts as T[]
    })
}

/** The path parameter of routes on one item (`/v1/memories/:id`). */
export const idParam = 'id'
