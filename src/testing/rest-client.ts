import { expect } from 'vitest'
import { REST_ROUTES } from '../adapters/http/rest-routes.js'
import type { ParsedJson } from './json.js'

/** What a REST call answered: status, parsed JSON body (undefined when empty), headers. */
export interface RestReply {
  status: number
  body: ParsedJson
  headers: Headers
}

/** Calls a route of a running `mnemo serve` with its bearer token; a string body is sent as it is, anything else as JSON. */
export async function callRest(
  server: { url: string; token: string },
  method: string,
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<RestReply> {
  const res = await fetch(`${server.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers }
}

/** Asserts a success body is exactly what the route's OpenAPI response schema describes (no missing, no extra keys); returns it. */
export function conforms(method: string, route: string, reply: { status: number; body: ParsedJson }): ParsedJson {
  const spec = REST_ROUTES.find((r) => r.method === method && r.path === route)
  const schema = spec?.responses[reply.status as 200 | 201 | 202]?.schema
  if (!schema) throw new Error(`${method} ${route} documents no ${reply.status} response (body: ${JSON.stringify(reply.body)})`)
  expect(schema.parse(reply.body)).toEqual(reply.body)
  return reply.body
}
