import { squash, truncateGraphemes } from '../core/text.js'
import type { Observation, Session } from '../core/types.js'
import { fileEntityName } from '../retrieval/entities.js'

/** A deterministic, extractive digest of one session: no model involved. */
export interface SessionDigest {
  sessionId: string
  agent: string
  /** Epoch ms. */
  startedAt: number
  lastEventAt: number
  title: string | undefined
  /** The user's prompts, in order: all of them up to 3; beyond that the first (the goal) and the last 2 (where it stopped). */
  asked: string[]
  /** Prompts between the first and the last two, not in `asked`. */
  askedMore: number
  /** Files the session's tools touched: up to 8, most touched first, then most recently touched. */
  files: string[]
  /** Files touched but not in `files`. */
  filesMore: number
  /** The last 5 distinct shell commands run, in order. */
  commands: string[]
  /** Earlier distinct commands not in `commands`. */
  commandsMore: number
  /** The last 3 failed tool calls and error results, in order. */
  errors: string[]
  /** Earlier errors not in `errors`. */
  errorsMore: number
  /** The last thing the assistant (or, in a dialogue, anyone) said. */
  outcome: string | undefined
  /** For dialogues without prompts (chat corpora): the first lines said. */
  said: string[]
  /** The session's observations (its stored count when the caller passed only part of them). */
  observationCount: number
  /** Observations of the session the digest was not given (a long session's middle): the `…More` counts are then lower bounds. */
  unread: number
  /** Provenance: ids of the observations the digest's lines were taken from, in time order. */
  sourceIds: string[]
}

/** `text` squashed and cut to `max` UTF-16 units on a grapheme boundary (never half a surrogate pair). */
function short(text: string, max: number): string {
  return truncateGraphemes(squash(text), max)
}

/** Tool names (lowercased) whose input is a shell command line, across agents. */
export const SHELL_TOOLS: ReadonlySet<string> = new Set(['bash', 'exec_command', 'shell', 'local_shell_call', 'run_shell_command'])

/**
 * A digest's lists as display strings, each with what it leaves out said in place: "first | (26 more) |
 * second-to-last | last", "(+4 earlier) …", "…, +22 more" ("26+" when the digest read only part of the session).
 * Shared by the context block and the summary memory.
 */
export function digestParts(
  d: SessionDigest,
  command: (cmd: string) => string = (c) => c,
): {
  asked?: string
  said?: string
  files?: string
  commands?: string
  errors?: string
} {
  // Counted over what the digest read: with a long session's middle unread, at least that many.
  const count = (n: number): string => (d.unread > 0 ? `${n}+` : `${n}`)
  const earlier = (n: number): string => (n > 0 ? `(+${count(n)} earlier) ` : '')
  return {
    ...(d.asked.length > 0
      ? { asked: (d.askedMore > 0 ? [d.asked[0], `(${count(d.askedMore)} more)`, ...d.asked.slice(1)] : d.asked).join(' | ') }
      : {}),
    ...(d.said.length > 0 ? { said: d.said.join(' | ') } : {}),
    ...(d.files.length > 0 ? { files: `${d.files.join(', ')}${d.filesMore > 0 ? `, +${count(d.filesMore)} more` : ''}` } : {}),
    ...(d.commands.length > 0 ? { commands: `${earlier(d.commandsMore)}${d.commands.map(command).join(', ')}` } : {}),
    ...(d.errors.length > 0 ? { errors: `${earlier(d.errorsMore)}${d.errors.join(' | ')}` } : {}),
  }
}

/** Most prompts, commands, errors and files a digest lists (see `digestSession`). */
const DIGEST_LIMITS = { asked: 3, commands: 5, errors: 3, files: 8 } as const

/**
 * Summarises a session by extraction: what was asked (the first prompt and,
 * in a longer session, the last two: the goal and where it stopped), files
 * touched (up to 8, most touched first, then most recent), the last 5
 * distinct commands, the last 3 errors and the last assistant message, with
 * counts of what each list leaves out. For dialogues (no prompts, only
 * messages), the first 3 messages stand in for "asked".
 *
 * @param session - Its `observationCount` is reported when `observations` holds only part of the session.
 * @param observations - The session's observations in time order (all, or its first and last ones).
 * @param projectRoot - File paths under it are shown relative to it.
 * @param unread - Observations of the session not passed (a long session's middle); default: its stored count less those passed.
 * @param textOf - How an observation's text is read; default `o.text`. It is asked only for the texts the digest
 *   scans or shows — prompts, shell commands, errors, messages — never for a tool output's (the context block redacts
 *   each text on this first read instead of every text it loads).
 */
export function digestSession(
  session: Session,
  observations: readonly Observation[],
  projectRoot?: string,
  unread?: number,
  textOf: (o: Observation) => string = (o) => o.text,
): SessionDigest {
  const prompts: Observation[] = []
  const files = new Map<string, { n: number; last: number }>()
  const commands = new Map<string, Observation>()
  const errors: Observation[] = []
  const said: Observation[] = []
  let outcome: Observation | undefined
  observations.forEach((o, i) => {
    switch (o.kind) {
      case 'prompt':
        if (o.role === 'user') prompts.push(o)
        break
      case 'tool':
        if (o.tool && SHELL_TOOLS.has(o.tool.toLowerCase())) {
          // toolObservationText puts the command on the first line: `Bash: <command>`.
          const text = textOf(o)
          const cmd = short((text.slice(text.indexOf(':') + 1).split('\n')[0] ?? '').trim(), 120)
          if (cmd.length > 0) {
            // Re-run commands move to their latest run.
            commands.delete(cmd)
            commands.set(cmd, o)
          }
        }
        break
      case 'error':
        errors.push(o)
        break
      case 'message':
        if (o.role !== 'assistant' && o.role !== 'system' && said.length < 3) said.push(o)
        if (o.role !== 'system') outcome = o
        break
      default:
        break
    }
    for (const file of o.files) {
      // Named as the graph names files: relative to the project, `./`, `//` and `..` resolved (one entry per file).
      const f = fileEntityName(file, projectRoot)
      files.set(f, { n: (files.get(f)?.n ?? 0) + 1, last: i })
    }
  })
  // A prompt repeating the one listed before it ("continue", "try again") is counted, not listed twice.
  const asked = (prompts.length <= DIGEST_LIMITS.asked ? prompts : [prompts[0]!, ...prompts.slice(1 - DIGEST_LIMITS.asked)]).filter(
    (o, i, list) => i === 0 || squash(textOf(o)) !== squash(textOf(list[i - 1]!)),
  )
  const lastCommands = [...commands.entries()].slice(-DIGEST_LIMITS.commands)
  const lastErrors = errors.slice(-DIGEST_LIMITS.errors)
  const shownSaid = prompts.length === 0 ? said : []
  const sources = new Set(
    [...asked, ...lastCommands.map(([, o]) => o), ...lastErrors, ...shownSaid, ...(outcome ? [outcome] : [])].map((o) => o.id),
  )
  return {
    sessionId: session.id,
    agent: session.agent,
    startedAt: session.startedAt,
    lastEventAt: session.lastEventAt,
    title: session.title,
    asked: asked.map((o) => short(textOf(o), 200)),
    askedMore: prompts.length - asked.length,
    files: [...files.entries()]
      .sort(([, a], [, b]) => b.n - a.n || b.last - a.last)
      .slice(0, DIGEST_LIMITS.files)
      .map(([f]) => f),
    filesMore: Math.max(0, files.size - DIGEST_LIMITS.files),
    commands: lastCommands.map(([cmd]) => cmd),
    commandsMore: commands.size - lastCommands.length,
    errors: lastErrors.map((o) => short(textOf(o), 160)),
    errorsMore: errors.length - lastErrors.length,
    outcome: outcome === undefined ? undefined : short(textOf(outcome), 240),
    said: shownSaid.map((o) => short(textOf(o), 160)),
    observationCount: Math.max(session.observationCount, observations.length),
    unread: unread ?? Math.max(0, session.observationCount - observations.length),
    sourceIds: observations.filter((o) => sources.has(o.id)).map((o) => o.id),
  }
}
