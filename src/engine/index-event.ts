import { invalidInput, MnemoError } from '../core/errors.js'
import { truncateGraphemes } from '../core/text.js'
import type { EventInput } from '../core/types.js'
import { deriveEvent } from '../capture/derive.js'
import { stepPart } from '../capture/derivation.js'
import { detectInjection } from '../capture/injection.js'
import { contentKey, subjectKey } from '../lifecycle/write-guard.js'
import { extractEntities } from '../retrieval/entities.js'
import { dateWords, toIndexedText } from '../retrieval/search-text.js'
import { rangeWords, resolveRelativeTimes } from '../retrieval/time-expressions.js'
import type { Derivation } from '../storage/store.js'

/**
 * The version of what `indexEvent` derives from a logged event, recorded with a store's rows
 * (`Store.derivedWith`) so `mnemo status` and `mnemo doctor` can say when `mnemo rebuild` would
 * change them. Bump it whenever the same event starts deriving other rows, and say why here:
 * - 1: every store derived before versions were kept.
 * - 2 (2026-11-30): one copy per step across capture paths (schema 5); search reads text in Unicode
 *   NFKC; file entities keep their case, one per file (relative to the project, `//`, `.` and `..`
 *   resolved, a tool's relative path taken from the agent's working directory), no arithmetic; text holding mnemo's
 *   own context tag is flagged.
 * - 3 (2026-12-01): mnemo's own injected blocks and agents' hook-output wrappers are no one's words (a prompt keeps
 *   the user's words only); agents' wrappers around tool output are taken off; Gemini's `prompt_response` is the
 *   answer; Codex 0.171 messages (`item_completed`, `response_item` `message`) derive, each once.
 */
export const DERIVATION_VERSION = 3

/**
 * What the store keeps for one logged event: its derivation by format
 * (`deriveEvent`) with each observation's and memory's full-text columns and
 * entities, injection flags, the memory's content and subject keys, and the
 * capture path (`Derivation.origin`). Pure: `rebuild` calls it on every event
 * and gets the same rows.
 *
 * @param timeZone - IANA zone the indexed dates are written in.
 * @throws {MnemoError} `INVALID_INPUT` — a payload its deriver cannot read (an odd shape in an export file), naming the event; nothing of its batch is stored.
 */
export function indexEvent(event: EventInput, timeZone: string): Derivation {
  try {
    return indexUnchecked(event, timeZone)
  } catch (error) {
    if (MnemoError.is(error)) throw error
    throw invalidInput(
      'payload',
      `event ${truncateGraphemes(event.idemKey, 80)} (${event.format}) has a payload mnemo cannot read: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}

function indexUnchecked(event: EventInput, timeZone: string): Derivation {
  const d = deriveEvent(event)
  const meta = (role: string, kind: string, ts: number, text: string): string => metaWords(role, kind, ts, text, timeZone)
  // mnemo's own operations derive no observations; every capture format is a path a step can come through.
  const origin = event.format !== 'mnemo' ? (d.origin ?? event.format) : undefined
  const out: Derivation = {
    observations: d.observations.map((o) => {
      const part = origin !== undefined ? stepPart(origin, o) : undefined
      return {
        ...o,
        ...(part !== undefined ? { part } : {}),
        ...(o.kind !== 'prompt' ? injectionFlags(o.text) : {}),
        index: toIndexedText(o.text, [...(o.files ?? []), ...(o.tool ? [o.tool] : [])], meta(o.role, o.kind, o.ts ?? event.ts, o.text)),
        entities: extractEntities(o.text, {
          ...(o.files ? { files: o.files } : {}),
          ...(o.tool ? { tool: o.tool } : {}),
          speaker: o.role,
          projectRoot: event.project.root,
        }),
      }
    }),
  }
  if (d.memory) {
    const subject = d.memory.subject ?? subjectKey(d.memory.text)
    const { subject: _given, ...memory } = d.memory
    out.memory = {
      ...memory,
      contentKey: contentKey(d.memory.kind, d.memory.text),
      ...(subject ? { subjectKey: subject } : {}),
      ...injectionFlags(d.memory.text),
      index: toIndexedText(d.memory.text, [], meta(d.memory.kind, 'memory', event.ts, d.memory.text)),
      entities: extractEntities(d.memory.text, { projectRoot: event.project.root }),
    }
  }
  if (d.memoryOps) out.memoryOps = d.memoryOps
  if (d.session) out.session = d.session
  if (d.facts) out.facts = d.facts
  if (origin !== undefined) out.origin = origin
  return out
}

/**
 * The meta column of a document: who, what kind, its date in words, and the
 * dates its relative time phrases mean ("yesterday" written on 8 May 2023
 * adds `7 May 2023`), so date questions match it.
 */
function metaWords(role: string, kind: string, ts: number, text: string, timeZone: string): string {
  const anchored = resolveRelativeTimes(text, ts, timeZone).map((r) => rangeWords(r, timeZone))
  return [role, kind, dateWords(ts, timeZone), ...anchored].join(' ')
}

/** `{ flags: ['injection:<reason>', …] }` when `text` reads like instructions to an agent, else `{}`. */
function injectionFlags(text: string): { flags?: string[] } {
  const r = detectInjection(text)
  return r.flagged ? { flags: r.reasons.map((reason) => `injection:${reason}`) } : {}
}
