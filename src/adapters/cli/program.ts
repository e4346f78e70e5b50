import { Command, CommanderError, Option } from 'commander'
import type { MnemoEnv } from '../../config/config.js'
import { MnemoError } from '../../core/errors.js'
import { ALL_MEMORY_KINDS, CHANNEL_NAMES } from '../../core/types.js'
import { IMPORT_FORMATS } from '../../engine/import-format.js'
import { EXIT_CODE_BY_ERROR } from './exit-codes.js'
import { registerFactsCommands } from './facts-commands.js'
import type { Out } from './output.js'
import { MNEMO_VERSION } from './version.js'

// commander is imported, not required: the CLI's bundle inlines it (scripts/build-bundles.mjs), compiled with the
// bundle's code cache instead of from its five files (~4 ms CPU); the ES modules tsc emits pay an export scan of it.

/**
 * The command handlers, by group, each module loaded when one of its commands runs: `--version`, `--help` and a
 * usage error load none of them, and a command loads only its own group's graph (`recall` never loads the MCP SDK,
 * the connect planners or the import parsers).
 */
const memoryCommands = () => import('./memory-commands.js')
const storeCommands = () => import('./store-commands.js')
const agentCommands = () => import('./agent-commands.js')
const serverCommands = () => import('./server-commands.js')
const migrateCommands = () => import('./migrate-commands.js')

/** What the CLI reads and writes; the real process, or fakes in tests. */
export interface CliIo {
  stdout: (text: string) => void
  stderr: (text: string) => void
  env: MnemoEnv
  cwd: string
  /** Whether stdout is a terminal (a person reads it), not a pipe or file; default false. */
  stdoutIsTTY?: boolean
  /** Reads all of stdin (`remember -`); default: the process's stdin. */
  readStdin?: () => Promise<string>
}

/** Columns help text is wrapped at (commander's default for output that is not a terminal). */
const HELP_WIDTH = 80

/** Options every command accepts. */
export interface GlobalOptions {
  json?: boolean
  home?: string
  debug?: boolean
  /** Read every user's data (with MNEMO_USER set, reads see only that user's and shared data). */
  allUsers?: boolean
}

/**
 * The CLI's commands on a commander program: all of them, or with `only`, only the top-level command of that name
 * (none when there is no such command). Defining them all costs a process ~4 ms CPU, a third of what `mnemo status`
 * does after start-up; a command given no `--help` parses as it would among all of them.
 */
function build(
  io: CliIo,
  // biome-ignore lint/suspicious/noConfusingVoidType: an action returns nothing or an exit code; `void`, unlike `undefined`, admits `async () => {…}` bodies
  run: (fn: () => Promise<void | number> | void | number) => Promise<void>,
  only?: string,
): Command {
  const want = (name: string): boolean => only === undefined || name === only
  const program = new Command('mnemo')
    .description('Memory engine for AI coding agents: capture, recall and inject context.')
    .version(MNEMO_VERSION)
    .exitOverride()
    // Help is wrapped at a fixed width, not the terminal's: the same text everywhere, so the build can write the
    // top-level help once for main.ts to print without loading this module (dist/adapters/cli/help.txt).
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr, getOutHelpWidth: () => HELP_WIDTH, getErrHelpWidth: () => HELP_WIDTH })
    .showHelpAfterError('(run mnemo --help for usage)')
  const common = (cmd: Command): Command =>
    cmd
      .option('--json', 'print one JSON document on stdout')
      .option('--home <dir>', 'data directory (default: $MNEMO_HOME or ~/.mnemo)')
      .option('--debug', 'print stack traces on failure')
  // Commands a person reads or changes stored data with: they may ask for every user's (hooks and MCP never can).
  const anyUser = (cmd: Command): Command => cmd.option('--all-users', "every user's data, not only $MNEMO_USER's and shared data")
  const out = (o: GlobalOptions): Out => ({ json: o.json === true, stdout: io.stdout, stderr: io.stderr })

  if (want('demo'))
    common(program.command('demo').description('capture a sample session through the real hook path, then show recall and context'))
      .option('--keep', 'keep the demo data directory')
      .action((o) => run(async () => (await agentCommands()).demo(io, out(o), o)))

  // The executables run `hook` (hook-entry.ts) before this parser is built; these options are listed for --help.
  if (want('hook'))
    common(program.command('hook <event>').description('the entry point an agent hook calls; reads the hook JSON on stdin; always exits 0'))
      .option('--agent <name>', 'the agent calling: claude-code, codex, gemini, cursor, opencode (default claude-code)')
      .action(() => undefined)

  if (want('connect'))
    common(
      program
        .command('connect [agent]')
        .description('register mnemo hooks (where the agent has them) and MCP server: claude-code, codex, gemini, cursor, opencode'),
    )
      .addOption(new Option('--scope <scope>', 'user settings or this project').choices(['user', 'project']).default('user'))
      .option('--all', 'every supported agent')
      .option('--dry-run', 'print the change instead of writing it')
      .option('--node <path>', 'the node binary the hooks and MCP server run with (absolute; default: the one running this command)')
      .action((agent: string | undefined, o) => run(async () => (await agentCommands()).connect(io, out(o), agent, o)))

  if (want('disconnect'))
    common(program.command('disconnect [agent]').description("remove mnemo's hooks and MCP server from an agent (or --all)"))
      .addOption(new Option('--scope <scope>', 'user settings or this project').choices(['user', 'project']).default('user'))
      .option('--all', 'every supported agent')
      .option('--dry-run', 'print the change instead of writing it')
      .action((agent: string | undefined, o) => run(async () => (await agentCommands()).disconnect(io, out(o), agent, o)))

  if (want('doctor'))
    common(
      program
        .command('doctor')
        .description("check each agent's configuration, the data directory, the database, the spool, and say what to fix"),
    ).action((o) => run(async () => (await agentCommands()).doctor(io, out(o), o)))

  if (want('import'))
    anyUser(
      common(
        program
          .command('import [path]')
          .description(
            'import Claude Code / Codex / Gemini CLI transcripts, OpenCode storage, Cursor state.vscdb (file or folder) or LoCoMo JSON',
          ),
      ),
    )
      .addOption(new Option('--format <format>', 'input format (mnemo = a mnemo export)').choices(IMPORT_FORMATS).default('auto'))
      .option('--project <project>', 'project to file the sessions under (name or path)')
      .action((p: string | undefined, o) => run(async () => (await storeCommands()).importCmd(io, out(o), p, o)))

  if (want('recall'))
    textArguments(
      anyUser(common(program.command('recall <query...>').description('ranked full-text recall over observations and memories'))),
    )
      .option('--project <project>', "project name or any path inside it (default: this folder's project)")
      .option('--all-projects', 'search every project')
      .option(
        '--kind <list>',
        `only these kinds, comma-separated: observation kinds (prompt, tool, error, …) or memory kinds (${ALL_MEMORY_KINDS.join(', ')})`,
      )
      .option('--session <id>', 'only this session (ses_… id)')
      .option('--limit <n>', 'most hits, 1–100', '10')
      .option('--channels <list>', `channels to use, comma-separated: ${CHANNEL_NAMES.join(',')} (default: every channel with a weight)`)
      .option('--explain', 'show which channels found each hit, at which rank')
      .option('--as-of <time>', 'recall as of a past ISO-8601 time: what existed then, memories as they were then')
      .option('--include-archived', 'also search archived memories')
      .action((q: string[], o) => run(async () => (await memoryCommands()).recall(io, out(o), q.join(' '), o)))

  if (want('remember'))
    textArguments(
      common(program.command('remember [text...]').description('store an explicit memory (the words joined; - or no text reads stdin)')),
    )
      .option('--project <project>', "project name or path, created if new (default: this folder's project)")
      .addOption(new Option('--kind <kind>', 'kind of memory').choices(['decision', 'fact', 'preference', 'lesson']).default('fact'))
      .option('--supersedes <id>', 'the memory this one replaces (mem_…)')
      .option('--scope <scope>', 'project (default) or user: yours, recalled in every project of this user')
      .action((t: string[], o) => run(async () => (await memoryCommands()).remember(io, out(o), t, o)))

  if (want('memories'))
    anyUser(common(program.command('memories').description('list memories by kind, tier and state, pinned first, then newest')))
      .option('--project <project>', "project name or any path inside it (default: this folder's project)")
      .option('--all-projects', "every project's memories")
      .option('--kind <list>', `only these kinds, comma-separated: ${ALL_MEMORY_KINDS.join(', ')}`)
      .addOption(
        new Option('--tier <tier>', 'episodic (summaries), semantic (facts, decisions, …), procedural')
          .choices(['episodic', 'semantic', 'procedural', 'all'])
          .default('all'),
      )
      .addOption(
        new Option('--state <state>', 'current, archived, superseded (older versions) or all')
          .choices(['current', 'archived', 'superseded', 'all'])
          .default('current'),
      )
      .option('--limit <n>', 'most memories, 1–1000', '50')
      .action((o) => run(async () => (await memoryCommands()).memories(io, out(o), o)))

  if (want('edit'))
    textArguments(
      anyUser(
        common(
          program
            .command('edit <id> [text...]')
            .description('correct a memory: the new text is stored as a new version that supersedes it (- or no text reads stdin)'),
        ),
      ),
    ).action((id: string, t: string[], o) => run(async () => (await memoryCommands()).edit(io, out(o), id, t, o)))

  if (want('move'))
    common(
      program
        .command('move <id>')
        .description("make a memory yours in every project (--to user) or a project's (--to project [--project P])"),
    )
      .requiredOption('--to <where>', 'user or project')
      .option('--project <project>', "with --to project: project name or path (default: this folder's project)")
      .action((id: string, o) => run(async () => (await memoryCommands()).move(io, out(o), id, o)))

  if (want('forget'))
    anyUser(
      common(
        program
          .command('forget [id]')
          .description('delete an observation or memory for good, or a whole scope (--project with --session/--before)'),
      ),
    )
      .option('--project <project>', "delete this project's data (name or path)")
      .option('--session <id>', 'with --project: only this session (ses_… id)')
      .option('--before <time>', 'with --project: only what happened before this ISO-8601 time')
      .option('--yes', 'confirm a scoped delete')
      .option('--chain', 'with a memory id: forget every version of it, not only this one')
      .action((id: string | undefined, o) => run(async () => (await memoryCommands()).forget(io, out(o), id, o)))

  for (const [name, what] of [
    ['pin', 'pin a memory: it never decays or archives'],
    ['unpin', 'unpin a memory'],
    ['archive', 'move a memory out of default recall and context (restorable)'],
    ['restore', 'bring an archived memory back'],
  ] as const) {
    if (!want(name)) continue
    anyUser(common(program.command(`${name} <id>`).description(what))).action((id: string, o) =>
      run(async () => (await memoryCommands()).memoryState(io, out(o), id, name, o)),
    )
  }

  if (want('history'))
    anyUser(
      common(program.command('history <id>').description("a memory's version chain: what it superseded and what superseded it")),
    ).action((id: string, o) => run(async () => (await memoryCommands()).history(io, out(o), id, o)))

  if (want('sessions'))
    anyUser(common(program.command('sessions').description('list sessions, newest first')))
      .option('--project <project>', "project name or any path inside it (default: this folder's project)")
      .option('--all-projects', 'list the sessions of every project')
      .option('--limit <n>', 'most sessions, 1–1000', '50')
      .action((o) => run(async () => (await memoryCommands()).sessions(io, out(o), o)))

  if (want('show'))
    anyUser(common(program.command('show <id>').description('show an observation, memory or session in full'))).action((id: string, o) =>
      run(async () => (await memoryCommands()).show(io, out(o), id, o)),
    )

  if (want('context'))
    anyUser(common(program.command('context').description('print the context block a new session of a project gets')))
      .option('--project <project>', "project name or path (default: this folder's project)")
      .option('--budget <tokens>', 'token budget (default: $MNEMO_CONTEXT_BUDGET or 2000)')
      .action((o) => run(async () => (await memoryCommands()).context(io, out(o), o)))

  if (want('status'))
    common(program.command('status').description('data directory, counts, last capture, spool and recent errors')).action((o) =>
      run(async () => (await storeCommands()).status(io, out(o), o)),
    )

  if (want('spool')) {
    const spool = program.command('spool').description('hook inputs mnemo could not store: list, retry or purge those kept in spool/bad/')
    common(spool.command('list').description('what spool/bad/ holds, oldest first')).action((o) =>
      run(async () => (await storeCommands()).spoolList(io, out(o), o)),
    )
    common(
      spool.command('retry').description('store what spool/bad/ holds again (after the cause is fixed); what still fails stays'),
    ).action((o) => run(async () => (await storeCommands()).spoolRetry(io, out(o), o)))
    common(spool.command('purge').description('delete what spool/bad/ holds, for good'))
      .option('--yes', 'confirm')
      .action((o) => run(async () => (await storeCommands()).spoolPurge(io, out(o), o)))
  }

  if (want('rebuild'))
    common(program.command('rebuild').description('re-derive sessions, observations, memories and indexes from the event log')).action(
      (o) => run(async () => (await storeCommands()).rebuild(io, out(o), o)),
    )

  if (want('compact'))
    common(
      program
        .command('compact')
        .description('fold old capture events into what they derived (answers unchanged, log smaller), then vacuum'),
    )
      .option('--before <time>', 'fold events older than this ISO-8601 time (required)')
      .option('--project <project>', 'only this project (name or path)')
      .option('--no-vacuum', 'skip rewriting the database file afterwards')
      .action((o) => run(async () => (await storeCommands()).compact(io, out(o), o)))

  if (want('consolidate'))
    common(
      program
        .command('consolidate')
        .description('summarise finished sessions, derive lessons, archive what decayed (deterministic, no model)'),
    )
      .option('--idle-minutes <n>', 'a session idle this long counts as finished', '30')
      .action((o) => run(async () => (await storeCommands()).consolidate(io, out(o), o)))

  if (want('export'))
    anyUser(
      common(
        program.command('export').description('write everything (or one project) as a versioned JSONL export on stdout, or Markdown files'),
      ),
    )
      .option('--project <project>', 'only this project (name or path)')
      .addOption(
        new Option('--format <format>', 'jsonl (lossless, re-importable) or markdown (for people)')
          .choices(['jsonl', 'markdown'])
          .default('jsonl'),
      )
      .option('--out <path>', 'write to this file (jsonl) or folder (markdown) instead of stdout')
      .option('--force', "replace files that already exist (never the store's own files)")
      .action((o) => run(async () => (await storeCommands()).exportCmd(io, out(o), o)))

  if (want('redact'))
    common(program.command('redact').description('re-run secret redaction over everything stored (new patterns), with an audit record'))
      .option('--rescan', 'rewrite stored events whose text now matches a secret pattern, then rebuild')
      .action((o) => run(async () => (await storeCommands()).redact(io, out(o), o)))

  if (want('reindex'))
    common(program.command('reindex').description('recompute vectors: refit the builtin model, embed with the configured embedder'))
      .option('--project <project>', 'only this project (name or path)')
      .action((o) => run(async () => (await storeCommands()).reindex(io, out(o), o)))

  if (want('serve'))
    common(
      program
        .command('serve')
        .description('run the HTTP server: REST API under /v1 and MCP (streamable HTTP) at /mcp, with a bearer token'),
    )
      .option('--port <n>', 'port to listen on, 0 for any free port (default: $MNEMO_PORT or 7077)')
      .option('--host <host>', 'address to bind', '127.0.0.1')
      .option(
        '--allowed-hosts <names>',
        'comma-separated host names clients may reach it by besides its own addresses (other Host/Origin headers get 403)',
      )
      .option(
        '--database <url>',
        'keep the data in this PostgreSQL database (postgres://user:password@host:5432/db; default: $MNEMO_DATABASE_URL, else the SQLite file)',
      )
      .action((o) => run(async () => (await serverCommands()).serve(io, out(o), o)))

  if (want('migrate'))
    common(
      program
        .command('migrate')
        .description('copy the whole store into another database (SQLite ⇄ PostgreSQL), then check the counts match'),
    )
      .option('--to <database>', "copy this data directory's store into a postgres:// URL or an SQLite file")
      .option('--from <database>', "copy a postgres:// URL or an SQLite file into this data directory's store (or into --to)")
      .option('--force', 'copy into a target that already holds data (a merge: events it holds are skipped)')
      .action((o) => run(async () => (await migrateCommands()).migrate(io, out(o), o)))

  if (want('viewer'))
    common(program.command('viewer').description("print the web viewer's address (with the token) for the server on this machine"))
      .option('--port <n>', 'port the server listens on (default: $MNEMO_PORT or 7077)')
      .option('--host <host>', 'address the server listens on', '127.0.0.1')
      .action((o) => run(async () => (await serverCommands()).viewer(io, out(o), o)))

  if (want('user')) {
    const user = program
      .command('user')
      .description('team server users: each gets a token of their own and reads and writes only their data and shared data')
    common(user.command('add <name>').description('give a user a token (printed once)'))
      .option('--replace', 'give a user who has a token a new one (the old one stops working)')
      .action((name: string, o) => run(async () => (await serverCommands()).userAdd(io, out(o), name, o)))
    common(user.command('remove <name>').description("revoke a user's token (their data stays)")).action((name: string, o) =>
      run(async () => (await serverCommands()).userRemove(io, out(o), name, o)),
    )
    common(user.command('list').description('users with a token')).action((o) =>
      run(async () => (await serverCommands()).userList(io, out(o), o)),
    )
  }

  if (want('mcp'))
    common(program.command('mcp').description('run the MCP server over stdio'))
      .option('--agent <name>', 'the agent launching it (mnemo connect writes it): claude-code, codex, gemini, cursor, opencode')
      .action((o) => run(async () => (await agentCommands()).mcp(io, o)))

  if (want('facts')) registerFactsCommands(program, io, run)

  if (want('bench')) {
    const bench = program.command('bench').description('retrieval benchmarks')
    common(bench.command('locomo <file>').description('LoCoMo turn-level evidence recall (protocol in docs/BENCHMARKS.md)'))
      .option('--limit-questions <n>', 'only the first n questions (quick runs)')
      .option('--channels <list>', `channels to use (ablation), comma-separated: ${CHANNEL_NAMES.join(',')}`)
      .option('--conversations <list>', 'only these conversations (sample_id), comma-separated: conv-26,conv-41')
      .option(
        '--database <url>',
        'run on PostgreSQL: a fresh database per conversation on this server (postgres://…, a role allowed to CREATE DATABASE)',
      )
      .option('--compare', 'with --database: run on SQLite too and print both beside each other')
      .action((file: string, o) => run(async () => (await agentCommands()).benchLocomo(io, out(o), file, o)))

    common(
      bench.command('longmemeval <file>').description('LongMemEval retrieval scoring: session and turn level recall_any/recall_all/NDCG@k'),
    )
      .option('--limit-questions <n>', 'only the first n questions (quick runs)')
      .option('--channels <list>', 'channels to use (ablation), comma-separated')
      .action((file: string, o) => run(async () => (await agentCommands()).benchLongMemEval(io, out(o), file, o)))
  }

  return program
}

/**
 * Makes every argument of `cmd` that holds whitespace text, never an option: `remember "-5 degrees in the
 * server room"` is a memory, not an unknown option `-5 …` (an option name has no spaces; `--opt=a b` stays an
 * option). `--` ends the options as usual (`remember -- -5`).
 */
function textArguments(cmd: Command): Command {
  const parse = cmd.parseOptions.bind(cmd)
  cmd.parseOptions = (args: string[]) => {
    const held = new Map<string, string>()
    const masked = args.map((a, i) => {
      if (!a.startsWith('-') || !/\s/.test(a) || /^--[^=\s]+=/.test(a)) return a
      const key = `\u0000${i}`
      held.set(key, a)
      return key
    })
    const r = parse(masked)
    const back = (list: string[]): string[] => list.map((a) => held.get(a) ?? a)
    return { operands: back(r.operands), unknown: back(r.unknown) }
  }
  return cmd
}

/**
 * Runs the CLI with `argv` (without `node` and the script path) and returns
 * the exit code: 0 success, 2 usage error, 1 other failure. Errors print a
 * one-line message (and hint) on stderr; with `--json` also
 * `{"error":{code,message,hint}}` on stdout.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode = 0
  const wantsJson = argv.includes('--json')
  const wantsDebug = argv.includes('--debug')
  // biome-ignore lint/suspicious/noConfusingVoidType: an action returns nothing or an exit code; `void`, unlike `undefined`, admits `async () => {…}` bodies
  const run = async (fn: () => Promise<void | number> | void | number): Promise<void> => {
    try {
      // A command may return its own exit code (doctor: 1 when something is broken).
      const code = await fn()
      if (typeof code === 'number') exitCode = code
    } catch (error) {
      exitCode = report(io, error, wantsJson, wantsDebug)
    }
  }
  // The command named first alone (see `build`), unless help is asked for or no command has that name (then all of
  // them, for commander's error and its suggestion of a near name).
  const named = argv[0] !== undefined && !argv[0].startsWith('-') && !argv.includes('--help') && !argv.includes('-h')
  let program = build(io, run, named ? argv[0] : undefined)
  if (program.commands.length === 0) program = build(io, run)
  try {
    await program.parseAsync([...argv], { from: 'user' })
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0
      if (wantsJson)
        io.stdout(
          `${JSON.stringify({ error: { code: 'INVALID_INPUT', message: error.message.replace(/^error: /, ''), hint: 'run mnemo --help for usage' } })}\n`,
        )
      return 2
    }
    return report(io, error, wantsJson, wantsDebug)
  }
  return exitCode
}

function report(io: CliIo, error: unknown, json: boolean, debug: boolean): number {
  if (MnemoError.is(error)) {
    io.stderr(`mnemo: ${error.message}\n`)
    if (error.hint) io.stderr(`hint: ${error.hint}\n`)
    if (debug && error.stack) io.stderr(`${error.stack}\n`)
    if (debug && error.cause) io.stderr(`cause: ${String((error.cause as Error).stack ?? error.cause)}\n`)
    if (json) io.stdout(`${JSON.stringify({ error: { code: error.code, message: error.message, hint: error.hint ?? null } })}\n`)
    return EXIT_CODE_BY_ERROR[error.code]
  }
  const message = error instanceof Error ? error.message : String(error)
  io.stderr(`mnemo: unexpected failure: ${message}\n`)
  if (debug && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`)
  if (json) io.stdout(`${JSON.stringify({ error: { code: 'INTERNAL', message, hint: null } })}\n`)
  return 1
}
