#!/usr/bin/env node
/**
 * The `mnemo` executable (package.json's `bin`, and the script `mnemo connect` writes into agents' hook commands):
 * scripts/build-bundles.mjs makes it one CommonJS file, dist/adapters/cli/bin.cjs, with cli-entry.ts and hook-entry.ts
 * inlined. Node starts a CommonJS file without its ES module loader, ~5 ms CPU less than main.js, an ES module that
 * runs every command the same way.
 */
import { runCliEntry } from './cli-entry.js'
import { runHookEntry } from './hook-entry.js'

// No top-level await: a CommonJS file cannot have one (a rejection still ends the process with its error, exit 1).
const argv = process.argv.slice(2)
// `mnemo export | head` closes the pipe early: that is the reader's choice, not a failure (as in main.ts).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})
void (argv[0] === 'hook' ? runHookEntry(argv) : runCliEntry(argv))
