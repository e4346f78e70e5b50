import type { ProjectId } from '../core/ids.js'
import type { AgentName, HookAgent, Memory, MemoryKind, Project, ProjectRef } from '../core/types.js'
import { scopedDeps } from './access.js'
import type { ConsolidationOptions, ConsolidationReport } from './consolidation.js'
import { EngineReads } from './engine-reads.js'
import type { ExportManifest } from './export.js'
import { type ExportImportReport, exportJsonl, exportMarkdown, importExport } from './export-io.js'
import { captureHook } from './hook-capture.js'
import type { ImportFormat, ImportReport } from './import-files.js'
import { compact, reindex, rescanSecrets } from './maintenance.js'
import { deleteScope, editMemory, type ForgetResult, forget, move, remember, setMemoryState } from './memory-writes.js'
import type { MigrationReport } from './migrate-store.js'

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
 *
 * Its methods are declared in three files, by what they do, each a one-line call of the module holding its body:
 * this one (what writes: capture, import, remember, move, forget, delete, pin and archive, export, consolidation,
 * reindexing, compaction, copying to another store, and `scoped`), engine-reads.ts (`EngineReads`: recall, context,
 * prompt injections, show, browse, projects, counts) and engine-base.ts (`EngineBase`: the state every method stands
 * on, read-side redaction, rebuild, the audit log, close).
 */
export class MnemoEngine extends EngineReads {
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

  /**
   * Imports a transcript file or a folder of them. On the SQLite store, files of 8 MiB or more
   * (`DERIVE_POOL_MIN_IMPORT_BYTES`) are derived on a worker thread per idle core (`deriveThreads`) while this
   * thread parses and writes: the same rows, in the same order, sooner on a machine with an idle core.
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
   * a project, with its versions: each version of its chain (oldest first) is remembered there with its text and
   * kind, superseding the copy before it, then the whole chain is forgotten where it was (all logged, so a rebuild or
   * export keeps the move). No earlier version becomes current again anywhere; a pinned memory stays pinned. The
   * copies are dated by the move (their original times are not kept).
   *
   * @returns The current memory in its new place (a new id) and the id it had.
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
}
