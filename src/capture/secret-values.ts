/**
 * Value shapes the redaction table reads: values that stand for a secret
 * without being one (masks, templates, `<your-token>`, `null`), file paths,
 * code references and identifiers, and how many secret characters a piece
 * of text holds.
 */

export const PLACEHOLDER_WORDS: ReadonlySet<string> = new Set([
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
const SCHEME_WORDS = /\b(?:bearer|basic|token|bot)\b/gi
/** A leftover of a partly redacted value keeps at least this many letters/digits besides auth scheme words. */
export const MIN_LEFTOVER = 4

/** Letters and digits in `s`, auth scheme words (`Bearer`) aside. */
export function secretChars(s: string): number {
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

/**
 * Masks, templates, YAML aliases, placeholder words, `your-token-here` and
 * `YOUR_API_KEY`-style names: the shape of a value that stands for a secret.
 * `t` is trimmed and holds no placeholder redaction writes (see `isPlaceholderValue`).
 */
export function placeholderShape(t: string): boolean {
  if (MASK.test(t) || TEMPLATE.test(t)) return true
  if (t.length > 2 && (t.startsWith('*') || t.startsWith('&')) && /^[*&][\w-]+$/.test(t)) return true // YAML alias/anchor
  const bare = t.toLowerCase().replace(/[^a-z0-9]/g, '')
  if (PLACEHOLDER_WORDS.has(bare)) return true
  if (YOUR_PLACEHOLDER.test(t)) return true
  if (ENV_NAME_PLACEHOLDER.test(t) && ENV_NAME_WORDS.test(t)) return true
  return false
}

/** A file path (not a base64 blob that happens to hold slashes). */
export function isFilePath(value: string): boolean {
  if (!FILE_PATH.test(value)) return false
  return !value.split('/').some((seg) => seg.length >= 16 && /[A-Z]/.test(seg) && /[a-z]/.test(seg) && /\d/.test(seg))
}

/** Identifier expressions: `process.env.X`, `config.db.password`. */
export function isCodeReference(value: string): boolean {
  return CODE_PATH.test(value)
}

/** `user_input`, `someVar`: reads as a code identifier, not a literal. */
export function isIdentifierLike(value: string): boolean {
  return /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(value) || /^[a-z]+[A-Z][A-Za-z0-9]*$/.test(value)
}

/** True when `value` holds at least one digit and one letter. */
export function hasDigitAndLetter(value: string): boolean {
  return /\d/.test(value) && /[A-Za-z]/.test(value)
}
