/**
 * The key names that mark a secret (`DB_PASSWORD`, `apiKey`, `client_secret`)
 * and those that only look like one (`max_tokens`, `page_token`): the
 * vocabulary the key-driven entries of the redaction table and `redactValue`
 * read a key by.
 */

const PASSWORD_WORDS = new Set(['password', 'passwd', 'pwd', 'pass', 'passphrase'])
const TOKEN_SUFFIX = 'token'
const SECRET_SUFFIX = 'secret'
/** Last segment alone marks a secret key (besides anything ending in password/token/secret). */
const SINGLE_KEYS = new Map<string, string>([
  ['apikey', 'api-key'],
  ['accesskey', 'access-key'],
  ['privatekey', 'private-key'],
  ['secretkey', 'secret'],
  ['auth', 'auth'],
  ['authorization', 'auth'],
  ['credential', 'credential'],
  ['credentials', 'credential'],
])
/** Last two segments that mark a secret key. */
const PAIR_KEYS = new Map<string, string>([
  ['api key', 'api-key'],
  ['access key', 'access-key'],
  ['private key', 'private-key'],
  ['secret key', 'secret'],
  ['account key', 'secret'],
  ['storage key', 'secret'],
  ['master key', 'secret'],
  ['signing key', 'secret'],
  ['encryption key', 'secret'],
  ['app key', 'secret'],
  ['client secret', 'secret'],
])
/** `page_token`, `max_tokens`-like keys: counters and cursors, not credentials. */
export const NOT_SECRET_BEFORE_TOKEN: ReadonlySet<string> = new Set([
  'page',
  'next',
  'prev',
  'previous',
  'continuation',
  'cursor',
  'sync',
  'resume',
  'max',
  'min',
  'input',
  'output',
  'total',
  'prompt',
  'completion',
  'cache',
  'reasoning',
  'num',
  'count',
])

/** `secret_key_base`, `db_password_value`: a suffix that names the encoding, not the thing. */
const VALUE_SUFFIXES = new Set(['base', 'value', 'val', 'str', 'string', 'b64', 'base64', 'hex', 'raw', 'plain', 'plaintext'])

function keySegments(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((s) => s !== '')
}

/**
 * The answers of `secretKeyType` kept, by key (`NOT_SECRET` for none): `redactValue` asks it for every string-valued
 * key of every payload, and a log holds the same few dozen keys (`type`, `uuid`, `content`, …) over and over. A pure
 * function's answers, so what is kept changes no result; emptied when full.
 */
const keyTypes = new Map<string, string>()
const NOT_SECRET = '\0none'
/** Most keys kept. */
const KEY_TYPES_ENTRIES = 10_000
/** Longest key kept, in UTF-16 units. */
const KEY_TYPES_CHARS = 80

/**
 * The placeholder type for a secret-like key name (`DB_PASSWORD` →
 * `password`, `apiKey` → `api-key`, `client_secret` → `secret`), or
 * undefined when the key does not name a credential (`max_tokens`,
 * `token_type`, `author`, `password_file`).
 */
export function secretKeyType(key: string): string | undefined {
  const kept = keyTypes.get(key)
  if (kept !== undefined) return kept === NOT_SECRET ? undefined : kept
  const type = keyType(key)
  if (key.length <= KEY_TYPES_CHARS) {
    if (keyTypes.size >= KEY_TYPES_ENTRIES) keyTypes.clear()
    keyTypes.set(key, type ?? NOT_SECRET)
  }
  return type
}

/** `secretKeyType` without its kept answers. */
function keyType(key: string): string | undefined {
  const segs = keySegments(key)
  while (segs.length > 1 && VALUE_SUFFIXES.has(segs[segs.length - 1] ?? '')) segs.pop()
  const last = segs[segs.length - 1]
  if (last === undefined) return undefined
  const prev = segs[segs.length - 2]
  if (prev === 'no' && segs.length === 2) return undefined
  const pair = prev === undefined ? undefined : PAIR_KEYS.get(`${prev} ${last}`)
  if (pair !== undefined) return pair
  const single = SINGLE_KEYS.get(last)
  if (single !== undefined) return single
  if (PASSWORD_WORDS.has(last) || (last.length > 8 && last.endsWith('password'))) return 'password'
  if (last.endsWith(TOKEN_SUFFIX)) {
    if (last === TOKEN_SUFFIX && prev !== undefined && NOT_SECRET_BEFORE_TOKEN.has(prev)) return undefined
    return last === TOKEN_SUFFIX || !NOT_SECRET_BEFORE_TOKEN.has(last.slice(0, -TOKEN_SUFFIX.length)) ? 'token' : undefined
  }
  if (last.endsWith(SECRET_SUFFIX)) return 'secret'
  return undefined
}

/** Every placeholder type {@link secretKeyType} gives from the key tables (besides `password`, `token`, `secret`). */
export const SECRET_KEY_LABELS: readonly string[] = [...SINGLE_KEYS.values(), ...PAIR_KEYS.values()]

/**
 * A regex source (no flags of its own; use it with `i`) that the lowercase form of every key `secretKeyType`
 * names a credential ends with: its last word ends with a word of the tables (`password`, `token`, `secret`,
 * `auth`, `key`, …), and only value suffixes (`_value`, `B64`, …) follow, joined by `_`, `.` or `-` or by nothing
 * (a camelCase edge) — runs of at most 80 of those, as in any key the redaction table's regexes read (81 characters
 * at most), so a long run costs no backtracking. The table's key-driven entries use it in their triggers (see
 * `SecretPattern.trigger`). Built from the same sets, so a word added to them is in it.
 */
export const SECRET_KEY_END = `(?:${[
  ...new Set([
    ...PASSWORD_WORDS,
    TOKEN_SUFFIX,
    SECRET_SUFFIX,
    ...SINGLE_KEYS.keys(),
    ...[...PAIR_KEYS.keys()].map((k) => k.split(' ')[1] ?? ''),
  ]),
].join('|')})(?:[_.-]{0,80}(?:${[...VALUE_SUFFIXES].join('|')}))*`
