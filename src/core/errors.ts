/**
 * The one error type mnemo throws on purpose, with a closed code vocabulary.
 * Callers branch on `code`; every surface maps codes in one table
 * (CLI: adapters/cli/exit-codes.ts, MCP: adapters/mcp/tool-result.ts).
 */
export type ErrorCode =
  | 'INVALID_INPUT'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'STORE_UNAVAILABLE'
  | 'PROVIDER_FAILED'
  | 'CONFIG_INVALID'
  | 'IMPORT_FAILED'
  | 'FORBIDDEN'

/** Extra facts each code carries, so handlers never parse messages. */
export interface ErrorDetails {
  INVALID_INPUT: { path: string }
  NOT_FOUND: { kind: 'memory' | 'observation' | 'session' | 'project' | 'file' | 'user' | 'collection' | 'record'; id: string }
  CONFLICT: { kind: 'memory' | 'observation' | 'session' | 'project' | 'user' | 'collection' | 'record'; id: string }
  STORE_UNAVAILABLE: { dialect: 'sqlite' | 'postgres'; operation: string }
  PROVIDER_FAILED: { provider: string; status?: number }
  CONFIG_INVALID: { keys: string[] }
  IMPORT_FAILED: { file: string; read: number; skipped: number }
  /** What the caller may not do from where it calls (a user's token, an agent under agent isolation). */
  FORBIDDEN: { action: string }
}

const brand = Symbol.for('mnemo.MnemoError')

/**
 * The only error type mnemo throws on purpose. Branch on `code`; read
 * `details` for structured facts and `hint` for a suggested fix.
 *
 * @example
 * import { MnemoError, parseFactQuery } from 'mnemo'
 * try {
 *   parseFactQuery('from expenses')
 * } catch (error) {
 *   if (!MnemoError.is(error, 'INVALID_INPUT')) throw error
 *   console.log(error.code, error.details.path) // → INVALID_INPUT query
 * }
 */
export class MnemoError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'MnemoError'
  readonly code: C
  readonly details: ErrorDetails[C]
  readonly hint: string | undefined

  constructor(code: C, message: string, init: { details: ErrorDetails[C]; hint?: string; cause?: unknown }) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause })
    this.code = code
    this.details = init.details
    this.hint = init.hint
    Object.defineProperty(this, brand, { value: true })
  }

  /** True for any MnemoError, even one from a second copy of the package. */
  static is<C extends ErrorCode>(value: unknown, code?: C): value is MnemoError<C> {
    if (typeof value !== 'object' || value === null || !(brand in value)) return false
    return code === undefined || (value as { code?: unknown }).code === code
  }
}

/** Shorthand for the most common error: a bad argument, named by its path. */
export function invalidInput(path: string, message: string, hint?: string): MnemoError<'INVALID_INPUT'> {
  return new MnemoError('INVALID_INPUT', message, hint === undefined ? { details: { path } } : { details: { path }, hint })
}

/** How a value reads in a message: JSON, shortened; long strings by their length. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (typeof value === 'string' && value.length > 80) return `${value.length} characters`
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    json = undefined
  }
  if (json === undefined) return typeof value
  return json.length > 80 ? `${json.slice(0, 77)}…` : json
}
