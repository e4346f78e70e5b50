import type { ChannelName } from '../core/types.js'

/** One channel's candidates, best first, with the channel's own scores. */
export interface ChannelList {
  channel: ChannelName
  /** Multiplier of this channel's RRF contribution, >= 0. */
  weight: number
  hits: { key: number; score: number }[]
}

/** Where a fused candidate came from: its 1-based rank and raw score in each channel that found it. */
export type ChannelEvidence = Partial<Record<ChannelName, { rank: number; score: number }>>

export interface FusedCandidate {
  key: number
  /** Σ weight_c / (k + rank_c) over the channels that found it. */
  score: number
  channels: ChannelEvidence
}

/** RRF's rank constant. 60 as in Cormack, Clarke & Büttcher (SIGIR 2009), where it was found robust. */
export const RRF_K = 60

/**
 * Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, "Reciprocal Rank
 * Fusion outperforms Condorcet and individual Rank Learning Methods",
 * SIGIR 2009): score(d) = Σ_c w_c / (k + rank_c(d)), ranks 1-based.
 * Rank-based, so channels with incomparable score scales fuse without
 * calibration. Ties keep the order of first appearance (channel order, then rank).
 *
 * @param k - Rank constant, > 0. Default 60.
 * @returns Candidates by fused score, best first.
 */
export function reciprocalRankFusion(lists: readonly ChannelList[], k = RRF_K): FusedCandidate[] {
  const fused = new Map<number, FusedCandidate>()
  for (const list of lists) {
    if (list.weight <= 0) continue
    list.hits.forEach((hit, i) => {
      const rank = i + 1
      let c = fused.get(hit.key)
      if (!c) {
        c = { key: hit.key, score: 0, channels: {} }
        fused.set(hit.key, c)
      }
      c.score += list.weight / (k + rank)
      c.channels[list.channel] = { rank, score: hit.score }
    })
  }
  return [...fused.values()].sort((a, b) => b.score - a.score)
}
