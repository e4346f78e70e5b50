import { z } from 'zod'
import { DEFAULT_HOST, DEFAULT_PORT } from '../../config/config.js'
import { idField, projectField } from '../../core/schemas.js'
import { errorBodySchema } from './error-response.js'
import { REST_ROUTES, SERVER_VERSION, streamQuery, type AnyRestRoute } from './rest-routes.js'

type Json = Record<string, unknown>

/** The JSON Schema (2020-12, as OpenAPI 3.1 uses) of a zod schema, without `$schema`. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as Json
  return rest
}

const ERROR_RESPONSES: Record<number, { name: string; description: string }> = {
  400: {
    name: 'BadRequest',
    description:
      'Invalid input (INVALID_INPUT): the message names the key path and the value, e.g. `limit must be an integer 1–100 (got 0)`.',
  },
  401: {
    name: 'Unauthorized',
    description:
      'No bearer token, or neither the server token (<MNEMO_HOME>/server-token) nor a current user token (`mnemo user add`) (UNAUTHORIZED).',
  },
  403: {
    name: 'Forbidden',
    description:
      "Not allowed with this token or agent: a user's token importing a server path, an agent under agent isolation exporting the raw log (FORBIDDEN).",
  },
  404: { name: 'NotFound', description: 'No such id, project or route (NOT_FOUND).' },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than the limit, 1 MiB by default (PAYLOAD_TOO_LARGE).' },
  422: { name: 'ImportFailed', description: 'Not one valid record in what was imported (IMPORT_FAILED).' },
  500: { name: 'Internal', description: 'An unexpected failure (INTERNAL), or mnemo is misconfigured (CONFIG_INVALID).' },
}

const errorRef = (status: number): Json => ({ $ref: `#/components/responses/${ERROR_RESPONSES[status]!.name}` })

/** The operation object of one REST route. */
function operation(route: AnyRestRoute): Json {
  const parameters: Json[] = []
  for (const [, name] of route.path.matchAll(/:(\w+)/g)) {
    parameters.push({ name, in: 'path', required: true, schema: jsonSchema(idField, 'input') })
  }
  if (route.query) {
    const query = jsonSchema(route.query as z.ZodType, 'input')
    const required = new Set((query['required'] as string[] | undefined) ?? [])
    if (route.projectRequired) required.add('project')
    for (const [name, prop] of Object.entries((query['properties'] as Record<string, Json> | undefined) ?? {})) {
      const { description, ...schema } = prop
      parameters.push({ name, in: 'query', required: required.has(name), ...(description ? { description } : {}), schema })
    }
  }
  const op: Json = { operationId: route.operationId, summary: route.summary }
  if (route.description) op['description'] = route.description
  if (route.public) op['security'] = []
  if (parameters.length > 0) op['parameters'] = parameters
  if (route.body) {
    const body = jsonSchema(route.body as z.ZodType, 'input')
    if (route.projectRequired) body['required'] = [...new Set([...((body['required'] as string[] | undefined) ?? []), 'project'])]
    op['requestBody'] = { required: true, content: { 'application/json': { schema: body } } }
  }
  const responses: Json = {}
  for (const [status, r] of Object.entries(route.responses)) {
    if (r) responses[status] = { description: r.description, content: { 'application/json': { schema: jsonSchema(r.schema, 'output') } } }
  }
  const errors = new Set<number>([...route.errors, ...(route.public ? [] : [401]), 500])
  for (const status of [...errors].sort((a, b) => a - b)) responses[String(status)] = errorRef(status)
  op['responses'] = responses
  return op
}

/** The MCP endpoint, described for completeness (its tools are listed by MCP itself). */
function mcpOperation(): Json {
  return {
    operationId: 'mcp',
    summary: 'MCP over streamable HTTP (stateless; JSON responses)',
    description:
      'The tools of `mnemo mcp` (memory_recall, memory_remember, memory_forget, memory_sessions, memory_context, memory_show, memory_status) for MCP clients. ' +
      'There is no working directory over HTTP: a project-scoped tool needs a `project` argument or `?project=` on this URL; with neither it returns an isError result. GET and DELETE answer 405 (no sessions, no server-sent stream).',
    parameters: [
      {
        name: 'project',
        in: 'query',
        required: false,
        description: 'Default project for tool calls that name none.',
        schema: jsonSchema(projectField, 'input'),
      },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            description: 'A JSON-RPC 2.0 message or batch.',
            oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }],
          },
        },
      },
    },
    responses: {
      '200': { description: 'The JSON-RPC response(s).', content: { 'application/json': { schema: { type: ['object', 'array'] } } } },
      '202': { description: 'A notification or response was accepted.' },
      '400': errorRef(400),
      '401': errorRef(401),
      '413': errorRef(413),
      '500': errorRef(500),
    },
  }
}

/** GET /v1/stream: server-sent events, outside the JSON route table. */
function streamOperation(): Json {
  const query = jsonSchema(streamQuery, 'input')
  const parameters = Object.entries((query['properties'] as Record<string, Json> | undefined) ?? {}).map(([name, prop]) => {
    const { description, ...schema } = prop
    return { name, in: 'query', required: name === 'project', ...(description ? { description } : {}), schema }
  })
  parameters.push({
    name: 'Last-Event-ID',
    in: 'header',
    required: false,
    description: 'Resume after this event sequence number (the `id:` of the last event received).',
    schema: { type: 'string', pattern: '^[0-9]{1,15}$' },
  })
  return {
    operationId: 'streamObservations',
    summary: 'New observations of a project as they are captured (server-sent events)',
    description:
      'A text/event-stream that stays open. First `event: ready` (data `{"seq": n}`: where the stream starts), then one `event: observation` per new observation, ' +
      '`id:` its event sequence number and `data:` the observation as GET /v1/observations lists it; `: ping` comments keep a quiet stream open. ' +
      'Reconnect with `Last-Event-ID` to get what was missed. Observations captured by hooks in other processes arrive too (the log is read every 500 ms).',
    parameters,
    responses: {
      '200': { description: 'The event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
      '400': errorRef(400),
      '401': errorRef(401),
      '404': errorRef(404),
      '500': errorRef(500),
    },
  }
}

/**
 * Builds the OpenAPI 3.1 document of `mnemo serve` from the route table and
 * its zod schemas. Deterministic (no host, port or time in it): the server
 * serves it at `GET /v1/openapi.json` and the same document is checked in as
 * `docs/openapi.json` (a test keeps them equal).
 */
export function buildOpenApiDocument(routes: readonly AnyRestRoute[] = REST_ROUTES): Json {
  const paths: Record<string, Json> = {}
  for (const route of routes) {
    const p = route.path.replace(/:(\w+)/g, '{$1}')
    paths[p] = { ...paths[p], [route.method.toLowerCase()]: operation(route) }
  }
  paths['/v1/stream'] = { get: streamOperation() }
  paths['/mcp'] = { post: mcpOperation() }
  const responses: Json = {}
  for (const { name, description } of Object.values(ERROR_RESPONSES)) {
    responses[name] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'mnemo',
      version: SERVER_VERSION,
      description:
        'The HTTP API of `mnemo serve`: REST under /v1 and MCP at /mcp, on one port (default 127.0.0.1:7077). ' +
        'Every route but GET /v1/health needs `Authorization: Bearer <token>`: the server token, the content of <MNEMO_HOME>/server-token (created on first start, mode 0600), or a user token from `mnemo user add <name>`, which reads and writes as that user only. ' +
        'Errors are `{ "error": { "code", "message", "hint" } }`. Routes that search or write a project require `project` (a project name or an absolute path inside it): a missing project never means every project.',
    },
    servers: [{ url: `http://${DEFAULT_HOST}:${DEFAULT_PORT}`, description: 'The default address of `mnemo serve`' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'The content of <MNEMO_HOME>/server-token.' } },
      schemas: { Error: jsonSchema(errorBodySchema, 'output') },
      responses,
    },
  }
}
