import { describeValue, invalidInput } from './errors.js'

/** True when a project argument is written as a path (it has a slash, or is `.` / `..`). */
function isPathArg(arg: string): boolean {
  return /[\\/]/.test(arg) || arg === '.' || arg === '..'
}

/** True for `/abs/path` and `C:\abs\path`. */
function isAbsolutePath(arg: string): boolean {
  return arg.startsWith('/') || /^[A-Za-z]:[\\/]/.test(arg)
}

/**
 * The project of a call on a surface with no working directory (the HTTP
 * server): it must be named, and a path must be absolute. A missing project
 * never means "every project".
 *
 * @param knownProjects - Names to suggest in the hint.
 * @throws {MnemoError} `INVALID_INPUT` — no project, or a relative path; `details.path` is `project`.
 */
export function requireProject(project: string | undefined, knownProjects: () => readonly string[], howToPass = 'pass `project`'): string {
  const known = (): string => {
    const names = knownProjects()
    return names.length === 0
      ? 'nothing has been captured yet'
      : `known projects: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''}`
  }
  if (project === undefined) {
    throw invalidInput(
      'project',
      'project is required (got nothing)',
      `${howToPass}: a project name or an absolute path inside it; ${known()}`,
    )
  }
  if (isPathArg(project) && !isAbsolutePath(project)) {
    throw invalidInput(
      'project',
      `project must be a project name or an absolute path (got ${describeValue(project)})`,
      `the server has no working directory; ${known()}`,
    )
  }
  return project
}
