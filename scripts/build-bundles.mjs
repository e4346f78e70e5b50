// Bundles the entry points a process starts from most often into one minified CommonJS file each, which the
// executables (dist/adapters/cli/bin.cjs, main.js) load instead of the ~80 ES modules tsc emits for them (resolving,
// reading and linking each module was most of a process's start-up):
//   dist/adapters/hooks/deferred-capture.bundle.cjs — every `mnemo hook <event>` first: a tool event with nothing to
//                                            print is spooled here, without the engine or SQLite (most events)
//   dist/adapters/hooks/run-hook.bundle.cjs  — `mnemo hook <event>` otherwise: an agent starts one per event
//   dist/adapters/cli/program.bundle.cjs     — the CLI commands that open the store (recall, status, context, …)
// Everything from src/ is inlined; packages stay external (required from node_modules) but for INLINED; modules imported lazily
// (recall, the import parsers, providers, servers) stay lazy inside the bundle.
// One package gets a bundle and a code cache of its own, loaded by both bundles when a query may name a date:
//   dist/retrieval/chrono-en.bundle.cjs      — chrono-node's English parser (`chrono-node/en`, ~60 CommonJS files)
// Required from the package, resolving and compiling its files cost a UserPromptSubmit hook ~20 ms CPU; from its
// bundle and cache ~5 ms (docs/prompt-recall.md).
// Usage: node scripts/build-bundles.mjs   (run by `npm run build`; bundles are build artefacts, not committed)
// MNEMO_BUNDLE_MINIFY=0 keeps the code as written (for reading a CPU profile).
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * Packages inlined into the bundles, compiled with the bundle's code cache instead of resolved, read and compiled
 * file by file at every start: small ES-module packages, which Node would otherwise load through its ES module loader
 * from the CommonJS bundle (`stemmer`: 1.6 ms CPU of every hook's start-up that way), and the JavaScript of the
 * CommonJS packages every bundled command loads (better-sqlite3's 12 files: ~10 ms CPU of every process that opens the
 * store; commander's 6: ~4 ms of every CLI command). better-sqlite3's addon is still loaded from the package
 * (sqlite-store.ts names its path).
 */
const INLINED = new Set(['stemmer', 'better-sqlite3', 'commander'])

/**
 * commander's lib/command.js requires node:child_process at its top, for executable sub-commands (a command run as a
 * file of its own, which mnemo has none of): Node's child_process with net, dgram and the streams it loads cost every
 * CLI command ~3 ms CPU. Inlined, the module is required on first use instead. The build fails if commander changes
 * how it requires or uses it.
 */
const commanderChildProcessOnUse = {
  name: 'commander-child-process-on-use',
  setup(build) {
    build.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8')
      const line = "const childProcess = require('node:child_process');"
      const uses = source.split('childProcess').length - 1
      if (source.split(line).length !== 2 || uses !== 1 + source.split('childProcess.spawn(').length - 1)
        throw new Error(`build-bundles: ${args.path} no longer requires node:child_process as \`${line}\` for spawn alone`)
      return {
        contents: source.replace(line, "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };"),
        loader: 'js',
      }
    })
  },
}

/** An esbuild plugin keeping every package import (a bare specifier) external except those named in `inlined`. */
function externalPackagesBut(inlined) {
  return {
    name: 'external-packages-but',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0]
        return inlined.has(name) ? undefined : { path: args.path, external: true }
      })
    },
  }
}

/**
 * Rewrites the bundle `file` with every character beyond ASCII as a `\uXXXX` escape (a pair of them past U+FFFF).
 * Node reads an ASCII file into a one-byte string and V8 compiles it as one; a single other character makes the whole
 * bundle a two-byte string: ~1.7 ms CPU of every process loading the CLI's 850 KiB bundle (reading and compiling it).
 * esbuild escapes such characters everywhere but in regular expression literals (`/['’]s$/`), where the escape
 * spells `.source` differently and matches the same, and in tagged templates' raw text (the bundles have none with
 * such characters). The source map is a few columns off after an escape on its line.
 */
function escapeNonAscii(file) {
  const text = readFileSync(file, 'utf8')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts at the first character past ASCII
  const ascii = text.replace(/[^\u0000-\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  if (ascii !== text) writeFileSync(file, ascii)
}

const chronoFile = path.join(root, 'dist/retrieval/chrono-en.bundle.cjs')
await esbuild.build({
  absWorkingDir: root,
  stdin: { contents: "module.exports = require('chrono-node/en')", resolveDir: root, loader: 'js' },
  outfile: chronoFile,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: ['node20'],
  minify: process.env['MNEMO_BUNDLE_MINIFY'] !== '0',
  keepNames: true,
  logLevel: 'warning',
})
if (process.env['MNEMO_BUNDLE_MINIFY'] !== '0') escapeNonAscii(chronoFile)

/**
 * `chrono-node/en` in the two bundles: a small module that loads chrono's own bundle with its code cache (when both
 * are there and the cache is as new), else the package as before.
 */
const chronoFromItsBundle = {
  name: 'chrono-from-its-bundle',
  setup(build) {
    build.onResolve({ filter: /^chrono-node\/en$/ }, (args) =>
      args.namespace === 'chrono-loader' ? { path: args.path, external: true } : { path: 'chrono-en', namespace: 'chrono-loader' },
    )
    build.onLoad({ filter: /.*/, namespace: 'chrono-loader' }, () => ({
      resolveDir: path.join(root, 'src/runtime'),
      loader: 'js',
      contents: `
        const { readFileSync, statSync } = require('node:fs')
        const { createRequire } = require('node:module')
        const path = require('node:path')
        const { runCommonJs } = require('./code-cache.ts')
        // Both bundles sit two folders below dist/ (dist/adapters/hooks, dist/adapters/cli).
        const file = path.join(__dirname, '../../retrieval/chrono-en.bundle.cjs')
        const built = statSync(file, { throwIfNoEntry: false })
        const cache = statSync(file + '.cache', { throwIfNoEntry: false })
        module.exports =
          built === undefined
            ? require('chrono-node/en')
            : cache !== undefined && cache.mtimeMs >= built.mtimeMs
              ? runCommonJs(file, readFileSync(file + '.cache'), createRequire(file))
              : createRequire(file)(file)
      `,
    }))
  },
}

for (const [entry, outfile] of [
  ['src/adapters/hooks/run-hook.ts', 'dist/adapters/hooks/run-hook.bundle.cjs'],
  ['src/adapters/hooks/deferred-capture.ts', 'dist/adapters/hooks/deferred-capture.bundle.cjs'],
  ['src/adapters/cli/program.ts', 'dist/adapters/cli/program.bundle.cjs'],
]) {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(root, entry)],
    outfile: path.join(root, outfile),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: ['node20'],
    // Packages stay external (required from node_modules) but for the ones in INLINED; `chrono-node/en` comes from
    // its own bundle (the first plugin to resolve an import wins).
    plugins: [chronoFromItsBundle, externalPackagesBut(INLINED), commanderChildProcessOnUse],
    minify: process.env['MNEMO_BUNDLE_MINIFY'] !== '0',
    // Function and class names stay as written: stack traces (`--debug`, a crash) keep naming the code.
    keepNames: true,
    sourcemap: 'linked',
    tsconfig: path.join(root, 'tsconfig.build.json'),
    // The sources are ES modules: `import.meta.url` (createRequire of a CommonJS package, files found beside a
    // module) becomes the bundle's own URL. Each bundle sits in the folder of its entry's tsc output, as deep below
    // dist/ as every inlined module that reads it (dist/adapters/*/), so their relative paths (../../../fixtures,
    // ../cli/main.js) still name the same files.
    define: { 'import.meta.url': '__mnemoBundleUrl' },
    banner: { js: 'const __mnemoBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
    // `import()` becomes a require (main.js loads a bundle only where Node can require ES modules): V8 drops what a
    // dynamic import needs from functions it restores from a code cache (Node 20 then throws
    // ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), so no `import()` may remain in a cached bundle.
    supported: { 'dynamic-import': false },
    logLevel: 'warning',
    metafile: true,
  })
  // Minified, the bundle's only such characters are in regular expressions; kept as written, also in its comments.
  if (process.env['MNEMO_BUNDLE_MINIFY'] !== '0') escapeNonAscii(path.join(root, outfile))
  const bytes = Object.values(result.metafile.outputs).find((o) => o.entryPoint)?.bytes ?? 0
  console.log(`build-bundles: ${outfile} ${(bytes / 1024).toFixed(1)} KiB`)
}

// The `mnemo` executable (package.json's bin, and what agents' hook commands run): bin.ts, cli-entry.ts and
// hook-entry.ts as one CommonJS file, which Node starts without its ES module loader (~5 ms CPU less than main.js).
// program.js and the hook modules stay ES modules it imports when their bundle is missing or stale, found beside it
// as beside bin.js.
const binFile = path.join(root, 'dist/adapters/cli/bin.cjs')
await esbuild.build({
  absWorkingDir: root,
  entryPoints: [path.join(root, 'src/adapters/cli/bin.ts')],
  outfile: binFile,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: ['node20'],
  plugins: [
    {
      name: 'program-and-hooks-external',
      setup(build) {
        build.onResolve({ filter: /^\.\/program\.js$|^\.\.\/hooks\/(deferred-capture|run-hook)\.js$/ }, (args) => ({
          path: args.path,
          external: true,
        }))
      },
    },
    externalPackagesBut(new Set()),
  ],
  minify: process.env['MNEMO_BUNDLE_MINIFY'] !== '0',
  keepNames: true,
  tsconfig: path.join(root, 'tsconfig.build.json'),
  define: { 'import.meta.url': '__mnemoBundleUrl' },
  banner: { js: 'const __mnemoBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
})
chmodSync(binFile, 0o755)
console.log(`build-bundles: dist/adapters/cli/bin.cjs ${(statSync(binFile).size / 1024).toFixed(1)} KiB`)

// V8 code caches (`<bundle>.cache`), which the executables compile the bundles with (requireBundle in
// src/runtime/code-cache.ts): each made after running its bundle once on a throwaway data directory, so the cache holds
// the functions a hook or a command compiles, not only the top level. V8 rejects a cache made by another Node or with
// other flags; then the executable compiles the source as without one.
const { compileCommonJs } = await import(path.join(root, 'dist/runtime/code-cache.js'))
const { createRequire } = await import('node:module')
const { Readable } = await import('node:stream')
const { mkdtempSync, rmSync } = await import('node:fs')
const os = await import('node:os')
const home = mkdtempSync(path.join(os.tmpdir(), 'mnemo-build-cache-'))
const cwd = path.join(home, 'project')
const env = { HOME: home, MNEMO_HOME: path.join(home, 'mnemo'), MNEMO_TZ: 'UTC' }
try {
  // chrono's cache first: the hook's run below loads chrono through it. Its parsers compiled by dates of every shape.
  const chrono = compileCommonJs(chronoFile, undefined, createRequire(chronoFile))
  for (const q of [
    'what changed yesterday, last Tuesday at 5pm, on 16 June, 2023 or in August 2023?',
    'errors since 2025-02-21 and 6/16/2023, two weeks ago, in 3 days, within the past 2 hours, next month',
    'the deploy on Jan 5th, the 3rd of May, March 2024, this weekend, 4 years ago, a few days later',
  ])
    chrono.exports.parse(q, { instant: new Date(Date.UTC(2026, 0, 1)), timezone: 0 }, { forwardDate: false })
  writeFileSync(`${chronoFile}.cache`, chrono.script.createCachedData())
  const hookFile = path.join(root, 'dist/adapters/hooks/run-hook.bundle.cjs')
  const hook = compileCommonJs(hookFile, undefined, createRequire(hookFile))
  const tool = {
    tool_name: 'Read',
    tool_input: { file_path: `${cwd}/src/retry.ts` },
    tool_response: {
      type: 'text',
      file: { filePath: `${cwd}/src/retry.ts`, content: 'export function retry(attempts: number) { return attempts > 3 }\n'.repeat(30) },
    },
    tool_use_id: 'toolu_cache1',
  }
  let injected = ''
  for (const [event, fields] of [
    ['SessionStart', { source: 'startup' }],
    ['UserPromptSubmit', { prompt: 'Why does the retry loop give up after yesterday’s change?' }],
    ['PostToolUse', tool],
    ['SessionStart', { source: 'resume' }],
    // Another session's prompt recalls the first one's: per-prompt recall then runs in full (the re-ranker, the gate
    // judging candidates, the block, the injection record), so its functions are in the cache too instead of being
    // compiled by every prompt hook (~80 functions; the first prompt, in an empty store, finds nothing to inject).
    ['UserPromptSubmit', { prompt: 'Where does the retry loop in src/retry.ts give up?', session_id: 'build-cache-prompt' }],
    // A new session's block, kept beside the store for the next SessionStart (below: printed from there).
    ['SessionStart', { source: 'startup', session_id: 'build-cache-2' }],
  ]) {
    const stdin = JSON.stringify({ session_id: 'build-cache', cwd, hook_event_name: event, ...fields })
    let out = ''
    await new Promise((resolve) =>
      hook.exports.runHook(event, {
        stdin: Readable.from([stdin]),
        stdout: { write: (t) => (out += t) },
        stderr: { write: () => true },
        env,
        cwd,
        exit: resolve,
      }),
    )
    if (fields.session_id === 'build-cache-prompt') injected = out
  }
  if (!injected.includes('<mnemo-recall>'))
    throw new Error(
      `build-bundles: the second session's prompt injected nothing, so the cache misses per-prompt recall (got ${JSON.stringify(injected.slice(0, 200))})`,
    )
  writeFileSync(`${hookFile}.cache`, hook.script.createCachedData())
  // The deferred capture of tool events (hook-entry.ts tries it first for every hook): a SessionStart printed from a kept
  // block, one PostToolUse spooled.
  const deferFile = path.join(root, 'dist/adapters/hooks/deferred-capture.bundle.cjs')
  const defer = compileCommonJs(deferFile, undefined, createRequire(deferFile))
  // A SessionStart printed from the block the last hook above kept (runtime/context-cache.ts).
  let printed = ''
  const served = await defer.exports.deferCapture('SessionStart', 'claude-code', {
    stdin: Readable.from([JSON.stringify({ session_id: 'build-cache-3', cwd, hook_event_name: 'SessionStart', source: 'startup' })]),
    env,
    cwd,
    stdout: { write: (t) => (printed += t) },
  })
  if (!served.deferred || !printed.includes('mnemo-context'))
    throw new Error('build-bundles: the deferred capture did not print a kept SessionStart block (see serveKeptContext)')
  const deferred = await defer.exports.deferCapture('PostToolUse', 'claude-code', {
    stdin: Readable.from([
      JSON.stringify({ session_id: 'build-cache', cwd, hook_event_name: 'PostToolUse', ...tool, tool_use_id: 'toolu_cache2' }),
    ]),
    env,
    cwd,
  })
  if (!deferred.deferred) throw new Error('build-bundles: the deferred capture did not defer a PostToolUse (see deferCapture)')
  writeFileSync(`${deferFile}.cache`, defer.script.createCachedData())
  const cliFile = path.join(root, 'dist/adapters/cli/program.bundle.cjs')
  const cli = compileCommonJs(cliFile, undefined, createRequire(cliFile))
  const io = { stdout: () => undefined, stderr: () => undefined, env, cwd }
  for (const args of [
    ['status'],
    ['recall', 'retry loop'],
    ['recall', 'what changed in the retry loop last week'],
    ['context'],
    ['sessions'],
    ['recall', 'retry', '--json'],
  ])
    await cli.exports.runCli(args, io)
  writeFileSync(`${cliFile}.cache`, cli.script.createCachedData())
  console.log('build-bundles: V8 code caches written beside the four bundles')
  // `mnemo --help` as the CLI prints it, for cli-entry.ts to print without loading commander and the command tables.
  let help = ''
  const { runCli } = await import(path.join(root, 'dist/adapters/cli/program.js'))
  const code = await runCli(['--help'], { ...io, stdout: (t) => (help += t) })
  if (code !== 0 || !help.startsWith('Usage: mnemo')) throw new Error(`build-bundles: mnemo --help gave ${code}: ${help.slice(0, 200)}`)
  writeFileSync(path.join(root, 'dist/adapters/cli/help.txt'), help)
  console.log('build-bundles: dist/adapters/cli/help.txt written')
} finally {
  rmSync(home, { recursive: true, force: true })
}
