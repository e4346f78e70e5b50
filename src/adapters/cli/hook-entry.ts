/**
 * `mnemo hook [--agent A] [--home H] <event>`, as both executables run it: bin.cjs (package.json's `bin`, what
 * `mnemo connect` writes into agents' hook commands; this module inlined) and main.js (ES modules; the script hook
 * commands written by mnemo before 0.1 name). Agents start one process per event, so this loads as little as it can:
 * the deferred capture's bundle first (a tool event with nothing to print, or a SessionStart whose kept block still
 * holds, is done there without the engine), then, for the rest, the hook runner's bundle with what was read from stdin.
 */
import { fileURLToPath } from 'node:url'
import { requireBundle } from '../../runtime/code-cache.js'

/** `mnemo hook --help` and a `mnemo hook` without an event print this. */
const HOOK_USAGE =
  'Usage: mnemo hook <event> [--agent claude-code|codex|gemini|cursor|opencode] [--home <dir>]\n\n' +
  'Captures one lifecycle event: the hook payload JSON on stdin, as the agent writes it.\n' +
  'Agents call this (see mnemo connect); it always exits 0 so it never blocks the agent; problems go to mnemo status.\n'

/**
 * Runs the hook command `argv` (the arguments after the script, `argv[0] === 'hook'`) with the process's streams,
 * environment and folder. The event is the first word that is neither an option nor an option's value; `--agent`
 * defaults to claude-code; `--home <dir>` (or `--home=<dir>`) stands for MNEMO_HOME. Never exits non-zero: for Claude
 * Code a hook's exit 2 means "block", and a hook must never block (problems go to the error log, `mnemo status`).
 */
export async function runHookEntry(argv: readonly string[]): Promise<void> {
  const hookEvent = argv.slice(1).find((a, i, rest) => !a.startsWith('--') && rest[i - 1] !== '--agent' && rest[i - 1] !== '--home')
  const asksHelp = argv.includes('--help') || argv.includes('-h')
  if (hookEvent === undefined || asksHelp) {
    // Help is not an event: answered here instead of logging an invalid event; exit 0 even without an event (on stderr then).
    if (asksHelp) process.stdout.write(HOOK_USAGE)
    else process.stderr.write(HOOK_USAGE)
    return
  }
  const agentAt = argv.indexOf('--agent')
  const agent = agentAt > 0 ? (argv[agentAt + 1] ?? '') : 'claude-code'
  const homeAt = argv.indexOf('--home')
  const home = homeAt > 0 ? argv[homeAt + 1] : argv.find((a) => a.startsWith('--home='))?.slice('--home='.length)
  const env = home ? { ...process.env, MNEMO_HOME: home } : process.env
  const { deferCapture } =
    bundle<typeof import('../hooks/deferred-capture.js')>('deferred-capture') ?? (await import('../hooks/deferred-capture.js'))
  const outcome = await deferCapture(hookEvent, agent, { stdin: process.stdin, env, cwd: process.cwd(), stdout: process.stdout })
  if (outcome.deferred) process.exit(0)
  const { runHook } = bundle<typeof import('../hooks/run-hook.js')>('run-hook') ?? (await import('../hooks/run-hook.js'))
  await runHook(
    hookEvent,
    { stdin: process.stdin, stdout: process.stdout, env, cwd: process.cwd(), exit: (code) => process.exit(code), stdinRead: outcome.stdin },
    agent,
  )
}

/** dist/adapters/hooks/<name>.bundle.cjs with its code cache (`requireBundle`), or undefined (then its ES module). */
function bundle<T>(name: string): T | undefined {
  return requireBundle<T>(
    fileURLToPath(new URL(`../hooks/${name}.bundle.cjs`, import.meta.url)),
    fileURLToPath(new URL(`../hooks/${name}.js`, import.meta.url)),
  )
}
