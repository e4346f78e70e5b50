import type { Clock } from '../core/clock.js'
import type { AgentName, EventInput, Observation } from '../core/types.js'
import type { LlmConsolidator } from '../lifecycle/llm-consolidator.js'
import type { Embedder } from '../providers/embedder.js'
import type { Redactor } from '../capture/sanitize.js'
import type { AppendResult, Derivation, StepSession, Store } from '../storage/store.js'
import type { Access } from './access.js'
import type { RecallConfig } from './recall-pipeline.js'

/**
 * What the modules holding MnemoEngine's method bodies (memory-writes.ts, reads.ts, …) use of the
 * engine: its store, clock, scope and settings, and the steps every path shares.
 */
export interface EngineContext {
  store: Store
  clock: Clock
  redact: Redactor | undefined
  access: Access
  /** Where a call that names no project writes. */
  cwd: string
  recallConfig: RecallConfig
  /** IANA time zone of day boundaries and indexed dates. */
  timeZone: string
  /** Default context budget, tokens. */
  contextBudgetTokens: number
  /** What the store stores for an event, with the engine's time zone (see `indexEvent`). */
  derive(event: EventInput): Derivation
  /** Appends events as they are (the caller has made them the user's). */
  append(events: readonly EventInput[]): Promise<AppendResult>
  rebuild(): Promise<{ events: number; observations: number }>
  /** Re-derives one session (see `Store.rederiveSession`) with the engine's derivation. */
  rederiveSession(session: StepSession): Promise<number>
  /** The read-side redaction of text that leaves the store. */
  readRedact(text: string): string
  /** An observation with its text through `readRedact`. */
  redactObservation(o: Observation): Observation
}

/** What a `MnemoEngine` is built from: its store and clock, and the settings and reader of its scope. */
export interface EngineDeps {
  store: Store
  clock: Clock
  redact?: Redactor
  /** Working directory used when a call names no project (the CLI's cwd). */
  cwd: string
  contextBudgetTokens: number
  /** IANA time zone for day boundaries and indexed dates. Default: the system's. */
  timeZone?: string
  recall?: RecallConfig
  /** A neural embedder, used on top of the builtin one (`embedding` channel). */
  embedder?: Embedder
  /** An LLM consolidator for the slow path; without one, consolidation is deterministic. */
  consolidator?: LlmConsolidator
  /**
   * The user this engine captures and reads for (`MNEMO_USER`; on a team
   * server, the user of the request's token). What it writes carries the
   * user; what it reads is that user's rows plus shared rows (captured with
   * no user). Undefined: no user — writes are shared and reads see shared rows only.
   */
  user?: string
  /** Read every user's rows (a person who asked for all users: `--all-users`). Writes still carry `user`. */
  allUsers?: boolean
  /** Read only this agent's rows and rows of no agent (agent isolation, `MNEMO_AGENT_SCOPE=own`, set by the surface the agent calls). */
  agent?: AgentName
  /**
   * `shared` (default): every agent of a project shares its memory. `own`:
   * each agent reads its own captures and memories only (plus what a person
   * stated), and consolidation never mixes agents in one procedure.
   */
  agentScope?: 'shared' | 'own'
}
