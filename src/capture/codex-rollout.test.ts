import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { EventInput } from '../core/types.js'
import { deriveCodexRollout, parseCodexRollout } from './codex-rollout.js'

const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const fixture = path.join(repoRoot, 'fixtures/transcripts/codex/rollout-mixed.jsonl')
const realDir = path.join(repoRoot, '../shared/datasets/transcripts/codex')
const APP = '/nonexistent/mnemo-fixture/codex-app'
const OTHER = '/nonexistent/mnemo-fixture/other'
const SID = 'sess-codex-1'

function parseFixture(): ReturnType<typeof parseCodexRollout> {
  return parseCodexRollout(readFileSync(fixture, 'utf8'), { file: fixture })
}

/** Flattened derived observations: [kind, role, tool, sourceRef, text]. */
function observe(events: EventInput[]): (string | undefined)[][] {
  return events.flatMap((e) => deriveCodexRollout(e).observations.map((o) => [o.kind, o.role, o.tool, o.sourceRef, o.text]))
}

const at = (mmss: string): number => Date.parse(`2026-03-02T08:${mmss}.000Z`)

describe('parseCodexRollout on the hand-written fixture', () => {
  it('counts records, events, bad lines and unknown types exactly', () => {
    const r = parseFixture()
    expect(r.read).toBe(28) // 29 lines, one blank
    expect(r.events).toHaveLength(19) // 22 valid records minus mnemo's call, its output and its mcp_tool_call_end
    expect(r.skipped).toEqual([
      { line: 11, reason: 'invalid JSON' },
      { line: 12, reason: 'not a JSON object' },
      { line: 22, reason: 'missing "type"' },
      { line: 23, reason: 'payload is not an object' },
      { line: 29, reason: 'invalid JSON (truncated last line)' },
    ])
    expect(r.unknownTypes).toEqual({ future_record_type: 1 })
  })

  it('fills session, project (latest cwd), times and idempotency keys', () => {
    const { events } = parseFixture()
    for (const e of events) {
      expect([e.agent, e.format, e.sessionKey]).toEqual(['codex', 'codex-rollout', SID])
      expect(e.sessionStartedAt).toBe(Date.parse('2026-03-02T07:59:59.000Z'))
    }
    expect(events.map((e) => e.project.root)).toEqual([...Array<string>(14).fill(APP), ...Array<string>(5).fill(OTHER)]) // the turn_context on line 24 moves to OTHER
    const userImage = events.find((e) => JSON.stringify(e.payload).includes('看这张图'))!
    expect(userImage.ts).toBe(at('00:15')) // no timestamp: the previous record's
    const keys = events.map((e) => e.idemKey)
    expect(keys).toContain(`codex:${SID}:call:call_shell_1`)
    expect(keys).toContain(`codex:${SID}:out:call_shell_1`)
    expect(keys).toContain(`codex:${SID}:call:call_local_1`)
    expect(keys).toContain(`codex:${SID}:out:call_orphan`)
    expect(keys[0]).toMatch(new RegExp(`^codex:${SID}:h:[0-9a-f]{16}$`))
    expect(new Set(keys).size).toBe(keys.length)
    expect(parseFixture().events.map((e) => e.idemKey)).toEqual(keys)
  })

  it('drops mnemo MCP calls, their outputs and events, and never stores encrypted reasoning in text', () => {
    const { events } = parseFixture()
    const stored = JSON.stringify(events.map((e) => e.payload))
    expect(stored).not.toContain('SECRET RECALL RESULT')
    expect(stored).not.toContain('call_mnemo_1')
    expect(JSON.stringify(observe(events))).not.toContain('encrypted')
  })

  it('stores the data-URI image as a placeholder and carries the tool name to outputs', () => {
    const { events } = parseFixture()
    const userImage = events.find((e) => JSON.stringify(e.payload).includes('看这张图'))!
    expect((userImage.payload as { payload: { images: string[] } }).payload.images).toEqual(['[image: image/png, 600 B]'])
    const out = events.find((e) => e.idemKey.endsWith(':out:call_patch_1'))!
    expect((out.payload as { payload: Record<string, unknown> }).payload['_mnemo_tool']).toBe('apply_patch')
  })

  it('derives the exact observations', () => {
    expect(observe(parseFixture().events)).toEqual([
      ['prompt', 'user', undefined, undefined, '把 README 翻译成中文'],
      ['reasoning', 'assistant', undefined, undefined, '**Reading README**\n\nThen translate it.'],
      ['tool', 'assistant', 'shell', 'call_shell_1', 'shell: bash -lc cat README.md'],
      ['tool_result', 'tool', 'shell', 'call_shell_1', '# Codex App\nA demo.'],
      [
        'tool',
        'assistant',
        'apply_patch',
        'call_patch_1',
        'apply_patch: *** Begin Patch\n*** Update File: README.md\n@@\n-# Codex App\n+# Codex 应用\n*** End Patch',
      ],
      ['tool_result', 'tool', 'apply_patch', 'call_patch_1', 'Success. Updated the following files:\nM README.md'],
      ['error', 'tool', undefined, 'call_orphan', 'sandbox denied'],
      ['message', 'assistant', undefined, undefined, 'README 已翻译。'],
      ['prompt', 'user', undefined, undefined, '看这张图'],
      ['tool', 'assistant', 'local_shell_call', 'call_local_1', 'local_shell_call: ls -la'],
      ['message', 'assistant', undefined, undefined, 'Now in the other folder.'],
      ['tool', 'assistant', 'shell', 'call_shell_2', 'shell: false'],
      ['error', 'tool', 'shell', 'call_shell_2', 'Exit code: 1'], // Codex's exec header taken off, the exit status kept
      ['summary', 'assistant', undefined, undefined, 'Translated README to Chinese.'],
    ])
    const patch = parseFixture().events.find((e) => e.idemKey.endsWith(':call:call_patch_1'))!
    expect(deriveCodexRollout(patch).observations[0]!.files).toEqual(['README.md'])
  })
})

describe('parseCodexRollout fallbacks and odd shapes', () => {
  it('uses the file stem and folder without session_meta, and drops older mnemo__ tool names', () => {
    const lines = [
      { type: 'event_msg', payload: { type: 'user_message', message: 'hi' } },
      { type: 'response_item', payload: { type: 'function_call', name: 'mnemo__memory_recall', arguments: '{}', call_id: 'c1' } },
      { type: 'response_item', payload: { type: 'function_call_output', call_id: 'c1', output: 'recalled' } },
    ]
    const r = parseCodexRollout(lines.map((l) => JSON.stringify(l)).join('\r\n'), { file: '/nonexistent/rollouts/rollout-x.jsonl' })
    expect(r.read).toBe(3)
    expect(r.events.map((e) => [e.sessionKey, e.project.root, e.ts, e.sessionStartedAt])).toEqual([
      ['rollout-x', '/nonexistent/rollouts', 0, undefined],
    ])
  })

  it('derives nothing from response_item messages, session_meta, turn_context and unknown event_msg subtypes', () => {
    const ev = (payload: unknown): EventInput => ({
      agent: 'codex',
      format: 'codex-rollout',
      type: 'x',
      sessionKey: 's',
      project: { root: '/p', name: 'p' },
      ts: 0,
      idemKey: 'k',
      payload,
    })
    const quiet: unknown[] = [
      null,
      3,
      [],
      { type: 'event_msg' },
      { type: 'event_msg', payload: null },
      { type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'dup' }] } },
      { type: 'session_meta', payload: { id: 'x' } },
      { type: 'turn_context', payload: { cwd: '/x' } },
      { type: 'event_msg', payload: { type: 'agent_reasoning', text: 'thinking' } },
      { type: 'response_item', payload: { type: 'reasoning', summary: 'nope', encrypted_content: 'zzz' } },
      { type: 'response_item', payload: { type: 'function_call', arguments: '{}' } },
    ]
    for (const p of quiet) {
      expect(() => deriveCodexRollout(ev(p))).not.toThrow()
      expect(deriveCodexRollout(ev(p)).observations).toEqual([])
    }
  })
})

describe.skipIf(!existsSync(realDir))('parseCodexRollout on the real files (reads ../shared/datasets/transcripts/codex)', () => {
  it('parses every file into events and reports future_synthetic_record as unknown', () => {
    for (const name of readdirSync(realDir).filter((f) => f.endsWith('.jsonl'))) {
      const file = path.join(realDir, name)
      const r = parseCodexRollout(readFileSync(file, 'utf8'), { file })
      expect(r.events.length, name).toBeGreaterThan(0)
      for (const e of r.events) expect(() => deriveCodexRollout(e)).not.toThrow()
    }
    const file = path.join(realDir, 'rollout-sample.jsonl')
    const r = parseCodexRollout(readFileSync(file, 'utf8'), { file })
    expect({ read: r.read, events: r.events.length, skipped: r.skipped, unknownTypes: r.unknownTypes }).toEqual({
      read: 14,
      events: 13,
      skipped: [],
      unknownTypes: { future_synthetic_record: 1 },
    })
    expect(new Set(r.events.map((e) => e.sessionKey))).toEqual(new Set(['11111111-1111-4111-8111-111111111111']))
    expect(r.events[0]!.project.root).toBe('/workspace/synthetic-project')
    const kinds = observe(r.events).map((o) => `${o[0]}:${o[2] ?? ''}`)
    expect(kinds).toEqual([
      'prompt:',
      'reasoning:',
      'tool:exec_command',
      'tool_result:exec_command',
      'tool:apply_patch',
      'tool_result:apply_patch',
      'tool:mcp__synthetic__lookup',
      'tool_result:mcp__synthetic__lookup',
      'message:',
    ])
    expect(JSON.stringify(observe(r.events))).not.toContain('SYNTHETIC_ENCRYPTED_CONTENT')
  })
})

describe('parseCodexRollout on 0.171 forms (messages in three records, namespaced MCP calls)', () => {
  const parse = (lines: unknown[]): ReturnType<typeof parseCodexRollout> =>
    parseCodexRollout(lines.map((l) => JSON.stringify(l)).join('\n'), { file: '/nonexistent/r/rollout-y.jsonl' })
  const user = (text: string): unknown[] => [
    { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } },
    { type: 'event_msg', payload: { type: 'item_completed', item: { type: 'UserMessage', id: 'u', content: [{ type: 'text', text }] } } },
  ]

  it('stores each message once whichever records carry it, and a repeated prompt twice', () => {
    const r = parse([
      {
        type: 'response_item',
        payload: {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/x</cwd>\n</environment_context>' }],
        },
      },
      ...user('yes'),
      ...user('yes'),
      {
        type: 'event_msg',
        payload: { type: 'item_completed', item: { type: 'AgentMessage', id: 'a', content: [{ type: 'Text', text: 'done' }] } },
      },
      { type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] } },
      // The older form beside its response_item copy: the event_msg carries it.
      { type: 'event_msg', payload: { type: 'user_message', message: 'older' } },
      { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'older' }] } },
    ])
    expect(observe(r.events).map((o) => [o[0], o[4]])).toEqual([
      ['prompt', 'yes'],
      ['prompt', 'yes'],
      ['message', 'done'],
      ['prompt', 'older'],
    ])
  })

  it('a rollout with only response_item messages still gives its prompts, not Codex’s own context', () => {
    const r = parse([
      {
        type: 'response_item',
        payload: {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: '# AGENTS.md instructions for /x\n<INSTRUCTIONS>be brief</INSTRUCTIONS>' }],
        },
      },
      { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'add a test' }] } },
      {
        type: 'response_item',
        payload: {
          type: 'message',
          role: 'developer',
          content: [{ type: 'input_text', text: '<mnemo-context project="x">…</mnemo-context>' }],
        },
      },
    ])
    expect(observe(r.events).map((o) => [o[0], o[4]])).toEqual([['prompt', 'add a test']])
  })

  it('drops mnemo’s calls named by namespace, their outputs and their McpToolCall items', () => {
    const r = parse([
      {
        type: 'response_item',
        payload: { type: 'function_call', namespace: 'mcp__mnemo', name: 'memory_recall', arguments: '{"query":"x"}', call_id: 'c9' },
      },
      { type: 'response_item', payload: { type: 'function_call_output', call_id: 'c9', output: 'RECALLED SECRET' } },
      {
        type: 'event_msg',
        payload: {
          type: 'item_completed',
          item: { type: 'McpToolCall', id: 'c9', server: 'mnemo', tool: 'memory_recall', result: 'RECALLED SECRET' },
        },
      },
      {
        type: 'response_item',
        payload: { type: 'function_call', namespace: 'mcp__docs', name: 'lookup', arguments: '{"query":"y"}', call_id: 'c10' },
      },
    ])
    expect(JSON.stringify(r.events)).not.toContain('RECALLED SECRET')
    expect(observe(r.events).map((o) => [o[0], o[2]])).toEqual([['tool', 'mcp__docs__lookup']])
  })
})
