import { MnemoError } from '../../core/errors.js'
import { capSplit, isLowSurrogate, joinCut } from '../../core/text.js'
import { PRE_REDACTION_CHARS } from '../../engine/capture-rules.js'

/** Longest wait for the agent to close a hook's stdin, ms. */
export const STDIN_TIMEOUT_MS = 1000
/**
 * Largest hook payload kept as it is, bytes (64 MiB). A larger one is still read: its strings longer than
 * `PRE_REDACTION_CHARS` are cut (head and tail kept, as the store cuts them) and the event stored, the cut logged;
 * only when that still leaves more than this is what was read kept in spool/bad/ and the failure logged.
 */
export const MAX_HOOK_STDIN_BYTES = 64 * 1024 * 1024

/** What `readStdin` read. */
export interface StdinRead {
  /** The text: the input as it came, or, past `maxBytes`, the input with its long strings cut (see `readStdin`). */
  text: string
  /** Bytes that arrived on the stream, all of them (also when `text` holds fewer). */
  bytes: number
  /** Strings cut because the input was larger than `maxBytes`; 0 when it was not. */
  cutStrings: number
}

/** Options of `readStdin`. */
interface ReadStdinOptions {
  /** Longest wait for the writer to close the stream, ms. */
  timeoutMs: number
  /** Largest input kept as it is, bytes. */
  maxBytes: number
  /** Past `maxBytes`, each JSON string longer than this many UTF-16 units is cut to it. Default: `PRE_REDACTION_CHARS` (1 000 000). */
  fieldChars?: number
}

/**
 * Reads a stream to its end as UTF-8. An input over `maxBytes` is not given
 * up: it is read on, and every JSON string in it longer than `fieldChars` is
 * cut on the way the store's `capText` cuts (first 75% and last 25% kept,
 * a marker with the original length between), so an agent's oversized tool
 * output costs its middle, not the event. Only when even that leaves more
 * than `maxBytes` (many long strings) does it give up.
 *
 * @param onPartial - Receives what arrived (or its cut form, at most `maxBytes`) when reading gives up, so the caller can keep it.
 * @returns The text and the size that arrived; `cutStrings` > 0 when strings were cut.
 * @throws {MnemoError} `INVALID_INPUT` — the stream was not closed within `timeoutMs`, or the input stays over `maxBytes` after cutting.
 */
export function readStdin(
  stream: NodeJS.ReadableStream,
  options: ReadStdinOptions,
  onPartial: (partial: string) => void,
): Promise<StdinRead> {
  const { timeoutMs, maxBytes } = options
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = []
    let size = 0
    let capper: JsonStringCapper | undefined
    let settled = false
    const text = (): string => (capper ? capper.text() : Buffer.concat(chunks).toString('utf8'))
    const done = (error?: Error): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      stream.removeAllListeners('data')
      stream.removeAllListeners('end')
      stream.removeAllListeners('error')
      if (error) {
        reject(error)
        return
      }
      const read = text()
      if (capper && Buffer.byteLength(read) > maxBytes) {
        onPartial(Buffer.from(read).subarray(0, maxBytes).toString('utf8'))
        reject(
          new MnemoError(
            'INVALID_INPUT',
            `hook stdin is ${size} bytes, over the ${maxBytes}-byte cap, even with every string cut to ${capper.fieldChars} characters`,
            { details: { path: 'stdin' } },
          ),
        )
        return
      }
      resolve({ text: read, bytes: size, cutStrings: capper?.cutStrings ?? 0 })
    }
    const timer = setTimeout(() => {
      // On a loaded machine this timer can fire before the poll phase has read a payload
      // that is already in the pipe: let one poll phase run (setImmediate comes after it),
      // then accept a complete JSON document even if the end of the stream is still unread.
      setImmediate(() => {
        if (settled) return
        const sofar = text()
        try {
          JSON.parse(sofar)
          done()
          return
        } catch {
          // not complete
        }
        onPartial(Buffer.byteLength(sofar) > maxBytes ? Buffer.from(sofar).subarray(0, maxBytes).toString('utf8') : sofar)
        done(
          new MnemoError('INVALID_INPUT', `stdin was not closed within ${timeoutMs} ms (${size} bytes read)`, {
            details: { path: 'stdin' },
          }),
        )
      })
    }, timeoutMs)
    stream.on('data', (chunk: Buffer | string) => {
      if (settled) return
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      size += buf.length
      try {
        if (capper) {
          capper.write(buf)
          return
        }
        chunks.push(buf)
        if (size > maxBytes) {
          // Too large to keep whole: from here on, long strings keep their head and tail only.
          capper = new JsonStringCapper(options.fieldChars ?? PRE_REDACTION_CHARS)
          for (const c of chunks) capper.write(c)
          chunks = []
        }
      } catch (error) {
        onPartial(text())
        done(error instanceof Error ? error : new Error(String(error)))
      }
    })
    stream.on('end', () => done())
    stream.on('error', (e: Error) => done(e))
  })
}

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * A streaming rewriter of JSON text that cuts every string longer than
 * `fieldChars` UTF-16 units to `capText(string, fieldChars)`, keeping all
 * else byte for byte. It finds strings by their quotes only (no full parse):
 * text that is not JSON comes out as not JSON. Memory: the output plus
 * `fieldChars` units per string being read.
 */
export class JsonStringCapper {
  /** Strings cut so far. */
  cutStrings = 0
  private readonly out: Buffer[] = []
  private inString = false
  /** Backslashes that ended the last input while in a string (their parity says whether the next byte is escaped). */
  private backslashes = 0
  /** The current string's raw bytes while it may still be kept as it is. */
  private raw: Buffer[] = []
  private rawBytes = 0
  /** The current string once it is being cut: decoded head, decoded tail pieces, total length. */
  private long: { head: string; tail: string[]; tailChars: number; total: number; carry: Buffer } | undefined

  constructor(readonly fieldChars: number) {}

  write(buf: Buffer): void {
    let i = 0
    while (i < buf.length) {
      if (!this.inString) {
        const q = buf.indexOf(QUOTE, i)
        if (q < 0) {
          this.out.push(buf.subarray(i))
          return
        }
        this.out.push(buf.subarray(i, q + 1))
        this.inString = true
        this.backslashes = 0
        i = q + 1
        continue
      }
      const end = this.closingQuote(buf, i)
      if (end < 0) {
        this.stringBytes(buf.subarray(i))
        const run = trailingBackslashes(buf, i, buf.length)
        this.backslashes = run === buf.length - i ? this.backslashes + run : run
        return
      }
      this.stringBytes(buf.subarray(i, end))
      this.closeString()
      this.out.push(buf.subarray(end, end + 1))
      this.inString = false
      i = end + 1
    }
  }

  /** The text written so far, its strings cut; a string still open is given as read so far. */
  text(): string {
    const open = this.inString ? (this.long ? [Buffer.from(JSON.stringify(this.cut()).slice(1, -1))] : this.raw) : []
    return Buffer.concat([...this.out, ...open]).toString('utf8')
  }

  /** Index of the quote that ends the current string in `buf` from `from`, or -1. */
  private closingQuote(buf: Buffer, from: number): number {
    let at = from
    for (;;) {
      const q = buf.indexOf(QUOTE, at)
      if (q < 0) return -1
      const run = trailingBackslashes(buf, from, q)
      const escapes = run === q - from ? run + this.backslashes : run
      if (escapes % 2 === 0) return q
      at = q + 1
    }
  }

  private stringBytes(piece: Buffer): void {
    if (piece.length === 0) return
    if (this.long) {
      this.decode(piece)
      return
    }
    this.raw.push(piece)
    this.rawBytes += piece.length
    // A string of at most fieldChars bytes has at most fieldChars units: kept as it is.
    if (this.rawBytes > this.fieldChars) {
      const all = Buffer.concat(this.raw)
      this.raw = []
      this.rawBytes = 0
      this.long = { head: '', tail: [], tailChars: 0, total: 0, carry: Buffer.alloc(0) }
      this.decode(all)
    }
  }

  /** Decodes the next raw bytes of a long string, up to the last point that does not split a character or an escape. */
  private decode(piece: Buffer): void {
    const long = this.long!
    const data = long.carry.length > 0 ? Buffer.concat([long.carry, piece]) : piece
    const safe = safeEnd(data)
    long.carry = Buffer.from(data.subarray(safe))
    if (safe === 0) return
    let decoded: string
    try {
      decoded = JSON.parse(`"${data.toString('utf8', 0, safe)}"`) as string
    } catch (cause) {
      throw new MnemoError('INVALID_INPUT', 'hook stdin is not valid JSON (a bad character or escape inside a string)', {
        details: { path: 'stdin' },
        cause,
      })
    }
    long.total += decoded.length
    if (long.head.length < this.fieldChars) long.head += decoded.slice(0, this.fieldChars - long.head.length)
    long.tail.push(decoded)
    long.tailChars += decoded.length
    const { tailLen } = capSplit(this.fieldChars)
    while (long.tail.length > 1 && long.tailChars - long.tail[0]!.length >= tailLen) long.tailChars -= long.tail.shift()!.length
  }

  private closeString(): void {
    if (this.long) {
      if (this.long.carry.length > 0) {
        const carry = this.long.carry
        this.long.carry = Buffer.alloc(0)
        this.decode(carry)
        if (this.long.carry.length > 0)
          throw new MnemoError('INVALID_INPUT', 'hook stdin is not valid JSON (a string ends inside an escape)', {
            details: { path: 'stdin' },
          })
      }
      const value = this.cut()
      if (this.long.total > this.fieldChars) this.cutStrings++
      this.out.push(Buffer.from(JSON.stringify(value).slice(1, -1)))
      this.long = undefined
      return
    }
    this.out.push(...this.raw)
    this.raw = []
    this.rawBytes = 0
  }

  /** The current long string as `capText(string, fieldChars)` would give it. */
  private cut(): string {
    const long = this.long!
    if (long.total <= this.fieldChars) return long.head
    const { headLen, tailLen } = capSplit(this.fieldChars)
    // As capText's safeSlice: never split a surrogate pair at either cut.
    const head = long.head.slice(0, isLowSurrogate(long.head.charCodeAt(headLen)) ? headLen - 1 : headLen)
    const joined = long.tail.join('')
    let tail = joined.slice(joined.length - tailLen)
    if (isLowSurrogate(tail.charCodeAt(0))) tail = tail.slice(1)
    // capText's marker, so the store reads the field as one it cut itself.
    return joinCut(head, tail, long.total)
  }
}

/** How many backslashes end `buf[from..to)`. */
function trailingBackslashes(buf: Buffer, from: number, to: number): number {
  let k = to - 1
  while (k >= from && buf[k] === BACKSLASH) k--
  return to - 1 - k
}

/**
 * The largest prefix of a string's raw bytes (starting at a character
 * boundary) that ends neither inside a UTF-8 sequence nor inside an escape.
 */
function safeEnd(data: Buffer): number {
  let end = data.length
  // An unfinished UTF-8 sequence: a lead byte among the last three with too few continuation bytes after it.
  let k = end - 1
  while (k >= 0 && k >= end - 4 && (data[k]! & 0xc0) === 0x80) k--
  if (k >= 0 && data[k]! >= 0xc0) {
    const need = data[k]! >= 0xf0 ? 4 : data[k]! >= 0xe0 ? 3 : 2
    if (end - k < need) end = k
  }
  // A backslash that starts an escape whose rest has not come yet.
  if (trailingBackslashes(data, 0, end) % 2 === 1) return end - 1
  for (let p = Math.max(0, end - 5); p <= end - 2; p++) {
    if (data[p] === BACKSLASH && data[p + 1] === 0x75 && trailingBackslashes(data, 0, p + 1) % 2 === 1) return p
  }
  return end
}
