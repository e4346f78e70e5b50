import type { Memory, MemoryKind, Observation } from '../core/types.js'
import { squash } from '../core/text.js'
import { digestParts, type SessionDigest } from './session-summary.js'

/**
 * Deterministic consolidation: no model. Session digests become episodic
 * summaries; a failure followed by a success of the same command becomes a
 * lesson; retention decides what moves to the archive. Pure functions.
 */

/** The text of a session's episodic summary, from its digest. */
export function summaryText(d: SessionDigest): string {
  const day = new Date(d.startedAt).toISOString().slice(0, 10)
  const parts = [`Session ${day} (${d.agent}, ${d.observationCount} observations).`]
  const lists = digestParts(d)
  if (lists.asked) parts.push(`Asked: ${lists.asked}.`)
  if (lists.said) parts.push(`Said: ${lists.said}.`)
  if (lists.files) parts.push(`Files: ${lists.files}.`)
  if (lists.commands) parts.push(`Commands: ${lists.commands}.`)
  if (lists.errors) parts.push(`Errors: ${lists.errors}.`)
  if (d.outcome) parts.push(`Outcome: ${d.outcome}`)
  return parts.join(' ')
}

/** A lesson derived from a session, with its provenance. */
interface DerivedLesson {
  text: string
  sources: string[]
  /** 0–1: how sure the extraction is. */
  confidence: number
}

function firstLine(text: string): string {
  return squash((text.split('\n')[0] ?? '').replace(/^[^:]+:\s*/, ''))
}

/**
 * Lessons from errors that were fixed in the same session: a failed tool
 * call, then file edits, then the same call (same tool, same first input
 * line) succeeding. "`npm test -- orders` failed (ReferenceError: …); it
 * passed after editing src/app.ts." Confidence 0.6: the edits in between
 * are the likely fix, not a proven one.
 */
export function lessonsFromSession(observations: readonly Observation[], projectRoot?: string): DerivedLesson[] {
  const rel = (f: string): string => (projectRoot && f.startsWith(`${projectRoot}/`) ? f.slice(projectRoot.length + 1) : f)
  const out: DerivedLesson[] = []
  const seen = new Set<string>()
  observations.forEach((o, i) => {
    if (o.kind !== 'error' || !o.tool) return
    const call = firstLine(o.text)
    if (call.length === 0 || seen.has(call)) return
    const later = observations.slice(i + 1)
    const successAt = later.findIndex((x) => x.kind === 'tool' && x.tool === o.tool && firstLine(x.text) === call)
    if (successAt < 0) return
    const between = later.slice(0, successAt)
    const edits = between.filter(
      (x) => x.kind === 'tool' && x.files.length > 0 && /^(edit|write|multiedit|apply_patch|str_replace)/i.test(x.tool ?? ''),
    )
    if (edits.length === 0) return
    const files = [...new Set(edits.flatMap((x) => x.files.map(rel)))]
    const result = o.text.split('→')[1] ?? ''
    const errorLines = result.split('\n').filter((l) => /error|fail|expected|exception|denied|not found/i.test(l))
    const why = squash(errorLines.length > 0 ? errorLines.join(' ') : result).slice(0, 200)
    seen.add(call)
    out.push({
      text: `\`${call}\` failed${why ? ` (${why})` : ''}; it passed after editing ${files.slice(0, 4).join(', ')}.`,
      sources: [o.id, ...edits.map((x) => x.id), later[successAt]!.id],
      confidence: 0.6,
    })
  })
  return out
}

/** A durable statement found in what the user said, with its provenance. */
interface DerivedStatement {
  kind: 'preference' | 'decision' | 'fact'
  /** The user's sentence, whitespace squashed (not paraphrased: no model on this path). */
  text: string
  /** The prompt observation it was said in. */
  sources: string[]
  /** 0–1: how sure the extraction is. */
  confidence: number
}

/**
 * Cue phrases for statements worth keeping beyond the session, tried in
 * order; the first that matches a sentence decides its kind. Confidence
 * reflects how explicit the cue is: "I prefer"/"always"/"never"/"remember"
 * are the user stating a rule (0.7), "let's use"/"we decided" a choice
 * that may be revisited (0.6), "we use"/"our X is" a description (0.5).
 * Patterns, not a model: precision over recall, since a wrong "preference"
 * injected into every session costs more than a missed one (the model path
 * of MNEMO_LLM extracts the rest).
 */
const STATEMENT_CUES: readonly { kind: DerivedStatement['kind']; confidence: number; re: RegExp }[] = [
  {
    kind: 'preference',
    confidence: 0.7,
    re: /^(?:(?:please|and|also|ok(?:ay)?|great|thanks)[,.!]?\s+)*(?:remember(?: for later| that)?\b[:,]?|from now on\b|going forward\b|in (?:the )?future\b|(?:(?:i|we) )?(?:always|never)\b(?! mind)|don'?t ever\b|do not ever\b)/i,
  },
  {
    kind: 'preference',
    confidence: 0.7,
    re: /\b(?:i|we) (?:(?:really|strongly) )?(?:prefer|like to|would rather|'d rather|don'?t like|do not like|hate)\b/i,
  },
  {
    kind: 'decision',
    confidence: 0.6,
    re: /\b(?:let'?s (?:use|go with|switch to|stick with|keep|move to)|we(?:'ve| have)? decided\b|(?:i|we) (?:chose|picked|went with)|we(?:'ll| will) (?:use|go with|switch to)|use \S+(?: \S+)? instead of)\b/i,
  },
  {
    kind: 'fact',
    confidence: 0.5,
    re: /^(?:(?:fyi|note|btw)[,:]?\s+)?(?:we use|we're using|we are using|our (?:\w+ ){1,3}(?:is|are|uses|lives|runs)|the (?:project|repo|codebase|app) (?:uses|is|runs))\b/i,
  },
]

const SENTENCES = new Intl.Segmenter('en', { granularity: 'sentence' })

/**
 * Preferences, decisions and facts the user stated in a session's prompts,
 * found by cue phrases (see STATEMENT_CUES): deterministic, so it runs with
 * no model configured. A sentence is kept when it is 12–300 characters, is
 * not a question, and matches a cue; each is reported once per session.
 * Assistant messages and tool output are never read: only the user's own
 * words state their preferences.
 */
export function statementsFromPrompts(observations: readonly Observation[]): DerivedStatement[] {
  const out: DerivedStatement[] = []
  const seen = new Set<string>()
  for (const o of observations) {
    if (o.kind !== 'prompt') continue
    for (const { segment } of SENTENCES.segment(o.text)) {
      const sentence = squash(segment)
      if (sentence.length < 12 || sentence.length > 300 || sentence.endsWith('?')) continue
      const cue = STATEMENT_CUES.find((c) => c.re.test(sentence))
      if (!cue) continue
      const key = sentence.toLowerCase()
      if (seen.has(key)) continue
      seen.add(key)
      out.push({ kind: cue.kind, text: sentence, sources: [o.id], confidence: cue.confidence })
    }
  }
  return out
}

/** How much each kind matters when nothing else is known (the retention score's importance). */
const KIND_IMPORTANCE: Record<MemoryKind, number> = {
  decision: 1,
  lesson: 0.9,
  preference: 0.9,
  procedure: 0.9,
  fact: 0.8,
  summary: 0.5,
}

/** Retention tunables, with defaults. */
export interface RetentionConfig {
  /** Days after which an unused memory's retention halves. Default 30. */
  halfLifeDays: number
  /** Retention under which a memory is archived. Default 0.1. */
  archiveBelow: number
}

export const DEFAULT_RETENTION: RetentionConfig = { halfLifeDays: 30, archiveBelow: 0.1 }

/**
 * Whether decay may archive `m`. Not when it is pinned; not when a person
 * stated it — a memory written through `remember` (CLI, MCP, REST: no
 * sources, any kind), or a decision or preference drawn from a person's own
 * prompt ("let's go with zod", "always use pnpm") — unless its text is
 * flagged. Such a memory leaves the context only when it is superseded
 * (a newer version, see the write guard), archived or forgotten by someone,
 * never for lack of recall. Everything else (session summaries,
 * procedures, lessons, facts drawn from prompts) decays by `retention`.
 *
 * This follows what the tools people rely on do with stated memories: mem0
 * keeps a memory until an UPDATE or DELETE replaces it, Graphiti (Zep) ends a
 * fact only by invalidating it with a newer one (bi-temporal edges), and
 * Letta's core memory stays until edited; the forgetting curve of MemoryBank
 * (Zhong et al., 2023) is kept for what was derived or summarised.
 */
export function decays(m: Memory): boolean {
  if (m.pinned) return false
  if (m.flags.length > 0) return true
  const stated = m.sources.length === 0 && m.kind !== 'summary' && m.kind !== 'procedure'
  return !(stated || m.kind === 'decision' || m.kind === 'preference')
}

/**
 * A memory's retention score, 0–∞ (1 ≈ fresh and important):
 *
 *   retention = importance(kind) · 0.5^(age / halfLife) · (1 + ln(1 + uses))
 *
 * where age is the time since it was last written or seen again (days),
 * uses the number of days it was used (injected into context, opened after
 * a recall; at most once a day), halfLife 30 days by default. The
 * exponential forgetting curve is Ebbinghaus's (1885) as used for LLM
 * memory by MemoryBank (Zhong et al., 2023); the logarithmic use term keeps
 * reinforcement from growing without bound. Flagged text counts half.
 * Pinned and stated memories are not scored (they never decay: see `decays`).
 */
export function retention(m: Memory, uses: number, nowMs: number, config: RetentionConfig = DEFAULT_RETENTION): number {
  const ageDays = Math.max(0, nowMs - Math.max(m.lastSeenAt, m.createdAt)) / 86_400_000
  const importance = KIND_IMPORTANCE[m.kind] * (m.flags.length > 0 ? 0.5 : 1)
  return importance * 0.5 ** (ageDays / config.halfLifeDays) * (1 + Math.log(1 + uses))
}
