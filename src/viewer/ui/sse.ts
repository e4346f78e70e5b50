/**
 * Server-sent events over fetch(): EventSource cannot send the Authorization
 * header, so the viewer reads `text/event-stream` itself.
 */
import { authHeaders, errorFromResponse, isAbort, reportUnauthorized } from './api.js'

/** One dispatched event. `id` is the last id seen on the stream (carried over, as EventSource does). */
export interface SseEvent {
  id: string
  event: string
  data: string
}

/**
 * A line parser for the event-stream format (WHATWG HTML §9.2.6): `field: value`
 * lines, a blank line dispatches, `:` lines are comments (heartbeats), `data`
 * lines join with `\n`; CRLF, LF and CR all end a line, even split across chunks.
 */
export class SseParser {
  private buffer = ''
  private pendingCr = false
  private data: string[] = []
  private eventType = ''
  private lastId = ''
  /** Lines read, comments included (heartbeats keep this moving). */
  lines = 0

  constructor(private readonly onEvent: (e: SseEvent) => void) {}

  /** The id to send as `Last-Event-ID` when reconnecting ('' when none was seen). */
  get lastEventId(): string {
    return this.lastId
  }

  /** Feeds decoded text; dispatches every event completed by it. */
  push(chunk: string): void {
    let text = chunk
    if (this.pendingCr) {
      // A CR ended the previous chunk: a LF starting this one belongs to it.
      if (text.startsWith('\n')) text = text.slice(1)
      this.pendingCr = false
    }
    this.buffer += text
    let start = 0
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i)
      if (c !== 10 && c !== 13) continue
      this.line(this.buffer.slice(start, i))
      if (c === 13) {
        if (i + 1 === this.buffer.length) this.pendingCr = true
        else if (this.buffer.charCodeAt(i + 1) === 10) i++
      }
      start = i + 1
    }
    this.buffer = this.buffer.slice(start)
  }

  private line(line: string): void {
    this.lines++
    if (line === '') {
      this.dispatch()
      return
    }
    if (line.startsWith(':')) return
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    switch (field) {
      case 'data':
        this.data.push(value)
        break
      case 'event':
        this.eventType = value
        break
      case 'id':
        if (!value.includes('\0')) this.lastId = value
        break
      default:
        // retry and unknown fields: ignored (the viewer keeps its own back-off).
        break
    }
  }

  private dispatch(): void {
    if (this.data.length === 0) {
      this.eventType = ''
      return
    }
    const e: SseEvent = { id: this.lastId, event: this.eventType === '' ? 'message' : this.eventType, data: this.data.join('\n') }
    this.data = []
    this.eventType = ''
    this.onEvent(e)
  }
}

/** Delay before reconnect attempt `attempt` (0-based): 1 s doubling to 30 s, with ±20% jitter. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5))
  return Math.round(base * (0.8 + 0.4 * random()))
}

export type StreamState = 'connecting' | 'open' | 'retrying' | 'closed'

interface StreamOptions {
  url: string
  onEvent: (e: SseEvent) => void
  /** Called on each change: connecting, open, retrying (with the wait and the failure), closed (the token was refused). */
  onState?: (state: StreamState, detail?: { waitMs?: number; error?: string }) => void
}

/**
 * Follows an event stream until `stop()` is called: connects with the token,
 * reconnects after a drop with `Last-Event-ID` and an exponential back-off
 * (reset once a connection delivers anything). A 401 stops it for good and
 * reports the token as refused.
 * @returns stop: closes the connection and cancels any pending reconnect.
 */
export function followStream(options: StreamOptions): () => void {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let attempt = 0
  let lastId = ''
  let stopped = false

  const retry = (error: string): void => {
    if (stopped) return
    const waitMs = backoffMs(attempt++)
    options.onState?.('retrying', { waitMs, error })
    timer = setTimeout(() => void connect(), waitMs)
  }

  const connect = async (): Promise<void> => {
    if (stopped) return
    options.onState?.('connecting')
    let res: Response
    try {
      res = await fetch(options.url, {
        headers: authHeaders({ Accept: 'text/event-stream', ...(lastId === '' ? {} : { 'Last-Event-ID': lastId }) }),
        signal: controller.signal,
        cache: 'no-store',
      })
    } catch (error) {
      if (!isAbort(error)) retry('cannot reach the server')
      return
    }
    if (res.status === 401) {
      stopped = true
      options.onState?.('closed')
      reportUnauthorized()
      return
    }
    if (!res.ok || res.body === null) {
      const err = await errorFromResponse(res)
      retry(err.message)
      return
    }
    options.onState?.('open')
    const parser = new SseParser((e) => {
      lastId = e.id
      attempt = 0
      options.onEvent(e)
    })
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        parser.push(value)
        if (parser.lines > 0) attempt = 0
      }
    } catch (error) {
      if (isAbort(error) || stopped) return
    }
    if (parser.lastEventId !== '') lastId = parser.lastEventId
    retry('the stream ended')
  }

  void connect()
  return () => {
    stopped = true
    if (timer !== undefined) clearTimeout(timer)
    controller.abort()
  }
}
