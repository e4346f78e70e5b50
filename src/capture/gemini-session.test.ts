import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { EventInput } from '../core/types.js'
import { createTestEngine, tempDir } from '../testing/test-mnemo.js'
import { parseImportFile } from '../engine/import-files.js'
import { deriveGeminiSession, isGeminiSession, parseGeminiSession } from './gemini-session.js'

// A hand-written Gemini CLI session file in the shape gemini-cli's ChatRecordingService
// writes (~/.gemini/tmp/<sha256 of the project root>/chats/session-*.json).
const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const fixture = path.join(repoRoot, 'fixtures/transcripts/gemini/session-2026-04-07T09-00-7c1e9a52.json')
const APP = '/nonexistent/mnemo-fixture/gemini-app'
const SID = '7c1e9a52-4b0d-4f8e-9d61-2f3a5b6c7d8e'
const json = (): unknown => JSON.parse(readFileSync(fixture, 'utf8'))

function observe(events: EventInput[]): (string | undefined)[][] {
  return events.flatMap((e) => deriveGeminiSession(e).observations.map((o) => [o.kind, o.role, o.tool, o.sourceRef, o.text]))
}

describe('parseGeminiSession', () => {
  it('counts messages, skips bad ones with their index, counts unknown types', () => {
    const r = parseGeminiSession(json(), { file: fixture, candidateRoots: [APP] })
    expect(r.read).toBe(9)
    expect(r.events.map((e) => e.type)).toEqual([
      'user',
      'gemini',
      'tool_call',
      'tool_call',
      'info',
      'gemini',
      'tool_call',
      'error',
      'user',
    ])
    expect(r.skipped).toEqual([
      { line: 'message[5]', reason: 'message is not an object' },
      { line: 'message[6]', reason: 'message without type' },
    ])
    expect(r.unknownTypes).toEqual({ future_kind: 1 })
  })

  it('finds the project from projectHash among the candidate roots, else names it by the hash', () => {
    const found = parseGeminiSession(json(), { file: fixture, candidateRoots: ['/elsewhere', APP] })
    expect(found.events[0]!.project).toEqual({ root: APP, name: 'gemini-app' })
    const unknown = parseGeminiSession(json(), { file: fixture, candidateRoots: ['/elsewhere'] })
    expect(unknown.events[0]!.project).toEqual({ root: 'gemini:60aa01bdbd99', name: '60aa01bdbd99' })
    const given = parseGeminiSession(json(), { file: fixture, project: { root: '/p/x', name: 'x' } })
    expect(given.events[0]!.project).toEqual({ root: '/p/x', name: 'x' })
  })

  it('keys events by session and message id, times them, and keeps time moving for a message without one', () => {
    const r = parseGeminiSession(json(), { file: fixture, candidateRoots: [APP] })
    expect(r.events.map((e) => e.idemKey)).toEqual(
      ['m1', 'm2', 'm2:call:read_file-1', 'm2:call:run_shell_command-2', 'm3', 'm4', 'm4:call:replace-3', 'm8', 'm9'].map(
        (id) => `gemini:${SID}:${id}`,
      ),
    )
    expect(r.events.every((e) => e.sessionKey === SID && e.agent === 'gemini' && e.format === 'gemini-session')).toBe(true)
    expect(r.events[0]!.ts).toBe(Date.parse('2026-04-07T09:00:05.000Z'))
    expect(r.events[8]!.ts).toBe(Date.parse('2026-04-07T09:04:00.000Z')) // m9 has no timestamp: the previous one's
    expect(r.events[2]!.ts).toBe(Date.parse('2026-04-07T09:00:15.000Z')) // a call keeps its own time
    expect(r.events[0]!.sessionStartedAt).toBe(Date.parse('2026-04-07T09:00:00.000Z'))
  })

  it('derives prompts, reasoning, tool calls with files, results, errors and messages; drops mnemo calls and notices', () => {
    const r = parseGeminiSession(json(), { file: fixture, candidateRoots: [APP] })
    const obs = observe(r.events)
    expect(obs.map((o) => o.slice(0, 4))).toEqual([
      ['prompt', 'user', undefined, undefined],
      ['reasoning', 'assistant', undefined, undefined],
      ['tool', 'assistant', 'read_file', 'read_file-1'],
      ['tool_result', 'tool', 'read_file', 'read_file-1'],
      ['tool', 'assistant', 'run_shell_command', 'run_shell_command-2'],
      ['error', 'tool', 'run_shell_command', 'run_shell_command-2'],
      ['message', 'assistant', undefined, undefined],
      ['tool', 'assistant', 'replace', 'replace-3'],
      ['tool_result', 'tool', 'replace', 'replace-3'],
      ['error', 'assistant', undefined, undefined],
      ['prompt', 'user', undefined, undefined],
    ])
    expect(obs[1]![4]).toBe('Locating the export: The export handler probably loads every row into memory.')
    expect(obs[3]![4]).toContain('const rows = await db.all(accountId)')
    expect(obs[5]![4]).toBe('FAIL test/export.test.ts: exportCsv timed out after 5000 ms')
    expect(obs[6]![4]).toBe('I will stream the rows with a cursor instead of loading them all.')
    expect(JSON.stringify(r.events)).not.toContain('mnemo__memory_recall')
    const files = r.events.flatMap((e) => deriveGeminiSession(e).observations.flatMap((o) => o.files ?? []))
    expect(files).toContain(`${APP}/src/export/csv.ts`)
  })

  it('reports a JSON object that is not a session, and never throws on odd shapes', () => {
    expect(isGeminiSession({ sessionId: 's', messages: [] })).toBe(true)
    expect(isGeminiSession({ messages: [] })).toBe(false)
    expect(parseGeminiSession({ hello: 1 }, { file: 'x.json' }).skipped).toEqual([
      { line: 1, reason: 'not a Gemini CLI session (needs sessionId and a messages array)' },
    ])
    for (const payload of [
      null,
      1,
      'x',
      [],
      { type: 'gemini', toolCalls: [null, { name: 3 }, { name: 'x', args: 'y', result: 7 }] },
      { type: 'user', content: [{ inlineData: {} }] },
    ]) {
      expect(() =>
        deriveGeminiSession({ ...parseGeminiSession(json(), { file: fixture }).events[0]!, payload: payload as never }),
      ).not.toThrow()
    }
  })
})

describe('a Gemini CLI session file that changes', () => {
  const session = (messages: unknown[]) => ({
    sessionId: 'grow',
    projectHash: 'ab'.repeat(32),
    startTime: '2026-05-01T10:00:00Z',
    lastUpdated: '2026-05-01T10:05:00Z',
    messages,
  })
  const project = { root: '/w/grow', name: 'grow' }

  it('imports tool calls added to a message in place, and keeps repeated or id-less messages apart', () => {
    const g1 = { id: 'g1', timestamp: '2026-05-01T10:01:00Z', type: 'gemini', content: 'building' }
    const before = parseGeminiSession(session([{ id: 'u1', type: 'user', content: 'build it' }, g1]), { file: 'x.json', project })
    const after = parseGeminiSession(
      session([
        { id: 'u1', type: 'user', content: 'build it' },
        {
          ...g1,
          toolCalls: [{ id: 't1', name: 'run_shell_command', args: { command: 'make' }, status: 'success', resultDisplay: 'built quokka' }],
        },
      ]),
      { file: 'x.json', project },
    )
    const known = new Set(before.events.map((e) => e.idemKey))
    const added = after.events.filter((e) => !known.has(e.idemKey))
    expect(observe(added).map((o) => [o[0], o[4]])).toEqual([
      ['tool', 'run_shell_command: make'],
      ['tool_result', 'built quokka'],
    ])
    const twice = parseGeminiSession(
      session([
        { type: 'user', content: 'same' },
        { type: 'user', content: 'same' },
        { id: 'd', type: 'user', content: 'a' },
        { id: 'd', type: 'user', content: 'b' },
      ]),
      { file: 'x.json', project },
    )
    expect(new Set(twice.events.map((e) => e.idemKey)).size).toBe(4)
  })

  it('dates a session without any timestamp by lastUpdated, never 1970', () => {
    const r = parseGeminiSession(
      { sessionId: 's', projectHash: 'x', lastUpdated: '2026-05-01T11:00:00Z', messages: [{ id: 'u', type: 'user', content: 'hi' }] },
      { file: 'x.json', project },
    )
    expect(r.events[0]!.ts).toBe(Date.parse('2026-05-01T11:00:00Z'))
  })
})

describe('importing a Gemini CLI session', () => {
  it('is detected by auto, stored, searchable, and adds nothing on re-import', async () => {
    const parsed = parseImportFile(fixture, 'auto', { project: { root: APP, name: 'gemini-app' } })
    expect(parsed.format).toBe('gemini')
    const { engine } = createTestEngine()
    // The project is known from an earlier session: the file's projectHash is matched to it.
    await engine.remember('exports stream rows', { project: { root: APP, name: 'gemini-app' } })
    const first = await engine.importPath(fixture)
    expect(first).toMatchObject({ read: 9, imported: 9, skipped: 2, unknown: 1 })
    const hits = await engine.recall('exportCsv timed out', { limit: 3 })
    expect(hits.map((h) => h.kind)).toContain('error')
    expect(hits.every((h) => h.project === 'gemini-app')).toBe(true)
    expect(await engine.importPath(fixture)).toMatchObject({ imported: 0, duplicates: 9 })
    expect((await engine.sessions()).find((s) => s.agent === 'gemini')).toMatchObject({ agent: 'gemini' })
  })

  it('names the problem when --format gemini is given something else, or the file is cut short', async () => {
    const bad = path.join(repoRoot, 'fixtures/transcripts/codex/rollout-mixed.jsonl')
    expect(parseImportFile(bad, 'gemini', {}).error).toMatch(/^invalid JSON: .*\(it looks like Codex rollout JSONL: try --format auto\)$/)
    const t = tempDir()
    try {
      const text = readFileSync(fixture, 'utf8')
      const cut = path.join(t.dir, 'session-2026-05-01T17-00-aaaa0008.json')
      writeFileSync(cut, text.slice(0, 80))
      expect(parseImportFile(cut, 'auto', {}).error).toMatch(/^invalid JSON: .*\(a truncated Gemini CLI session\?\)$/)
      const bom = path.join(t.dir, 'bom.json')
      writeFileSync(bom, `\uFEFF${text}`)
      expect(parseImportFile(bom, 'auto', {}).format).toBe('gemini')
      const log = path.join(t.dir, 'logs.json')
      writeFileSync(log, JSON.stringify([{ sessionId: 's', messageId: 0, type: 'user', message: 'hi', timestamp: '2026-05-01T10:00:00Z' }]))
      expect(parseImportFile(log, 'auto', {}).error).toBe(
        "Gemini CLI's prompt log (logs.json), not a session: nothing to import (the sessions are in chats/)",
      )
      const empty = path.join(t.dir, 'empty.json')
      writeFileSync(empty, '{}')
      const { engine } = createTestEngine()
      await expect(engine.importPath(empty, { format: 'gemini' })).rejects.toMatchObject({
        code: 'IMPORT_FAILED',
        message: expect.stringContaining('first skipped: not a Gemini CLI session (needs sessionId and a messages array)'),
      })
    } finally {
      t.cleanup()
    }
  })
})
