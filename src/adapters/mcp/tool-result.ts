import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { MnemoError, type ErrorCode } from '../../core/errors.js'

/** How each error code reads to a model: every code is a tool result it can act on, not a protocol error. */
const PREFIX_BY_CODE: Record<ErrorCode, string> = {
  INVALID_INPUT: 'Invalid arguments',
  NOT_FOUND: 'Not found',
  CONFLICT: 'Conflict',
  STORE_UNAVAILABLE: 'Memory store unavailable, try again shortly',
  PROVIDER_FAILED: 'Provider failed',
  CONFIG_INVALID: 'mnemo is misconfigured',
  IMPORT_FAILED: 'Import failed',
  FORBIDDEN: 'Not allowed',
}

/** A successful tool result: the JSON document as text, and as structured content. */
export function okResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value }
}

/** Maps a thrown error to a tool result with `isError` and a one-line message (plus hint). */
export function errorResult(error: unknown): CallToolResult {
  if (MnemoError.is(error)) {
    const text = `${PREFIX_BY_CODE[error.code]}: ${error.message}${error.hint ? ` (hint: ${error.hint})` : ''}`
    return { isError: true, content: [{ type: 'text', text }] }
  }
  return {
    isError: true,
    content: [{ type: 'text', text: `Unexpected failure: ${error instanceof Error ? error.message : String(error)}` }],
  }
}
