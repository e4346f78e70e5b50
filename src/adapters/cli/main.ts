#!/usr/bin/env node
/**
 * The `mnemo` executable. `mnemo hook <event>` takes a fast path that loads
 * only the hook runner (agents call it on every event, so start-up time is
 * latency they feel); every other command loads the full CLI.
 */
const argv = process.argv.slice(2)

// `mnemo export | head` closes the pipe early: that is the reader's choice, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

// `mnemo hook [--agent A] [--home H] <event>`: the event is the first word that is neither an option nor an option's value.
const hookEvent = argv[0] === 'hook' ? argv.slice(1).find((a, i, rest) => !a.startsWith('--') && rest[i - 1] !== '--agent' && rest[i - 1] !== '--home') : undefined
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
  const { runHook } = await import('../hooks/run-hook.js')
  const agentAt = argv.indexOf('--agent')
  // `--home <dir>` (or `--home=<dir>`) works here as on every command: it stands for MNEMO_HOME.
  const homeAt = argv.indexOf('--home')
  const home = homeAt > 0 ? argv[homeAt + 1] : argv.find((a) => a.startsWith('--home='))?.slice('--home='.length)
  await runHook(
    hookEvent ?? '',
    {
      stdin: process.stdin,
      stdout: process.stdout,
      env: home ? { ...process.env, MNEMO_HOME: home } : process.env,
      cwd: process.cwd(),
      exit: (code) => process.exit(code),
    },
    agentAt > 0 ? (argv[agentAt + 1] ?? '') : 'claude-code',
  )
} else {
  const { runCli } = await import('./program.js')
  process.exitCode = await runCli(argv, {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
    cwd: process.cwd(),
    stdoutIsTTY: process.stdout.isTTY === true,
  })
}
