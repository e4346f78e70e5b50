import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import { registerFactTools } from './mcp-facts.js'
import { registerResourcesAndPrompts } from './mcp-resources.js'
import { createMcpToolContext } from './mcp-scope.js'
import { registerMemoryTools } from './mcp-tools.js'

/** Options of `createMcpServer`. */
interface McpServerOptions {
  /**
   * Project used when a tool call names none. For a server with no working
   * directory (MCP over HTTP, where it comes from the URL's `?project=`).
   */
  project?: string
  /**
   * Runs before each tool call, resource read and prompt (awaited; what it throws is ignored): the stdio server drains
   * the hook spool there, so what the agent's hooks deferred this turn (deferred capture) is recalled too.
   */
  beforeRequest?: () => Promise<unknown>
}

/**
 * Builds mnemo's MCP server around an engine: the memory tools (`memory_recall`,
 * `memory_remember`, `memory_forget`, `memory_sessions`, `memory_context`,
 * `memory_show`, `memory_timeline`, `memory_export`, `memory_status`;
 * mcp-tools.ts), the fact tools (mcp-facts.ts), and the resources and prompts
 * (mcp-resources.ts). Every tool is scoped to one project (mcp-scope.ts): the
 * `project` argument, or the project of `cwd` — never all projects at once.
 * Domain errors come back as tool results with `isError`, readable by the model.
 *
 * Tool inputs are the shared schemas of core/schemas.ts: the SDK checks their
 * shape (types, required keys) and rejects a malformed call; the handler
 * checks their limits, so an out-of-range value gets the same message as on
 * every other surface (`Invalid arguments: limit must be an integer 1–100 (got 0)`).
 *
 * @param cwd - The agent's working directory (MCP clients start the server in the project).
 *   `undefined` for a server with no working directory (HTTP): a scoped tool called without
 *   a `project` (and no `options.project`) returns an `isError` result saying a project is
 *   required, and a project given as a path must be absolute.
 */
export function createMcpServer(engine: MnemoEngine, cwd: string | undefined, options: McpServerOptions = {}): McpServer {
  const server = new McpServer({ name: 'mnemo', version: '0.1.0' })
  const ctx = createMcpToolContext(engine, cwd, options.project)
  registerMemoryTools(server, ctx)
  registerFactTools(server, engine, ctx)
  registerResourcesAndPrompts(server, engine, ctx)
  stripSchemaDialect(server)
  if (options.beforeRequest) runBeforeRequests(server, options.beforeRequest)
  return server
}

/** The requests that read or change memory: `beforeRequest` runs before each. */
const MEMORY_REQUESTS = ['tools/call', 'resources/read', 'prompts/get'] as const

/** Makes `before` run before each of `MEMORY_REQUESTS` (their SDK handlers are registered by then); a failure of it is ignored. */
function runBeforeRequests(server: McpServer, before: () => Promise<unknown>): void {
  for (const method of MEMORY_REQUESTS)
    wrapHandler(server, method, (handler) => async (request, extra) => {
      try {
        await before()
      } catch {
        // The request is answered from what is stored; the spool waits for the next drain.
      }
      return handler(request, extra)
    })
}

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>

/**
 * Replaces the SDK's handler of `method` with `wrap(handler)`; nothing when none is registered. The SDK has no public
 * hook around its handlers, so this reads its request map (`Protocol._requestHandlers` of @modelcontextprotocol/sdk 1.x).
 */
function wrapHandler(server: McpServer, method: string, wrap: (handler: RequestHandler) => RequestHandler): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, RequestHandler> })._requestHandlers
  const handler = handlers.get(method)
  if (handler) handlers.set(method, wrap(handler))
}

/**
 * Removes the `$schema` (draft-07) declarations the SDK adds to every tool's
 * input and output schema: strict MCP clients reject them, and the schemas
 * use only widely supported keywords anyway. Wraps the SDK's own tools/list
 * handler (registered by the first registerTool).
 */
function stripSchemaDialect(server: McpServer): void {
  wrapHandler(server, 'tools/list', (list) => async (request, extra) => {
    const result = (await list(request, extra)) as { tools: Record<string, unknown>[] }
    for (const tool of result.tools) {
      for (const key of ['inputSchema', 'outputSchema']) {
        const schema = tool[key] as Record<string, unknown> | undefined
        if (schema) delete schema['$schema']
      }
    }
    return result
  })
}
