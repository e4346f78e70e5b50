/**
 * mnemo's MCP memory tools, one registration each: `memory_recall`, `memory_remember`, `memory_forget`,
 * `memory_sessions`, `memory_context`, `memory_show`, `memory_timeline`, `memory_export`, `memory_status`.
 * Inputs are the shared schemas of core/schemas.ts; outputs the views every surface returns.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { toIso } from '../../core/clock.js'
import { MnemoError } from '../../core/errors.js'
import { idPrefix } from '../../core/ids.js'
import {
  contextInput,
  exportInput,
  forgetInput,
  projectField,
  recallInput,
  rememberInput,
  sessionsInput,
  showInput,
  timelineInput,
} from '../../core/schemas.js'
import { forgottenJson, hitJson, toHitJson, toMemoryJson, toObservationJson, toSessionJson } from '../../engine/views.js'
import { mcpStatus, mcpStatusJson } from './mcp-resources.js'
import type { McpToolContext } from './mcp-scope.js'

/** Registers every memory tool on `server`, in the order clients list them. */
export function registerMemoryTools(server: McpServer, ctx: McpToolContext): void {
  registerRecallTool(server, ctx)
  registerRememberTool(server, ctx)
  registerForgetTool(server, ctx)
  registerSessionsTool(server, ctx)
  registerContextTool(server, ctx)
  registerShowTool(server, ctx)
  registerTimelineTool(server, ctx)
  registerExportTool(server, ctx)
  registerStatusTool(server, ctx)
}

/** `memory_recall`. */
function registerRecallTool(server: McpServer, { engine, readScope, projectArg, handler }: McpToolContext): void {
  server.registerTool(
    'memory_recall',
    {
      title: 'Recall memory',
      description:
        'Search what earlier sessions of this project did and decided (prompts, tool calls, errors, messages, stored memories). Returns compact hits, best first; expand one with memory_show.',
      inputSchema: { query: recallInput.shape.query, project: projectArg, limit: recallInput.shape.limit },
      // The hit view every surface returns (REST, CLI --json): `sessionId`, ISO `time`, `flags` (why suspect text is data).
      outputSchema: { hits: z.array(hitJson), warnings: z.array(z.string()) },
    },
    handler(recallInput, async ({ query, project, limit }) => {
      const hits = await engine.recall(query, { projectIds: await readScope(project), limit: limit ?? 10 })
      return { hits: hits.map((h) => toHitJson(h)), warnings: [...hits.warnings] }
    }),
  )
}

/** `memory_remember`. */
function registerRememberTool(server: McpServer, { engine, writeRef, projectArg, handler }: McpToolContext): void {
  server.registerTool(
    'memory_remember',
    {
      title: 'Remember',
      description: 'Store a durable memory for this project: a decision, fact, preference or lesson worth knowing in later sessions.',
      inputSchema: { ...rememberInput.shape, project: projectArg },
      outputSchema: { created: z.boolean(), id: z.string(), kind: z.string(), text: z.string() },
    },
    handler(rememberInput, async ({ text, kind, project, scope }) => {
      const where = scope === 'user' ? { scope } : { project: await writeRef(project) }
      const { memory, created } = await engine.remember(text, {
        kind: kind ?? 'fact',
        ...where,
        ...(engine.agent !== undefined ? { agent: engine.agent } : {}),
      })
      return { created, id: memory.id, kind: memory.kind, text: memory.text }
    }),
  )
}

/** `memory_forget`. */
function registerForgetTool(server: McpServer, { engine, assertInScope, projectArg, handler }: McpToolContext): void {
  server.registerTool(
    'memory_forget',
    {
      title: 'Forget',
      description:
        'Forget one observation or memory by id (obs_… or mem_…), from every index. Forgetting the newest version of a memory makes the previous one current again (returned as `restored`); pass chain: true to forget every version.',
      inputSchema: { ...forgetInput.shape, project: projectArg },
      outputSchema: forgottenJson.shape,
    },
    handler(forgetInput.safeExtend({ project: projectField.optional() }), async ({ id, project, chain }) => {
      // A malformed id or a session id gets forget's own message.
      if (idPrefix(id) === 'obs' || idPrefix(id) === 'mem') await assertInScope(id, project)
      return { forgotten: await engine.forget(id, 'mcp', { chain: chain ?? false }) }
    }),
  )
}

/** `memory_sessions`. */
function registerSessionsTool(server: McpServer, { engine, readScope, projectArg, handler }: McpToolContext): void {
  server.registerTool(
    'memory_sessions',
    {
      title: 'List sessions',
      description: "This project's recorded sessions, newest first.",
      inputSchema: { ...sessionsInput.shape, project: projectArg },
      outputSchema: {
        sessions: z.array(
          z.object({
            id: z.string(),
            agent: z.string(),
            user: z.string().nullable(),
            startedAt: z.string(),
            lastEventAt: z.string(),
            title: z.string().nullable(),
            observations: z.number(),
          }),
        ),
      },
    },
    handler(sessionsInput, async ({ project, limit }) => ({
      sessions: (await engine.sessions({ projectIds: await readScope(project), limit: limit ?? 20 })).map((s) => ({
        id: s.id,
        agent: s.agent,
        user: s.user ?? null,
        startedAt: toIso(s.startedAt),
        lastEventAt: toIso(s.lastEventAt),
        title: s.title ?? null,
        observations: s.observationCount,
      })),
    })),
  )
}

/** `memory_context`. */
function registerContextTool(server: McpServer, { engine, writeRef, projectArg, handler }: McpToolContext): void {
  server.registerTool(
    'memory_context',
    {
      title: 'Project context',
      description: "The context block for this project: recent sessions' digests and key memories, under a token budget.",
      inputSchema: { ...contextInput.shape, project: projectArg },
      outputSchema: { project: z.string(), tokens: z.number(), text: z.string() },
    },
    handler(contextInput, async ({ project, budget }) => {
      const block = await engine.context({
        project: await writeRef(project, { create: false }),
        ...(budget !== undefined ? { budgetTokens: budget } : {}),
      })
      return { project: block.project, tokens: block.tokens, text: block.text }
    }),
  )
}

/** `memory_show`. */
function registerShowTool(server: McpServer, { engine, handler }: McpToolContext): void {
  server.registerTool(
    'memory_show',
    {
      title: 'Show by id',
      description: 'Expand an observation (obs_…), memory (mem_…) or session (ses_…) returned by memory_recall or memory_sessions.',
      inputSchema: showInput.shape,
    },
    handler(showInput, async ({ id }) => {
      // An id names one item wherever it is (a recall that named another project returned it); reading it changes nothing.
      // The same views as every other surface: no internal fields (event sequence numbers, raw epoch times).
      const r = await engine.show(id)
      if (r.type === 'observation') return { type: r.type, observation: toObservationJson(r.observation, r.project) }
      if (r.type === 'memory') return { type: r.type, memory: toMemoryJson(r.memory, r.project) }
      return {
        type: r.type,
        session: toSessionJson(r.detail.session, r.detail.project),
        observations: r.detail.observations
          .slice(0, 200)
          .map((o) => ({ ...toObservationJson(o, r.detail.project), text: o.text.slice(0, 500) })),
      }
    }),
  )
}

/** `memory_timeline`. */
function registerTimelineTool(server: McpServer, { assertInScope, projectArg, handler }: McpToolContext): void {
  server.registerTool(
    'memory_timeline',
    {
      title: 'Session timeline',
      description:
        "A session's observations in time order (prompts, tool calls, errors, messages), a page at a time; ids expand with memory_show.",
      inputSchema: { ...timelineInput.shape, project: projectArg },
      outputSchema: {
        session: z.string(),
        total: z.number(),
        observations: z.array(
          z.object({
            id: z.string(),
            kind: z.string(),
            role: z.string(),
            time: z.string(),
            tool: z.string().nullable(),
            text: z.string(),
            flags: z.array(z.string()),
          }),
        ),
      },
    },
    handler(timelineInput.safeExtend({ project: projectField.optional() }), async ({ session, offset, limit, project }) => {
      const r = await assertInScope(session, project)
      if (r.type !== 'session')
        throw new MnemoError('INVALID_INPUT', `memory_timeline needs a session id (ses_…) (got ${JSON.stringify(session)})`, {
          details: { path: 'session' },
        })
      const start = offset ?? 0
      const page = r.detail.observations.slice(start, start + (limit ?? 50))
      return {
        session,
        total: r.detail.observations.length,
        observations: page.map((o) => ({
          id: o.id,
          kind: o.kind,
          role: o.role,
          time: toIso(o.ts),
          tool: o.tool ?? null,
          text: o.text.slice(0, 1000),
          flags: o.flags,
        })),
      }
    }),
  )
}

/** `memory_export`. */
function registerExportTool(server: McpServer, { engine, writeRef, projectArg, handler }: McpToolContext): void {
  server.registerTool(
    'memory_export',
    {
      title: 'Export memories',
      description:
        "This project's memories as Markdown (memories by kind, superseded versions struck through), or its full event log as mnemo's JSONL export.",
      inputSchema: { ...exportInput.shape, project: projectArg },
      outputSchema: { project: z.string(), format: z.string(), text: z.string() },
    },
    handler(exportInput.safeExtend({ project: projectField.optional() }), async ({ format, project }) => {
      const ref = await writeRef(project, { create: false })
      const known = (await engine.listProjects()).find((p) => p.root === ref.root)
      if (!known) return { project: ref.name, format: format ?? 'markdown', text: '' }
      if ((format ?? 'markdown') === 'markdown')
        return { project: known.name, format: 'markdown', text: [...(await engine.exportMarkdown({ project: known })).values()][0] ?? '' }
      const lines: string[] = []
      await engine.exportJsonl((line) => lines.push(line), { project: known })
      return { project: known.name, format: 'jsonl', text: `${lines.join('\n')}\n` }
    }),
  )
}

/** `memory_status`. */
function registerStatusTool(server: McpServer, { engine, handler }: McpToolContext): void {
  server.registerTool(
    'memory_status',
    {
      title: 'Status',
      description: 'Counts of what mnemo holds.',
      inputSchema: {},
      outputSchema: mcpStatusJson.shape,
    },
    handler(z.object({}), () => mcpStatus(engine)),
  )
}
