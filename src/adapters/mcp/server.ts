import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { toIso } from '../../core/clock.js'
import type { ProjectId } from '../../core/ids.js'
import { MEMORY_KINDS, type ProjectRef } from '../../core/types.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import type { MnemoEnv } from '../../config/config.js'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { errorResult, okResult } from './tool-result.js'

const projectArg = z
  .string()
  .min(1)
  .max(4096)
  .optional()
  .describe("Project name or a path inside it. Default: the project of the agent's working directory.")

/**
 * Builds mnemo's MCP server around an engine: tools `memory_recall`,
 * `memory_remember`, `memory_forget`, `memory_sessions`, `memory_context`,
 * `memory_show`, `memory_status`. Every tool is scoped to one project: the
 * `project` argument, or the project of `cwd` — never all projects at once.
 * Domain errors come back as tool results with `isError`, readable by the model.
 *
 * @param cwd - The agent's working directory (MCP clients start the server in the project).
 */
export function createMcpServer(engine: MnemoEngine, cwd: string): McpServer {
  const server = new McpServer({ name: 'mnemo', version: '0.1.0' })
  const defaultProject = (): ProjectRef => engine.projectForPath(cwd)
  const readScope = (project: string | undefined): ProjectId[] => {
    if (project !== undefined) return engine.resolveProjects(project).map((p) => p.id)
    const ref = defaultProject()
    const found = engine.listProjects().find((p) => p.root === ref.root)
    // A project with nothing captured yet: search nothing rather than everything.
    return found ? [found.id] : ['prj_none' as ProjectId]
  }
  const safely =
    <A>(fn: (args: A) => Record<string, unknown> | Promise<Record<string, unknown>>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        return okResult(await fn(args))
      } catch (error) {
        return errorResult(error)
      }
    }

  server.registerTool(
    'memory_recall',
    {
      title: 'Recall memory',
      description:
        'Search what earlier sessions of this project did and decided (prompts, tool calls, errors, messages, stored memories). Returns compact hits, best first; expand one with memory_show.',
      inputSchema: {
        query: z.string().min(1).max(16000).describe('What to look for: words, identifiers, file paths or CJK text.'),
        project: projectArg,
        limit: z.number().int().min(1).max(100).optional().describe('Most hits, 1–100. Default 10.'),
      },
    },
    safely(async ({ query, project, limit }: { query: string; project?: string | undefined; limit?: number | undefined }) => ({
      hits: (await engine.recall(query, { projectIds: readScope(project), limit: limit ?? 10 })).map((h) => ({
        id: h.id,
        kind: h.kind,
        project: h.project,
        session: h.sessionId ?? null,
        time: toIso(h.ts),
        score: Number(h.score.toFixed(4)),
        snippet: h.snippet,
      })),
    })),
  )

  server.registerTool(
    'memory_remember',
    {
      title: 'Remember',
      description: 'Store a durable memory for this project: a decision, fact, preference or lesson worth knowing in later sessions.',
      inputSchema: {
        text: z.string().min(1).max(16000),
        kind: z.enum(MEMORY_KINDS as [string, ...string[]]).optional().describe('decision | fact | preference | lesson. Default fact.'),
        project: projectArg,
      },
    },
    safely(({ text, kind, project }: { text: string; kind?: string | undefined; project?: string | undefined }) => {
      const ref = project === undefined ? defaultProject() : engine.projectForWrite(project)
      const { memory, created } = engine.remember(text, { kind: (kind ?? 'fact') as never, project: ref })
      return { created, id: memory.id, kind: memory.kind, text: memory.text }
    }),
  )

  server.registerTool(
    'memory_forget',
    {
      title: 'Forget',
      description: 'Forget one observation or memory by id (obs_… or mem_…), from every index.',
      inputSchema: { id: z.string().min(1).max(64) },
    },
    safely(({ id }: { id: string }) => ({ forgotten: engine.forget(id) })),
  )

  server.registerTool(
    'memory_sessions',
    {
      title: 'List sessions',
      description: "This project's recorded sessions, newest first.",
      inputSchema: { project: projectArg, limit: z.number().int().min(1).max(200).optional() },
    },
    safely(({ project, limit }: { project?: string | undefined; limit?: number | undefined }) => ({
      sessions: engine.sessions({ projectIds: readScope(project), limit: limit ?? 20 }).map((s) => ({
        id: s.id,
        agent: s.agent,
        startedAt: toIso(s.startedAt),
        lastEventAt: toIso(s.lastEventAt),
        title: s.title ?? null,
        observations: s.observationCount,
      })),
    })),
  )

  server.registerTool(
    'memory_context',
    {
      title: 'Project context',
      description: "The context block for this project: recent sessions' digests and key memories, under a token budget.",
      inputSchema: { project: projectArg, budget: z.number().int().min(200).max(100000).optional().describe('Token budget. Default 2000.') },
    },
    safely(({ project, budget }: { project?: string | undefined; budget?: number | undefined }) => {
      const ref = project === undefined ? defaultProject() : engine.projectForWrite(project)
      const block = engine.context({ project: ref, ...(budget !== undefined ? { budgetTokens: budget } : {}) })
      return { project: block.project, tokens: block.tokens, text: block.text }
    }),
  )

  server.registerTool(
    'memory_show',
    {
      title: 'Show by id',
      description: 'Expand an observation (obs_…), memory (mem_…) or session (ses_…) returned by memory_recall or memory_sessions.',
      inputSchema: { id: z.string().min(1).max(64) },
    },
    safely(({ id }: { id: string }) => {
      const r = engine.show(id)
      if (r.type === 'observation') return { type: r.type, project: r.project?.name ?? null, ...r.observation, time: toIso(r.observation.ts) }
      if (r.type === 'memory') return { type: r.type, project: r.project?.name ?? null, ...r.memory, createdAt: toIso(r.memory.createdAt) }
      return {
        type: r.type,
        session: { ...r.detail.session, startedAt: toIso(r.detail.session.startedAt), lastEventAt: toIso(r.detail.session.lastEventAt) },
        observations: r.detail.observations.slice(0, 200).map((o) => ({ id: o.id, kind: o.kind, time: toIso(o.ts), text: o.text.slice(0, 500) })),
      }
    }),
  )

  server.registerTool(
    'memory_status',
    { title: 'Status', description: 'Counts of what mnemo holds.', inputSchema: {} },
    safely(() => ({ ...engine.stats() })),
  )
  return server
}

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
