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
 * - Every detector lives in one documented table, `SECRET_PATTERNS`
 *   (secret-patterns.ts, built from secret-keys.ts, secret-values.ts,
 *   secret-regex.ts and secret-prose.ts); this module is the engine that
 *   applies it. No detector library is used: secretlint (the maintained option on npm) loads
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
import { secretKeyType } from './secret-keys.js'
import {
  holdsPlaceholder,
  isPlaceholderValue,
  KEEP,
  placeholderSpans,
  SECRET_PATTERNS,
  type SecretPattern,
  type SecretSpan,
} from './secret-patterns.js'
import { MIN_LEFTOVER, secretChars } from './secret-values.js'

const PRIVATE_SPAN = /<private\s*>[\s\S]*?(?:<\/private\s*>|$)/gi
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
  // Most texts match no trigger at all: one scan for any of them settles every triggered entry at once.
  const anyTrigger = triggerUnion(patterns)
  const noneTriggered = anyTrigger !== undefined && !anyTrigger.regex.test(text)
  // Answers of the triggers tested one by one, made when the first is needed.
  let triggers: Map<RegExp, boolean> | undefined
  for (const pattern of patterns) {
    const re = pattern.regex
    if (!re.global || !re.hasIndices) {
      throw invalidInput(
        'patterns',
        `secret pattern ${pattern.id} needs a regex with the g and d flags`,
        `write /…/dg, not /${re.source}/${re.flags}`,
      )
    }
    // No text the trigger misses can hold an accepted match (see SecretPattern.trigger): the pattern adds nothing.
    const trigger = pattern.trigger
    if (trigger !== undefined) {
      if (noneTriggered && anyTrigger.members.has(trigger)) continue
      triggers ??= new Map()
      if (!triggered(trigger, text, triggers)) continue
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

/** The triggers of a pattern list as one regex (see `triggerUnion`), by list. */
const unions = new WeakMap<readonly SecretPattern[], { regex: RegExp; members: ReadonlySet<RegExp> } | undefined>()

/**
 * One regex that matches wherever any trigger of `patterns` does (their alternation, case-insensitive: a superset
 * of each), and the triggers it stands for: those with no flag but `i` (another flag would change what the
 * alternation reads). Undefined when no pattern has such a trigger.
 */
function triggerUnion(patterns: readonly SecretPattern[]): { regex: RegExp; members: ReadonlySet<RegExp> } | undefined {
  if (unions.has(patterns)) return unions.get(patterns)
  const members = [...new Set(patterns.map((p) => p.trigger))].filter((t): t is RegExp => t !== undefined && /^i?$/.test(t.flags))
  const union =
    members.length > 0 ? { regex: new RegExp(members.map((t) => `(?:${t.source})`).join('|'), 'i'), members: new Set(members) } : undefined
  unions.set(patterns, union)
  return union
}

/** Whether `trigger` matches `text`, tested once per text (entries share a trigger object); `seen` holds the answers so far. */
function triggered(trigger: RegExp, text: string, seen: Map<RegExp, boolean>): boolean {
  let hit = seen.get(trigger)
  if (hit === undefined) {
    trigger.lastIndex = 0
    hit = trigger.test(text)
    seen.set(trigger, hit)
  }
  return hit
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
