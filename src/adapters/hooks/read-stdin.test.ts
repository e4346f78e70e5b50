import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { capText } from '../../core/text.js'
import { JsonStringCapper, readStdin } from './read-stdin.js'

/** Feeds `text` to a fresh stream in `chunkBytes`-byte pieces (so cuts fall inside characters and escapes) and reads it. */
async function read(text: string, chunkBytes: number, maxBytes: number, fieldChars: number) {
  const stream = new PassThrough()
  let partial: string | undefined
  const result = readStdin(stream, { timeoutMs: 60_000, maxBytes, fieldChars }, (p) => (partial = p))
  const bytes = Buffer.from(text)
  for (let i = 0; i < bytes.length; i += chunkBytes) stream.write(bytes.subarray(i, i + chunkBytes))
  stream.end()
  try {
    return { read: await result, partial }
  } catch (error) {
    return { error, partial }
  }
}

/** Every string in `value` as `capText(s, fieldChars)`. */
function capped(value: unknown, fieldChars: number): unknown {
  if (typeof value === 'string') return capText(value, fieldChars)
  if (Array.isArray(value)) return value.map((v) => capped(v, fieldChars))
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [capped(k, fieldChars), capped(v, fieldChars)]))
  return value
}

describe('readStdin', () => {
  const long = `é "quoted" \\ back\\slash \n ${'😀'.repeat(40)} tab\t ${'x'.repeat(300)} \u0001 end ${'界'.repeat(50)}`
  const payload = {
    session_id: 's',
    cwd: '/tmp',
    tool_input: { command: 'make "deploy"' },
    tool_response: { stdout: long, stderr: 'short', lines: [long, 'ok', 7, null, true] },
    after: 'kept',
  }
  // Shifted by one unit, so the cut falls on the other half of a surrogate pair.
  const shifted = { ...payload, tool_response: { ...payload.tool_response, stdout: `a${long}` } }
  /** As JSON, and with \u escapes as some agents write it, and indented. */
  const forms = (value: unknown): string[] => [
    JSON.stringify(value),
    JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    JSON.stringify(value, null, 2),
  ]

  it('returns an input under the cap byte for byte', async () => {
    const text = JSON.stringify(payload)
    const r = await read(text, 5, 1 << 20, 100)
    expect(r.read).toEqual({ text, bytes: Buffer.byteLength(text), cutStrings: 0 })
  })

  it('past the cap, cuts each long string exactly as capText does and keeps every other field, wherever the chunks split it', async () => {
    for (const value of [payload, shifted]) {
      for (const text of forms(value)) {
        for (const chunkBytes of [1, 2, 3, 5, 7, 64, 4096]) {
          const r = await read(text, chunkBytes, 1000, 100)
          expect(r.error, `chunks of ${chunkBytes}`).toBeUndefined()
          expect(r.read, `chunks of ${chunkBytes}`).toMatchObject({ bytes: Buffer.byteLength(text), cutStrings: 2 })
          expect(JSON.parse(r.read!.text), `chunks of ${chunkBytes}`).toEqual(capped(value, 100))
        }
      }
    }
  })

  it('gives up only when the cut input is still over the cap, handing on a copy no larger than the cap', async () => {
    const many = JSON.stringify({ session_id: 's', items: Array.from({ length: 50 }, (_, i) => `${i}`.repeat(90)) })
    const r = await read(many, 1000, 1000, 100)
    expect(r.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: `hook stdin is ${Buffer.byteLength(many)} bytes, over the 1000-byte cap, even with every string cut to 100 characters`,
    })
    expect(Buffer.byteLength(r.partial!)).toBeLessThanOrEqual(1000)
    expect(many.startsWith(r.partial!)).toBe(true)
  })

  it('leaves text that is not JSON to fail as not JSON', async () => {
    const r = await read(`not json ${'y'.repeat(500)}`, 64, 100, 100)
    expect(() => JSON.parse(r.read!.text)).toThrow()
  })
})

describe('JsonStringCapper', () => {
  it('gives a string still open as read so far', () => {
    const c = new JsonStringCapper(100)
    c.write(Buffer.from(`{"a":"b","c":"${'z'.repeat(150)}`))
    expect(c.text().startsWith('{"a":"b","c":"zzz')).toBe(true)
  })
})
