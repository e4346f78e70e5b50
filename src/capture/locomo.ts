import * as chrono from 'chrono-node'
import type { EventInput } from '../core/types.js'
import type { ParseResult } from './derivation.js'
import type { LocomoTurnPayload } from './locomo-turn.js'
import { namedProject } from './project.js'
import { sanitizePayload, type Redactor } from './sanitize.js'

/**
 * Parses a LoCoMo session date (`"1:56 pm on 8 May, 2023"`) as UTC with
 * chrono-node. The dataset gives no time zone; the benchmark protocol says to
 * read it as UTC. Returns epoch ms, or `undefined` when it is not a date.
 */
function parseLocomoDate(text: string): number | undefined {
  const results = chrono.parse(text, { instant: new Date(0), timezone: 0 })
  return results[0]?.start.date().getTime()
}

/** True when `value` looks like LoCoMo data: an array of samples with `conversation` objects. */
export function isLocomo(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.every((s) => isRecord(s) && isRecord(s['conversation']))
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Turns LoCoMo conversations into events: each sample a project
 * (`locomo:<sample_id>`), each `session_N` a session dated by
 * `session_N_date_time`, each turn an event keyed by its `dia_id`, timed at
 * the session date plus one second per turn (keeps turn order; the dataset
 * has no turn times). Only the dialogue is read: `observation`,
 * `session_summary`, `event_summary` and `qa` are benchmark annotations and
 * are not imported. Bad turns and sessions without a parsable date are
 * skipped with a reason.
 */
export function parseLocomo(data: unknown, options: { redact?: Redactor } = {}): ParseResult {
  const result: ParseResult = { events: [], read: 0, skipped: [], unknownTypes: {} }
  if (!Array.isArray(data)) {
    result.skipped.push({ line: 'file', reason: 'LoCoMo data must be a JSON array of samples' })
    return result
  }
  data.forEach((sample, sampleIndex) => {
    if (!isRecord(sample) || !isRecord(sample['conversation'])) {
      result.skipped.push({ line: `sample ${sampleIndex}`, reason: 'sample has no "conversation" object' })
      return
    }
    const sampleId = typeof sample['sample_id'] === 'string' ? sample['sample_id'] : `sample-${sampleIndex}`
    const conv = sample['conversation']
    const project = namedProject('locomo', sampleId)
    const sessionNumbers = Object.keys(conv)
      .map((k) => /^session_(\d+)$/.exec(k)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b)
    for (const n of sessionNumbers) {
      const turns = conv[`session_${n}`]
      const dateText = conv[`session_${n}_date_time`]
      const startedAt = typeof dateText === 'string' ? parseLocomoDate(dateText) : undefined
      if (!Array.isArray(turns)) {
        result.skipped.push({ line: `${sampleId} session_${n}`, reason: 'session is not a list of turns' })
        continue
      }
      if (startedAt === undefined) {
        result.read += turns.length
        result.skipped.push({ line: `${sampleId} session_${n}`, reason: `unparsable session date ${JSON.stringify(dateText)}` })
        continue
      }
      turns.forEach((turn, index) => {
        result.read++
        if (
          !isRecord(turn) ||
          typeof turn['dia_id'] !== 'string' ||
          typeof turn['text'] !== 'string' ||
          typeof turn['speaker'] !== 'string'
        ) {
          result.skipped.push({ line: `${sampleId} session_${n}[${index}]`, reason: 'turn needs string "speaker", "dia_id" and "text"' })
          return
        }
        const payload: LocomoTurnPayload = { speaker: turn['speaker'], dia_id: turn['dia_id'], text: turn['text'], index }
        if (typeof turn['blip_caption'] === 'string') payload.blip_caption = turn['blip_caption']
        const event: EventInput = {
          agent: 'locomo',
          format: 'locomo-turn',
          type: 'turn',
          sessionKey: `${sampleId}:session_${n}`,
          project,
          ts: startedAt + index * 1000,
          idemKey: `locomo:${sampleId}:${turn['dia_id']}`,
          payload: sanitizePayload(payload, options.redact),
          sessionStartedAt: startedAt,
        }
        result.events.push(event)
      })
    }
  })
  return result
}
