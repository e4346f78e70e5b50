import { DEFAULT_CAPS, sanitizeValue, type CapLimits } from '../core/text.js'

/**
 * Rewrites text before it is stored. The seam where secret redaction plugs
 * in (its own issue): every string of every payload passes through the
 * configured redactor before anything is persisted or indexed.
 */
export type Redactor = (text: string) => string

/** Keeps text as it is. The default until secret redaction lands. */
export const noRedaction: Redactor = (text) => text

/**
 * Prepares a source payload for the event log: redaction, Unicode repair
 * (NUL bytes, lone surrogates), binary and base64 placeholders, per-field
 * caps that keep head and tail (see `capText`). Pure; returns a new value.
 */
export function sanitizePayload(payload: unknown, redact: Redactor = noRedaction, limits: CapLimits = DEFAULT_CAPS): unknown {
  const clean = sanitizeValue(payload, limits)
  return redact === noRedaction ? clean : mapStrings(clean, redact)
}

function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value)
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = mapStrings(v, fn)
    return out
  }
  return value
}
