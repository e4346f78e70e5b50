/** Source of the current time, injected everywhere so tests stay deterministic. */
export interface Clock {
  /** Current time as epoch milliseconds (UTC). */
  now(): number
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() }

/** A clock that returns `start` and moves only when told to; for tests. */
export function createManualClock(start: number): Clock & { advance(ms: number): void; set(ms: number): void } {
  let current = start
  return {
    now: () => current,
    advance: (ms) => {
      current += ms
    },
    set: (ms) => {
      current = ms
    },
  }
}

/** Formats epoch ms as ISO-8601 UTC (`2026-01-02T03:04:05.000Z`). */
export function toIso(ms: number): string {
  return new Date(ms).toISOString()
}
