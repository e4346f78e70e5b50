import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { describeValue, invalidInput } from '../../core/errors.js'
import { inputObject, parseInput, projectField } from '../../core/schemas.js'
import { z } from 'zod'
import { SURFACE_AGENTS, type AgentName } from '../../core/types.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import { requireKnownProject } from '../../engine/projects.js'
import { createMcpServer } from '../mcp/mcp-server.js'

const mcpQuery = inputObject({ project: projectField.optional(), agent: z.enum(SURFACE_AGENTS).optional() })

/**
 * The default project of an MCP request: `?project=` on the URL, checked like
 * a `project` argument (a name or an absolute path), or undefined.
 *
 * @throws {MnemoError} `INVALID_INPUT` — given twice, blank, or a relative path.
 */
async function urlScope(url: URL, engine: MnemoEngine): Promise<{ project: string | undefined; agent: AgentName | undefined }> {
  const one = (key: string): string | undefined => {
    const given = url.searchParams.getAll(key)
    if (given.length > 1) throw invalidInput(key, `${key} is given more than once (got ${describeValue(given)})`)
    return given[0]
  }
  const [project, agent] = [one('project'), one('agent')]
  const q = parseInput(
    mcpQuery,
    { ...(project !== undefined ? { project } : {}), ...(agent !== undefined ? { agent } : {}) },
    'query string',
  )
  return {
    project: q.project === undefined ? undefined : await requireKnownProject(engine, q.project),
    agent: q.agent,
  }
}

/**
 * Answers one POST to `/mcp`: MCP over streamable HTTP in stateless mode,
 * with JSON responses. Each request gets its own MCP server and transport
 * (the SDK's stateless transport serves one request), around the shared
 * engine, with the same tools as `mnemo mcp`. There is no working directory:
 * tools take their project from their `project` argument or `?project=`;
 * with neither they answer with an `isError` result.
 *
 * @param maxBodyBytes - Largest body the transport reads (the app's body limit applies first).
 */
export async function handleMcpPost(request: Request, engine: MnemoEngine, maxBodyBytes: number): Promise<Response> {
  const { project, agent } = await urlScope(new URL(request.url), engine)
  // MCP is agent-facing: under agent isolation a call that names no agent would read every agent's data.
  if (engine.agentScope === 'own' && agent === undefined)
    throw invalidInput(
      'agent',
      'this server isolates agents (MNEMO_AGENT_SCOPE=own): add ?agent=<claude-code|codex|gemini|cursor|opencode> to the /mcp URL',
    )
  const server = createMcpServer(
    agent === undefined ? engine : engine.scoped({ agent }),
    undefined,
    project === undefined ? {} : { project },
  )
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true, maxRequestBodySize: maxBodyBytes })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request)
  } finally {
    await server.close()
  }
}

/** The answer to GET and DELETE on `/mcp`: this server keeps no sessions and opens no server-sent stream. */
export function mcpMethodNotAllowed(): Response {
  return Response.json(
    {
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; POST JSON-RPC messages to /mcp' },
      id: null,
    },
    { status: 405, headers: { allow: 'POST' } },
  )
}
