/**
 * 64-bit FNV-1a over the UTF-16 code units of `text`, as 16 hex digits.
 * Used for deterministic ids and content-hash idempotency keys; not a
 * cryptographic hash. Constants from the FNV reference
 * (http://www.isthe.com/chongo/tech/comp/fnv/): offset basis
 * 0xcbf29ce484222325, prime 0x100000001b3.
 */
export function fnv1a64(text: string): string {
  // The 64-bit state as four 16-bit limbs, low first (BigInt arithmetic allocated per code unit: ~9 ms for a hook's
  // 10 KB payload). The prime is 2^40 + 0x1b3, so h × prime mod 2^64 = h × 0x1b3 + (h << 40): each limb times 0x1b3
  // with its carry, plus the low 24 bits of h moved up 40 bits (h0 << 8 into limb 2, the low byte of h1 into limb 3).
  let h0 = 0x2325
  let h1 = 0x8422
  let h2 = 0x9ce4
  let h3 = 0xcbf2
  for (let i = 0; i < text.length; i++) {
    h0 ^= text.charCodeAt(i)
    const t0 = h0 * 0x1b3
    const t1 = h1 * 0x1b3 + (t0 >>> 16)
    const t2 = h2 * 0x1b3 + (t1 >>> 16) + (h0 << 8)
    const t3 = h3 * 0x1b3 + (t2 >>> 16) + ((h1 & 0xff) << 8)
    h0 = t0 & 0xffff
    h1 = t1 & 0xffff
    h2 = t2 & 0xffff
    h3 = t3 & 0xffff
  }
  const hex = (limb: number): string => limb.toString(16).padStart(4, '0')
  return `${hex(h3)}${hex(h2)}${hex(h1)}${hex(h0)}`
}

/** JSON with object keys sorted at every depth, so equal values hash equally. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`
  const entries = Object.keys(value as Record<string, unknown>)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`)
  return `{${entries.join(',')}}`
}
