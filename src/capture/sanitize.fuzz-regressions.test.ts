import { describe, expect, it } from 'vitest'
import { DEFAULT_CAPS } from '../core/text.js'
import { captureClaudeHook } from './claude-hook.js'
import { sanitizePayload } from './sanitize.js'

// Counterexample found by `node scripts/fuzz.mjs` (target hook-shaped), kept as a unit test:
// redaction runs after the per-field cap, and a placeholder can be longer than what it replaces.
const MARKER_ROOM = 64
const LINE = 'password=abc123def\n'

describe('sanitizePayload: fuzz regressions', () => {
  it('keeps a field within the cap after redaction has lengthened it (the hook payload the fuzzer found)', () => {
    const field = LINE.repeat(554) // 10 526 chars: under the cap before redaction, 16 066 after
    const stdin = JSON.stringify({ session_id: '\u0000', error: [{ a: [field] }] })
    const captured = captureClaudeHook('PostToolUseFailure', stdin, 0, { defaultCwd: '/fuzz/project' })
    if (!('event' in captured)) throw new Error('expected an event')
    const stored = (captured.event.payload as { error: { a: string[] }[] }).error[0]!.a[0]!
    // Before the fix: 16 066 chars, over the 16 000 cap plus the cut marker.
    expect(stored.length).toBeLessThanOrEqual(DEFAULT_CAPS.fieldChars + MARKER_ROOM)
    expect(stored.startsWith('password=[REDACTED:password]\npassword=[REDACTED:password]\n')).toBe(true)
    expect(stored).toContain('chars cut, 16066 total]…')
    expect(stored).not.toContain('abc123def')
    expect((captured.event.payload as { session_id: string }).session_id).toBe('\uFFFD')
  })

  it('leaves a field that stays under the cap after redaction exactly as redaction made it', () => {
    expect(sanitizePayload({ env: LINE.repeat(3) })).toEqual({ env: 'password=[REDACTED:password]\n'.repeat(3) })
  })

  it('caps with a custom redactor too', () => {
    const out = sanitizePayload({ s: 'ab'.repeat(7_000) }, (t) => t.replaceAll('a', 'aaaa')) as { s: string }
    expect(out.s.length).toBeLessThanOrEqual(DEFAULT_CAPS.fieldChars + MARKER_ROOM)
    expect(out.s).toContain('chars cut, 35000 total]…')
  })
})
