import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { MnemoEnv } from '../../config/config.js'
import { MnemoError } from '../../core/errors.js'
import type { AgentName } from '../../core/types.js'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { createMcpServer } from './mcp-server.js'

export { createMcpServer }

/**
 * Runs the MCP server on stdin/stdout until the client disconnects.
 *
 * @param options.agent - The agent that launched it (`mnemo connect` writes `--agent <name>`): what it remembers is
 *   marked as that agent's, and under agent isolation (`MNEMO_AGENT_SCOPE=own`) it reads that agent's data only.
 * @throws {MnemoError} `CONFIG_INVALID` — agent isolation is on and no agent is given (it would otherwise read every agent's data).
 */
export async function serveMcpStdio(options: { env: MnemoEnv; cwd: string; home?: string; agent?: AgentName }): Promise<void> {
  const opened = openMnemo({ env: options.env, cwd: options.cwd, ...(options.home ? { home: options.home } : {}) })
  if (opened.config.agentScope === 'own' && options.agent === undefined) {
    await opened.close()
    throw new MnemoError(
      'CONFIG_INVALID',
      'MNEMO_AGENT_SCOPE=own needs the agent: run `mnemo mcp --agent <name>` (`mnemo connect <agent>` writes it)',
      { details: { keys: ['MNEMO_AGENT_SCOPE'] } },
    )
  }
  // Each request first stores what the agent's hooks spooled (deferred capture of tool events), as each CLI command does.
  const server = createMcpServer(options.agent ? opened.engine.scoped({ agent: options.agent }) : opened.engine, options.cwd, {
    ...(options.env['MNEMO_SERVER_URL'] ? {} : { beforeRequest: () => opened.drainSpool() }),
  })
  const transport = new StdioServerTransport()
  await new Promise<void>((resolve, reject) => {
    transport.onclose = () => resolve()
    // A stdio session ends when the client closes our stdin (the transport does not
    // report that). Let the requests already read finish (the embedded store answers
    // synchronously behind its promises, so they are done once pending promise jobs have run), then stop.
    process.stdin.once('end', () => setImmediate(resolve))
    server
      .connect(transport)
      .then(() => answerUnreadableLines(transport))
      .catch(reject)
  })
  await opened.close()
}

/**
 * Answers a line the transport could not read as JSON-RPC, which the SDK's stdio transport only reports to
 * `onerror`: JSON-RPC 2.0 §5.1 wants a response with a null id, -32700 (parse error) for a line that is not
 * JSON, -32600 (invalid request) for JSON that is not a JSON-RPC message. A client waiting on it stops waiting;
 * later lines are read as before.
 */
function answerUnreadableLines(transport: StdioServerTransport): void {
  const reported = transport.onerror
  transport.onerror = (error: Error) => {
    reported?.(error)
    const code = error instanceof SyntaxError ? -32700 : error.name === 'ZodError' ? -32600 : undefined
    if (code === undefined) return
    const message = code === -32700 ? `Parse error: ${error.message}` : 'Invalid Request: not a JSON-RPC 2.0 message'
    // The SDK's message type has no null id; the specification requires one here.
    void transport
      .send({ jsonrpc: '2.0', id: null, error: { code, message } } as unknown as Parameters<StdioServerTransport['send']>[0])
      .catch(() => {})
  }
}
