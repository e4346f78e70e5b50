import type { FactOp } from '../core/facts/fact-types.js'
import type { DerivedObservation, EventFormat, EventInput, MemoryKind, SessionEffect, StepPart } from '../core/types.js'

/**
 * What capture derives from one logged event, before indexing. Each source
 * format has one pure function from the stored event to this shape
 * (capture/derive.ts dispatches on `event.format`), so `rebuild` re-derives
 * the same rows from the log alone.
 */
export interface CaptureDerivation {
  observations: DerivedObservation[]
  memory?: {
    kind: MemoryKind
    text: string
    supersedes?: string
    sameAs?: string
    sources?: string[]
    subject?: string
    confidence?: number
  }
  memoryOps?: { op: 'pin' | 'unpin' | 'archive' | 'restore'; id: string }[]
  session?: SessionEffect
  /** The capture path, when it is not the event's own format (a folded event's original format). */
  origin?: EventFormat
  /** Fact ledger operations the event carries (docs/FACTS.md). */
  facts?: FactOp[]
}

/** Derives observations from one stored event of a given format. */
export type Deriver = (event: EventInput) => CaptureDerivation

/** Outcome of parsing one source file into events. */
export interface ParseResult {
  /** Events ready to append (already sanitised). */
  events: EventInput[]
  /** Records (lines, turns) read from the file, including bad ones. */
  read: number
  /** Bad records skipped, with their 1-based line number (or turn id) and the reason. */
  skipped: { line: number | string; reason: string }[]
  /** Record types this parser does not know, with their counts; such records are skipped. */
  unknownTypes: Record<string, number>
}

/**
 * The part of a tool call an observation with a `sourceRef` holds: a hook's PostToolUse or
 * PostToolUseFailure observation holds the call and its result (`whole`); a transcript gives the
 * call (`tool`) and its result (`tool_result`, `error`) apart. Undefined without a `sourceRef`.
 */
export function stepPart(origin: EventFormat, o: Pick<DerivedObservation, 'kind' | 'sourceRef'>): StepPart | undefined {
  if (o.sourceRef === undefined) return undefined
  if (origin === 'claude-hook') return 'whole'
  if (o.kind === 'tool') return 'call'
  if (o.kind === 'tool_result' || o.kind === 'error') return 'result'
  return 'whole'
}
