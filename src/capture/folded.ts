import type { DerivedObservation, EventFormat, EventInput, SessionEffect } from '../core/types.js'
import type { CaptureDerivation } from './derivation.js'

/** Version of the folded payload. */
export const FOLDED_VERSION = 1

/** Source formats whose events `mnemo compact` may fold (agents' captures; mnemo's own operations stay as they are). */
export const FOLDABLE_FORMATS: readonly EventFormat[] = ['claude-hook', 'claude-transcript', 'codex-rollout', 'gemini-session', 'opencode-storage', 'cursor-state', 'locomo-turn']

/**
 * The payload of a folded event: what the original event derived (its
 * observations and session effect, exactly as derived), without the raw
 * source payload. Deriving a folded event gives back that derivation, so
 * every row — ids included, as they depend on the event's key and time, not
 * its payload — and so every query's answer is the same before and after
 * folding, and after a `rebuild`.
 */
export interface FoldedPayload {
  v: typeof FOLDED_VERSION
  /** The event's format before folding. */
  from: EventFormat
  observations: DerivedObservation[]
  session?: SessionEffect
}

/**
 * Folds a capture event into its derivation.
 *
 * @param derivation - What `deriveEvent` gave for the event.
 * @returns The folded payload, or undefined when the event derives a memory
 *   or lifecycle change (mnemo's own operations are never folded).
 */
export function foldPayload(event: EventInput, derivation: CaptureDerivation): FoldedPayload | undefined {
  if (!FOLDABLE_FORMATS.includes(event.format) || derivation.memory || derivation.memoryOps) return undefined
  return { v: FOLDED_VERSION, from: event.format, observations: derivation.observations, ...(derivation.session ? { session: derivation.session } : {}) }
}

function isFolded(payload: unknown): payload is FoldedPayload {
  if (typeof payload !== 'object' || payload === null) return false
  const p = payload as Partial<FoldedPayload>
  return p.v === FOLDED_VERSION && Array.isArray(p.observations) && p.observations.every((o) => typeof o === 'object' && o !== null && typeof o.text === 'string' && typeof o.kind === 'string' && typeof o.role === 'string')
}

/** Derives a folded event: the derivation it was folded from. A payload that is not a folded one derives nothing (it stays in the log). */
export function deriveFolded(event: EventInput): CaptureDerivation {
  if (!isFolded(event.payload)) return { observations: [] }
  return { observations: event.payload.observations, ...(event.payload.session ? { session: event.payload.session } : {}) }
}
