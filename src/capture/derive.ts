import type { EventFormat, EventInput } from '../core/types.js'
import { deriveClaudeHook } from './claude-hook.js'
import { deriveClaudeTranscript } from './claude-transcript.js'
import { deriveCodexRollout } from './codex-rollout.js'
import { deriveCursorState } from './cursor-state.js'
import { stripOwnBlocks, userWords } from './agent-wrappers.js'
import type { CaptureDerivation, Deriver } from './derivation.js'
import { deriveFactEvent, FACT_EVENT_TYPE } from './fact-events.js'
import { deriveFolded } from './folded.js'
import { deriveGeminiSession } from './gemini-session.js'
import { deriveLocomoTurn } from './locomo-turn.js'
import { deriveMnemoOp } from './mnemo-ops.js'
import { deriveOpenCodeStorage } from './opencode-storage.js'

const DERIVERS: Record<EventFormat, Deriver> = {
  'claude-hook': deriveClaudeHook,
  'claude-transcript': deriveClaudeTranscript,
  'codex-rollout': deriveCodexRollout,
  'gemini-session': deriveGeminiSession,
  'opencode-storage': deriveOpenCodeStorage,
  'cursor-state': deriveCursorState,
  'locomo-turn': deriveLocomoTurn,
  // A fact ledger operation (docs/FACTS.md) is a mnemo event of its own type.
  mnemo: (event) => (event.type === FACT_EVENT_TYPE ? deriveFactEvent(event) : deriveMnemoOp(event)),
  folded: deriveFolded,
}

/**
 * Derives what one logged event means (observations, a memory, a lifecycle change, a
 * session effect) by its format. Pure and deterministic: the same event
 * always gives the same result, which is what makes `rebuild` exact.
 * Derivers do not throw on odd payloads (they derive less); an unknown
 * format derives nothing, and the event stays in the log.
 */
export function deriveEvent(event: EventInput): CaptureDerivation {
  const deriver = DERIVERS[event.format] as Deriver | undefined
  return deriver ? withoutOwnBlocks(deriver(event)) : { observations: [] }
}

/**
 * One rule for every format: mnemo's own injected blocks are never anybody's words. Prompts keep
 * only the user's words (`userWords`: hook wrappers and mnemo blocks removed), other texts lose
 * mnemo blocks (`stripOwnBlocks`); an observation left empty is dropped, and so is a session title
 * that was nothing but a block.
 */
function withoutOwnBlocks(d: CaptureDerivation): CaptureDerivation {
  let changed = false
  const observations = []
  for (const o of d.observations) {
    const text = o.kind === 'prompt' ? userWords(o.text) : stripOwnBlocks(o.text)
    if (text === o.text) observations.push(o)
    else {
      changed = true
      if (text.trim() !== '') observations.push({ ...o, text })
    }
  }
  let session = d.session
  if (session?.title !== undefined) {
    const title = userWords(session.title)
    if (title !== session.title) {
      changed = true
      const { title: _dropped, ...rest } = session
      session = title.trim() !== '' ? { ...rest, title: title.trim() } : rest
    }
  }
  if (!changed) return d
  const out: CaptureDerivation = { ...d, observations }
  if (session !== undefined) out.session = session
  else delete out.session
  return out
}
