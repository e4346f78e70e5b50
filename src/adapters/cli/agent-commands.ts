import { spawnSync } from 'node:child_process'
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { invalidInput, MnemoError } from '../../core/errors.js'
import { type AgentName, SURFACE_AGENTS } from '../../core/types.js'
import { resolveProjectRoot } from '../../engine/project-root.js'
import { dataDirError } from '../../runtime/data-dir.js'
import type { LongMemEvalReport } from '../../bench/longmemeval.js'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { disconnectClaudeCode, planClaudeCodeConnect } from './connect/claude-code.js'
import { planCodexConnect, planCodexDisconnect } from './connect/codex.js'
import {
  type AgentConnectOptions,
  type AgentDisconnectOptions,
  applyConnectPlan,
  type ConnectPlan,
  renderPlanDiff,
} from './connect/connect-plan.js'
import { planCursorConnect, planCursorDisconnect } from './connect/cursor.js'
import { checkAgents, type DoctorAgent, mnemoHookCount } from './connect/doctor.js'
import { planGeminiConnect, planGeminiDisconnect } from './connect/gemini.js'
import { planOpenCodeConnect, planOpenCodeDisconnect } from './connect/opencode.js'
import { CLI_PATH, DEMO_SESSION, parseChannels, parseIntOption, withMnemo } from './cli-kit.js'
import { formatHits, hitToJson, type Out, printJson } from './output.js'
import type { CliIo, GlobalOptions } from './program.js'

// CLI commands that work with agents: mcp, connect/disconnect, doctor, the benches and the demo.

export async function mcp(io: CliIo, o: GlobalOptions & { agent?: string }): Promise<void> {
  const { serveMcpStdio } = await import('../mcp/server.js')
  if (o.agent !== undefined && !(SURFACE_AGENTS as readonly string[]).includes(o.agent)) {
    throw invalidInput('agent', `--agent must be one of ${SURFACE_AGENTS.join(', ')} (got ${JSON.stringify(o.agent)})`)
  }
  await serveMcpStdio({
    env: io.env,
    cwd: io.cwd,
    ...(o.home ? { home: o.home } : {}),
    ...(o.agent !== undefined ? { agent: o.agent as AgentName } : {}),
  })
}

/** Agents `connect` and `disconnect` know, with their planners. */
const AGENT_PLANNERS: Record<
  string,
  { connect: (o: AgentConnectOptions) => ConnectPlan; disconnect: (o: AgentDisconnectOptions) => ConnectPlan }
> = {
  'claude-code': { connect: planClaudeCodeConnect, disconnect: disconnectClaudeCode },
  codex: { connect: planCodexConnect, disconnect: planCodexDisconnect },
  gemini: { connect: planGeminiConnect, disconnect: planGeminiDisconnect },
  cursor: { connect: planCursorConnect, disconnect: planCursorDisconnect },
  opencode: { connect: planOpenCodeConnect, disconnect: planOpenCodeDisconnect },
}

export const CONNECT_AGENTS = Object.keys(AGENT_PLANNERS)

/**
 * The MNEMO_HOME the hooks and MCP entries should carry: `--home` (made absolute against the working directory)
 * wins over the environment's MNEMO_HOME; undefined when neither is set (the agents then use ~/.mnemo).
 */
function mnemoHomeOf(io: CliIo, home: string | undefined): string | undefined {
  if (home !== undefined && home !== '') return path.resolve(io.cwd, home)
  return io.env['MNEMO_HOME'] ? io.env['MNEMO_HOME'] : undefined
}

function connectPlan(
  agent: string,
  scope: string | undefined,
  io: CliIo,
  disconnecting: boolean,
  nodePath: string = process.execPath,
  home?: string,
): ConnectPlan {
  if (!CONNECT_AGENTS.includes(agent))
    throw invalidInput('agent', `unknown agent ${JSON.stringify(agent)}; supported: ${CONNECT_AGENTS.join(', ')}`)
  // --scope project means the repository, wherever in it the command runs (as captures file it): its git top-level.
  const location = {
    scope: (scope ?? 'user') as 'user' | 'project',
    projectDir: resolveProjectRoot(io.cwd).root,
    env: io.env,
    ...(io.env['HOME'] ? { homeDir: io.env['HOME'] } : {}),
  }
  // The agent runs the hooks of both scopes: a second registration would capture every event twice.
  const other = location.scope === 'user' ? 'project' : 'user'
  if (
    !disconnecting &&
    (location.scope === 'user' || location.scope === 'project') &&
    mnemoHookCount(agent as DoctorAgent, other, { ...location, cliPath: CLI_PATH, nodePath }) > 0
  ) {
    throw invalidInput(
      'scope',
      `mnemo's hooks for ${agent} are already registered in the ${other} scope${other === 'project' ? ` of ${location.projectDir}` : ''}; connecting the ${location.scope} scope too would run every hook twice`,
      `keep that one, or run mnemo disconnect ${agent} --scope ${other} first`,
    )
  }
  const mnemoHome = mnemoHomeOf(io, home)
  const command = { cliPath: CLI_PATH, nodePath, ...(mnemoHome !== undefined ? { mnemoHome } : {}) }
  const planners = AGENT_PLANNERS[agent]!
  return disconnecting ? planners.disconnect({ ...location, cliPath: CLI_PATH }) : planners.connect({ ...location, ...command })
}

function reportPlans(out: Out, plans: readonly ConnectPlan[], dryRun: boolean): void {
  const docs: Record<string, unknown>[] = []
  for (const p of plans) {
    const written = dryRun ? [] : applyConnectPlan(p)
    // Project-scope files are often committed: say that they hold this machine's paths.
    const machinePaths =
      p.scope === 'project' && p.action === 'connect' ? p.files.filter((f) => f.after.includes(CLI_PATH)).map((f) => f.path) : []
    const warning =
      machinePaths.length > 0
        ? `${machinePaths.join(' and ')} now hold this machine's absolute paths (node, the mnemo CLI ${CLI_PATH}${p.files.some((f) => /MNEMO_HOME/.test(f.after)) ? ', MNEMO_HOME' : ''}): they work on this machine only. Do not commit them (add them to .gitignore); on a shared repository each person runs mnemo connect ${p.client} (user scope) instead`
        : undefined
    docs.push({
      agent: p.client,
      dryRun,
      files: p.files.map((f) => ({ path: f.path, kind: f.kind, changed: f.changed, ...(dryRun ? { after: f.after } : {}) })),
      written,
      notes: p.notes,
      ...(warning ? { warnings: [warning] } : {}),
    })
    if (warning) out.stderr(`warning: ${warning}\n`)
    if (out.json) continue
    // A blank line after every agent's plan but Claude Code's, as the output has always had.
    out.stdout(`${renderPlanDiff(p)}${p.client === 'claude-code' ? '' : '\n'}`)
    out.stdout(dryRun ? '(dry run: nothing written)\n' : written.length > 0 ? `wrote ${written.join(', ')}\n` : 'already up to date\n')
  }
  if (out.json) printJson(out, plans.length === 1 ? docs[0] : { agents: docs })
}

function agentsOf(agent: string | undefined, all: boolean | undefined): string[] {
  if (all) return CONNECT_AGENTS
  if (agent === undefined) throw invalidInput('agent', `name an agent (${CONNECT_AGENTS.join(', ')}) or use --all`)
  return [agent]
}

/**
 * Refuses a `--node` that is not an existing executable file: every hook and the MCP server would fail to start.
 * @throws MnemoError INVALID_INPUT (details.path `node`), naming the path.
 */
function checkNodeBinary(node: string): void {
  let isFile: boolean
  try {
    isFile = statSync(node).isFile()
  } catch {
    throw invalidInput('node', `--node ${node} does not exist`, 'give the absolute path of a node binary, e.g. --node "$(command -v node)"')
  }
  let executable = isFile
  if (isFile) {
    try {
      accessSync(node, constants.X_OK)
    } catch {
      executable = false
    }
  }
  if (!executable)
    throw invalidInput(
      'node',
      `--node ${node} is not an executable file`,
      'give the absolute path of a node binary, e.g. --node "$(command -v node)"',
    )
}

export async function connect(
  io: CliIo,
  out: Out,
  agent: string | undefined,
  o: GlobalOptions & { scope?: string; dryRun?: boolean; all?: boolean; node?: string },
): Promise<void> {
  if (o.node !== undefined) checkNodeBinary(o.node)
  reportPlans(
    out,
    agentsOf(agent, o.all).map((a) => connectPlan(a, o.scope, io, false, o.node, o.home)),
    o.dryRun === true,
  )
}

export async function disconnect(
  io: CliIo,
  out: Out,
  agent: string | undefined,
  o: GlobalOptions & { scope?: string; dryRun?: boolean; all?: boolean },
): Promise<void> {
  reportPlans(
    out,
    agentsOf(agent, o.all).map((a) => connectPlan(a, o.scope, io, true)),
    o.dryRun === true,
  )
}

/**
 * Checks each agent's configuration, the data directory, the database, the
 * spool and the error log, and says what to fix. Exit 1 when something is broken.
 */
export async function doctor(io: CliIo, out: Out, o: GlobalOptions): Promise<number> {
  const mnemoHome = mnemoHomeOf(io, o.home)
  const agents = checkAgents({
    cliPath: CLI_PATH,
    nodePath: process.execPath,
    projectDir: resolveProjectRoot(io.cwd).root,
    env: io.env,
    ...(io.env['HOME'] ? { homeDir: io.env['HOME'] } : {}),
    ...(mnemoHome !== undefined ? { mnemoHome } : {}),
  })
  type Check = { check: string; status: string; detail: string; fix: string }
  let store: Check[]
  try {
    store = await withMnemo(io, o, async (m) => {
      const integrity = await m.engine.integrityCheck()
      const spool = { pending: m.spool.count(), bad: m.spool.badCount() }
      const errors = m.errors.tail(5)
      const derivation = await m.engine.derivation()
      // SQLite opens a database file this user may not write read-only without a word: ask the file system.
      const unwritable = m.config.dbPath === ':memory:' ? undefined : dataDirError(m.config.home, undefined, m.config.dbPath)
      const { remoteServer, checkRemote } = await import('../../runtime/remote-server.js')
      const remote = remoteServer(io.env, m.config.home)
      const server = remote ? await checkRemote(remote) : undefined
      const team = remote !== undefined
      return [
        ...(server
          ? [
              {
                check: 'team server',
                status: server.ok ? 'ok' : 'broken',
                detail: `${server.url}: ${server.detail}`,
                fix: server.ok ? '' : 'start mnemo serve there, or fix MNEMO_SERVER_URL / MNEMO_SERVER_TOKEN; hooks spool until then',
              },
            ]
          : []),
        { check: 'data directory', status: 'ok', detail: m.config.home, fix: '' },
        integrity !== 'ok'
          ? {
              check: 'database',
              status: 'broken',
              detail: `${m.config.dbPath} is damaged: ${integrity}`,
              fix: `move ${m.config.dbPath} aside (mnemo then starts an empty store) and restore your last export with mnemo import <export file>`,
            }
          : m.readOnly || unwritable !== undefined
            ? {
                check: 'database',
                status: 'broken',
                detail: `${unwritable?.message ?? `${m.config.dbPath} opened read-only: this user cannot write it`}, so hooks cannot capture`,
                fix: 'let this user write the data directory and its database (chmod u+w; chattr -i if immutable), or point MNEMO_HOME at another directory',
              }
            : { check: 'database', status: 'ok', detail: m.config.dbPath, fix: '' },
        derivation.stale
          ? {
              check: 'derived rows',
              status: 'stale',
              detail: `made by an older mnemo (derivation ${derivation.derivedWith}; this one makes ${derivation.current})`,
              fix: 'run mnemo rebuild (re-derives every row from the event log)',
            }
          : {
              check: 'derived rows',
              status: 'ok',
              detail: `derivation ${derivation.derivedWith ?? derivation.current}${derivation.derivedWith !== undefined && derivation.derivedWith > derivation.current ? ` (made by a newer mnemo; this one makes ${derivation.current})` : ''}`,
              fix: '',
            },
        {
          check: 'spool',
          status: spool.pending > 0 ? 'stale' : 'ok',
          detail: `${spool.pending} pending, ${spool.bad} unreadable`,
          fix:
            spool.pending > 0
              ? team
                ? 'the next hook sends it to the team server once that is reachable'
                : 'run any mnemo command to drain it; if it stays, see mnemo status errors'
              : '',
        },
        {
          check: 'recent errors',
          status: errors.length > 0 ? 'stale' : 'ok',
          detail: errors.length > 0 ? `${errors.length} (last: ${errors.at(-1)!.message})` : 'none',
          fix: errors.length > 0 ? `see ${m.config.errorLogPath}` : '',
        },
      ]
    })
  } catch (error) {
    // A store that cannot even be opened is what doctor is for: report it, keep the agent checks.
    const message = error instanceof Error ? error.message : String(error)
    store = [
      {
        check: 'data directory / database',
        status: 'broken',
        detail: message,
        fix: 'check MNEMO_HOME points to a folder; restore the database from an export (mnemo import) or move the file aside',
      },
    ]
  }
  const broken = agents.some((a) => a.status === 'broken') || store.some((s) => s.status === 'broken')
  if (out.json) printJson(out, { ok: !broken, agents, store })
  else {
    for (const a of agents)
      out.stdout(`${a.status.padEnd(8)} ${a.agent} (${a.scope}): ${a.detail}${a.fix ? `\n         fix: ${a.fix}` : ''}\n`)
    for (const s of store) out.stdout(`${s.status.padEnd(8)} ${s.check}: ${s.detail}${s.fix ? `\n         fix: ${s.fix}` : ''}\n`)
  }
  return broken ? 1 : 0
}

export async function benchLocomo(
  io: CliIo,
  out: Out,
  file: string,
  o: GlobalOptions & { limitQuestions?: string; channels?: string; conversations?: string; database?: string; compare?: boolean },
): Promise<void> {
  const limitQuestions = parseIntOption('limit-questions', o.limitQuestions, 1, 100_000)
  if (o.database !== undefined && !/^postgres(ql)?:\/\//i.test(o.database.trim()))
    throw invalidInput('database', `--database needs a postgres:// URL (got ${JSON.stringify(o.database.replace(/:[^:@/]*@/, ':***@'))})`)
  if (o.compare && o.database === undefined)
    throw invalidInput('compare', '--compare needs --database postgres://… (the run to compare with SQLite)')
  const channels = parseChannels(o.channels)
  const conversations = o.conversations
    ?.split(',')
    .map((c) => c.trim())
    .filter((c) => c.length > 0)
  if (conversations !== undefined && conversations.length === 0)
    throw invalidInput('conversations', `--conversations needs at least one sample_id (got ${JSON.stringify(o.conversations)})`)
  if (!existsSync(path.resolve(io.cwd, file)))
    throw new MnemoError('NOT_FOUND', `no file at ${path.resolve(io.cwd, file)}`, { details: { kind: 'file', id: file } })
  const { runLocomoBench, formatLocomoReport } = await import('../../bench/locomo.js')
  // A configured embedder (MNEMO_EMBEDDER) is measured too: every turn is embedded before the questions of its conversation.
  const { resolveConfig } = await import('../../config/config.js')
  const { createEmbedder } = await import('../../runtime/open-mnemo.js')
  const configured = resolveConfig(io.env).embedder
  const options = {
    ...(limitQuestions === undefined ? {} : { limitQuestions }),
    ...(channels ? { channels } : {}),
    ...(conversations ? { conversations } : {}),
    ...(configured ? { embedder: createEmbedder(configured) } : {}),
  }
  const database = o.database?.trim()
  const report = await runLocomoBench(path.resolve(io.cwd, file), { ...options, ...(database ? { database } : {}) })
  if (o.compare) {
    // The same run on SQLite, after the PostgreSQL one, on the same machine: the two figures side by side.
    const sqlite = await runLocomoBench(path.resolve(io.cwd, file), options)
    const { formatLocomoComparison } = await import('../../bench/locomo-compare.js')
    if (out.json) printJson(out, { sqlite, postgres: report })
    else out.stdout(`${formatLocomoComparison(sqlite, report)}\n`)
    return
  }
  if (out.json) printJson(out, report)
  else out.stdout(`${formatLocomoReport(report)}\n`)
}

export async function benchLongMemEval(
  io: CliIo,
  out: Out,
  file: string,
  o: GlobalOptions & { limitQuestions?: string; channels?: string },
): Promise<void> {
  const limitQuestions = parseIntOption('limit-questions', o.limitQuestions, 1, 100_000)
  const channels = parseChannels(o.channels)
  if (!existsSync(path.resolve(io.cwd, file)))
    throw new MnemoError('NOT_FOUND', `no file at ${path.resolve(io.cwd, file)}`, { details: { kind: 'file', id: file } })
  const { runLongMemEvalBench, formatLongMemEvalReport } = await import('../../bench/longmemeval.js')
  let report: LongMemEvalReport
  try {
    report = await runLongMemEvalBench(path.resolve(io.cwd, file), {
      ...(limitQuestions === undefined ? {} : { limitQuestions }),
      ...(channels ? { channels } : {}),
    })
  } catch (error) {
    if (error instanceof Error && !MnemoError.is(error)) throw invalidInput('file', error.message)
    throw error
  }
  if (out.json) printJson(out, report)
  else out.stdout(`${formatLongMemEvalReport(report)}\n`)
}

/**
 * The demo: in a fresh data directory (or `--home`), plays a recorded Claude
 * Code session through `mnemo hook` one process per event, exactly as Claude
 * Code calls it, then shows recall and the context block the next session gets.
 */
/**
 * What `demo --home <dir>` found there: `new` (no store, or an empty one), or `demo` (only the demo's own
 * project: an earlier demo run, which is shown again rather than captured twice).
 * @throws {MnemoError} `INVALID_INPUT` — the store holds other data: the demo never writes into a real store.
 */
async function demoStoreState(env: CliIo['env'], cwd: string, home: string, lines: readonly string[]): Promise<'new' | 'demo'> {
  if (!existsSync(path.join(home, 'mnemo.db'))) return 'new'
  const demoRoot = resolveProjectRoot(String((JSON.parse(lines[0]!) as { payload: { cwd: string } }).payload.cwd)).root
  const m = openMnemo({ env, cwd, home, readOnlyFallback: true, allUsers: true })
  try {
    const projects = await m.engine.listProjects()
    if ((await m.engine.stats()).events === 0) return 'new'
    if (projects.length === 1 && projects[0]!.root === demoRoot) return 'demo'
    throw invalidInput(
      'home',
      `--home ${home} holds a store with other data (${projects.length} project${projects.length === 1 ? '' : 's'}: ${projects
        .slice(0, 3)
        .map((p) => p.name)
        .join(', ')}); the demo writes only into a new or empty data directory`,
      'give a new folder: mnemo demo --home /tmp/mnemo-demo (or no --home: a throw-away one)',
    )
  } finally {
    await m.close()
  }
}

export async function demo(io: CliIo, out: Out, o: GlobalOptions & { keep?: boolean }): Promise<void> {
  const home = o.home ?? mkdtempSync(path.join(os.tmpdir(), 'mnemo-demo-'))
  const env = { ...io.env, MNEMO_HOME: home }
  const lines = readFileSync(DEMO_SESSION, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0)
  const say = (t: string): void => {
    if (!out.json) out.stdout(t)
  }
  const already = o.home ? await demoStoreState(env, io.cwd, home, lines) : 'new'
  say(`mnemo demo — data directory ${home}\n\n`)
  if (already === 'demo') say(`1. Session 1 is already in this data directory (an earlier mnemo demo): not captured again\n`)
  else say(`1. Session 1: ${lines.length} Claude Code hook events, one \`mnemo hook <event>\` process each\n`)
  let nextContext = ''
  for (const line of already === 'demo' ? [] : lines) {
    const { event, payload } = JSON.parse(line) as { event: string; payload: unknown }
    const r = spawnSync(process.execPath, [CLI_PATH, 'hook', event], { input: JSON.stringify(payload), env, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`hook ${event} exited with ${r.status}: ${r.stderr}`)
    say(`   ${event.padEnd(18)} ok\n`)
    if (event === 'SessionStart') nextContext = r.stdout
  }
  const m = openMnemo({ env, cwd: io.cwd, home })
  try {
    const queries = ['validateToken', 'how do we rate-limit the API?', 'src/middleware/auth.ts']
    const results = await Promise.all(queries.map(async (q) => ({ query: q, hits: await m.engine.recall(q, { limit: 3 }) })))
    const project = (await m.engine.listProjects())[0]
    const block = project ? await m.engine.context({ project: { root: project.root, name: project.name } }) : undefined
    if (out.json) {
      printJson(out, {
        home,
        events: lines.length,
        stats: await m.engine.stats(),
        recall: results.map((r) => ({ query: r.query, hits: r.hits.map((h) => hitToJson(h)) })),
        context: block,
        sessionStartOutput: nextContext.trim(),
      })
    } else {
      for (const [i, r] of results.entries()) say(`\n2${'abc'[i] ?? ''}. mnemo recall ${JSON.stringify(r.query)}\n${formatHits(r.hits)}`)
      say(`\n3. The next session's context block (mnemo context; ${block?.tokens ?? 0} tokens):\n\n${block?.text ?? ''}\n`)
      if (nextContext)
        say(`\n4. What the SessionStart hook printed for Claude Code to inject (first 300 chars):\n${nextContext.slice(0, 300)}…\n`)
    }
  } finally {
    await m.close()
    if (!o.keep && !o.home && existsSync(home)) rmSync(home, { recursive: true, force: true })
    else say(`\n(kept data directory ${home})\n`)
  }
}
