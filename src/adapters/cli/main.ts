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

if (argv[0] === 'hook') {
  const { runHook } = await import('../hooks/run-hook.js')
  const agentAt = argv.indexOf('--agent')
  // `--home <dir>` (or `--home=<dir>`) works here as on every command: it stands for MNEMO_HOME.
  const homeAt = argv.indexOf('--home')
  const home = homeAt > 0 ? argv[homeAt + 1] : argv.find((a) => a.startsWith('--home='))?.slice('--home='.length)
  await runHook(
    argv[1] ?? '',
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
  })
}
