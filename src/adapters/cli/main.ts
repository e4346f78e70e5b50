#!/usr/bin/env node
/**
 * `mnemo` as ES modules: the script agents' hook commands name (`mnemo connect` writes
 * `node …/dist/adapters/cli/main.js hook <event>`). `mnemo hook <event>` takes a fast path that loads only the hook
 * runner (agents call it on every event, so start-up time is latency they feel); every other command goes to
 * cli-entry.ts, which the package's `mnemo` executable (bin.ts, one CommonJS file) runs too.
 */
// Node's built-ins from `process.getBuiltinModule` (Node ≥ 20.16), not ES imports: an ES import of a built-in builds
// its ES facade, which reads every export (node:fs's lazy `ReadStream` loads the streams; node:module's costs ~2 ms).
const builtin = process.getBuiltinModule as typeof process.getBuiltinModule | undefined
const { fileURLToPath } = builtin?.('node:url') ?? (await import('node:url'))

const argv = process.argv.slice(2)

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

if (argv[0] === 'hook' && (hookEvent === undefined || argv.includes('--help') || argv.includes('-h'))) {
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
  const { runCliEntry } = await import('./cli-entry.js')
  await runCliEntry(argv)
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

/**
 * The bundle `npm run build` makes of the module `<name>.js`, compiled with its code cache (`requireBundle` in
 * runtime/code-cache.ts), or undefined when there is none or it is stale.
 *
 * @param name - The module's path relative to this file, without `.js`.
 */
async function loadBundle<T>(name: string): Promise<T | undefined> {
  const { requireBundle } = await import('../../runtime/code-cache.js')
  return requireBundle<T>(
    fileURLToPath(new URL(`${name}.bundle.cjs`, import.meta.url)),
    fileURLToPath(new URL(`${name}.js`, import.meta.url)),
  )
}
