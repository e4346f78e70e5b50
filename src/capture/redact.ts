/**
 * Secret redaction for captured text: the real `Redactor` that every string of
 * every payload passes through before it is stored (see `sanitizePayload`).
 *
 * - Secret-shaped values become typed placeholders, `[REDACTED:<type>]`; the
 *   key, header name, scheme, URL user and host around them stay, so the text
 *   keeps its meaning and its syntax (a JSON document stays parseable: no
 *   placeholder holds a quote or a backslash, and no span ends inside an
 *   escape sequence).
 * - `<private>…</private>` spans (any case, multi-line; an unclosed one runs to
 *   the end of the text) become `[PRIVATE]`.
 * - Every detector lives in one documented table, `SECRET_PATTERNS`. No
 *   detector library is used: secretlint (the maintained option on npm) loads
 *   in ~30 ms, is async, and misses the key/value, URL and header cases.
 *
 * Redaction is idempotent for delimited secrets: placeholders already in the
 * text are taken before any detector runs, so no detector ever rewrites
 * another's placeholder or any part of it (spans never overlap one), and a
 * value already holding a placeholder is left as it is.
 *
 * Cost stays linear in the text (a 200 KB adversarial string takes tens of
 * ms): regexes are precompiled; no nested quantifiers over overlapping
 * classes; keys, tokens and unbounded runs start at a word edge and stop at a
 * class their follower cannot start with; PEM bodies are walked once; a
 * rejected match rescans its inside within a budget of one text length per
 * pattern; overlaps are resolved by a merge of sorted lists.
 */

import { invalidInput } from '../core/errors.js'

/** Where a secret (or a `<private>` span, type `private`) sits in the text. */
export interface SecretSpan {
  /** Placeholder type, e.g. `github-token`; `private` for a `<private>` span. */
  type: string
  /** Offset of the first redacted UTF-16 unit. */
  start: number
  /** Offset just past the last redacted unit. */
  end: number
}

/** One detector of the table. */
export interface SecretPattern {
  /** Unique name of the entry (tests and docs refer to it). */
  readonly id: string
  /**
   * Placeholder type written as `[REDACTED:<type>]`. For key-driven entries
   * (`keyed-*`) this names the family; the placeholder type then comes from
   * the key name (`password`, `token`, `secret`, `api-key`, …; see `label`).
   */
  readonly type: string
  /**
   * Global, `d` (indices) regex. The secret is the named group `secret`, else
   * `bare`, else the whole match; everything else the match covers is kept.
   */
  readonly regex: RegExp
  readonly description: string
  /** Where the token format is documented. */
  readonly reference: string
  /** False rejects a candidate: placeholders, code identifiers, prose. */
  readonly accept?: (secret: string, match: RegExpExecArray, text: string) => boolean
  /** Placeholder type when it depends on the match (key-driven entries). */
  readonly label?: (match: RegExpExecArray) => string
  /** End of the secret when a regex cannot say it cheaply (PEM blocks); -1 rejects. */
  readonly extend?: (text: string, matchEnd: number) => number
}

// ---------------------------------------------------------------------------
// Key names

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
const NOT_SECRET_BEFORE_TOKEN = new Set([
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
 * The placeholder type for a secret-like key name (`DB_PASSWORD` →
 * `password`, `apiKey` → `api-key`, `client_secret` → `secret`), or
 * undefined when the key does not name a credential (`max_tokens`,
 * `token_type`, `author`, `password_file`).
 */
export function secretKeyType(key: string): string | undefined {
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

// ---------------------------------------------------------------------------
// Value filters

const PLACEHOLDER_WORDS = new Set([
  'password',
  'passwd',
  'pass',
  'pwd',
  'secret',
  'token',
  'apikey',
  'key',
  'credentials',
  'redacted',
  'private',
  'none',
  'null',
  'nil',
  'undefined',
  'true',
  'false',
  'yes',
  'no',
  'on',
  'off',
  'required',
  'optional',
  'string',
  'str',
  'number',
  'int',
  'integer',
  'bool',
  'boolean',
  'any',
  'unknown',
  'object',
  'bytes',
  'secretstr',
  'placeholder',
  'example',
  'sample',
  'dummy',
  'xxx',
  'todo',
  'tbd',
  'hidden',
  'masked',
  'empty',
  'env',
  'prompt',
])
const PLACEHOLDER = /\[(?:REDACTED(?::(?<type>[\w-]+))?|PRIVATE)\]/g
const SCHEME_WORDS = /\b(?:bearer|basic|token|bot)\b/gi
/** A leftover of a partly redacted value keeps at least this many letters/digits besides auth scheme words. */
const MIN_LEFTOVER = 4

/** Letters and digits in `s`, auth scheme words (`Bearer`) aside. */
function secretChars(s: string): number {
  return s.replace(SCHEME_WORDS, ' ').match(/[A-Za-z0-9]/g)?.length ?? 0
}
const MASK = /^(?:[*•·.…#]+|[xX]{3,}|-+)$/
const TEMPLATE = /\$\{|\$\(|\{\{|\{%|^%[A-Za-z_]\w*%$|^\$[A-Za-z_]\w*$|^<[^<>]*>$|^\[[^[\]]*\]$|^\{[^{}]*\}$/
const YOUR_PLACEHOLDER =
  /^(?:your|my|insert|enter|put|replace)[-_ ]?(?:own[-_ ]?)?(?:[a-z]+[-_ ]?)?(?:password|passwd|pass|secret|token|key|api[-_ ]?key|access[-_ ]?key|credentials?)(?:[-_ ]?here)?$/i
const ENV_NAME_PLACEHOLDER = /^[A-Z][A-Z0-9_]*$/
const ENV_NAME_WORDS = /YOUR|TOKEN|KEY|SECRET|PASSWORD|PASSWD|PASS\b|HERE|CHANGE/
const CODE_PATH =
  /^(?:process\.env|os\.environ|import\.meta\.env|env|secrets|vars|config|settings|self|this|ctx|context|props|params|args|options|opts|request|req)(?:\.|\[)/i
const FILE_PATH = /^(?:~|\.{1,2})?\/(?:[\w.@+-]+\/)*[\w.@+-]+\/?$|^[A-Za-z]:\\[^\s]*$/

/** Values that stand for a secret without being one: masks, templates, `<your-token>`, `null`. */
export function isPlaceholderValue(value: string): boolean {
  const t = value.trim()
  if (t === '') return true
  // Already (partly) redacted: what redaction left around a placeholder stays, so a second pass changes nothing.
  if (holdsPlaceholder(t)) return true
  // `[REDACTED:hunter2]` is no placeholder redaction writes (see placeholderSpans): a value, not a template.
  if (/^\[REDACTED:/.test(t)) return false
  if (MASK.test(t) || TEMPLATE.test(t)) return true
  if (t.length > 2 && (t.startsWith('*') || t.startsWith('&')) && /^[*&][\w-]+$/.test(t)) return true // YAML alias/anchor
  const bare = t.toLowerCase().replace(/[^a-z0-9]/g, '')
  if (PLACEHOLDER_WORDS.has(bare)) return true
  if (YOUR_PLACEHOLDER.test(t)) return true
  if (ENV_NAME_PLACEHOLDER.test(t) && ENV_NAME_WORDS.test(t)) return true
  return false
}

/** A file path (not a base64 blob that happens to hold slashes). */
function isFilePath(value: string): boolean {
  if (!FILE_PATH.test(value)) return false
  return !value.split('/').some((seg) => seg.length >= 16 && /[A-Z]/.test(seg) && /[a-z]/.test(seg) && /\d/.test(seg))
}

/** Identifier expressions: `process.env.X`, `config.db.password`. */
function isCodeReference(value: string): boolean {
  return CODE_PATH.test(value)
}

/** `user_input`, `someVar`: reads as a code identifier, not a literal. */
function isIdentifierLike(value: string): boolean {
  return /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(value) || /^[a-z]+[A-Z][A-Za-z0-9]*$/.test(value)
}

function keyedValueOk(value: string): boolean {
  return !isPlaceholderValue(value) && !isFilePath(value) && !isCodeReference(value)
}

function hasDigitAndLetter(value: string): boolean {
  return /\d/.test(value) && /[A-Za-z]/.test(value)
}

const keyLabel = (m: RegExpExecArray): string => secretKeyType(m.groups?.key ?? '') ?? 'secret'
/** `[REDACTED:github-token]` holds a key-like word; text inside a placeholder is never a key. */
function insidePlaceholder(text: string, at: number): boolean {
  const open = text.lastIndexOf('[', at)
  if (open < 0 || at - open > 40) return false
  // Only inside a whole placeholder redaction writes: `[REDACTED:DB_PASSWORD=…]` typed by hand is text to scan.
  const first = placeholderSpans(text.slice(open, open + 80))[0]
  return first !== undefined && first.start === 0 && first.end > at - open
}

/** The gap between two JSON strings (`"a=", "b"` read as a quoted value `, `): structure, not a value. */
const JSON_GAP = /^\s*[,:}\]]/

const keyAccept = (secret: string, m: RegExpExecArray, text: string): boolean =>
  secretKeyType(m.groups?.key ?? '') !== undefined &&
  keyedValueOk(secret) &&
  !JSON_GAP.test(secret) &&
  !insidePlaceholder(text, m.indices?.groups?.key?.[0] ?? m.index)

// ---------------------------------------------------------------------------
// Regex building blocks

/**
 * A key name starting at a word edge or right after a `\n`-style escape
 * (text holding JSON-escaped lines). The edge test sits after the first
 * character, which lets the regex engine skip non-letters fast.
 */
const KEY = String.raw`(?<key>[A-Za-z_](?<!(?<!\\)[\w.$-].)[\w.-]{0,80})`
/**
 * A quoted literal: `"…"` (escapes inside stay whole), or `'…'` / JSON-escaped
 * `\"…\"` (no backslash inside). No raw `"` is ever inside the value, so a
 * span never crosses the structure of a JSON document the text may be.
 * The double-quoted body is the unrolled loop `[^\\"]*(?:\\.[^\\"]*)*` (Friedl, Mastering Regular
 * Expressions, ch. 6) rather than `(?:[^\\"]|\\.)*`: the same strings, but V8 recurses per
 * alternation, and a quoted value of ~10 million characters overflowed its stack.
 */
const QUOTED = String.raw`(?:"(?<secret>[^\\"\r\n]*(?:\\.[^\\"\r\n]*)*)"|(?<q>\\*'|\\+")(?<secret2>[^\\"\r\n]*?)\k<q>)`
/** An unquoted shell/env value: stops at whitespace, quotes, backslashes, shell operators and brackets. */
const BARE = String.raw`[^\s"'\x60\\;&|<>(){}\[\],]+`
const BARE_END = String.raw`(?=[\s;&|"'\x60\\<>]|$)`
const B64URL = '[A-Za-z0-9_-]'
/** A token starts outside any longer word, or right after a `\n`-style escape. */
const W = String.raw`(?<!(?<!\\)[\w-])`

function rx(source: string, flags = 'dg'): RegExp {
  return new RegExp(source, flags)
}

const PEM_BEGIN = /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/dg
const PEM_END = /-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/y
const PEM_BODY_START = /(?:\s|\\+[nr])*(?:[A-Za-z0-9+/]{16}|[A-Za-z-]{3,30}: )/y

/** Base64, header (`Proc-Type: 4,ENCRYPTED`) and line-break characters of a PEM body. */
function isPemBodyChar(c: number): boolean {
  return (
    (c >= 48 && c <= 58) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    c === 43 ||
    c === 47 ||
    c === 61 ||
    c === 44 ||
    c === 45 ||
    isBlank(c)
  )
}

function isBlank(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13
}

/**
 * Finds the end of a PEM block that starts at `from` (just after its BEGIN
 * line): the end of its END line, or for an unclosed block the end of its
 * body. The body is walked once (`\n` escapes included, a raw quote stops it,
 * so a block never spans two JSON strings); -1 when no key body follows (a
 * marker in code or prose).
 */
function pemEnd(text: string, from: number): number {
  PEM_BODY_START.lastIndex = from
  if (!PEM_BODY_START.test(text)) return -1
  let i = from
  let bodyEnd = from
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 45 && text.startsWith('-----END', i)) {
      PEM_END.lastIndex = i
      if (PEM_END.test(text)) return PEM_END.lastIndex
    }
    if (isPemBodyChar(c)) {
      i++
      if (!isBlank(c)) bodyEnd = i
    } else if (c === 92) {
      let j = i
      while (text.charCodeAt(j) === 92) j++
      if (!/[nrt]/.test(text[j] ?? '')) break
      i = j + 1
    } else break
  }
  return bodyEnd
}

// ---------------------------------------------------------------------------
// Secrets stated in prose

/** The credential words a sentence names a secret by. */
const PROSE_KEY = String.raw`(?<![\w-])(?<key>pass(?:word|phrase|code)s?|passwd|pins?(?:[ -]?codes?)?|secrets?(?:[ _-]keys?)?|(?:(?:access|auth|api|bearer|refresh|session|bot|personal[ -]access)[ _-])?tokens?|(?:api|access|private)[ _-]?keys?)`
/** "for prod", "of the staging db", "on github": at most two words between the key word and the verb. */
const PROSE_LINK = String.raw`(?:[ \t]+(?:for|of|on|to|in)[ \t]+(?:(?:the|my|our|your|this|that)[ \t]+)?[\w.@/-]{1,40}(?:[ \t]+[\w.@/-]{1,40})?)?`
/** What says "is": a verb or `:` (`=` and `key: value` alone are keyed-env's and keyed-colon's). */
const PROSE_VERB = String.raw`(?:[ \t]*:(?=[ \t])|[ \t]+(?:is|was|are|were|will[ \t]+be|has[ \t]+been|is[ \t]+now|(?:was[ \t]+|is[ \t]+|has[ \t]+been[ \t]+)?(?:changed|set|reset|updated|rotated)[ \t]+to)\b[ \t]*:?)`

/** Words that follow "the password is" in prose and are no password. */
const PROSE_WORDS = new Set([
  'required',
  'incorrect',
  'correct',
  'invalid',
  'valid',
  'wrong',
  'expired',
  'missing',
  'needed',
  'mandatory',
  'stored',
  'saved',
  'hashed',
  'encrypted',
  'rotated',
  'revoked',
  'blank',
  'unset',
  'weak',
  'strong',
  'changed',
  'reset',
  'set',
  'used',
  'sent',
  'shown',
  'visible',
])

/** Every type `proseLabel` gives. */
const PROSE_LABELS = ['password', 'pin', 'api-key', 'access-key', 'private-key', 'secret', 'token']

function proseLabel(key: string): string {
  const k = key.toLowerCase()
  if (k.startsWith('pass')) return 'password'
  if (k.startsWith('pin')) return 'pin'
  if (/key/.test(k))
    return k.startsWith('api') ? 'api-key' : k.startsWith('access') ? 'access-key' : k.startsWith('private') ? 'private-key' : 'secret'
  if (/token/.test(k)) return 'token'
  return 'secret'
}

/** `max tokens is 4096`, `input token is …`: the word before names a count or cursor (NOT_SECRET_BEFORE_TOKEN), not a credential. */
function countBefore(text: string, at: number): boolean {
  const before = /([A-Za-z]+)[ \t_-]*$/.exec(text.slice(Math.max(0, at - 30), at))
  return before !== null && NOT_SECRET_BEFORE_TOKEN.has(before[1]!.toLowerCase())
}

/**
 * A value a sentence states: not a placeholder, path or code; 4+ characters; a plain lowercase word only when 12+
 * letters long (6+ quoted); all digits only for a password or PIN (`the token is 4096` is a count).
 */
function proseValueOk(value: string, quoted: boolean, label: string): boolean {
  if (value.length < 4 || !keyedValueOk(value)) return false
  if (/^\d+$/.test(value) && label !== 'password' && label !== 'pin') return false
  const lower = value.toLowerCase()
  if (PROSE_WORDS.has(lower) || PLACEHOLDER_WORDS.has(lower)) return false
  if (/^(?:the|a|an|not|now|still|also|in|on|at|to|stored|kept|being)$/i.test(value)) return false
  const plainWord = /^[A-Za-z]+$/.test(value) && !/[A-Z]/.test(value.slice(1))
  return !plainWord || value.length >= 12 || (quoted && value.length >= 6)
}

// ---------------------------------------------------------------------------
// The table

/**
 * Every detector, highest priority first: when two matches overlap, the
 * earlier entry wins (so `GITHUB_TOKEN=ghp_…` says `github-token`, not
 * `token`), and a later match keeps only what the winner left uncovered.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    id: 'hand-made-placeholder',
    type: 'secret',
    regex: /\[REDACTED:[^\s[\]]{1,512}\]/dg,
    description:
      'Text in the shape of a placeholder but with a type redaction never writes (`[REDACTED:hunter2]`, `[REDACTED:sk_live_…]`): a value typed by hand inside the brackets, which may be the secret itself. Whole placeholders redaction writes are left alone.',
    reference: "mnemo's own placeholder format: this table's types and the labels of secret-like keys.",
    accept: (s) => !placeholderTypes().has(s.slice('[REDACTED:'.length, -1)),
  },
  {
    id: 'gcp-service-account-key',
    type: 'gcp-service-account-key',
    regex:
      /"private_key\\*"[ \t]*:[ \t]*\\*"(?<secret>-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY-----(?:[^"\\]|\\[^"])*?-----END[ A-Z0-9]{0,40}PRIVATE KEY-----(?:\\\\?n)?)/dg,
    description: 'The `private_key` field of a Google Cloud service-account JSON key file (PEM with `\\n` escapes).',
    reference: 'Google Cloud IAM docs, "Create and delete service account keys": JSON key file fields type, private_key, client_email.',
    // The rest of the key file sits within a few KB of its private_key field.
    accept: (_s, m, text) =>
      /service_account|gserviceaccount\.com/.test(text.slice(Math.max(0, m.index - 4096), m.index + m[0].length + 4096)),
  },
  {
    id: 'private-key',
    type: 'private-key',
    regex: PEM_BEGIN,
    description:
      'A PEM private-key block, BEGIN line to END line (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP); an unclosed one to the end of its body.',
    reference: 'RFC 7468 (textual encodings of PKIX, PKCS, CMS), RFC 4880 §6.2 (OpenPGP armor).',
    extend: pemEnd,
  },
  {
    id: 'aws-access-key',
    type: 'aws-access-key',
    regex: rx(String.raw`${W}(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])`),
    description: 'AWS access key id: AKIA (long-term) or ASIA (temporary) and 16 uppercase base32 characters.',
    reference: 'AWS IAM User Guide, "Understanding unique ID prefixes".',
  },
  {
    id: 'aws-secret-key',
    type: 'aws-secret-key',
    regex:
      /(?<![A-Za-z0-9])(?:aws_?secret(?:_?access)?_?key|secret_?access_?key)\\*["']?[ \t]*(?:=>|[:=])[ \t]*\\*["']?(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
    description: 'AWS secret access key (40 base64 characters) when labelled: aws_secret_access_key, SecretAccessKey, AWS_SECRET_KEY.',
    reference: 'AWS CLI User Guide, "Configuration and credential file settings".',
  },
  {
    id: 'gcp-api-key',
    type: 'gcp-api-key',
    regex: rx(String.raw`${W}AIza[0-9A-Za-z_-]{35}(?![\w-])`),
    description: 'Google Cloud / Firebase API key: AIza and 35 base64url characters.',
    reference: 'Google Cloud docs, "Manage API keys".',
  },
  {
    id: 'azure-storage-key',
    type: 'azure-storage-key',
    regex: /(?<![\w])(?:AccountKey|SharedAccessKey)=(?<secret>[A-Za-z0-9+/]{20,}={0,2})/dg,
    description: 'Azure Storage account key or Service Bus/Event Hubs shared access key inside a connection string.',
    reference: 'Azure Storage docs, "Configure Azure Storage connection strings"; Azure Service Bus SAS docs.',
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    id: 'azure-sas-token',
    type: 'azure-sas-token',
    regex: /[?&]sig=(?<secret>[A-Za-z0-9%+/]{20,}(?:%3[Dd]|=){0,2})/dg,
    description: 'The signature of an Azure shared access signature (SAS) URL (`&sig=`).',
    reference: 'Azure Storage docs, "Create a service SAS": the sig parameter.',
  },
  {
    id: 'anthropic-api-key',
    type: 'anthropic-api-key',
    regex: rx(String.raw`${W}sk-ant-[A-Za-z0-9_-]{20,}`),
    description: 'Anthropic API or admin key: sk-ant-api03-…, sk-ant-admin01-….',
    reference: 'Anthropic API docs, "Authentication" (x-api-key header).',
  },
  {
    id: 'openai-api-key',
    type: 'openai-api-key',
    regex: rx(String.raw`${W}sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|(?!ant-)[A-Za-z0-9]{20,}(?![\w-]))`),
    description: 'OpenAI API key: sk-proj-…, sk-svcacct-…, sk-admin-… or legacy sk- and 20+ alphanumerics.',
    reference: 'OpenAI API reference, "Authentication".',
    accept: hasDigitAndLetter,
  },
  {
    id: 'github-token',
    type: 'github-token',
    regex: rx(String.raw`${W}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})(?![A-Za-z0-9_])`),
    description: 'GitHub token: ghp_ (classic PAT), gho_ (OAuth), ghu_/ghs_ (app user/server), ghr_ (refresh), github_pat_ (fine-grained).',
    reference: 'GitHub Docs, "About authentication to GitHub": GitHub token formats.',
  },
  {
    id: 'gitlab-token',
    type: 'gitlab-token',
    regex: rx(String.raw`${W}gl(?:pat|ptt|dt|rt|cbt|oas|soat)-[A-Za-z0-9_-]{20,}`),
    description: 'GitLab token: glpat- (personal/project/group access), glptt- (pipeline trigger), gldt- (deploy), glrt- (runner).',
    reference: 'GitLab docs, "GitLab token overview": token prefixes.',
  },
  {
    id: 'slack-webhook',
    type: 'slack-webhook',
    regex: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/(?<secret>[A-Za-z0-9_/-]{8,})/dg,
    description: 'Slack incoming-webhook or workflow URL; the host and route stay, the path secret goes.',
    reference: 'Slack API docs, "Sending messages using incoming webhooks".',
  },
  {
    id: 'slack-token',
    type: 'slack-token',
    regex: rx(String.raw`${W}xox[abposre]-[A-Za-z0-9-]{10,}`),
    description: 'Slack token: xoxb- (bot), xoxp- (user), xoxa- (app), xoxr- (refresh), xoxs-, xoxo-, xoxe-.',
    reference: 'Slack API docs, "Token types".',
  },
  {
    id: 'stripe-key',
    type: 'stripe-key',
    regex: rx(String.raw`${W}(?:(?:sk|rk)_(?:live|test)|whsec)_[A-Za-z0-9]{10,}`),
    description:
      'Stripe secret (sk_live_, sk_test_), restricted (rk_live_, rk_test_) or webhook signing (whsec_) key. Publishable pk_ keys are public and kept.',
    reference: 'Stripe docs, "API keys": key prefixes.',
  },
  {
    id: 'npm-token',
    type: 'npm-token',
    regex: rx(String.raw`${W}npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])`),
    description: 'npm access token: npm_ and 36 alphanumerics.',
    reference: 'npm Docs, "About access tokens"; GitHub blog, "npm token format" (2021).',
  },
  {
    id: 'twilio-api-key',
    type: 'twilio-api-key',
    regex: rx(String.raw`${W}SK[0-9a-fA-F]{32}(?![A-Za-z0-9])`),
    description: 'Twilio API key SID: SK and 32 hex digits (a labelled auth token is caught by the keyed entries).',
    reference: 'Twilio docs, "API keys overview".',
  },
  {
    id: 'sendgrid-api-key',
    type: 'sendgrid-api-key',
    regex: rx(String.raw`${W}SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![\w-])`),
    description: 'SendGrid API key: SG. + 22 + . + 43 base64url characters.',
    reference: 'Twilio SendGrid docs, "API keys".',
  },
  {
    id: 'jwt',
    type: 'jwt',
    regex: rx(String.raw`${W}eyJ${B64URL}{10,}\.${B64URL}{10,}\.${B64URL}*`),
    description: 'JSON Web Token: three base64url segments, the header starting eyJ (`{"`).',
    reference: 'RFC 7519 (JWT), RFC 7515 §7.1 (JWS compact serialization).',
  },
  {
    id: 'authorization-header',
    type: 'bearer-token',
    regex:
      /(?<![\w-])(?:Proxy-)?Authorization\\*["']?[ \t]*[:=][ \t]*\\*["']?[ \t]*(?<scheme>Bearer|Basic|Token|Bot)[ \t]+(?<secret>[A-Za-z0-9\-._~+/]+=*)/dgi,
    description:
      'The credential of an Authorization header (Bearer, Token, Bot: bearer-token; Basic: basic-auth); header name and scheme stay.',
    reference: 'RFC 9110 §11.6.2 (Authorization), RFC 6750 §2.1 (Bearer), RFC 7617 (Basic).',
    label: (m) => (m.groups?.scheme?.toLowerCase() === 'basic' ? 'basic-auth' : 'bearer-token'),
    accept: (s) => !isPlaceholderValue(s) && (s.length >= 16 || /[^a-z]/.test(s)),
  },
  {
    id: 'bearer-token',
    type: 'bearer-token',
    regex: /(?<![\w-])Bearer[ \t]+(?<secret>[A-Za-z0-9\-._~+/]{20,}=*)/dg,
    description: 'A bearer token outside an Authorization header (`Bearer <20+ chars with letters and digits>`).',
    reference: 'RFC 6750 §2.1 (b64token syntax).',
    accept: (s) => hasDigitAndLetter(s) && !isPlaceholderValue(s),
  },
  {
    id: 'url-password',
    type: 'url-password',
    regex: /(?<![\w+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/[^\s:/?#@"'<>\\[\]]{0,200}:(?<secret>[^\s/?#"'<>\\[\]]{1,500})@(?=[\w[])/dg,
    description: 'The password of userinfo in a URL (`scheme://user:pass@host`); scheme, user and host stay.',
    reference: 'RFC 3986 §3.2.1 (userinfo).',
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    id: 'curl-user',
    type: 'password',
    regex: /\bcurl\b[^\r\n|;]{0,400}?[ \t](?:-u|--user)(?:[ \t]+|=)?(?<q>(?:\\*["'])?)[^\s:"'\\]{1,200}:(?<secret>[^\s"'\\]+)\k<q>/dg,
    description: 'The password of `curl -u user:pass` / `--user user:pass`; the user stays.',
    reference: 'curl manual, --user option.',
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    id: 'keyed-quoted',
    type: 'keyed-quoted',
    regex: new RegExp(
      String.raw`${KEY}\\*["']?\]?(?:[ \t]*:[ \t]*[A-Za-z_][\w.]{0,40}(?:\[[\w., |]{0,60}\])?[ \t]*=|[ \t]*(?:=>|:=|[:=]))[ \t]*${QUOTED}`,
      'dg',
    ),
    description:
      'A quoted literal assigned to a secret-like key: JSON `"password": "…"`, YAML/JS `token: \'…\'`, `API_KEY="…"`, `password := "…"`, `"secret" => "…"`, `api_key: str = "…"`. Key and quotes stay.',
    reference: 'ECMA-404 (JSON), YAML 1.2, POSIX shell quoting; key names per secretKeyType.',
    label: keyLabel,
    accept: keyAccept,
  },
  {
    id: 'keyed-env',
    type: 'keyed-env',
    regex: new RegExp(String.raw`${KEY}=(?<secret>${BARE})${BARE_END}`, 'dg'),
    description:
      'An unquoted env/shell/query assignment to a secret-like name: `DB_PASSWORD=hunter2`, `export TOKEN=…`, `?access_token=…&`. A value followed by `(`, `)` or `,` is code (`f(token=token)`) and is kept.',
    reference: 'POSIX shell assignment, dotenv files, RFC 3986 query strings.',
    label: keyLabel,
    accept: keyAccept,
  },
  {
    id: 'keyed-ini',
    type: 'keyed-ini',
    regex: new RegExp(
      String.raw`(?:^|(?<=\\n))[ \t]*(?:export[ \t]+)?${KEY}(?:[ \t]+=[ \t]*|=[ \t]+)(?<secret>${BARE})(?=[ \t]*(?:[#;][^\r\n]*)?(?:$|\\+[nr]))`,
      'dgm',
    ),
    description:
      'An INI/TOML-style line `password = hunter2` (spaces around `=`, value alone to the end of the line). Code identifiers (`user_input`, `someVar`) are kept.',
    reference: 'INI files (my.cnf, pip.conf, .pypirc), TOML 1.0.',
    label: keyLabel,
    accept: (s, m, text) => keyAccept(s, m, text) && !isIdentifierLike(s),
  },
  {
    id: 'keyed-colon',
    type: 'keyed-colon',
    regex: new RegExp(
      String.raw`(?<!(?<!\\)[^\s"'])${KEY}[ \t]*:[ \t]+(?<secret>[^\s"'\x60\\;,|(){}\[\]<>]+)(?=[ \t]*(?:#[^\r\n]*)?(?:[\r\n"']|\\+[nrt"']|$))`,
      'dg',
    ),
    description:
      'An unquoted YAML value or HTTP header: `password: hunter2`, `-H "X-Api-Key: …"`; one word ending the line (or the quoted argument). Type names (`token: string`) and code (`token: getToken(),`) are kept.',
    reference: 'YAML 1.2 plain scalars; RFC 9110 §5 (header fields).',
    label: keyLabel,
    accept: keyAccept,
  },
  {
    id: 'keyed-cli',
    type: 'keyed-cli',
    regex: new RegExp(
      String.raw`(?<![\w-])--(?<key>[A-Za-z][\w-]{0,60})(?:=|[ \t]+)(?:${QUOTED}|(?<bare>${BARE})(?=[\s;&|"'\x60\\<>)]|$))`,
      'dg',
    ),
    description:
      'A command-line option with a secret-like name: `--password hunter2`, `--token=…`, `--api-key "…"`. `-p…` is too ambiguous and skipped; a space-separated all-lowercase word under 16 chars reads as prose (`the --token flag`) and is kept.',
    reference: 'POSIX utility argument syntax, GNU long options.',
    label: keyLabel,
    accept: (s, m, text) => {
      if (!keyAccept(s, m, text) || s.startsWith('-')) return false
      const spacedWord = m.groups?.bare !== undefined && m[0][2 + (m.groups.key?.length ?? 0)] !== '='
      return !spacedWord || /[^a-z]/.test(s) || s.length >= 16
    },
  },
  {
    id: 'prose-secret',
    type: 'prose-secret',
    regex: new RegExp(
      String.raw`${PROSE_KEY}${PROSE_LINK}${PROSE_VERB}[ \t]*(?:${QUOTED}|\x60?(?<bare>[^\s"'\x60,;()<>\[\]{}]*[^\s"'\x60,;()<>\[\]{}.!?:])\x60?(?=[.!?:,;)]*(?:\s|$|["'\x60])))`,
      'dgi',
    ),
    description:
      'A value a sentence says a credential is: "the staging password is Hunter2-xyz", "my GitHub token was ghx_…", "the API key for prod: k3y…", "the PIN is 4821", "password changed to S3cret!". The key word comes right before the verb (`is`, `was`, `are`, `=`, `:`, `set/changed to`; "for/of/on <one or two words>" may sit between), so "the password field is required", "token count is 5" and "reset your password" are not values. A bare all-letter word under 12 characters with no capital inside is prose ("the password is incorrect", "the token is expired") and is kept; so are placeholders, paths and code references.',
    reference: 'Public reports agentmemory#911 and mem0#6817 (passwords stated in prose were stored and served); issue 17 item 1.',
    label: (m) => proseLabel(m.groups?.key ?? ''),
    accept: (s, m, text) =>
      proseValueOk(s, m.groups?.bare === undefined, proseLabel(m.groups?.key ?? '')) &&
      !countBefore(text, m.index) &&
      !insidePlaceholder(text, m.index),
  },
]

// ---------------------------------------------------------------------------
// Matching

const PRIVATE_SPAN = /<private\s*>[\s\S]*?(?:<\/private\s*>|$)/gi
/** A placeholder already in the text (a second pass, or text redacted before). */
/** Span type of a placeholder already in the text: it is taken (nothing may overlap it) but never replaced. */
const KEEP = '\0keep'

function secretRange(m: RegExpExecArray): [number, number] {
  const groups = m.indices?.groups
  const range = groups?.secret ?? groups?.secret2 ?? groups?.bare
  return range ?? [m.index, m.index + m[0].length]
}

/**
 * Adds one pattern's candidates (sorted, disjoint) to `taken` (sorted,
 * disjoint, all from higher-priority patterns). A candidate that overlaps
 * keeps only the pieces `taken` leaves uncovered, and only when they still
 * hold a secret's worth of characters (`MIN_LEFTOVER`, so `Bearer ` or
 * punctuation around a vendor token is left alone). Linear in both lists.
 */
function mergeCandidates(taken: SecretSpan[], candidates: SecretSpan[], text: string, dropOverlapping = false): SecretSpan[] {
  if (candidates.length === 0) return taken
  const added: SecretSpan[] = []
  let first = 0
  for (const c of candidates) {
    while ((taken[first]?.end ?? Infinity) <= c.start) first++
    if (dropOverlapping && (taken[first]?.start ?? Infinity) < c.end) continue
    const pieces: SecretSpan[] = []
    let cursor = c.start
    let overlapped = false
    for (let k = first; k < taken.length; k++) {
      const t = taken[k]
      if (!t || t.start >= c.end) break
      overlapped = true
      if (t.start > cursor) pieces.push({ type: c.type, start: cursor, end: t.start })
      cursor = Math.max(cursor, t.end)
    }
    if (!overlapped) {
      added.push(c)
      continue
    }
    if (cursor < c.end) pieces.push({ type: c.type, start: cursor, end: c.end })
    const counts = pieces.map((p) => secretChars(text.slice(p.start, p.end)))
    if (counts.reduce((a, b) => a + b, 0) < MIN_LEFTOVER) continue
    pieces.forEach((p, i) => {
      if ((counts[i] ?? 0) > 0) added.push(p)
    })
  }
  const merged: SecretSpan[] = []
  let a = 0
  let b = 0
  while (a < taken.length || b < added.length) {
    const x = taken[a]
    const y = added[b]
    if (y === undefined || (x !== undefined && x.start <= y.start)) {
      if (x) merged.push(x)
      a++
    } else {
      merged.push(y)
      b++
    }
  }
  return merged
}

/**
 * Every secret and `<private>` span in `text`, sorted by start, never
 * overlapping. Offsets cover only what `redactSecrets` replaces (the value,
 * not its key, quotes, scheme or URL user).
 *
 * @param patterns - Detectors to run, highest priority first; default the whole table.
 * @throws MnemoError INVALID_INPUT when a pattern's regex lacks the g or d flag.
 */
export function findSecrets(text: string, patterns: readonly SecretPattern[] = SECRET_PATTERNS): SecretSpan[] {
  let taken: SecretSpan[] = []
  if (text.length === 0) return taken
  if (/<private/i.test(text)) {
    PRIVATE_SPAN.lastIndex = 0
    for (let m = PRIVATE_SPAN.exec(text); m; m = PRIVATE_SPAN.exec(text)) {
      taken.push({ type: 'private', start: m.index, end: m.index + m[0].length })
      if (m[0].length === 0) PRIVATE_SPAN.lastIndex++
    }
  }
  // Placeholders already in the text are taken first: no pattern may rewrite one or any part of one (curl-user
  // reading `-u [REDACTED:stripe-key]:` as user `[REDACTED` and password `stripe-key]:` nested a placeholder).
  if (text.includes('[')) taken = mergeCandidates(taken, placeholderSpans(text), text, true)
  for (const pattern of patterns) {
    const re = pattern.regex
    if (!re.global || !re.hasIndices) {
      throw invalidInput(
        'patterns',
        `secret pattern ${pattern.id} needs a regex with the g and d flags`,
        `write /…/dg, not /${re.source}/${re.flags}`,
      )
    }
    let candidates: SecretSpan[]
    try {
      candidates = patternCandidates(pattern, text)
    } catch (error) {
      // V8's regex engine backtracks through a stack: a match millions of characters long (a 20 MB token-shaped
      // run) overflows it. Such text is scanned in overlapping windows instead, so it is redacted, not refused.
      if (!(error instanceof RangeError)) throw error
      candidates = windowedCandidates(pattern, text)
    }
    taken = mergeCandidates(taken, candidates, text)
  }
  return taken.filter((t) => t.type !== KEEP)
}

/** Where one pattern matches `text` and its `accept` agrees, in order. */
function patternCandidates(pattern: SecretPattern, text: string): SecretSpan[] {
  const re = pattern.regex
  re.lastIndex = 0
  let rescanBudget = text.length
  const candidates: SecretSpan[] = []
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++
      continue
    }
    let [start, end] = secretRange(m)
    if (pattern.extend) {
      end = pattern.extend(text, m.index + m[0].length)
      if (end < 0) continue
      re.lastIndex = Math.max(re.lastIndex, end)
    }
    // Never end inside an escape sequence: a span ending in an odd run of backslashes gives the last one back.
    let slashes = 0
    while (end - slashes > start && text.charCodeAt(end - slashes - 1) === 92) slashes++
    if (slashes % 2 === 1) end--
    if (end <= start) continue
    const secret = text.slice(start, end)
    if (pattern.accept && !pattern.accept(secret, m, text)) {
      // A rejected match may hide others inside it (a quoted value holding `API_TOKEN=\"…\"`): resume at its
      // value, within a budget of one text length per pattern so nested rejections stay linear (`a=a=a=…`).
      const resume = Math.max(m.index + 1, start)
      if (re.lastIndex - resume <= rescanBudget) {
        rescanBudget -= re.lastIndex - resume
        re.lastIndex = resume
      }
      continue
    }
    candidates.push({ type: pattern.label ? pattern.label(m) : pattern.type, start, end })
  }
  return candidates
}

/** Scan windows: large enough for any secret, small enough for V8's regex backtracking stack. */
const SCAN_WINDOW = 1 << 20
const SCAN_OVERLAP = 1 << 16

/**
 * `patternCandidates` over windows of `SCAN_WINDOW` characters, each read with `SCAN_OVERLAP` more so a secret
 * starting near its end is found whole; a span starting inside the last kept one is trimmed to follow it.
 */
function windowedCandidates(pattern: SecretPattern, text: string): SecretSpan[] {
  const out: SecretSpan[] = []
  for (let at = 0; at < text.length; at += SCAN_WINDOW) {
    const window = text.slice(at, at + SCAN_WINDOW + SCAN_OVERLAP)
    for (const c of patternCandidates(pattern, window)) {
      if (c.start >= SCAN_WINDOW) break
      let end = c.end + at
      // A token cut by the window's end goes on in the text: the whole run is the secret, not its first window.
      if (c.end === window.length) while (end < text.length && TOKEN_CHAR.test(text[end]!)) end++
      const span = { type: c.type, start: Math.max(c.start + at, out.at(-1)?.end ?? 0), end }
      if (span.end > span.start) out.push(span)
    }
  }
  return out
}

/** A character a token can continue with (base64, base64url, URL-safe and key alphabets). */
const TOKEN_CHAR = /[\w\-+/=.~%]/

/**
 * The placeholders redaction writes: `[PRIVATE]`, `[REDACTED]`, and `[REDACTED:<type>]` with a type it
 * writes (a pattern's, a key's, `basic-auth`). Anything else in that shape is text to scan: a key typed
 * inside it by hand (`[REDACTED:sk_live_…]`) is still a key.
 */
function placeholderSpans(text: string): SecretSpan[] {
  const out: SecretSpan[] = []
  PLACEHOLDER.lastIndex = 0
  for (let m = PLACEHOLDER.exec(text); m; m = PLACEHOLDER.exec(text)) {
    const type = m.groups?.['type']
    if (type === undefined || placeholderTypes().has(type)) out.push({ type: KEEP, start: m.index, end: m.index + m[0].length })
  }
  return out
}

/** Whether `text` holds a placeholder redaction writes (see `placeholderSpans`). */
function holdsPlaceholder(text: string): boolean {
  return text.includes('[') && placeholderSpans(text).length > 0
}

let knownTypes: ReadonlySet<string> | undefined
/** Every type a placeholder can carry: the table's, the labels of secret-like keys, and the fixed ones. */
function placeholderTypes(): ReadonlySet<string> {
  knownTypes ??= new Set([
    ...SECRET_PATTERNS.map((p) => p.type),
    ...SINGLE_KEYS.values(),
    ...PAIR_KEYS.values(),
    ...PROSE_LABELS,
    'password',
    'token',
    'secret',
    'basic-auth',
    'bearer-token',
  ])
  return knownTypes
}

/** Replaces spans with `[REDACTED:<type>]` (or `[PRIVATE]`). */
function applySpans(text: string, spans: readonly SecretSpan[]): string {
  if (spans.length === 0) return text
  let out = ''
  let cursor = 0
  for (const s of spans) {
    out += text.slice(cursor, s.start) + (s.type === 'private' ? '[PRIVATE]' : `[REDACTED:${s.type}]`)
    cursor = s.end
  }
  return out + text.slice(cursor)
}

/**
 * The capture `Redactor`: replaces secret-shaped values with
 * `[REDACTED:<type>]` and `<private>` spans with `[PRIVATE]`, keeping
 * everything around them. Pure and idempotent.
 */
export function redactSecrets(text: string): string {
  let prev = text
  let out = applySpans(text, findSecrets(text))
  // A placeholder can expose a neighbour the replaced text hid (`-----END PRIVATE KEY-----AKIA…`: the key no
  // longer follows a word character), so repeat while a pass still changes something: idempotent by construction.
  // A later pass never touches a placeholder (findSecrets takes them first), so types and brackets stay whole.
  for (let pass = 0; pass < 8 && out !== prev; pass++) {
    prev = out
    out = applySpans(out, findSecrets(out))
  }
  return out
}

/** `redactSecrets` with a chosen subset of the table (one entry in tests, or a configured list). */
export function redactWith(text: string, patterns: readonly SecretPattern[]): string {
  return applySpans(text, findSecrets(text, patterns))
}

const AUTH_SCHEME_VALUE = /^(Bearer|Basic|Token|Bot)([ \t]+)(\S+)$/i

/** The replacement for a string stored under a secret-like key. */
function redactKeyedString(keyType: string, value: string): string {
  if (isPlaceholderValue(value)) {
    // A placeholder-looking value with a secret inside (`[REDACTED:sk_live_…]` typed by hand) is the key's secret.
    const scanned = redactSecrets(value)
    if (scanned === value || holdsPlaceholder(value)) return scanned
  }
  if (keyType === 'auth') {
    const m = AUTH_SCHEME_VALUE.exec(value)
    if (m) {
      const scheme = m[1] ?? ''
      return `${scheme}${m[2] ?? ' '}[REDACTED:${scheme.toLowerCase() === 'basic' ? 'basic-auth' : 'bearer-token'}]`
    }
  }
  return `[REDACTED:${keyType}]`
}

/**
 * Redacts a JSON-like value: every string through `redactSecrets`, and every
 * string stored under a secret-like key (`{password: 'x'}`) replaced whole
 * (`{password: '[REDACTED:password]'}`). Keys, numbers, booleans and shape are
 * untouched. Returns a new value; never mutates the input.
 */
export function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value)
  if (Array.isArray(value)) return value.map((v) => redactValue(v))
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const keyType = typeof v === 'string' ? secretKeyType(k) : undefined
      // defineProperty, not assignment: a `__proto__` key (valid JSON) must stay a key, not become the prototype.
      Object.defineProperty(out, k, {
        value: keyType !== undefined && typeof v === 'string' ? redactKeyedString(keyType, v) : redactValue(v),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return out
  }
  return value
}
