import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { MnemoEnv } from '../../config/config.js'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { createMcpServer } from '../shared/mcp-server.js'

export { createMcpServer }

/** Runs the MCP server on stdin/stdout until the client disconnects. */
export async function serveMcpStdio(options: { env: MnemoEnv; cwd: string; home?: string }): Promise<void> {
  const opened = openMnemo({ env: options.env, cwd: options.cwd, ...(options.home ? { home: options.home } : {}) })
  const server = createMcpServer(opened.engine, options.cwd)
  const transport = new StdioServerTransport()
  await new Promise<void>((resolve, reject) => {
    transport.onclose = () => resolve()
    // A stdio session ends when the client closes our stdin (the transport does not
    // report that). Let the requests already read finish (the engine is synchronous,
    // so they are done once pending promise jobs have run), then stop.
    process.stdin.once('end', () => setImmediate(resolve))
    server.connect(transport).catch(reject)
  })
  opened.close()
}
