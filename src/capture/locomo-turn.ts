import { capText } from '../core/text.js'
import type { Deriver } from './derivation.js'
import { OBSERVATION_CHARS } from './tool-text.js'

/** One LoCoMo dialogue turn as stored in the log (written by `parseLocomo`). */
export interface LocomoTurnPayload {
  speaker: string
  dia_id: string
  text: string
  blip_caption?: string
  /** 0-based position of the turn in its session. */
  index: number
}

/**
 * One message observation per turn: `Speaker: text`, plus
 * `[shares an image: caption]` when the turn shared an image; `sourceRef` is
 * the turn's `dia_id`.
 */
export const deriveLocomoTurn: Deriver = (event) => {
  const p = event.payload as LocomoTurnPayload
  const caption = p.blip_caption ? ` [shares an image: ${p.blip_caption}]` : ''
  return {
    observations: [
      { kind: 'message', role: p.speaker, text: capText(`${p.speaker}: ${p.text}${caption}`, OBSERVATION_CHARS), sourceRef: p.dia_id },
    ],
  }
}
