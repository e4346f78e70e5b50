import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { detectTranscriptFormat, readJsonLines, timeline } from './transcript-format.js'

const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const fixtures = path.join(repoRoot, 'fixtures/transcripts')
const realDir = path.join(repoRoot, '../shared/datasets/transcripts')

describe('detectTranscriptFormat', () => {
  it('recognises the fixtures', () => {
    expect(detectTranscriptFormat(readFileSync(path.join(fixtures, 'claude-code/mixed-session.jsonl'), 'utf8'))).toBe('claude-code')
    expect(detectTranscriptFormat(readFileSync(path.join(fixtures, 'codex/rollout-mixed.jsonl'), 'utf8'))).toBe('codex')
  })

  it('skips broken and non-object lines while sniffing', () => {
    const codex = ['{broken', '[1,2]', '', '{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}'].join('\n')
    expect(detectTranscriptFormat(codex)).toBe('codex')
    const claude = [
      '"str"',
      '{"type":"summary","summary":"s","leafUuid":"u"}',
      '{"type":"user","sessionId":"s","message":{"content":"hi"}}',
    ].join('\r\n')
    expect(detectTranscriptFormat(claude)).toBe('claude-code')
  })

  it('returns undefined for empty, foreign or undecided text', () => {
    expect(detectTranscriptFormat('')).toBeUndefined()
    expect(detectTranscriptFormat('hello\nworld')).toBeUndefined()
    expect(detectTranscriptFormat('{"a":1}\n{"b":2}')).toBeUndefined()
    // a Codex record type without an object payload, and no Claude fields: neither
    expect(detectTranscriptFormat('{"type":"event_msg","payload":"x"}')).toBeUndefined()
  })

  it('reads only the first 20 parseable lines', () => {
    const claude = Array.from({ length: 20 }, (_, i) => `{"type":"user","sessionId":"s","uuid":"${i}","message":{"content":"x"}}`)
    const codex = Array.from({ length: 50 }, () => '{"type":"event_msg","payload":{"type":"token_count"}}')
    expect(detectTranscriptFormat([...claude, ...codex].join('\n'))).toBe('claude-code')
  })

  describe.skipIf(!existsSync(realDir))('on the real files (reads ../shared/datasets/transcripts)', () => {
    it('names each folder by its format', () => {
      for (const [folder, format] of [
        ['claude-code', 'claude-code'],
        ['codex', 'codex'],
      ] as const) {
        for (const name of readdirSync(path.join(realDir, folder)).filter((f) => f.endsWith('.jsonl'))) {
          expect(detectTranscriptFormat(readFileSync(path.join(realDir, folder, name), 'utf8')), name).toBe(format)
        }
      }
    })
  })
})

describe('readJsonLines and timeline', () => {
  it('numbers lines from 1, skips blanks, strips a BOM and CRLF, and tells a truncated last line apart', () => {
    const text = '\uFEFF{"type":"a"}\r\n\r\n  \n{"type":"b"\n{}\nnull\n{"type":""}\n{"type":"c","x":'
    expect(readJsonLines(text).map((l) => ('error' in l ? [l.line, l.error] : [l.line, l.type]))).toEqual([
      [1, 'a'],
      [4, 'invalid JSON'],
      [5, 'missing "type"'],
      [6, 'not a JSON object'],
      [7, 'missing "type"'],
      [8, 'invalid JSON (truncated last line)'],
    ])
    expect(readJsonLines('{"type":"a"\n').map((l) => ('error' in l ? l.error : l.type))).toEqual(['invalid JSON'])
  })

  it('fills missing times from the previous one, then the first one, then 0', () => {
    expect(timeline([undefined, 5, undefined, 9, undefined])).toEqual([5, 5, 5, 9, 9])
    expect(timeline([undefined, undefined])).toEqual([0, 0])
  })
})
