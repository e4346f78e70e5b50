/**
 * What a Node process loads: every ES module a module load hook sees and every CommonJS file Node's module debug
 * log names. The start-up graph test (`src/adapters/cli/startup-graph.test.ts`) runs the CLI under it; the public-API
 * test (`src/index.test.ts`) runs a program that imports the package by name.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const HOOKS = `import { appendFileSync } from 'node:fs'
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(process.env.MNEMO_TEST_LOADED, url + '\\n')
  return next(url, context)
}`
const REGISTER = `import { register } from 'node:module'
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)})`

/** One recorded run: the files loaded (relative to `root`, sorted, each once), the exit status and the output. */
export interface LoadedRun {
  files: string[]
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs `node <args>` with the load hook registered first and returns what it loaded.
 *
 * @param options.root - Files are reported relative to it (`dist/…`, `node_modules/…`, also when its node_modules is a link).
 * @param options.logDir - A folder of the caller's for the load log (`loaded.txt`).
 * @param options.env - The child's whole environment (the log's variables are added).
 * @param options.input - Its stdin. Default: empty.
 * @param options.cwd - Its working directory. Default: `root`.
 */
export function runRecordingLoads(
  args: readonly string[],
  options: { root: string; logDir: string; env: Record<string, string | undefined>; input?: string; cwd?: string },
): LoadedRun {
  const log = path.join(options.logDir, 'loaded.txt')
  writeFileSync(log, '')
  const r = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, ...args], {
    input: options.input ?? '',
    cwd: options.cwd ?? options.root,
    env: { ...options.env, MNEMO_TEST_LOADED: log, NODE_DEBUG: 'module' },
    encoding: 'utf8',
  })
  const esm = readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((u) => new URL(u).pathname)
  const cjs = [...r.stderr.matchAll(/^MODULE \d+: load "([^"]+)"/gm)].map((m) => m[1]!)
  // Node names a package by its real path: a worktree whose node_modules links to another checkout's still reports
  // its packages as `node_modules/…`.
  const linked = path.join(options.root, 'node_modules')
  const modules = existsSync(linked) ? realpathSync(linked) : linked
  const relative = (f: string): string =>
    f.startsWith(`${modules}${path.sep}`) ? path.join('node_modules', path.relative(modules, f)) : path.relative(options.root, f)
  const files = [...new Set([...esm, ...cjs])].map(relative).sort()
  return { files, code: r.status, stdout: r.stdout, stderr: r.stderr }
}
