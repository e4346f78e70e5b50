import { existsSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { invalidInput, type MnemoError } from '../core/errors.js'

/** Where the store keeps its own files: the data directory and the database (which may live outside it). */
interface StoreLocation {
  /** The data directory (`MNEMO_HOME`). */
  home: string
  /** The SQLite file (`:memory:` for none). */
  dbPath: string
}

/**
 * Why an export may not be written to `target`, if anything: a file of the
 * store itself (the database and its `-wal`/`-shm`/`-journal` files, by path
 * or, for an existing file, by inode so a symbolic or hard link is caught;
 * anything inside the data directory, where the spool, logs and tokens
 * live), or a file that exists when `force` is not set.
 *
 * @param target - Absolute path of the file the export would write (JSONL) or
 *   of each file it would write into a folder (Markdown).
 * @param flag - The option that named it, for the message (`out`).
 * @returns An `INVALID_INPUT` error naming `target` and the reason, with the
 *   fix as hint; undefined when `target` may be written.
 */
export function exportTargetError(
  target: string,
  store: StoreLocation,
  force: boolean,
  flag = 'out',
): MnemoError<'INVALID_INPUT'> | undefined {
  const own = storeFiles(store)
  const real = realPath(target)
  const home = realPath(store.home)
  const id = inodeOf(target)
  if (own.some((f) => realPath(f) === real || (id !== undefined && inodeOf(f) === id))) {
    return invalidInput(
      flag,
      `--${flag} ${target} is the store's own database file; exporting there would destroy it`,
      'write the export to a file outside the data directory (MNEMO_HOME)',
    )
  }
  if (real === home || real.startsWith(`${home}${path.sep}`)) {
    return invalidInput(
      flag,
      `--${flag} ${target} is inside the data directory ${store.home}, where mnemo keeps its own files`,
      'write the export to a file outside the data directory (MNEMO_HOME)',
    )
  }
  if (!force && existsSync(target)) {
    return invalidInput(flag, `--${flag} ${target} already exists`, 'add --force to replace it, or give a new file name')
  }
  return undefined
}

/** The store's own files: the database and the files SQLite keeps beside it. */
function storeFiles(store: StoreLocation): string[] {
  if (store.dbPath === ':memory:') return []
  return ['', '-wal', '-shm', '-journal'].map((s) => `${store.dbPath}${s}`)
}

/** `p` with symbolic links resolved, as far as it exists (a missing tail is kept as given). */
function realPath(p: string): string {
  const missing: string[] = []
  for (let at = path.resolve(p); ; at = path.dirname(at)) {
    try {
      return path.join(realpathSync(at), ...missing.reverse())
    } catch {
      if (path.dirname(at) === at) return path.resolve(p)
      missing.push(path.basename(at))
    }
  }
}

/** `dev:ino` of an existing file, or undefined. */
function inodeOf(p: string): string | undefined {
  try {
    const s = statSync(p)
    return `${s.dev}:${s.ino}`
  } catch {
    return undefined
  }
}
