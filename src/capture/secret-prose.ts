/**
 * Secrets stated in prose ("the staging password is Hunter2-xyz"): the
 * credential words, the link and verb that say "is", and the words that
 * follow "the password is" without being a password.
 */
import { NOT_SECRET_BEFORE_TOKEN } from './secret-keys.js'
import { PLACEHOLDER_WORDS } from './secret-values.js'

/** The credential words a sentence names a secret by. */
export const PROSE_KEY = String.raw`(?<![\w-])(?<key>pass(?:word|phrase|code)s?|passwd|pins?(?:[ -]?codes?)?|secrets?(?:[ _-]keys?)?|(?:(?:access|auth|api|bearer|refresh|session|bot|personal[ -]access)[ _-])?tokens?|(?:api|access|private)[ _-]?keys?)`
/** "for prod", "of the staging db", "on github": at most two words between the key word and the verb. */
export const PROSE_LINK = String.raw`(?:[ \t]+(?:for|of|on|to|in)[ \t]+(?:(?:the|my|our|your|this|that)[ \t]+)?[\w.@/-]{1,40}(?:[ \t]+[\w.@/-]{1,40})?)?`
/** What says "is": a verb or `:` (`=` and `key: value` alone are keyed-env's and keyed-colon's). */
export const PROSE_VERB = String.raw`(?:[ \t]*:(?=[ \t])|[ \t]+(?:is|was|are|were|will[ \t]+be|has[ \t]+been|is[ \t]+now|(?:was[ \t]+|is[ \t]+|has[ \t]+been[ \t]+)?(?:changed|set|reset|updated|rotated)[ \t]+to)\b[ \t]*:?)`

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
export const PROSE_LABELS = ['password', 'pin', 'api-key', 'access-key', 'private-key', 'secret', 'token']

/** The placeholder type of a prose key word: `password`, `pin`, `api-key`, `access-key`, `private-key`, `token` or `secret`. */
export function proseLabel(key: string): string {
  const k = key.toLowerCase()
  if (k.startsWith('pass')) return 'password'
  if (k.startsWith('pin')) return 'pin'
  if (/key/.test(k))
    return k.startsWith('api') ? 'api-key' : k.startsWith('access') ? 'access-key' : k.startsWith('private') ? 'private-key' : 'secret'
  if (/token/.test(k)) return 'token'
  return 'secret'
}

/** `max tokens is 4096`, `input token is …`: the word before names a count or cursor (NOT_SECRET_BEFORE_TOKEN), not a credential. */
export function countBefore(text: string, at: number): boolean {
  const before = /([A-Za-z]+)[ \t_-]*$/.exec(text.slice(Math.max(0, at - 30), at))
  return before !== null && NOT_SECRET_BEFORE_TOKEN.has(before[1]!.toLowerCase())
}

/**
 * The wording test of a value a sentence states (the table's prose entry
 * also requires 4+ characters and no placeholder, path or code): a plain
 * lowercase word only when 12+ letters long (6+ quoted); all digits only for
 * a password or PIN (`the token is 4096` is a count); no prose or
 * placeholder word.
 */
export function proseWordOk(value: string, quoted: boolean, label: string): boolean {
  if (/^\d+$/.test(value) && label !== 'password' && label !== 'pin') return false
  const lower = value.toLowerCase()
  if (PROSE_WORDS.has(lower) || PLACEHOLDER_WORDS.has(lower)) return false
  if (/^(?:the|a|an|not|now|still|also|in|on|at|to|stored|kept|being)$/i.test(value)) return false
  const plainWord = /^[A-Za-z]+$/.test(value) && !/[A-Z]/.test(value.slice(1))
  return !plainWord || value.length >= 12 || (quoted && value.length >= 6)
}
