/** Helpers of the Search screen: the recall request and the channel badges. Pure, so unit-tested. */
import { RECALL_CHANNELS, type Hit } from './types.js'

/** Channel badges of a hit, best rank first: `bm25 #1`, `graph #4`. */
export function channelBadges(hit: Pick<Hit, 'channels'>): string[] {
  const entries = Object.entries(hit.channels ?? {})
  entries.sort((a, b) => a[1].rank - b[1].rank || a[0].localeCompare(b[0]))
  return entries.map(([name, c]) => `${name} #${c.rank}`)
}

/** The channels ticked at first: those the server says are on; all of them when it does not say. */
export function defaultChannels(server: readonly { name: string; on: boolean }[] | undefined): string[] {
  if (!server) return [...RECALL_CHANNELS]
  return RECALL_CHANNELS.filter((c) => server.find((s) => s.name === c)?.on ?? false)
}

/** The recall request body: `channels` only when some (not all) are checked. */
export function recallBody(q: string, project: string, limit: number, checked: readonly string[]): Record<string, unknown> {
  const all = RECALL_CHANNELS.every((c) => checked.includes(c))
  return { query: q, project, limit, explain: true, ...(all ? {} : { channels: RECALL_CHANNELS.filter((c) => checked.includes(c)) }) }
}
