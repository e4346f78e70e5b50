import { squash } from '../core/text.js'
import type { Observation, Session } from '../core/types.js'

/** A deterministic, extractive digest of one session: no model involved. */
export interface SessionDigest {
  sessionId: string
  agent: string
  /** Epoch ms. */
  startedAt: number
  lastEventAt: number
  title: string | undefined
  /** The user's prompts, in order (first few). */
  asked: string[]
  /** Files the session's tools touched, most touched first. */
  files: string[]
  /** Shell commands run. */
  commands: string[]
  /** Failed tool calls and error results. */
  errors: string[]
  /** The last thing the assistant (or, in a dialogue, anyone) said. */
  outcome: string | undefined
  /** For dialogues without prompts (chat corpora): the first lines said. */
  said: string[]
  observationCount: number
  /** Provenance: ids of the observations the digest's lines were taken from, in time order. */
  sourceIds: string[]
}

function short(text: string, max: number): string {
  const s = squash(text)
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`
}

/** Tool names (lowercased) whose input is a shell command line, across agents. */
export const SHELL_TOOLS: ReadonlySet<string> = new Set(['bash', 'exec_command', 'shell', 'local_shell_call', 'run_shell_command'])

/**
 * Summarises a session by extraction: what was asked (first 3 prompts), files
 * touched (up to 8, by frequency then first use), commands run (up to 5),
 * errors (up to 3) and the last assistant message. For dialogues (no prompts,
 * only messages), the first 3 messages stand in for "asked".
 *
 * @param observations - The session's observations in time order.
 * @param projectRoot - File paths under it are shown relative to it.
 */
export function digestSession(session: Session, observations: readonly Observation[], projectRoot?: string): SessionDigest {
  const asked: string[] = []
  const fileCounts = new Map<string, number>()
  const commands: string[] = []
  const errors: string[] = []
  const said: string[] = []
  let outcome: string | undefined
  let outcomeId: string | undefined
  const sources = new Set<string>()
  for (const o of observations) {
    switch (o.kind) {
      case 'prompt':
        if (asked.length < 3 && o.role === 'user') {
          asked.push(short(o.text, 200))
          sources.add(o.id)
        }
        break
      case 'tool':
        if (o.tool && SHELL_TOOLS.has(o.tool.toLowerCase()) && commands.length < 5) {
          // toolObservationText puts the command on the first line: `Bash: <command>`.
          const cmd = short((o.text.slice(o.text.indexOf(':') + 1).split('\n')[0] ?? '').trim(), 120)
          if (cmd.length > 0 && !commands.includes(cmd)) {
            commands.push(cmd)
            sources.add(o.id)
          }
        }
        break
      case 'error':
        if (errors.length < 3) {
          errors.push(short(o.text, 160))
          sources.add(o.id)
        }
        break
      case 'message':
        if (o.role === 'assistant') {
          outcome = o.text
          outcomeId = o.id
        } else if (o.role !== 'system') {
          if (said.length < 3) {
            said.push(short(o.text, 160))
            sources.add(o.id)
          }
          outcome = o.text
          outcomeId = o.id
        }
        break
      default:
        break
    }
    for (const file of o.files) {
      const f = projectRoot && file.startsWith(`${projectRoot}/`) ? file.slice(projectRoot.length + 1) : file
      fileCounts.set(f, (fileCounts.get(f) ?? 0) + 1)
    }
  }
  const files = [...fileCounts.entries()]
    .map(([f, n], i) => ({ f, n, i }))
    .sort((a, b) => b.n - a.n || a.i - b.i)
    .slice(0, 8)
    .map((x) => x.f)
  return {
    sessionId: session.id,
    agent: session.agent,
    startedAt: session.startedAt,
    lastEventAt: session.lastEventAt,
    title: session.title,
    asked,
    files,
    commands,
    errors,
    outcome: outcome === undefined ? undefined : short(outcome, 240),
    said: asked.length === 0 ? said : [],
    observationCount: observations.length,
    sourceIds: observations.filter((o) => sources.has(o.id) || o.id === outcomeId).map((o) => o.id),
  }
}
