import type { Context } from 'hono'
import { streamSSE } from 'hono/streaming'
import type { z } from 'zod'
import { describeValue, invalidInput } from '../../core/errors.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import { toListedObservationJson } from '../../engine/views.js'
import { requireKnownProject } from '../../engine/projects.js'
import type { streamQuery } from './rest-routes.js'

/** Options of `streamObservations`. */
interface StreamOptions {
  engine: MnemoEngine
  /** How often the log is read for new rows, ms. */
  pollMs: number
  /** How long a quiet stream waits before a `: ping` comment (keeps proxies from closing it), ms. */
  heartbeatMs: number
  /** Aborted when the server shuts down: every open stream ends. */
  closing: AbortSignal
  /** Asked before every poll: false (a revoked token) ends the stream. Default: always true. */
  authorized?: () => boolean
  /** Waits `ms` or until the stream or server ends (injectable for tests). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
}

/** Most rows read per poll; a burst bigger than this is sent over several polls. */
const PAGE = 200

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done)
  })
}

/**
 * `GET /v1/stream`: new observations of a project as server-sent events,
 * as they are captured — by this server, by hooks writing the same file
 * from other processes, or by imports. Each is `event: observation`, `id:
 * <event sequence number>`, `data: <observation JSON with agent and seq>`.
 * The log is polled every `pollMs` (hooks write without the server, so
 * there is nothing to subscribe to). A client that reconnects with
 * `Last-Event-ID` gets what it missed; a new one (or one whose id is ahead
 * of the log) starts at the newest event. A stream whose token is revoked
 * ends before its next poll (an `unauthorized` event, then the end).
 *
 * @throws {MnemoError} `INVALID_INPUT` — no project, or a bad `Last-Event-ID`.
 */
export async function streamObservations(c: Context, query: z.output<typeof streamQuery>, options: StreamOptions): Promise<Response> {
  const { engine } = options
  const projects = await engine.resolveProjects(await requireKnownProject(engine, query.project, 'add ?project=<name> to the URL'))
  const byId = new Map(projects.map((p) => [p.id as string, p]))
  const resume = c.req.header('last-event-id')
  if (resume !== undefined && !/^\d{1,15}$/.test(resume.trim())) {
    throw invalidInput('Last-Event-ID', `Last-Event-ID must be an event sequence number (got ${describeValue(resume)})`)
  }
  const sleep = options.sleep ?? defaultSleep
  return streamSSE(c, async (stream) => {
    const ended = new AbortController()
    stream.onAbort(() => ended.abort())
    const stop = (): void => ended.abort()
    options.closing.addEventListener('abort', stop)
    try {
      // A Last-Event-ID ahead of the log (another store's, or a store rebuilt from an export) would wait forever: start at the head.
      const head = await engine.lastEventSeq()
      let cursor = resume !== undefined ? Math.min(Number(resume), head) : head
      let quietSince = Date.now()
      // Tell the client where it starts, so a reconnect resumes from here even if nothing arrives.
      await stream.writeSSE({ event: 'ready', id: String(cursor), data: JSON.stringify({ seq: cursor }) })
      while (!ended.signal.aborted) {
        if (options.authorized && !options.authorized()) {
          await stream.writeSSE({ event: 'unauthorized', data: JSON.stringify({ error: 'the token of this stream was revoked' }) })
          break
        }
        // Read the head first: rows up to it are committed, so once this page is short the cursor may skip to it
        // (filtered-out events are then not scanned again on the next poll).
        const head = await engine.lastEventSeq()
        const rows = await engine.browseObservations({
          projectIds: projects.map((p) => p.id),
          order: 'asc',
          afterSeq: cursor,
          limit: PAGE,
          ...(query.kind ? { kinds: query.kind } : {}),
          ...(query.agent ? { agent: query.agent } : {}),
        })
        for (const row of rows) {
          await stream.writeSSE({
            event: 'observation',
            id: String(row.eventSeq),
            data: JSON.stringify(toListedObservationJson(row, byId.get(row.projectId))),
          })
          cursor = row.eventSeq
        }
        if (rows.length === PAGE) continue
        cursor = Math.max(cursor, head)
        if (rows.length > 0) quietSince = Date.now()
        else if (Date.now() - quietSince >= options.heartbeatMs) {
          await stream.write(': ping\n\n')
          quietSince = Date.now()
        }
        await sleep(options.pollMs, ended.signal)
      }
    } finally {
      options.closing.removeEventListener('abort', stop)
    }
  })
}
