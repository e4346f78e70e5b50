import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { invalidInput } from '../../core/errors.js'
import { CHANNEL_NAMES, type ChannelName } from '../../core/types.js'
import { NO_PROJECT_YET } from '../../core/ids.js'
import type { OpenedMnemo } from '../../runtime/open-mnemo.js'
import type { RemoteServer } from '../../runtime/remote-server.js'
import type { CliIo, GlobalOptions } from './program.js'

// What the CLI's commands share: opening mnemo for one command, option parsing, the team-mode target.

// The built CLI, whether this module runs from dist/ or (in tests) from src/: both are three levels below the package root.
// The executable agents' hook commands and MCP entries run: the one-file bin (`npm run build` makes it), else, after a
// tsc-only build, main.js, which runs every command the same way.
const BUILT_BIN = fileURLToPath(new URL('../../../dist/adapters/cli/bin.cjs', import.meta.url))
export const CLI_PATH = existsSync(BUILT_BIN) ? BUILT_BIN : fileURLToPath(new URL('../../../dist/adapters/cli/main.js', import.meta.url))

export const DEMO_SESSION = fileURLToPath(new URL('../../../fixtures/demo/claude-code-session.jsonl', import.meta.url))

/**
 * Opens mnemo for one command, drains the hook spool, runs `fn`, closes. In
 * team mode (`MNEMO_SERVER_URL`) the spool holds events for the server, and
 * only the next hook sends them there: never drained into the local store.
 */
export async function withMnemo<T>(io: CliIo, o: GlobalOptions, fn: (m: OpenedMnemo) => T | Promise<T>): Promise<T> {
  // Loaded here, not with this module: command tables that import the option parsers below stay light.
  const { openMnemo } = await import('../../runtime/open-mnemo.js')
  // A store this user cannot write is still read (status, recall, …); a command that writes then fails naming why.
  const m = openMnemo({
    env: io.env,
    cwd: io.cwd,
    readOnlyFallback: true,
    ...(o.home ? { home: o.home } : {}),
    ...(o.allUsers ? { allUsers: true } : {}),
  })
  try {
    if (!io.env['MNEMO_SERVER_URL']) await m.drainSpool()
    return await fn(m)
  } finally {
    await m.close()
  }
}

export function parseIntOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isInteger(n) || n < min || n > max) {
    throw invalidInput(name, `--${name} must be an integer ${min}–${max} (got ${JSON.stringify(value)})`)
  }
  return n
}

/** Parses `--channels bm25,vector` into channel names. */
export function parseChannels(value: string | undefined): ChannelName[] | undefined {
  if (value === undefined) return undefined
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
  const bad = names.filter((n) => !(CHANNEL_NAMES as readonly string[]).includes(n))
  if (names.length === 0 || bad.length > 0) {
    throw invalidInput('channels', `--channels takes a comma-separated list of ${CHANNEL_NAMES.join(', ')} (got ${JSON.stringify(value)})`)
  }
  return names as ChannelName[]
}

export async function projectIds(m: OpenedMnemo, project: string | undefined): Promise<string[] | undefined> {
  return project === undefined ? undefined : (await m.engine.resolveProjects(project)).map((p) => p.id)
}

/**
 * Which projects a read searches, by the rule every surface follows: the one named (`--project`), else the
 * project of the working directory (outside git, the folder itself, as its hooks file it; never a project
 * that merely contains it), as MCP does; every project only when asked (`--all-projects`). A folder with
 * nothing captured yet searches none of the store's projects (`NO_PROJECT_YET`: only the user's memories that apply
 * in every project), and `note` says how to search elsewhere.
 *
 * @returns `projectIds` undefined for every project.
 * @throws {MnemoError} `INVALID_INPUT` — both `--project` and `--all-projects`; `NOT_FOUND` — an unknown `--project`.
 */
export async function readScope(
  m: OpenedMnemo,
  io: CliIo,
  o: { project?: string; allProjects?: boolean },
): Promise<{ projectIds: string[] | undefined; note?: string }> {
  if (o.project !== undefined && o.allProjects) throw invalidInput('all-projects', 'give --project or --all-projects, not both')
  if (o.allProjects) return { projectIds: undefined }
  if (o.project !== undefined) return { projectIds: await projectIds(m, o.project) }
  const ref = await m.engine.projectForPath(io.cwd, { workingDir: true })
  const found = (await m.engine.listProjects()).find((p) => p.root === ref.root)
  if (found) return { projectIds: [found.id] }
  return {
    projectIds: [NO_PROJECT_YET],
    note: `nothing captured in this folder's project (${ref.root}) yet: pass --project <name> or --all-projects`,
  }
}

/**
 * The text a command was given: its words joined by single spaces (`remember we deploy on Fridays`), or, for
 * `-` or no words, all of stdin (trimmed).
 *
 * @throws {MnemoError} `INVALID_INPUT` — no words and stdin is a terminal (nothing piped in).
 */
export async function readTextArgument(io: CliIo, words: readonly string[], command: string): Promise<string> {
  if (words.length > 0 && !(words.length === 1 && words[0] === '-')) return words.join(' ')
  if (io.readStdin) return (await io.readStdin()).trim()
  if (words.length === 0 && process.stdin.isTTY)
    throw invalidInput('text', `${command} needs the text: mnemo ${command} "…", or - to read it from stdin`)
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8').trim()
}

/**
 * Team mode (`MNEMO_SERVER_URL` set): the server this CLI reads from and
 * writes to, and the project a command means — `--project`, else the
 * working directory's project root, sent as an absolute path as hooks do.
 * Undefined outside team mode (the command then works on the local store).
 *
 * @throws {MnemoError} `INVALID_INPUT` — `--all-users` in team mode (the server reads for the token's user).
 */
export async function teamTarget(
  io: CliIo,
  o: GlobalOptions & { project?: string },
): Promise<{ remote: RemoteServer; project: string; remoteJson: typeof import('../../runtime/remote-server.js').remoteJson } | undefined> {
  if (!io.env['MNEMO_SERVER_URL']) return undefined
  if (o.allUsers)
    throw invalidInput(
      'all-users',
      '--all-users is not available in team mode: the server reads for the user of your token (MNEMO_SERVER_TOKEN)',
    )
  const { resolveConfig } = await import('../../config/config.js')
  const { remoteServer, remoteJson } = await import('../../runtime/remote-server.js')
  const { resolveProjectRoot } = await import('../../engine/project-root.js')
  const config = resolveConfig(o.home ? { ...io.env, MNEMO_HOME: o.home } : io.env)
  const remote = remoteServer(io.env, config.home)!
  return { remote, project: o.project ?? resolveProjectRoot(io.cwd).root, remoteJson }
}

/** Parses an ISO-8601 time option into epoch ms. */
export function parseTimeOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const ms = Date.parse(value)
  const date = /^(\d{4})-(\d{2})-(\d{2})/.exec(value)
  // Date.parse rolls an impossible day over (2026-02-30 → 2026-03-02): the calendar date must exist as written.
  const exists = date !== null && new Date(Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]))).getUTCDate() === Number(date[3])
  if (!date || !exists || Number.isNaN(ms))
    throw invalidInput(name, `--${name} must be an ISO-8601 time like 2026-05-01 or 2026-05-01T12:00:00Z (got ${JSON.stringify(value)})`)
  return ms
}
