/**
 * `mnemo <command>` for every command but `mnemo hook` (main.ts runs that): `--version` and `--help` answered without
 * loading the CLI, the commands that open the store run from the CLI's bundle, the rest from its ES modules. Both
 * executables run it: main.js (ES modules, the script agents' hook commands name) and bin.cjs (package.json's `bin`:
 * bin.ts with this module inlined, one CommonJS file).
 */
import { readFileSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { requireBundle } from '../../runtime/code-cache.js'
import { MNEMO_VERSION } from './version.js'

/**
 * Commands that run from the CLI's bundle: those that open the store to read or change it, whose start-up is
 * felt (the engine's ~80 modules). `--version`, `--help` and the rest (servers, connect, benchmarks) load the few
 * ES modules they need instead, which costs less than compiling the whole bundle.
 */
const BUNDLED_COMMANDS = new Set([
  'recall',
  'remember',
  'forget',
  'pin',
  'unpin',
  'archive',
  'restore',
  'history',
  'sessions',
  'show',
  'context',
  'status',
  'import',
  'rebuild',
  'compact',
  'consolidate',
  'export',
  'redact',
  'reindex',
])

/**
 * Runs the command `argv` (the arguments after the script) with the process's streams, environment and folder, and
 * sets `process.exitCode` to the CLI's exit status (0 for `--version` and `--help`).
 */
export async function runCliEntry(argv: readonly string[]): Promise<void> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    // Answered before anything else loads, with the line the CLI's `.version()` prints.
    process.stdout.write(`${MNEMO_VERSION}\n`)
    return
  }
  const help = argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h') ? builtHelp() : undefined
  if (help !== undefined) {
    process.stdout.write(help)
    return
  }
  const { runCli } =
    (BUNDLED_COMMANDS.has(argv[0] ?? '') && !argv.some((a) => a === '--help' || a === '-h') ? cliBundle() : undefined) ??
    (await import('./program.js'))
  process.exitCode = await runCli([...argv], {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
    cwd: process.cwd(),
    stdoutIsTTY: process.stdout.isTTY === true,
  })
}

/**
 * `mnemo --help` as the build wrote it (scripts/build-bundles.mjs runs the CLI's own `--help` into
 * `dist/adapters/cli/help.txt`), so printing it loads neither commander nor the command tables; undefined when the
 * file is missing or older than the program module beside it (a `tsc`-only build since), and the CLI prints its help.
 */
function builtHelp(): string | undefined {
  const file = fileURLToPath(new URL('./help.txt', import.meta.url))
  const written = statSync(file, { throwIfNoEntry: false })
  const program = statSync(fileURLToPath(new URL('./program.js', import.meta.url)), { throwIfNoEntry: false })
  if (written === undefined || written.mtimeMs < (program?.mtimeMs ?? Infinity)) return undefined
  return readFileSync(file, 'utf8')
}

/** The CLI from its bundle with its code cache (`requireBundle`), or undefined (then its ES modules). */
function cliBundle(): typeof import('./program.js') | undefined {
  return requireBundle<typeof import('./program.js')>(
    fileURLToPath(new URL('./program.bundle.cjs', import.meta.url)),
    fileURLToPath(new URL('./program.js', import.meta.url)),
  )
}
