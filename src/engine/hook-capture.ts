import { captureClaudeHook } from '../capture/claude-hook.js'
import { resolveProjectRoot } from '../capture/project.js'
import type { HookAgent, ProjectRef } from '../core/types.js'
import { ownKey } from '../core/user.js'
import type { EngineContext } from './engine-context.js'
import { clientProject, projectForPath } from './projects.js'

// The body of MnemoEngine's `captureHook`; the engine's method carries its contract.

/** What `MnemoEngine.captureHook` returns. */
interface HookCapture {
  stored: boolean
  project: ProjectRef
  sessionKey?: string
  skipped?: string
  note?: string
  event?: string
}

/** `MnemoEngine.captureHook`. */
export async function captureHook(
  ctx: EngineContext,
  eventName: string,
  stdin: string,
  agent: HookAgent,
  at: number | undefined,
  projectRoot: string | undefined,
): Promise<HookCapture> {
  const captured = captureClaudeHook(eventName, stdin, at ?? ctx.clock.now(), {
    agent,
    ...(ctx.redact ? { redact: ctx.redact } : {}),
    // Capture uses the project's identity alone (git top-level, else the folder): never a guess from what was captured
    // before. A team server is told the root the client resolved, where the folder exists.
    resolveProject: (cwd) => (projectRoot !== undefined ? clientProject(projectRoot, cwd) : resolveProjectRoot(cwd)),
    defaultCwd: ctx.cwd,
  })
  const noted = captured.note !== undefined ? { note: captured.note } : {}
  if ('skip' in captured)
    return { stored: false, project: await projectForPath(ctx.store, ctx.cwd, { workingDir: true }), skipped: captured.skip, ...noted }
  const [event] = ctx.access.own([captured.event])
  const sameAs = captured.sameAs?.map((key) => ownKey(key, ctx.access.user))
  const result = await ctx.store.append([{ event: event!, derive: () => ctx.derive(event!), ...(sameAs ? { sameAs } : {}) }])
  const renamed = captured.note !== undefined && captured.event.type !== eventName ? { event: captured.event.type } : {}
  return { stored: result.inserted === 1, project: captured.event.project, sessionKey: captured.event.sessionKey, ...noted, ...renamed }
}
