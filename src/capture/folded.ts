import {
  MAX_EVENT_TS,
  OBSERVATION_KINDS,
  type DerivedObservation,
  type EventFormat,
  type EventInput,
  type SessionEffect,
} from '../core/types.js'
import type { CaptureDerivation } from './derivation.js'

/** Version of the folded payload. */
const FOLDED_VERSION = 1

/** Source formats whose events `mnemo compact` may fold (agents' captures; mnemo's own operations stay as they are). */
const FOLDABLE_FORMATS: readonly EventFormat[] = [
  'claude-hook',
  'claude-transcript',
  'codex-rollout',
  'gemini-session',
  'opencode-storage',
  'cursor-state',
  'locomo-turn',
]

/**
 * The payload of a folded event: what the original event derived (its
 * observations and session effect, exactly as derived), without the raw
 * source payload. Deriving a folded event gives back that derivation, so
 * every row — ids included, as they depend on the event's key and time, not
 * its payload — and so every query's answer is the same before and after
 * folding, and after a `rebuild`.
 */
interface FoldedPayload {
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
  return {
    v: FOLDED_VERSION,
    from: event.format,
    observations: derivation.observations,
    ...(derivation.session ? { session: derivation.session } : {}),
  }
}

function isFolded(payload: unknown): payload is FoldedPayload {
  if (typeof payload !== 'object' || payload === null) return false
  const p = payload as Partial<FoldedPayload>
  const strings = (v: unknown): boolean => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string'))
  const optString = (v: unknown): boolean => v === undefined || typeof v === 'string'
  const session = p.session as Record<string, unknown> | undefined
  // Every field is checked: a folded payload can come from an export file, which is input like any other.
  return (
    p.v === FOLDED_VERSION &&
    Array.isArray(p.observations) &&
    p.observations.every(
      (o) =>
        typeof o === 'object' &&
        o !== null &&
        typeof o.text === 'string' &&
        (OBSERVATION_KINDS as readonly string[]).includes(o.kind) &&
        typeof o.role === 'string' &&
        optString(o.tool) &&
        optString(o.sourceRef) &&
        strings(o.files) &&
        strings(o.flags) &&
        (o.ts === undefined || (Number.isInteger(o.ts) && o.ts >= 0 && o.ts <= MAX_EVENT_TS)),
    ) &&
    (session === undefined ||
      (typeof session === 'object' &&
        session !== null &&
        (session['ended'] === undefined || typeof session['ended'] === 'boolean') &&
        optString(session['title'])))
  )
}

/** Derives a folded event: the derivation it was folded from. A payload that is not a folded one derives nothing (it stays in the log). */
export function deriveFolded(event: EventInput): CaptureDerivation {
  if (!isFolded(event.payload)) return { observations: [] }
  // `from` is not trusted (an export file is input): an unknown one is its own path.
  const origin = FOLDABLE_FORMATS.includes(event.payload.from) ? event.payload.from : 'folded'
  return { observations: event.payload.observations, origin, ...(event.payload.session ? { session: event.payload.session } : {}) }
}
