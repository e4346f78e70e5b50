import type { ParsedJson } from './json.js'

/** One server-sent event as the stream framed it: its `event:` name, its `id:` (if any) and its `data:` parsed as JSON. */
export interface ServerSentEvent {
  event: string
  id: string | undefined
  data: ParsedJson
}

/**
 * Reads server-sent events from `res` until `until` says stop or the stream ends, then cancels the reader.
 * Frames without an `event:` line are skipped; multi-line `data:` is joined with newlines before parsing.
 */
export async function readEvents(res: Response, until: (events: ServerSentEvent[]) => boolean): Promise<ServerSentEvent[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  const events: ServerSentEvent[] = []
  let buffer = ''
  try {
    while (!until(events)) {
      const { done, value } = await reader.read()
      if (done) break
      buffer += value
      for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
        const lines = buffer.slice(0, cut).split('\n')
        buffer = buffer.slice(cut + 2)
        const event = lines.find((l) => l.startsWith('event: '))?.slice(7)
        if (!event) continue
        const data = lines
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n')
        events.push({ event, id: lines.find((l) => l.startsWith('id: '))?.slice(4), data: JSON.parse(data) })
      }
    }
  } finally {
    await reader.cancel()
  }
  return events
}
