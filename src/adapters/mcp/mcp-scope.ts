/**
 * How mnemo's MCP tools scope a call: the engine, the project a call's `project` argument (or the working
 * directory, or the server's default project) means, and the handler wrapper that parses arguments and maps errors.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { z } from 'zod'
import { MnemoError } from '../../core/errors.js'
import { NO_PROJECT_YET, type ProjectId } from '../../core/ids.js'
import { parseInput, projectField } from '../../core/schemas.js'
import type { ProjectRef } from '../../core/types.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import { requireKnownProject } from '../../engine/projects.js'
import { errorResult, okResult } from './tool-result.js'

/** What every tool registration gets (see {@link createMcpToolContext}). */
export interface McpToolContext {
  engine: MnemoEngine
  /** The projects a read with this `project` argument searches. */
  readScope: (project: string | undefined) => Promise<ProjectId[]>
  /** The one project a call means: a write creates a named project that is new; a read (`create: false`) refuses an unknown name. */
  writeRef: (project: string | undefined, options?: { create?: boolean }) => Promise<ProjectRef>
  /**
   * What `id` names, when it is in the call's project scope.
   * @throws {MnemoError} `NOT_FOUND` — no such item, or one of another project (the hint names it).
   */
  assertInScope: (id: string, project: string | undefined) => ReturnType<MnemoEngine['show']>
  /** The optional `project` argument every scoped tool takes, described for this server (with or without a working directory). */
  projectArg: z.ZodType
  /** A tool handler: parses the arguments with `schema` (limits included), runs `fn`, maps errors to an `isError` result. */
  handler: <S extends z.ZodType>(
    schema: S,
    fn: (input: z.output<S>) => Record<string, unknown> | Promise<Record<string, unknown>>,
  ) => (args: unknown) => Promise<CallToolResult>
}

/**
 * The scoping of a server around `engine`: `cwd` is the agent's working directory (undefined for a server with
 * none, over HTTP), `defaultProject` the project a call naming none means (the URL's `?project=`).
 */
export function createMcpToolContext(engine: MnemoEngine, cwd: string | undefined, defaultProject: string | undefined): McpToolContext {
  /** Where a call with `project` argument `arg` is scoped: a named project, or the working directory's. */
  const scopeOf = async (arg: string | undefined): Promise<{ project: string } | { cwd: string }> => {
    const named = arg ?? defaultProject
    if (cwd === undefined)
      return {
        project: await requireKnownProject(engine, named, 'pass a `project` argument or add ?project=<name> to the server URL'),
      }
    return named === undefined ? { cwd } : { project: named }
  }
  const readScope = async (project: string | undefined): Promise<ProjectId[]> => {
    const scope = await scopeOf(project)
    if ('project' in scope) return (await engine.resolveProjects(scope.project)).map((p) => p.id)
    // The agent's working directory: outside git, the folder itself (as its hooks file it), never a project containing it.
    const ref = await engine.projectForPath(scope.cwd, { workingDir: true })
    const found = (await engine.listProjects()).find((p) => p.root === ref.root)
    // A project with nothing captured yet: search nothing of the store's projects rather than everything.
    return found ? [found.id] : [NO_PROJECT_YET]
  }
  /**
   * What `id` names, when it is in the call's project scope (the `project` argument, else the working
   * directory's): forget and timeline reach an item of another project only when the call names that project.
   * @throws {MnemoError} `NOT_FOUND` — no such item, or one of another project (the hint names it).
   */
  const assertInScope = async (id: string, project: string | undefined): ReturnType<MnemoEngine['show']> => {
    const r = await engine.show(id)
    const projectId =
      r.type === 'observation' ? r.observation.projectId : r.type === 'memory' ? r.memory.projectId : r.detail.session.projectId
    if (!(await readScope(project)).includes(projectId)) {
      const owner = r.type === 'session' ? r.detail.project : r.project
      throw new MnemoError('NOT_FOUND', `no ${r.type} ${id} in this project`, {
        details: { kind: r.type, id },
        ...(owner
          ? { hint: `it belongs to project ${JSON.stringify(owner.name)}: pass project: ${JSON.stringify(owner.name)} to reach it` }
          : {}),
      })
    }
    return r
  }
  /** The one project a call means (see `projectForWrite`): a write creates a named project that is new; a read (`create: false`) refuses an unknown name. */
  const writeRef = async (project: string | undefined, options: { create?: boolean } = {}): Promise<ProjectRef> => {
    const scope = await scopeOf(project)
    return 'project' in scope
      ? await engine.projectForWrite(scope.project, options)
      : await engine.projectForPath(scope.cwd, { workingDir: true })
  }
  /** A tool handler: parses the arguments with `schema` (limits included), runs `fn`, maps errors to an `isError` result. */
  const handler =
    <S extends z.ZodType>(schema: S, fn: (input: z.output<S>) => Record<string, unknown> | Promise<Record<string, unknown>>) =>
    async (args: unknown): Promise<CallToolResult> => {
      try {
        return okResult(await fn(parseInput(schema, args)))
      } catch (error) {
        return errorResult(error)
      }
    }
  const projectArg = projectField
    .optional()
    .describe(
      cwd === undefined
        ? 'Project name, or an absolute path inside it. Required unless the server URL names one (?project=).'
        : "Project name or a path inside it. Default: the project of the agent's working directory.",
    )
  return { engine, readScope, writeRef, assertInScope, projectArg, handler }
}
