import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, closeSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { MnemoError } from '../core/errors.js'
import { makeDirectory } from './data-dir.js'
import { checkUserName, USER_NAME_PATTERN } from '../core/user.js'

/**
 * Per-user bearer tokens of a team server. The server token
 * (`server-token`) is the operator's; each team member gets a token of
 * their own, and a request with it reads and writes as that user only
 * (their data plus shared data; see `Scope`). The file keeps SHA-256 digests
 * of the tokens, never the tokens: a copy of it lets no one in.
 */

/** Name of the users file inside the data directory. */
const SERVER_USERS_FILE = 'server-users.json'

// A list, not an object keyed by name: a name like `constructor` or `__proto__` is then only a string.
const usersFileSchema = z.object({
  version: z.literal(1),
  users: z.array(
    z.object({ name: z.string().regex(USER_NAME_PATTERN), tokenSha256: z.string().regex(/^[0-9a-f]{64}$/), createdAt: z.string() }),
  ),
})
type UsersFile = z.output<typeof usersFileSchema>

/** Path of the users file: `<home>/server-users.json`. */
export function serverUsersPath(home: string): string {
  return path.join(home, SERVER_USERS_FILE)
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/**
 * Reads the users file; an absent file is no users.
 * @throws {MnemoError} `CONFIG_INVALID` — the file is not JSON of this shape.
 */
function readUsers(home: string): UsersFile {
  const file = serverUsersPath(home)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, users: [] }
    throw error
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  const r = usersFileSchema.safeParse(parsed)
  if (!r.success) {
    const where = r.success
      ? ''
      : `: ${r.error.issues
          .map((i) => `${i.path.join('.') || 'file'} ${i.message}`)
          .slice(0, 3)
          .join('; ')}`
    throw new MnemoError(
      'CONFIG_INVALID',
      `${file} is not a mnemo users file ({"version":1,"users":[{"name","tokenSha256":"<64 hex>","createdAt"}]})${where}`,
      {
        details: { keys: [SERVER_USERS_FILE] },
        hint: `fix or delete ${file}, then add the users again with \`mnemo user add <name>\``,
      },
    )
  }
  return r.data
}

/** Writes the users file atomically (a complete temporary file renamed into place), mode 0600. */
function writeUsers(home: string, users: UsersFile): void {
  makeDirectory(home, 0o700)
  const file = serverUsersPath(home)
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(tmp, `${JSON.stringify(users, null, 2)}\n`, { mode: 0o600 })
  renameSync(tmp, file)
  chmodSync(file, 0o600)
}

/** How long a change of the users file waits for another one to finish, and when a left-behind lock counts as stale, ms. */
const LOCK_WAIT_MS = 5000
const LOCK_STALE_MS = 30_000

/**
 * Runs a read-modify-write of the users file under an exclusive lock file
 * (`server-users.json.lock`, created with O_EXCL), so concurrent `user add` /
 * `user remove` never lose each other's change: a revocation that reports
 * success sticks. A lock older than 30 s (a crashed process) is taken over.
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — another change held the lock for 5 s.
 */
function withUsersLock<T>(home: string, fn: () => T): T {
  makeDirectory(home, 0o700)
  const lock = `${serverUsersPath(home)}.lock`
  const deadline = Date.now() + LOCK_WAIT_MS
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600))
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      try {
        if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) unlinkSync(lock)
      } catch {
        // released meanwhile
      }
      if (Date.now() > deadline) {
        throw new MnemoError('STORE_UNAVAILABLE', `${lock} is held by another change of the users: try again`, {
          details: { dialect: 'sqlite', operation: 'users file' },
        })
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
    }
  }
  try {
    return fn()
  } finally {
    unlinkSync(lock)
  }
}

/**
 * Gives `user` a token and returns it: 32 random bytes as hex, shown once;
 * only its digest is kept. A name that differs from an existing one only in
 * case is refused (it would read as the same person). Data is keyed by the
 * name: a new member needs a new name, or they read the old member's data.
 *
 * @param options.replace - Give an existing user a new token (the old one stops working). Default false.
 * @throws {MnemoError} `INVALID_INPUT` — a malformed user name. `CONFIG_INVALID` — a damaged users file.
 * @throws {MnemoError} `CONFLICT` — the user (or one differing only in case) already has a token and `replace` is not set.
 */
export function addServerUser(home: string, user: string, nowMs: number, options: { replace?: boolean } = {}): string {
  checkUserName(user)
  return withUsersLock(home, () => addLocked(home, user, nowMs, options.replace === true))
}

function addLocked(home: string, user: string, nowMs: number, replace: boolean): string {
  const users = readUsers(home)
  const same = users.users.find((u) => u.name.toLowerCase() === user.toLowerCase())
  if (same && (same.name !== user || !replace)) {
    throw new MnemoError(
      'CONFLICT',
      same.name === user
        ? `user ${user} already has a token`
        : `user ${same.name} already has a token, and ${user} differs from it only in case`,
      {
        details: { kind: 'user', id: same.name },
        hint:
          same.name === user
            ? `\`mnemo user add ${user} --replace\` gives them a new token (the old one stops working)`
            : 'pick a distinct name',
      },
    )
  }
  const token = randomBytes(32).toString('hex')
  const entry = { name: user, tokenSha256: digest(token), createdAt: new Date(nowMs).toISOString() }
  users.users = [...users.users.filter((u) => u.name !== user), entry]
  writeUsers(home, users)
  return token
}

/**
 * Removes a user's token: requests with it get 401 from then on. Their data
 * stays (`MNEMO_USER=<name> mnemo forget --project … --yes` deletes it).
 * @returns Whether the user had a token.
 */
export function removeServerUser(home: string, user: string): boolean {
  return withUsersLock(home, () => {
    const users = readUsers(home)
    if (!users.users.some((u) => u.name === user)) return false
    users.users = users.users.filter((u) => u.name !== user)
    writeUsers(home, users)
    return true
  })
}

/** The users with a token, by name. */
export function listServerUsers(home: string): { user: string; createdAt: string }[] {
  return readUsers(home)
    .users.map((u) => ({ user: u.name, createdAt: u.createdAt }))
    .sort((a, b) => a.user.localeCompare(b.user))
}

/**
 * The user a bearer header belongs to, for the server's auth check. Re-reads
 * the users file when it changes (`mnemo user add` while the server runs
 * takes effect at once). Comparisons take the same time whatever the token.
 */
export class ServerUsers {
  private cache: { mtimeMs: number; size: number; byDigest: Map<string, string> } | undefined

  constructor(private readonly home: string) {}

  /** The user whose token the `Authorization: Bearer …` header carries, or undefined. */
  userFor(header: string | undefined): string | undefined {
    const given = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '')?.[1]
    if (given === undefined) return undefined
    const want = Buffer.from(digest(given), 'hex')
    let found: string | undefined
    for (const [d, user] of this.load()) if (timingSafeEqual(Buffer.from(d, 'hex'), want)) found = user
    return found
  }

  private load(): Map<string, string> {
    let stat: { mtimeMs: number; size: number }
    try {
      stat = statSync(serverUsersPath(this.home))
    } catch {
      return new Map()
    }
    if (this.cache && this.cache.mtimeMs === stat.mtimeMs && this.cache.size === stat.size) return this.cache.byDigest
    const byDigest = new Map(readUsers(this.home).users.map((u) => [u.tokenSha256, u.name]))
    this.cache = { mtimeMs: stat.mtimeMs, size: stat.size, byDigest }
    return byDigest
  }
}
