import { accessSync, constants, existsSync, lstatSync, mkdirSync, readlinkSync, statSync } from 'node:fs'
import path from 'node:path'
import { MnemoError } from '../core/errors.js'

/**
 * Creates the data directory `home` (mode 0700) when it is missing.
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — `home` (or a folder above it) is
 *   not a directory, is a symbolic link to nothing, looks like a Windows path
 *   on a system that does not read one, or cannot be created (a file system
 *   such as /proc that refuses new folders); the message names the value and why.
 */
export function ensureDataDir(home: string): void {
  const foreign = windowsPathIn(home)
  if (foreign !== undefined) {
    throw new MnemoError(
      'STORE_UNAVAILABLE',
      `MNEMO_HOME ${home} holds a Windows path (${foreign}), which this system would create as one literal folder`,
      {
        details: { dialect: 'sqlite', operation: 'open data directory (not a directory)' },
        hint: `set MNEMO_HOME to a path of this system (like ${path.join('/home', 'me', '.mnemo')}), or run mnemo on Windows for a Windows path`,
      },
    )
  }
  try {
    makeDirectory(home, 0o700)
  } catch (cause) {
    throw dataDirError(home, cause) ?? wrapMakeError(home, cause)
  }
}

/**
 * Creates the folder `dir` and any missing folders above it, like
 * `mkdir -p`, but in a bounded walk: Node's own `mkdirSync(…, { recursive:
 * true })` loops forever where a parent exists and refuses new entries with
 * ENOENT (seen on Node 20 with `/proc/nope`: 100% CPU, never returns). Each missing
 * level is created once; one that cannot be made throws.
 *
 * @param mode - File mode of the folders created (default 0o777 before umask).
 * @throws The `fs` error of the level that failed (`ENOENT` also for a
 *   dangling symbolic link, whose message then names the link and its target).
 */
export function makeDirectory(dir: string, mode?: number): void {
  const missing: string[] = []
  for (let p = path.resolve(dir); ; p = path.dirname(p)) {
    let isDir: boolean | undefined
    try {
      isDir = statSync(p).isDirectory()
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT') throw error
      const target = danglingLinkTarget(p)
      if (target !== undefined)
        throw Object.assign(new Error(`${p} is a symbolic link to ${target}, which does not exist`), { code: 'ENOENT', path: p })
    }
    if (isDir === true) break
    if (isDir === false) throw Object.assign(new Error(`${p} is not a directory`), { code: 'ENOTDIR', path: p })
    missing.push(p)
    if (path.dirname(p) === p) break
  }
  for (const p of missing.reverse()) {
    try {
      mkdirSync(p, mode === undefined ? undefined : { mode })
    } catch (error) {
      // Another process made it between the walk and here.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(p).isDirectory()) continue
      throw error
    }
  }
}

/** The target of `p` when `p` is a symbolic link whose target does not exist; else undefined. */
function danglingLinkTarget(p: string): string | undefined {
  try {
    return lstatSync(p).isSymbolicLink() ? readlinkSync(p) : undefined
  } catch {
    return undefined
  }
}

/**
 * The first part of `home` written as a Windows path (`\\?\C:\…`, `C:\…`,
 * `\\server\share`), when mnemo runs where the backslash is no separator;
 * undefined on Windows or when there is none.
 */
export function windowsPathIn(home: string, platform: NodeJS.Platform = process.platform): string | undefined {
  if (platform === 'win32') return undefined
  const i = home.search(/\\\\[?.]\\|\\\\[^\\/]+\\|(?:^|\/)[A-Za-z]:[\\/]/)
  if (i < 0) return undefined
  return home.slice(home[i] === '/' ? i + 1 : i)
}

/** An error from `makeDirectory` that `dataDirError` did not explain, as `STORE_UNAVAILABLE` naming `home` and the cause. */
function wrapMakeError(home: string, cause: unknown): MnemoError<'STORE_UNAVAILABLE'> {
  const e = cause as NodeJS.ErrnoException
  const at = e.path ?? home
  const why = /symbolic link/.test(e.message)
    ? e.message
    : e.code === 'ENOENT'
      ? `mkdir ${at} failed with ENOENT though ${path.dirname(at)} exists (a file system that takes no new folders, like /proc)`
      : `mkdir ${at} failed (${e.code ?? e.message})`
  return new MnemoError('STORE_UNAVAILABLE', `MNEMO_HOME ${home} cannot be created: ${why}`, {
    details: { dialect: 'sqlite', operation: 'open data directory (not a directory)' },
    hint: "point MNEMO_HOME (or --home) at a folder on a writable disk, or create the folder (or the symbolic link's target) first",
    cause,
  })
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
  const init = (hint: string, problem: 'not a directory' | 'not writable') => ({
    details: { dialect: 'sqlite' as const, operation: `open data directory (${problem})` },
    hint,
    ...(cause !== undefined ? { cause } : {}),
  })
  const notDir = firstNonDirectory(home)
  if (notDir !== undefined) {
    return new MnemoError(
      'STORE_UNAVAILABLE',
      `MNEMO_HOME ${home} is not a directory (${notDir === home ? 'it is a file' : `${notDir} is a file`})`,
      init('point MNEMO_HOME (or --home) at a directory, or move that file away', 'not a directory'),
    )
  }
  for (const target of file === undefined ? [home] : [home, file]) {
    if (!existsSync(target)) continue
    try {
      accessSync(target, constants.W_OK)
    } catch (denied) {
      const code = (denied as NodeJS.ErrnoException).code
      const why = code === 'EROFS' ? 'read-only file system' : 'permission denied'
      const what = target === home ? `MNEMO_HOME ${home}` : `the database ${target}`
      return new MnemoError(
        'STORE_UNAVAILABLE',
        `${what} is not writable (${why})`,
        init(
          `let this user write it (chmod u+w${code === 'EPERM' ? '; chattr -i if it is immutable' : ''}), or point MNEMO_HOME at another directory`,
          'not writable',
        ),
      )
    }
  }
  // The caller's error may name the cause itself (an errno from mkdir): when the checks above found nothing, keep it.
  const code = (cause as NodeJS.ErrnoException | undefined)?.code
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new MnemoError(
      'STORE_UNAVAILABLE',
      `MNEMO_HOME ${home} is not writable (${code === 'EROFS' ? 'read-only file system' : 'permission denied'})`,
      init('let this user write it, or point MNEMO_HOME at another directory', 'not writable'),
    )
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
