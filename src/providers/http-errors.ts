/**
 * Reading failed HTTP answers, shared by the model providers (LLM,
 * embedder) and the team-server client: the vendor's message, a short body
 * snippet for errors, `Retry-After`, and the text of a fetch error.
 */

/** Longest body excerpt put in an error message, characters. */
const BODY_SNIPPET = 200

/** `Retry-After` as milliseconds: delta-seconds (decimals allowed) or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined
  const trimmed = value.trim()
  if (trimmed === '') return undefined
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/** The vendor's own error text from an `{ error: { message } }` or `{ error: "..." }` body, if any. */
export function vendorMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown }
    if (typeof body.error === 'string') return body.error
    if (typeof body.error === 'object' && body.error !== null && typeof (body.error as { message?: unknown }).message === 'string') {
      return (body.error as { message: string }).message
    }
  } catch {
    // not JSON: no vendor message
  }
  return undefined
}

/** A body on one line, cut at {@link BODY_SNIPPET} characters with `…`; `(empty body)` when blank. */
export function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  if (flat === '') return '(empty body)'
  return flat.length > BODY_SNIPPET ? `${flat.slice(0, BODY_SNIPPET)}…` : flat
}

/** An error's message with its cause's (undici reports "fetch failed" and keeps the socket error, ECONNREFUSED…, as the cause). */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = (error as { cause?: unknown }).cause
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message
}
