import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import { invalidInput, MnemoError } from '../../core/errors.js'
import type { MnemoEnv } from '../../config/config.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import { openMnemo, openMnemoOn, type OpenedMnemo } from '../../runtime/open-mnemo.js'
import { parseDatabaseTarget } from '../../runtime/open-database.js'
import type { z } from 'zod'
import type { jobJson } from '../../engine/views.js'
import { createHttpApp, DEFAULT_MAX_BODY_BYTES } from './app.js'
import { DEFAULT_HOST, DEFAULT_PORT } from '../../config/config.js'
import { allowedHostNames } from './host-check.js'
import { ensureServerToken, serverTokenPath } from '../../runtime/server-token.js'

export { readServerToken, serverTokenPath } from '../../runtime/server-token.js'

/**
 * The SQLite page cache of a server's connection, KiB. SQLite's default (16,000 KiB) filled to 12 MiB more resident
 * memory over the serve bench's 1000 recalls at 100k; 4 MiB cost no CPU measurably there (docs/RECALL-LATENCY.md): the
 * file's pages stay in the OS cache, a miss is a read from it.
 */
const SERVER_PAGE_CACHE_KIB = 4096

/** Options of `startServer`. All optional. */
interface StartServerOptions {
  /** Data directory. Default: `MNEMO_HOME`, else `~/.mnemo`. */
  home?: string
  /**
   * The database the data is kept in: a `postgres://user:password@host:5432/db` URL (several replicas may serve one
   * team from it) or an SQLite file path. Default: `MNEMO_DATABASE_URL`, else the data directory's SQLite file. The
   * data directory still holds the tokens, the spool and the error log.
   */
  database?: string
  /** Address to bind. Default `127.0.0.1` (this machine only). */
  host?: string
  /** Port; 0 picks a free one (see `url`). Default 7077. */
  port?: number
  /** Environment read for the configuration. Default `process.env`. */
  env?: MnemoEnv
  /** Largest request body, bytes; bigger ones get 413. Default 1 MiB. */
  maxBodyBytes?: number
  /** How long `close()` waits for in-flight requests before cutting connections, ms. Default 10 000. */
  shutdownGraceMs?: number
  /** Called as each request arrives (observability, tests). */
  onRequest?: (method: string, path: string) => void
  /** Where unexpected failures are reported, one line each. Default: nowhere (they still go to the error log). */
  log?: (line: string) => void
  /**
   * Minutes between background consolidation runs (summaries, lessons, procedures,
   * decay — the slow path, never on a request). 0 turns it off. Default 15
   * (`MNEMO_CONSOLIDATE_MINUTES`).
   */
  consolidateEveryMinutes?: number
  /** How often GET /v1/stream reads the log for new rows, ms. Default 500. */
  streamPollMs?: number
  /** The built viewer's folder. Default `dist/viewer` of this package. */
  viewerDir?: string
  /**
   * More host names the server answers to besides its loopback names and the bound address (a DNS name a team uses);
   * requests whose `Host` or `Origin` names any other get 403 (DNS rebinding). Default none.
   */
  allowedHosts?: readonly string[]
}

/** A listening server. Call `close()` when done. */
export interface RunningServer {
  /** Base URL, `http://127.0.0.1:7077` (the real port when 0 was asked). */
  url: string
  host: string
  port: number
  /** The data directory served. */
  home: string
  /** The database served: the SQLite file's path, or the PostgreSQL URL with its password masked. */
  database: string
  /** The bearer token clients must send, and the file it is kept in. */
  token: string
  tokenPath: string
  /** The viewer's address with the token in its fragment (never sent to the server, never logged): open it in a browser. */
  viewerUrl: string
  /** The engine behind the server (the same store the routes use). */
  engine: MnemoEngine
  /**
   * Stops gracefully: stops accepting connections, lets in-flight requests
   * finish (cutting what is left after `shutdownGraceMs`), then closes the
   * store. Idempotent; resolves when all of that is done.
   */
  close(): Promise<void>
}

/** Waits until `server` listens on `port`/`host`, or rejects with the listen error. */
function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error)
    server.once('error', onError)
    server.listen(port, host, () => {
      server.off('error', onError)
      resolve()
    })
  })
}

/** The error for a port some other process holds. */
function portInUse(host: string, port: number, cause: unknown): MnemoError<'CONFLICT'> {
  // CONFLICT's detail kinds name stored things only; the address goes in `id`, its kind is `address`.
  return new MnemoError('CONFLICT', `port ${port} is already in use (--port or MNEMO_PORT to choose another)`, {
    details: { kind: 'address' as never, id: `${host}:${port}` },
    cause,
  })
}

/**
 * Starts `mnemo serve` in this process: REST under /v1 and MCP (streamable
 * HTTP) at /mcp on one port, on the data directory `home`. Creates the
 * bearer token `<home>/server-token` (mode 0600) on first start, and stores
 * the hook events spooled while no process could write.
 *
 * Servers with different homes and ports run side by side; nothing is
 * shared between them (signals are the caller's business: see `mnemo serve`).
 *
 * @throws {MnemoError} `CONFLICT` — the port is already in use (message: `port 7077 is already in use (--port or MNEMO_PORT to choose another)`).
 * @throws {MnemoError} `INVALID_INPUT` — a host that is not an address of this machine, or a privileged port.
 * @throws {MnemoError} `CONFIG_INVALID` — bad settings, or a server-token file that holds no token.
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the database cannot be opened or reached (a URL named with its password masked).
 * @throws {MnemoError} `INVALID_INPUT` (`database`) / `CONFIG_INVALID` (`MNEMO_DATABASE_URL`) — a URL of an unknown scheme.
 * @example
 * const server = await startServer({ home: '/tmp/mnemo', port: 0 })
 * const res = await fetch(`${server.url}/v1/status`, { headers: { authorization: `Bearer ${server.token}` } })
 * await server.close()
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_HOST
  const port = options.port ?? DEFAULT_PORT
  const graceMs = options.shutdownGraceMs ?? 10_000
  const env = options.env ?? process.env
  const home = options.home ? { home: options.home } : {}
  const fromEnv = env['MNEMO_DATABASE_URL']
  const database =
    options.database !== undefined
      ? parseDatabaseTarget(options.database, '--database', process.cwd())
      : fromEnv !== undefined && fromEnv !== ''
        ? parseDatabaseTarget(fromEnv, 'MNEMO_DATABASE_URL', process.cwd())
        : undefined
  const opened = { env, ...home, pageCacheKib: SERVER_PAGE_CACHE_KIB }
  const mnemo: OpenedMnemo = database ? await openMnemoOn(database, opened) : openMnemo(opened)
  let server: Server
  let token: string
  let consolidation: BackgroundJob | undefined
  // Aborted first on close: long-lived event streams end, so in-flight requests can finish.
  const closing = new AbortController()
  try {
    token = ensureServerToken(mnemo.config.home)
    // Hook events spooled while no process could write, or deferred (the CLI drains on each command too).
    await mnemo.drainSpool()
    consolidation = scheduleConsolidation(mnemo, consolidationMinutes(options), options.log)
    const job = consolidation
    const app = createHttpApp({
      mnemo,
      token,
      jobs: () => [job.status()],
      ...(options.streamPollMs !== undefined ? { streamPollMs: options.streamPollMs } : {}),
      ...(options.viewerDir !== undefined ? { viewerDir: options.viewerDir } : {}),
      allowedHosts: allowedHostNames(host, options.allowedHosts),
      closing: closing.signal,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      startedAt: Date.now(),
      ...(options.onRequest ? { onRequest: options.onRequest } : {}),
      // Before each request: what this machine's hooks deferred since is read too (an empty spool: one directory read).
      beforeRequest: () => mnemo.drainSpool(),
      ...(options.log ? { log: options.log } : {}),
    })
    // overrideGlobalObjects: false — several servers (and MCP clients) share this process's fetch globals.
    server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server
    try {
      await listen(server, port, host)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EADDRINUSE') throw portInUse(host, port, error)
      if (code === 'EACCES') throw invalidInput('port', `port ${port} needs privileges to listen on (EACCES)`, 'use a port above 1023')
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
        throw invalidInput(
          'host',
          `cannot listen on host ${JSON.stringify(host)} (${code})`,
          'use an address of this machine, such as 127.0.0.1',
        )
      }
      throw error
    }
  } catch (error) {
    await consolidation?.stop()
    await mnemo.close()
    throw error
  }
  const job = consolidation
  const address = server.address() as AddressInfo
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  let closed: Promise<void> | undefined
  return {
    url: `http://${urlHost}:${address.port}`,
    host,
    port: address.port,
    home: mnemo.config.home,
    database: mnemo.database,
    token,
    tokenPath: serverTokenPath(mnemo.config.home),
    engine: mnemo.engine,
    viewerUrl: `http://${urlHost}:${address.port}/#token=${encodeURIComponent(token)}`,
    close: () => {
      closing.abort()
      closed ??= job.stop().then(() => shutDown(server, mnemo, graceMs))
      return closed
    },
  }
}

function consolidationMinutes(options: StartServerOptions): number {
  if (options.consolidateEveryMinutes !== undefined) return options.consolidateEveryMinutes
  const text = (options.env ?? process.env)['MNEMO_CONSOLIDATE_MINUTES']
  const n = text === undefined || text === '' ? 15 : Number(text)
  if (!Number.isFinite(n) || n < 0)
    throw invalidInput(
      'MNEMO_CONSOLIDATE_MINUTES',
      `MNEMO_CONSOLIDATE_MINUTES must be a number of minutes >= 0 (got ${JSON.stringify(text)})`,
    )
  return n
}

/** A scheduled background job of the server. */
interface BackgroundJob {
  /** What /v1/status reports about it. */
  status(): z.output<typeof jobJson>
  /** Stops the schedule; resolves when a run in progress has finished. */
  stop(): Promise<void>
}

/**
 * Runs `consolidate` every `minutes` in the background (one run at a time;
 * failures go to the error log and to the job's `lastError`). `minutes` 0
 * turns the schedule off (the job still reports itself, never running).
 * Replicas of a team server on one database each keep this schedule, and
 * the run happens once per interval across them (`consolidateTurn`: the
 * first to fire in an interval runs it, the others skip it and log so).
 */
export function scheduleConsolidation(mnemo: OpenedMnemo, minutes: number, log: ((line: string) => void) | undefined): BackgroundJob {
  const intervalMs = minutes * 60_000
  let running: Promise<void> | undefined
  let lastRunAt: number | undefined
  let nextRunAt: number | undefined = minutes > 0 ? Date.now() + intervalMs : undefined
  let lastResult: string | null = null
  let lastError: string | null = null
  const timer =
    minutes > 0
      ? setInterval(() => {
          nextRunAt = Date.now() + intervalMs
          if (running) return
          const startedAt = Date.now()
          running = mnemo.engine
            .consolidateTurn(Math.floor(startedAt / intervalMs))
            .then((r) => {
              lastError = null
              if (r === undefined) {
                log?.('consolidation skipped: another process on this database has run it in this interval')
                return
              }
              lastRunAt = startedAt
              lastResult = `${r.summaries} summaries, ${r.lessons} lessons, ${r.procedures} procedures, ${r.archived} archived`
              log?.(`consolidated: ${lastResult}`)
            })
            .catch((error: unknown) => {
              const message = error instanceof Error ? error.message : String(error)
              lastRunAt = startedAt
              lastError = message
              mnemo.errors.append({
                at: new Date().toISOString(),
                where: 'serve consolidate',
                code: MnemoError.is(error) ? error.code : 'INTERNAL',
                message,
              })
            })
            .finally(() => {
              running = undefined
            })
        }, intervalMs)
      : undefined
  timer?.unref()
  const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString())
  return {
    status: () => ({
      name: 'consolidate',
      everyMinutes: minutes,
      running: running !== undefined,
      lastRunAt: iso(lastRunAt),
      nextRunAt: iso(nextRunAt),
      lastResult,
      lastError,
    }),
    stop: async () => {
      if (timer) clearInterval(timer)
      nextRunAt = undefined
      await running
    },
  }
}

/** Stops accepting, lets in-flight requests finish, then closes the store. */
async function shutDown(server: Server, mnemo: OpenedMnemo, graceMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve())
    // Keep-alive connections become idle as their last response goes out; close them then.
    const sweep = setInterval(() => server.closeIdleConnections(), 25)
    const deadline = setTimeout(() => server.closeAllConnections(), graceMs)
    sweep.unref()
    deadline.unref()
    server.once('close', () => {
      clearInterval(sweep)
      clearTimeout(deadline)
    })
    server.closeIdleConnections()
  })
  await mnemo.close()
}
