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
  return server
}

/**
 * Removes the `$schema` (draft-07) declarations the SDK adds to every tool's
 * input and output schema: strict MCP clients reject them, and the schemas
 * use only widely supported keywords anyway. Wraps the SDK's own tools/list
 * handler (registered by the first registerTool).
 */
function stripSchemaDialect(server: McpServer): void {
  const inner = server.server as unknown as {
    _requestHandlers: Map<string, (request: unknown, extra: unknown) => Promise<{ tools: Record<string, unknown>[] }>>
  }
  const list = inner._requestHandlers.get('tools/list')
  if (!list) return
  inner._requestHandlers.set('tools/list', async (request, extra) => {
    const result = await list(request, extra)
    for (const tool of result.tools) {
      for (const key of ['inputSchema', 'outputSchema']) {
        const schema = tool[key] as Record<string, unknown> | undefined
        if (schema) delete schema['$schema']
      }
    }
    return result
  })
}
