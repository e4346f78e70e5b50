import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { userInfo } from 'node:os'
import { createDatabase, dropDatabase, probe, withDatabase } from '../storage/postgres/pg-admin.js'

/**
 * A real PostgreSQL server for tests. `withPostgres()` finds one and creates a fresh database for the calling test
 * file:
 *
 * 1. `MNEMO_TEST_DATABASE_URL` (a role allowed to CREATE DATABASE), else the local socket `/var/run/postgresql` as
 *    user `postgres`, then as the OS user.
 * 2. When nothing answers on the socket and we are root with Debian's `pg_ctlcluster`, it starts the installed
 *    cluster (`pg_ctlcluster <version> <name> start`, the first of `pg_lsclusters`).
 * 3. When the socket refuses both logins (Debian's peer authentication: root is not `postgres`) and we are root, it
 *    creates a superuser role named after the OS user through `runuser -u postgres -- psql`, once.
 *
 * When no server can be had it returns undefined and `whyNoPostgres()` says why, so the tests skip saying so (a
 * machine without PostgreSQL still passes `npm test`) — except in CI (`CI` set, or `MNEMO_TEST_POSTGRES=required`),
 * where it throws instead: the contract suite must run on PostgreSQL there.
 *
 * Usage, at the top of a test file:
 *
 *     const pg = await withPostgres()
 *     describe.skipIf(!pg)(`PostgresStore${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
 *       afterAll(() => pg?.drop())
 *       it('…', async () => { const store = await openPostgresStore(pg!.url) … })
 *     })
 */
export interface TestDatabase {
  /** A postgres:// URL of a new, empty database of its own. */
  url: string
  /** The database's name (`mnemo_test_<pid>_<n>_<random>`). */
  name: string
  /** Drops the database (closing connections still open on it). Idempotent. */
  drop(): Promise<void>
}

const SOCKET_DIR = '/var/run/postgresql'

let server: Promise<{ adminUrl: string } | { reason: string }> | undefined
let lastReason: string | undefined
let made = 0

/**
 * A fresh database on a reachable PostgreSQL server, or undefined when none can be had (see `whyNoPostgres`).
 * @throws {Error} in CI (`CI` or `MNEMO_TEST_POSTGRES=required` set) when no server can be had.
 */
export async function withPostgres(): Promise<TestDatabase | undefined> {
  server ??= findServer()
  const found = await server
  if ('reason' in found) {
    lastReason = found.reason
    if (process.env.CI || process.env.MNEMO_TEST_POSTGRES === 'required') {
      throw new Error(`PostgreSQL is required in CI and none could be had: ${found.reason}`)
    }
    return undefined
  }
  const name = `mnemo_test_${process.pid}_${++made}_${Math.random().toString(36).slice(2, 8)}`
  await createDatabase(found.adminUrl, name)
  let dropped = false
  return {
    url: withDatabase(found.adminUrl, name),
    name,
    drop: async () => {
      if (dropped) return
      dropped = true
      await dropDatabase(found.adminUrl, name)
    },
  }
}

/** Why the last `withPostgres()` returned undefined (undefined when it found a server, or was not called). */
export function whyNoPostgres(): string | undefined {
  return lastReason
}

async function findServer(): Promise<{ adminUrl: string } | { reason: string }> {
  const given = process.env.MNEMO_TEST_DATABASE_URL
  if (given) {
    const p = await probe(given)
    return p.ok ? { adminUrl: given } : { reason: `MNEMO_TEST_DATABASE_URL does not answer: ${p.message}` }
  }
  const osUser = userInfo().username
  const candidates = [...new Set(['postgres', osUser])].map(
    (user) => `postgres://${encodeURIComponent(user)}@localhost/postgres?host=${encodeURIComponent(SOCKET_DIR)}`,
  )
  const tryAll = async (): Promise<{ url?: string; auth: boolean; message: string }> => {
    let auth = false
    let message = ''
    for (const url of candidates) {
      const p = await probe(url)
      if (p.ok) return { url, auth, message }
      auth ||= p.reason === 'auth'
      message = p.message
    }
    return { auth, message }
  }
  let found = await tryAll()
  if (!found.url && !found.auth) {
    const started = startLocalCluster()
    if (typeof started === 'string') return { reason: `no PostgreSQL server on ${SOCKET_DIR} (${found.message}); ${started}` }
    found = await tryAll()
  }
  if (!found.url && found.auth) {
    // Another test process may create the role at the same moment (then ours fails): whether the login works decides.
    const role = createOwnRole(osUser)
    found = await tryAll()
    if (!found.url && role !== undefined) {
      return { reason: `the server on ${SOCKET_DIR} refused user postgres and ${osUser} (${found.message}); ${role}` }
    }
  }
  return found.url ? { adminUrl: found.url } : { reason: `no PostgreSQL server could be used on ${SOCKET_DIR}: ${found.message}` }
}

const isRoot = (): boolean => process.getuid?.() === 0

/** Starts the first installed Debian cluster; undefined when started, else why not. */
function startLocalCluster(): string | undefined {
  if (!isRoot()) return 'not root, so not starting one (set MNEMO_TEST_DATABASE_URL, or start PostgreSQL)'
  if (!existsSync('/usr/bin/pg_ctlcluster') || !existsSync('/usr/bin/pg_lsclusters')) {
    return 'PostgreSQL is not installed (Debian: apt-get install postgresql), or set MNEMO_TEST_DATABASE_URL'
  }
  try {
    const line = execFileSync('pg_lsclusters', ['--no-header'], { encoding: 'utf8', timeout: 10_000 }).trim().split('\n')[0]
    const [version, cluster] = (line ?? '').split(/\s+/)
    if (!version || !cluster) return 'pg_lsclusters lists no cluster (pg_createcluster <version> main)'
    try {
      execFileSync('pg_ctlcluster', [version, cluster, 'start'], { stdio: 'pipe', timeout: 60_000 })
    } catch (error) {
      // Another test file started it at the same moment: it runs, which is what we wanted.
      const out = String((error as { stderr?: unknown }).stderr ?? '')
      if (!/already running/i.test(out)) return `pg_ctlcluster ${version} ${cluster} start failed: ${out.trim() || String(error)}`
    }
    return undefined
  } catch (error) {
    return `pg_lsclusters failed: ${error instanceof Error ? error.message : String(error)}`
  }
}

/** Creates a superuser role for the OS user through the postgres account (peer authentication); undefined when it exists now. */
function createOwnRole(user: string): string | undefined {
  if (!isRoot() || !existsSync('/usr/sbin/runuser')) return 'cannot create a role for this user (not root, or no runuser)'
  if (!/^[a-z_][a-z0-9_-]*$/.test(user)) return `the OS user ${JSON.stringify(user)} is not a plain role name`
  const sql = `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${user}') THEN CREATE ROLE "${user}" SUPERUSER LOGIN; END IF; END $$`
  try {
    execFileSync('runuser', ['-u', 'postgres', '--', 'psql', '-h', SOCKET_DIR, '-v', 'ON_ERROR_STOP=1', '-c', sql], {
      stdio: 'pipe',
      timeout: 30_000,
      cwd: '/',
    })
    return undefined
  } catch (error) {
    return `creating role ${user} failed: ${String((error as { stderr?: unknown }).stderr ?? error).trim()}`
  }
}
