import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { MnemoError } from '../core/errors.js'

/**
 * Creates the data directory `home` (mode 0700) when it is missing.
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — `home` (or a folder above it) is
 *   not a directory, or it cannot be created; the message names which and why.
 */
export function ensureDataDir(home: string): void {
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 })
  } catch (cause) {
    throw dataDirError(home, cause) ?? cause
  }
}

/**
 * What is wrong with the data directory `home` for writing, if anything:
 * not a directory, not writable (permission denied, read-only file system)
 * — checked on `home` itself, then on `file` inside it when given. `cause`,
 * when given, is the error an operation on it failed with, kept as `cause`.
 *
 * @returns A `STORE_UNAVAILABLE` error whose message names the path and the
 *   problem and whose hint says how to fix it; undefined when `home` (and
 *   `file`) look writable, so the caller's own error stands.
 */
export function dataDirError(home: string, cause?: unknown, file?: string): MnemoError<'STORE_UNAVAILABLE'> | undefined {
  // details.operation tells the two problems apart: 'open data directory (not a directory)' or '… (not writable)'.
  const init = (hint: string, problem: 'not a directory' | 'not writable') => ({ details: { dialect: 'sqlite' as const, operation: `open data directory (${problem})` }, hint, ...(cause !== undefined ? { cause } : {}) })
  const notDir = firstNonDirectory(home)
  if (notDir !== undefined) {
    return new MnemoError('STORE_UNAVAILABLE', `MNEMO_HOME ${home} is not a directory (${notDir === home ? 'it is a file' : `${notDir} is a file`})`, init('point MNEMO_HOME (or --home) at a directory, or move that file away', 'not a directory'))
  }
  for (const target of file === undefined ? [home] : [home, file]) {
    if (!existsSync(target)) continue
    try {
      accessSync(target, constants.W_OK)
    } catch (denied) {
      const code = (denied as NodeJS.ErrnoException).code
      const why = code === 'EROFS' ? 'read-only file system' : 'permission denied'
      const what = target === home ? `MNEMO_HOME ${home}` : `the database ${target}`
      return new MnemoError('STORE_UNAVAILABLE', `${what} is not writable (${why})`, init(`let this user write it (chmod u+w${code === 'EPERM' ? '; chattr -i if it is immutable' : ''}), or point MNEMO_HOME at another directory`, 'not writable'))
    }
  }
  // The caller's error may name the cause itself (an errno from mkdir): when the checks above found nothing, keep it.
  const code = (cause as NodeJS.ErrnoException | undefined)?.code
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new MnemoError('STORE_UNAVAILABLE', `MNEMO_HOME ${home} is not writable (${code === 'EROFS' ? 'read-only file system' : 'permission denied'})`, init('let this user write it, or point MNEMO_HOME at another directory', 'not writable'))
  }
  return undefined
}

/** `home` or the nearest folder above it that exists and is not a directory; undefined when there is none. */
function firstNonDirectory(home: string): string | undefined {
  for (let p = home; ; p = path.dirname(p)) {
    try {
      return statSync(p).isDirectory() ? undefined : p
    } catch {
      // missing: look further up
    }
    if (path.dirname(p) === p) return undefined
  }
}
