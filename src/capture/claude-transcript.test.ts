import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { EventInput } from '../core/types.js'
import { deriveClaudeTranscript, parseClaudeTranscript } from './claude-transcript.js'

const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const fixture = path.join(repoRoot, 'fixtures/transcripts/claude-code/mixed-session.jsonl')
const realDir = path.join(repoRoot, '../shared/datasets/transcripts/claude-code')
const APP = '/nonexistent/mnemo-fixture/app'

function parseFixture(): ReturnType<typeof parseClaudeTranscript> {
  return parseClaudeTranscript(readFileSync(fixture, 'utf8'), { file: fixture })
}

/** Flattened derived observations: [kind, role, tool, sourceRef, text]. */
function observe(events: EventInput[]): (string | undefined)[][] {
  return events.flatMap((e) => deriveClaudeTranscript(e).observations.map((o) => [o.kind, o.role, o.tool, o.sourceRef, o.text]))
}

const at = (hhmmss: string): number => Date.parse(`2026-03-01T${hhmmss}.000Z`)

describe('parseClaudeTranscript on the hand-written fixture', () => {
  it('counts records, events, bad lines and unknown types exactly', () => {
    const r = parseFixture()
    expect(r.read).toBe(21) // 22 lines, one blank
    expect(r.events).toHaveLength(11) // 13 valid records, 2 left empty by dropping mnemo's own tool call
    expect(r.skipped).toEqual([
      { line: 8, reason: 'invalid JSON' },
      { line: 12, reason: 'not a JSON object' },
      { line: 19, reason: 'user record without message.content' },
      { line: 20, reason: 'message is not an object' },
      { line: 21, reason: 'missing "type"' },
      { line: 22, reason: 'invalid JSON (truncated last line)' },
    ])
    expect(r.unknownTypes).toEqual({ 'file-history-snapshot': 1, system: 1 })
  })

  it('fills session, project, time and idempotency keys, with file-level fallbacks', () => {
    const { events } = parseFixture()
    expect(new Set(events.map((e) => e.sessionKey))).toEqual(new Set(['sess-a']))
    for (const e of events) {
      expect(e.agent).toBe('claude-code')
      expect(e.format).toBe('claude-transcript')
      expect(e.project).toEqual({ root: APP, name: 'app' })
    }
    expect(events.map((e) => e.type)).toEqual([
      'summary',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'user',
    ])
    // the leading summary has no timestamp and no predecessor: the file's first timestamp
    expect(events.map((e) => e.ts)).toEqual([
      at('10:00:00'),
      at('10:00:00'),
      at('10:00:05'),
      at('10:00:06'),
      at('10:00:10'),
      at('10:00:20'),
      at('10:00:40'),
      at('10:01:00'),
      at('10:01:00'),
      at('10:02:00'),
      at('10:02:10'),
    ])
    expect(events[1]!.idemKey).toBe('claude-code:sess-a:u-1')
    expect(events[0]!.idemKey).toMatch(/^claude-code:sess-a:h:[0-9a-f]{16}$/)
    expect(events[8]!.idemKey).toMatch(/^claude-code:sess-a:h:[0-9a-f]{16}$/)
    expect(new Set(events.map((e) => e.idemKey)).size).toBe(events.length)
    // parsing twice gives the same keys (content hashes are stable)
    expect(parseFixture().events.map((e) => e.idemKey)).toEqual(events.map((e) => e.idemKey))
  })

  it('drops mnemo MCP tool calls and their results before storing', () => {
    const { events } = parseFixture()
    const stored = JSON.stringify(events.map((e) => e.payload))
    expect(stored).not.toContain('mcp__mnemo__')
    expect(stored).not.toContain('SECRET RECALL RESULT')
    expect(stored).not.toContain('toolu_recall')
    const a4 = events.find((e) => e.idemKey === 'claude-code:sess-a:a-4')!
    expect((a4.payload as { message: { content: unknown[] } }).message.content).toEqual([
      { type: 'text', text: 'I checked memory, now fixing.' },
    ])
    expect(events.some((e) => e.idemKey.endsWith(':a-3') || e.idemKey.endsWith(':u-4'))).toBe(false)
  })

  it('stores inline base64 images as a placeholder', () => {
    const u5 = parseFixture().events.find((e) => e.idemKey === 'claude-code:sess-a:u-5')!
    const block = (u5.payload as { message: { content: { source: { data: string } }[] } }).message.content[0]!
    expect(block.source.data).toBe('[image: image/png, 600 B]')
    expect(JSON.stringify(u5.payload).length).toBeLessThan(400)
  })

  it('derives the exact observations', () => {
    expect(observe(parseFixture().events)).toEqual([
      ['summary', 'assistant', undefined, undefined, '修复登录页 bug'],
      ['prompt', 'user', undefined, undefined, '请修复 src/login.ts 里的登录错误'],
      ['message', 'assistant', undefined, undefined, 'Let me read the file.'],
      ['tool', 'assistant', 'Read', 'toolu_read', `Read: ${APP}/src/login.ts`],
      ['tool_result', 'tool', 'Read', 'toolu_read', "export function login() { throw new Error('boom') }"],
      ['tool', 'assistant', 'Bash', 'toolu_bash', 'Bash: npm test\nRun the tests'],
      ['error', 'tool', 'Bash', 'toolu_bash', '1 test failed: login throws'],
      ['message', 'assistant', undefined, undefined, 'I checked memory, now fixing.'],
      ['prompt', 'user', undefined, undefined, '[image: image/png, 600 B]'],
      ['message', 'assistant', undefined, undefined, 'Stray line without session or timestamp.'],
      ['message', 'system', undefined, undefined, '<local-command-stdout>done</local-command-stdout>'],
      ['prompt', 'user', undefined, undefined, 'plain string text'],
      ['prompt', 'user', undefined, undefined, '并且加上测试'],
    ])
    const read = parseFixture().events[2]!
    expect(deriveClaudeTranscript(read).observations[1]!.files).toEqual([`${APP}/src/login.ts`])
  })
})

describe('parseClaudeTranscript options and fallbacks', () => {
  it('uses the file stem, the file folder and ts 0 when records carry no sessionId, cwd or timestamp', () => {
    const text = '{"type":"user","uuid":"x1","message":{"role":"user","content":"hi"}}\n\n{"type":"summary","summary":"s"}\n'
    const r = parseClaudeTranscript(text, { file: '/nonexistent/transcripts/abc-123.jsonl' })
    expect(r.read).toBe(2)
    expect(r.skipped).toEqual([])
    expect(r.events.map((e) => [e.sessionKey, e.project.root, e.ts])).toEqual([
      ['abc-123', '/nonexistent/transcripts', 0],
      ['abc-123', '/nonexistent/transcripts', 0],
    ])
    expect(r.events[0]!.idemKey).toBe('claude-code:abc-123:x1')
  })

  it('takes the most common sessionId for records without one, and options.project and redact', () => {
    const lines = [
      { type: 'user', sessionId: 'one', uuid: '1', message: { content: 'a' } },
      { type: 'user', sessionId: 'two', uuid: '2', message: { content: 'b token=abc' } },
      { type: 'user', sessionId: 'two', uuid: '3', message: { content: 'c' } },
      { type: 'summary', summary: 'token=abc' },
    ]
    const project = { root: 'corpus:x', name: 'x' }
    const redact = (s: string): string => s.replace(/token=\w+/g, 'token=[REDACTED]')
    const r = parseClaudeTranscript(lines.map((l) => JSON.stringify(l)).join('\n'), { file: '/f/s.jsonl', project, redact })
    expect(r.events.map((e) => e.sessionKey)).toEqual(['one', 'two', 'two', 'two'])
    expect(r.events.every((e) => e.project === project)).toBe(true)
    expect(JSON.stringify(r.events.map((e) => e.payload))).not.toContain('token=abc')
    expect(observe(r.events)[3]).toEqual(['summary', 'assistant', undefined, undefined, 'token=[REDACTED]'])
  })

  it('leaves tool unset for a tool_result whose call is not in the file', () => {
    const text = JSON.stringify({
      type: 'user',
      sessionId: 's',
      uuid: 'u',
      message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_elsewhere', content: 'ok' }] },
    })
    const [event] = parseClaudeTranscript(text, { file: '/f/s.jsonl' }).events
    expect(deriveClaudeTranscript(event!).observations).toEqual([
      { kind: 'tool_result', role: 'tool', text: 'ok', sourceRef: 'toolu_elsewhere' },
    ])
  })
})

describe('deriveClaudeTranscript on odd shapes', () => {
  const ev = (payload: unknown, type = 'user'): EventInput => ({
    agent: 'claude-code',
    format: 'claude-transcript',
    type,
    sessionKey: 's',
    project: { root: '/p', name: 'p' },
    ts: 0,
    idemKey: 'k',
    payload,
  })

  it('never throws and derives only what it understands', () => {
    const odd: unknown[] = [
      null,
      42,
      'text',
      [],
      {},
      { type: 'user' },
      { type: 'user', message: null },
      { type: 'user', message: { content: null } },
      { type: 'user', message: { content: { a: 1 } } },
      { type: 'assistant', message: { content: [null, 7, { type: 'tool_use' }, { type: 'thinking', thinking: 'x' }] } },
      { type: 'summary', summary: 3 },
      { type: 'user', message: { content: [{ type: 'tool_result' }] } },
    ]
    for (const p of odd) expect(() => deriveClaudeTranscript(ev(p))).not.toThrow()
    expect(odd.flatMap((p) => deriveClaudeTranscript(ev(p)).observations)).toEqual([
      { kind: 'tool_result', role: 'tool', text: '(no output)' },
    ])
  })

  it('treats isMeta user records as system, keeps [image] only when nothing else is said', () => {
    const meta = { type: 'user', isMeta: true, message: { content: [{ type: 'text', text: 'injected' }] } }
    expect(deriveClaudeTranscript(ev(meta)).observations).toEqual([{ kind: 'message', role: 'system', text: 'injected' }])
    const mixed = {
      type: 'user',
      message: {
        content: [
          { type: 'image', source: {} },
          { type: 'text', text: 'see this' },
        ],
      },
    }
    expect(deriveClaudeTranscript(ev(mixed)).observations).toEqual([{ kind: 'prompt', role: 'user', text: 'see this' }])
  })

  it('caps long texts at OBSERVATION_CHARS', () => {
    const long = { type: 'assistant', message: { content: [{ type: 'text', text: 'x'.repeat(20_000) }] } }
    const [o] = deriveClaudeTranscript(ev(long, 'assistant')).observations
    expect(o!.text.length).toBeLessThan(8_100)
    expect(o!.text).toContain('[mnemo: ')
  })
})

describe.skipIf(!existsSync(realDir))('parseClaudeTranscript on the real files (reads ../shared/datasets/transcripts/claude-code)', () => {
  const parse = (name: string): ReturnType<typeof parseClaudeTranscript> => {
    const file = path.join(realDir, name)
    return parseClaudeTranscript(readFileSync(file, 'utf8'), { file })
  }

  it('parses every file into events and derives without throwing', () => {
    for (const name of readdirSync(realDir).filter((f) => f.endsWith('.jsonl'))) {
      const r = parse(name)
      expect(r.events.length, name).toBeGreaterThan(0)
      for (const e of r.events) expect(() => deriveClaudeTranscript(e)).not.toThrow()
    }
  })

  it('reports the exact counts per file', () => {
    const counts = (name: string): unknown => {
      const r = parse(name)
      return { read: r.read, events: r.events.length, skipped: r.skipped.length, unknownTypes: r.unknownTypes }
    }
    expect(counts('representative_messages.jsonl')).toEqual({ read: 12, events: 12, skipped: 0, unknownTypes: {} })
    expect(counts('session_b.jsonl')).toEqual({ read: 3, events: 3, skipped: 0, unknownTypes: {} })
    expect(counts('todowrite_examples.jsonl')).toEqual({ read: 12, events: 12, skipped: 0, unknownTypes: {} })
    expect(counts('edge_cases.jsonl')).toEqual({ read: 19, events: 13, skipped: 6, unknownTypes: {} })
  })

  it('reports the bad lines of edge_cases.jsonl with their line numbers', () => {
    const r = parse('edge_cases.jsonl')
    expect(r.skipped).toEqual([
      { line: 10, reason: 'user record without message.content' },
      { line: 11, reason: 'message is not an object' },
      { line: 13, reason: 'not a JSON object' },
      { line: 14, reason: 'missing "type"' },
      { line: 15, reason: 'not a JSON object' },
      { line: 16, reason: 'not a JSON object' },
    ])
    const kinds = observe(r.events).map((o) => `${o[0]}/${o[1]}`)
    expect(kinds.filter((k) => k === 'message/system')).toHaveLength(3) // caveat, <command-name>, <local-command-stdout>
    expect(kinds).toContain('error/tool')
    expect(observe(r.events)).toContainEqual(['prompt', 'user', undefined, undefined, 'wow error'])
  })
})
