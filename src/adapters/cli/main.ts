#!/usr/bin/env node
/**
 * The `mnemo` executable. `mnemo hook <event>` takes a fast path that loads
 * only the hook runner (agents call it on every event, so start-up time is
 * latency they feel); every other command loads the CLI, which loads the
 * module of the command it runs. Both come from one-file bundles when built.
 */
// Node's built-ins from `process.getBuiltinModule` (Node ≥ 20.16), not ES imports: an ES import of a built-in builds
// its ES facade, which reads every export (node:fs's lazy `ReadStream` loads the streams) — ~3 ms CPU of every
// process for these three.
const builtin = process.getBuiltinModule as typeof process.getBuiltinModule | undefined
const { readFileSync, statSync } = builtin?.('node:fs') ?? (await import('node:fs'))
const { createRequire } = builtin?.('node:module') ?? (await import('node:module'))
const { fileURLToPath } = builtin?.('node:url') ?? (await import('node:url'))

const argv = process.argv.slice(2)

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

// `mnemo export | head` closes the pipe early: that is the reader's choice, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

// `mnemo hook [--agent A] [--home H] <event>`: the event is the first word that is neither an option nor an option's value.
const hookEvent =
  argv[0] === 'hook'
    ? argv.slice(1).find((a, i, rest) => !a.startsWith('--') && rest[i - 1] !== '--agent' && rest[i - 1] !== '--home')
    : undefined
const help = argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h') ? builtHelp() : undefined

if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  // Answered before anything else loads, with the line the CLI's `.version()` prints.
  const { MNEMO_VERSION } = await import('./version.js')
  process.stdout.write(`${MNEMO_VERSION}\n`)
} else if (help !== undefined) {
  process.stdout.write(help)
} else if (argv[0] === 'hook' && (hookEvent === undefined || argv.includes('--help') || argv.includes('-h'))) {
  // Help is not an event: answer it here instead of logging an invalid event. Exit 0 even without an
  // event (on stderr then): for Claude Code a hook's exit 2 means "block", and a hook must never block.
  const usage =
    'Usage: mnemo hook <event> [--agent claude-code|codex|gemini|cursor|opencode] [--home <dir>]\n\n' +
    'Captures one lifecycle event: the hook payload JSON on stdin, as the agent writes it.\n' +
    'Agents call this (see mnemo connect); it always exits 0 so it never blocks the agent; problems go to mnemo status.\n'
  if (hookEvent === undefined && !argv.includes('--help') && !argv.includes('-h')) process.stderr.write(usage)
  else process.stdout.write(usage)
} else if (argv[0] === 'hook') {
  const agentAt = argv.indexOf('--agent')
  const agent = agentAt > 0 ? (argv[agentAt + 1] ?? '') : 'claude-code'
  // `--home <dir>` (or `--home=<dir>`) works here as on every command: it stands for MNEMO_HOME.
  const homeAt = argv.indexOf('--home')
  const home = homeAt > 0 ? argv[homeAt + 1] : argv.find((a) => a.startsWith('--home='))?.slice('--home='.length)
  const env = home ? { ...process.env, MNEMO_HOME: home } : process.env
  // A tool event with nothing to print is spooled without loading the engine (deferCapture), and so is a SessionStart
  // whose context block is kept beside the store and still valid (printed from there); the rest, with what it read
  // from stdin, goes to the full hook.
  const { deferCapture } = await loadDeferredCapture()
  const outcome = await deferCapture(hookEvent ?? '', agent, { stdin: process.stdin, env, cwd: process.cwd(), stdout: process.stdout })
  if (outcome.deferred) process.exit(0)
  const { runHook } = await loadHookRunner()
  await runHook(
    hookEvent ?? '',
    { stdin: process.stdin, stdout: process.stdout, env, cwd: process.cwd(), exit: (code) => process.exit(code), stdinRead: outcome.stdin },
    agent,
  )
} else {
  const { runCli } =
    BUNDLED_COMMANDS.has(argv[0] ?? '') && !argv.some((a) => a === '--help' || a === '-h') ? await loadCli() : await import('./program.js')
  process.exitCode = await runCli(argv, {
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

/** The deferred capture of tool events: its bundle (see `loadBundle`), else its ES module. */
async function loadDeferredCapture(): Promise<typeof import('../hooks/deferred-capture.js')> {
  return (
    (await loadBundle<typeof import('../hooks/deferred-capture.js')>('../hooks/deferred-capture')) ?? import('../hooks/deferred-capture.js')
  )
}

/** The hook runner: its bundle (see `loadBundle`), else its ES modules. */
async function loadHookRunner(): Promise<typeof import('../hooks/run-hook.js')> {
  return (await loadBundle<typeof import('../hooks/run-hook.js')>('../hooks/run-hook')) ?? import('../hooks/run-hook.js')
}

/** The CLI: its bundle (see `loadBundle`), else its ES modules. */
async function loadCli(): Promise<typeof import('./program.js')> {
  return (await loadBundle<typeof import('./program.js')>('./program')) ?? import('./program.js')
}

/**
 * The one-file bundle `npm run build` makes of the module `<name>.js` (scripts/build-bundles.mjs), or undefined
 * — when there is none, when it is older than the tsc output beside it (a `tsc`-only build since), or on a Node
 * without `require` of ES modules (a package the bundle loads lazily may be one) — and the caller imports the ES
 * modules instead. The bundle is compiled with the V8 code cache the build wrote beside it (`<bundle>.cache`, made
 * after running the bundle once, so it holds the functions a run compiles), when that is as new as the bundle; V8
 * checks that the cache fits this Node and these flags, and compiles the source when it does not.
 *
 * @param name - The module's path relative to this file, without `.js`.
 */
async function loadBundle<T>(name: string): Promise<T | undefined> {
  if (process.features.require_module !== true) return undefined
  const bundle = fileURLToPath(new URL(`${name}.bundle.cjs`, import.meta.url))
  const built = statSync(bundle, { throwIfNoEntry: false })
  if (
    built === undefined ||
    built.mtimeMs < (statSync(fileURLToPath(new URL(`${name}.js`, import.meta.url)), { throwIfNoEntry: false })?.mtimeMs ?? 0)
  )
    return undefined
  const require = createRequire(bundle)
  const cached = statSync(`${bundle}.cache`, { throwIfNoEntry: false })
  if (cached === undefined || cached.mtimeMs < built.mtimeMs) return require(bundle) as T
  const { runCommonJs } = await import('../../runtime/code-cache.js')
  return runCommonJs(bundle, readFileSync(`${bundle}.cache`), require) as T
}
