import os from 'node:os'
import path from 'node:path'
import { MnemoError } from '../core/errors.js'

/** Settings after defaults ← environment ← flags have been applied. */
export interface ResolvedConfig {
  /** Data directory (`MNEMO_HOME`, default `~/.mnemo`). */
  home: string
  /** SQLite database file inside `home`. */
  dbPath: string
  /** Folder where hooks leave events they could not store; drained by the next run. */
  spoolDir: string
  /** Append-only failure log read by `mnemo status`. */
  errorLogPath: string
  /** Default token budget of the context block. */
  contextBudgetTokens: number
}

/** Environment variables mnemo reads: `MNEMO_HOME`, `MNEMO_CONTEXT_BUDGET`, `HOME`. */
export type MnemoEnv = Readonly<Record<string, string | undefined>>

/** Default token budget of the injected context block. */
export const DEFAULT_CONTEXT_BUDGET = 2000

/**
 * Resolves the configuration from the environment and flags. Paths are made
 * absolute; `~` at the start of `MNEMO_HOME` expands to the home directory.
 *
 * @throws {MnemoError} `CONFIG_INVALID` — listing every bad key at once (an empty `MNEMO_HOME`, a non-numeric budget).
 */
export function resolveConfig(env: MnemoEnv = process.env, flags: { home?: string } = {}): ResolvedConfig {
  const bad: string[] = []
  const homeDir = env['HOME'] ?? os.homedir()
  let home = flags.home ?? env['MNEMO_HOME'] ?? path.join(homeDir, '.mnemo')
  if (home.trim().length === 0) {
    bad.push('MNEMO_HOME')
    home = path.join(homeDir, '.mnemo')
  }
  if (home === '~' || home.startsWith('~/')) home = path.join(homeDir, home.slice(1))
  home = path.resolve(home)
  let budget = DEFAULT_CONTEXT_BUDGET
  const budgetText = env['MNEMO_CONTEXT_BUDGET']
  if (budgetText !== undefined && budgetText !== '') {
    const n = Number(budgetText)
    if (!Number.isInteger(n) || n < 200 || n > 100_000) bad.push('MNEMO_CONTEXT_BUDGET')
    else budget = n
  }
  if (bad.length > 0) {
    throw new MnemoError('CONFIG_INVALID', `invalid configuration: ${bad.join(', ')}`, {
      details: { keys: bad },
      hint: 'MNEMO_HOME must be a non-empty path; MNEMO_CONTEXT_BUDGET an integer 200–100000',
    })
  }
  return {
    home,
    dbPath: path.join(home, 'mnemo.db'),
    spoolDir: path.join(home, 'spool'),
    errorLogPath: path.join(home, 'logs', 'errors.jsonl'),
    contextBudgetTokens: budget,
  }
}
