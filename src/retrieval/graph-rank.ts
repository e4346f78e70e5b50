/** One query entity as found in the store. */
interface GraphSeed {
  id: number
  /** Documents mentioning it. */
  docs: number
}

/** An entity reached in one hop from the seeds. */
interface GraphNeighbor {
  id: number
  /** Documents it shares with the seeds. */
  shared: number
  docs: number
}

/** Weight of one hop relative to a direct mention. Default 0.5. */
const HOP_WEIGHT = 0.5

/**
 * Ranks documents by the entities they mention: Σ idf(e) over the query's
 * entities a document mentions, plus, for entities one hop away (sharing
 * documents with a query entity), HOP_WEIGHT · P(e | seeds) · idf(e), where
 * P is the share of the neighbour's documents that also mention a seed.
 * idf(e) = ln(1 + N / df(e)), so a name in every turn counts for little.
 *
 * @param totalDocs - N, documents in scope.
 * @param mentions - (entity, document) pairs for seeds and neighbours.
 * @returns Documents best first, with their scores.
 */
export function rankByEntities(
  totalDocs: number,
  seeds: readonly GraphSeed[],
  neighbors: readonly GraphNeighbor[],
  mentions: readonly { entityId: number; docKey: number }[],
): { key: number; score: number }[] {
  const weight = new Map<number, number>()
  const idf = (df: number): number => Math.log(1 + totalDocs / Math.max(1, df))
  for (const s of seeds) weight.set(s.id, idf(s.docs))
  for (const n of neighbors) if (!weight.has(n.id)) weight.set(n.id, HOP_WEIGHT * (n.shared / Math.max(1, n.docs)) * idf(n.docs))
  const scores = new Map<number, number>()
  for (const m of mentions) {
    const w = weight.get(m.entityId)
    if (w !== undefined) scores.set(m.docKey, (scores.get(m.docKey) ?? 0) + w)
  }
  return [...scores.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([key, score]) => ({ key, score }))
}
