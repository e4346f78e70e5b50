/**
 * How much of a hit's score flows to the turns around it in its session.
 * An answer often sits next to the turn that matched: the reply after a
 * question, or the question before an answer. Defaults measured on the
 * LoCoMo development split (docs/RECALL-TUNING.md, "Neighbour spreading").
 */
export interface SpreadWeights {
  /** Share given to the turn just before a hit. Default 0.4. */
  prev1: number
  /** Share given to the turn just after a hit. Default 0.5. */
  next1: number
  /** Share given to the turn just after a hit that asks a question (contains `?`): the reply. Default 0.9. */
  nextAfterQuestion: number
  /** Share given to each turn two steps away. Default 0.25. */
  distance2: number
  /** How many top hits spread (the rest are too weak to matter). Default 50. */
  top: number
}

export const DEFAULT_SPREAD: SpreadWeights = { prev1: 0.4, next1: 0.5, nextAfterQuestion: 0.9, distance2: 0.25, top: 50 }

/**
 * Adds to each document a share of its neighbours' scores:
 * s'(d) = s(d) + Σ_n w(n→d)·s(n), over the `top` best-scored n. Neighbours not
 * scored before enter with their share alone. Pure.
 *
 * @param scores - Key → score (higher is better, >= 0).
 * @param neighbors - Key → keys before (nearest first) and after (nearest first) in its session.
 * @param isQuestion - Whether a key's text asks a question (its reply then gets `nextAfterQuestion`).
 * @returns New key → score map, including neighbours that entered.
 */
export function spreadToNeighbors(
  scores: ReadonlyMap<number, number>,
  neighbors: ReadonlyMap<number, { prev: readonly number[]; next: readonly number[] }>,
  weights: SpreadWeights = DEFAULT_SPREAD,
  isQuestion: (key: number) => boolean = () => false,
): Map<number, number> {
  const out = new Map(scores)
  const top = [...scores.entries()].sort((a, b) => b[1] - a[1]).slice(0, weights.top)
  for (const [key, score] of top) {
    const n = neighbors.get(key)
    if (!n) continue
    const give = (target: number | undefined, w: number): void => {
      if (target === undefined || w <= 0) return
      out.set(target, (out.get(target) ?? 0) + w * score)
    }
    give(n.prev[0], weights.prev1)
    give(n.next[0], isQuestion(key) ? weights.nextAfterQuestion : weights.next1)
    give(n.prev[1], weights.distance2)
    give(n.next[1], weights.distance2)
  }
  return out
}
