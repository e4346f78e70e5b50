import type { ErrorCode } from '../../core/errors.js'

/** Exit status per error code: 2 for usage errors (bad arguments or configuration), 1 for other failures. */
export const EXIT_CODE_BY_ERROR: Record<ErrorCode, 1 | 2> = {
  INVALID_INPUT: 2,
  CONFIG_INVALID: 2,
  NOT_FOUND: 1,
  CONFLICT: 1,
  STORE_UNAVAILABLE: 1,
  PROVIDER_FAILED: 1,
  IMPORT_FAILED: 1,
  FORBIDDEN: 1,
}
