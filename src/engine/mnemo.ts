import { redactSecrets } from '../capture/redact.js'
import { DEFAULT_PROMPT_BUDGET, type PromptBlock } from '../context/prompt-block.js'
import type { GateConfig } from '../context/relevance-gate.js'
import type { MnemoError } from '../core/errors.js'
import type { ProjectId } from '../core/ids.js'
import { stripTerminalControls } from '../core/text.js'
import type {
  AgentName,
  ContextBlock,
  EventInput,
  HookAgent,
  Memory,
  MemoryKind,
  Observation,
  Project,
  ProjectRef,
  Session,
} from '../core/types.js'
import { CHANNEL_NAMES, type ChannelName } from '../core/types.js'
import type { AppendResult, BrowseMemoriesOptions, BrowseObservationsOptions, Derivation, Store, StoreStats } from '../storage/store.js'
import { Access, scopedDeps } from './access.js'
import { type EntityGraph, entityGraph, memorySources, type SessionTimeline, sessionTimeline } from './browse.js'
import type { BuiltinVectors } from './builtin-vectors.js'
import type { ConsolidationOptions, ConsolidationReport } from './consolidation.js'
import type { MigrationReport } from './migrate-store.js'
import type { EngineContext, EngineDeps } from './engine-context.js'
import type { ExportManifest } from './export.js'
import { type ExportImportReport, exportJsonl, exportMarkdown, importExport } from './export-io.js'
import { EngineFacts } from './facts.js'
import { captureHook } from './hook-capture.js'
import type { ImportFormat, ImportReport } from './import-files.js'
import { DERIVATION_VERSION, indexEvent } from './index-event.js'
import { compact, reindex, rescanSecrets } from './maintenance.js'
import { deleteScope, editMemory, type ForgetResult, forget, move, remember, setMemoryState } from './memory-writes.js'
import { listProjects, projectForPath, projectForWrite, resolveProjects } from './projects.js'
import {
  fileHints,
  type HookInjection,
  hookInjection,
  noteInjected,
  type PromptRecallResult,
  promptContext,
  checkPromptBudget,
  type RecordOption,
  type SessionRef,
  type ShownRow,
} from './prompt-recall.js'
import {
  browseMemories,
  browseObservations,
  context,
  currentMemories,
  history,
  lastActivityAt,
  type ShowResult,
  sessions,
  show,
  stats,
} from './reads.js'
import type { RecallHits, RecallOptions } from './recall.js'
import { DEFAULT_RECALL_CONFIG } from './recall-pipeline.js'

export type { ImportFileReport, ImportReport } from './import-files.js'
export type { PromptRecallResult, SessionRef } from './prompt-recall.js'

export type { SessionDetail, ShowResult } from './reads.js'
export type { RecallHits, RecallOptions } from './recall.js'

/**
 * The one front door of mnemo: capture, import, recall, remember, forget,
 * sessions, context, rebuild. Adapters (CLI, hooks, MCP) call this and never
 * a store directly. Every method that reads or writes the store is
 * asynchronous (the store port is: a network database implements it too) and
 * rejects with `MnemoError`; the others return plain values and throw it.
 */
export class MnemoEngine {
  readonly contextBudgetTokens: number
  readonly timeZone: string
  /** The builtin LSA vectors, shared by the engines `scoped` makes; created on first use (a hook never needs them). */
  private readonly shared: { builtin?: BuiltinVectors }
  private readonly deps: EngineDeps
  /** What the modules holding its method bodies use of it: store, clock, settings, and whose rows it reads (`access`). */
  private readonly ctx: EngineContext
  /** The typed fact ledger: collections, records, exact queries (engine/facts.ts). */
  readonly facts: EngineFacts

  constructor(deps: EngineDeps, shared?: { builtin?: BuiltinVectors }) {
    this.deps = deps
    this.shared = shared ?? {}
    this.timeZone = deps.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone
    this.contextBudgetTokens = deps.contextBudgetTokens
    this.ctx = {
      store: deps.store,
      clock: deps.clock,
      redact: deps.redact,
      access: new Access(deps.user, deps.agent, deps.agentScope ?? 'shared', deps.allUsers ?? false),
      cwd: deps.cwd,
      recallConfig: deps.recall ?? DEFAULT_RECALL_CONFIG,
      timeZone: this.timeZone,
      contextBudgetTokens: this.contextBudgetTokens,
      derive: (event) => this.derive(event),
      append: (events) => this.append(events),
      rebuild: () => this.rebuild(),
      rederiveSession: (session) => deps.store.rederiveSession(session, (event) => this.derive(event)),
      readRedact: (text) => this.readRedact(text),
      redactObservation: (o) => this.redactObservation(o),
    }
    this.facts = new EngineFacts(this.ctx)
  }

  /** The user it writes and reads for; see EngineDeps.user. */
  get user(): string | undefined {
    return this.ctx.access.user
  }

  /** The agent it reads for under agent isolation; see EngineDeps.agent. */
  get agent(): AgentName | undefined {
    return this.ctx.access.agent
  }

  get agentScope(): 'shared' | 'own' {
    return this.ctx.access.agentScope
  }

  /**
   * The same engine (same store, caches and settings) for another user or
   * agent: a team server builds one per request from its token; a surface an
   * agent calls passes the agent under agent isolation (`agentScope: 'own'`).
   * Fields left out keep this engine's values.
   *
   * @throws {MnemoError} `INVALID_INPUT` — a malformed user name.
   */
  scoped(scope: { user?: string | undefined; agent?: AgentName | undefined; allUsers?: boolean }): MnemoEngine {
    return new MnemoEngine(scopedDeps(this.deps, scope), this.shared)
  }

  /** Appends events (idempotently) and derives their observations in one transaction. */
  append(events: readonly EventInput[]): Promise<AppendResult> {
    return this.ctx.store.append(events.map((event) => ({ event, derive: () => this.derive(event) })))
  }

  /** The builtin vectors, loaded and created on first use. */
  private async builtin(): Promise<BuiltinVectors> {
    if (!this.shared.builtin) {
      const { BuiltinVectors } = await import('./builtin-vectors.js')
      this.shared.builtin ??= new BuiltinVectors(this.ctx.store, this.ctx.clock)
    }
    return this.shared.builtin
  }

  /** What the store stores for an event; see `indexEvent`. */
  private derive(event: EventInput): Derivation {
    return indexEvent(event, this.timeZone)
  }

  /**
   * Second pass on everything that leaves the store, for text stored before a rule existed: secret redaction, and
   * terminal control sequences stripped (`stripTerminalControls`), so old text cannot drive the terminal or agent it
   * is shown to through recall, show, context, sessions, MCP or REST.
   */
  private readRedact(text: string): string {
    return stripTerminalControls(this.ctx.redact ? this.ctx.redact(text) : redactSecrets(text))
  }

  private redactObservation(o: Observation): Observation {
    return { ...o, text: this.readRedact(o.text) }
  }

  /**
   * Re-runs secret redaction over every stored event payload (patterns added
   * since capture), rewrites the changed ones in place, rebuilds the derived
   * state from the cleaned log, and writes an audit record.
   *
   * @param actor - Who asked (`cli`, `mcp`, a user name), for the audit log.
   * @returns How many events changed, and the rebuild's counts.
   */
  rescanSecrets(actor: string): Promise<{ eventsChanged: number; events: number; observations: number }> {
    return rescanSecrets(this.ctx, actor)
  }

  /** The last `limit` audit entries, newest first. */
  auditLog(limit = 20): ReturnType<Store['auditLog']> {
    return this.ctx.store.auditLog(limit)
  }

  /**
   * Captures one hook payload (the stdin of `mnemo hook <event> [--agent <agent>]`) from any agent whose
   * hooks run mnemo: Claude Code (the default), Codex CLI, Gemini CLI, Cursor, and OpenCode through
   * mnemo's plugin; `agent` says which, so its payload fields and event names are mapped onto Claude
   * Code's (see `captureClaudeHook`). Returns whether a new event was stored (false for a duplicate delivery or
   * a skipped own-tool call), the event's project and, when it was not skipped,
   * `sessionKey`, the agent's session id as capture read it; `note`, for the caller's
   * error log, when the event name was not one mnemo knows (see chooseHookEvent),
   * with `event`, the name it was stored as, when the payload's name replaced it.
   *
   * @param agent - The agent that ran the hook. Default `claude-code`.
   * @param at - When the hook fired, epoch ms (a spooled event's `spooledAt`); default now.
   * @param projectRoot - The project root a client resolved (a team server is told it); default: resolved here from `cwd`.
   * @throws {MnemoError} `INVALID_INPUT` — stdin is not a hook payload.
   *
   * @example
   * import { openMnemo } from 'mnemo'
   * const mnemo = openMnemo()
   * try {
   *   const payload = { session_id: 's1', cwd: process.cwd(), prompt: 'add rate limiting to the orders API' }
   *   const first = await mnemo.engine.captureHook('UserPromptSubmit', JSON.stringify(payload))
   *   const again = await mnemo.engine.captureHook('UserPromptSubmit', JSON.stringify(payload))
   *   console.log(first.stored, again.stored) // → true false
   * } finally {
   *   await mnemo.close()
   * }
   */
  captureHook(
    eventName: string,
    stdin: string,
    agent: HookAgent = 'claude-code',
    at?: number,
    projectRoot?: string,
  ): Promise<{ stored: boolean; project: ProjectRef; sessionKey?: string; skipped?: string; note?: string; event?: string }> {
    return captureHook(this.ctx, eventName, stdin, agent, at, projectRoot)
  }

  /** The project a path names, for reads; see `projectForPath` in projects.ts (`workingDir`: `p` is where a command or agent runs). */
  projectForPath(p: string, options: { workingDir?: boolean } = {}): Promise<ProjectRef> {
    return projectForPath(this.ctx.store, p, options)
  }

  /**
   * Imports a transcript file or a folder of them.
   *
   * @throws {MnemoError} `NOT_FOUND` — the path does not exist.
   * @throws {MnemoError} `IMPORT_FAILED` — not one valid record was found in any file.
   */
  async importPath(target: string, options: { format?: ImportFormat; project?: ProjectRef } = {}): Promise<ImportReport> {
    // Loaded on demand: the parsers (and the date parser LoCoMo needs) are heavy for hook start-up.
    const { importPath } = await import('./import-files.js')
    return importPath(this.ctx, target, options)
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

  /**
   * Stores an explicit memory in a project, through the write guard:
   * - the same text and kind as a current memory (case, spacing, final
   *   punctuation aside) is not stored again: that memory's `seenCount` goes up;
   * - a near duplicate (word-set Jaccard ≥ 0.85 with a current memory of the
   *   same kind) is merged the same way;
   * - a memory of the same kind about the same subject ("orders DB is …" then
   *   "orders DB migrated to …"), or the one named by `supersedes`, is
   *   superseded: the old version keeps its validity interval and stays
   *   reachable through `history`; memories quoting its value are marked for review.
   *
   * @param text - 1–16 000 characters of non-blank text.
   * @param options.kind - decision | fact | preference | lesson. Default `fact`.
   * @param options.project - Where it belongs. Default: the project of the working directory.
   * @param options.supersedes - Id of the memory this one replaces.
   * @param options.agent - The agent that stated it (MCP), so agent isolation keeps it that agent's; default none (a person's, shared by every agent).
   * @param options.scope - `user`: the user's own memory, recalled and injected in every project of this user (never
   *   another user's), filed in the user's project (`userProject`; `project` is ignored). Default `project`.
   * The memory belongs to this engine's user (none: shared).
   * @returns The current memory and whether a new one was created.
   * @throws {MnemoError} `INVALID_INPUT` — blank or oversized text, unknown kind or scope.
   * @throws {MnemoError} `NOT_FOUND` — `supersedes` names no memory of the project in this engine's scope.
   * @throws {MnemoError} `CONFLICT` — `supersedes` names an older version (the message names the current one), or another user's or a shared memory.
   *
   * @example
   * import { openMnemo } from 'mnemo'
   * const mnemo = openMnemo()
   * try {
   *   await mnemo.engine.remember('orders DB is PostgreSQL 14', { kind: 'fact' })
   *   const { memory } = await mnemo.engine.remember('orders DB migrated to MySQL 8', { kind: 'fact' })
   *   for (const m of await mnemo.engine.history(memory.id)) console.log(m.text, m.validTo ? '(superseded)' : '(current)')
   *   // → orders DB is PostgreSQL 14 (superseded)
   *   // → orders DB migrated to MySQL 8 (current)
   * } finally {
   *   await mnemo.close()
   * }
   */
  remember(
    text: string,
    options: { kind?: MemoryKind; project?: ProjectRef; supersedes?: string; agent?: AgentName; scope?: 'project' | 'user' } = {},
  ): Promise<{ memory: Memory; created: boolean }> {
    return remember(this.ctx, text, options)
  }

  /**
   * Moves a current memory to the user's own memories (`to: 'user'`: recalled in every project of this user) or to
   * a project: the same text and kind are remembered there, then the original is forgotten (both logged, so a
   * rebuild or export keeps the move).
   *
   * @returns The memory in its new place (a new id) and the id it had.
   * @throws {MnemoError} `NOT_FOUND` — no memory with that id in this reader's scope.
   * @throws {MnemoError} `CONFLICT` — not the current version, or another user's or a shared memory this reader cannot change.
   * @throws {MnemoError} `INVALID_INPUT` — it is already there.
   */
  move(id: string, to: 'user' | ProjectRef): Promise<{ memory: Memory; from: string }> {
    return move(this.ctx, id, to)
  }

  /**
   * Forgets an observation or a memory for good: the event it came from is
   * deleted from the log with every row derived from it (full-text entry,
   * vectors, graph mentions), its idempotency key is kept as a tombstone so a
   * re-import never brings it back, and an audit record is written. For a
   * memory, every remember of the same memory and its pin/archive history go
   * too; a version it superseded becomes current again, returned as
   * `restored` (with `chain`, every version of its chain goes instead, listed
   * in `versions`). An observation goes
   * with the other observations of the same source record, and with the
   * memories derived from it (a session summary or lesson citing it, a
   * procedure it attests); consolidation writes them again from what remains.
   *
   * Another capture path's record of the same step (the transcript's record of a
   * tool call the hook captured, or the other way round) is a record of its own: it
   * is not deleted with this one (it may hold other steps), it is stored again if
   * this record stood for it, and its ids are returned in `alsoRecorded` so it can
   * be forgotten too.
   *
   * @param actor - Who asked (`cli`, `mcp`, …), for the audit log.
   * @param options.chain - For a memory: forget every version of its chain (`history`), not only this one. Default false.
   * @throws {MnemoError} `INVALID_INPUT` — not an observation or memory id.
   * @throws {MnemoError} `NOT_FOUND` — no such item.
   * @throws {MnemoError} `CONFLICT` — with `chain`, a version that is another user's or shared (for an engine with a user).
   *
   * @example
   * import { openMnemo } from 'mnemo'
   * const mnemo = openMnemo()
   * try {
   *   const { memory } = await mnemo.engine.remember('the deploy key lives in the ops vault', { kind: 'fact' })
   *   const { type, events } = await mnemo.engine.forget(memory.id)
   *   console.log(type, events) // → memory 1
   *   await mnemo.engine.show(memory.id).catch((error) => console.log(error.code)) // → NOT_FOUND
   * } finally {
   *   await mnemo.close()
   * }
   */
  forget(id: string, actor = 'cli', options: { chain?: boolean } = {}): Promise<ForgetResult> {
    return forget(this.ctx, id, actor, options)
  }

  /**
   * Deletes everything of a scope for good: the project's events (optionally
   * only one session's, or only those before a time), every derived row, the
   * memories whose provenance names a deleted observation (summaries,
   * lessons, procedures), with tombstones and an audit record; then
   * re-derives the store so nothing derived from the deleted events
   * (sessions, summaries, graph edges) remains.
   * Never touches another project, nor (without `allUsers`) another user's
   * events or, for an engine with a user, shared ones.
   *
   * @param scope.session - Only this session (a `ses_` id of the project): exactly its events — its agent's and
   *   user's, not another session that happens to carry the same agent session id.
   * @throws {MnemoError} `INVALID_INPUT` — the session is not one of the project's. `NOT_FOUND` — no such session in scope.
   * @throws {MnemoError} `CONFLICT` — the session is shared and this engine has a user, or another user's (with `allUsers` it may be).
   */
  deleteScope(scope: { project: Project; session?: string; before?: number }, actor = 'cli'): Promise<{ events: number }> {
    return deleteScope(this.ctx, scope, actor)
  }

  /**
   * Pins, unpins, archives or restores a memory (a logged event, so it
   * survives rebuild and export). Pinned memories never decay or archive;
   * archived ones leave default recall and context but stay searchable with
   * `includeArchived` and come back with `restore`.
   *
   * @throws {MnemoError} `NOT_FOUND` — no such memory.
   * @throws {MnemoError} `CONFLICT` — it was superseded (the message names the current version), or archiving a pinned one.
   */
  setMemoryState(id: string, op: 'pin' | 'unpin' | 'archive' | 'restore'): Promise<Memory> {
    return setMemoryState(this.ctx, id, op)
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

  /** The sequence number of the newest logged event (0 for an empty store). */
  lastEventSeq(): Promise<number> {
    return this.ctx.store.lastEventSeq()
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
   * Corrects a memory by hand: stores `text` as a new version of the same
   * kind that supersedes it (the old one keeps its validity interval and
   * stays in `history`), pinned when the old one was, with an audit record.
   *
   * @throws {MnemoError} `NOT_FOUND` — no such memory.
   * @throws {MnemoError} `CONFLICT` — it was superseded (the message names the current version).
   * @throws {MnemoError} `INVALID_INPUT` — blank or oversized text, or a summary or procedure.
   */
  editMemory(id: string, text: string, actor = 'cli'): Promise<Memory> {
    return editMemory(this.ctx, id, text, actor)
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
   *   the store's error as `notRecorded` (later prompts of the session may then repeat an item it showed).
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
      recordFor?: { agent: string; sessionKey: string }
    } = {},
  ): Promise<ContextBlock & { project: string; notRecorded?: MnemoError }> {
    return context(this.ctx, options, this.facts.dependencies)
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
   * Recomputes vectors: refits the builtin model of every project (or the
   * given ones) and, with a configured embedder, embeds every document that
   * has no vector in its space (batches of 64). Recall keeps working on the
   * other channels meanwhile.
   *
   * @param onProgress - Called after each batch with what is done out of the total, per stage.
   * @throws {MnemoError} `PROVIDER_FAILED` — the embedder failed; vectors stored so far are kept.
   */
  reindex(
    options: { projectIds?: readonly ProjectId[]; onProgress?: (stage: string, done: number, total: number) => void } = {},
  ): Promise<{ builtinProjects: number; embedded: number; space: string | undefined }> {
    return reindex(this.ctx, () => this.builtin(), this.deps.embedder, options)
  }

  /**
   * Writes the store (or one project) in mnemo's export format; see
   * `writeExport` in export-io.ts. A user exports their own and shared
   * events; an engine without a user, shared ones; `allUsers`, everything.
   *
   * @returns The manifest written.
   * @throws {MnemoError} `FORBIDDEN` — an agent's engine under agent isolation (the log holds every agent's events).
   */
  exportJsonl(write: (line: string) => void, scope: { project?: Project } = {}): Promise<ExportManifest> {
    return exportJsonl(this.ctx, write, scope)
  }

  /**
   * Imports a mnemo export, all or nothing; see `readExport` in export-io.ts.
   * What it imports becomes this engine's user's (or shared, without a
   * user), whatever users the file names: a file cannot write into another
   * user's data. Only `allUsers` (a person restoring a whole store) keeps
   * the users the file names.
   *
   * @throws {MnemoError} `IMPORT_FAILED` — a malformed file, or an event another user's session refuses (nothing stored); counts that do not match after import.
   */
  importExport(text: string, file: string): Promise<ExportImportReport> {
    return importExport(this.ctx, text, file)
  }

  /**
   * Markdown a person can read: one document per project (or the one
   * given), memories by kind, then superseded versions.
   *
   * @returns File name (`<project name>.md`, made unique) → Markdown.
   *
   * @example
   * import { openMnemo } from 'mnemo'
   * const mnemo = openMnemo({ cwd: '/work/acme-api' })
   * try {
   *   await mnemo.engine.remember('orders DB is PostgreSQL 14', { kind: 'fact' })
   *   const files = await mnemo.engine.exportMarkdown()
   *   for (const [file, markdown] of files) console.log(file, markdown.includes('PostgreSQL 14')) // → acme-api.md true
   * } finally {
   *   await mnemo.close()
   * }
   */
  exportMarkdown(scope: { project?: Project } = {}): Promise<Map<string, string>> {
    return exportMarkdown(this.ctx, scope)
  }

  /**
   * The slow path: summaries, lessons, procedures, decay, for every user's
   * sessions (each result is written as its session's user's); see
   * `runConsolidation` in consolidation.ts.
   */
  async consolidate(options: ConsolidationOptions = {}): Promise<ConsolidationReport> {
    // Loaded when used: the hook path, which never consolidates, starts faster without it.
    const { runConsolidation } = await import('./consolidation.js')
    return runConsolidation(
      { ...this.ctx, consolidator: this.deps.consolidator, agentScope: this.agentScope, facts: (user) => this.scoped({ user }).facts },
      options,
    )
  }

  /**
   * `consolidate`, once per `turn` across every process on this store (the replicas of a team server on one
   * database): it runs here unless another process is running it now or has run it for this turn or a later one
   * (see `Store.runExclusive`).
   *
   * @param turn - The schedule's interval number (epoch ms / interval ms, floored).
   * @returns The report, or undefined when it did not run here.
   */
  async consolidateTurn(turn: number, options: ConsolidationOptions = {}): Promise<ConsolidationReport | undefined> {
    let report: ConsolidationReport | undefined
    await this.ctx.store.runExclusive(
      'consolidate',
      async () => {
        report = await this.consolidate(options)
      },
      { turn },
    )
    return report
  }

  /**
   * Copies this engine's whole store, every user's data, into `target`'s store and checks the counts, store against
   * store; see `migrateStore` in migrate-store.ts (what it copies, what it refuses, what it throws).
   *
   * @param options.targetLabel - How messages name the target (a URL without its password, a file path).
   * @param options.force - Merge into a target that holds data. Default false: refused.
   * @throws {MnemoError} `FORBIDDEN` — this engine was not opened for every user (`allUsers`): a copy takes everyone's data.
   */
  async migrateTo(target: MnemoEngine, options: { targetLabel: string; force?: boolean }): Promise<MigrationReport> {
    const { migrateEngine } = await import('./migrate-store.js')
    return migrateEngine(this.ctx, target.ctx, options)
  }

  /**
   * Compacts the event log: every agent capture event older than `before`
   * whose derivation is smaller than its raw payload is folded into what it
   * derived — its observations and session effect, kept in the log in place
   * of the raw source payload (transcript records with their metadata,
   * usage, ids; hook JSON with tool output beyond the capture caps). Derived rows are not touched
   * and a later `rebuild` derives them identically from the folded events,
   * so no query's answer changes; what is given up is re-deriving those old
   * events from their raw payloads with a future version of a parser.
   * mnemo's own operations (remember, pin, …) and newer events stay as they
   * are. Idempotent. Then the file is vacuumed, unless `vacuum` is false.
   * Writes an audit record.
   *
   * @param options.before - Epoch ms; events at or after it are kept as they are.
   * @param options.project - Only this project's events.
   * @returns Events folded, their payload bytes before and after, and the database file size before and after.
   */
  compact(
    options: { before: number; project?: Project; vacuum?: boolean },
    actor = 'cli',
  ): Promise<{ events: number; payloadBytesBefore: number; payloadBytesAfter: number; fileBytesBefore: number; fileBytesAfter: number }> {
    return compact(this.ctx, options, actor)
  }

  /** Re-derives every observation, memory, session and index from the event log, and records the derivation version. */
  rebuild(): Promise<{ events: number; observations: number }> {
    return this.ctx.store.rebuild((event) => this.derive(event), DERIVATION_VERSION)
  }

  /**
   * Which derivation the store's rows were made with, against the one this code makes: `stale` when
   * `mnemo rebuild` would re-derive them differently (an upgrade changed what capture derives).
   */
  async derivation(): Promise<{ derivedWith: number | undefined; current: number; stale: boolean }> {
    const derivedWith = await this.ctx.store.derivedWith()
    return { derivedWith, current: DERIVATION_VERSION, stale: derivedWith !== undefined && derivedWith < DERIVATION_VERSION }
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

  integrityCheck(): Promise<string> {
    return this.ctx.store.integrityCheck()
  }

  close(): Promise<void> {
    return this.ctx.store.close()
  }
}
