import { describe, expect, it } from 'vitest'
import { createTestEngine } from '../testing/test-mnemo.js'
import { deriveCodexRollout, parseCodexRollout } from './codex-rollout.js'

// Counterexamples found by `node scripts/fuzz.mjs` (target codex-rollout), kept as unit tests.
const OPTIONS = { file: '/fuzz/codex/rollout-2025-01-01.jsonl', project: { root: '/fuzz/codex', name: 'codex' } }

describe('parseCodexRollout: fuzz regressions', () => {
  it('ignores a timestamp of -1e300 (finite, but no time) for the event and for sessionStartedAt', async () => {
    const text = '{"timestamp":-1e+300,"type":"session_meta","payload":{}}'
    const result = parseCodexRollout(text, OPTIONS)
    expect(result).toMatchObject({ read: 1, skipped: [], unknownTypes: {} })
    expect(result.events).toHaveLength(1)
    expect(result.events[0]!.ts).toBe(0)
    expect(result.events[0]).not.toHaveProperty('sessionStartedAt')
    expect(deriveCodexRollout(result.events[0]!).observations).toEqual([])
    const { engine } = createTestEngine()
    expect(await engine.append(result.events)).toMatchObject({ inserted: 1 })
  })

  it('keeps a later valid session_meta timestamp as the session start when the payload one is out of range', async () => {
    const text = [
      '{"timestamp":"2025-03-01T10:00:00Z","type":"session_meta","payload":{"id":"sid-1","timestamp":8640000000000001,"cwd":"/fuzz/codex"}}',
      '{"timestamp":"2025-03-01T10:00:05Z","type":"event_msg","payload":{"type":"user_message","message":"what changed this year"}}',
    ].join('\n')
    const result = parseCodexRollout(text, OPTIONS)
    const start = Date.parse('2025-03-01T10:00:00Z')
    expect(result.events.map((e) => [e.ts, e.sessionStartedAt])).toEqual([
      [start, start],
      [start + 5000, start],
    ])
    const { engine } = createTestEngine()
    expect(await engine.append(result.events)).toMatchObject({ inserted: 2, observations: 1 })
  })
})
