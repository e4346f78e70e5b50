import { describe, expect, it } from 'vitest'
import type { ObservationRow } from '../rows.js'
import { encodeObservationText, toObservation, toObservationInflatedOnRead, withText } from './sqlite-rows.js'

const row = (kind: string, text: string): ObservationRow => ({
  id: 'obs_01',
  event_seq: 7,
  session_id: 'ses_01',
  project_id: 'prj_01',
  kind,
  role: 'tool',
  tool: 'Bash',
  files: '["src/a.ts"]',
  source_ref: null,
  ts: 1_750_000_000_000,
  text: encodeObservationText(kind, text) as string,
  flags: null,
  user_id: null,
})

describe('toObservationInflatedOnRead', () => {
  it('gives the observation toObservation(withText(row)) gives, a compressed text inflated when read', () => {
    const long = 'FAIL src/ledger.test.ts ✗ settles the partial order (312 ms)\n'.repeat(80)
    for (const r of [row('tool_result', long), row('error', long), row('prompt', long), row('tool_result', 'short')]) {
      const eager = toObservation(withText(r))
      const lazy = toObservationInflatedOnRead(r)
      expect(lazy.text).toBe(eager.text)
      expect({ ...lazy }).toEqual(eager)
      expect(JSON.parse(JSON.stringify(lazy))).toEqual(JSON.parse(JSON.stringify(eager)))
      expect(structuredClone(lazy)).toEqual(eager)
      expect(Object.keys(lazy)).toEqual(Object.keys(eager))
    }
    expect(Buffer.isBuffer(row('tool_result', long).text)).toBe(true)
  })

  it('keeps a text assigned to it', () => {
    const o = toObservationInflatedOnRead(row('tool_result', 'x'.repeat(4000)))
    o.text = 'redacted'
    expect(o.text).toBe('redacted')
    expect({ ...o }.text).toBe('redacted')
  })
})
