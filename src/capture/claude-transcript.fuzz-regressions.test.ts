import { describe, expect, it } from 'vitest'
import { createTestEngine } from '../testing/test-mnemo.js'
import { deriveClaudeTranscript, parseClaudeTranscript } from './claude-transcript.js'

// Counterexamples found by `node scripts/fuzz.mjs` (target claude-transcript), kept as unit tests.
const OPTIONS = { file: '/fuzz/claude/session-abc.jsonl', project: { root: '/fuzz/claude', name: 'claude' } }

describe('parseClaudeTranscript: fuzz regressions', () => {
  it('ignores a numeric timestamp past the end of Date’s range (8640000000000001) instead of making an invalid event time', async () => {
    const text = '{"type":"user","timestamp":8640000000000001,"message":{"role":"user","content":"volutpat"}}'
    const result = parseClaudeTranscript(text, OPTIONS)
    expect(result).toMatchObject({ read: 1, skipped: [], unknownTypes: {} })
    expect(result.events).toHaveLength(1)
    // No usable timestamp anywhere in the file: the documented fallback, 0.
    expect(result.events[0]!.ts).toBe(0)
    expect(deriveClaudeTranscript(result.events[0]!).observations).toEqual([{ kind: 'prompt', role: 'user', text: 'volutpat' }])
    const { engine } = createTestEngine()
    expect(await engine.append(result.events)).toMatchObject({ inserted: 1 })
  })

  it('falls back to the file’s valid times for ISO strings at the very end of Date’s range, so "this year" cannot break the import', async () => {
    const text = [
      '{"type":"user","uuid":"u1","timestamp":"+275760-09-13T00:00:00.000Z","message":{"role":"user","content":"deploy this year"}}',
      '{"type":"user","uuid":"u2","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"fine"}}',
    ].join('\n')
    const result = parseClaudeTranscript(text, OPTIONS)
    expect(result.events.map((e) => e.ts)).toEqual([Date.parse('2025-01-01T00:00:00Z'), Date.parse('2025-01-01T00:00:00Z')])
    // Before the fix the whole batch failed: "sqlite append failed: Invalid time value".
    const { engine } = createTestEngine()
    expect(await engine.append(result.events)).toMatchObject({ inserted: 2, observations: 2 })
  })

  it('still accepts epoch-ms numbers and ISO strings from 1970 to 9999', () => {
    const lines = [0, 1_700_000_000_000, '9999-12-31T23:59:59.999Z', -1].map(
      (t, i) => `{"type":"summary","uuid":"s${i}","summary":"s${i}","timestamp":${JSON.stringify(t)}}`,
    )
    const result = parseClaudeTranscript(lines.join('\n'), OPTIONS)
    // -1 (before 1970) is not a record time: it takes the previous record's.
    expect(result.events.map((e) => e.ts)).toEqual([0, 1_700_000_000_000, 253_402_300_799_999, 253_402_300_799_999])
  })
})
