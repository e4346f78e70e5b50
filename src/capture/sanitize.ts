import { capText, DEFAULT_CAPS, sanitizeValue, type CapLimits } from '../core/text.js'
import { redactSecrets, redactValue } from './redact.js'

/**
 * Rewrites text before it is stored, indexed, embedded or sent anywhere.
 * The default is `redactSecrets` (capture/redact.ts): secret-shaped values
 * become typed placeholders such as `[REDACTED:aws-access-key]` and
 * `<private>…</private>` spans are dropped.
 */
export type Redactor = (text: string) => string

/** Largest field redaction scans; longer ones are cut (head and tail kept) first. */
export const PRE_REDACTION_CHARS = 1_000_000

/** Keeps text as it is (for tests of the raw pipeline). */
export const noRedaction: Redactor = (text) => text

/** The default redactor. */
export const defaultRedactor: Redactor = redactSecrets

/**
 * Prepares a source payload for the event log: Unicode repair (NUL bytes,
 * lone surrogates), binary and base64 placeholders, redaction, then
 * per-field caps that keep head and tail (see `capText`). Redaction runs on
 * the whole field before it is cut, so no part of a secret survives at a
 * cut. With the default redactor, values under secret-like keys
 * (`{"password": …}`) are redacted whole, keys kept. Pure; returns a new value.
 */
export function sanitizePayload(payload: unknown, redact: Redactor = defaultRedactor, limits: CapLimits = DEFAULT_CAPS): unknown {
  if (redact === noRedaction) return sanitizeValue(payload, limits)
  // Redact whole fields before the final cut, but bound the work: no field is scanned past 1 MB (head and tail kept).
  const clean = sanitizeValue(payload, { ...limits, fieldChars: Math.max(limits.fieldChars, PRE_REDACTION_CHARS) })
  const redacted = redact === redactSecrets ? redactValue(clean) : mapStrings(clean, redact)
  // A placeholder can be longer than what it replaces (`pwd=a` → `pwd=[REDACTED:password]`): cap again.
  return mapStrings(redacted, (s) => capText(s, limits.fieldChars))
}

function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value)
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    // defineProperty, not assignment: a key named __proto__ is data here.
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      Object.defineProperty(out, k, { value: mapStrings(v, fn), enumerable: true, writable: true, configurable: true })
    return out
  }
  return value
}
