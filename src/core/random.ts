/**
 * mulberry32, a small seeded pseudo-random generator (Tommy Ettinger's public-domain constants): the same seed gives
 * the same sequence on every machine, for generated test data and benchmark episodes. Not for anything secret.
 *
 * @param seed - Any number; only its low 32 bits are used.
 * @returns A function giving the next value, uniform in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
