import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { MnemoError } from '../core/errors.js'
import { makeDirectory } from './data-dir.js'

/** Name of the bearer token file inside the data directory. */
const SERVER_TOKEN_FILE = 'server-token'

const TOKEN_PATTERN = /^[0-9a-f]{64}$/

/** Path of the server's bearer token: `<home>/server-token`. */
export function serverTokenPath(home: string): string {
  return path.join(home, SERVER_TOKEN_FILE)
}

/**
 * Reads the bearer token a `mnemo serve` on data directory `home` requires,
 * for clients on this machine (CLI, hooks, scripts).
 *
 * @returns The token (64 hex characters), or undefined when no server has
 *   started on `home` yet or the file does not hold a token.
 * @example
 * const token = readServerToken(resolveConfig().home)
 * await fetch('http://127.0.0.1:7077/v1/status', { headers: { authorization: `Bearer ${token}` } })
 */
export function readServerToken(home: string): string | undefined {
  let text: string
  try {
    text = readFileSync(serverTokenPath(home), 'utf8')
  } catch {
    return undefined
  }
  const token = text.trim()
  return TOKEN_PATTERN.test(token) ? token : undefined
}

/**
 * The server's bearer token: read from `<home>/server-token`, or created
 * there on first start (32 random bytes as hex, file mode 0600). Creation is
 * atomic (a complete temporary file is hard-linked into place), so servers
 * starting at once on the same home agree on one token. An existing file has
 * its mode reset to 0600.
 *
 * @throws {MnemoError} `CONFIG_INVALID` — the file exists but does not hold a token.
 */
export function ensureServerToken(home: string): string {
  const file = serverTokenPath(home)
  makeDirectory(home, 0o700)
  const existing = readServerToken(home)
  if (existing !== undefined) {
    chmodSync(file, 0o600)
    return existing
  }
  const token = randomBytes(32).toString('hex')
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(tmp, `${token}\n`, { mode: 0o600 })
  try {
    linkSync(tmp, file)
    return token
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const other = readServerToken(home)
    if (other !== undefined) return other
    throw new MnemoError('CONFIG_INVALID', `${file} does not hold a server token (64 hex characters)`, {
      details: { keys: [SERVER_TOKEN_FILE] },
      hint: `delete ${file}; the next \`mnemo serve\` creates a new one`,
    })
  } finally {
    unlinkSync(tmp)
  }
}

/**
 * True when an `Authorization` header carries `Bearer <expected>`. The
 * comparison takes the same time whatever the header holds (both sides are
 * hashed to equal length first).
 */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  const given = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? ''
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b) && given.length > 0
}
