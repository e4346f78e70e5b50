import { z } from 'zod'
import { MnemoError, type ErrorCode } from '../../core/errors.js'

/** HTTP status per error code. A `Record` over every code: adding a code fails to compile until it is mapped here. */
const STATUS_BY_CODE: Record<ErrorCode, 400 | 403 | 404 | 409 | 422 | 500 | 502 | 503> = {
  INVALID_INPUT: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
  IMPORT_FAILED: 422,
  STORE_UNAVAILABLE: 503,
  PROVIDER_FAILED: 502,
  CONFIG_INVALID: 500,
  FORBIDDEN: 403,
}

/** Codes only the HTTP surface produces: refused before any engine call, or a failure with no code. */
type HttpOnlyCode = 'UNAUTHORIZED' | 'PAYLOAD_TOO_LARGE' | 'INTERNAL' | 'VIEWER_NOT_BUILT'

/** The body of every error response. */
export const errorBodySchema = z.object({
  error: z.object({
    code: z.string().describe('An ErrorCode (INVALID_INPUT, NOT_FOUND, …) or UNAUTHORIZED, PAYLOAD_TOO_LARGE, INTERNAL.'),
    message: z.string().describe('What failed, naming the offending value or key path.'),
    hint: z.string().nullable().describe('How to fix it, when known.'),
  }),
})
type ErrorBody = z.output<typeof errorBodySchema>

/** A JSON error response. */
export function errorJson(status: number, code: ErrorCode | HttpOnlyCode, message: string, hint?: string): Response {
  const body: ErrorBody = { error: { code, message, hint: hint ?? null } }
  return Response.json(body, { status })
}

/**
 * Maps a thrown error to its response: a `MnemoError` to the status of its
 * code with its message and hint; anything else to 500 `INTERNAL`.
 */
export function errorResponse(error: unknown): Response {
  if (MnemoError.is(error)) return errorJson(STATUS_BY_CODE[error.code], error.code, error.message, error.hint)
  return errorJson(500, 'INTERNAL', `unexpected failure: ${error instanceof Error ? error.message : String(error)}`)
}
