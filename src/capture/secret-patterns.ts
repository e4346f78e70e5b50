/**
 * The redaction table, `SECRET_PATTERNS`: every detector `findSecrets` runs,
 * highest priority first, each with its format's reference. Beside it, the
 * placeholders redaction writes (`[REDACTED:<type>]` with a type from this
 * table or a key label, `[PRIVATE]`) and how they are recognised, since the
 * table's filters must never take a placeholder for a secret.
 */

import { SECRET_KEY_END, SECRET_KEY_LABELS, secretKeyType } from './secret-keys.js'
import { countBefore, PROSE_KEY, PROSE_LABELS, PROSE_LINK, PROSE_VERB, proseLabel, proseWordOk } from './secret-prose.js'
import { B64URL, BARE, BARE_END, KEY, PEM_BEGIN, pemEnd, QUOTED, rx, W } from './secret-regex.js'
import { hasDigitAndLetter, isCodeReference, isFilePath, isIdentifierLike, placeholderShape } from './secret-values.js'

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
  /**
   * A cheap necessary condition: every text in which `regex` has a match that `accept` takes also matches
   * `trigger` (a literal the regex requires, or the key words `accept` requires), so `findSecrets` skips the
   * entry on text that does not: the same spans, without the scan. Not global (it is only tested), and written
   * with the same case flag as `regex`, so both read the text the same way. Entries share a trigger object to
   * have it tested once per text.
   */
  readonly trigger?: RegExp
}

const PLACEHOLDER = /\[(?:REDACTED(?::(?<type>[\w-]+))?|PRIVATE)\]/g
/** Span type of a placeholder already in the text: it is taken (nothing may overlap it) but never replaced. */
export const KEEP = '\0keep'

/**
 * The placeholders redaction writes: `[PRIVATE]`, `[REDACTED]`, and `[REDACTED:<type>]` with a type it
 * writes (a pattern's, a key's, `basic-auth`). Anything else in that shape is text to scan: a key typed
 * inside it by hand (`[REDACTED:sk_live_…]`) is still a key.
 */
export function placeholderSpans(text: string): SecretSpan[] {
  const out: SecretSpan[] = []
  PLACEHOLDER.lastIndex = 0
  for (let m = PLACEHOLDER.exec(text); m; m = PLACEHOLDER.exec(text)) {
    const type = m.groups?.['type']
    if (type === undefined || placeholderTypes().has(type)) out.push({ type: KEEP, start: m.index, end: m.index + m[0].length })
  }
  return out
}

/** Whether `text` holds a placeholder redaction writes (see `placeholderSpans`). */
export function holdsPlaceholder(text: string): boolean {
  return text.includes('[') && placeholderSpans(text).length > 0
}

let knownTypes: ReadonlySet<string> | undefined
/** Every type a placeholder can carry: the table's, the labels of secret-like keys, and the fixed ones. */
function placeholderTypes(): ReadonlySet<string> {
  knownTypes ??= new Set([
    ...SECRET_PATTERNS.map((p) => p.type),
    ...SECRET_KEY_LABELS,
    ...PROSE_LABELS,
    'password',
    'token',
    'secret',
    'basic-auth',
    'bearer-token',
  ])
  return knownTypes
}

/** Values that stand for a secret without being one: masks, templates, `<your-token>`, `null`. */
export function isPlaceholderValue(value: string): boolean {
  const t = value.trim()
  if (t === '') return true
  // Already (partly) redacted: what redaction left around a placeholder stays, so a second pass changes nothing.
  if (holdsPlaceholder(t)) return true
  // `[REDACTED:hunter2]` is no placeholder redaction writes (see placeholderSpans): a value, not a template.
  if (/^\[REDACTED:/.test(t)) return false
  return placeholderShape(t)
}

function keyedValueOk(value: string): boolean {
  return !isPlaceholderValue(value) && !isFilePath(value) && !isCodeReference(value)
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

/**
 * The trigger of the key-driven entries keyed-quoted, keyed-env, keyed-ini and keyed-colon: `accept` needs
 * `secretKeyType(key)`, so the key ends with `SECRET_KEY_END` (in some case: the key is ASCII, `[A-Za-z_][\w.-]*`,
 * and the regexes have no `u` flag), and each of these entries requires after its key what this requires: backslashes,
 * a quote and a `]` (each optional), blanks, then `:` or `=`.
 */
const KEYED_TRIGGER = new RegExp(String.raw`(?:${SECRET_KEY_END})\\*["']?\]?[ \t]*[:=]`, 'i')
/** The trigger of keyed-cli: `--`, the option's name (`[A-Za-z][\w-]{0,60}`) ending with `SECRET_KEY_END`, then `=` or a blank. */
const CLI_TRIGGER = new RegExp(String.raw`--(?:[A-Za-z][\w-]{0,59})?(?:${SECRET_KEY_END})[= \t]`, 'i')

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
    trigger: /\[REDACTED:/,
    regex: /\[REDACTED:[^\s[\]]{1,512}\]/dg,
    description:
      'Text in the shape of a placeholder but with a type redaction never writes (`[REDACTED:hunter2]`, `[REDACTED:sk_live_…]`): a value typed by hand inside the brackets, which may be the secret itself. Whole placeholders redaction writes are left alone.',
    reference: "mnemo's own placeholder format: this table's types and the labels of secret-like keys.",
    accept: (s) => !placeholderTypes().has(s.slice('[REDACTED:'.length, -1)),
  },
  {
    id: 'gcp-service-account-key',
    type: 'gcp-service-account-key',
    trigger: /"private_key/,
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
    trigger: /-----BEGIN/,
    regex: PEM_BEGIN,
    description:
      'A PEM private-key block, BEGIN line to END line (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP); an unclosed one to the end of its body.',
    reference: 'RFC 7468 (textual encodings of PKIX, PKCS, CMS), RFC 4880 §6.2 (OpenPGP armor).',
    extend: pemEnd,
  },
  {
    id: 'aws-access-key',
    type: 'aws-access-key',
    trigger: /AKIA|ASIA|ABIA|ACCA|A3T/,
    regex: rx(String.raw`${W}(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])`),
    description: 'AWS access key id: AKIA (long-term) or ASIA (temporary) and 16 uppercase base32 characters.',
    reference: 'AWS IAM User Guide, "Understanding unique ID prefixes".',
  },
  {
    id: 'aws-secret-key',
    type: 'aws-secret-key',
    trigger: /secret/i,
    regex:
      /(?<![A-Za-z0-9])(?:aws_?secret(?:_?access)?_?key|secret_?access_?key)\\*["']?[ \t]*(?:=>|[:=])[ \t]*\\*["']?(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
    description: 'AWS secret access key (40 base64 characters) when labelled: aws_secret_access_key, SecretAccessKey, AWS_SECRET_KEY.',
    reference: 'AWS CLI User Guide, "Configuration and credential file settings".',
  },
  {
    id: 'gcp-api-key',
    type: 'gcp-api-key',
    trigger: /AIza/,
    regex: rx(String.raw`${W}AIza[0-9A-Za-z_-]{35}(?![\w-])`),
    description: 'Google Cloud / Firebase API key: AIza and 35 base64url characters.',
    reference: 'Google Cloud docs, "Manage API keys".',
  },
  {
    id: 'azure-storage-key',
    type: 'azure-storage-key',
    trigger: /(?:Account|SharedAccess)Key=/,
    regex: /(?<![\w])(?:AccountKey|SharedAccessKey)=(?<secret>[A-Za-z0-9+/]{20,}={0,2})/dg,
    description: 'Azure Storage account key or Service Bus/Event Hubs shared access key inside a connection string.',
    reference: 'Azure Storage docs, "Configure Azure Storage connection strings"; Azure Service Bus SAS docs.',
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    id: 'azure-sas-token',
    type: 'azure-sas-token',
    trigger: /[?&]sig=/,
    regex: /[?&]sig=(?<secret>[A-Za-z0-9%+/]{20,}(?:%3[Dd]|=){0,2})/dg,
    description: 'The signature of an Azure shared access signature (SAS) URL (`&sig=`).',
    reference: 'Azure Storage docs, "Create a service SAS": the sig parameter.',
  },
  {
    id: 'anthropic-api-key',
    type: 'anthropic-api-key',
    trigger: /sk-ant-/,
    regex: rx(String.raw`${W}sk-ant-[A-Za-z0-9_-]{20,}`),
    description: 'Anthropic API or admin key: sk-ant-api03-…, sk-ant-admin01-….',
    reference: 'Anthropic API docs, "Authentication" (x-api-key header).',
  },
  {
    id: 'openai-api-key',
    type: 'openai-api-key',
    trigger: /sk-/,
    regex: rx(String.raw`${W}sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|(?!ant-)[A-Za-z0-9]{20,}(?![\w-]))`),
    description: 'OpenAI API key: sk-proj-…, sk-svcacct-…, sk-admin-… or legacy sk- and 20+ alphanumerics.',
    reference: 'OpenAI API reference, "Authentication".',
    accept: hasDigitAndLetter,
  },
  {
    id: 'github-token',
    type: 'github-token',
    trigger: /gh[pousr]_|github_pat_/,
    regex: rx(String.raw`${W}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})(?![A-Za-z0-9_])`),
    description: 'GitHub token: ghp_ (classic PAT), gho_ (OAuth), ghu_/ghs_ (app user/server), ghr_ (refresh), github_pat_ (fine-grained).',
    reference: 'GitHub Docs, "About authentication to GitHub": GitHub token formats.',
  },
  {
    id: 'gitlab-token',
    type: 'gitlab-token',
    trigger: /gl(?:pat|ptt|dt|rt|cbt|oas|soat)-/,
    regex: rx(String.raw`${W}gl(?:pat|ptt|dt|rt|cbt|oas|soat)-[A-Za-z0-9_-]{20,}`),
    description: 'GitLab token: glpat- (personal/project/group access), glptt- (pipeline trigger), gldt- (deploy), glrt- (runner).',
    reference: 'GitLab docs, "GitLab token overview": token prefixes.',
  },
  {
    id: 'slack-webhook',
    type: 'slack-webhook',
    trigger: /https:\/\/hooks\.slack\.com\//,
    regex: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/(?<secret>[A-Za-z0-9_/-]{8,})/dg,
    description: 'Slack incoming-webhook or workflow URL; the host and route stay, the path secret goes.',
    reference: 'Slack API docs, "Sending messages using incoming webhooks".',
  },
  {
    id: 'slack-token',
    type: 'slack-token',
    trigger: /xox[abposre]-/,
    regex: rx(String.raw`${W}xox[abposre]-[A-Za-z0-9-]{10,}`),
    description: 'Slack token: xoxb- (bot), xoxp- (user), xoxa- (app), xoxr- (refresh), xoxs-, xoxo-, xoxe-.',
    reference: 'Slack API docs, "Token types".',
  },
  {
    id: 'stripe-key',
    type: 'stripe-key',
    trigger: /(?:sk|rk)_(?:live|test)_|whsec_/,
    regex: rx(String.raw`${W}(?:(?:sk|rk)_(?:live|test)|whsec)_[A-Za-z0-9]{10,}`),
    description:
      'Stripe secret (sk_live_, sk_test_), restricted (rk_live_, rk_test_) or webhook signing (whsec_) key. Publishable pk_ keys are public and kept.',
    reference: 'Stripe docs, "API keys": key prefixes.',
  },
  {
    id: 'npm-token',
    type: 'npm-token',
    trigger: /npm_/,
    regex: rx(String.raw`${W}npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])`),
    description: 'npm access token: npm_ and 36 alphanumerics.',
    reference: 'npm Docs, "About access tokens"; GitHub blog, "npm token format" (2021).',
  },
  {
    id: 'twilio-api-key',
    type: 'twilio-api-key',
    trigger: /SK[0-9a-fA-F]{32}/,
    regex: rx(String.raw`${W}SK[0-9a-fA-F]{32}(?![A-Za-z0-9])`),
    description: 'Twilio API key SID: SK and 32 hex digits (a labelled auth token is caught by the keyed entries).',
    reference: 'Twilio docs, "API keys overview".',
  },
  {
    id: 'sendgrid-api-key',
    type: 'sendgrid-api-key',
    trigger: /SG\./,
    regex: rx(String.raw`${W}SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![\w-])`),
    description: 'SendGrid API key: SG. + 22 + . + 43 base64url characters.',
    reference: 'Twilio SendGrid docs, "API keys".',
  },
  {
    id: 'jwt',
    type: 'jwt',
    trigger: /eyJ/,
    regex: rx(String.raw`${W}eyJ${B64URL}{10,}\.${B64URL}{10,}\.${B64URL}*`),
    description: 'JSON Web Token: three base64url segments, the header starting eyJ (`{"`).',
    reference: 'RFC 7519 (JWT), RFC 7515 §7.1 (JWS compact serialization).',
  },
  {
    id: 'authorization-header',
    type: 'bearer-token',
    trigger: /authorization/i,
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
    trigger: /Bearer/,
    regex: /(?<![\w-])Bearer[ \t]+(?<secret>[A-Za-z0-9\-._~+/]{20,}=*)/dg,
    description: 'A bearer token outside an Authorization header (`Bearer <20+ chars with letters and digits>`).',
    reference: 'RFC 6750 §2.1 (b64token syntax).',
    accept: (s) => hasDigitAndLetter(s) && !isPlaceholderValue(s),
  },
  {
    id: 'url-password',
    type: 'url-password',
    trigger: /:\/\//,
    regex: /(?<![\w+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/[^\s:/?#@"'<>\\[\]]{0,200}:(?<secret>[^\s/?#"'<>\\[\]]{1,500})@(?=[\w[])/dg,
    description: 'The password of userinfo in a URL (`scheme://user:pass@host`); scheme, user and host stay.',
    reference: 'RFC 3986 §3.2.1 (userinfo).',
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    id: 'curl-user',
    type: 'password',
    trigger: /curl/,
    regex: /\bcurl\b[^\r\n|;]{0,400}?[ \t](?:-u|--user)(?:[ \t]+|=)?(?<q>(?:\\*["'])?)[^\s:"'\\]{1,200}:(?<secret>[^\s"'\\]+)\k<q>/dg,
    description: 'The password of `curl -u user:pass` / `--user user:pass`; the user stays.',
    reference: 'curl manual, --user option.',
    accept: (s) => !isPlaceholderValue(s),
  },
  {
    id: 'keyed-quoted',
    type: 'keyed-quoted',
    trigger: KEYED_TRIGGER,
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
    trigger: KEYED_TRIGGER,
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
    trigger: KEYED_TRIGGER,
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
    trigger: KEYED_TRIGGER,
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
    trigger: CLI_TRIGGER,
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
      s.length >= 4 &&
      keyedValueOk(s) &&
      proseWordOk(s, m.groups?.bare === undefined, proseLabel(m.groups?.key ?? '')) &&
      !countBefore(text, m.index) &&
      !insidePlaceholder(text, m.index),
  },
]
