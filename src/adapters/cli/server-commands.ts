import { invalidInput, MnemoError } from '../../core/errors.js'
import type { CliIo, GlobalOptions } from './program.js'
import { printJson, type Out } from './output.js'
import { parseIntOption } from './cli-kit.js'

// CLI commands of a team server: serve, viewer, and its per-user tokens (user add/remove/list).

/** The port of `mnemo serve`: `--port`, else `MNEMO_PORT`, else 7077. @throws {MnemoError} `INVALID_INPUT` (bad --port), `CONFIG_INVALID` (bad MNEMO_PORT). */
async function servePort(io: CliIo, option: string | undefined): Promise<number> {
  const { DEFAULT_PORT } = await import('../../config/config.js')
  const port = parseIntOption('port', option, 0, 65_535)
  if (port !== undefined) return port
  const envPort = io.env['MNEMO_PORT']
  if (envPort === undefined || envPort === '') return DEFAULT_PORT
  const n = Number(envPort)
  if (!/^\s*\d+\s*$/.test(envPort) || n > 65_535) {
    throw new MnemoError('CONFIG_INVALID', `MNEMO_PORT must be an integer 0–65535 (got ${JSON.stringify(envPort)})`, {
      details: { keys: ['MNEMO_PORT'] },
    })
  }
  return n
}

/** The data directory the server of these options uses (for its token files). */
async function serverHome(io: CliIo, o: GlobalOptions): Promise<string> {
  const { resolveConfig } = await import('../../config/config.js')
  return resolveConfig(o.home ? { ...io.env, MNEMO_HOME: o.home } : io.env).home
}

export async function userAdd(io: CliIo, out: Out, name: string, o: GlobalOptions & { replace?: boolean }): Promise<void> {
  const { addServerUser, serverUsersPath } = await import('../../runtime/server-users.js')
  const home = await serverHome(io, o)
  const token = addServerUser(home, name, Date.now(), { replace: o.replace === true })
  if (out.json) printJson(out, { user: name, token, file: serverUsersPath(home) })
  else {
    out.stdout(`user ${name}: token ${token}\n`)
    out.stderr(
      `the token is shown once; ${name} sets MNEMO_SERVER_TOKEN to it (with MNEMO_SERVER_URL) and reads and writes only their data and shared data\n`,
    )
  }
}

export async function userRemove(io: CliIo, out: Out, name: string, o: GlobalOptions): Promise<void> {
  const { removeServerUser } = await import('../../runtime/server-users.js')
  const removed = removeServerUser(await serverHome(io, o), name)
  if (!removed)
    throw new MnemoError('NOT_FOUND', `no user ${JSON.stringify(name)} has a token`, {
      details: { kind: 'user', id: name },
      hint: 'mnemo user list shows who has one',
    })
  if (out.json) printJson(out, { user: name, removed })
  else out.stdout(`user ${name}: token revoked (their data stays)\n`)
}

export async function userList(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  const { listServerUsers } = await import('../../runtime/server-users.js')
  const users = listServerUsers(await serverHome(io, o))
  if (out.json) printJson(out, { users })
  else
    out.stdout(
      users.length === 0
        ? 'no users (only the server token; add one with mnemo user add <name>)\n'
        : users.map((u) => `${u.user}\t${u.createdAt}\n`).join(''),
    )
}

/**
 * `mnemo viewer`: prints the address of the viewer of the server on this
 * machine (`http://127.0.0.1:<port>/#token=<token>`; the fragment is never
 * sent to the server) and says whether that server answers.
 *
 * @throws {MnemoError} `NOT_FOUND` — no server token yet (the server never ran with this data directory).
 */
export async function viewer(io: CliIo, out: Out, o: GlobalOptions & { port?: string; host?: string }): Promise<void> {
  const { readServerToken, serverTokenPath } = await import('../../runtime/server-token.js')
  const { resolveConfig } = await import('../../config/config.js')
  const config = resolveConfig(o.home ? { ...io.env, MNEMO_HOME: o.home } : io.env)
  const token = readServerToken(config.home)
  if (token === undefined) {
    throw new MnemoError(
      'NOT_FOUND',
      `no server token in ${serverTokenPath(config.home)}: the server has not run with this data directory`,
      {
        details: { kind: 'file', id: serverTokenPath(config.home) },
        hint: 'start it with mnemo serve (it prints the viewer address)',
      },
    )
  }
  const port = await servePort(io, o.port)
  const host = o.host ?? '127.0.0.1'
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  const url = `${base}/#token=${encodeURIComponent(token)}`
  // Whether a server answers there, and whether it takes this data directory's token (another server's would refuse it).
  const status = await fetch(`${base}/v1/status`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(1000),
  }).then(
    (r) => r.status,
    () => 0,
  )
  const running = status !== 0
  const tokenAccepted = status >= 200 && status < 300
  if (out.json) printJson(out, { url, running, tokenAccepted })
  else {
    const note = !running
      ? `(no server answers at ${base}: start it with mnemo serve${port === 7077 || port === 0 ? '' : ` --port ${port}`})\n`
      : status === 404 || status === 405
        ? `(something answers at ${base}, but not a mnemo server (HTTP ${status}): check --port)\n`
        : !tokenAccepted
          ? `(the server at ${base} refuses this token (HTTP ${status}): it serves another data directory; pass that one's --home)\n`
          : ''
    out.stdout(`${url}\n${note}`)
  }
}

/**
 * How far V8 lets the old generation grow past what its last full collection kept before the next one, percent.
 * V8's own factor goes up to 4× (300%) while collections are cheap, and at 4× the serve bench's 100k store held 120
 * MiB of old-generation garbage over 35 MiB live, and promoted 20× more (docs/RECALL-LATENCY.md). For this long-running
 * process only: the CLI's other commands exit after their job.
 */
const SERVE_HEAP_GROWING_PERCENT = 50

/**
 * `mnemo serve`: runs the HTTP server (REST under /v1, MCP at /mcp) until
 * SIGINT or SIGTERM, then stops gracefully (in-flight requests finish, the
 * store is closed) and returns, so the process exits 0. Port: `--port`, else
 * `MNEMO_PORT`, else 7077. Database: `--database`, else `MNEMO_DATABASE_URL`, else the
 * data directory's SQLite file.
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the database cannot be reached (its URL named, password masked).
 * @throws {MnemoError} `INVALID_INPUT` — a bad `--port`. `CONFIG_INVALID` — a bad `MNEMO_PORT`.
 * @throws {MnemoError} `CONFLICT` — the port is in use: `port 7077 is already in use (--port or MNEMO_PORT to choose another)`.
 */
export async function serve(
  io: CliIo,
  out: Out,
  o: GlobalOptions & { port?: string; host?: string; allowedHosts?: string; database?: string },
): Promise<void> {
  // Before the engine's modules load: the garbage of the start-up is then collected at this growth too.
  const { setFlagsFromString } = await import('node:v8')
  setFlagsFromString(`--heap-growing-percent=${SERVE_HEAP_GROWING_PERCENT}`)
  const { startServer } = await import('../http/server.js')
  const host = o.host ?? '127.0.0.1'
  const allowedHosts = o.allowedHosts
    ?.split(',')
    .map((h) => h.trim())
    .filter((h) => h.length > 0)
  if (allowedHosts?.some((h) => !/^[\w.-]+$|^\[?[0-9a-fA-F:.]+\]?$/.test(h)))
    throw invalidInput(
      'allowed-hosts',
      `--allowed-hosts must list host names without scheme or port (got ${JSON.stringify(o.allowedHosts)})`,
      'like --allowed-hosts mnemo.internal,10.0.0.5',
    )
  const server = await startServer({
    env: io.env,
    host,
    port: await servePort(io, o.port),
    log: (line) => io.stderr(`${line}\n`),
    ...(o.home ? { home: o.home } : {}),
    ...(o.database !== undefined ? { database: o.database } : {}),
    ...(allowedHosts ? { allowedHosts } : {}),
  })
  // The token goes on stdout only to a person at a terminal: a pipe or a log file (systemd, nohup, CI) would keep it.
  const viewerUrl = io.stdoutIsTTY === true ? server.viewerUrl : `${server.url}/`
  if (out.json)
    printJson(out, {
      url: server.url,
      viewerUrl,
      home: server.home,
      database: server.database,
      tokenPath: server.tokenPath,
      pid: process.pid,
    })
  else {
    out.stdout(
      `mnemo serve: listening on ${server.url} (REST ${server.url}/v1, MCP ${server.url}/mcp); data ${server.home}${server.database.startsWith('postgres') ? ` in ${server.database}` : ''}; bearer token in ${server.tokenPath}\n`,
    )
    out.stdout(
      io.stdoutIsTTY === true
        ? `viewer: ${viewerUrl}\n`
        : `viewer: ${viewerUrl} (mnemo viewer prints the address with the token; it is not written here because this output is not a terminal)\n`,
    )
  }
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') {
    io.stderr(`warning: bound to ${host}: anyone who can reach this address and holds the token can read and change these memories\n`)
  }
  await new Promise<void>((resolve, reject) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      io.stderr(`mnemo serve: ${signal}, finishing in-flight requests\n`)
      server.close().then(resolve, reject)
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  io.stderr('mnemo serve: stopped\n')
}
