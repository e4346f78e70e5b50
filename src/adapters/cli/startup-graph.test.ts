import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runRecordingLoads } from '../../testing/module-loads.js'
import { tempDir } from '../../testing/test-mnemo.js'

// What each process loads, as the agent and the user start it: the built CLI (`npm test` builds it first), every
// ES module seen by a module load hook and every CommonJS file Node's module debug log names
// (src/testing/module-loads.ts). Start-up time is mostly the loading of modules, so these tests keep the heavy ones
// (zod, the MCP SDK, the import parsers) off the paths that do not use them. The time itself is measured by the
// benchmark (scripts/bench/startup.mjs), not here.
const ROOT = path.resolve(import.meta.dirname, '../../..')
const CLI = path.join(ROOT, 'dist/adapters/cli/main.js')
/** What `mnemo` runs (package.json's bin): bin.ts and cli-entry.ts as one CommonJS file (scripts/build-bundles.mjs). */
const BIN = path.join(ROOT, 'dist/adapters/cli/bin.cjs')

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!()
})
beforeAll(() => {
  for (const f of [CLI, BIN]) if (!existsSync(f)) throw new Error(`${f} is missing: run \`npm run build\` first (npm test does)`)
})

/**
 * Runs the CLI with `args` and returns the files it loaded, relative to the repository (`dist/…`, `node_modules/…`).
 *
 * @param script - main.js (what agents' hook commands run, the default) or the bin (what `mnemo` runs).
 */
function loaded(args: string[], input = '', script = CLI): { files: string[]; code: number | null; stdout: string; home: string } {
  const t = tempDir()
  cleanups.push(t.cleanup)
  const home = path.join(t.dir, 'home')
  const r = runRecordingLoads([script, ...args], {
    root: ROOT,
    logDir: t.dir,
    input,
    env: { PATH: process.env['PATH'], HOME: t.dir, MNEMO_HOME: home },
  })
  return { files: r.files, code: r.code, stdout: r.stdout, home }
}

const HEAVY = [
  'node_modules/zod/',
  'node_modules/chrono-node/',
  'node_modules/@modelcontextprotocol/',
  'node_modules/hono/',
  'node_modules/smol-toml/',
  'node_modules/jsonc-parser/',
]
const heavyIn = (files: string[]): string[] => files.filter((f) => HEAVY.some((h) => f.startsWith(h)))

// The ES modules main.js loads besides a bundle: itself, the hook entry and the loader of V8 code caches.
const ENTRY = ['dist/adapters/cli/hook-entry.js', 'dist/adapters/cli/main.js', 'dist/runtime/code-cache.js']
// What `mnemo <command>` and a hook command load besides a bundle: the bin alone (the hook entry and the loader of code
// caches are inlined in it).
const BIN_ENTRY = ['dist/adapters/cli/bin.cjs']
/** better-sqlite3's native addon, the one file of the package a bundle loads (its JavaScript is inlined). */
const SQLITE_ADDON = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'
/** chrono-node's English parser, bundled on its own with its code cache (scripts/build-bundles.mjs). */
const CHRONO_BUNDLE = 'dist/retrieval/chrono-en.bundle.cjs'

describe('start-up module graph', () => {
  it('--version loads the bin alone; main.js prints the same', () => {
    for (const args of [['--version'], ['-V']]) {
      const r = loaded(args, '', BIN)
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/)
      expect(r.files.filter((f) => f.startsWith('dist/'))).toEqual(BIN_ENTRY)
      expect(r.files.filter((f) => f.startsWith('node_modules/'))).toEqual([])
      const old = loaded(args)
      expect(old.code).toBe(0)
      expect(old.stdout).toBe(r.stdout)
      expect(old.files.filter((f) => f.startsWith('node_modules/'))).toEqual([])
    }
  })

  it('--help prints the help the build wrote (the CLI own help), loading nothing but the entry', async () => {
    const { runCli } = await import('./program.js')
    let own = ''
    const code = await runCli(['--help'], { stdout: (t) => (own += t), stderr: () => undefined, env: {}, cwd: ROOT, stdoutIsTTY: false })
    expect(code).toBe(0)
    expect(own).toContain('Usage: mnemo [options] [command]')
    for (const args of [['--help'], ['-h']]) {
      const r = loaded(args, '', BIN)
      expect(r.code).toBe(0)
      expect(r.stdout).toBe(own)
      expect(r.files.filter((f) => f.startsWith('dist/') || f.startsWith('node_modules/'))).toEqual(BIN_ENTRY)
      expect(loaded(args).stdout).toBe(own)
    }
  })

  it('help for a command loads the command tables and commander: no engine, store or handler module', () => {
    const r = loaded(['help'], '', BIN)
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Usage: mnemo')
    const ours = r.files.filter((f) => f.startsWith('dist/'))
    expect(ours).toContain('dist/adapters/cli/program.js')
    // No engine, store, capture or runtime module but two light ones: the import format names, and the JSON views'
    // mappers (core types only) that the output helpers use; of the command modules only the facts table (it
    // registers its own).
    expect(ours.filter((f) => /^dist\/(engine|storage|capture|runtime|lifecycle|context)\//.test(f))).toEqual([
      'dist/engine/import-format.js',
      'dist/engine/view-mappers.js',
    ])
    expect(ours.filter((f) => /-commands\.js$/.test(f))).toEqual(['dist/adapters/cli/facts-commands.js'])
    expect(r.files.filter((f) => f.startsWith('node_modules/')).every((f) => f.startsWith('node_modules/commander/'))).toBe(true)
  })

  it('status, recall and context run from the CLI bundle, without the heavy packages they do not use', () => {
    for (const args of [['status'], ['recall', 'retry logic'], ['context']]) {
      const r = loaded(args, '', BIN)
      expect(r.code, args.join(' ')).toBe(0)
      expect(heavyIn(r.files), args.join(' ')).toEqual([])
      expect(
        r.files.filter((f) => f.startsWith('dist/') && !f.endsWith('.bundle.cjs')),
        args.join(' '),
      ).toEqual(BIN_ENTRY)
      // main.js (an older `mnemo` link, or a script naming it) runs them from the same bundle.
      const old = loaded(args)
      expect(old.code, args.join(' ')).toBe(0)
      expect(old.files.filter((f) => f.endsWith('.bundle.cjs'))).toEqual(r.files.filter((f) => f.endsWith('.bundle.cjs')))
      // commander and better-sqlite3's JavaScript are inlined into the bundle: of the packages only the driver's addon.
      expect(
        r.files.filter((f) => f.startsWith('node_modules/')),
        args.join(' '),
      ).toEqual([SQLITE_ADDON])
    }
  })

  it('a hook runs from the hook bundle, without commander or the heavy packages', () => {
    const payload = JSON.stringify({
      session_id: 's1',
      cwd: '/tmp/startup-graph',
      hook_event_name: 'UserPromptSubmit',
      prompt: 'why does the retry loop spin?',
    })
    // As `mnemo connect` writes hook commands: node and the bin.
    const r = loaded(['hook', 'UserPromptSubmit'], payload, BIN)
    expect(r.code).toBe(0)
    // Stored, not spooled: the bundle did the whole job.
    expect(existsSync(path.join(r.home, 'mnemo.db'))).toBe(true)
    expect(existsSync(path.join(r.home, 'logs', 'errors.jsonl'))).toBe(false)
    expect(r.files.filter((f) => f.startsWith('dist/') && !f.endsWith('.bundle.cjs'))).toEqual(BIN_ENTRY)
    expect(heavyIn(r.files)).toEqual([])
    expect(r.files.some((f) => f.startsWith('node_modules/commander/'))).toBe(false)
    expect(r.files.filter((f) => f.startsWith('node_modules/better-sqlite3/'))).toEqual([SQLITE_ADDON])
  })

  it('a hook command naming main.js (written by earlier builds) stores the event from the same bundles as the bin', () => {
    const payload = JSON.stringify({ session_id: 's1', cwd: '/tmp/startup-graph', hook_event_name: 'UserPromptSubmit', prompt: 'retry?' })
    const r = loaded(['hook', 'UserPromptSubmit'], payload)
    const bin = loaded(['hook', 'UserPromptSubmit'], payload, BIN)
    expect(r.code).toBe(0)
    expect(existsSync(path.join(r.home, 'mnemo.db'))).toBe(true)
    expect(existsSync(path.join(r.home, 'logs', 'errors.jsonl'))).toBe(false)
    expect(r.files.filter((f) => f.startsWith('dist/') && !f.endsWith('.bundle.cjs'))).toEqual(ENTRY)
    expect(r.files.filter((f) => f.endsWith('.bundle.cjs'))).toEqual(bin.files.filter((f) => f.endsWith('.bundle.cjs')))
  })

  it('the bundles are ASCII: Node reads them into one-byte strings (one other character makes a bundle two-byte)', () => {
    for (const bundle of [
      'dist/adapters/cli/program.bundle.cjs',
      'dist/adapters/hooks/run-hook.bundle.cjs',
      'dist/adapters/hooks/deferred-capture.bundle.cjs',
      CHRONO_BUNDLE,
    ]) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts at the first character past ASCII
      expect(readFileSync(path.join(ROOT, bundle), 'utf8').match(/[^\u0000-\u007f]/g) ?? [], bundle).toEqual([])
    }
  })

  it('the bundles hold no import(): functions V8 restores from a code cache cannot run one, so a recall that reads a date still works', () => {
    for (const bundle of ['dist/adapters/cli/program.bundle.cjs', 'dist/adapters/hooks/run-hook.bundle.cjs', CHRONO_BUNDLE]) {
      expect(readFileSync(path.join(ROOT, bundle), 'utf8').match(/\bimport\(/g) ?? [], bundle).toEqual([])
    }
    // The time channel loads chrono-node lazily: from the cached bundle, that load must work (the date is read), and
    // chrono comes from its own bundle (its English parser alone, with its code cache; a vm.Script, which the module
    // log does not name), not from the package's ~60 files.
    const r = loaded(['recall', 'what broke in the retry loop on 16 June 2023', '--json'])
    expect(r.code).toBe(0)
    expect((JSON.parse(r.stdout) as { warnings: string[] }).warnings).toContainEqual(
      expect.stringContaining('"on 16 June 2023" (2023-06-16 00:00 to 2023-06-17 00:00'),
    )
    expect(existsSync(path.join(ROOT, CHRONO_BUNDLE))).toBe(true)
    expect(r.files.filter((f) => f.startsWith('node_modules/chrono-node/'))).toEqual([])
  })

  it('a prompt that names a date loads chrono-node from its bundle in the hook too', () => {
    const payload = JSON.stringify({
      session_id: 's1',
      cwd: '/tmp/startup-graph',
      hook_event_name: 'UserPromptSubmit',
      prompt: 'what broke in the retry loop on 16 June 2023?',
    })
    const r = loaded(['hook', 'UserPromptSubmit'], payload)
    expect(r.code).toBe(0)
    // The per-prompt recall read the date without a failure (one would be logged) and without the package's files.
    expect(existsSync(path.join(r.home, 'logs', 'errors.jsonl'))).toBe(false)
    expect(r.files.filter((f) => f.startsWith('node_modules/chrono-node/'))).toEqual([])
  })
})
