import { estimateTokens, truncateGraphemes } from '../core/text.js'

/**
 * Share of a block's budget one item may take at most (SessionStart / MCP / REST context): a 9,000-character build
 * log beside three short memories gets a quarter of a 2,000-token block, cut, and the short ones still fit.
 */
export const MAX_ITEM_SHARE = 0.25
/** Fewest tokens left for the cut of an item that does not fit whole: below this the item is left out instead. */
const MIN_CUT_TOKENS = 40

/** A block's text and what it counted. */
interface BuiltBlock {
  text: string
  /** `estimateTokens(text)`; never above the budget. */
  tokens: number
  /** Items left out (the last line of `text` says how many when there are any). */
  omitted: number
}

/**
 * The line that tells the agent how many items a block left out, and where to find them
 * (`memory_recall` over MCP, `mnemo recall` on the command line).
 */
export function omittedLine(omitted: number): string {
  return `(${omitted} more item${omitted === 1 ? '' : 's'} left out for the budget; memory_recall or \`mnemo recall\` finds them)`
}

/** What the omitted line costs at most (its count written with up to 6 digits), tokens. */
const OMITTED_RESERVE = estimateTokens(omittedLine(999_999)) + 1

/**
 * The longest prefix of `text` within `maxTokens` (`estimateTokens`) that ends on a grapheme boundary, plus `…`
 * (see `truncateGraphemes`): a surrogate pair, a ZWJ sequence, a flag or a skin-tone modifier is never split, so
 * the result is well-formed Unicode at every cut. Returns `text` itself when it fits, `''` when not even `…` fits.
 */
export function cutToTokens(text: string, maxTokens: number): string {
  if (estimateTokens(text) <= maxTokens) return text
  if (maxTokens < 1) return ''
  let lo = 0
  let hi = text.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (estimateTokens(truncateGraphemes(text, mid)) <= maxTokens) lo = mid
    else hi = mid - 1
  }
  return lo === 0 ? '' : truncateGraphemes(text, lo)
}

/**
 * `text` within `maxTokens`: whole when it fits, else cut on a grapheme boundary with `…` and the item's id, so the
 * agent can fetch the rest (`… (cut; memory_show mem_…)`). An item with no id is cut with `…` alone.
 */
export function capItem(text: string, maxTokens: number, id: string | undefined): string {
  if (estimateTokens(text) <= maxTokens) return text
  const tail = id === undefined ? '' : ` (cut; memory_show ${id})`
  const head = cutToTokens(text, maxTokens - estimateTokens(tail))
  return head === '' ? '' : `${head}${tail}`
}

/**
 * Fills a delimited block item by item under a token budget, fairly: no item takes more than `maxItemShare` of the
 * budget (a longer one is cut, see `capItem`); the first item that no longer fits whole is cut to the room left (when
 * at least `MIN_CUT_TOKENS` remain) and every later one is counted as omitted; room for the omitted line is kept
 * back from the start, so the finished block always fits and always says what it left out.
 */
export class BlockBuilder {
  private readonly parts: string[]
  private used: number
  private full = false
  private left = 0
  private readonly itemMax: number

  /**
   * @param open - First lines (opening tag, preamble); always kept.
   * @param close - Last line (closing tag); always kept.
   * @param budgetTokens - Most tokens for the whole block, separators included.
   * @param maxItemShare - 0–1, share of `budgetTokens` one item may take. Default: `MAX_ITEM_SHARE`.
   */
  constructor(
    open: readonly string[],
    private readonly close: string,
    private readonly budgetTokens: number,
    maxItemShare = MAX_ITEM_SHARE,
  ) {
    this.parts = [...open]
    this.used = estimateTokens([...open, close].join('\n')) + OMITTED_RESERVE
    this.itemMax = Math.max(MIN_CUT_TOKENS, Math.floor(budgetTokens * maxItemShare))
  }

  /** Tokens still free for items. */
  get room(): number {
    return this.budgetTokens - this.used
  }

  /** True once an item did not fit: every later `item` is counted as omitted without being looked at. */
  get isFull(): boolean {
    return this.full
  }

  /** Items counted as left out so far. */
  get omitted(): number {
    return this.left
  }

  /** Counts `n` items left out without offering them (they were never going to be shown). */
  omit(n: number): void {
    this.left += n
  }

  /**
   * Adds a heading when there is room for it and at least one item after it.
   * @returns false when the block is full (nothing added).
   */
  heading(text: string): boolean {
    if (this.full) return false
    const cost = estimateTokens(text) + 1
    if (this.used + cost + MIN_CUT_TOKENS > this.budgetTokens) {
      this.full = true
      return false
    }
    this.parts.push(text)
    this.used += cost
    return true
  }

  /**
   * Adds one item, capped to its share and cut to the room left when needed.
   * @param id - The item's id, named in a cut so the rest can be fetched.
   * @returns true when the item (whole or cut) is in the block; false when it was counted as omitted.
   */
  item(text: string, id?: string): boolean {
    if (this.full) {
      this.left++
      return false
    }
    const capped = capItem(text, this.itemMax, id)
    const cost = estimateTokens(capped) + 1
    if (capped !== '' && this.used + cost <= this.budgetTokens) {
      this.parts.push(capped)
      this.used += cost
      return true
    }
    this.full = true
    const room = this.budgetTokens - this.used - 1
    const cut = room >= MIN_CUT_TOKENS ? capItem(capped, room, id) : ''
    if (cut === '') {
      this.left++
      return false
    }
    this.parts.push(cut)
    this.used += estimateTokens(cut) + 1
    return true
  }

  /** The finished block: its lines, the omitted line when items were left out, and the closing line. */
  finish(): BuiltBlock {
    const lines = [...this.parts, ...(this.left > 0 ? [omittedLine(this.left)] : []), this.close]
    // Every part was cut on grapheme boundaries; this only guards against text that arrived malformed.
    const joined = lines.join('\n')
    const text = joined.isWellFormed() ? joined : joined.toWellFormed()
    return { text, tokens: estimateTokens(text), omitted: this.left }
  }
}
