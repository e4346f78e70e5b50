import { invalidInput } from '../core/errors.js'

/**
 * The input formats `import` reads (`auto` detects one per file; `mnemo` is a mnemo export). Apart from
 * `import-files.ts` so that the CLI can list them as `--format` choices without loading every parser.
 */
export type ImportFormat = 'auto' | 'claude-code' | 'codex' | 'gemini' | 'opencode' | 'cursor' | 'locomo' | 'mnemo'
export const IMPORT_FORMATS: readonly ImportFormat[] = ['auto', 'claude-code', 'codex', 'gemini', 'opencode', 'cursor', 'locomo', 'mnemo']

/**
 * Validates a `--format` value; undefined stands for `auto`.
 *
 * @throws {MnemoError} `INVALID_INPUT` — `value` is not one of `IMPORT_FORMATS`.
 */
export function toImportFormat(value: string | undefined): ImportFormat {
  if (value === undefined) return 'auto'
  if ((IMPORT_FORMATS as readonly string[]).includes(value)) return value as ImportFormat
  throw invalidInput('format', `--format must be one of ${IMPORT_FORMATS.join(', ')} (got ${JSON.stringify(value)})`)
}
