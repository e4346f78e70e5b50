#!/usr/bin/env node
/**
 * `mnemo` as ES modules: what `node dist/adapters/cli/main.js …` runs, and the script the agents' hook commands written
 * by earlier builds name. It runs every command as the package's executable does (bin.ts, one CommonJS file, which
 * `mnemo connect` now writes into hook commands): `mnemo hook …` through hook-entry.ts, the rest through cli-entry.ts.
 */
const argv = process.argv.slice(2)

// `mnemo export | head` closes the pipe early: that is the reader's choice, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

if (argv[0] === 'hook') {
  const { runHookEntry } = await import('./hook-entry.js')
  await runHookEntry(argv)
} else {
  const { runCliEntry } = await import('./cli-entry.js')
  await runCliEntry(argv)
}
