import { isLowSurrogate, squash, truncateGraphemes } from '../core/text.js'

/**
 * A short excerpt of `text` around the first occurrence of any of `terms`
 * (case-insensitive), `…`-marked where cut; the start of the text when no
 * term occurs literally (a stemmed or bigram match). Never splits a grapheme.
 *
 * @param maxChars - Length of the excerpt, default 200.
 */
export function makeSnippet(text: string, terms: readonly string[], maxChars = 200): string {
  const flat = squash(text)
  if (flat.length <= maxChars) return flat
  const lower = flat.toLowerCase()
  let at = -1
  for (const t of terms) {
    const i = lower.indexOf(t.toLowerCase())
    if (i >= 0 && (at < 0 || i < at)) at = i
  }
  if (at < 0 || at < maxChars / 3) return truncateGraphemes(flat, maxChars)
  let start = Math.max(0, at - Math.floor(maxChars / 3))
  const c = flat.charCodeAt(start)
  if (isLowSurrogate(c)) start++
  return `…${truncateGraphemes(flat.slice(start), maxChars - 1)}`
}
