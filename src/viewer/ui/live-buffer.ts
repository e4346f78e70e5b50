/** The Live screen's rows: newest first, no duplicates, at most a cap. Pure, so unit-tested. */

/** Most rows Live keeps in memory. */
export const LIVE_CAP = 500

interface Timed {
  id: string
  time: string
}

/**
 * Merges `incoming` (any order) into `rows` (newest first): drops ids already
 * there, keeps newest first (ties by id, which sorts by time too), and cuts to `cap`.
 * Returns `rows` itself when nothing changed.
 */
export function mergeNewest<T extends Timed>(rows: readonly T[], incoming: readonly T[], cap = LIVE_CAP): readonly T[] {
  if (incoming.length === 0) return rows
  const seen = new Set(rows.map((r) => r.id))
  const fresh: T[] = []
  for (const r of incoming) {
    if (seen.has(r.id)) continue
    seen.add(r.id)
    fresh.push(r)
  }
  if (fresh.length === 0) return rows
  const all = [...fresh, ...rows]
  all.sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
  return all.length > cap ? all.slice(0, cap) : all
}
