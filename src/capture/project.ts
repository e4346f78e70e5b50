import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import type { ProjectRef } from '../core/types.js'

/**
 * The project a working directory belongs to: the nearest enclosing folder
 * that holds `.git` (a directory, or a file for worktrees and submodules), else
 * the folder itself. A `cwd` that does not exist on this machine (events
 * captured elsewhere) is used as given, normalised.
 *
 * @param cwd - Absolute or relative path; relative paths resolve against `process.cwd()`.
 */
export function resolveProjectRoot(cwd: string): ProjectRef {
  const start = normalizeRoot(cwd)
  let dir = start
  if (existsSync(dir)) {
    for (;;) {
      if (existsSync(path.join(dir, '.git'))) return refOf(dir)
      const parent = path.dirname(dir)
      if (parent === dir) break
      dir = parent
    }
  }
  return refOf(start)
}

/** Resolves `.`/`..`, trailing separators and (on the filesystem) files to their folder. */
export function normalizeRoot(p: string): string {
  let resolved = path.resolve(p)
  try {
    if (statSync(resolved).isFile()) resolved = path.dirname(resolved)
  } catch {
    // not on this machine: keep the path as written
  }
  return resolved.length > 1 ? resolved.replace(/[\\/]+$/, '') : resolved
}

/** A project reference for a root path: its display name is the last segment. */
export function refOf(root: string): ProjectRef {
  return { root, name: path.basename(root) || root }
}

/** A project that is not a folder (an imported corpus): `<scheme>:<name>`. */
export function namedProject(scheme: string, name: string): ProjectRef {
  return { root: `${scheme}:${name}`, name }
}
