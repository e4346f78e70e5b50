import type { EventFormat, EventInput } from '../core/types.js'
import { deriveClaudeHook } from './claude-hook.js'
import { deriveClaudeTranscript } from './claude-transcript.js'
import { deriveCodexRollout } from './codex-rollout.js'
import { deriveCursorState } from './cursor-state.js'
import type { CaptureDerivation, Deriver } from './derivation.js'
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
  mnemo: deriveMnemoOp,
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
  return deriver ? deriver(event) : { observations: [] }
}
