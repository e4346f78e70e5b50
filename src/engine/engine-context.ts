import type { Clock } from '../core/clock.js'
import type { EventInput, Observation } from '../core/types.js'
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
