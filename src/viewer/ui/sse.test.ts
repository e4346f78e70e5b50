import { describe, expect, it } from 'vitest'
import { backoffMs, SseParser, type SseEvent } from './sse.js'

function parse(chunks: string[]): { events: SseEvent[]; parser: SseParser } {
  const events: SseEvent[] = []
  const parser = new SseParser((e) => events.push(e))
  for (const c of chunks) parser.push(c)
  return { events, parser }
}

describe('SseParser', () => {
  it('dispatches an event with its id, type and data at a blank line', () => {
    const { events, parser } = parse(['id: 7\nevent: observation\ndata: {"id":"obs_1"}\n\n'])
    expect(events).toEqual([{ id: '7', event: 'observation', data: '{"id":"obs_1"}' }])
    expect(parser.lastEventId).toBe('7')
  })

  it('joins data lines with newlines and defaults the type to message', () => {
    const { events } = parse(['data: a\ndata: b\n\n'])
    expect(events).toEqual([{ id: '', event: 'message', data: 'a\nb' }])
  })

  it('ignores comment lines (heartbeats) and blank lines without data', () => {
    const { events, parser } = parse([': ping\n\n', ':\n\n'])
    expect(events).toEqual([])
    expect(parser.lines).toBe(4)
  })

  it('reassembles lines split across chunks, at any byte', () => {
    const text = 'id: 12\nevent: observation\ndata: {"text":"héllo"}\n\nid: 13\nevent: ready\ndata: {}\n\n'
    for (let cut = 1; cut < text.length; cut++) {
      const { events } = parse([text.slice(0, cut), text.slice(cut)])
      expect(events.map((e) => [e.id, e.event, e.data])).toEqual([
        ['12', 'observation', '{"text":"héllo"}'],
        ['13', 'ready', '{}'],
      ])
    }
  })

  it('accepts CRLF and CR line ends, including a CRLF split between chunks', () => {
    expect(parse(['data: x\r\n\r\n']).events.map((e) => e.data)).toEqual(['x'])
    expect(parse(['data: y\r\r']).events.map((e) => e.data)).toEqual(['y'])
    expect(parse(['data: z\r', '\n\r', '\n']).events.map((e) => e.data)).toEqual(['z'])
  })

  it('keeps the last id across events and ignores an id with NUL', () => {
    const { events } = parse(['id: 5\ndata: a\n\ndata: b\n\nid: 6\u0000\ndata: c\n\n'])
    expect(events.map((e) => e.id)).toEqual(['5', '5', '5'])
  })

  it('reads a field without a colon as an empty value and strips only one leading space', () => {
    const { events } = parse(['data\ndata:  two\n\n'])
    expect(events[0]?.data).toBe('\n two')
  })

  it('does not dispatch an event that the stream cut off before its blank line', () => {
    expect(parse(['data: partial\n']).events).toEqual([])
  })
})

describe('backoffMs', () => {
  it('doubles from 1 s and stops at 30 s, within ±20%', () => {
    expect(backoffMs(0, () => 0.5)).toBe(1000)
    expect(backoffMs(1, () => 0.5)).toBe(2000)
    expect(backoffMs(4, () => 0.5)).toBe(16000)
    expect(backoffMs(5, () => 0.5)).toBe(30000)
    expect(backoffMs(50, () => 0.5)).toBe(30000)
    expect(backoffMs(0, () => 0)).toBe(800)
    expect(backoffMs(0, () => 1)).toBe(1200)
  })
})
