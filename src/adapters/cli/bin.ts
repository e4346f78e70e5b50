#!/usr/bin/env node
/**
 * The `mnemo` executable (package.json's `bin`): scripts/build-bundles.mjs makes it one CommonJS file,
 * dist/adapters/cli/bin.cjs, with cli-entry.ts inlined. Node starts a CommonJS file without its ES module loader, ~5 ms
 * CPU less than main.js, an ES module; the commands run as from main.js: `mnemo hook …` by main.js itself (the script
 * agents' hook commands name), every other command by cli-entry.ts.
 */
import { runCliEntry } from './cli-entry.js'

// No top-level await: a CommonJS file cannot have one (a rejection still ends the process with its error, exit 1).
const argv = process.argv.slice(2)
if (argv[0] === 'hook') {
  void import('./main.js')
} else {
  // `mnemo export | head` closes the pipe early: that is the reader's choice, not a failure (as in main.ts).
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0)
    throw error
  })
  void runCliEntry(argv)
}
