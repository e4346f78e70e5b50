import { redactSecrets } from '../capture/redact.js'
import { stripTerminalControls } from '../core/text.js'
import type { AgentName, EventInput, Observation } from '../core/types.js'
import type { AppendResult, Derivation, Store } from '../storage/store.js'
import { Access } from './access.js'
import type { BuiltinVectors } from './builtin-vectors.js'
import type { EngineContext, EngineDeps } from './engine-context.js'
import { EngineFacts } from './facts.js'
import { DERIVATION_VERSION, indexEvent } from './index-event.js'
import { DEFAULT_RECALL_CONFIG } from './recall-pipeline.js'

/**
 * What every method of `MnemoEngine` stands on (see mnemo.ts): the store, clock and settings it was built from
 * (`EngineDeps`), whose rows it reads (`Access`), the context the modules holding its method bodies take
 * (`EngineContext`), the read-side redaction, the derivation of an event, and the store's own upkeep (append,
 * rebuild, audit log, integrity check, close). Not a class of the public API: the package exports `MnemoEngine`,
 * which extends it through `EngineReads` (engine-reads.ts).
 */
export class EngineBase {
  readonly contextBudgetTokens: number
  readonly timeZone: string
  /** The builtin LSA vectors, shared by the engines `scoped` makes; created on first use (a hook never needs them). */
  protected readonly shared: { builtin?: BuiltinVectors }
  protected readonly deps: EngineDeps
  /** What the modules holding its method bodies use of it: store, clock, settings, and whose rows it reads (`access`). */
  protected readonly ctx: EngineContext
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

  /** Appends events (idempotently) and derives their observations in one transaction. */
  append(events: readonly EventInput[]): Promise<AppendResult> {
    return this.ctx.store.append(events.map((event) => ({ event, derive: () => this.derive(event) })))
  }

  /** The builtin vectors, loaded and created on first use. */
  protected async builtin(): Promise<BuiltinVectors> {
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

  /** The last `limit` audit entries, newest first. */
  auditLog(limit = 20): ReturnType<Store['auditLog']> {
    return this.ctx.store.auditLog(limit)
  }

  /** The sequence number of the newest logged event (0 for an empty store). */
  lastEventSeq(): Promise<number> {
    return this.ctx.store.lastEventSeq()
  }

  /**
   * Re-derives every observation, memory, session and index from the event log, and records the derivation version.
   * On the SQLite store, a log whose last sequence number is `DERIVE_POOL_MIN_EVENTS` or more is derived on worker
   * threads (one per idle core besides the writer's, at most 2: `deriveThreads`) while the store writes: the same rows,
   * in the same order, sooner on a machine with an idle core.
   */
  async rebuild(): Promise<{ events: number; observations: number }> {
    const { DERIVE_POOL_MIN_EVENTS, deriveThreadsNow, openDerivePool } = await import('./derive-pool.js')
    // Only the SQLite store writes synchronously while the workers derive (the PostgreSQL store ignores `ahead`).
    const pool =
      this.ctx.store.dialect === 'sqlite' && (await this.ctx.store.lastEventSeq()) >= DERIVE_POOL_MIN_EVENTS
        ? openDerivePool({ timeZone: this.timeZone, threads: await deriveThreadsNow() })
        : undefined
    try {
      return await this.ctx.store.rebuild((event) => this.derive(event), DERIVATION_VERSION, pool)
    } finally {
      await pool?.close()
    }
  }

  /**
   * Which derivation the store's rows were made with, against the one this code makes: `stale` when
   * `mnemo rebuild` would re-derive them differently (an upgrade changed what capture derives).
   */
  async derivation(): Promise<{ derivedWith: number | undefined; current: number; stale: boolean }> {
    const derivedWith = await this.ctx.store.derivedWith()
    return { derivedWith, current: DERIVATION_VERSION, stale: derivedWith !== undefined && derivedWith < DERIVATION_VERSION }
  }

  integrityCheck(): Promise<string> {
    return this.ctx.store.integrityCheck()
  }

  close(): Promise<void> {
    return this.ctx.store.close()
  }
}
