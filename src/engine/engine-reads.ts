import { DEFAULT_PROMPT_BUDGET, type PromptBlock } from '../context/prompt-block.js'
import type { GateConfig } from '../context/relevance-gate.js'
import type { MnemoError } from '../core/errors.js'
import type { ProjectId } from '../core/ids.js'
import type { AgentName, ContextBlock, HookAgent, Memory, Observation, Project, ProjectRef, Session } from '../core/types.js'
import { CHANNEL_NAMES, type ChannelName } from '../core/types.js'
import type { BrowseMemoriesOptions, BrowseObservationsOptions, StoreStats } from '../storage/store.js'
import { type EntityGraph, entityGraph, memorySources, type SessionTimeline, sessionTimeline } from './browse.js'
import { EngineBase } from './engine-base.js'
import { listProjects, projectForPath, projectForWrite, resolveProjects } from './projects.js'
import {
  checkPromptBudget,
  fileHints,
  type HookInjection,
  hookInjection,
  noteInjected,
  type PromptRecallResult,
  promptContext,
  type RecordOption,
  type SessionRef,
  type ShownRow,
} from './prompt-recall.js'
import {
  browseMemories,
  browseObservations,
  context,
  type ContextListing,
  currentMemories,
  history,
  lastActivityAt,
  type ShowResult,
  sessions,
  show,
  stats,
} from './reads.js'
import type { RecallHits, RecallOptions } from './recall.js'

/**
 * `MnemoEngine`'s reads (see mnemo.ts): recall, the context blocks a session starts with and the injections of its
 * prompts and tool calls (with the record of what a session was shown), `show`, versions and pages of memories, observations and sessions, the entity graph, the
 * projects a reader is told about, and counts. Each method reads through the engine's `Access` (its user, and its
 * agent under agent isolation) and redacts text on the way out; their bodies are in the modules they name
 * (recall.ts, reads.ts, browse.ts, prompt-recall.ts, projects.ts). Not a class of the public API: the package exports
 * `MnemoEngine`, which extends it.
 */
export class EngineReads extends EngineBase {
  /** The project a path names, for reads; see `projectForPath` in projects.ts (`workingDir`: `p` is where a command or agent runs). */
  projectForPath(p: string, options: { workingDir?: boolean } = {}): Promise<ProjectRef> {
    return projectForPath(this.ctx.store, p, options)
  }

  /**
   * Finds observations and memories relevant to `query`, best first.
   *
   * Channels rank candidates inside the scope (never filtered after
   * truncation) and are fused by Reciprocal Rank Fusion; see
   * `runRecall` for the pipeline and `DEFAULT_RECALL_CONFIG` for the
   * measured defaults.
   *
   * @param query - Free text: prose, identifiers, paths or CJK. Must contain a searchable term.
   * @param options.limit - Most hits, 1–100. Default 10.
   * @param options.channels - Channels to use (ablation). Default: all.
   * @returns Hits ordered by `score` (fused RRF score, higher is better), empty when nothing matches, with
   *   `warnings`: what this recall worked around (a channel asked for that is off, missing vectors, a provider
   *   outage), for surfaces to show.
   * @throws {MnemoError} `INVALID_INPUT` — blank query, or `limit` outside 1–100.
   *
   * @example
   * import { openMnemo } from 'mnemo'
   * const mnemo = openMnemo()
   * try {
   *   await mnemo.engine.remember('we deploy on Fridays after the 14:00 freeze', { kind: 'decision' })
   *   const hits = await mnemo.engine.recall('when do we deploy?', { limit: 5 })
   *   for (const hit of hits) console.log(hit.kind, hit.snippet) // → decision we deploy on Fridays after the 14:00 freeze
   * } finally {
   *   await mnemo.close()
   * }
   */
  async recall(query: string, options: RecallOptions = {}): Promise<RecallHits> {
    const { recall } = await import('./recall.js')
    const { hits, warnings } = await recall(this.ctx, { builtin: await this.builtin(), embedder: this.deps.embedder }, query, options)
    // Not enumerable: the hits compare, spread and serialise as the plain array they are.
    return Object.defineProperty(hits, 'warnings', { value: warnings, enumerable: false }) as RecallHits
  }

  /** A project's current, unarchived memories, pinned first then newest, text redacted. */
  currentMemories(projectId: ProjectId, limit = 50): Promise<Memory[]> {
    return currentMemories(this.ctx, projectId, limit)
  }

  /** A memory's version chain, oldest first (what it superseded and what superseded it). */
  history(id: string): Promise<Memory[]> {
    return history(this.ctx, id)
  }

  /**
   * Sessions newest first, optionally of some projects, from `offset` (default 0). `limit` 1–1000, default 50.
   *
   * @throws {MnemoError} `INVALID_INPUT` — `limit` out of range.
   *
   * @example
   * import { openMnemo } from 'mnemo'
   * const mnemo = openMnemo()
   * try {
   *   const payload = { session_id: 's1', cwd: process.cwd(), prompt: 'add rate limiting to the orders API' }
   *   await mnemo.engine.captureHook('UserPromptSubmit', JSON.stringify(payload))
   *   const [session] = await mnemo.engine.sessions({ limit: 5 })
   *   console.log(session?.agent, session?.title) // → claude-code add rate limiting to the orders API
   * } finally {
   *   await mnemo.close()
   * }
   */
  sessions(options: { projectIds?: readonly ProjectId[]; limit?: number; offset?: number } = {}): Promise<Session[]> {
    return sessions(this.ctx, options)
  }

  /**
   * A page of a project's observations with their agent, for browsing and
   * live tails (the viewer). Newest first with `beforeSeq`, or oldest first
   * after `afterSeq` (event sequence numbers: `lastEventSeq()` is where a
   * live tail starts). Text is redacted on the way out.
   *
   * @param options.limit - 1–500.
   */
  browseObservations(
    options: Omit<BrowseObservationsOptions, 'limit'> & { limit: number },
  ): Promise<(Observation & { agent: AgentName })[]> {
    return browseObservations(this.ctx, options)
  }

  /**
   * A session's steps in order, from `offset` (0-based), at most `limit`
   * (1–500), each with the memories derived from it; see `sessionTimeline`
   * in browse.ts.
   *
   * @throws {MnemoError} `NOT_FOUND` — no such session, or `at` is not one of its observations.
   */
  sessionTimeline(id: string, offset: number, limit: number, at?: string): Promise<SessionTimeline> {
    return sessionTimeline(this.ctx, id, offset, limit, at)
  }

  /** A page of a project's memories by kind and state (all versions with `state: 'all'`), pinned first then newest, text redacted. */
  browseMemories(options: BrowseMemoriesOptions): Promise<{ memories: Memory[]; total: number }> {
    return browseMemories(this.ctx, options)
  }

  /** The observations memories were derived from that still exist, each once, oldest first; see `memorySources` in browse.ts. */
  memorySources(memories: readonly Memory[]): Promise<Observation[]> {
    return memorySources(this.ctx, memories)
  }

  /**
   * The entity graph around `entity` (or the most mentioned entities),
   * drawn from a bounded sample; see `entityGraph` in browse.ts.
   *
   * @param limit - Neighbours at most, 1–100.
   * @throws {MnemoError} `INVALID_INPUT` — limit out of range.
   */
  entityGraph(projectIds: readonly ProjectId[], entity: string | undefined, limit: number): Promise<EntityGraph> {
    return entityGraph(this.ctx, projectIds, entity, limit)
  }

  /**
   * Expands an id: an observation, a memory, or a session with its observations (first 500).
   *
   * @throws {MnemoError} `INVALID_INPUT` — not a mnemo id. `NOT_FOUND` — no such item.
   *
   * @example
   * import { openMnemo } from 'mnemo'
   * const mnemo = openMnemo()
   * try {
   *   const { memory } = await mnemo.engine.remember('the staging database password is hunter2', { kind: 'fact' })
   *   const shown = await mnemo.engine.show(memory.id)
   *   if (shown.type === 'memory') console.log(shown.memory.text) // → the staging database password is [REDACTED:password]
   * } finally {
   *   await mnemo.close()
   * }
   */
  show(id: string): Promise<ShowResult> {
    return show(this.ctx, id)
  }

  /**
   * Builds the context block for a new session of `project`: its memories
   * (newest first, up to 20) and extractive digests of its recent sessions
   * (up to 5, newest first), under `budgetTokens`.
   *
   * @param options.project - The project. Default: the working directory's project.
   * @param options.budgetTokens - Default: the configured budget (2000).
   * @param options.excludeSessionKey - Leave out this agent session (the one starting now).
   * @param options.recordFor - Records what the block shows for this agent session (see `hookInjection`), without
   *   waiting for another process's write lock: when the record cannot be written the block is still returned, with
   *   the store's error as `notRecorded` (later prompts of the session may then repeat an item it showed). With
   *   `defer: true` nothing is recorded and the rows come back as `shown`, for `recordShown` once the agent has the
   *   block (a team server, whose client may stop waiting for it).
   * @param options.withListing - Adds `listing`, how the block depends on the project's session list, and `shown`
   *   (see `ContextListing` in reads.ts: what a block kept to be shown again is checked against).
   * @param options.sideEffects - False: nothing is written (no use of a memory counted, no uncertain fact marked as
   *   shown, nothing recorded for `recordFor`). Default true.
   *
   * @example
   * import { openMnemo } from 'mnemo'
   * const mnemo = openMnemo()
   * try {
   *   await mnemo.engine.remember('run migrations with npm run db:migrate, never by hand', { kind: 'lesson' })
   *   const block = await mnemo.engine.context({ budgetTokens: 400 })
   *   console.log(block.text.includes('npm run db:migrate'), block.memoryIds.length) // → true 1
   * } finally {
   *   await mnemo.close()
   * }
   */
  context(
    options: {
      project?: ProjectRef
      budgetTokens?: number
      excludeSessionKey?: string
      recordFor?: { agent: string; sessionKey: string; defer?: boolean }
      withListing?: boolean
      sideEffects?: boolean
    } = {},
  ): Promise<ContextBlock & { project: string; notRecorded?: MnemoError; shown?: ShownRow[]; listing?: ContextListing }> {
    return context(this.ctx, options, this.facts.dependencies)
  }

  /**
   * Records a context block that a hook showed without opening the store (a kept block: runtime/context-cache.ts) as
   * `context` with `recordFor` records the block it builds: its memories counted as used on `shown.day`, and what it
   * showed recorded for the session at `shown.at` (epoch ms), so later prompts of the session do not repeat it.
   *
   * @param shown.day - `YYYY-MM-DD` (UTC) of the hook, as `usageDay` gives it.
   * @throws {MnemoError} `STORE_UNAVAILABLE` — the record could not be written.
   */
  async recordContextShown(
    session: { agent: string; sessionKey: string },
    shown: { memoryIds: readonly string[]; day: string; rows: readonly ShownRow[]; at: number },
  ): Promise<void> {
    await this.ctx.store.recordUsage(shown.memoryIds, shown.day)
    if (shown.rows.length > 0) await noteInjected(this.ctx, session, shown.rows, shown.at)
  }

  /**
   * The block to inject with one prompt of an agent session (UserPromptSubmit): corrections of what the session was
   * shown and has since changed, and recalled items that clear the relevance gate; see `promptRecall` in
   * prompt-recall.ts. Records what it shows for the session, unless `options.record` is false (then the caller
   * records `shown` with `recordShown` once the agent has the block).
   *
   * @param budgetTokens - Most tokens, 100–4000. Default: 300.
   * @returns Empty `text` when there is nothing to inject.
   * @throws {MnemoError} `INVALID_INPUT` — budget out of range.
   */
  promptContext(
    session: SessionRef,
    prompt: string,
    budgetTokens = DEFAULT_PROMPT_BUDGET,
    gate?: GateConfig,
    options?: RecordOption,
  ): Promise<PromptRecallResult> {
    return promptContext(this.ctx, () => this.builtin(), session, prompt, budgetTokens, gate, options)
  }

  /**
   * Past errors, decisions and lessons about files a tool touches, once per file per session; see `fileHints` in
   * prompt-recall.ts. Records what it shows and the files it looked up, unless `options.record` is false (see
   * `promptContext`).
   *
   * @param budgetTokens - Most tokens, 100–4000. Default: 300.
   * @throws {MnemoError} `INVALID_INPUT` — budget out of range.
   */
  fileHints(
    session: SessionRef,
    files: readonly string[],
    budgetTokens = DEFAULT_PROMPT_BUDGET,
    options?: RecordOption,
  ): Promise<PromptBlock & { files: string[]; shown: ShownRow[] }> {
    checkPromptBudget(budgetTokens)
    return fileHints(this.ctx, session, files, budgetTokens, options)
  }

  /**
   * What a hook of `agent` injects for mnemo event `event` beside SessionStart's block: per-prompt recall on
   * UserPromptSubmit, file hints on PreToolUse (Claude Code) or PostToolUse (Codex, Gemini), each through the
   * agent's own channel; see `hookInjection` in prompt-recall.ts.
   *
   * @param budgetTokens - Most tokens, 100–4000 (`MNEMO_PROMPT_RECALL`).
   * @param options.record - False: what the block shows is returned as `shown` and not recorded; the caller records
   *   it with `recordShown` once the agent has the block (the team server, whose client may stop waiting). Default true.
   * @returns The agent's event name for `hookSpecificOutput`, the block and what it shows; undefined when nothing is injected.
   */
  hookInjection(
    event: string,
    agent: HookAgent,
    stdin: string,
    project: ProjectRef,
    budgetTokens = DEFAULT_PROMPT_BUDGET,
    options?: RecordOption,
  ): Promise<HookInjection | undefined> {
    return hookInjection(this, event, agent, stdin, project, budgetTokens, options)
  }

  /**
   * Records that an agent session was shown `rows` (the `shown` of a `hookInjection`, `promptContext` or `fileHints`
   * asked for with `record: false`), under this engine's user: later prompts of the session do not repeat those items
   * and correct them when they change. Recording a row again changes nothing.
   *
   * @param session.agent - The agent, as the injection was computed for.
   * @param session.sessionKey - The agent's own session id (`session_id` of its hook payload).
   * @throws {MnemoError} `STORE_UNAVAILABLE` — the record could not be written.
   */
  recordShown(session: { agent: string; sessionKey: string }, rows: readonly ShownRow[]): Promise<void> {
    return noteInjected(this.ctx, session, rows)
  }

  /**
   * Maps a `--project` argument (a name, a root, a path inside a project) to projects; see projects.ts.
   *
   * @throws {MnemoError} `NOT_FOUND` — nothing matches; the hint lists the projects this reader may know.
   */
  resolveProjects(arg: string): Promise<Project[]> {
    return resolveProjects(this.ctx, arg)
  }

  /**
   * The project a `--project` argument means, exactly (created by a write when new; a read with
   * `create: false` refuses an unknown name); see projects.ts.
   */
  projectForWrite(arg: string, options: { create?: boolean } = {}): Promise<ProjectRef> {
    return projectForWrite(this.ctx, arg, options)
  }

  /**
   * The recall channels, each with its RRF weight and whether it answers: `on` is false for a weight of 0
   * (`MNEMO_RECALL_WEIGHTS`) and for `embedding` without a configured embedder. Every surface shows the
   * same (`mnemo status`, REST status, the viewer's Search screen ticks only those on).
   */
  recallChannels(): { name: ChannelName; weight: number; on: boolean }[] {
    return CHANNEL_NAMES.map((name) => {
      const weight = this.ctx.recallConfig.weights[name]
      return { name, weight, on: weight > 0 && (name !== 'embedding' || this.deps.embedder !== undefined) }
    })
  }

  /** When anything was last captured or stated in a project (an agent's session or a remembered memory), epoch ms; undefined when nothing this reader sees. */
  lastActivityAt(projectId: ProjectId): Promise<number | undefined> {
    return lastActivityAt(this.ctx, projectId)
  }

  /** The projects this reader is told about, by name; see `listProjects` in projects.ts. */
  listProjects(): Promise<Project[]> {
    return listProjects(this.ctx)
  }

  /**
   * Counts of what this reader sees: the whole store for a reader with no user or with
   * `allUsers`; for a named user, their own rows and shared ones, and for an agent under
   * isolation its own rows and agent-less ones, with their projects (see `listProjects`) and
   * latest capture. `bytes` is the database file's size either way.
   */
  stats(): Promise<StoreStats> {
    return stats(this.ctx)
  }
}
